// Conversions between float32 and the two 16-bit float formats (tensors.md section 10). Bit-exact, no
// library math, so they give the same bits on every platform and in WebAssembly.
#pragma once
#include <cstdint>

namespace onemodel {

// float32 -> IEEE binary16, round to nearest, ties to even; overflow (|x| >= 65520) gives infinity;
// NaN keeps its sign and the top nine payload bits with the quiet bit set.
uint16_t float_to_half(float x) noexcept;
// IEEE binary16 -> float32, exact. NaN keeps its payload (shifted left 13) with the quiet bit forced.
float half_to_float(uint16_t h) noexcept;
// float32 -> bfloat16, round to nearest even; NaN -> (bits >> 16) | 0x40.
uint16_t float_to_bf16(float x) noexcept;
// bfloat16 -> float32: bits << 16, quiet bit forced for NaN.
float bf16_to_float(uint16_t b) noexcept;

}  // namespace onemodel
