#include "base/fp16.h"

#include "base/bits.h"

namespace onemodel {

uint16_t float_to_half(float x) noexcept {
  const uint32_t u = float_bits(x);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const uint32_t a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return static_cast<uint16_t>(sign | 0x7E00u | ((a >> 13) & 0x1FFu));
  if (a >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // includes +-inf
  if (a >= 0x38800000u) {
    // Normal half: rebias the exponent (127 -> 15) and round the 13 dropped bits to nearest even. A
    // mantissa carry moves into the exponent, which is the correctly rounded result.
    const uint32_t m = a - (112u << 23);
    return static_cast<uint16_t>(sign | ((m + 0xFFFu + ((m >> 13) & 1u)) >> 13));
  }
  if (a <= 0x33000000u) return static_cast<uint16_t>(sign);
  // Subnormal half: value = mant * 2^(e-150); the half unit is 2^-24, so shift by 126 - e.
  const uint32_t e = a >> 23;
  const uint32_t mant = (a & 0x7FFFFFu) | 0x800000u;
  const uint32_t shift = 126u - e;
  uint32_t r = mant >> shift;
  const uint32_t rem = mant & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1u);
  if (rem > half || (rem == half && (r & 1u))) ++r;
  return static_cast<uint16_t>(sign | r);
}

float half_to_float(uint16_t h) noexcept {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu;
  const uint32_t man = h & 0x3FFu;
  if (exp == 0x1F) return float_from_bits(sign | 0x7F800000u | (man << 13) | (man ? 0x400000u : 0u));
  if (exp != 0) return float_from_bits(sign | ((exp + 112u) << 23) | (man << 13));
  if (man == 0) return float_from_bits(sign);
  // Subnormal: man * 2^-24 is exact in float32 (man < 2^10, 2^-24 is a power of two).
  const float v = static_cast<float>(man) * 5.9604644775390625e-8f;
  return sign ? -v : v;
}

uint16_t float_to_bf16(float x) noexcept {
  const uint32_t u = float_bits(x);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
  return static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

float bf16_to_float(uint16_t b) noexcept {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) u |= 0x400000u;
  return float_from_bits(u);
}

}  // namespace onemodel
