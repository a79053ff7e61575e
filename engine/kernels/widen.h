// Widening of 16-bit floats to float32 (docs/fp16.md sections 2 and 5): the per-run widening of compact weights
// and the half-precision adapter's widening of inputs. Exact, the same bits as base/fp16.h's scalar
// half_to_float / bf16_to_float on every target: normal and subnormal values exactly, infinities kept, NaN with
// its payload and the quiet bit forced. Integer arithmetic plus one int-to-float conversion of a subnormal's
// significand (at most 1023, exact) and a multiplication by 2^-24 whose result is a normal float32 (exact).
#pragma once
#include <cstdint>

#include "kernels/isa.h"

namespace onemodel::kern {

// dst[i] = the float32 value of IEEE binary16 src[i], i < n.
void widen_f16_f32(Isa isa, const uint16_t* src, float* dst, int64_t n);
// dst[i] = the float32 value of bfloat16 src[i], i < n.
void widen_bf16_f32(Isa isa, const uint16_t* src, float* dst, int64_t n);

// The other way (the half-precision adapter's rounding of outputs, docs/fp16.md section 2): dst[i] = src[i]
// rounded to nearest even, the bits of base/fp16.h's float_to_half / float_to_bf16 on every target (NaN quiet
// with its payload's top bits, overflow to infinity, binary16 subnormals rounded by one float32 addition of 0.5,
// which is exact arithmetic: the sum's unit is 2^-24, binary16's subnormal step).
void narrow_f32_f16(Isa isa, const float* src, uint16_t* dst, int64_t n);
void narrow_f32_bf16(Isa isa, const float* src, uint16_t* dst, int64_t n);

// One target's entry points (what widen-inl.h defines per target; widen.cc picks one per Isa).
struct WidenFns {
  void (*f16)(const uint16_t* src, float* dst, int64_t n);
  void (*bf16)(const uint16_t* src, float* dst, int64_t n);
  void (*narrow_f16)(const float* src, uint16_t* dst, int64_t n);
  void (*narrow_bf16)(const float* src, uint16_t* dst, int64_t n);
};

}  // namespace onemodel::kern
