// Dispatch for kernels/widen.h: the Highway per-target pass, then the entry points.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/widen.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/widen-inl.h"

#if HWY_ONCE
#include "kernels/per_target.h"
#include "kernels/widen.h"

namespace onemodel::kern {

void widen_f16_f32(Isa isa, const uint16_t* src, float* dst, int64_t n) {
  ONEMODEL_PER_TARGET(kWidenFns, isa)->f16(src, dst, n);
}

void widen_bf16_f32(Isa isa, const uint16_t* src, float* dst, int64_t n) {
  ONEMODEL_PER_TARGET(kWidenFns, isa)->bf16(src, dst, n);
}

void narrow_f32_f16(Isa isa, const float* src, uint16_t* dst, int64_t n) {
  ONEMODEL_PER_TARGET(kWidenFns, isa)->narrow_f16(src, dst, n);
}

void narrow_f32_bf16(Isa isa, const float* src, uint16_t* dst, int64_t n) {
  ONEMODEL_PER_TARGET(kWidenFns, isa)->narrow_bf16(src, dst, n);
}

}  // namespace onemodel::kern
#endif
