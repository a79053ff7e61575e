// Softmax rows (kernels-attention.md "Softmax", ops-norms.md): m = max(x) ignoring NaN, e[j] = ExpNonPositive
// (x[j] - m), l = the canonical 16-partial sum of e, y[j] = e[j] / l (fast: e[j] * (1/l), the fast
// exponential). LogSoftmax: d[j] = x[j] - m, y[j] = d[j] - log(l) with the library's exact log. Every NaN
// result is 0x7FC00000 in both modes. The exact flavour gives the bits of the scalar definition on every
// target: the lanes of a vector hold different partial sums, never different terms of one.
#pragma once
#include <cstdint>

#include "kernels/isa.h"

namespace onemodel::kern {

// `rows` contiguous rows of `n` floats (x == y allowed).
void softmax_rows(Isa isa, bool exact, const float* x, float* y, int64_t rows, int64_t n);
void log_softmax_rows(Isa isa, bool exact, const float* x, float* y, int64_t rows, int64_t n);

// Attention's score rows (kernels-attention.md section 2), in place: s[j] = s[j] * scale (s[j] / scale when
// div; fast mode multiplies by 1/scale) + mask[r * mask_row + j * mask_col] (mask_col 0 or 1; none when mask is
// null), each step rounded in exact mode (fast: one multiply-add), then softmax_rows' definition.
struct ScoreSoftmax {
  float scale = 1.0f;
  bool div = false;
  const float* mask = nullptr;
  int64_t mask_row = 0, mask_col = 1;
};
void score_softmax_rows(Isa isa, bool exact, float* s, int64_t rows, int64_t n, const ScoreSoftmax& a);

// The canonical sum (ops-norms.md "The canonical sum"): term j to partial j mod 16 from +0, then the fixed tree.
float sum16_f32(Isa isa, const float* x, int64_t n);

struct SoftmaxFns {
  void (*softmax_rows)(bool exact, const float* x, float* y, int64_t rows, int64_t n);
  void (*log_softmax_rows)(bool exact, const float* x, float* y, int64_t rows, int64_t n);
  void (*score_softmax_rows)(bool exact, float* s, int64_t rows, int64_t n, const ScoreSoftmax& a);
  float (*sum16)(const float* x, int64_t n);
};

}  // namespace onemodel::kern
