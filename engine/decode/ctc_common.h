// What greedy decoding and beam search share: the argument checks of ctc.md section 1 and the split of a
// rank-2 or rank-3 tensor into per-item spans.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "onemodel/ctc.h"
#include "onemodel/tensor.h"

namespace onemodel::ctc::detail {

// Error(InvalidArgument) unless 0 <= blank < classes; Error(InvalidInput) for negative extents or a buffer
// of a size other than steps * classes. `what` names the entry point in messages.
void check_scores(std::string_view what, std::span<const float> scores, int64_t steps, int64_t classes, int64_t blank);

// The items of a float32 tensor [steps, classes] or [batch, steps, classes] (Error(InvalidInput) otherwise).
struct Batch {
  Tensor data;  // contiguous
  int64_t batch = 1, steps = 0, classes = 0;
  std::span<const float> item(int64_t b) const;
};
Batch split_batch(std::string_view what, const Tensor& scores);

// "scores[b, t, j]" (or "scores[t, j]" for an unbatched input, b < 0) for messages.
std::string element_name(int64_t b, int64_t t, int64_t j);

}  // namespace onemodel::ctc::detail
