// Linear quantization of float32 to uint8 with one scale and zero point (the second pass of
// DynamicQuantizeLinear; docs/int8.md "DynamicQuantizeLinear"):
// y = clamp(round_half_even(x / scale) + zp, 0, 255), NaN gives 0.
// One copy per target from quantize-inl.h. Every lane is the scalar rule's value (ops/quant_common.h
// saturate_round): the quotient is one IEEE division, the rounding is to nearest even, and r + zp is exact in
// float32 for every r that is not clamped anyway (|r| < 2^24), so the result never depends on the target.
#pragma once
#include <cstdint>

#include "kernels/isa.h"

namespace onemodel::kern {

void quantize_u8(Isa isa, const float* x, int64_t n, float scale, int32_t zero_point, uint8_t* y);

// lo = min(lo, x...), hi = max(hi, x...) with NaN taking no part (the first pass of DynamicQuantizeLinear, which
// starts both at +0). A value replaces the bound only when strictly beyond it, so with bounds starting at +0 the
// result does not depend on the order the elements are visited in.
void min_max_f32(Isa isa, const float* x, int64_t n, float& lo, float& hi);

struct QuantizeFns {
  void (*quantize_u8)(const float* x, int64_t n, float scale, int32_t zero_point, uint8_t* y);
  void (*min_max)(const float* x, int64_t n, float& lo, float& hi);
};

}  // namespace onemodel::kern
