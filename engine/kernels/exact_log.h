// The library's exact fp32 logarithm (exact-transcendentals.md "log(x)"), needed by LogSoftmax,
// ReduceLogSum and ReduceLogSumExp.
#pragma once

namespace onemodel::kernels {

// log(x), one rounding per operator as the spec writes it: +inf above FLT_MAX, -inf for either zero,
// canonical NaN for negative x and NaN; subnormals are scaled by 2^24 first.
float exact_log(float x) noexcept;

}  // namespace onemodel::kernels
