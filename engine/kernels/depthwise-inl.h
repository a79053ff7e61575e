// Per-target code of the depthwise convolution kernel (kernels-depthwise.md), included once per target by
// depthwise.cc through hwy/foreach_target.h. Lanes are neighbouring output columns of one row; every output is
// one accumulator from +0 over the taps in (kh, kw) order, so the lane count never changes a result.
#if defined(ONEMODEL_KERNELS_DEPTHWISE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEMODEL_KERNELS_DEPTHWISE_INL_H_
#undef ONEMODEL_KERNELS_DEPTHWISE_INL_H_
#else
#define ONEMODEL_KERNELS_DEPTHWISE_INL_H_
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "hwy/highway.h"
#include "kernels/conv.h"
#include "kernels/simd_common-inl.h"

HWY_BEFORE_NAMESPACE();
namespace onemodel::kern::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The phase planes of one input plane. Phase p holds the zero-padded plane's columns p, p + s_w, ..., so a tap
// at padded column ox * s_w + dx reads column ox + dx / s_w of phase dx % s_w: contiguous in ox for any stride.
// Only data moves here; padding is written as real +0 values.
// `zeroed`: the buffer still holds a previous plane of this geometry built here (or zeros), so with width
// stride 1 its padding is already +0 where it must be and only the input's rows are copied in (a 7x7 plane
// padded to 11x11 spent most of its build writing the same zeros again).
inline void DwBuildPhases(const DepthwisePlane& p, const float* x, float* phases, float* row, bool zeroed) {
  const int64_t s = p.s_w, pw = p.phase_w, span = s * pw;
  // Padded row r of column phase c: row r / ph_h of row phase r % ph_h (ph_h = 1: row r).
  const int64_t rows_per_phase = p.phase_h * pw, col_phase = p.ph_h * rows_per_phase;
  // (No division when ph_h is 1: two per row cost a 14x14 plane a third of its time.)
  auto at = [&](int64_t c, int64_t r) {
    const int64_t row = p.ph_h == 1 ? r * pw : (r % p.ph_h) * rows_per_phase + (r / p.ph_h) * pw;
    return phases + c * col_phase + row;
  };
  // Padded columns [c0, c1) hold input columns [c0 - pad_l, c1 - pad_l).
  const int64_t c0 = std::min(p.pad_l, span);
  const int64_t c1 = std::clamp(p.pad_l + p.in_w, c0, span);
  if (zeroed && s == 1) {
    for (int64_t ir = 0; ir < p.in_h; ++ir) {
      const int64_t r = ir + p.pad_t;
      if (r < p.padded_h && c1 > c0) CopyOverlapped(x + ir * p.in_w + (c0 - p.pad_l), at(0, r) + c0, c1 - c0);
    }
    return;
  }
  if (zeroed && s == 2) {
    // Input column ic is padded column pc = ic + pad_l: phase pc % 2, position pc / 2. Pairs (ic, ic + 1)
    // de-interleave into both phases at once, each lane one position further.
    const hn::ScalableTag<float> d;
    const int64_t n = static_cast<int64_t>(hn::Lanes(d));
    for (int64_t ir = 0; ir < p.in_h; ++ir) {
      const int64_t r = ir + p.pad_t;
      if (r >= p.padded_h) break;
      const float* src = x + ir * p.in_w;
      float* rows[2] = {at(0, r), at(1, r)};
      int64_t ic = c0 - p.pad_l;  // the first input column that lands inside [c0, c1)
      const int64_t end = c1 - p.pad_l;
      auto pair = [&](int64_t at_ic) {
        hn::Vec<decltype(d)> a, b;
        hn::LoadInterleaved2(d, src + at_ic, a, b);
        const int64_t pa = at_ic + p.pad_l, pb = pa + 1;
        hn::StoreU(a, d, rows[pa & 1] + (pa >> 1));
        hn::StoreU(b, d, rows[pb & 1] + (pb >> 1));
      };
      const int64_t first_ic = ic;
      {
        // Whole pairs of vectors: ic steps by 2n, so each lane group keeps its phase and moves n positions on
        // (the phase picked per pair, through the array above, was half of this loop's time on AVX2).
        const int64_t pa = ic + p.pad_l;
        float* da = rows[pa & 1] + (pa >> 1);
        float* db = rows[(pa + 1) & 1] + ((pa + 1) >> 1);
        for (; ic + 2 * n <= end; ic += 2 * n, da += n, db += n) {
          hn::Vec<decltype(d)> a, b;
          hn::LoadInterleaved2(d, src + ic, a, b);
          hn::StoreU(a, d, da);
          hn::StoreU(b, d, db);
        }
      }
      // The rest as one window ending at the row's end, overlapping the last (it writes the same values again):
      // a scalar tail of 16 of 112 columns was a third of MobileNetV3's 112 -> 56 3x3 layer.
      if (ic < end && end - first_ic >= 2 * n) {
        pair(end - 2 * n);
        ic = end;
      }
      for (; ic < end; ++ic) {
        const int64_t pc = ic + p.pad_l;
        rows[pc & 1][pc >> 1] = src[ic];
      }
    }
    return;
  }
  for (int64_t r = 0; r < p.padded_h; ++r) {
    const int64_t ir = r - p.pad_t;
    if (ir < 0 || ir >= p.in_h) {
      for (int64_t ph = 0; ph < s; ++ph) CopyOverlapped(nullptr, at(ph, r), pw);
      continue;
    }
    float* dst = s == 1 ? at(0, r) : row;
    CopyOverlapped(nullptr, dst, c0);
    if (c1 > c0) CopyOverlapped(x + ir * p.in_w + (c0 - p.pad_l), dst + c0, c1 - c0);
    CopyOverlapped(nullptr, dst + c1, span - c1);
    if (s == 1) continue;
    int64_t j = 0;
    if (s == 2) {
      // Two phases: de-interleave whole vectors (ConcatEven/ConcatOdd), the rest one value at a time.
      const hn::ScalableTag<float> d;
      const int64_t n = static_cast<int64_t>(hn::Lanes(d));
      float* even = at(0, r);
      float* odd = at(1, r);
      auto pair = [&](int64_t at_j) {
        hn::Vec<decltype(d)> a, b;
        hn::LoadInterleaved2(d, row + 2 * at_j, a, b);
        hn::StoreU(a, d, even + at_j);
        hn::StoreU(b, d, odd + at_j);
      };
      for (; j + n <= pw; j += n) pair(j);
      if (j < pw && pw >= n) {  // the rest as one overlapping window (row holds 2 * pw values)
        pair(pw - n);
        j = pw;
      }
    }
    for (int64_t ph = 0; ph < s; ++ph) {
      float* out = at(ph, r);
      for (int64_t jj = j; jj < pw; ++jj) out[jj] = row[ph + jj * s];
    }
  }
}

// R output vectors at once: each tap's broadcast weight is shared by R products. base[r] is output vector r's
// offset in the source, out[r] where it is stored.
template <bool kExact, int R, class D>
HWY_INLINE void DwBatch(D d, const float* src, const int64_t* base, const int64_t* tap_off, const float* w,
                        int64_t taps, float* const* out) {
  using V = hn::Vec<D>;
  V acc[R];
  for (int r = 0; r < R; ++r) acc[r] = hn::Zero(d);
  for (int64_t t = 0; t < taps; ++t) {
    const V wv = hn::Set(d, w[t]);
    const float* s = src + tap_off[t];
    for (int r = 0; r < R; ++r) {
      const V xv = hn::LoadU(d, s + base[r]);
      // Exact: the product is rounded, then the sum (no fused operation); fast: one fused multiply-add.
      if constexpr (kExact) {
        acc[r] = hn::Add(acc[r], hn::Mul(wv, xv));
      } else {
        acc[r] = hn::MulAdd(wv, xv, acc[r]);
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    V v = acc[r];
    if constexpr (kExact) v = CanonicalNaN(d, v);
    hn::StoreU(v, d, out[r]);
  }
}

// One plane with vectors of Lanes(d) <= out_w columns. The last vector of a row is moved back to end at the
// last column (it recomputes a few outputs with identical values). Positions go four at a time: along rows
// when a row holds at least four vectors, else down columns so narrow planes still share each weight four ways.
template <bool kExact, class D>
HWY_NOINLINE void DwPlane(D d, const DepthwisePlane& p, const float* src, int64_t rs, const int64_t* tap_off,
                          const float* w, float* y) {
  constexpr int kBatch = 4;
  const int64_t n = static_cast<int64_t>(hn::Lanes(d));
  const int64_t ow = p.out_w, oh = p.out_h, taps = p.k_h * p.k_w;
  const int64_t ncol = (ow + n - 1) / n;
  const bool down_columns = ncol < kBatch && oh >= kBatch;
  const int64_t total = oh * ncol;
  const int64_t row_step = p.s_h * rs;
  int64_t base[kBatch];
  float* out[kBatch];
  int k = 0;
  int64_t oy = 0, i = 0;
  for (int64_t t = 0; t < total; ++t) {
    const int64_t x0 = std::min(i * n, ow - n);
    base[k] = oy * row_step + x0;
    out[k] = y + oy * ow + x0;
    if (++k == kBatch) {
      DwBatch<kExact, kBatch>(d, src, base, tap_off, w, taps, out);
      k = 0;
    }
    if (down_columns) {
      if (++oy == oh) oy = 0, ++i;
    } else if (++i == ncol) {
      i = 0, ++oy;
    }
  }
  for (int j = 0; j < k; ++j) DwBatch<kExact, 1>(d, src, base + j, tap_off, w, taps, out + j);
}

// R output rows at columns [x0, x0 + Lanes(d)) of a K x K kernel with height stride S and height dilation 1:
// input row r of the block feeds output row o through kernel row r - o * S, so each vector loaded serves every
// output row it belongs to, and the K * K broadcast weights stay in registers (wv). Loops are unrolled at
// compile time; each output still takes its taps in (kh, kw) order (r ascending, then kw) from +0.
template <bool kExact, int K, int S, int R, class D>
HWY_INLINE void DwRowsBatch(D d, const hn::Vec<D>* HWY_RESTRICT wv, const float* src, int64_t rs,
                            const int64_t* col_off, float* y, int64_t ow, int64_t oy0, int64_t x0) {
  using V = hn::Vec<D>;
  V acc[R];
  HWY_UNROLL(8)
  for (int o = 0; o < R; ++o) acc[o] = hn::Zero(d);
  const float* base = src + oy0 * S * rs + x0;
  HWY_UNROLL(16)
  for (int r = 0; r < (R - 1) * S + K; ++r) {
    const float* row = base + r * rs;
    HWY_UNROLL(8)
    for (int kx = 0; kx < K; ++kx) {
      const V v = hn::LoadU(d, row + col_off[kx]);
      HWY_UNROLL(8)
      for (int o = 0; o < R; ++o) {
        const int ky = r - o * S;
        if (ky < 0 || ky >= K) continue;
        if constexpr (kExact) {
          acc[o] = hn::Add(acc[o], hn::Mul(wv[ky * K + kx], v));
        } else {
          acc[o] = hn::MulAdd(wv[ky * K + kx], v, acc[o]);
        }
      }
    }
  }
  HWY_UNROLL(8)
  for (int o = 0; o < R; ++o) {
    V v = acc[o];
    if constexpr (kExact) v = CanonicalNaN(d, v);
    hn::StoreU(v, d, y + (oy0 + o) * ow + x0);
  }
}

// A plane through DwRowsBatch: four output rows at a time, then one; columns as in DwPlane (the last vector
// of a row moved back to end at the last column).
template <bool kExact, int K, int S, class D>
HWY_NOINLINE void DwPlaneRows(D d, const DepthwisePlane& p, const float* src, int64_t rs, const int64_t* tap_off,
                              const float* w, float* y) {
  constexpr int R = 4;
  const int64_t n = static_cast<int64_t>(hn::Lanes(d));
  const int64_t ow = p.out_w, oh = p.out_h, ncol = (ow + n - 1) / n;
  hn::Vec<D> wv[K * K];
  HWY_UNROLL(25)
  for (int t = 0; t < K * K; ++t) wv[t] = hn::Set(d, w[t]);
  int64_t col_off[K];  // the column part of a tap's offset: its offset in kernel row 0
  for (int kx = 0; kx < K; ++kx) col_off[kx] = tap_off[kx];
  int64_t oy = 0;
  for (; oy + R <= oh; oy += R)
    for (int64_t i = 0; i < ncol; ++i)
      DwRowsBatch<kExact, K, S, R>(d, wv, src, rs, col_off, y, ow, oy, std::min(i * n, ow - n));
  for (; oy < oh; ++oy)
    for (int64_t i = 0; i < ncol; ++i)
      DwRowsBatch<kExact, K, S, 1>(d, wv, src, rs, col_off, y, ow, oy, std::min(i * n, ow - n));
}

// A plane the driver marked `rows` (3x3 or 5x5, height stride 1 or 2): DwPlaneRows; false for any other.
template <bool kExact, class D>
HWY_INLINE bool DwTryRows(D d, const DepthwisePlane& p, const float* src, int64_t rs, const int64_t* tap_off,
                          const float* w, float* y) {
  if (!p.rows) return false;
  if (p.k_h == 3 && p.s_h == 1)
    DwPlaneRows<kExact, 3, 1>(d, p, src, rs, tap_off, w, y);
  else if (p.k_h == 3)
    DwPlaneRows<kExact, 3, 2>(d, p, src, rs, tap_off, w, y);
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  else if (p.s_h == 1)
    DwPlaneRows<kExact, 5, 1>(d, p, src, rs, tap_off, w, y);
  else
    DwPlaneRows<kExact, 5, 2>(d, p, src, rs, tap_off, w, y);
#else
  else
    return false;
#endif
  return true;
}

// A flat plane: output (oy, ox) at position j = oy * rs + ox of one run over the phase planes, whose tap
// offsets do not depend on the row (row phases make the height stride 1 there). Vectors of Lanes(d) <= the
// run's length cover it, the last moved back to end at its end, four at a time; the columns ox >= out_w of
// each row are computed from whatever the buffer holds there and dropped. Each kept output is the same one
// chain as in DwPlane.
template <bool kExact, class D>
HWY_NOINLINE void DwFlat(D d, const DepthwisePlane& p, const float* src, int64_t rs, const int64_t* tap_off,
                         const float* w, float* y, float* tmp) {
  constexpr int kBatch = 4;
  const int64_t n = static_cast<int64_t>(hn::Lanes(d));
  const int64_t ow = p.out_w, oh = p.out_h, taps = p.k_h * p.k_w;
  const int64_t run = (oh - 1) * rs + ow;
  float* dst = rs == ow ? y : tmp;
  const int64_t count = (run + n - 1) / n;
  int64_t base[kBatch];
  float* out[kBatch];
  int k = 0;
  for (int64_t i = 0; i < count; ++i) {
    base[k] = std::min(i * n, run - n);
    out[k] = dst + base[k];
    if (++k == kBatch) {
      DwBatch<kExact, kBatch>(d, src, base, tap_off, w, taps, out);
      k = 0;
    }
  }
  for (int j = 0; j < k; ++j) DwBatch<kExact, 1>(d, src, base + j, tap_off, w, taps, out + j);
  if (dst != y)
    for (int64_t oy = 0; oy < oh; ++oy) CopyOverlapped(tmp + oy * rs, y + oy * ow, ow);
}

// The widest vector that fits in the output width: full, 8, 4 or 1 lanes.
template <bool kExact>
void DwComputeT(const DepthwisePlane& p, const float* src, int64_t rs, const int64_t* tap_off, const float* w, float* y,
                float* tmp) {
  const hn::ScalableTag<float> df;
  const hn::CappedTag<float, 8> d8;
  const hn::CappedTag<float, 4> d4;
  const hn::CappedTag<float, 1> d1;
  const int64_t run = (p.out_h - 1) * rs + p.out_w;
  if (p.flat && run >= static_cast<int64_t>(hn::Lanes(df))) {
    DwFlat<kExact>(df, p, src, rs, tap_off, w, y, tmp);
  } else if (p.flat && run >= static_cast<int64_t>(hn::Lanes(d8))) {
    DwFlat<kExact>(d8, p, src, rs, tap_off, w, y, tmp);
  } else if (p.flat) {
    DwFlat<kExact>(d1, p, src, rs, tap_off, w, y, tmp);
  } else if (p.out_w >= static_cast<int64_t>(hn::Lanes(df))) {
    if (!DwTryRows<kExact>(df, p, src, rs, tap_off, w, y)) DwPlane<kExact>(df, p, src, rs, tap_off, w, y);
  } else if (p.out_w >= static_cast<int64_t>(hn::Lanes(d8))) {
    if (!DwTryRows<kExact>(d8, p, src, rs, tap_off, w, y)) DwPlane<kExact>(d8, p, src, rs, tap_off, w, y);
  } else if (p.out_w >= static_cast<int64_t>(hn::Lanes(d4))) {
    DwPlane<kExact>(d4, p, src, rs, tap_off, w, y);
  } else {
    DwPlane<kExact>(d1, p, src, rs, tap_off, w, y);
  }
}

inline void DwComputePlane(bool exact, const DepthwisePlane& p, const float* src, int64_t rs, const int64_t* tap_off,
                           const float* w, float* y, float* tmp) {
  if (p.out_h <= 0 || p.out_w <= 0) return;
  if (exact) {
    DwComputeT<true>(p, src, rs, tap_off, w, y, tmp);
  } else {
    DwComputeT<false>(p, src, rs, tap_off, w, y, tmp);
  }
}

// Channel-blocked planes (kernels-depthwise.md section 8): lanes are neighbouring channels at one position,
// the tile and the outputs channels-last. Output positions go kBatch at a time in row-major order (a batch may
// span rows: each position has its own base in the tile), all sharing each tap's weight vector; every output is
// still one accumulator from +0 over the taps in (kh, kw) order. Eight independent accumulators keep both FMA
// pipes busy: four along a row (the earlier walk) left a 7-wide row as one batch of four and three chains of
// one, each 25 taps of dependent FMAs (MobileNetV3's 960-channel 5x5 layers at 7x7, Zen 3: 0.17 ms alone, of
// which the chains were half).
template <bool kExact, int kBatch>
HWY_INLINE void DwBlockedBatch(const float* tile, const float* wt, const int64_t* tap_off, int64_t taps,
                               const int64_t* base, float* out) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  using VF = hn::Vec<decltype(d)>;
  const float* at[kBatch];
  VF acc[kBatch];
  HWY_UNROLL(8)
  for (int i = 0; i < kBatch; ++i) {
    at[i] = tile + base[i];
    acc[i] = hn::Zero(d);
  }
  for (int64_t t = 0; t < taps; ++t) {
    const VF w = hn::LoadU(d, wt + t * lanes);
    const int64_t off = tap_off[t];
    HWY_UNROLL(8)
    for (int i = 0; i < kBatch; ++i) {
      const VF v = hn::LoadU(d, at[i] + off);
      acc[i] = kExact ? hn::Add(acc[i], hn::Mul(w, v)) : hn::MulAdd(w, v, acc[i]);
    }
  }
  HWY_UNROLL(8)
  for (int i = 0; i < kBatch; ++i) hn::StoreU(kExact ? CanonicalNaN(d, acc[i]) : acc[i], d, out + i * lanes);
}

template <bool kExact>
void DwBlockedT(const DepthwisePlane& p, const float* tile, const float* wt, float* out) {
  constexpr int kBatch = 8;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(hn::ScalableTag<float>()));
  const int64_t taps = p.k_h * p.k_w, positions = p.out_h * p.out_w;
  int64_t tap_off[kMaxDepthwiseTaps];
  for (int64_t ky = 0; ky < p.k_h; ++ky)
    for (int64_t kx = 0; kx < p.k_w; ++kx) tap_off[ky * p.k_w + kx] = (ky * p.d_h * p.padded_w + kx * p.d_w) * lanes;
  auto base_of = [&](int64_t j) { return ((j / p.out_w) * p.s_h * p.padded_w + (j % p.out_w) * p.s_w) * lanes; };
  if (positions < kBatch) {
    for (int64_t j = 0; j < positions; ++j) {
      const int64_t b = base_of(j);
      DwBlockedBatch<kExact, 1>(tile, wt, tap_off, taps, &b, out + j * lanes);
    }
    return;
  }
  int64_t base[kBatch];
  for (int64_t j0 = 0; j0 < positions; j0 += kBatch) {
    // The last batch is moved back to end at the last position: it recomputes a few outputs, the same chains.
    const int64_t j = std::min(j0, positions - kBatch);
    int64_t oy = j / p.out_w, ox = j - oy * p.out_w;  // one division per batch (eight were a fifth of the time)
    for (int i = 0; i < kBatch; ++i) {
      base[i] = (oy * p.s_h * p.padded_w + ox * p.s_w) * lanes;
      if (++ox == p.out_w) ox = 0, ++oy;
    }
    DwBlockedBatch<kExact, kBatch>(tile, wt, tap_off, taps, base, out + j * lanes);
  }
}

