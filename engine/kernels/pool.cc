// Dispatch for kernels/pool.h: the Highway per-target pass, then the one entry point.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/pool.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/pool-inl.h"

#if HWY_ONCE
#include "kernels/per_target.h"

namespace onemodel::kern {

void max_window_f32(Isa isa, const float* const* rows, int64_t nrows, int64_t stride, int64_t taps, int64_t dilation,
                    float* best, int64_t count) {
  ONEMODEL_PER_TARGET(kPoolFns, isa)->max_window(rows, nrows, stride, taps, dilation, best, count);
}

void max_window_final_f32(Isa isa, const float* const* rows, int64_t nrows, int64_t stride, int64_t taps,
                          int64_t dilation, float* y, int64_t count) {
  ONEMODEL_PER_TARGET(kPoolFns, isa)->max_window_final(rows, nrows, stride, taps, dilation, y, count);
}

void max_pairs_f32(Isa isa, const float* const* rows, int64_t nrows, float* y, int64_t count) {
  ONEMODEL_PER_TARGET(kPoolFns, isa)->max_pairs(rows, nrows, y, count);
}

void sum_taps_f32(Isa isa, const float* row, int64_t stride, int64_t taps, int64_t dilation, float* acc,
                  int64_t count) {
  ONEMODEL_PER_TARGET(kPoolFns, isa)->sum_taps(row, stride, taps, dilation, acc, count);
}

void row_means_fast_f32(Isa isa, const float* x, int64_t rows, int64_t n, float* y) {
  ONEMODEL_PER_TARGET(kPoolFns, isa)->row_means_fast(x, rows, n, y);
}

void copy_canonical_f32(Isa isa, const float* src, float* dst, int64_t n) {
  ONEMODEL_PER_TARGET(kPoolFns, isa)->copy_canonical(src, dst, n);
}

}  // namespace onemodel::kern
#endif
