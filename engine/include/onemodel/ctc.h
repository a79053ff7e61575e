// CTC decoding (ctc.md): greedy best-path decoding and prefix beam search over the per-step class scores of a
// recogniser. Not an ONNX operator but a helper for consumers of such models; pure functions that give the
// same bits on every target (native and wasm). Bad arguments throw onemodel::Error (ctc.md section 1).
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "onemodel/tensor.h"

namespace onemodel::ctc {

// What the scores are (ctc.md section 1): logits, normalised per step by the decoder, or natural-log
// probabilities that already normalise.
enum class Scores { Logits, LogProbabilities };

inline constexpr int64_t kMaxBeamWidth = 4096;
// The most prefixes a beam search may create: steps * beam_width * (classes - 1) + 1 (ctc.md section 3).
inline constexpr int64_t kMaxPrefixes = int64_t{1} << 24;

struct GreedyOptions {
  Scores scores = Scores::Logits;
  int64_t blank = 0;
};

// One emitted label of the greedy path: its class, the steps it spans and its best step probability.
struct Run {
  int64_t label = 0;
  int64_t first_step = 0;
  int64_t last_step = 0;
  float confidence = 0;
};

struct GreedyResult {
  std::vector<int64_t> labels;            // the classes of `runs`, in order
  std::vector<Run> runs;                  // one per emitted label
  std::vector<float> step_probabilities;  // p(t) of each step's chosen class, the blank's included
  float confidence = 0;                   // mean run confidence; 0 when nothing is emitted
};

struct BeamOptions {
  Scores scores = Scores::Logits;
  int64_t blank = 0;
  int64_t beam_width = 10;  // 1..kMaxBeamWidth
  int64_t top_n = 1;        // 1..beam_width
};

struct Hypothesis {
  std::vector<int64_t> labels;
  double log_probability = 0;  // over all alignments of the labels
  double confidence = 0;       // exp(log_probability / labels.size()); 0 for no labels
};

// One sequence: `scores` holds steps * classes floats, row-major.
GreedyResult greedy_decode(std::span<const float> scores, int64_t steps, int64_t classes,
                           const GreedyOptions& options = {});
// A float32 tensor [steps, classes] (one result) or [batch, steps, classes] (one per item).
std::vector<GreedyResult> greedy_decode(const Tensor& scores, const GreedyOptions& options = {});

// The best min(top_n, prefixes) hypotheses, best first.
std::vector<Hypothesis> beam_search(std::span<const float> scores, int64_t steps, int64_t classes,
                                    const BeamOptions& options = {});
std::vector<std::vector<Hypothesis>> beam_search(const Tensor& scores, const BeamOptions& options = {});

}  // namespace onemodel::ctc
