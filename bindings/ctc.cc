// CTC decoding for the bindings (ctc.h).
#include "ctc.h"

#include <string>

namespace onemodel::binding {
namespace {

ctc::Scores scores_kind(int kind) {
  if (kind < 0 || kind > 1) {
    throw Error(ErrorKind::InvalidArgument,
                "scores kind code " + std::to_string(kind) + " is not 0 (logits) or 1 (log-probabilities)");
  }
  return kind == 0 ? ctc::Scores::Logits : ctc::Scores::LogProbabilities;
}

// A JS number that must be an integer; the decoder then checks its range. Values beyond 2^53 are passed on
// as a large integer, which every range check refuses.
int64_t integer(double v, const char* what) {
  if (!(v >= -9007199254740992.0 && v <= 9007199254740992.0) || v != static_cast<double>(static_cast<int64_t>(v))) {
    throw Error(ErrorKind::InvalidArgument, std::string(what) + " must be an integer");
  }
  return static_cast<int64_t>(v);
}

std::vector<int32_t> narrow(const std::vector<int64_t>& v) {
  // Labels are class indices and steps are step indices: both below 2^31 (tensor limits).
  return {v.begin(), v.end()};
}

}  // namespace

std::vector<CtcGreedyItem> ctc_greedy(const Tensor& scores, int kind, double blank) {
  const std::vector<ctc::GreedyResult> results =
      ctc::greedy_decode(scores, {scores_kind(kind), integer(blank, "blank")});
  std::vector<CtcGreedyItem> out(results.size());
  for (size_t b = 0; b < results.size(); ++b) {
    const ctc::GreedyResult& r = results[b];
    CtcGreedyItem& item = out[b];
    item.labels = narrow(r.labels);
    for (const ctc::Run& run : r.runs) {
      item.first_steps.push_back(static_cast<int32_t>(run.first_step));
      item.last_steps.push_back(static_cast<int32_t>(run.last_step));
      item.run_confidences.push_back(run.confidence);
    }
    item.step_probabilities = r.step_probabilities;
    item.confidence = r.confidence;
  }
  return out;
}

std::vector<std::vector<CtcHypothesis>> ctc_beam_search(const Tensor& scores, int kind, double blank, double beam_width,
                                                        double top_n) {
  const ctc::BeamOptions options{scores_kind(kind), integer(blank, "blank"), integer(beam_width, "beam width"),
                                 integer(top_n, "top N")};
  const std::vector<std::vector<ctc::Hypothesis>> results = ctc::beam_search(scores, options);
  std::vector<std::vector<CtcHypothesis>> out(results.size());
  for (size_t b = 0; b < results.size(); ++b) {
    for (const ctc::Hypothesis& h : results[b]) out[b].push_back({narrow(h.labels), h.log_probability, h.confidence});
  }
  return out;
}

}  // namespace onemodel::binding
