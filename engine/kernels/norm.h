// Row normalisation steps of LayerNormalization, RMSNormalization, InstanceNormalization and
// GroupNormalization (ops-norms.md): the statistics of one row (steps 1-3) and the affine output (step 4).
// Every target gives the bits of the scalar definition: the sums are the canonical 16-partial sum (a vector's
// lanes hold different partials, never different terms of one), and every element-wise step is one rounded
// operation in the spec's order. NaN outputs are 0x7FC00000 (the operators are exact in both modes).
#pragma once
#include <cstdint>

#include "kernels/isa.h"

namespace onemodel::kern {

struct NormStats {
  float mean, inv;
};

// mean = Sum16(x) / n (rms: 0), inv = 1 / sqrt(Sum16((x - mean)^2) / n + epsilon), n = float(cols).
NormStats norm_row_stats(Isa isa, const float* x, int64_t cols, float epsilon, bool rms);
// y[j] = (((x[j] - mean) * inv) * scale[j]) + bias[j]; bias null: the addition is skipped. x == y allowed.
void norm_row_apply(Isa isa, const float* x, float* y, int64_t cols, NormStats st, const float* scale,
                    const float* bias);
// y[j] = (((x[j] - mean) * inv) * scale) + bias: one scale and bias for the whole row (always added).
void norm_row_apply_uniform(Isa isa, const float* x, float* y, int64_t cols, NormStats st, float scale, float bias);

struct NormFns {
  NormStats (*stats)(const float* x, int64_t cols, float epsilon, bool rms);
  void (*apply)(const float* x, float* y, int64_t cols, NormStats st, const float* scale, const float* bias);
  void (*apply_uniform)(const float* x, float* y, int64_t cols, NormStats st, float scale, float bias);
};

}  // namespace onemodel::kern
