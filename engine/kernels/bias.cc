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

}  // namespace onemodel::kern
#endif