inline void DwComputeBlocked(bool exact, const DepthwisePlane& p, const float* tile, const float* wt, float* out) {
  if (exact) {
    DwBlockedT<true>(p, tile, wt, out);
  } else {
    DwBlockedT<false>(p, tile, wt, out);
  }
}

#if HWY_TARGET == HWY_SCALAR  // one lane: never blocked (conv_driver.cc), but the table needs entries
inline void DwToChannelsLast(const float* const* src, int64_t at, int64_t count, float* dst, int64_t row_w,
                             int64_t dst_row) {
  for (int64_t j = 0; j < count; j += row_w)
    std::memcpy(dst + (j / row_w) * dst_row, src[0] + at + j,
                sizeof(float) * static_cast<size_t>(std::min(row_w, count - j)));
}
inline void DwFromChannelsLast(const float* src, int64_t src_row, int64_t count, int64_t used, float* dst, int64_t) {
  if (used > 0)
    for (int64_t j = 0; j < count; ++j) dst[j] = src[j * src_row];
}
#else
#if HWY_MAX_BYTES >= 32
// Eight vectors of eight floats transposed in registers: v[i][l] becomes v[l][i].
HWY_INLINE void Transpose8x8(hn::Vec<hn::Full256<float>>* v) {
  const hn::Full256<float> d;
  const hn::Full256<double> dd;
  using V = hn::Vec<decltype(d)>;
  V t[8];
  for (int i = 0; i < 8; i += 2) {  // pairs of rows, element by element within each 128-bit half
    t[i] = hn::InterleaveLower(d, v[i], v[i + 1]);
    t[i + 1] = hn::InterleaveUpper(d, v[i], v[i + 1]);
  }
  V u[8];
  for (int q = 0; q < 8; q += 4)  // then pairs of pairs (64-bit elements)
    for (int h = 0; h < 2; ++h) {
      const auto a = hn::BitCast(dd, t[q + h]), b = hn::BitCast(dd, t[q + 2 + h]);
      u[q + 2 * h] = hn::BitCast(d, hn::InterleaveLower(dd, a, b));
      u[q + 2 * h + 1] = hn::BitCast(d, hn::InterleaveUpper(dd, a, b));
    }
  for (int i = 0; i < 4; ++i) {  // then the 128-bit halves of rows 0-3 and 4-7
    v[i] = hn::ConcatLowerLower(d, u[4 + i], u[i]);
    v[i + 4] = hn::ConcatUpperUpper(d, u[4 + i], u[i]);
  }
}

// Whole groups of eight positions by 8x8 transposes, eight channels at a time; returns the positions done.
// Plain moves: the bits arrive unchanged.
inline int64_t ToChannelsLast8(const float* const* src, int64_t at, int64_t count, float* dst, int64_t row_w,
                               int64_t dst_row, int64_t lanes) {
  const hn::Full256<float> d;
  const int64_t done = count / 8 * 8;
  for (int64_t c8 = 0; c8 < lanes; c8 += 8) {
    int64_t r = 0, c = 0;
    for (int64_t j = 0; j < done; j += 8) {
      hn::Vec<decltype(d)> v[8];
      for (int l = 0; l < 8; ++l) v[l] = hn::LoadU(d, src[c8 + l] + at + j);
      Transpose8x8(v);
      for (int i = 0; i < 8; ++i) {
        hn::StoreU(v[i], d, dst + (r * dst_row + c) * lanes + c8);
        if (++c == row_w) c = 0, ++r;
      }
    }
  }
  return done;
}

inline int64_t FromChannelsLast8(const float* src, int64_t src_row, int64_t count, int64_t used, float* dst,
                                 int64_t stride) {
  const hn::Full256<float> d;
  const int64_t done = count / 8 * 8;
  for (int64_t c8 = 0; c8 < used; c8 += 8)
    for (int64_t j = 0; j < done; j += 8) {
      hn::Vec<decltype(d)> v[8];
      for (int i = 0; i < 8; ++i) v[i] = hn::LoadU(d, src + (j + i) * src_row + c8);
      Transpose8x8(v);
      for (int64_t l = 0; l < 8 && c8 + l < used; ++l) hn::StoreU(v[l], d, dst + (c8 + l) * stride + j);
    }
  return done;
}
#endif

