// Per-channel bias for convolution outputs (kernels-gemm.md: "bias is a separate pass, never folded into the
// accumulator", so the product's bits do not depend on whether a bias exists), and a per-row scale (a
// squeeze-and-excitation gate times its features). One rounding per element: fast and exact are the same
// operation.
#pragma once
#include <cstdint>

#include "kernels/isa.h"

namespace onemodel::kern {

// y[c * spatial + s] = y[c * spatial + s] + bias[c] for c < channels, s < spatial. NaN results are the
// canonical quiet NaN when `exact` (exact-mode.md: NaN payloads are not portable).
void add_channel_bias(Isa isa, bool exact, float* y, const float* bias, int64_t channels, int64_t spatial);

// y[r * size + j] = scale[r] * x[r * size + j] (`scale_first`; else x[...] * scale[r], the operand order of the
// program it runs) for r < rows, j < size; y may be x. NaN results canonical when `exact`.
void scale_rows(Isa isa, bool exact, bool scale_first, const float* scale, const float* x, int64_t rows, int64_t size,
                float* y);

// One target's entry points (what bias-inl.h defines per target; bias.cc picks one per Isa).
struct BiasFns {
  void (*add_channel_bias)(bool exact, float* y, const float* bias, int64_t channels, int64_t spatial);
  void (*scale_rows)(bool exact, bool scale_first, const float* scale, const float* x, int64_t rows, int64_t size,
                     float* y);
};

}  // namespace onemodel::kern
