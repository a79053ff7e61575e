// The exact fp32 exponentials and the canonical 16-partial sum (exact-transcendentals.md, ops-norms.md).
// Expected bit patterns were produced by an independent step-by-step NumPy float32 evaluation of the spec
// text (one np.float32 rounding per operator), pasted here; accuracy is checked against long double expl.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "base/bits.h"
#include "kernels/exact_math.h"
#include "kernels/isa.h"
#include "kernels/softmax.h"

namespace onemodel::kern {
namespace {

struct ExpCase {
  float x;
  uint32_t exp_bits, exp_nonpositive_bits;
};
// NumPy float32 reference (exp_nonpositive column is 0 where x is outside [-87.33654, 0]).
const ExpCase kCases[] = {
    {0.0f, 0x3F800000u, 0x3F800000u},
    {-1.0f, 0x3EBC5AB2u, 0x3EBC5AB2u},
    {-0.5f, 0x3F1B4598u, 0x3F1B4598u},
    {-2.5f, 0x3DA81C2Eu, 0x3DA81C2Eu},
    {-10.0f, 0x383E6BCEu, 0x383E6BCEu},
    {-20.75f, 0x3085D036u, 0x3085D036u},
    {-50.0f, 0x1B692BEBu, 0x1B692BEBu},
    {-87.0f, 0x00B33687u, 0x00B33687u},
    {-87.33654022216797f, 0x00800026u, 0x00800026u},
    {1.0f, 0x402DF854u, 0},
    {10.0f, 0x46AC14EEu, 0},
    {88.0f, 0x7EF882B7u, 0},
    {-90.0f, 0x0008EC28u, 0},
    {-100.0f, 0x0000001Bu, 0},
    {-103.9000015258789f, 0x00000001u, 0},
};

TEST(ExactMathTest, ExpMatchesIndependentBitPatterns) {
  for (const auto& c : kCases) {
    EXPECT_EQ(float_bits(exact_exp(c.x)), c.exp_bits) << c.x;
    if (c.x <= 0.0f) {
      EXPECT_EQ(float_bits(exact_exp_nonpositive(c.x)), c.exp_nonpositive_bits) << c.x;
    }
  }
}

TEST(ExactMathTest, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(float_bits(exact_exp(inf)), 0x7F800000u);
  EXPECT_EQ(float_bits(exact_exp(88.72283172607422f)), float_bits(exact_exp(88.72283172607422f)));  // finite, no trap
  EXPECT_TRUE(std::isfinite(exact_exp(88.72283172607422f)));
  EXPECT_EQ(float_bits(exact_exp(std::nextafter(88.72283172607422f, inf))), 0x7F800000u);
  EXPECT_EQ(float_bits(exact_exp(-inf)), 0u);
  EXPECT_EQ(float_bits(exact_exp(std::nextafter(-103.97207641601562f, -inf))), 0u);
  EXPECT_EQ(float_bits(exact_exp(float_from_bits(0xFFC12345u))), 0x7FC00000u);
  EXPECT_EQ(float_bits(exact_exp(-0.0f)), 0x3F800000u);
  EXPECT_EQ(float_bits(exact_exp_nonpositive(-inf)), 0u);
  EXPECT_EQ(float_bits(exact_exp_nonpositive(float_from_bits(0x7F800001u))), 0x7FC00000u);
  EXPECT_EQ(float_bits(exact_exp_nonpositive(std::nextafter(-87.33654f, -inf))), 0u);
  EXPECT_EQ(float_bits(fast_exp(float_from_bits(0xFFC12345u))), 0x7FC00000u);
  EXPECT_EQ(float_bits(fast_exp(-100.0f)), 0u);
}

// Error in units of the fp32 spacing at the correctly rounded reference (exact-transcendentals.md).
double ulp_error(float got, long double ref) {
  const float r = static_cast<float>(ref);
  const float spacing = std::nextafter(std::fabs(r), std::numeric_limits<float>::infinity()) - std::fabs(r);
  return static_cast<double>(std::fabs(static_cast<long double>(got) - ref) / spacing);
}

TEST(ExactMathTest, AccuracyBoundsAndNonPositiveAgreement) {
  double worst = 0, worst_fast = 0;
  // Every 331st float in [-87.33654, 0]: ExpNonPositive equals exp bit for bit; both within 1.2 ulp.
  const uint32_t lo = float_bits(-87.33654f);
  for (uint32_t u = 0x80000000u; u <= lo; u += 331) {
    const float x = float_from_bits(u);
    const float e = exact_exp(x);
    ASSERT_EQ(float_bits(exact_exp_nonpositive(x)), float_bits(e)) << x;
    const long double ref = std::exp(static_cast<long double>(x));
    if (ref >= static_cast<long double>(std::numeric_limits<float>::min())) worst = std::max(worst, ulp_error(e, ref));
    // The fast exp flushes below -87.3 by definition.
    if (x >= -87.3f) worst_fast = std::max(worst_fast, ulp_error(fast_exp(x), ref));
  }
  // Positive side up to the overflow threshold.
  for (uint32_t u = 0; u <= float_bits(88.72283172607422f); u += 331) {
    const float x = float_from_bits(u);
    worst = std::max(worst, ulp_error(exact_exp(x), std::exp(static_cast<long double>(x))));
  }
  EXPECT_LE(worst, 1.2);       // documented bound of the exact exp
  EXPECT_LE(worst_fast, 2.5);  // the fast exp is documented at about 2.3 ulp
  EXPECT_GT(worst, 0.0);
}

TEST(ExactMathTest, Sum16Order) {
  // The canonical sum of kern::sum16_f32 on every target this machine runs.
  for (Isa isa : available_isas()) {
    auto sum16 = [isa](const float* x, size_t n) { return sum16_f32(isa, x, static_cast<int64_t>(n)); };
    // 17 terms: term 16 joins partial 0. With 1e8 in partial 0 and 1 in partial 8 the tree adds
    // a[0] = P0 + P8 first: (1e8 + 1) rounds to 1e8, then -1e8 from partial 0... laid out by hand:
    std::vector<float> t(17, 0.0f);
    t[0] = 1e8f;    // partial 0
    t[16] = -1e8f;  // partial 0 again: P0 = (1e8 + -1e8) = 0
    t[8] = 1.0f;    // partial 8
    EXPECT_EQ(sum16(t.data(), t.size()), 1.0f) << isa_name(isa);
    // Here the cancellation happens only in the tree: P0 = 1e8, P8 = 1 -> a0 = 1e8, P4 = -1e8 -> a4 = -1e8,
    // b0 = a0 + a4 = 0, so the 1 is lost (a sequential sum would give 1).
    std::vector<float> u(16, 0.0f);
    u[0] = 1e8f;
    u[8] = 1.0f;
    u[4] = -1e8f;
    EXPECT_EQ(sum16(u.data(), u.size()), 0.0f) << isa_name(isa);
    EXPECT_EQ(float_bits(sum16(nullptr, 0)), 0u) << isa_name(isa);
    const float neg_zero = -0.0f;
    EXPECT_EQ(float_bits(sum16(&neg_zero, 1)), 0u) << isa_name(isa);  // starts from +0
  }
}

}  // namespace
}  // namespace onemodel::kern