// Between planes and channels-last rows: lanes = 4 * groups channels. On 256-bit and wider targets whole groups
// of eight positions go through 8x8 transposes (the staged path below, with its joins of 16 bytes, was a third
// of a 240-channel stride-2 layer at 28x28 on Zen 3); the rest, and 128-bit targets, are staged: StoreInterleaved4
// puts the 4 channels of a group side by side per position, then each position's groups are joined 4 floats at
// a time.
inline void DwToChannelsLast(const float* const* src, int64_t at, int64_t count, float* dst, int64_t row_w,
                             int64_t dst_row) {
  const hn::ScalableTag<float> d;
  const hn::FixedTag<float, 4> d4;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d)), groups = lanes / 4;
  int64_t first = 0;
#if HWY_MAX_BYTES >= 32
  first = ToChannelsLast8(src, at, count, dst, row_w, dst_row, lanes);
#endif
  HWY_ALIGN float quad[4][4 * 64];  // a group's positions, 4 channels each, for up to 64 positions
  for (int64_t j0 = first; j0 < count; j0 += 64) {
    const int64_t m = std::min<int64_t>(64, count - j0);
    for (int64_t gi = 0; gi < groups; ++gi) {
      const float* s0 = src[4 * gi] + at + j0;
      const float* s1 = src[4 * gi + 1] + at + j0;
      const float* s2 = src[4 * gi + 2] + at + j0;
      const float* s3 = src[4 * gi + 3] + at + j0;
      int64_t j = 0;
      for (; j + lanes <= m; j += lanes)
        hn::StoreInterleaved4(hn::LoadU(d, s0 + j), hn::LoadU(d, s1 + j), hn::LoadU(d, s2 + j), hn::LoadU(d, s3 + j), d,
                              quad[gi] + 4 * j);
      for (; j < m; ++j) {
        quad[gi][4 * j] = s0[j];
        quad[gi][4 * j + 1] = s1[j];
        quad[gi][4 * j + 2] = s2[j];
        quad[gi][4 * j + 3] = s3[j];
      }
    }
    int64_t r = j0 / row_w, c = j0 - r * row_w;
    for (int64_t j = 0; j < m; ++j) {
      float* to = dst + (r * dst_row + c) * lanes;
      for (int64_t gi = 0; gi < groups; ++gi) hn::StoreU(hn::Load(d4, quad[gi] + 4 * j), d4, to + 4 * gi);
      if (++c == row_w) c = 0, ++r;
    }
  }
}

