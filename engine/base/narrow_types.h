// Decoding of the narrow element types the engine does not store (tensors.md section 2, ops-newer.md section 10):
// the four float8 formats, float8e8m0, float4e2m1, int4 and uint4. Each value widens exactly (float8 and float4
// to float32, int4 to int8, uint4 to uint8), so a Cast from one of them gives the same result as the Cast of its
// widened value. Bit-exact, no library math.
#pragma once
#include <cstdint>
#include <span>

#include "onemodel/dtype.h"

namespace onemodel {

// The stored type a narrow type widens to exactly (F32, I8 or U8), or Undefined when `t` is not one of them.
DType narrow_widened_type(DType t) noexcept;

// Decodes `count` elements of narrow type `t` from their packed little-endian bytes (4-bit types two per byte,
// element 2i in the low nibble) into `out`, which holds `count` elements of narrow_widened_type(t). Returns false
// when `t` is not a narrow type or `packed` is shorter than the elements need.
bool decode_narrow(DType t, std::span<const std::byte> packed, int64_t count, void* out) noexcept;

// One float8 / float4 / e8m0 code as float32 (NaN codes give a quiet NaN of the code's sign).
float narrow_float_value(DType t, uint8_t code) noexcept;

}  // namespace onemodel
