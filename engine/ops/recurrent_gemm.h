// The matrix products of the recurrent operators: C[i][j] = sum_p A[i][p] * Wt[j][p], i.e. A . W^T with W
// stored row-major as the operators hold it ([gates * hidden, k]), so no transposed copy is needed.
#pragma once
#include <cstdint>

#include "runtime/kernel.h"

namespace onemodel::rt::recurrent {

// One accumulator per output from +0, increasing p, each product and sum rounded on its own (exact-mode.md
// "Matrix product"); the shared GEMM replaces this loop once it lands, with the same order in exact mode.
inline void product(const RunContext& ctx, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* w,
                    int64_t ldw, float* c, int64_t ldc) {
  (void)ctx;
  for (int64_t i = 0; i < m; ++i) {
    const float* ar = a + i * lda;
    for (int64_t j = 0; j < n; ++j) {
      const float* wr = w + j * ldw;
      float acc = 0.0f;
      for (int64_t p = 0; p < k; ++p) {
        const float prod = ar[p] * wr[p];
        acc = acc + prod;
      }
      c[i * ldc + j] = acc;
    }
  }
}

}  // namespace onemodel::rt::recurrent
