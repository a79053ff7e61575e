#include "kernels/exact_math.h"

#include "base/bits.h"

namespace onemodel::kern {
namespace {
constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: x + M - M rounds x to an integer (|x| < 2^22)
constexpr float kLog2e = 1.44269502f;
constexpr float kLn2Hi = 0.693145751953125f;
constexpr float kLn2Lo = 1.4286068e-6f;

// Steps 1-3 shared by exp and ExpNonPositive: p ~ exp(r) and the integer n with x = n*ln2 + r.
struct Reduced {
  float p;
  int32_t n;
};
Reduced reduce(float x) noexcept {
  const float t = x * kLog2e + kRound;
  const float n = t - kRound;
  const int32_t n_int = static_cast<int32_t>(float_bits(t)) - static_cast<int32_t>(float_bits(kRound));
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
  if (x > 88.72283172607422f) return float_from_bits(0x7F800000u);
  if (x < -103.97207641601562f) return 0.0f;
  const Reduced rd = reduce(x);
  // Two power-of-two scalings so a subnormal result is rounded once (in the second multiply).
  const int32_t a = rd.n >> 1;
  const int32_t b = rd.n - a;
  const float sa = float_from_bits(static_cast<uint32_t>(a + 127) << 23);
  const float sb = float_from_bits(static_cast<uint32_t>(b + 127) << 23);
  return (rd.p * sa) * sb;
}

float exact_exp_nonpositive(float x) noexcept {
  if (x != x) return canonical_nan_f32();
  if (x < -87.33654f) return 0.0f;
  const Reduced rd = reduce(x);
  return rd.p * float_from_bits(static_cast<uint32_t>(rd.n + 127) << 23);
}

float fast_exp(float x) noexcept {
  if (x != x) return canonical_nan_f32();
  if (x < -87.3f) return 0.0f;
  if (x > 88.3f) x = 88.3f;
  const float t = x * kLog2e + kRound;
  const float n = t - kRound;
  const int32_t n_int = static_cast<int32_t>(float_bits(t)) - static_cast<int32_t>(float_bits(kRound));
  float r = x - n * kLn2Hi;
  r = r - n * kLn2Lo;
  float q = 0.008312525f * r + 0.041890115f;
  q = q * r + 0.16667114f;
  q = q * r + 0.4999923f;
  const float p = 1.0f + ((r * r) * q + r);
  return p * float_from_bits(static_cast<uint32_t>(n_int + 127) << 23);
}

}  // namespace onemodel::kern

namespace onemodel::kern {
namespace {
constexpr float kFltMax = 3.40282347e+38f;
constexpr float kInf = __builtin_inff();

float bits_or_sign(float v, float sign_of) noexcept {
  return float_from_bits(float_bits(v) | (float_bits(sign_of) & 0x80000000u));
}
float fabs_bits(float x) noexcept { return float_from_bits(float_bits(x) & 0x7FFFFFFFu); }

// erf(|x|) for |x| < 0.5 (odd polynomial in |x|).
float erf_small(float ax, float z) noexcept {
  float p = -0.0007692853f * z + 0.0052003083f;
  p = p * z - 0.02686312f;
  p = p * z + 0.11283774f;
  p = p * z - 0.37612638f;
  p = p * z + 1.1283792f;
  return ax * p;
}

// erfc(|x|) for |x| >= 0.5: exp(-x^2) with x^2 carried as z + zLo, times t*G(1/|x| - 1).
float erfc_large(float ax, float z) noexcept {
  static constexpr float kG[17] = {-0.00057763467f, 0.0017893383f,  -0.00010074016f, -0.004373198f,  0.0034639547f,
                                   0.0015023724f,   -0.0009413088f, -0.0018891813f,  -0.0002586738f, 0.0052144383f,
                                   -0.0103428485f,  0.015788378f,   -0.018338649f,   0.008167262f,   0.035529688f,
                                   -0.1543716f,     0.42758358f};
  const float t = 1.0f / ax;
  const float s = t - 1.0f;
  float g = kG[0];
  for (int k = 1; k < 17; ++k) g = g * s + kG[k];
  const float split = ax * 4097.0f;
  const float hi = split - (split - ax);
  const float lo = ax - hi;
  float z_lo = ((hi * hi - z) + 2.0f * (hi * lo)) + lo * lo;
  if (ax >= 64.0f) z_lo = 0.0f;
  const float exp_neg_z = exact_exp(0.0f - z) * (1.0f - z_lo);
  return exp_neg_z * (t * g);
}
}  // namespace

float exact_log(float x) noexcept {
  const bool sub = x < 1.17549435e-38f;
  const float xs = sub ? x * 16777216.0f : x;
  const uint32_t ix = float_bits(xs) - 0x3F3504F3u;
  const int32_t e = static_cast<int32_t>(ix) >> 23;
  const float m = float_from_bits((ix & 0x007FFFFFu) + 0x3F3504F3u);
  float ef = float_from_bits(static_cast<uint32_t>(e) + 0x4B400000u) - kRound;
  if (sub) ef = ef - 24.0f;
  const float f = m - 1.0f;
  const float s = f / (2.0f + f);
  const float z = s * s;
  float w = 0.0909090936f * z + 0.111111112f;
  w = w * z + 0.142857149f;
  w = w * z + 0.200000003f;
  w = w * z + 0.333333343f;
  const float s2 = s + s;
  const float logm = s2 + s2 * (z * w);
  const float r = ef * kLn2Hi + (logm + ef * kLn2Lo);
  if (x != x || x < 0.0f) return canonical_nan_f32();
  if (x == 0.0f) return -kInf;
  if (x > kFltMax) return kInf;
  return r;
}

float exact_sigmoid(float x) noexcept {
  if (x != x) return canonical_nan_f32();
  const float s = exact_exp(0.0f - fabs_bits(x));
  const float num = x >= 0.0f ? 1.0f : s;
  return num / (1.0f + s);
}

float exact_tanh(float x) noexcept {
  if (x != x) return canonical_nan_f32();
  const float ax = fabs_bits(x);
  const float z = ax * ax;
  float r;
  if (ax < 0.6f) {
    float p = -0.0058951583f * z + 0.020795971f;
    p = p * z - 0.05378383f;
    p = p * z + 0.13331924f;
    p = p * z - 0.333333f;
    r = ax + ax * (z * p);
  } else {
    const float e = exact_exp(ax + ax);
    r = 1.0f - 2.0f / (e + 1.0f);
  }
  return bits_or_sign(r, x);
}

float exact_erf(float x) noexcept {
  if (x != x) return canonical_nan_f32();
  const float ax = fabs_bits(x);
  const float z = ax * ax;
  const float e = ax < 0.5f ? erf_small(ax, z) : 1.0f - erfc_large(ax, z);
  return bits_or_sign(e, x);
}

float exact_one_plus_erf(float x) noexcept {
  if (x != x) return canonical_nan_f32();
  const float ax = fabs_bits(x);
  const float z = ax * ax;
  if (ax < 0.5f) return 1.0f + bits_or_sign(erf_small(ax, z), x);
  const float erfc = erfc_large(ax, z);
  return x < 0.0f ? erfc : 2.0f - erfc;
}

float exact_gelu_erf(float x) noexcept {
  if (x != x) return canonical_nan_f32();
  if (x == -kInf) return -0.0f;
  if (x == kInf) return kInf;
  const float y = x * 0.70710677f;
  return (0.5f * x) * exact_one_plus_erf(y);
}

float exact_gelu_tanh(float x) noexcept {
  if (x != x) return canonical_nan_f32();
  if (x == -kInf) return -0.0f;
  if (x == kInf) return kInf;
  const float u = 0.79788456f * (x + 0.044715f * ((x * x) * x));
  return x * exact_sigmoid(u + u);
}

}  // namespace onemodel::kern
