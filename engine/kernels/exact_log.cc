#include "kernels/exact_log.h"

#include <cstdint>
#include <cstring>

#include "kernels/exact_math.h"

namespace onemodel::kernels {
namespace {
uint32_t to_bits(float x) noexcept {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}
float of_bits(uint32_t u) noexcept {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
}  // namespace

float exact_log(float x) noexcept {
  if (x != x || x < 0.0f) return canonical_nan_f32();
  if (x == 0.0f) return of_bits(0xFF800000u);      // -inf
  if (x > 3.40282347e38f) return of_bits(0x7F800000u);  // +inf
  // Step 1: scale subnormals into the normal range.
  const bool sub = x < 1.17549435e-38f;
  const float xs = sub ? x * 16777216.0f : x;
  // Step 2: split into m in [sqrt(1/2), sqrt(2)) and the exponent e.
  const int32_t ix = static_cast<int32_t>(to_bits(xs) - 0x3F3504F3u);
  const int32_t e = ix >> 23;
  const float m = of_bits(static_cast<uint32_t>((ix & 0x007FFFFF) + 0x3F3504F3));
  constexpr float kRound = 12582912.0f;
  float ef = of_bits(static_cast<uint32_t>(e + 0x4B400000)) - kRound;
  if (sub) ef = ef - 24.0f;
  // Step 3: log(m) = 2 atanh(s), s = f / (2 + f).
  const float f = m - 1.0f;
  const float s = f / (2.0f + f);
  const float z = s * s;
  float w = 0.0909090936f * z + 0.111111112f;
  w = w * z + 0.142857149f;
  w = w * z + 0.200000003f;
  w = w * z + 0.333333343f;
  const float s2 = s + s;
  const float logm = s2 + s2 * (z * w);
  // Step 4.
  return ef * 0.693145751953125f + (logm + ef * 1.4286068e-6f);
}

}  // namespace onemodel::kernels
