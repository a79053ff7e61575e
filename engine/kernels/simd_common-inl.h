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
#include <cstring>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace onemodel::kern::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The first n (< Lanes(d)) elements of p; the other lanes are zero.
template <class D>
HWY_INLINE hn::Vec<D> LoadTail(D d, const hn::TFromD<D>* p, size_t n) {
  HWY_ALIGN hn::TFromD<D> buf[hn::MaxLanes(d)] = {};
  std::memcpy(buf, p, n * sizeof(hn::TFromD<D>));
  return hn::Load(d, buf);
}

// Writes the first n (< Lanes(d)) lanes of v to p.
template <class D>
HWY_INLINE void StoreTail(hn::Vec<D> v, D d, hn::TFromD<D>* p, size_t n) {
  HWY_ALIGN hn::TFromD<D> buf[hn::MaxLanes(d)];
  hn::Store(v, d, buf);
  std::memcpy(p, buf, n * sizeof(hn::TFromD<D>));
}

// Every NaN lane becomes the canonical quiet NaN 0x7FC00000 (exact-mode.md: payloads and signs of NaN differ
// between instruction sets, so exact outputs never carry them).
template <class D>
HWY_INLINE hn::Vec<D> CanonicalNaN(D d, hn::Vec<D> v) {
  const hn::RebindToSigned<D> di;
  const auto qnan = hn::BitCast(d, hn::Set(di, 0x7FC00000));
  return hn::IfThenElse(hn::IsNaN(v), qnan, v);
}

}  // namespace onemodel::kern::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif
