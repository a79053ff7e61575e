// CTC decoding, hand-worked cases (docs/ctc.md sections 1-5): ties, NaN, labels repeated across a blank,
// empty output, probability-0 classes, every limit, and the deterministic double exp/ln/logadd. Expected
// values are worked out in the comments; the seeded random cases are in ctc_cases_test.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "base/bits.h"
#include "decode/ctc_math.h"
#include "onemodel/ctc.h"
#include "onemodel/tensor.h"
#include "test_util.h"

namespace onemodel::ctc {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInfF = std::numeric_limits<float>::infinity();
constexpr double kTol = 2e-6;     // float confidences (docs/ctc.md section 6)
constexpr double kLpTol = 1e-12;  // hand-worked log probabilities

float lnf(double p) { return static_cast<float>(std::log(p)); }

const GreedyOptions kLogProbs{Scores::LogProbabilities, 0};

// --- Greedy (docs/ctc.md section 2) ---

TEST(CtcGreedy, TieTakesTheLowestIndex) {
  // Logits [1, 3, 3]: classes 1 and 2 tie, 1 wins; p = e^0 / (e^-2 + e^0 + e^0).
  const std::vector<float> s{1, 3, 3};
  const GreedyResult r = greedy_decode(s, 1, 3);
  EXPECT_EQ(r.labels, (std::vector<int64_t>{1}));
  EXPECT_NEAR(r.step_probabilities[0], 1.0 / (2.0 + std::exp(-2.0)), kTol);
  EXPECT_NEAR(r.confidence, 1.0 / (2.0 + std::exp(-2.0)), kTol);
}

TEST(CtcGreedy, NaNIsNeverChosen) {
  // Step 0: NaN, 0.5, 0.25 -> class 1 (p 0.5). Step 1: all NaN -> class 0, the blank.
  const std::vector<float> s{kNaN, lnf(0.5), lnf(0.25), kNaN, kNaN, kNaN};
  const GreedyResult r = greedy_decode(s, 2, 3, kLogProbs);
  EXPECT_EQ(r.labels, (std::vector<int64_t>{1}));
  EXPECT_NEAR(r.step_probabilities[0], 0.5, kTol);
  EXPECT_TRUE(std::isnan(r.step_probabilities[1]));
  EXPECT_NEAR(r.confidence, 0.5, kTol);
  // With blank 2, the all-NaN step emits class 0 whose probability is NaN, and so is the mean.
  const GreedyResult q = greedy_decode(s, 2, 3, {Scores::LogProbabilities, 2});
  EXPECT_EQ(q.labels, (std::vector<int64_t>{1, 0}));
  EXPECT_TRUE(std::isnan(q.runs[1].confidence));
  EXPECT_TRUE(std::isnan(q.confidence));
}

TEST(CtcGreedy, LogitRowsTheSoftmaxCannotNormaliseGiveNaN) {
  // Logits: NaN is skipped by the choice but the exact softmax of the row is NaN; so are +inf and all -inf.
  const std::vector<float> s{kNaN, 1, 0, 0, kInfF, 2, -kInfF, -kInfF, -kInfF};
  const GreedyResult r = greedy_decode(s, 3, 3);
  EXPECT_EQ(r.labels, (std::vector<int64_t>{1}));  // steps 0 and 1 choose 1, step 2 the blank (lowest index)
  for (float p : r.step_probabilities) EXPECT_TRUE(std::isnan(p)) << p;
}

TEST(CtcGreedy, RepeatedLabelSplitByBlankIsTwoLabels) {
  // Best classes a a _ a (a = 1) with p 0.9 0.8 0.7 0.6: runs a[0,1] (max 0.9) and a[3,3] (0.6); mean 0.75.
  const std::vector<float> s{lnf(0.1), lnf(0.9), lnf(0.2), lnf(0.8), lnf(0.7), lnf(0.3), lnf(0.4), lnf(0.6)};
  const GreedyResult r = greedy_decode(s, 4, 2, kLogProbs);
  EXPECT_EQ(r.labels, (std::vector<int64_t>{1, 1}));
  ASSERT_EQ(r.runs.size(), 2u);
  EXPECT_EQ(r.runs[0].first_step, 0);
  EXPECT_EQ(r.runs[0].last_step, 1);
  EXPECT_NEAR(r.runs[0].confidence, 0.9, kTol);
  EXPECT_EQ(r.runs[1].first_step, 3);
  EXPECT_EQ(r.runs[1].last_step, 3);
  EXPECT_NEAR(r.runs[1].confidence, 0.6, kTol);
  const std::vector<double> steps{0.9, 0.8, 0.7, 0.6};
  for (size_t t = 0; t < 4; ++t) EXPECT_NEAR(r.step_probabilities[t], steps[t], kTol);
  EXPECT_NEAR(r.confidence, 0.75, kTol);
}

TEST(CtcGreedy, RunConfidenceIsTheLargestStepOfTheRun) {
  // b b b (b = 2) with p 0.5 0.95 0.6 and blank 0: one run [0, 2], confidence 0.95.
  const std::vector<float> s{lnf(0.3),  lnf(0.2), lnf(0.5), lnf(0.01), lnf(0.04),
                             lnf(0.95), lnf(0.3), lnf(0.1), lnf(0.6)};
  const GreedyResult r = greedy_decode(s, 3, 3, kLogProbs);
  ASSERT_EQ(r.runs.size(), 1u);
  EXPECT_EQ(r.runs[0].label, 2);
  EXPECT_EQ(r.runs[0].last_step, 2);
  EXPECT_NEAR(r.runs[0].confidence, 0.95, kTol);
}

TEST(CtcGreedy, NothingEmittedHasConfidenceZero) {
  const std::vector<float> s{5, 1, 4, 2};  // the blank (0) wins both steps
  const GreedyResult r = greedy_decode(s, 2, 2);
  EXPECT_TRUE(r.labels.empty());
  EXPECT_TRUE(r.runs.empty());
  EXPECT_EQ(r.step_probabilities.size(), 2u);
  EXPECT_EQ(r.confidence, 0.0f);
  const GreedyResult none = greedy_decode(std::span<const float>{}, 0, 3);
  EXPECT_TRUE(none.labels.empty() && none.step_probabilities.empty());
  EXPECT_EQ(none.confidence, 0.0f);
}

TEST(CtcGreedy, LogProbabilityAboveZeroIsCappedAtOne) {
  const std::vector<float> s{-3.0f, 0.5f};
  EXPECT_EQ(greedy_decode(s, 1, 2, kLogProbs).step_probabilities[0], 1.0f);
}

TEST(CtcGreedy, BlankOtherThanZeroAndBatch) {
  // [2, 2, 3] logits, blank 2. Item 0: classes 0, 2 -> [0]. Item 1: 1, 1 -> [1] over steps [0, 1].
  const Tensor t = Tensor::from_values<float>({5, 0, 1, 0, 0, 6, 0, 7, 1, 0, 7, 1}, Shape{2, 2, 3});
  const std::vector<GreedyResult> r = greedy_decode(t, {Scores::Logits, 2});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].labels, (std::vector<int64_t>{0}));
  EXPECT_EQ(r[1].labels, (std::vector<int64_t>{1}));
  EXPECT_EQ(r[1].runs[0].first_step, 0);
  EXPECT_EQ(r[1].runs[0].last_step, 1);
  EXPECT_TRUE(greedy_decode(Tensor::zeros(DType::F32, Shape{0, 3, 4})).empty());
}

// --- Beam search (docs/ctc.md section 3) ---

BeamOptions beam(int64_t width, int64_t top_n, int64_t blank = 0, Scores s = Scores::LogProbabilities) {
  return BeamOptions{s, blank, width, top_n};
}

TEST(CtcBeam, SumsAlignmentsOfOneText) {
  // Two steps of p(blank) 0.4, p(a) 0.6: "a" = aa + a_ + _a = 0.36 + 0.24 + 0.24 = 0.84; "" = 0.16.
  const std::vector<float> s{lnf(0.4), lnf(0.6), lnf(0.4), lnf(0.6)};
  const std::vector<Hypothesis> h = beam_search(s, 2, 2, beam(2, 2));
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0].labels, (std::vector<int64_t>{1}));
  EXPECT_NEAR(h[0].log_probability, std::log(0.84), 1e-7);  // the scores are float logs of 0.4 and 0.6
  EXPECT_NEAR(h[0].confidence, 0.84, 1e-7);
  EXPECT_TRUE(h[1].labels.empty());
  EXPECT_NEAR(h[1].log_probability, std::log(0.16), 1e-7);
  EXPECT_EQ(h[1].confidence, 0.0);
}

TEST(CtcBeam, BestTextIsNotTheBestPath) {
  // p(blank) 0.6, p(a) 0.4 twice: the best path is "" (0.36) but "a" has 0.16 + 0.24 + 0.24 = 0.64.
  const std::vector<float> s{lnf(0.6), lnf(0.4), lnf(0.6), lnf(0.4)};
  EXPECT_TRUE(greedy_decode(s, 2, 2, kLogProbs).labels.empty());
  const std::vector<Hypothesis> h = beam_search(s, 2, 2, beam(4, 1));
  EXPECT_EQ(h[0].labels, (std::vector<int64_t>{1}));
  EXPECT_NEAR(h[0].log_probability, std::log(0.64), 1e-7);
}

