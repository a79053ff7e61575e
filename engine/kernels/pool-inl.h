// Per-target code for kernels/pool.h. Included once per target by pool.cc through hwy/foreach_target.h.
#if defined(ONEMODEL_KERNELS_POOL_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEMODEL_KERNELS_POOL_INL_H_
#undef ONEMODEL_KERNELS_POOL_INL_H_
#else
#define ONEMODEL_KERNELS_POOL_INL_H_
#endif

#include <cstdint>

#include "hwy/highway.h"
#include "kernels/pool.h"

HWY_BEFORE_NAMESPACE();
namespace onemodel::kern::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

inline void MaxTaps(const float* row, int64_t stride, int64_t taps, int64_t dilation, float* best, int64_t count) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  auto update = [](float v, float b) { return (v > b || b != b) ? v : b; };
  for (int64_t t = 0; t < taps; ++t) {
    const float* tap = row + t * dilation;
    int64_t q = 0;
    if (stride == 1) {
      for (; q + lanes <= count; q += lanes) {
        const auto v = hn::LoadU(d, tap + q), b = hn::LoadU(d, best + q);
        hn::StoreU(hn::IfThenElse(hn::Or(hn::Gt(v, b), hn::IsNaN(b)), v, b), d, best + q);
      }
    } else if (stride == 2) {
      // Pairs (tap[2q], tap[2q + 1]) split into lanes; the odd element of the last pair is read too, so the
      // vector loop stops one output early.
      for (; q + lanes < count; q += lanes) {
        hn::Vec<decltype(d)> v, odd;
        hn::LoadInterleaved2(d, tap + 2 * q, v, odd);
        const auto b = hn::LoadU(d, best + q);
        hn::StoreU(hn::IfThenElse(hn::Or(hn::Gt(v, b), hn::IsNaN(b)), v, b), d, best + q);
      }
    }
    for (; q < count; ++q) best[q] = update(tap[q * stride], best[q]);
  }
}

inline constexpr PoolFns kPoolFns{&MaxTaps};

}  // namespace onemodel::kern::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif
