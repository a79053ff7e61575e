// Per-target vector forms of the fp32 functions of exact-transcendentals.md, shared by the array kernels
// (transcendental-inl.h), the softmax rows and fused attention (attention-inl.h).
//
// Every function is a template on kExact. Exact: the spec's operation sequence with hn::Mul then hn::Add (one
// rounding each, never MulAdd, which is FMA on AVX2/AVX3), no estimate instructions, the special values chosen
// by comparisons at the end, so every lane gives the bits of the scalar code in kernels/exact_math.cc whatever
// the lane width. Fast: the same algorithms with fused Horner steps, and the fast exponential for exp.
//
// Lanes whose input is outside an algorithm's working range (NaN, overflow, underflow) are replaced by 0
// before the arithmetic: their result is chosen afterwards anyway, and this keeps the integer steps in range.
#if defined(ONEMODEL_KERNELS_VMATH_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEMODEL_KERNELS_VMATH_INL_H_
#undef ONEMODEL_KERNELS_VMATH_INL_H_
#else
#define ONEMODEL_KERNELS_VMATH_INL_H_
#endif

#include <cstdint>

#include "hwy/highway.h"
#include "kernels/simd_common-inl.h"

HWY_BEFORE_NAMESPACE();
namespace onemodel::kern::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// c + a*b: two roundings in exact mode, one (FMA where the target has it) in fast mode.
template <bool kExact, class V>
HWY_INLINE V MulAddE(V a, V b, V c) {
  if constexpr (kExact) {
    return hn::Add(hn::Mul(a, b), c);
  } else {
    return hn::MulAdd(a, b, c);
  }
}

template <class D>
HWY_INLINE hn::Vec<D> F(D d, float c) {
  return hn::Set(d, c);
}

// 2^k for integer lanes k with k + 127 in [1, 254]: the float whose exponent field is k + 127.
template <class D>
HWY_INLINE hn::Vec<D> Pow2(D d, hn::Vec<hn::RebindToUnsigned<D>> k) {
  const hn::RebindToUnsigned<D> du;
  return hn::BitCast(d, hn::ShiftLeft<23>(hn::Add(k, hn::Set(du, 127u))));
}

// |x| by clearing the sign bit.
template <class D>
HWY_INLINE hn::Vec<D> AbsBits(D d, hn::Vec<D> x) {
  const hn::RebindToUnsigned<D> du;
  return hn::BitCast(d, hn::And(hn::BitCast(du, x), hn::Set(du, 0x7FFFFFFFu)));
}

// v with the sign bit of `sign_of` OR-ed in.
template <class D>
HWY_INLINE hn::Vec<D> OrSign(D d, hn::Vec<D> v, hn::Vec<D> sign_of) {
  const hn::RebindToUnsigned<D> du;
  const auto s = hn::And(hn::BitCast(du, sign_of), hn::Set(du, 0x80000000u));
  return hn::BitCast(d, hn::Or(hn::BitCast(du, v), s));
}

template <class D>
HWY_INLINE hn::Vec<D> PosInf(D d) {
  const hn::RebindToUnsigned<D> du;
  return hn::BitCast(d, hn::Set(du, 0x7F800000u));
}

// Steps 1-3 of exp: x = n*ln2 + r, p ~ exp(r); n returned as unsigned lanes holding the two's complement int.
template <bool kExact, class D>
HWY_INLINE hn::Vec<D> ExpReduce(D d, hn::Vec<D> x, hn::Vec<hn::RebindToUnsigned<D>>& n_int) {
  const hn::RebindToUnsigned<D> du;
  const auto m = F(d, 12582912.0f);
  const auto t = MulAddE<kExact>(x, F(d, 1.44269502f), m);
  const auto n = hn::Sub(t, m);
  n_int = hn::Sub(hn::BitCast(du, t), hn::BitCast(du, m));
  hn::Vec<D> r;
  if constexpr (kExact) {
    r = hn::Sub(hn::Sub(x, hn::Mul(n, F(d, 0.693145751953125f))), hn::Mul(n, F(d, 1.4286068e-6f)));
  } else {
    r = hn::NegMulAdd(n, F(d, 0.693145751953125f), x);
    r = hn::NegMulAdd(n, F(d, 1.4286068e-6f), r);
  }
  auto q = MulAddE<kExact>(F(d, 0.0013814613f), r, F(d, 0.00836871f));
  q = MulAddE<kExact>(q, r, F(d, 0.04166839f));
  q = MulAddE<kExact>(q, r, F(d, 0.16666521f));
  q = MulAddE<kExact>(q, r, F(d, 0.49999994f));
  return hn::Add(F(d, 1.0f), MulAddE<kExact>(hn::Mul(r, r), q, r));
}

// exp(x), full range (exact-transcendentals.md "exp(x)"), both scalings so a subnormal result rounds once.
template <bool kExact, class D>
HWY_INLINE hn::Vec<D> ExpFull(D d, hn::Vec<D> x) {
  const hn::RebindToSigned<D> di;
  const hn::RebindToUnsigned<D> du;
  const auto hi = F(d, 88.72283172607422f);
  const auto lo = F(d, -103.97207641601562f);
  const auto in_range = hn::And(hn::Le(x, hi), hn::Ge(x, lo));  // false for NaN
  const auto xs = hn::IfThenElseZero(in_range, x);
  hn::Vec<decltype(du)> n;
  const auto p = ExpReduce<kExact>(d, xs, n);
  const auto a = hn::BitCast(du, hn::ShiftRight<1>(hn::BitCast(di, n)));  // arithmetic shift
  const auto b = hn::Sub(n, a);
  auto r = hn::Mul(hn::Mul(p, Pow2(d, a)), Pow2(d, b));
  r = hn::IfThenElse(hn::Gt(x, hi), PosInf(d), r);
  r = hn::IfThenElse(hn::Lt(x, lo), hn::Zero(d), r);
  return CanonicalNaN(d, hn::IfThenElse(hn::IsNaN(x), x, r));
}

// ExpNonPositive (exact): for x in [-87.33654, 0] equal to ExpFull, +0 below, canonical NaN for NaN. Lanes
// above 0 (outside the contract) follow the scalar code's arithmetic.
template <class D>
HWY_INLINE hn::Vec<D> ExpNonPositiveExact(D d, hn::Vec<D> x) {
  const hn::RebindToUnsigned<D> du;
  const auto lo = F(d, -87.33654f);
  const auto under = hn::Lt(x, lo);
  const auto keep = hn::Ge(x, lo);  // false for NaN
  hn::Vec<decltype(du)> n;
  const auto p = ExpReduce<true>(d, hn::IfThenElseZero(keep, x), n);
  auto r = hn::Mul(p, Pow2(d, n));
  r = hn::IfThenElse(under, hn::Zero(d), r);
  return CanonicalNaN(d, hn::IfThenElse(hn::IsNaN(x), x, r));
}

// The fast exponential's arithmetic for xs in [-87.3, 88.3]: degree-3 polynomial, one 2^n scaling.
template <class D>
HWY_INLINE hn::Vec<D> ExpFastCore(D d, hn::Vec<D> xs) {
  const hn::RebindToUnsigned<D> du;
  const auto m = F(d, 12582912.0f);
  const auto t = hn::MulAdd(xs, F(d, 1.44269502f), m);
  const auto n = hn::Sub(t, m);
  const auto n_int = hn::Sub(hn::BitCast(du, t), hn::BitCast(du, m));
  auto r = hn::NegMulAdd(n, F(d, 0.693145751953125f), xs);
  r = hn::NegMulAdd(n, F(d, 1.4286068e-6f), r);
  auto q = hn::MulAdd(F(d, 0.008312525f), r, F(d, 0.041890115f));
  q = hn::MulAdd(q, r, F(d, 0.16667114f));
  q = hn::MulAdd(q, r, F(d, 0.4999923f));
  const auto p = hn::Add(F(d, 1.0f), hn::MulAdd(hn::Mul(r, r), q, r));
  return hn::Mul(p, Pow2(d, n_int));
}

// FastMath.Exp (exact-transcendentals.md "Fast exponential"): x clamped to 88.3 above, +0 below -87.3,
// degree-3 polynomial, one 2^n scaling. Used by fast mode for exp, softmax and attention.
template <class D>
HWY_INLINE hn::Vec<D> ExpFast(D d, hn::Vec<D> x) {
  const auto lo = F(d, -87.3f);
  const auto hi = F(d, 88.3f);
  const auto keep = hn::Ge(x, lo);  // false for NaN
  auto xs = hn::IfThenElse(hn::Gt(x, hi), hi, x);
  xs = hn::IfThenElseZero(keep, xs);
  auto res = ExpFastCore(d, xs);
  res = hn::IfThenElse(hn::Lt(x, lo), hn::Zero(d), res);
  return CanonicalNaN(d, hn::IfThenElse(hn::IsNaN(x), x, res));
}

// ExpFast for an argument <= 0 or NaN (x - m for a softmax row's maximum m, -z in GeluErfFast): the clamp at
// 88.3 never acts, and a NaN lane is passed on as it is, not made canonical, for callers that make their
// results canonical anyway (the softmax's normalisation turns a row with a NaN into canonical NaN as ExpFast's
// canonical NaN would; GeluSpecials gives a NaN input canonical NaN). Three compares and five blends fewer per
// vector than ExpFast (kernels-attention.md section 2).
template <class D>
HWY_INLINE hn::Vec<D> ExpNonPositiveFast(D d, hn::Vec<D> x) {
  const auto keep = hn::Ge(x, F(d, -87.3f));  // false for NaN
  const auto res = hn::IfThenElseZero(keep, ExpFastCore(d, hn::IfThenElseZero(keep, x)));
  return hn::IfThenElse(hn::IsNaN(x), x, res);
}

// The Exp operator's exponential: ExpFull in both flavours (fast: fused steps). FastMath.Exp clamps its
// argument at 88.3, which would turn exp(88.5) and exp(100) into finite wrong values; it is kept for the
// non-positive arguments of softmax and attention, where that cannot happen.
template <bool kExact, class D>
HWY_INLINE hn::Vec<D> Exp(D d, hn::Vec<D> x) {
  return ExpFull<kExact>(d, x);
}
template <bool kExact, class D>
HWY_INLINE hn::Vec<D> ExpNonPositive(D d, hn::Vec<D> x) {
  if constexpr (kExact) {
    return ExpNonPositiveExact(d, x);
  } else {
    return ExpFast(d, x);
  }
}

// log(x) (exact-transcendentals.md "log(x)"): subnormals scaled by 2^24 first, m in [sqrt(1/2), sqrt(2)).
template <bool kExact, class D>
HWY_INLINE hn::Vec<D> Log(D d, hn::Vec<D> x) {
  const hn::RebindToSigned<D> di;
  const hn::RebindToUnsigned<D> du;
  const auto sub = hn::Lt(x, F(d, 1.17549435e-38f));
  const auto xs = hn::IfThenElse(sub, hn::Mul(x, F(d, 16777216.0f)), x);
  const auto ix = hn::Sub(hn::BitCast(du, xs), hn::Set(du, 0x3F3504F3u));
  const auto e = hn::BitCast(du, hn::ShiftRight<23>(hn::BitCast(di, ix)));
  const auto m = hn::BitCast(d, hn::Add(hn::And(ix, hn::Set(du, 0x007FFFFFu)), hn::Set(du, 0x3F3504F3u)));
  auto ef = hn::Sub(hn::BitCast(d, hn::Add(e, hn::Set(du, 0x4B400000u))), F(d, 12582912.0f));
  ef = hn::IfThenElse(sub, hn::Sub(ef, F(d, 24.0f)), ef);
  const auto f = hn::Sub(m, F(d, 1.0f));
  const auto s = hn::Div(f, hn::Add(F(d, 2.0f), f));
  const auto z = hn::Mul(s, s);
  auto w = MulAddE<kExact>(F(d, 0.0909090936f), z, F(d, 0.111111112f));
  w = MulAddE<kExact>(w, z, F(d, 0.142857149f));
  w = MulAddE<kExact>(w, z, F(d, 0.200000003f));
  w = MulAddE<kExact>(w, z, F(d, 0.333333343f));
  const auto s2 = hn::Add(s, s);
  const auto logm = MulAddE<kExact>(s2, hn::Mul(z, w), s2);
  auto r = MulAddE<kExact>(ef, F(d, 0.693145751953125f), MulAddE<kExact>(ef, F(d, 1.4286068e-6f), logm));
  r = hn::IfThenElse(hn::Gt(x, F(d, 3.40282347e+38f)), PosInf(d), r);
  r = hn::IfThenElse(hn::Eq(x, hn::Zero(d)), hn::Neg(PosInf(d)), r);
  const auto bad = hn::Or(hn::IsNaN(x), hn::Lt(x, hn::Zero(d)));
  const auto qnan = hn::BitCast(d, hn::Set(du, 0x7FC00000u));
  return hn::IfThenElse(bad, qnan, r);
}

// sigmoid(x) = num / (1 + s), s = exp(0 - |x|), num = 1 for x >= 0 else s.
template <bool kExact, class D>
HWY_INLINE hn::Vec<D> Sigmoid(D d, hn::Vec<D> x) {
  const auto s = ExpFull<kExact>(d, hn::Sub(hn::Zero(d), AbsBits(d, x)));
  const auto one = F(d, 1.0f);
  const auto num = hn::IfThenElse(hn::Ge(x, hn::Zero(d)), one, s);
  const auto r = hn::Div(num, hn::Add(one, s));
  return CanonicalNaN(d, hn::IfThenElse(hn::IsNaN(x), x, r));
}

// tanh(x): odd polynomial below 0.6, 1 - 2/(exp(2|x|) + 1) above; the sign of x OR-ed in last.
template <bool kExact, class D>
HWY_INLINE hn::Vec<D> Tanh(D d, hn::Vec<D> x) {
  const auto ax = AbsBits(d, x);
  const auto z = hn::Mul(ax, ax);
  auto p = MulAddE<kExact>(F(d, -0.0058951583f), z, F(d, 0.020795971f));
  p = MulAddE<kExact>(p, z, F(d, -0.05378383f));
  p = MulAddE<kExact>(p, z, F(d, 0.13331924f));
  p = MulAddE<kExact>(p, z, F(d, -0.333333f));
  const auto small = MulAddE<kExact>(ax, hn::Mul(z, p), ax);
  const auto e = ExpFull<kExact>(d, hn::Add(ax, ax));
  const auto one = F(d, 1.0f);
  const auto large = hn::Sub(one, hn::Div(F(d, 2.0f), hn::Add(e, one)));
  const auto r = OrSign(d, hn::IfThenElse(hn::Lt(ax, F(d, 0.6f)), small, large), x);
  return CanonicalNaN(d, hn::IfThenElse(hn::IsNaN(x), x, r));
}

// erf(|x|) for |x| < 0.5.
template <bool kExact, class D>
HWY_INLINE hn::Vec<D> ErfSmall(D d, hn::Vec<D> ax, hn::Vec<D> z) {
  auto p = MulAddE<kExact>(F(d, -0.0007692853f), z, F(d, 0.0052003083f));
  p = MulAddE<kExact>(p, z, F(d, -0.02686312f));
  p = MulAddE<kExact>(p, z, F(d, 0.11283774f));
  p = MulAddE<kExact>(p, z, F(d, -0.37612638f));
  p = MulAddE<kExact>(p, z, F(d, 1.1283792f));
  return hn::Mul(ax, p);
}

// The rounding error of z = a * a (a >= 0, z its rounded square): Dekker's split of a into 12-bit halves, the
// same sum in both flavours (an error term, not a Horner step), so exact bits do not depend on FMA.
template <class D>
HWY_INLINE hn::Vec<D> SquareLow(D d, hn::Vec<D> a, hn::Vec<D> z) {
  const auto split = hn::Mul(a, F(d, 4097.0f));
  const auto hi = hn::Sub(split, hn::Sub(split, a));
  const auto lo = hn::Sub(a, hi);
  return hn::Add(hn::Add(hn::Sub(hn::Mul(hi, hi), z), hn::Mul(F(d, 2.0f), hn::Mul(hi, lo))), hn::Mul(lo, lo));
}

// erfc(|x|) for |x| >= 0.5: exp(-(z + zLo)) as exp(-z)*(1 - zLo), times t*G(1/|x| - 1).
template <bool kExact, class D>
HWY_INLINE hn::Vec<D> ErfcLarge(D d, hn::Vec<D> ax, hn::Vec<D> z) {
  static constexpr float kG[17] = {-0.00057763467f, 0.0017893383f,  -0.00010074016f, -0.004373198f,  0.0034639547f,
                                   0.0015023724f,   -0.0009413088f, -0.0018891813f,  -0.0002586738f, 0.0052144383f,
                                   -0.0103428485f,  0.015788378f,   -0.018338649f,   0.008167262f,   0.035529688f,
                                   -0.1543716f,     0.42758358f};
  const auto one = F(d, 1.0f);
  const auto t = hn::Div(one, ax);
  const auto s = hn::Sub(t, one);
  auto g = F(d, kG[0]);
  for (int k = 1; k < 17; ++k) g = MulAddE<kExact>(g, s, F(d, kG[k]));
  auto z_lo = SquareLow(d, ax, z);
  z_lo = hn::IfThenElse(hn::Ge(ax, F(d, 64.0f)), hn::Zero(d), z_lo);
  const auto exp_neg_z = hn::Mul(ExpFull<kExact>(d, hn::Sub(hn::Zero(d), z)), hn::Sub(one, z_lo));
  return hn::Mul(exp_neg_z, hn::Mul(t, g));
}

template <bool kExact, class D>
HWY_INLINE hn::Vec<D> Erf(D d, hn::Vec<D> x) {
  const auto ax = AbsBits(d, x);
  const auto z = hn::Mul(ax, ax);
  const auto small = ErfSmall<kExact>(d, ax, z);
  const auto large = hn::Sub(F(d, 1.0f), ErfcLarge<kExact>(d, ax, z));
  const auto r = OrSign(d, hn::IfThenElse(hn::Lt(ax, F(d, 0.5f)), small, large), x);
  return CanonicalNaN(d, hn::IfThenElse(hn::IsNaN(x), x, r));
}

// 1 + erf(x) without cancellation for negative x: erfc(|x|) itself there.
template <bool kExact, class D>
HWY_INLINE hn::Vec<D> OnePlusErf(D d, hn::Vec<D> x) {
  const auto ax = AbsBits(d, x);
  const auto z = hn::Mul(ax, ax);
  const auto one = F(d, 1.0f);
  const auto small = hn::Add(one, OrSign(d, ErfSmall<kExact>(d, ax, z), x));
  const auto erfc = ErfcLarge<kExact>(d, ax, z);
  const auto large = hn::IfThenElse(hn::Lt(x, hn::Zero(d)), erfc, hn::Sub(F(d, 2.0f), erfc));
  const auto r = hn::IfThenElse(hn::Lt(ax, F(d, 0.5f)), small, large);
  return CanonicalNaN(d, hn::IfThenElse(hn::IsNaN(x), x, r));
}

// gelu(-inf) = -0, gelu(+inf) = +inf, NaN canonical.
template <class D>
HWY_INLINE hn::Vec<D> GeluSpecials(D d, hn::Vec<D> x, hn::Vec<D> r) {
  r = hn::IfThenElse(hn::Eq(x, hn::Neg(PosInf(d))), hn::Neg(hn::Zero(d)), r);
  r = hn::IfThenElse(hn::Eq(x, PosInf(d)), PosInf(d), r);
  return CanonicalNaN(d, hn::IfThenElse(hn::IsNaN(x), x, r));
}

// Fast flavour of the erf form (exact-transcendentals.md section 8): with a = |y| (at most 10, where erfc is 0
// in fp32), erfc(a) = exp(-a^2) * erfcx(a), erfcx a rational function of a/10 of degrees 5 and 6 fitted on
// [0, 10] (tools/fit_gelu_erfcx.py: relative error 3.8e-9 in double), the exponent's rounding corrected as in
// ErfcLarge (SquareLow); then 1 + erf(y) is erfc(a) for y < 0 and 2 - erfc(a) otherwise. One exponential and one
// division instead of both branches of OnePlusErf (a 17-term polynomial, a division and an exponential on every lane):
// Zen 3, AVX2, one thread, 1.5M values: 2.38 -> 1.49 ns per element; 14 ulp on [-3, 10] (13 for the exact flavour;
// full sweeps: AVX2 12.8, SSE4 13.2).
template <class D>
HWY_INLINE hn::Vec<D> GeluErfFast(D d, hn::Vec<D> x) {
  const auto y = hn::Mul(x, F(d, 0.70710677f));
  const auto a = hn::Min(AbsBits(d, y), F(d, 10.0f));
  const auto z = hn::Mul(a, a);
  const auto e = hn::Mul(ExpNonPositiveFast(d, hn::Neg(z)), hn::Sub(F(d, 1.0f), SquareLow(d, a, z)));
  const auto t = hn::Mul(a, F(d, 0.1f));
  auto p = hn::MulAdd(F(d, -159.359344f), t, F(d, 190.817581f));
  p = hn::MulAdd(p, t, F(d, 180.855911f));
  p = hn::MulAdd(p, t, F(d, 64.38134f));
  p = hn::MulAdd(p, t, F(d, 11.6239109f));
  p = hn::MulAdd(p, t, F(d, 1.0f));
  auto q = hn::MulAdd(F(d, -2824.48706f), t, F(d, 3381.77173f));
  q = hn::MulAdd(q, t, F(d, 3192.2251f));
  q = hn::MulAdd(q, t, F(d, 1157.15869f));
  q = hn::MulAdd(q, t, F(d, 222.866486f));
  q = hn::MulAdd(q, t, F(d, 22.9077072f));
  q = hn::MulAdd(q, t, F(d, 1.0f));
  const auto erfc = hn::Mul(e, hn::Div(p, q));
  const auto s = hn::IfThenElse(hn::Lt(x, hn::Zero(d)), erfc, hn::Sub(F(d, 2.0f), erfc));
  return GeluSpecials(d, x, hn::Mul(hn::Mul(F(d, 0.5f), x), s));
}

// (0.5 x)(1 + erf(x * 0.70710677)); the fast flavour is GeluErfFast.
template <bool kExact, class D>
HWY_INLINE hn::Vec<D> GeluErf(D d, hn::Vec<D> x) {
  if constexpr (!kExact) return GeluErfFast(d, x);
  const auto y = hn::Mul(x, F(d, 0.70710677f));
  return GeluSpecials(d, x, hn::Mul(hn::Mul(F(d, 0.5f), x), OnePlusErf<kExact>(d, y)));
}

// x * sigmoid(2u), u = 0.79788456 (x + 0.044715 x^3).
template <bool kExact, class D>
HWY_INLINE hn::Vec<D> GeluTanh(D d, hn::Vec<D> x) {
  const auto x3 = hn::Mul(hn::Mul(x, x), x);
  const auto u = hn::Mul(F(d, 0.79788456f), MulAddE<kExact>(F(d, 0.044715f), x3, x));
  return GeluSpecials(d, x, hn::Mul(x, Sigmoid<kExact>(d, hn::Add(u, u))));
}

// ---- the canonical 16-partial sum (ops-norms.md) ----
// Partials live in 16 floats; a vector of N lanes (N divides 16: use a CappedTag<float, 16>) at offset k*N
// holds partials k*N .. k*N+N-1, so term j + k*N + lane of a 16-aligned block j lands in partial
// (j + k*N + lane) mod 16 whatever N is.
template <class D>
HWY_INLINE void AddToPartials(D d, float* partials, size_t k, hn::Vec<D> v) {
  float* p = partials + k * hn::Lanes(d);
  hn::Store(hn::Add(hn::Load(d, p), v), d, p);
}

// The fixed tree: a[t] = P[t] + P[t+8], b[t] = a[t] + a[t+4], c[t] = b[t] + b[t+2], c[0] + c[1].
HWY_INLINE float Sum16Tree(const float* partials) {
  float a[8], b[4];
  for (int t = 0; t < 8; ++t) a[t] = partials[t] + partials[t + 8];
  for (int t = 0; t < 4; ++t) b[t] = a[t] + a[t + 4];
  const float c0 = b[0] + b[2];
  const float c1 = b[1] + b[3];
  return c0 + c1;
}

// Maximum of the lanes of v, which holds no NaN (a running maximum that skipped them, from -inf). Max is exact,
// so the lane order does not change the value (at most the sign of a zero maximum, which no caller can observe:
// exp(+-0 - +-0) is 1 either way). The lane-by-lane scalar loop this replaces mispredicted its data-dependent
// branch every few lanes: half of a 128-wide softmax row's time on AVX-512.
template <class D>
HWY_INLINE float MaxLanesNoNaN(D d, hn::Vec<D> v) {
  return hn::GetLane(hn::MaxOfLanes(d, v));
}

}  // namespace onemodel::kern::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif
