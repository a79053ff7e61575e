// Per-target code for kernels/norm.h, included once per target by norm.cc through hwy/foreach_target.h.
// Measured on MiniLM (Zen 4, 1 thread): the scalar loops these replace took 0.075 ms per 128 x 384
// LayerNormalization, ONNX Runtime 0.035 ms.
#if defined(ONEMODEL_KERNELS_NORM_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEMODEL_KERNELS_NORM_INL_H_
#undef ONEMODEL_KERNELS_NORM_INL_H_
#else
#define ONEMODEL_KERNELS_NORM_INL_H_
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "hwy/highway.h"
#include "kernels/norm.h"
#include "kernels/simd_common-inl.h"
#include "kernels/vmath-inl.h"

HWY_BEFORE_NAMESPACE();
namespace onemodel::kern::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// At most 16 lanes, so the lane count divides the 16 partials.
using NormTag = hn::CappedTag<float, 16>;

// Sum16 of term(x[j]) over j < n (ops-norms.md "The canonical sum"). Vector k of a 16-element block holds
// partials k*N .. k*N+N-1 in registers; a tail's missing lanes add +0, which leaves a partial unchanged (a
// partial that starts at +0 is never -0).
template <class Term>
HWY_INLINE float CanonicalSum(const float* x, int64_t n, Term term) {
  const NormTag d;
  using V = hn::Vec<NormTag>;
  constexpr size_t N = hn::MaxLanes(d);
  constexpr size_t P = 16 / N;
  V acc[P];
  for (size_t k = 0; k < P; ++k) acc[k] = hn::Zero(d);
  const size_t un = static_cast<size_t>(n);
  size_t j = 0;
  for (; j + 16 <= un; j += 16)
    for (size_t k = 0; k < P; ++k) acc[k] = hn::Add(acc[k], term(hn::LoadU(d, x + j + k * N)));
  for (size_t k = 0; k < P && j + k * N < un; ++k) {
    const size_t rest = std::min(N, un - j - k * N);
    const V t = term(rest == N ? hn::LoadU(d, x + j + k * N) : LoadTail(d, x + j + k * N, rest));
    acc[k] = hn::Add(acc[k], hn::IfThenElseZero(hn::FirstN(d, rest), t));
  }
  HWY_ALIGN float partials[16];
  for (size_t k = 0; k < P; ++k) hn::Store(acc[k], d, partials + k * N);
  return Sum16Tree(partials);
}

inline NormStats NormRowStats(const float* x, int64_t cols, float epsilon, bool rms) {
  const NormTag d;
  const float n = static_cast<float>(cols);
  float mean = 0.0f;
  if (!rms) mean = CanonicalSum(x, cols, [](hn::Vec<NormTag> v) HWY_ATTR { return v; }) / n;
  const auto m = hn::Set(d, mean);
  const float v = CanonicalSum(x, cols,
                               [m](hn::Vec<NormTag> xv) HWY_ATTR {
                                 const auto dv = hn::Sub(xv, m);
                                 return hn::Mul(dv, dv);
                               }) /
                  n;
  return {mean, 1.0f / std::sqrt(v + epsilon)};
}

// y = f(x, j) over the row, f given the element vector and its offset; the tail through a stack buffer.
template <class F>
HWY_INLINE void MapRow(const float* x, float* y, int64_t cols, F f) {
  const NormTag d;
  const int64_t N = static_cast<int64_t>(hn::Lanes(d));
  int64_t j = 0;
  for (; j + N <= cols; j += N) hn::StoreU(CanonicalNaN(d, f(hn::LoadU(d, x + j), j, N)), d, y + j);
  if (j < cols) {
    const size_t rest = static_cast<size_t>(cols - j);
    StoreTail(CanonicalNaN(d, f(LoadTail(d, x + j, rest), j, static_cast<int64_t>(rest))), d, y + j, rest);
  }
}

inline void NormRowApply(const float* x, float* y, int64_t cols, NormStats st, const float* scale, const float* bias) {
  const NormTag d;
  const auto m = hn::Set(d, st.mean), inv = hn::Set(d, st.inv);
  // Loads of scale and bias for `len` elements at j (a tail reads only its own elements).
  auto at = [d](const float* p, int64_t j, int64_t len) HWY_ATTR {
    return len == static_cast<int64_t>(hn::Lanes(d)) ? hn::LoadU(d, p + j)
                                                     : LoadTail(d, p + j, static_cast<size_t>(len));
  };
  if (bias) {
    MapRow(x, y, cols, [&](hn::Vec<NormTag> v, int64_t j, int64_t len) HWY_ATTR {
      return hn::Add(hn::Mul(hn::Mul(hn::Sub(v, m), inv), at(scale, j, len)), at(bias, j, len));
    });
  } else {
    MapRow(x, y, cols, [&](hn::Vec<NormTag> v, int64_t j, int64_t len) HWY_ATTR {
      return hn::Mul(hn::Mul(hn::Sub(v, m), inv), at(scale, j, len));
    });
  }
}

inline void NormRowApplyUniform(const float* x, float* y, int64_t cols, NormStats st, float scale, float bias) {
  const NormTag d;
  const auto m = hn::Set(d, st.mean), inv = hn::Set(d, st.inv), s = hn::Set(d, scale), b = hn::Set(d, bias);
  MapRow(x, y, cols, [&](hn::Vec<NormTag> v, int64_t, int64_t) HWY_ATTR {
    return hn::Add(hn::Mul(hn::Mul(hn::Sub(v, m), inv), s), b);
  });
}

inline constexpr NormFns kNormFns{&NormRowStats, &NormRowApply, &NormRowApplyUniform};

}  // namespace onemodel::kern::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif
