// Per-target code for kernels/widen.h. Included once per target by widen.cc through hwy/foreach_target.h.
#if defined(ONEMODEL_KERNELS_WIDEN_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEMODEL_KERNELS_WIDEN_INL_H_
#undef ONEMODEL_KERNELS_WIDEN_INL_H_
#else
#define ONEMODEL_KERNELS_WIDEN_INL_H_
#endif

#include "base/fp16.h"
#include "hwy/highway.h"
#include "kernels/widen.h"

HWY_BEFORE_NAMESPACE();
namespace onemodel::kern::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The 16-bit patterns of one vector of int32 lanes (zero-extended).
template <class DI>
HWY_INLINE hn::Vec<DI> LoadBits16(DI di, const uint16_t* p) {
  const hn::RebindToUnsigned<DI> du;
  const hn::Rebind<uint16_t, decltype(du)> d16;
  return hn::BitCast(di, hn::PromoteTo(du, hn::LoadU(d16, p)));
}

// binary16 bits h (0..0xFFFF in int32 lanes) -> float32 bits.
template <class DI>
HWY_INLINE hn::Vec<DI> HalfBitsToFloatBits(DI di, hn::Vec<DI> h) {
  const hn::Rebind<float, DI> df;
  const auto sign = hn::ShiftLeft<16>(hn::And(h, hn::Set(di, 0x8000)));
  const auto mag = hn::And(h, hn::Set(di, 0x7FFF));
  // Normal: exponent rebiased by 127 - 15 = 112, significand moved up 13 bits.
  const auto normal = hn::Add(hn::ShiftLeft<13>(mag), hn::Set(di, 112 << 23));
  // Zero and subnormal: significand * 2^-24, both steps exact.
  const auto sub = hn::BitCast(di, hn::Mul(hn::ConvertTo(df, mag), hn::Set(df, 5.9604644775390625e-8f)));
  // Infinity and NaN: all-ones exponent, payload moved up, quiet bit forced for NaN.
  const auto special = hn::Or(hn::Or(hn::ShiftLeft<13>(mag), hn::Set(di, 0x7F800000)),
                              hn::IfThenElseZero(hn::Gt(mag, hn::Set(di, 0x7C00)), hn::Set(di, 0x00400000)));
  auto r = hn::IfThenElse(hn::Lt(mag, hn::Set(di, 0x0400)), sub, normal);
  r = hn::IfThenElse(hn::Gt(mag, hn::Set(di, 0x7BFF)), special, r);
  return hn::Or(r, sign);
}

// bfloat16 bits b -> float32 bits: b << 16, quiet bit forced for NaN.
template <class DI>
HWY_INLINE hn::Vec<DI> BFloat16BitsToFloatBits(DI di, hn::Vec<DI> b) {
  const auto nan = hn::Gt(hn::And(b, hn::Set(di, 0x7FFF)), hn::Set(di, 0x7F80));
  return hn::Or(hn::ShiftLeft<16>(b), hn::IfThenElseZero(nan, hn::Set(di, 0x00400000)));
}

// x86 targets from AVX2 on have F16C: vcvtph2ps widens binary16 exactly (subnormals included, a signalling NaN
// made quiet with its payload) and vcvtps2ph with an immediate round-to-nearest-even narrows (overflow to
// infinity, NaN quiet with the top payload bits), the same bits as the integer code below on every pattern
// (tests/cpp/kernel_widen_test.cc: all 65536 patterns, every narrowing boundary). One instruction instead of about
// twenty: PP-OCR rec in float16 spent 29% of an exact run converting (perf). Highway's own non-F16C DemoteTo
// truncates, so the integer code stays for every other target.
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2 && !defined(HWY_DISABLE_F16C)
#define ONEMODEL_WIDEN_F16C 1
#else
#define ONEMODEL_WIDEN_F16C 0
#endif

#if ONEMODEL_WIDEN_F16C
// n binary16 values h widened into f (kWiden), or n float32 values f narrowed into h.
template <bool kWiden, class H, class F>
HWY_INLINE void ConvertF16C(H* h, F* f, int64_t n) {
  const hn::ScalableTag<float> df;
  const hn::Rebind<hwy::float16_t, decltype(df)> dh;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    if constexpr (kWiden)
      hn::StoreU(hn::PromoteTo(df, hn::LoadU(dh, reinterpret_cast<const hwy::float16_t*>(h + i))), df, f + i);
    else
      hn::StoreU(hn::DemoteTo(dh, hn::LoadU(df, f + i)), dh, reinterpret_cast<hwy::float16_t*>(h + i));
  }
  for (; i < n; ++i) {
    if constexpr (kWiden)
      f[i] = half_to_float(h[i]);
    else
      h[i] = float_to_half(f[i]);
  }
}
#endif

template <bool kBFloat16>
inline void Widen(const uint16_t* src, float* dst, int64_t n) {
#if ONEMODEL_WIDEN_F16C
  if constexpr (!kBFloat16) return ConvertF16C<true>(src, dst, n);
#endif
  const hn::ScalableTag<int32_t> di;
  const hn::Rebind<float, decltype(di)> df;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(di));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto h = LoadBits16(di, src + i);
    const auto bits = kBFloat16 ? BFloat16BitsToFloatBits(di, h) : HalfBitsToFloatBits(di, h);
    hn::StoreU(hn::BitCast(df, bits), df, dst + i);
  }
  for (; i < n; ++i) dst[i] = kBFloat16 ? bf16_to_float(src[i]) : half_to_float(src[i]);
}

// float32 bits u (int32 lanes) -> binary16 bits, as float_to_half.
template <class DI>
HWY_INLINE hn::Vec<DI> FloatBitsToHalfBits(DI di, hn::Vec<DI> u) {
  const hn::Rebind<float, DI> df;
  const auto sign = hn::And(hn::ShiftRight<16>(u), hn::Set(di, 0x8000));
  const auto a = hn::And(u, hn::Set(di, 0x7FFFFFFF));
  // Normal binary16: exponent rebiased, the 13 dropped bits rounded to nearest even (a carry into the exponent
  // is the correctly rounded result, up to infinity).
  const auto m = hn::Sub(a, hn::Set(di, 112 << 23));
  const auto odd = hn::And(hn::ShiftRight<13>(m), hn::Set(di, 1));
  const auto normal = hn::ShiftRight<13>(hn::Add(hn::Add(m, hn::Set(di, 0xFFF)), odd));
  // Zero and subnormal: |x| + 0.5 rounds |x| to a multiple of 2^-24 (nearest even), the count is in the low bits.
  const auto sum = hn::BitCast(di, hn::Add(hn::BitCast(df, a), hn::Set(df, 0.5f)));
  const auto sub = hn::Sub(sum, hn::Set(di, 0x3F000000));
  const auto nan = hn::Or(hn::Set(di, 0x7E00), hn::And(hn::ShiftRight<13>(a), hn::Set(di, 0x1FF)));
  auto r = hn::IfThenElse(hn::Lt(a, hn::Set(di, 0x38800000)), sub, normal);
  r = hn::IfThenElse(hn::Gt(a, hn::Set(di, 0x477FEFFF)), hn::Set(di, 0x7C00), r);
  r = hn::IfThenElse(hn::Gt(a, hn::Set(di, 0x7F800000)), nan, r);
  return hn::Or(r, sign);
}

// float32 bits u -> bfloat16 bits, as float_to_bf16.
template <class DI>
HWY_INLINE hn::Vec<DI> FloatBitsToBFloat16Bits(DI di, hn::Vec<DI> u) {
  const hn::RebindToUnsigned<DI> du;
  const auto uu = hn::BitCast(du, u);
  const auto odd = hn::And(hn::ShiftRight<16>(uu), hn::Set(du, 1));
  const auto rounded = hn::ShiftRight<16>(hn::Add(hn::Add(uu, hn::Set(du, 0x7FFF)), odd));
  const auto quiet = hn::Or(hn::ShiftRight<16>(uu), hn::Set(du, 0x40));
  const auto nan = hn::Gt(hn::And(u, hn::Set(di, 0x7FFFFFFF)), hn::Set(di, 0x7F800000));
  return hn::IfThenElse(nan, hn::BitCast(di, quiet), hn::BitCast(di, rounded));
}

template <bool kBFloat16>
inline void Narrow(const float* src, uint16_t* dst, int64_t n) {
#if ONEMODEL_WIDEN_F16C
  if constexpr (!kBFloat16) return ConvertF16C<false>(dst, src, n);
#endif
  const hn::ScalableTag<int32_t> di;
  const hn::Rebind<float, decltype(di)> df;
  const hn::Rebind<uint16_t, decltype(di)> d16;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(di));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto u = hn::BitCast(di, hn::LoadU(df, src + i));
    const auto bits = kBFloat16 ? FloatBitsToBFloat16Bits(di, u) : FloatBitsToHalfBits(di, u);
    hn::StoreU(hn::DemoteTo(d16, bits), d16, dst + i);  // every lane is in 0..0xFFFF
  }
  for (; i < n; ++i) dst[i] = kBFloat16 ? float_to_bf16(src[i]) : float_to_half(src[i]);
}

inline constexpr WidenFns kWidenFns{&Widen<false>, &Widen<true>, &Narrow<false>, &Narrow<true>};

#undef ONEMODEL_WIDEN_F16C

}  // namespace onemodel::kern::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard
