// Per-target code for kernels/attention.h: one work item = one (b, h, block of QB query rows).
//
// Per key block the keys are packed transposed (d x 64, zero padded) so a vector of scores holds different
// keys j, and the values are packed with rows padded to whole vectors so a vector of the accumulator holds
// different x; every sum of the definition is therefore one lane's sequential chain and the lane width cannot
// change a bit. The block sum uses the 16 partials of vmath-inl.h (at most 16 lanes: CappedTag).
#if defined(ONEMODEL_KERNELS_ATTENTION_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEMODEL_KERNELS_ATTENTION_INL_H_
#undef ONEMODEL_KERNELS_ATTENTION_INL_H_
#else
#define ONEMODEL_KERNELS_ATTENTION_INL_H_
#endif

#include <algorithm>
#include <vector>

#include "hwy/highway.h"
#include "kernels/attention.h"
#include "kernels/exact_math.h"
#include "kernels/simd_common-inl.h"
#include "kernels/vmath-inl.h"

HWY_BEFORE_NAMESPACE();
namespace onemodel::kern::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <bool kExact>
HWY_NOINLINE void AttentionItemT(const AttentionArgs& a, int64_t item) {
  const hn::CappedTag<float, 16> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  constexpr int64_t KB = kAttentionKB;
  const int64_t qblocks = (a.q_len + kAttentionQB - 1) / kAttentionQB;
  const int64_t bh = item / qblocks;
  const int64_t i0 = (item % qblocks) * kAttentionQB;
  const int64_t b = bh / a.heads, h = bh % a.heads;
  const int64_t rows = std::min(kAttentionQB, a.q_len - i0);
  const int64_t dim = a.d;
  const int64_t dpad = (dim + lanes - 1) / lanes * lanes;

  const float* q = a.q + b * a.q_sb + h * a.q_sh + i0 * a.q_sr;
  const float* k = a.k + b * a.k_sb + h * a.k_sh;
  const float* v = a.v + b * a.v_sb + h * a.v_sh;
  const float* mask = a.mask ? a.mask + b * a.m_sb + h * a.m_sh + i0 * a.m_si : nullptr;
  float* out = a.out + b * a.o_sb + h * a.o_sh + i0 * a.o_sr;

  // kt: d x KB transposed keys; vb: KB x dpad values; acc: rows x dpad; s, p: one row's scores and weights.
  std::vector<float> buf(static_cast<size_t>(dim * KB + KB * dpad + rows * dpad + 2 * KB + 2 * rows), 0.0f);
  float* kt = buf.data();
  float* vb = kt + dim * KB;
  float* acc = vb + KB * dpad;
  float* s = acc + rows * dpad;
  float* p = s + KB;
  float* m = p + KB;
  float* l = m + rows;
  for (int64_t r = 0; r < rows; ++r) m[r] = -__builtin_inff();  // l and acc start at +0

  const auto scale = hn::Set(d, a.scale);
  const auto ninf = hn::Set(d, -__builtin_inff());
  for (int64_t kb = 0; kb < a.k_len; kb += KB) {
    const int64_t n = std::min(KB, a.k_len - kb);
    // Pack the block; keys past n stay +0 from the last block or the start (only the last block is short).
    for (int64_t j = 0; j < n; ++j) {
      const float* krow = k + (kb + j) * a.k_sr;
      const float* vrow = v + (kb + j) * a.v_sr;
      for (int64_t x = 0; x < dim; ++x) kt[x * KB + j] = krow[x];
      std::copy(vrow, vrow + dim, vb + j * dpad);
    }
    for (int64_t j = n; j < KB; ++j)
      for (int64_t x = 0; x < dim; ++x) kt[x * KB + j] = 0.0f;
    const int64_t nv = (n + lanes - 1) / lanes * lanes;  // score lanes computed (the rest of s stays unused)
    for (int64_t r = 0; r < rows; ++r) {
      const float* qrow = q + r * a.q_sr;
      // 1. Scores: one accumulator per key, increasing index, then s = mask + dot * scale.
      for (int64_t jv = 0; jv < nv; jv += lanes) {
        auto dot = hn::Zero(d);
        for (int64_t x = 0; x < dim; ++x)
          dot = MulAddE<kExact>(hn::Set(d, qrow[x]), hn::LoadU(d, kt + x * KB + jv), dot);
        auto mv = hn::Zero(d);
        if (mask) {
          HWY_ALIGN float mb[16] = {};
          const float* mrow = mask + r * a.m_si + (kb + jv) * a.m_sj;
          for (int64_t t = 0; t < lanes && jv + t < n; ++t) mb[t] = mrow[t * a.m_sj];
          mv = hn::Load(d, mb);
        }
        hn::StoreU(MulAddE<kExact>(dot, scale, mv), d, s + jv);
      }
      // 2. Maximum over the block's keys, NaN ignored.
      auto bmv = ninf;
      for (int64_t jv = 0; jv < nv; jv += lanes) {
        auto sv = hn::LoadU(d, s + jv);
        if (jv + lanes > n) sv = hn::IfThenElse(hn::FirstN(d, static_cast<size_t>(n - jv)), sv, ninf);
        bmv = hn::IfThenElse(hn::Gt(sv, bmv), sv, bmv);
      }
      const float bm = MaxLanesIgnoringNaN(d, bmv);
      const float m_old = m[r];
      const float m_new = bm > m_old ? bm : m_old;
      const float shift = m_new == -__builtin_inff() ? 0.0f : m_new;
      // 3-4. Weights and their 16-partial block sum (padding keys weigh +0).
      const auto shiftv = hn::Set(d, shift);
      HWY_ALIGN float partials[16] = {};
      for (int64_t jv = 0; jv < nv; jv += lanes) {
        auto e = ExpNonPositive<kExact>(d, hn::Sub(hn::LoadU(d, s + jv), shiftv));
        if (jv + lanes > n) e = hn::IfThenElseZero(hn::FirstN(d, static_cast<size_t>(n - jv)), e);
        hn::StoreU(e, d, p + jv);
        AddToPartials(d, partials, static_cast<size_t>((jv % 16) / lanes), e);
      }
      const float bs = Sum16Tree(partials);
      // 5. Rescale the running sum and accumulator.
      float alpha;
      if (m_old == -__builtin_inff()) {
        alpha = 0.0f;
      } else if (m_old == shift) {
        alpha = 1.0f;
      } else {
        alpha = kExact ? kernels::exact_exp_nonpositive(m_old - shift) : kernels::fast_exp(m_old - shift);
      }
      l[r] = l[r] * alpha + bs;
      float* arow = acc + r * dpad;
      if (alpha != 1.0f) {
        const auto av = hn::Set(d, alpha);
        for (int64_t x = 0; x < dpad; x += lanes) hn::StoreU(hn::Mul(hn::LoadU(d, arow + x), av), d, arow + x);
      }
      m[r] = m_new;
      // 6. Values, keys in increasing order per accumulator lane.
      for (int64_t x = 0; x < dpad; x += lanes) {
        auto av = hn::LoadU(d, arow + x);
        for (int64_t j = 0; j < n; ++j) av = MulAddE<kExact>(hn::Set(d, p[j]), hn::LoadU(d, vb + j * dpad + x), av);
        hn::StoreU(av, d, arow + x);
      }
    }
  }
  // out = acc / l (fast: acc * (1/l)), NaN canonical.
  for (int64_t r = 0; r < rows; ++r) {
    const auto lv = hn::Set(d, l[r]);
    const auto inv = hn::Set(d, 1.0f / l[r]);
    const float* arow = acc + r * dpad;
    float* orow = out + r * a.o_sr;
    for (int64_t x = 0; x < dim; x += lanes) {
      const auto av = hn::LoadU(d, arow + x);
      const auto o = CanonicalNaN(d, kExact ? hn::Div(av, lv) : hn::Mul(av, inv));
      if (x + lanes <= dim) {
        hn::StoreU(o, d, orow + x);
      } else {
        StoreTail(o, d, orow + x, static_cast<size_t>(dim - x));
      }
    }
  }
}

inline void AttentionItem(bool exact, const AttentionArgs& a, int64_t item) {
  if (exact) {
    AttentionItemT<true>(a, item);
  } else {
    AttentionItemT<false>(a, item);
  }
}

inline constexpr AttentionFns kAttentionFns{&AttentionItem};

}  // namespace onemodel::kern::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif
