#include "kernels/exact_math.h"

namespace onemodel::kernels {
namespace {
constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: x + M - M rounds x to an integer (|x| < 2^22)
constexpr float kLog2e = 1.44269502f;
constexpr float kLn2Hi = 0.693145751953125f;
constexpr float kLn2Lo = 1.4286068e-6f;

uint32_t bits(float x) noexcept {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}
float from_bits(uint32_t u) noexcept {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Steps 1-3 shared by exp and ExpNonPositive: p ~ exp(r) and the integer n with x = n*ln2 + r.
struct Reduced {
  float p;
  int32_t n;
};
Reduced reduce(float x) noexcept {
  const float t = x * kLog2e + kRound;
  const float n = t - kRound;
  const int32_t n_int = static_cast<int32_t>(bits(t)) - static_cast<int32_t>(bits(kRound));
  const float r = (x - n * kLn2Hi) - n * kLn2Lo;
  float q = 0.0013814613f * r + 0.00836871f;
  q = q * r + 0.04166839f;
  q = q * r + 0.16666521f;
  q = q * r + 0.49999994f;
  const float p = 1.0f + (r + (r * r) * q);
  return {p, n_int};
}
}  // namespace

float exact_exp(float x) noexcept {
  if (x != x) return canonical_nan_f32();
  if (x > 88.72283172607422f) return from_bits(0x7F800000u);
  if (x < -103.97207641601562f) return 0.0f;
  const Reduced rd = reduce(x);
  // Two power-of-two scalings so a subnormal result is rounded once (in the second multiply).
  const int32_t a = rd.n >> 1;
  const int32_t b = rd.n - a;
  const float sa = from_bits(static_cast<uint32_t>(a + 127) << 23);
  const float sb = from_bits(static_cast<uint32_t>(b + 127) << 23);
  return (rd.p * sa) * sb;
}

float exact_exp_nonpositive(float x) noexcept {
  if (x != x) return canonical_nan_f32();
  if (x < -87.33654f) return 0.0f;
  const Reduced rd = reduce(x);
  return rd.p * from_bits(static_cast<uint32_t>(rd.n + 127) << 23);
}

float fast_exp(float x) noexcept {
  if (x != x) return canonical_nan_f32();
  if (x < -87.3f) return 0.0f;
  if (x > 88.3f) x = 88.3f;
  const float t = x * kLog2e + kRound;
  const float n = t - kRound;
  const int32_t n_int = static_cast<int32_t>(bits(t)) - static_cast<int32_t>(bits(kRound));
  float r = x - n * kLn2Hi;
  r = r - n * kLn2Lo;
  float q = 0.008312525f * r + 0.041890115f;
  q = q * r + 0.16667114f;
  q = q * r + 0.4999923f;
  const float p = 1.0f + ((r * r) * q + r);
  return p * from_bits(static_cast<uint32_t>(n_int + 127) << 23);
}

float sum16(const float* x, size_t n) noexcept {
  float part[16];
  for (float& p : part) p = 0.0f;
  for (size_t j = 0; j < n; ++j) part[j & 15] = part[j & 15] + x[j];
  float a[8], b[4];
  for (int t = 0; t < 8; ++t) a[t] = part[t] + part[t + 8];
  for (int t = 0; t < 4; ++t) b[t] = a[t] + a[t + 4];
  const float c0 = b[0] + b[2];
  const float c1 = b[1] + b[3];
  return c0 + c1;
}

}  // namespace onemodel::kernels
