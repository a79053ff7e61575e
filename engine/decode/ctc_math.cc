#include "decode/ctc_math.h"

#include <cmath>
#include <cstdint>
#include <limits>

#include "base/bits.h"

namespace onemodel::ctc {
namespace {
constexpr double kLog2e = 1.4426950408889634;
constexpr double kLn2Hi = 6.93147180369123816490e-01;
constexpr double kLn2Lo = 1.90821492927058770002e-10;
constexpr double kLn2 = 0.6931471805599453;
constexpr double kSqrt2 = 1.4142135623730951;
constexpr double kInf = std::numeric_limits<double>::infinity();

// 1/n! for n = 0..13; each quotient is one correctly rounded division of exact integers, as in the
// reference (tools/ctc_reference.py).
constexpr double kInvFactorial[14] = {1.0,
                                      1.0 / 1.0,
                                      1.0 / 2.0,
                                      1.0 / 6.0,
                                      1.0 / 24.0,
                                      1.0 / 120.0,
                                      1.0 / 720.0,
                                      1.0 / 5040.0,
                                      1.0 / 40320.0,
                                      1.0 / 362880.0,
                                      1.0 / 3628800.0,
                                      1.0 / 39916800.0,
                                      1.0 / 479001600.0,
                                      1.0 / 6227020800.0};
}  // namespace

// ctc.md section 5, "exp".
double det_exp(double x) noexcept {
  if (!(x > -700.0)) return 0.0;  // also NaN
  if (x > 700.0) x = 700.0;
  const double k = std::floor(x * kLog2e + 0.5);
  const double r = (x - k * kLn2Hi) - k * kLn2Lo;
  double p = kInvFactorial[13];
  for (int n = 12; n >= 0; --n) p = p * r + kInvFactorial[n];
  // |k| <= 1010: 2^k is a normal double, built from its exponent field.
  const double scale = double_from_bits(static_cast<uint64_t>(static_cast<int64_t>(k) + 1023) << 52);
  return p * scale;
}

// ctc.md section 5, "ln".
double det_ln(double x) noexcept {
  if (x != x || x < 0.0) return std::numeric_limits<double>::quiet_NaN();
  if (x == 0.0) return -kInf;
  if (x == kInf) return kInf;
  int64_t e = 0;
  if (x < 2.2250738585072014e-308) {  // subnormal: scale into the normal range first
    x = x * 18014398509481984.0;      // 2^54
    e = -54;
  }
  const uint64_t bits = double_bits(x);
  e += static_cast<int64_t>((bits >> 52) & 0x7FF) - 1023;
  double m = double_from_bits((bits & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull);  // [1, 2)
  if (m > kSqrt2) {
    m = m * 0.5;
    e += 1;
  }
  const double s = (m - 1.0) / (m + 1.0);
  const double z = s * s;
  double q = 1.0 / 19.0;
  for (int j = 8; j >= 0; --j) q = q * z + 1.0 / static_cast<double>(2 * j + 1);
  return static_cast<double>(e) * kLn2 + (2.0 * s) * q;
}

// ctc.md section 5, "logadd".
double det_logadd(double a, double b) noexcept {
  if (b > a) {
    const double t = a;
    a = b;
    b = t;
  }
  if (b == -kInf || b - a < -40.0) return a;
  return a + det_ln(1.0 + det_exp(b - a));
}

}  // namespace onemodel::ctc
