// Max pooling's inner loop on every target (ops/pool.cc runs a row of outputs at a time): for each output q of
// a row, the taps of one input row in increasing order, under the rule of ops-conv.md "Pooling": a tap
// replaces the running value when it is strictly greater or the running value is NaN. So NaN taps are
// skipped unless every tap is NaN, and of equal values (-0 and +0) the first stays. Vector lanes follow the
// same comparisons tap by tap, hence the scalar loop's bits.
#pragma once
#include <cstdint>

#include "base/bits.h"
#include "kernels/isa.h"

namespace onemodel::kern {

// The rule above for one value: v replaces b when v > b or b is NaN. Selected through masks: a branch per tap
// mispredicts on data (the edge outputs and row tails of ResNet-50's stem pool spent half their time there).
inline float max_tap_update(float v, float b) {
  const uint32_t take = 0u - static_cast<uint32_t>((v > b) | (b != b));
  return float_from_bits((float_bits(v) & take) | (float_bits(b) & ~take));
}

// best[q] for q in [0, count): over r in [0, nrows), then t in [0, taps), v = rows[r][q * stride + t *
// dilation]; best = (v > best || best is NaN) ? v : best, starting from best's value. Every index read lies in
// [0, (count - 1) * stride + (taps - 1) * dilation].
void max_window_f32(Isa isa, const float* const* rows, int64_t nrows, int64_t stride, int64_t taps, int64_t dilation,
                    float* best, int64_t count);

// The same fold from NaN over every tap row at once, written to y[q] with NaN made canonical (0x7FC00000):
// finished outputs, no running buffer (a row of best values filled, folded and copied out cost ResNet-50's
// stem pool more than its taps).
void max_window_final_f32(Isa isa, const float* const* rows, int64_t nrows, int64_t stride, int64_t taps,
                          int64_t dilation, float* y, int64_t count);

// One output row of a pool with width kernel 2, width stride 2 and no width padding (openWakeWord's 2x2 and
// 1x2 pools): y[q] for q in [0, count) folds rows[0][2q], rows[0][2q + 1], rows[1][2q], ... in that order
// under the same rule, starting from NaN, then stores it with NaN made canonical (0x7FC00000). Reads
// rows[r][0, 2 * count); y does not overlap them.
void max_pairs_f32(Isa isa, const float* const* rows, int64_t nrows, float* y, int64_t count);

// Average pooling's inner loop (ops/pool.cc, a row of outputs at a time): acc[q] = acc[q] + row[q * stride +
// t * dilation] for t in [0, taps) in increasing order, q in [0, count): one rounded addition per tap, the
// order of the scalar definition, so every target gives its bits. Reads as max_window_f32 with one row.
void sum_taps_f32(Isa isa, const float* row, int64_t stride, int64_t taps, int64_t dilation, float* acc, int64_t count);

// Fast mode's global average (ops-conv.md "Pooling"): y[r] = the sum of row r of `rows` contiguous rows
// of n floats, in vector partial sums (any order), divided by n; NaN made canonical. Exact mode sums in index
// order instead (ops/pool.cc).
void row_means_fast_f32(Isa isa, const float* x, int64_t rows, int64_t n, float* y);

// dst[0, n) = src[0, n) with NaN made canonical (0x7FC00000): a finished row of pooled values.
void copy_canonical_f32(Isa isa, const float* src, float* dst, int64_t n);

struct PoolFns {
  void (*max_window)(const float* const* rows, int64_t nrows, int64_t stride, int64_t taps, int64_t dilation,
                     float* best, int64_t count);
  void (*max_window_final)(const float* const* rows, int64_t nrows, int64_t stride, int64_t taps, int64_t dilation,
                           float* y, int64_t count);
  void (*max_pairs)(const float* const* rows, int64_t nrows, float* y, int64_t count);
  void (*sum_taps)(const float* row, int64_t stride, int64_t taps, int64_t dilation, float* acc, int64_t count);
  void (*copy_canonical)(const float* src, float* dst, int64_t n);
  void (*row_means_fast)(const float* x, int64_t rows, int64_t n, float* y);
};

}  // namespace onemodel::kern
