// Per-target code for kernels/softmax.h.
#if defined(ONEMODEL_KERNELS_SOFTMAX_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEMODEL_KERNELS_SOFTMAX_INL_H_
#undef ONEMODEL_KERNELS_SOFTMAX_INL_H_
#else
#define ONEMODEL_KERNELS_SOFTMAX_INL_H_
#endif

#include <algorithm>

#include "hwy/highway.h"
#include "kernels/exact_math.h"
#include "kernels/simd_common-inl.h"
#include "kernels/softmax.h"
#include "kernels/vmath-inl.h"

HWY_BEFORE_NAMESPACE();
namespace onemodel::kern::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// At most 16 lanes, so the lane count divides the 16 partials.
using SoftmaxTag = hn::CappedTag<float, 16>;

// max over x[0..n) ignoring NaN; -inf for an empty or all-NaN row.
HWY_INLINE float RowMax(const float* x, int64_t n) {
  const SoftmaxTag d;
  const size_t lanes = hn::Lanes(d);
  const auto ninf = hn::Set(d, -__builtin_inff());
  auto m = ninf;
  size_t j = 0;
  const size_t un = static_cast<size_t>(n);
  for (; j + lanes <= un; j += lanes) {
    const auto v = hn::LoadU(d, x + j);
    m = hn::IfThenElse(hn::Gt(v, m), v, m);
  }
  if (j < un) {
    const size_t rest = un - j;
    const auto v = hn::IfThenElse(hn::FirstN(d, rest), LoadTail(d, x + j, rest), ninf);
    m = hn::IfThenElse(hn::Gt(v, m), v, m);
  }
  return MaxLanesIgnoringNaN(d, m);
}

// One pass over the row: d[j] = x[j] - m; y[j] = d (kLog) or ExpNonPositive(d) (softmax); the exponentials
// go into the 16 partials. Returns the canonical sum l.
template <bool kExact, bool kLog>
HWY_INLINE float ExpAndSum(const float* x, float* y, int64_t n, float m) {
  const SoftmaxTag d;
  const size_t lanes = hn::Lanes(d);
  const auto mv = hn::Set(d, m);
  HWY_ALIGN float partials[16] = {};
  const size_t un = static_cast<size_t>(n);
  for (size_t j = 0; j < un; j += 16) {
    for (size_t k = 0; k * lanes < 16; ++k) {
      const size_t base = j + k * lanes;
      if (base >= un) break;
      const size_t rest = std::min(lanes, un - base);
      const auto v = rest == lanes ? hn::LoadU(d, x + base) : LoadTail(d, x + base, rest);
      const auto diff = hn::Sub(v, mv);
      auto e = ExpNonPositive<kExact>(d, diff);
      if (rest < lanes) e = hn::IfThenElseZero(hn::FirstN(d, rest), e);  // padding adds +0
      const auto out = kLog ? diff : e;
      if (rest == lanes) {
        hn::StoreU(out, d, y + base);
      } else {
        StoreTail(out, d, y + base, rest);
      }
      AddToPartials(d, partials, k, e);
    }
  }
  return Sum16Tree(partials);
}

template <bool kExact>
HWY_INLINE void SoftmaxRow(const float* x, float* y, int64_t n) {
  const SoftmaxTag d;
  const size_t lanes = hn::Lanes(d);
  const float l = ExpAndSum<kExact, false>(x, y, n, RowMax(x, n));
  const auto lv = hn::Set(d, l);
  const auto inv = hn::Set(d, 1.0f / l);
  const size_t un = static_cast<size_t>(n);
  for (size_t j = 0; j < un; j += lanes) {
    const size_t rest = std::min(lanes, un - j);
    const auto e = rest == lanes ? hn::LoadU(d, y + j) : LoadTail(d, y + j, rest);
    const auto r = CanonicalNaN(d, kExact ? hn::Div(e, lv) : hn::Mul(e, inv));
    if (rest == lanes) {
      hn::StoreU(r, d, y + j);
    } else {
      StoreTail(r, d, y + j, rest);
    }
  }
}

template <bool kExact>
HWY_INLINE void LogSoftmaxRow(const float* x, float* y, int64_t n) {
  const SoftmaxTag d;
  const size_t lanes = hn::Lanes(d);
  const float l = ExpAndSum<kExact, true>(x, y, n, RowMax(x, n));
  const auto ll = hn::Set(d, kern::exact_log(l));  // the library's log in both modes (ops-norms.md)
  const size_t un = static_cast<size_t>(n);
  for (size_t j = 0; j < un; j += lanes) {
    const size_t rest = std::min(lanes, un - j);
    const auto v = rest == lanes ? hn::LoadU(d, y + j) : LoadTail(d, y + j, rest);
    const auto r = CanonicalNaN(d, hn::Sub(v, ll));
    if (rest == lanes) {
      hn::StoreU(r, d, y + j);
    } else {
      StoreTail(r, d, y + j, rest);
    }
  }
}

inline void SoftmaxRows(bool exact, const float* x, float* y, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r) {
    if (exact) {
      SoftmaxRow<true>(x + r * n, y + r * n, n);
    } else {
      SoftmaxRow<false>(x + r * n, y + r * n, n);
    }
  }
}

inline void LogSoftmaxRows(bool exact, const float* x, float* y, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r) {
    if (exact) {
      LogSoftmaxRow<true>(x + r * n, y + r * n, n);
    } else {
      LogSoftmaxRow<false>(x + r * n, y + r * n, n);
    }
  }
}

inline float Sum16(const float* x, int64_t n) {
  const SoftmaxTag d;
  const size_t lanes = hn::Lanes(d);
  HWY_ALIGN float partials[16] = {};
  const size_t un = static_cast<size_t>(n);
  for (size_t j = 0; j < un; j += 16) {
    for (size_t k = 0; k * lanes < 16; ++k) {
      const size_t base = j + k * lanes;
      if (base >= un) break;
      const size_t rest = std::min(lanes, un - base);
      AddToPartials(d, partials, k, rest == lanes ? hn::LoadU(d, x + base) : LoadTail(d, x + base, rest));
    }
  }
  return Sum16Tree(partials);
}

inline constexpr SoftmaxFns kSoftmaxFns{&SoftmaxRows, &LogSoftmaxRows, &Sum16};

}  // namespace onemodel::kern::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif
