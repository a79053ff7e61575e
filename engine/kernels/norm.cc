// Dispatch for kernels/norm.h: the Highway per-target pass, then the entry points.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/norm.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/norm-inl.h"

#if HWY_ONCE
#include "kernels/norm.h"
#include "kernels/per_target.h"

namespace onemodel::kern {

NormStats norm_row_stats(Isa isa, const float* x, int64_t cols, float epsilon, bool rms) {
  return ONEMODEL_PER_TARGET(kNormFns, isa)->stats(x, cols, epsilon, rms);
}
void norm_row_apply(Isa isa, const float* x, float* y, int64_t cols, NormStats st, const float* scale,
                    const float* bias) {
  ONEMODEL_PER_TARGET(kNormFns, isa)->apply(x, y, cols, st, scale, bias);
}
void norm_row_apply_uniform(Isa isa, const float* x, float* y, int64_t cols, NormStats st, float scale, float bias) {
  ONEMODEL_PER_TARGET(kNormFns, isa)->apply_uniform(x, y, cols, st, scale, bias);
}

}  // namespace onemodel::kern
#endif
