// CTC decoding against the double-precision reference (docs/ctc.md section 6): testdata/ctc/cases.json and
// ties.json, written by tools/ctc_reference.py from seeded random scores. Labels and run bounds must be equal; run,
// step and sequence confidences within 2e-6; beam log probabilities within 1e-9; the widest beam equal to the best text
// found by enumerating every alignment.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "onemodel/ctc.h"
#include "onemodel/tensor.h"
#include "test_util.h"

namespace onemodel::ctc {
namespace {

using nlohmann::json;

constexpr double kConfidenceTolerance = 2e-6;
constexpr double kLogProbabilityTolerance = 1e-9;

json read_cases(const char* name) {
  std::ifstream in(test::testdata(std::string("ctc/") + name));
  EXPECT_TRUE(in.good()) << "testdata/ctc/" << name << " is missing";
  return json::parse(in)["cases"];
}
// The 40 seeded cases.
const json& cases() {
  static const json all = read_cases("cases.json");
  return all;
}
// Small cases of tied scores, where creation order decides the rankings.
const json& ties() {
  static const json all = read_cases("ties.json");
  return all;
}

// The case's scores as a tensor: [steps, classes] when "batch" is null, else [batch, steps, classes]. A null
// score is -inf.
Tensor scores_of(const json& c) {
  std::vector<float> v;
  for (const json& x : c["data"]) {
    v.push_back(x.is_null() ? -std::numeric_limits<float>::infinity() : static_cast<float>(x.get<double>()));
  }
  const int64_t steps = c["steps"], classes = c["classes"];
  if (c["batch"].is_null()) return Tensor::from_values<float>(v, Shape{steps, classes});
  return Tensor::from_values<float>(v, Shape{c["batch"].get<int64_t>(), steps, classes});
}

Scores kind_of(const json& c) { return c["scores"] == "logits" ? Scores::Logits : Scores::LogProbabilities; }

std::vector<int64_t> labels_of(const json& j) { return j.get<std::vector<int64_t>>(); }

TEST(CtcCases, ThereAreFortyWithEnumeratedTexts) {
  ASSERT_EQ(cases().size(), 40u);
  int enumerated = 0;
  for (const json& c : cases()) enumerated += c.contains("exhaustive") ? 1 : 0;
  EXPECT_GE(enumerated, 20);
}

void expect_greedy(const json& all) {
  for (const json& c : all) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const std::vector<GreedyResult> got = greedy_decode(scores_of(c), {kind_of(c), c["blank"].get<int64_t>()});
    const json& want = c["greedy"];
    ASSERT_EQ(got.size(), want.size());
    for (size_t b = 0; b < got.size(); ++b) {
      EXPECT_EQ(got[b].labels, labels_of(want[b]["labels"]));
      const json& runs = want[b]["runs"];
      ASSERT_EQ(got[b].runs.size(), runs.size());
      for (size_t r = 0; r < runs.size(); ++r) {
        EXPECT_EQ(got[b].runs[r].label, runs[r][0].get<int64_t>());
        EXPECT_EQ(got[b].runs[r].first_step, runs[r][1].get<int64_t>());
        EXPECT_EQ(got[b].runs[r].last_step, runs[r][2].get<int64_t>());
        EXPECT_NEAR(got[b].runs[r].confidence, runs[r][3].get<double>(), kConfidenceTolerance);
      }
      const json& steps = want[b]["stepProbabilities"];
      ASSERT_EQ(got[b].step_probabilities.size(), steps.size());
      for (size_t t = 0; t < steps.size(); ++t) {
        EXPECT_NEAR(got[b].step_probabilities[t], steps[t].get<double>(), kConfidenceTolerance) << "step " << t;
      }
      EXPECT_NEAR(got[b].confidence, want[b]["confidence"].get<double>(), kConfidenceTolerance);
    }
  }
}

TEST(CtcCases, GreedyMatchesTheReference) { expect_greedy(cases()); }
TEST(CtcCases, GreedyMatchesTheReferenceOnTies) { expect_greedy(ties()); }

void expect_hypotheses(const std::vector<Hypothesis>& got, const json& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].labels, labels_of(want[i]["labels"])) << "hypothesis " << i;
    EXPECT_NEAR(got[i].log_probability, want[i]["logProbability"].get<double>(), kLogProbabilityTolerance);
    if (want[i].contains("confidence")) {
      EXPECT_NEAR(got[i].confidence, want[i]["confidence"].get<double>(), kLogProbabilityTolerance);
    }
  }
}

void expect_beam(const json& all) {
  for (const json& c : all) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const BeamOptions o{kind_of(c), c["blank"].get<int64_t>(), c["beamWidth"].get<int64_t>(), c["topN"].get<int64_t>()};
    const std::vector<std::vector<Hypothesis>> got = beam_search(scores_of(c), o);
    ASSERT_EQ(got.size(), c["beam"].size());
    for (size_t b = 0; b < got.size(); ++b) expect_hypotheses(got[b], c["beam"][b]);
  }
}

TEST(CtcCases, BeamSearchMatchesTheReference) { expect_beam(cases()); }
// Equal scores everywhere: the same labels in the same order only if ties go by creation order exactly.
TEST(CtcCases, BeamSearchMatchesTheReferenceOnTies) { expect_beam(ties()); }

TEST(CtcCases, SpanEntryPointsEqualTheTensorOnes) {
  for (const json& c : cases()) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const Tensor t = scores_of(c);
    const int64_t steps = c["steps"], classes = c["classes"];
    const BeamOptions o{kind_of(c), c["blank"].get<int64_t>(), c["beamWidth"].get<int64_t>(), c["topN"].get<int64_t>()};
    const auto greedy_all = greedy_decode(t, {o.scores, o.blank});
    const auto beam_all = beam_search(t, o);
    const auto n = static_cast<size_t>(steps * classes);
    for (size_t b = 0; b < greedy_all.size(); ++b) {
      const std::span<const float> item = t.data<float>().subspan(b * n, n);
      const GreedyResult g = greedy_decode(item, steps, classes, {o.scores, o.blank});
      EXPECT_EQ(g.labels, greedy_all[b].labels);
      EXPECT_EQ(g.step_probabilities, greedy_all[b].step_probabilities);  // bit for bit
      const std::vector<Hypothesis> h = beam_search(item, steps, classes, o);
      ASSERT_EQ(h.size(), beam_all[b].size());
      for (size_t i = 0; i < h.size(); ++i) {
        EXPECT_EQ(h[i].labels, beam_all[b][i].labels);
        EXPECT_EQ(h[i].log_probability, beam_all[b][i].log_probability);
      }
    }
  }
}

// A beam wider than the number of distinct prefixes is exact (docs/ctc.md section 3).
TEST(CtcCases, WideBeamFindsTheEnumeratedBestText) {
  for (const json& c : cases()) {
    if (!c.contains("exhaustive")) continue;
    SCOPED_TRACE(c["name"].get<std::string>());
    const std::vector<std::vector<Hypothesis>> got =
        beam_search(scores_of(c), {kind_of(c), c["blank"].get<int64_t>(), kMaxBeamWidth, 1});
    ASSERT_EQ(got.size(), c["exhaustive"].size());
    for (size_t b = 0; b < got.size(); ++b) expect_hypotheses(got[b], json::array({c["exhaustive"][b]}));
  }
}

}  // namespace
}  // namespace onemodel::ctc
