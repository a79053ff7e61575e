// Scalar exact-mode math (exact-transcendentals.md, exact-mode.md): the fixed fp32 exp polynomials and the
// canonical 16-partial sum. Every expression is written one rounding per operator; the engine is built with
// -ffp-contract=off so nothing is fused. Vector paths added later must reproduce these bits.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "base/bits.h"

namespace onemodel::kern {

inline constexpr uint32_t kCanonicalNanF32 = 0x7FC00000u;
inline constexpr uint64_t kCanonicalNanF64 = 0x7FF8000000000000ull;

inline float canonical_nan_f32() noexcept { return float_from_bits(kCanonicalNanF32); }
inline double canonical_nan_f64() noexcept { return double_from_bits(kCanonicalNanF64); }
// NaN -> the canonical quiet NaN; everything else unchanged.
inline float canon(float x) noexcept { return x != x ? canonical_nan_f32() : x; }
inline double canon(double x) noexcept { return x != x ? canonical_nan_f64() : x; }

// exp(x) per exact-transcendentals.md "exp(x)" (overflow to +inf above 88.72283172607422, +0 below
// -103.97207641601562, gradual underflow in between).
float exact_exp(float x) noexcept;
// ExpNonPositive: for x in [-87.33654, 0] equal to exact_exp; +0 below; canonical NaN for NaN. Arguments
// above 0 are outside its contract (callers pass x - max).
float exact_exp_nonpositive(float x) noexcept;
// FastMath.Exp of exact-transcendentals.md "Fast exponential", written without fma (fast mode only).
float fast_exp(float x) noexcept;

// The other exact fp32 functions of exact-transcendentals.md, operation for operation as written there.
// Special values are chosen at the end; every NaN result is the canonical NaN.
float exact_log(float x) noexcept;
float exact_sigmoid(float x) noexcept;
float exact_tanh(float x) noexcept;
float exact_erf(float x) noexcept;
// 1 + erf(x) without cancellation for negative x (the erf form of GELU needs it).
float exact_one_plus_erf(float x) noexcept;
float exact_gelu_erf(float x) noexcept;   // (0.5x)(1 + erf(x * 0.70710677))
float exact_gelu_tanh(float x) noexcept;  // x * sigmoid(2u), u = 0.79788456 (x + 0.044715 x^3)

}  // namespace onemodel::kern
