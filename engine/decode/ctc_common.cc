#include "decode/ctc_common.h"

namespace onemodel::ctc::detail {

void check_scores(std::string_view what, std::span<const float> scores, int64_t steps, int64_t classes, int64_t blank) {
  const std::string name(what);
  if (steps < 0 || classes < 0) {
    throw Error(ErrorKind::InvalidInput, name + ": steps " + std::to_string(steps) + " and classes " +
                                             std::to_string(classes) + " must not be negative");
  }
  // ctc.md section 1: the blank is one of the classes, so there is at least one class.
  if (blank < 0 || blank >= classes) {
    throw Error(ErrorKind::InvalidArgument, name + ": blank " + std::to_string(blank) +
                                                " is not a class index in [0, " + std::to_string(classes) + ")");
  }
  const bool fits = steps == 0 || classes <= kMaxElements / steps;
  if (!fits || static_cast<uint64_t>(steps * classes) != scores.size()) {
    throw Error(ErrorKind::InvalidInput, name + ": " + std::to_string(scores.size()) + " scores for " +
                                             std::to_string(steps) + " steps of " + std::to_string(classes) +
                                             " classes");
  }
}

std::span<const float> Batch::item(int64_t b) const {
  const size_t n = static_cast<size_t>(steps * classes);
  return data.data<float>().subspan(static_cast<size_t>(b) * n, n);
}

Batch split_batch(std::string_view what, const Tensor& scores) {
  const std::string name(what);
  if (scores.empty() || scores.dtype() != DType::F32) {
    throw Error(ErrorKind::InvalidInput, name + ": scores must be a float32 tensor");
  }
  const int rank = scores.rank();
  if (rank != 2 && rank != 3) {
    throw Error(ErrorKind::InvalidInput, name + ": scores " + scores.shape().to_string() +
                                             " must be [steps, classes] or [batch, steps, classes]");
  }
  Batch out;
  out.data = scores.contiguous();
  out.batch = rank == 3 ? scores.shape()[0] : 1;
  out.steps = scores.shape()[rank - 2];
  out.classes = scores.shape()[rank - 1];
  return out;
}

std::string element_name(int64_t b, int64_t t, int64_t j) {
  const std::string tail = std::to_string(t) + ", " + std::to_string(j) + "]";
  return b < 0 ? "scores[" + tail : "scores[" + std::to_string(b) + ", " + tail;
}

}  // namespace onemodel::ctc::detail
