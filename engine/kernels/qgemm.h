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

// One packed strip of B (QGemmLayout of `isa`: nr columns, kq lane groups) whose rows are nr consecutive
// values each: row p is base + tap[p] (p < k), rows past k are 0. The im2col of a padded stride-1
// convolution input (ops/int_im2col.h): pairs of rows interleaved with vector shuffles, which clang does not
// form from the element-wise loop in wasm.
void qgemm_strip_from_rows(Isa isa, const int16_t* base, const int64_t* tap, int64_t k, int16_t* dst);

// The byte product (docs/int8.md "Integer product kernel"), where the target and CPU have one (AVX-512 VNNI):
// C[i][j] = sum_p A[i][p] * B[p][j] + s[i] * u[j] - r[i] - v[i] * w[j], all modulo 2^32, with A signed bytes,
// B unsigned bytes and u[j] = sum_p B[p][j] (over every packed row: padding rows count). The operators pass raw
// 8-bit values shifted by a constant into those ranges and let the correction terms (sums times zero points)
// turn the raw product into the sum of (a - za) * (b - zb). v and w may both be null (no last term).
struct Q8Fix {
  const int32_t* s;  // per row of A
  const int32_t* r;  // per row
  const int32_t* v;  // per row, or null
  const int32_t* w;  // per column, or null
};
// The packed-B layout of the byte product of `isa` on this CPU ({nr, 4}: strips of nr columns, four k values
// of a column per int32 lane, element (p, j) at QGemmLayout::at), or nr = 0 when there is none.
QGemmLayout qgemm_q8_layout(Isa isa);
// C = A * packed B + the correction of `fix`, on the byte product (qgemm_q8_layout(isa).nr > 0). A's rows need
// kq * 4 readable bytes (padding k with 0); packed B's padding rows count in u, so they should be 0.
void qgemm_q8_packed(Isa isa, int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda, const uint8_t* packed_b,
                     const Q8Fix& fix, int32_t* c, int64_t ldc, ThreadPool* pool);

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
  // The byte product's strip width and entry point (qgemm_q8_packed without its checks), or 0 and nullptr on
  // targets without one. Runs only on CPUs with the instructions (the dispatcher checks).
  int64_t q8_nr;
  using Q8Fn = void (*)(int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda, const uint8_t* packed_b,
                        const Q8Fix& fix, int32_t* c, int64_t ldc, ThreadPool* pool);
  Q8Fn q8;
  // qgemm_strip_from_rows on this target.
  void (*strip_from_rows)(const int16_t* base, const int64_t* tap, int64_t k, int16_t* dst);
};

}  // namespace onemodel::kern
