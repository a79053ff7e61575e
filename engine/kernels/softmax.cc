// Dispatch for kernels/softmax.h: the Highway per-target pass, then the entry points.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/softmax.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/softmax-inl.h"

#if HWY_ONCE
#include "kernels/per_target.h"
#include "kernels/softmax.h"

namespace onemodel::kern {

void softmax_rows(Isa isa, bool exact, const float* x, float* y, int64_t rows, int64_t n) {
  ONEMODEL_PER_TARGET(kSoftmaxFns, isa)->softmax_rows(exact, x, y, rows, n);
}
void log_softmax_rows(Isa isa, bool exact, const float* x, float* y, int64_t rows, int64_t n) {
  ONEMODEL_PER_TARGET(kSoftmaxFns, isa)->log_softmax_rows(exact, x, y, rows, n);
}
void score_softmax_rows(Isa isa, bool exact, float* s, int64_t rows, int64_t n, const ScoreSoftmax& a) {
  ONEMODEL_PER_TARGET(kSoftmaxFns, isa)->score_softmax_rows(exact, s, rows, n, a);
}
float sum16_f32(Isa isa, const float* x, int64_t n) { return ONEMODEL_PER_TARGET(kSoftmaxFns, isa)->sum16(x, n); }

}  // namespace onemodel::kern
#endif
