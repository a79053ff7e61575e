// Max pooling's inner loop on every target (ops/pool.cc runs a row of outputs at a time): for each output q of
// a row, the taps of one input row in increasing order, under the rule of ops-conv.md "Pooling": a tap
// replaces the running value when it is strictly greater or the running value is NaN. So NaN taps are
// skipped unless every tap is NaN, and of equal values (-0 and +0) the first stays. Vector lanes follow the
// same comparisons tap by tap, hence the scalar loop's bits.
#pragma once
#include <cstdint>

#include "kernels/isa.h"

namespace onemodel::kern {

// best[q] for q in [0, count): over t in [0, taps), v = row[q * stride + t * dilation]; best = (v > best ||
// best is NaN) ? v : best. Every index read lies in [0, (count - 1) * stride + (taps - 1) * dilation].
void max_taps_f32(Isa isa, const float* row, int64_t stride, int64_t taps, int64_t dilation, float* best,
                  int64_t count);

// One output row of a pool with width kernel 2, width stride 2 and no width padding (openWakeWord's 2x2 and
// 1x2 pools): y[q] for q in [0, count) folds rows[0][2q], rows[0][2q + 1], rows[1][2q], ... in that order
// under the same rule, starting from NaN, then stores it with NaN made canonical (0x7FC00000). Reads
// rows[r][0, 2 * count); y does not overlap them.
void max_pairs_f32(Isa isa, const float* const* rows, int64_t nrows, float* y, int64_t count);

// Average pooling's inner loop (ops/pool.cc, a row of outputs at a time): acc[q] = acc[q] + row[q * stride +
// t * dilation] for t in [0, taps) in increasing order, q in [0, count): one rounded addition per tap, the
// order of the scalar definition, so every target gives its bits. Reads as max_taps_f32.
void sum_taps_f32(Isa isa, const float* row, int64_t stride, int64_t taps, int64_t dilation, float* acc,
                  int64_t count);

struct PoolFns {
  void (*max_taps)(const float* row, int64_t stride, int64_t taps, int64_t dilation, float* best, int64_t count);
  void (*max_pairs)(const float* const* rows, int64_t nrows, float* y, int64_t count);
  void (*sum_taps)(const float* row, int64_t stride, int64_t taps, int64_t dilation, float* acc, int64_t count);
};

}  // namespace onemodel::kern
