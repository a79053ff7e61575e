// The Highway per-target pass of the depthwise kernel (depthwise-inl.h) and the per-Isa table; conv_driver.cc drives
// it (chunks, scratch, tap tables).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/depthwise.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/depthwise-inl.h"

#if HWY_ONCE
#include "kernels/conv.h"
#include "kernels/per_target.h"

namespace onemodel::kern {

const DepthwiseFns& depthwise_fns(Isa isa) { return *ONEMODEL_PER_TARGET(kDepthwiseFns, isa); }

}  // namespace onemodel::kern
#endif
