// Greedy (best-path) CTC decoding, ctc.md section 2.
#include <cstdint>
#include <span>
#include <vector>

#include "decode/ctc_common.h"
#include "kernels/exact_math.h"
#include "kernels/isa.h"
#include "kernels/softmax.h"
#include "onemodel/ctc.h"

namespace onemodel::ctc {
namespace {

// The chosen class of one step: the largest score, the lowest index on ties, NaN never chosen; class 0 when
// every score is NaN (ctc.md section 2, step 1).
int64_t best_class(const float* row, int64_t classes) {
  int64_t best = -1;
  for (int64_t j = 0; j < classes; ++j) {
    const float v = row[j];
    if (v != v) continue;
    if (best < 0 || v > row[best]) best = j;
  }
  return best < 0 ? 0 : best;
}

// NaN wins, so a run that saw a NaN probability reports NaN (ctc.md section 2).
float max_or_nan(float a, float b) {
  if (a != a) return a;
  return (b != b || b > a) ? b : a;
}

// `scratch` holds one row of `classes` floats (the softmax of the step, logits only).
GreedyResult decode_one(std::span<const float> scores, int64_t steps, int64_t classes, const GreedyOptions& options,
                        std::vector<float>& scratch) {
  GreedyResult out;
  out.step_probabilities.resize(static_cast<size_t>(steps));
  // The exact softmax gives the same bits on every target (kernels-attention.md section 1), so any target
  // serves; the best one is the fastest.
  const kern::Isa isa = kern::best_isa();
  int64_t previous = -1;
  for (int64_t t = 0; t < steps; ++t) {
    const float* row = scores.data() + t * classes;
    const int64_t best = best_class(row, classes);
    float p;
    if (options.scores == Scores::Logits) {
      kern::softmax_rows(isa, /*exact=*/true, row, scratch.data(), 1, classes);
      p = scratch[static_cast<size_t>(best)];
    } else {
      p = kern::exact_exp(row[best]);
      if (p > 1.0f) p = 1.0f;  // a log-probability above 0 is not one; the cap keeps p a probability
    }
    out.step_probabilities[static_cast<size_t>(t)] = p;
    if (best != options.blank) {
      if (best == previous) {
        Run& run = out.runs.back();
        run.last_step = t;
        run.confidence = max_or_nan(run.confidence, p);
      } else {
        out.runs.push_back(Run{best, t, t, p});
      }
    }
    previous = best;
  }
  // The mean of the run confidences: a float32 sum in run order, then one division (ctc.md section 2).
  float sum = 0.0f;
  out.labels.reserve(out.runs.size());
  for (const Run& run : out.runs) {
    sum += run.confidence;
    out.labels.push_back(run.label);
  }
  out.confidence = out.runs.empty() ? 0.0f : sum / static_cast<float>(out.runs.size());
  return out;
}

}  // namespace

GreedyResult greedy_decode(std::span<const float> scores, int64_t steps, int64_t classes,
                           const GreedyOptions& options) {
  detail::check_scores("ctc greedy_decode", scores, steps, classes, options.blank);
  std::vector<float> scratch(static_cast<size_t>(classes));
  return decode_one(scores, steps, classes, options, scratch);
}

std::vector<GreedyResult> greedy_decode(const Tensor& scores, const GreedyOptions& options) {
  const detail::Batch batch = detail::split_batch("ctc greedy_decode", scores);
  detail::check_scores("ctc greedy_decode", batch.batch > 0 ? batch.item(0) : std::span<const float>{},
                       batch.batch > 0 ? batch.steps : 0, batch.classes, options.blank);
  std::vector<float> scratch(static_cast<size_t>(batch.classes));
  std::vector<GreedyResult> out;
  out.reserve(static_cast<size_t>(batch.batch));
  for (int64_t b = 0; b < batch.batch; ++b)
    out.push_back(decode_one(batch.item(b), batch.steps, batch.classes, options, scratch));
  return out;
}

}  // namespace onemodel::ctc
