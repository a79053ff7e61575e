// The integer matrix product of the int8 operators (int8.md): C[m x n] = A[m x k] * B[k x n] on int16
// operands (8-bit values less their zero points, so within [-255, 255]) with int32 sums. Integer sums are
// exact in any order (two's-complement wrap-around is associative), so every target, tile and thread count
// gives the same bits as the plain loop. Pairs of k are multiplied and added in one instruction where the
// target has it (x86 pmaddwd, wasm i32x4.dot_i16x8, NEON smlal; a product of two values of magnitude <= 255
// and a sum of two such products cannot overflow int32); NEON CPUs with SDOT take four int8 pairs at once
// (QGemmFns::dot).
#pragma once
#include <cstdint>

#include "base/thread_pool.h"
#include "kernels/isa.h"

namespace onemodel::kern {

// A is row-major with row stride lda, B row-major with row stride ldb, C row-major with row stride ldc.
// C must not overlap A or B. k = 0 gives 0 everywhere.
void qgemm_s16(Isa isa, int64_t m, int64_t n, int64_t k, const int16_t* a, int64_t lda, const int16_t* b, int64_t ldb,
               int32_t* c, int64_t ldc, ThreadPool* pool);

// The packed-B layout of `isa` (QGemmFns::nr and ::pair), for callers that write B packed themselves (an
// im2col written straight into strips), and the product on such a B.
struct QGemmLayout {
  int64_t nr, pair;
  int64_t kq(int64_t k) const { return (k + pair - 1) / pair; }
  int64_t strips(int64_t n) const { return (n + nr - 1) / nr; }
  int64_t packed_size(int64_t k, int64_t n) const { return strips(n) * kq(k) * nr * pair; }
  // Index of element (p, j) of B in the packed buffer.
  int64_t at(int64_t k, int64_t p, int64_t j) const {
    return ((j / nr * kq(k) + p / pair) * nr + j % nr) * pair + p % pair;
  }
};
QGemmLayout qgemm_layout(Isa isa);
// As qgemm_s16 with B already packed (every element, padding 0, at QGemmLayout::at). A's rows need
// kq * pair readable int16 (pad an odd k with one 0 per row).
void qgemm_s16_packed(Isa isa, int64_t m, int64_t n, int64_t k, const int16_t* a, int64_t lda, const int16_t* packed_b,
                      int32_t* c, int64_t ldc, ThreadPool* pool);

// One target's entry points (qgemm-inl.h defines them per target; qgemm.cc picks one per Isa).
struct QGemmFns {
  int64_t nr;    // columns of a packed B strip
  int64_t pair;  // k values per int32 lane of a packed B row (2 with a pairwise multiply-add, 1 otherwise)
  // Packs B (k x n) into strips: strip s, row pair q, column j, member t at
  // ((s * kq + q) * nr + j) * pair + t, kq = ceil(k / pair); padding (k or n past the end) is 0.
  void (*pack_b)(int64_t k, int64_t n, const int16_t* b, int64_t ldb, int16_t* dst);
  // C = A * packed B; A's rows are read in place (k padded with 0 to a multiple of pair by the caller:
  // `a` has at least kq * pair readable columns per row).
  void (*compute)(int64_t m, int64_t n, int64_t k, const int16_t* a, int64_t lda, const int16_t* packed_b, int32_t* c,
                  int64_t ldc, ThreadPool* pool);
  // The whole product on an int8 dot-product instruction (NEON SDOT, docs/arm64.md section 4), or nullptr on
  // targets without one. Returns false, leaving C untouched, when it cannot run: the CPU lacks the
  // instruction, or a row of A or a column of B spans more than 255 (k >= 1, m, n >= 1).
  using DotFn = bool (*)(int64_t m, int64_t n, int64_t k, const int16_t* a, int64_t lda, const int16_t* b, int64_t ldb,
                         int32_t* c, int64_t ldc, ThreadPool* pool);
  DotFn dot;
};

}  // namespace onemodel::kern
