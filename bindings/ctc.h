// CTC decoding across the two JavaScript bindings (docs/ctc.md, bindings/README.md): the numbers TypeScript
// sends, checked, and the results as flat arrays each binding turns into typed arrays its own way. Like
// core.h, nothing here touches a JS engine, so the bindings cannot disagree.
#pragma once
#include <cstdint>
#include <vector>

#include "onemodel/ctc.h"
#include "onemodel/tensor.h"

namespace onemodel::binding {

// The scores tensor crosses as [batch, steps, classes] float32 (TypeScript adds the batch of 1 for a
// [steps, classes] input), built by the binding's usual tensor copy with this element type code.
inline constexpr int kCtcScoresCode = static_cast<int>(DType::F32);

// One batch item of greedy decoding: per run its label, first and last step and confidence.
struct CtcGreedyItem {
  std::vector<int32_t> labels, first_steps, last_steps;
  std::vector<float> run_confidences;
  std::vector<float> step_probabilities;
  float confidence = 0;
};
struct CtcHypothesis {
  std::vector<int32_t> labels;
  double log_probability = 0, confidence = 0;
};

// `kind` 0 logits / 1 log-probabilities; `blank`, `beam_width`, `top_n` are JS numbers. Error(InvalidArgument)
// for a code out of range or a number that is not an integer; the decoder checks everything else.
std::vector<CtcGreedyItem> ctc_greedy(const Tensor& scores, int kind, double blank);
std::vector<std::vector<CtcHypothesis>> ctc_beam_search(const Tensor& scores, int kind, double blank, double beam_width,
                                                        double top_n);

}  // namespace onemodel::binding
