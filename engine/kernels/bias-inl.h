// Per-target code for kernels/bias.h. Included once per target by bias.cc through hwy/foreach_target.h.
#if defined(ONEMODEL_KERNELS_BIAS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEMODEL_KERNELS_BIAS_INL_H_
#undef ONEMODEL_KERNELS_BIAS_INL_H_
#else
#define ONEMODEL_KERNELS_BIAS_INL_H_
#endif

#include "hwy/highway.h"
#include "kernels/bias.h"
#include "kernels/simd_common-inl.h"

HWY_BEFORE_NAMESPACE();
namespace onemodel::kern::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

inline void AddChannelBias(bool exact, float* y, const float* bias, int64_t channels, int64_t spatial) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t c = 0; c < channels; ++c) {
    float* row = y + c * spatial;
    const auto b = hn::Set(d, bias[c]);
    int64_t s = 0;
    for (; s + lanes <= spatial; s += lanes) {
      auto v = hn::Add(hn::LoadU(d, row + s), b);
      if (exact) v = CanonicalNaN(d, v);
      hn::StoreU(v, d, row + s);
    }
    if (s < spatial) {
      const size_t rest = static_cast<size_t>(spatial - s);
      auto v = hn::Add(LoadTail(d, row + s, rest), b);
      if (exact) v = CanonicalNaN(d, v);
      StoreTail(v, d, row + s, rest);
    }
  }
}

inline constexpr BiasFns kBiasFns{&AddChannelBias};

}  // namespace onemodel::kern::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif
