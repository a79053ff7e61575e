// Per-target code for kernels/quantize.h. Included once per target by quantize.cc through hwy/foreach_target.h.
#if defined(ONEMODEL_KERNELS_QUANTIZE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEMODEL_KERNELS_QUANTIZE_INL_H_
#undef ONEMODEL_KERNELS_QUANTIZE_INL_H_
#else
#define ONEMODEL_KERNELS_QUANTIZE_INL_H_
#endif

#include "hwy/highway.h"
#include "kernels/quantize.h"
#include "kernels/simd_common-inl.h"

HWY_BEFORE_NAMESPACE();
namespace onemodel::kern::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

inline void QuantizeU8(const float* x, int64_t n, float scale, int32_t zero_point, uint8_t* y) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  const hn::Rebind<uint8_t, decltype(d)> du8;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto vs = hn::Set(d, scale), zp = hn::Set(d, static_cast<float>(zero_point));
  const auto lo = hn::Zero(d), hi = hn::Set(d, 255.0f);
  auto one = [&](hn::Vec<decltype(d)> v) {
    const auto r = hn::Add(hn::Round(hn::Div(v, vs)), zp);
    // NaN fails both compares and would pass through the clamp: it gives the lower bound.
    const auto c = hn::IfThenElse(hn::IsNaN(r), lo, hn::Min(hn::Max(r, lo), hi));
    return hn::DemoteTo(du8, hn::ConvertTo(di, c));
  };
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(one(hn::LoadU(d, x + i)), du8, y + i);
  if (i < n) {
    const auto rest = static_cast<size_t>(n - i);
    HWY_ALIGN uint8_t buf[hn::MaxLanes(d)];
    hn::Store(one(LoadTail(d, x + i, rest)), du8, buf);
    for (size_t k = 0; k < rest; ++k) y[i + static_cast<int64_t>(k)] = buf[k];
  }
}

inline void MinMax(const float* x, int64_t n, float& lo, float& hi) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  auto l = hn::Set(d, lo), h = hn::Set(d, hi);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto v = hn::LoadU(d, x + i);
    l = hn::IfThenElse(hn::Lt(v, l), v, l);  // NaN compares false: it never replaces a bound
    h = hn::IfThenElse(hn::Gt(v, h), v, h);
  }
  HWY_ALIGN float bl[hn::MaxLanes(d)], bh[hn::MaxLanes(d)];
  hn::Store(l, d, bl);
  hn::Store(h, d, bh);
  for (size_t k = 0; k < hn::Lanes(d); ++k) {
    lo = bl[k] < lo ? bl[k] : lo;
    hi = bh[k] > hi ? bh[k] : hi;
  }
  for (; i < n; ++i) {
    lo = x[i] < lo ? x[i] : lo;
    hi = x[i] > hi ? x[i] : hi;
  }
}

inline constexpr QuantizeFns kQuantizeFns{&QuantizeU8, &MinMax};

}  // namespace onemodel::kern::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif
