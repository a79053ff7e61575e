// float <-> binary16 / bfloat16 conversions (tensors.md section 10) against references written differently:
// decoding by ldexp arithmetic, encoding by searching the nearest representable value (ties to even).
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <random>
#include <vector>

#include "base/bits.h"
#include "base/fp16.h"

namespace onemodel {
namespace {

// binary16 value by its definition: (-1)^s * 2^(e-15) * (1 + m/1024), subnormals 2^-14 * m/1024.
double half_value(uint16_t h) {
  const int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
  if (e == 31) v = m ? NAN : INFINITY;
  return s ? -v : v;
}
// bfloat16: 8 exponent bits (bias 127), 7 mantissa bits.
double bf16_value(uint16_t b) {
  const int s = b >> 15, e = (b >> 7) & 255, m = b & 127;
  double v = e == 0 ? std::ldexp(m, -133) : std::ldexp(128 + m, e - 134);
  if (e == 255) v = m ? NAN : INFINITY;
  return s ? -v : v;
}

TEST(Fp16Test, AllHalfPatternsDecode) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = half_to_float(static_cast<uint16_t>(h));
    const double ref = half_value(static_cast<uint16_t>(h));
    if (std::isnan(ref)) {
      ASSERT_TRUE(std::isnan(f)) << h;
      // Payload shifted left 13, quiet bit forced, sign kept.
      ASSERT_EQ(float_bits(f), ((h & 0x8000u) << 16) | 0x7F800000u | ((h & 0x3FFu) << 13) | 0x400000u) << h;
    } else {
      ASSERT_EQ(float_bits(f), float_bits(static_cast<float>(ref))) << h;
    }
  }
}

TEST(Fp16Test, AllBf16PatternsDecode) {
  for (uint32_t b = 0; b < 65536; ++b) {
    const float f = bf16_to_float(static_cast<uint16_t>(b));
    const double ref = bf16_value(static_cast<uint16_t>(b));
    if (std::isnan(ref)) {
      ASSERT_EQ(float_bits(f), (b << 16) | 0x400000u) << b;
    } else {
      ASSERT_EQ(float_bits(f), float_bits(static_cast<float>(ref))) << b;
    }
  }
}

// Nearest finite-or-infinite pattern by value among the sorted non-negative non-NaN patterns, ties to the
// even pattern. Overflow follows IEEE: values at or above max + half an ulp (65520 for half) round to inf.
struct NearestRef {
  std::vector<double> values;  // index = pattern (0 .. inf pattern), all non-negative
  double (*decode)(uint16_t);
  uint16_t inf;
  explicit NearestRef(double (*d)(uint16_t), uint16_t inf_pattern) : decode(d), inf(inf_pattern) {
    for (uint32_t p = 0; p < inf_pattern; ++p) values.push_back(d(static_cast<uint16_t>(p)));
  }
  uint16_t encode(float x) const {
    const double a = std::fabs(static_cast<double>(x));
    const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
    const double maxv = values.back();
    const double ulp = maxv - values[values.size() - 2];
    if (a >= maxv + ulp / 2) return sign | inf;
    // Binary search for the first value >= a.
    size_t lo = 0, hi = values.size() - 1;
    while (lo < hi) {
      const size_t mid = (lo + hi) / 2;
      if (values[mid] < a)
        lo = mid + 1;
      else
        hi = mid;
    }
    size_t best = lo;
    if (lo > 0) {
      const double dl = a - values[lo - 1], dh = values[lo] - a;
      if (dl < dh || (dl == dh && ((lo - 1) & 1) == 0)) best = lo - 1;
    }
    return static_cast<uint16_t>(sign | best);
  }
};

std::vector<float> probe_floats() {
  std::vector<float> xs;
  std::mt19937 rng(12345);
  for (int i = 0; i < 1700000; ++i) xs.push_back(float_from_bits(rng()));
  // Around every half boundary: each half value and each midpoint, and their float neighbours.
  for (uint32_t h = 0; h < 0x7C00; ++h) {
    const double v = half_value(static_cast<uint16_t>(h));
    const double nv = half_value(static_cast<uint16_t>(h + 1));
    for (double c : {v, (v + nv) / 2}) {
      const float f = static_cast<float>(c);
      for (float g : {f, std::nextafter(f, 0.0f), std::nextafter(f, INFINITY)}) {
        xs.push_back(g);
        xs.push_back(-g);
      }
    }
  }
  for (float f : {65504.0f, 65519.996f, 65520.0f, 65536.0f, 5.9604645e-8f, 2.9802322e-8f, 2.9802326e-8f, 6.1035156e-5f,
                  1e-45f, 3.4028235e38f, INFINITY})
    for (float g : {f, std::nextafter(f, 0.0f), std::nextafter(f, INFINITY)}) {
      xs.push_back(g);
      xs.push_back(-g);
    }
  return xs;
}

TEST(Fp16Test, FloatToHalfMatchesNearestSearch) {
  const NearestRef ref(half_value, 0x7C00);
  const std::vector<float> xs = probe_floats();
  ASSERT_GT(xs.size(), 2000000u);
  for (float x : xs) {
    const uint16_t got = float_to_half(x);
    if (std::isnan(x)) {
      const uint32_t u = float_bits(x);
      ASSERT_EQ(got, ((u >> 16) & 0x8000u) | 0x7E00u | ((u >> 13) & 0x1FFu)) << u;
      continue;
    }
    ASSERT_EQ(got, ref.encode(x)) << "x bits " << std::hex << float_bits(x);
  }
}

TEST(Fp16Test, FloatToBf16MatchesNearestSearch) {
  const NearestRef ref(bf16_value, 0x7F80);
  std::vector<float> xs;
  std::mt19937 rng(777);
  for (int i = 0; i < 1800000; ++i) xs.push_back(float_from_bits(rng()));
  // bfloat16 boundaries: every bf16 pattern with low halves 0x7FFF, 0x8000, 0x8001 (just below/at/above
  // the tie) and the pattern itself.
  for (uint32_t b = 0; b < 0x10000; b += 1) {
    for (uint32_t low : {0x0000u, 0x7FFFu, 0x8000u, 0x8001u}) xs.push_back(float_from_bits((b << 16) | low));
  }
  ASSERT_GT(xs.size(), 2000000u);
  for (float x : xs) {
    const uint16_t got = float_to_bf16(x);
    const uint32_t u = float_bits(x);
    if (std::isnan(x)) {
      ASSERT_EQ(got, static_cast<uint16_t>((u >> 16) | 0x40u)) << std::hex << u;
      continue;
    }
    ASSERT_EQ(got, ref.encode(x)) << "x bits " << std::hex << u;
  }
}

TEST(Fp16Test, HandPickedValues) {
  EXPECT_EQ(float_to_half(1.0f), 0x3C00);
  EXPECT_EQ(float_to_half(-2.0f), 0xC000);
  EXPECT_EQ(float_to_half(65504.0f), 0x7BFF);
  EXPECT_EQ(float_to_half(65519.99f), 0x7BFF);
  EXPECT_EQ(float_to_half(65520.0f), 0x7C00);
  EXPECT_EQ(float_to_half(5.9604645e-8f), 0x0001);  // 2^-24, smallest subnormal
  EXPECT_EQ(float_to_half(2.9802322e-8f), 0x0000);  // 2^-25 exactly: tie to even (0)
  EXPECT_EQ(float_to_half(8.940697e-8f), 0x0002);   // 1.5 * 2^-24: tie to even (2)
  EXPECT_EQ(float_to_half(-0.0f), 0x8000);
  EXPECT_EQ(float_to_half(float_from_bits(0x7F800001u)), 0x7E00);  // signalling NaN, payload below the kept bits
  EXPECT_EQ(float_to_half(float_from_bits(0xFFC02000u)), 0xFE01);
  EXPECT_EQ(float_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bf16(float_from_bits(0x3F808000u)), 0x3F80);  // tie, even stays
  EXPECT_EQ(float_to_bf16(float_from_bits(0x3F818000u)), 0x3F82);  // tie, odd rounds up
  EXPECT_EQ(float_to_bf16(float_from_bits(0x7F7FFFFFu)), 0x7F80);  // FLT_MAX rounds to inf
  EXPECT_EQ(float_to_bf16(float_from_bits(0x7F800001u)), 0x7FC0);
  EXPECT_EQ(float_bits(half_to_float(0x7C01)), 0x7FC02000u);
  EXPECT_EQ(float_bits(bf16_to_float(0x7F81)), 0x7FC10000u);
}

// base/bits.h: the bit patterns travel unchanged (NaN payloads, signalling NaNs, -0, subnormals), at compile
// time too (the emscripten build relies on __builtin_bit_cast there).
static_assert(float_bits(1.0f) == 0x3F800000u);
static_assert(float_from_bits(0xC0000000u) == -2.0f);
static_assert(double_bits(1.0) == 0x3FF0000000000000ull);
static_assert(bit_cast<int32_t>(-0.0f) == INT32_MIN);
TEST(BitsTest, RoundTripsEveryKindOfPattern) {
  for (uint32_t u : {0u, 0x80000000u, 0x00000001u, 0x807FFFFFu, 0x7F800000u, 0xFF800000u, 0x7F800001u, 0x7FBFFFFFu,
                     0xFFC12345u, 0x7FC00000u}) {
    EXPECT_EQ(float_bits(float_from_bits(u)), u) << std::hex << u;
    EXPECT_EQ(bit_cast<uint32_t>(bit_cast<float>(u)), u) << std::hex << u;
  }
  for (uint64_t u : {0ull, 0x8000000000000000ull, 1ull, 0x7FF0000000000001ull, 0xFFF8000000000123ull}) {
    EXPECT_EQ(double_bits(double_from_bits(u)), u) << std::hex << u;
  }
  EXPECT_EQ(double_from_bits(0x3FF8000000000000ull), 1.5);
}

}  // namespace
}  // namespace onemodel
