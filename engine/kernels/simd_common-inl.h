// Small per-target helpers shared by the kernels (included from each kernel's x-inl.h, inside the per-target
// pass). Highway 1.0.3 has no LoadN/StoreN, and its MaskedLoad reads the whole vector on some targets, so
// partial vectors go through a stack buffer: never a read or write past the caller's last element.
#if defined(ONEMODEL_KERNELS_SIMD_COMMON_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEMODEL_KERNELS_SIMD_COMMON_INL_H_
#undef ONEMODEL_KERNELS_SIMD_COMMON_INL_H_
#else
#define ONEMODEL_KERNELS_SIMD_COMMON_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace onemodel::kern::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Whether MaskedLoad (and, with kStore, BlendedStore) of D's lanes is one instruction that touches only the
// lanes its mask selects: AVX-512's masked moves for every lane size; AVX2's vmaskmovps/vpmaskmovd loads for
// 4- and 8-byte lanes (their stores are slow on AMD cores before Zen 4, so AVX2 keeps the copy for stores).
// Elsewhere Highway emulates them with a full-width access, which may read or write past the array.
template <class D, bool kStore>
constexpr bool kNativeMasked =
#if HWY_TARGET <= HWY_AVX3
    true;
#elif HWY_TARGET == HWY_AVX2
    !kStore && sizeof(hn::TFromD<D>) >= 4;
#else
    false;
#endif

// The first n (< Lanes(d)) elements of p; the other lanes are zero. The copy through a buffer (other targets)
// stalls the vector load on the buffer's narrower stores: a fast-mode average of 960 planes of 7 x 7 (one tail
// per plane), one thread, AVX-512 (Zen 5), took 18.5 us with the copy and 5.0 us with the masked load.
template <class D>
HWY_INLINE hn::Vec<D> LoadTail(D d, const hn::TFromD<D>* p, size_t n) {
  if constexpr (kNativeMasked<D, false>) {
    return hn::MaskedLoad(hn::FirstN(d, n), d, p);
  } else {
    HWY_ALIGN hn::TFromD<D> buf[hn::MaxLanes(d)] = {};
    std::memcpy(buf, p, n * sizeof(hn::TFromD<D>));
    return hn::Load(d, buf);
  }
}

// Writes the first n (< Lanes(d)) lanes of v to p.
template <class D>
HWY_INLINE void StoreTail(hn::Vec<D> v, D d, hn::TFromD<D>* p, size_t n) {
  if constexpr (kNativeMasked<D, true>) {
    hn::BlendedStore(v, hn::FirstN(d, n), d, p);
  } else {
    HWY_ALIGN hn::TFromD<D> buf[hn::MaxLanes(d)];
    hn::Store(v, d, buf);
    std::memcpy(p, buf, n * sizeof(hn::TFromD<D>));
  }
}

// y[i] = op(d, x[i]) over whole vectors, the tail through a zero-padded copy (so an element's result never
// depends on its position).
template <class Op>
HWY_INLINE void MapArray(const float* x, float* y, int64_t n, Op op) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(op(d, hn::LoadU(d, x + i)), d, y + i);
  if (i < n) {
    const size_t rest = static_cast<size_t>(n - i);
    StoreTail(op(d, LoadTail(d, x + i, rest)), d, y + i, rest);
  }
}

// clamp(v, 0, 1), NaN passing through (ops/elementwise_common.h clamp01).
template <class D>
HWY_INLINE hn::Vec<D> Clamp01(D d, hn::Vec<D> v) {
  const auto zero = hn::Zero(d), one = hn::Set(d, 1.0f);
  return hn::IfThenElse(hn::Lt(v, zero), zero, hn::IfThenElse(hn::Gt(v, one), one, v));
}
// The unary formulas that fused element-wise steps (ew_program-inl.h) and the matrix product's register
// epilogue (gemm-inl.h) share, so both give the same bits.
template <class D>
HWY_INLINE hn::Vec<D> VRelu(D d, hn::Vec<D> x) {
  return hn::IfThenElse(hn::Le(x, hn::Zero(d)), hn::Zero(d), x);
}
template <class V>
HWY_INLINE V VClip(V x, V lo, V hi) {
  const V v = hn::IfThenElse(hn::Lt(x, lo), lo, x);
  return hn::IfThenElse(hn::Gt(v, hi), hi, v);
}
template <class D>
HWY_INLINE hn::Vec<D> VLeakyRelu(D d, hn::Vec<D> x, hn::Vec<D> alpha) {
  return hn::IfThenElse(hn::Lt(x, hn::Zero(d)), hn::Mul(alpha, x), x);
}
template <class D>
HWY_INLINE hn::Vec<D> VHardSwish(D d, hn::Vec<D> x) {
  return hn::Mul(x, Clamp01(d, hn::Add(hn::Mul(x, hn::Set(d, 0.16666667f)), hn::Set(d, 0.5f))));
}

// Every NaN lane becomes the canonical quiet NaN 0x7FC00000 (exact-mode.md: payloads and signs of NaN differ
// between instruction sets, so exact outputs never carry them).
template <class D>
HWY_INLINE hn::Vec<D> CanonicalNaN(D d, hn::Vec<D> v) {
  const hn::RebindToSigned<D> di;
  const auto qnan = hn::BitCast(d, hn::Set(di, 0x7FC00000));
  return hn::IfThenElse(hn::IsNaN(v), qnan, v);
}

// dst[0, n) = src[0, n) (src null: zeros) with vector stores: rows and blocks here are a few to tens of floats
// (MobileNetV3's 14x14 and 7x7 depthwise planes, a fused element-wise block of a 7x7 plane: 49 values), where a
// library memcpy / memset call cost more than the copy. The last vector overlaps the one before it instead of a
// scalar tail (the compiler turns such tails back into library calls); rewriting a few values with the same
// values is harmless as dst and src do not overlap.
template <class D>
HWY_INLINE bool CopyOverlappedD(D d, const float* src, float* dst, int64_t n) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  if (n < lanes) return false;
  const auto z = hn::Zero(d);
  for (int64_t i = 0; i + lanes <= n; i += lanes) hn::StoreU(src ? hn::LoadU(d, src + i) : z, d, dst + i);
  if (n % lanes != 0) hn::StoreU(src ? hn::LoadU(d, src + n - lanes) : z, d, dst + n - lanes);
  return true;
}
HWY_INLINE void CopyOverlapped(const float* src, float* dst, int64_t n) {
  if (CopyOverlappedD(hn::ScalableTag<float>(), src, dst, n) || CopyOverlappedD(hn::CappedTag<float, 4>(), src, dst, n))
    return;
  for (int64_t i = 0; i < n; ++i) dst[i] = src ? src[i] : 0.0f;
}

// dst[i] = src[2 * i] for i < n, reading src[0, avail) only (avail >= 2 * n - 1): whole vectors de-interleaved,
// the rest as one window ending at the last pair when it fits inside avail (it rewrites the same values), else
// one value at a time. A stride-2 convolution's im2col rows (conv_driver.cc fill_panel).
HWY_INLINE void TakeEven(const float* src, int64_t avail, float* dst, int64_t n) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  auto window = [&](int64_t at) {
    hn::Vec<decltype(d)> even, odd;
    hn::LoadInterleaved2(d, src + 2 * at, even, odd);
    hn::StoreU(even, d, dst + at);
  };
  for (; i + lanes <= n && 2 * (i + lanes) <= avail; i += lanes) window(i);
  if (i < n && n >= lanes && 2 * n <= avail) {
    window(n - lanes);
    return;
  }
  for (; i < n; ++i) dst[i] = src[2 * i];
}

}  // namespace onemodel::kern::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif
