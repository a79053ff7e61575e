// Dispatch for kernels/quantize.h: the Highway per-target pass, then the one entry point.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/quantize.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/quantize-inl.h"

#if HWY_ONCE
#include "kernels/per_target.h"

namespace onemodel::kern {

void quantize_u8(Isa isa, const float* x, int64_t n, float scale, int32_t zero_point, uint8_t* y) {
  ONEMODEL_PER_TARGET(kQuantizeFns, isa)->quantize_u8(x, n, scale, zero_point, y);
}

void min_max_f32(Isa isa, const float* x, int64_t n, float& lo, float& hi) {
  ONEMODEL_PER_TARGET(kQuantizeFns, isa)->min_max(x, n, lo, hi);
}

}  // namespace onemodel::kern
#endif
