// Dispatch for kernels/bias.h: the Highway per-target pass, then the one entry point.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/bias.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/bias-inl.h"

#if HWY_ONCE
#include "kernels/bias.h"
#include "kernels/per_target.h"

namespace onemodel::kern {

void add_channel_bias(Isa isa, bool exact, float* y, const float* bias, int64_t channels, int64_t spatial) {
  ONEMODEL_PER_TARGET(kBiasFns, isa)->add_channel_bias(exact, y, bias, channels, spatial);
}

void scale_rows(Isa isa, bool exact, bool scale_first, const float* scale, const float* x, int64_t rows, int64_t size,
                float* y) {
  ONEMODEL_PER_TARGET(kBiasFns, isa)->scale_rows(exact, scale_first, scale, x, rows, size, y);
}

}  // namespace onemodel::kern
#endif