inline void DwFromChannelsLast(const float* src, int64_t src_row, int64_t count, int64_t used, float* dst,
                               int64_t stride) {
  const hn::ScalableTag<float> d;
  const hn::FixedTag<float, 4> d4;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d)), groups = lanes / 4;
  int64_t first = 0;
#if HWY_MAX_BYTES >= 32
  first = FromChannelsLast8(src, src_row, count, used, dst, stride);
#endif
  HWY_ALIGN float quad[4][4 * 64];
  for (int64_t j0 = first; j0 < count; j0 += 64) {
    const int64_t m = std::min<int64_t>(64, count - j0);
    for (int64_t j = 0; j < m; ++j)
      for (int64_t gi = 0; gi < groups; ++gi)
        hn::Store(hn::LoadU(d4, src + (j0 + j) * src_row + 4 * gi), d4, quad[gi] + 4 * j);
    for (int64_t gi = 0; gi < groups && 4 * gi < used; ++gi) {
      float* o[4];
      HWY_ALIGN float sink[64];
      for (int64_t b = 0; b < 4; ++b) o[b] = 4 * gi + b < used ? dst + (4 * gi + b) * stride + j0 : sink;
      int64_t j = 0;
      for (; j + lanes <= m; j += lanes) {
        hn::Vec<decltype(d)> v0, v1, v2, v3;
        hn::LoadInterleaved4(d, quad[gi] + 4 * j, v0, v1, v2, v3);
        hn::StoreU(v0, d, o[0] + j);
        hn::StoreU(v1, d, o[1] + j);
        hn::StoreU(v2, d, o[2] + j);
        hn::StoreU(v3, d, o[3] + j);
      }
      for (; j < m; ++j)
        for (int64_t b = 0; b < 4; ++b) o[b][j] = quad[gi][4 * j + b];
    }
  }
}

#endif

inline constexpr DepthwiseFns kDepthwiseFns{&DwBuildPhases,    &DwComputePlane,     &DwComputeBlocked,
                                            &DwToChannelsLast, &DwFromChannelsLast, &TakeEven};

}  // namespace onemodel::kern::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif
