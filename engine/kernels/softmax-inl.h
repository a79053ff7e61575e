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

// The greater lane of each pair, NaN in v ignored (m holds no NaN).
template <class D>
HWY_INLINE hn::Vec<D> MaxKeep(hn::Vec<D> v, hn::Vec<D> m) {
  return hn::IfThenElse(hn::Gt(v, m), v, m);
}

// max over x[0..n) ignoring NaN; -inf for an empty or all-NaN row. Two running maxima: one waited on the
// compare and blend of the previous vector (max is exact, so the split does not change the value).
HWY_INLINE float RowMax(const float* x, int64_t n) {
  const SoftmaxTag d;
  const size_t lanes = hn::Lanes(d);
  const auto ninf = hn::Set(d, -__builtin_inff());
  auto m0 = ninf, m1 = ninf;
  size_t j = 0;
  const size_t un = static_cast<size_t>(n);
  for (; j + 2 * lanes <= un; j += 2 * lanes) {
    m0 = MaxKeep<SoftmaxTag>(hn::LoadU(d, x + j), m0);
    m1 = MaxKeep<SoftmaxTag>(hn::LoadU(d, x + j + lanes), m1);
  }
  for (; j + lanes <= un; j += lanes) m0 = MaxKeep<SoftmaxTag>(hn::LoadU(d, x + j), m0);
  if (j < un) {
    const size_t rest = un - j;
    m1 = MaxKeep<SoftmaxTag>(hn::IfThenElse(hn::FirstN(d, rest), LoadTail(d, x + j, rest), ninf), m1);
  }
  return MaxLanesNoNaN(d, MaxKeep<SoftmaxTag>(m1, m0));
}

// One pass over the row: d[j] = x[j] - m; y[j] = d (kLog) or ExpNonPositive(d) (softmax); the exponentials
// go into the 16 partials. Returns the canonical sum l. The partials stay in registers over the whole
// 16-element groups (a store and reload of them per vector lengthened the chain); a ragged end goes through
// memory as before, the same partial for each term either way.
template <bool kExact, bool kLog>
HWY_INLINE float ExpAndSum(const float* x, float* y, int64_t n, float m) {
  const SoftmaxTag d;
  constexpr size_t kLanes = hn::MaxLanes(d);
  constexpr size_t kGroup = 16 / kLanes;
  const auto mv = hn::Set(d, m);
  auto exp_of = [&](hn::Vec<SoftmaxTag> diff) {
    if constexpr (kExact || kLog) {
      return ExpNonPositive<kExact>(d, diff);
    } else {
      return ExpNonPositiveFast(d, diff);
    }
  };
  hn::Vec<SoftmaxTag> acc[kGroup];
  for (size_t k = 0; k < kGroup; ++k) acc[k] = hn::Zero(d);
  const size_t un = static_cast<size_t>(n);
  size_t j = 0;
  for (; j + 16 <= un; j += 16) {
    for (size_t k = 0; k < kGroup; ++k) {
      const auto diff = hn::Sub(hn::LoadU(d, x + j + k * kLanes), mv);
      const auto e = exp_of(diff);
      hn::StoreU(kLog ? diff : e, d, y + j + k * kLanes);
      acc[k] = hn::Add(acc[k], e);
    }
  }
  HWY_ALIGN float partials[16];
  for (size_t k = 0; k < kGroup; ++k) hn::Store(acc[k], d, partials + k * kLanes);
  for (size_t k = 0; j + k * kLanes < un; ++k) {
    const size_t base = j + k * kLanes;
    const size_t rest = std::min(kLanes, un - base);
    const auto v = rest == kLanes ? hn::LoadU(d, x + base) : LoadTail(d, x + base, rest);
    const auto diff = hn::Sub(v, mv);
    auto e = exp_of(diff);
    if (rest < kLanes) e = hn::IfThenElseZero(hn::FirstN(d, rest), e);  // padding adds +0
    const auto out = kLog ? diff : e;
    if (rest == kLanes) {
      hn::StoreU(out, d, y + base);
    } else {
      StoreTail(out, d, y + base, rest);
    }
    AddToPartials(d, partials, k, e);
  }
  return Sum16Tree(partials);
}

// The softmax of a row whose maximum (ignoring NaN) is m.
template <bool kExact>
HWY_INLINE void SoftmaxRowFrom(const float* x, float* y, int64_t n, float m) {
  const SoftmaxTag d;
  const size_t lanes = hn::Lanes(d);
  const float l = ExpAndSum<kExact, false>(x, y, n, m);
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
HWY_INLINE void SoftmaxRow(const float* x, float* y, int64_t n) {
  SoftmaxRowFrom<kExact>(x, y, n, RowMax(x, n));
}

// One score row of attention in place: s[j] = s[j] * scale (s[j] / scale when `div`), + mask[j * mask_col]
// (mask_col 0 or 1; no mask when null), each step rounded (fast: one multiply-add), stored with the row's
// maximum found on the way; then the softmax of the row. The separate scale and mask loops this replaces
// were a third of the fused attention's time beside the softmax (MiniLM, batch 1).
template <bool kExact>
HWY_INLINE void ScoreSoftmaxRow(float* s, int64_t n, float scale, bool div, const float* mask, int64_t mask_col) {
  const SoftmaxTag d;
  const size_t lanes = hn::Lanes(d);
  const auto sc = hn::Set(d, scale);
  const auto ninf = hn::Set(d, -__builtin_inff());
  const auto mask0 = hn::Set(d, mask ? mask[0] : 0.0f);
  auto score = [&](hn::Vec<SoftmaxTag> v, size_t j, size_t count) {
    if (!mask) return kExact && div ? hn::Div(v, sc) : hn::Mul(v, sc);
    const auto mk = mask_col == 0 ? mask0 : count == lanes ? hn::LoadU(d, mask + j) : LoadTail(d, mask + j, count);
    if constexpr (kExact) {
      return hn::Add(div ? hn::Div(v, sc) : hn::Mul(v, sc), mk);
    } else {
      return hn::MulAdd(v, sc, mk);
    }
  };
  auto m0 = ninf, m1 = ninf;
  size_t j = 0;
  const size_t un = static_cast<size_t>(n);
  for (; j + 2 * lanes <= un; j += 2 * lanes) {
    const auto v0 = score(hn::LoadU(d, s + j), j, lanes);
    const auto v1 = score(hn::LoadU(d, s + j + lanes), j + lanes, lanes);
    hn::StoreU(v0, d, s + j);
    hn::StoreU(v1, d, s + j + lanes);
    m0 = MaxKeep<SoftmaxTag>(v0, m0);
    m1 = MaxKeep<SoftmaxTag>(v1, m1);
  }
  for (; j < un; j += lanes) {
    const size_t rest = std::min(lanes, un - j);
    const auto v = score(rest == lanes ? hn::LoadU(d, s + j) : LoadTail(d, s + j, rest), j, rest);
    if (rest == lanes) {
      hn::StoreU(v, d, s + j);
      m0 = MaxKeep<SoftmaxTag>(v, m0);
    } else {
      StoreTail(v, d, s + j, rest);
      m1 = MaxKeep<SoftmaxTag>(hn::IfThenElse(hn::FirstN(d, rest), v, ninf), m1);
    }
  }
  SoftmaxRowFrom<kExact>(s, s, n, MaxLanesNoNaN(d, MaxKeep<SoftmaxTag>(m1, m0)));
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

inline void ScoreSoftmaxRows(bool exact, float* s, int64_t rows, int64_t n, const ScoreSoftmax& a) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* mask = a.mask ? a.mask + r * a.mask_row : nullptr;
    if (exact) {
      ScoreSoftmaxRow<true>(s + r * n, n, a.scale, a.div, mask, a.mask_col);
    } else {
      ScoreSoftmaxRow<false>(s + r * n, n, a.div ? 1.0f / a.scale : a.scale, false, mask, a.mask_col);
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

inline constexpr SoftmaxFns kSoftmaxFns{&SoftmaxRows, &LogSoftmaxRows, &ScoreSoftmaxRows, &Sum16};

}  // namespace onemodel::kern::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif
