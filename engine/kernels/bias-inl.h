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

// y[r * size + j] = op(x[r * size + j], v[r]), op(v[r], x[...]) when kValueFirst. Rows of one value (a 1 x 1
// convolution output's bias) are one run: a masked tail per row was most of a squeeze-and-excitation layer's bias.
template <bool kValueFirst, class Op>
HWY_INLINE void RowOp(bool exact, const float* x, const float* v, int64_t rows, int64_t size, float* y, Op op) {
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  auto apply = [&](V a, V b) {
    V r = kValueFirst ? op(b, a) : op(a, b);
    return exact ? CanonicalNaN(d, r) : r;
  };
  if (size == 1) {
    int64_t i = 0;
    for (; i + lanes <= rows; i += lanes) hn::StoreU(apply(hn::LoadU(d, x + i), hn::LoadU(d, v + i)), d, y + i);
    if (i < rows) {
      const size_t rest = static_cast<size_t>(rows - i);
      StoreTail(apply(LoadTail(d, x + i, rest), LoadTail(d, v + i, rest)), d, y + i, rest);
    }
    return;
  }
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * size;
    float* out = y + r * size;
    const V b = hn::Set(d, v[r]);
    int64_t s = 0;
    for (; s + lanes <= size; s += lanes) hn::StoreU(apply(hn::LoadU(d, in + s), b), d, out + s);
    if (s < size) {
      const size_t rest = static_cast<size_t>(size - s);
      StoreTail(apply(LoadTail(d, in + s, rest), b), d, out + s, rest);
    }
  }
}

inline void AddChannelBias(bool exact, float* y, const float* bias, int64_t channels, int64_t spatial) {
  RowOp<false>(exact, y, bias, channels, spatial, y, [](auto a, auto b) { return hn::Add(a, b); });
}

inline void ScaleRows(bool exact, bool scale_first, const float* scale, const float* x, int64_t rows, int64_t size,
                      float* y) {
  const auto mul = [](auto a, auto b) { return hn::Mul(a, b); };
  if (scale_first) {
    RowOp<true>(exact, x, scale, rows, size, y, mul);
  } else {
    RowOp<false>(exact, x, scale, rows, size, y, mul);
  }
}

inline constexpr BiasFns kBiasFns{&AddChannelBias, &ScaleRows};

}  // namespace onemodel::kern::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif
