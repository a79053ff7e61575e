// The matrix products of the recurrent operators: C[i][j] = sum_p A[i][p] * Wt[j][p], i.e. A . W^T with W
// stored row-major as the operators hold it ([gates * hidden, k]), so no transposed copy is needed.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/gemm.h"
#include "runtime/kernel.h"

namespace onemodel::rt::recurrent {

// The shared GEMM (kernels/gemm.h) over strided views: B[p][j] = w[j * ldw + p]. Exact mode follows
// exact-mode.md "Matrix product" (one accumulator per output from +0, increasing p, unfused, canonical NaN);
// fast mode may fuse. Neither depends on the thread count. C must not overlap A or W.
inline void product(const RunContext& ctx, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* w,
                    int64_t ldw, float* c, int64_t ldc) {
  kern::gemm_f32(ctx.isa, ctx.exact, m, n, k, kern::MatrixView{a, lda, 1}, kern::MatrixView{w, 1, ldw}, c, ldc,
                 ctx.pool);
}

// W^T and R^T of every direction packed once (constant weights, prepare()): B operands of the products
// above with the same bits (kernels/gemm.h: gemm_f32_packed equals gemm_f32).
struct PackedWeights {
  kern::Isa isa = kern::Isa::Scalar;
  const void* r_from = nullptr;                            // R's storage (W's is the SharedPack key)
  std::vector<std::shared_ptr<const kern::PackedB>> w, r;  // per direction; r is null for the GRU split form
};

// Like product() with B packed: C = A . W^T.
inline void product_packed(const RunContext& ctx, int64_t m, const float* a, int64_t lda, const kern::PackedB& w,
                           float* c, int64_t ldc) {
  kern::gemm_f32_packed(ctx.isa, ctx.exact, m, kern::MatrixView{a, lda, 1}, w, c, ldc, ctx.pool);
}

}  // namespace onemodel::rt::recurrent