TEST(CtcBeam, RepeatNeedsABlankAndTiesGoInCreationOrder) {
  // Three steps of p 0.5 / 0.5: of the 8 paths, 6 give "a", a_a gives "aa", ___ gives "". "" and "aa" both
  // get 0.5 * 0.5 * 0.5 by the same additions, an exact tie: "" was created first.
  const float h5 = lnf(0.5);
  const std::vector<float> s{h5, h5, h5, h5, h5, h5};
  const std::vector<Hypothesis> h = beam_search(s, 3, 2, beam(4, 3));
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[0].labels, (std::vector<int64_t>{1}));
  EXPECT_NEAR(h[0].log_probability, std::log(0.75), 1e-7);
  EXPECT_TRUE(h[1].labels.empty());
  EXPECT_EQ(h[2].labels, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(h[1].log_probability, h[2].log_probability);
  EXPECT_NEAR(h[2].confidence, std::sqrt(0.125), 1e-7);  // per-label geometric mean
}

TEST(CtcBeam, UniformTiesKeepCreationOrderWhenPruning) {
  // One step, three equally likely classes, blank 1: "", [0], [2] tie; created in that order.
  const float t3 = lnf(1.0 / 3.0);
  const std::vector<float> s{t3, t3, t3};
  const std::vector<Hypothesis> all = beam_search(s, 1, 3, beam(3, 3, 1));
  ASSERT_EQ(all.size(), 3u);
  EXPECT_TRUE(all[0].labels.empty());
  EXPECT_EQ(all[1].labels, (std::vector<int64_t>{0}));
  EXPECT_EQ(all[2].labels, (std::vector<int64_t>{2}));
  const std::vector<Hypothesis> two = beam_search(s, 1, 3, beam(2, 2, 1));
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[1].labels, (std::vector<int64_t>{0}));
}

TEST(CtcBeam, ProbabilityZeroCreatesNoPrefix) {
  // Class 2 has probability 0: only "" and [1] exist, so top 3 returns two.
  const std::vector<float> s{lnf(0.5), lnf(0.5), -kInfF};
  const std::vector<Hypothesis> h = beam_search(s, 1, 3, beam(3, 3));
  ASSERT_EQ(h.size(), 2u);
  EXPECT_TRUE(h[0].labels.empty());
  EXPECT_EQ(h[1].labels, (std::vector<int64_t>{1}));
}

TEST(CtcBeam, LogitsAreNormalisedPerStep) {
  // Logits [0, ln 3]: probabilities 1/4 and 3/4.
  const std::vector<float> s{0.0f, lnf(3.0)};
  const std::vector<Hypothesis> h = beam_search(s, 1, 2, beam(2, 2, 0, Scores::Logits));
  EXPECT_EQ(h[0].labels, (std::vector<int64_t>{1}));
  EXPECT_NEAR(h[0].log_probability, std::log(0.75), 1e-7);
  EXPECT_NEAR(h[1].log_probability, std::log(0.25), 1e-7);
  // Shifting every logit of a step changes nothing: -1e3 is far below the exp cut-off of single floats.
  const std::vector<float> shifted{-1000.0f, -1000.0f + lnf(3.0)};
  EXPECT_NEAR(beam_search(shifted, 1, 2, beam(1, 1, 0, Scores::Logits))[0].log_probability, std::log(0.75), 1e-4);
}

TEST(CtcBeam, EmptyInputsGiveTheEmptyText) {
  const std::vector<Hypothesis> none = beam_search(std::span<const float>{}, 0, 4, beam(3, 2));
  ASSERT_EQ(none.size(), 1u);
  EXPECT_TRUE(none[0].labels.empty());
  EXPECT_EQ(none[0].log_probability, 0.0);
  // Only the blank: every path is blanks, the text "" with probability 1 (log 0).
  const std::vector<float> blanks{7.0f, -2.0f};
  const std::vector<Hypothesis> h = beam_search(blanks, 2, 1, beam(2, 2, 0, Scores::Logits));
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].log_probability, 0.0);
  EXPECT_TRUE(beam_search(Tensor::zeros(DType::F32, Shape{0, 2, 3}), beam(2, 1)).empty());
}

// --- Limits and refusals (docs/ctc.md section 1) ---

TEST(CtcLimits, OptionsOutOfRange) {
  const std::vector<float> s{0, 0, 0, 0};
  const auto arg = ErrorKind::InvalidArgument;
  test::expect_error(arg, [&] { greedy_decode(s, 2, 2, {Scores::Logits, 2}); });
  test::expect_error(arg, [&] { greedy_decode(s, 2, 2, {Scores::Logits, -1}); });
  test::expect_error(arg, [&] { beam_search(s, 2, 2, beam(0, 1)); });
  test::expect_error(arg, [&] { beam_search(s, 2, 2, beam(kMaxBeamWidth + 1, 1)); });
  test::expect_error(arg, [&] { beam_search(s, 2, 2, beam(3, 0)); });
  test::expect_error(arg, [&] { beam_search(s, 2, 2, beam(3, 4)); });
  test::expect_error(arg, [&] { beam_search(s, 2, 2, beam(3, 1, 2)); });
  test::expect_error(arg, [&] { greedy_decode(std::span<const float>{}, 0, 0); });  // no class for the blank
}

TEST(CtcLimits, ScoresOfTheWrongSizeTypeOrRank) {
  const std::vector<float> s{0, 0, 0};
  const auto in = ErrorKind::InvalidInput;
  test::expect_error(in, [&] { greedy_decode(s, 2, 2); });
  test::expect_error(in, [&] { beam_search(s, 2, 2); });
  test::expect_error(in, [&] { greedy_decode(s, -1, 3); });
  test::expect_error(in, [&] { greedy_decode(Tensor::zeros(DType::F32, Shape{4})); });
  test::expect_error(in, [&] { beam_search(Tensor::zeros(DType::F32, Shape{1, 1, 2, 2})); });
  test::expect_error(in, [&] { greedy_decode(Tensor::zeros(DType::I64, Shape{2, 2})); });
  test::expect_error(in, [&] { greedy_decode(Tensor{}); });
}

TEST(CtcLimits, BeamRefusesNaNAndInfinityNamingTheElement) {
  const std::vector<float> nan_at{0, 0, 0, 0, kNaN, 0};
  Error e = test::expect_error(ErrorKind::InvalidInput, [&] { beam_search(nan_at, 2, 3); });
  EXPECT_NE(e.message().find("scores[1, 1] is NaN"), std::string::npos) << e.message();
  const Tensor batch = Tensor::from_values<float>({0, 0, 0, 0, 0, kInfF, 0, 0}, Shape{2, 2, 2});
  e = test::expect_error(ErrorKind::InvalidInput, [&] { beam_search(batch); });
  EXPECT_NE(e.message().find("scores[1, 0, 1] is +inf"), std::string::npos) << e.message();
  const std::vector<float> dead{0, 0, -kInfF, -kInfF};
  e = test::expect_error(ErrorKind::InvalidInput, [&] { beam_search(dead, 2, 2, beam(2, 1, 0, Scores::Logits)); });
  EXPECT_NE(e.message().find("step 1"), std::string::npos) << e.message();
  // The same row is legal as log-probabilities (probability 0 everywhere).
  EXPECT_EQ(beam_search(dead, 2, 2, beam(2, 1))[0].log_probability, -std::numeric_limits<double>::infinity());
}

TEST(CtcLimits, PrefixBound) {
  // steps * width * (classes - 1) + 1 <= 2^24: 1 * 4096 * 4095 + 1 passes, 1 * 4096 * 4096 + 1 does not.
  const std::vector<float> wide(4097, 0.0f);
  const std::vector<Hypothesis> h =
      beam_search(std::span<const float>(wide).first(4096), 1, 4096, beam(kMaxBeamWidth, 1, 0, Scores::Logits));
  EXPECT_TRUE(h[0].labels.empty());  // all equal: "" was created first
  test::expect_error(ErrorKind::Unsupported, [&] { beam_search(wide, 1, 4097, beam(kMaxBeamWidth, 1)); });
  const std::vector<float> tall(2 * 4097, 0.0f);
  test::expect_error(ErrorKind::Unsupported, [&] { beam_search(tall, 4097, 2, beam(kMaxBeamWidth, 1)); });
}

// --- Deterministic exp, ln, logadd (docs/ctc.md section 5) ---

// Bits of an independent evaluation of section 5 in Python floats (IEEE double, no fused operations).
TEST(CtcMath, BitsOfTheWrittenOperations) {
  struct Case {
    double x;
    uint64_t bits;
  };
  const Case exps[] = {{0.0, 0x3ff0000000000000ull},    {1.0, 0x4005bf0a8b14576aull},
                       {-1.0, 0x3fd78b56362cef38ull},   {-0.3466, 0x3fe6a0773cd678a3ull},
                       {-39.5, 0x3c6026a3c0738cffull},  {-123.456, 0x34cda9fb9e4ee720ull},
                       {699.9, 0x7f0ac3c2d2582f8full},  {750.0, 0x7f0d945df4f8ec8eull},
                       {-699.0, 0x00e78694fe9f73ccull}, {10.0, 0x40d5829dcf950560ull}};
  for (const Case& c : exps) EXPECT_EQ(double_bits(det_exp(c.x)), c.bits) << "exp " << c.x;
  const Case lns[] = {{1.0, 0x0ull},
                      {2.0, 0x3fe62e42fefa39efull},
                      {1.4142135623730951, 0x3fd62e42fefa39f1ull},
                      {1.4142135623730954, 0x3fd62e42fefa39f3ull},
                      {3.0, 0x3ff193ea7aad030aull},
                      {1e-310, 0xc0864e69394d9508ull},
                      {1e300, 0x4085963447f87fb5ull},
                      {1.0000001, 0x3e7ad7f2847b6492ull}};
  for (const Case& c : lns) EXPECT_EQ(double_bits(det_ln(c.x)), c.bits) << "ln " << c.x;
}

TEST(CtcMath, SpecialValues) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(det_exp(-700.0), 0.0);
  EXPECT_EQ(det_exp(-inf), 0.0);
  EXPECT_EQ(det_exp(std::nan("")), 0.0);
  EXPECT_EQ(det_exp(inf), det_exp(700.0));
  EXPECT_EQ(det_ln(0.0), -inf);
  EXPECT_EQ(det_ln(inf), inf);
  EXPECT_TRUE(std::isnan(det_ln(-1.0)));
  EXPECT_EQ(det_logadd(-inf, -inf), -inf);
  EXPECT_EQ(det_logadd(-3.5, -inf), -3.5);
  EXPECT_EQ(det_logadd(-inf, -3.5), -3.5);
  EXPECT_EQ(det_logadd(0.0, -40.5), 0.0);  // b - a < -40
  EXPECT_EQ(det_logadd(-1.25, -2.5), det_logadd(-2.5, -1.25));
}

TEST(CtcMath, AccurateOverTheRangesUsed) {
  double worst_exp = 0, worst_ln = 0, worst_add = 0;
  for (double x = -699.5; x <= 700.0; x += 0.173) {
    const long double want = std::exp(static_cast<long double>(x));
    worst_exp = std::max(worst_exp, static_cast<double>(std::fabs((det_exp(x) - want) / want)));
  }
  for (double x = 1e-300; x < 1e300; x *= 1.37) {
    const long double want = std::log(static_cast<long double>(x));
    if (std::fabs(want) > 1e-3)
      worst_ln = std::max(worst_ln, static_cast<double>(std::fabs((det_ln(x) - want) / want)));
  }
  for (double m = 0.5; m < 2.0; m += 0.000371) {  // the mantissa range itself, relative to max(1, |ln|)
    const long double want = std::log(static_cast<long double>(m));
    worst_ln = std::max(worst_ln, static_cast<double>(std::fabs(det_ln(m) - want)));
  }
  for (double d = -41.0; d <= 0.0; d += 0.0137) {
    const long double a = -3.0L, b = a + d;
    const long double want = a + std::log1p(std::exp(b - a));
    worst_add = std::max(worst_add, static_cast<double>(std::fabs(det_logadd(-3.0, -3.0 + d) - want)));
  }
  EXPECT_LT(worst_exp, 1e-15);
  EXPECT_LT(worst_ln, 1e-15);
  EXPECT_LT(worst_add, 4e-15);  // absolute, on results near -3
}

}  // namespace
}  // namespace onemodel::ctc
