// The fp32 matrix product (kernels-gemm.md): Goto/van de Geijn blocking with packed B strips, MC x NC tiles as
// the fixed chunks of the thread pool, and an MR x NR register microkernel per target. Both modes accumulate
// every output in one accumulator from +0 in increasing k (exact-mode.md "Matrix product"); exact rounds the
// product and the sum separately and rewrites NaN to 0x7FC00000, fast fuses them where the target has FMA.
// So neither mode depends on the thread count, the tile shape or the k-blocking.
#pragma once
#include <cstdint>
#include <memory>

#include "base/thread_pool.h"
#include "kernels/isa.h"

namespace onemodel::kern {

// Element (i, j) of a matrix view is data[i * row_stride + j * col_stride] (transposes need no copy).
struct MatrixView {
  const float* data;
  int64_t row_stride;
  int64_t col_stride;
};

// C[m x n] (row stride ldc) = A[m x k] * B[k x n]. exact: exact-mode.md order (one accumulator per output from
// +0, increasing k, product and sum rounded separately, canonical NaN); fast: same order with fused
// multiply-add. C must not overlap A or B. k = 0 gives +0 everywhere.
void gemm_f32(Isa isa, bool exact, int64_t m, int64_t n, int64_t k, MatrixView a, MatrixView b, float* c, int64_t ldc,
              ThreadPool* pool);

// How a packing keeps its values (docs/fp16.md section 6, compact weights): float32, or 16 bits per value when
// every value of the matrix is one of that format's (weights rounded to it beforehand), widened exactly into a
// per-thread float32 copy at every use. The widened packing is the float32 packing, so the bits are the same.
enum class PackStorage : uint8_t { F32, F16, BF16 };

// B packed once (constant weights) for a given target; gemm_f32_packed gives bits identical to gemm_f32.
class PackedB;  // opaque, immutable, shareable across threads (defined in gemm.cc)
std::shared_ptr<const PackedB> pack_b_f32(Isa isa, int64_t k, int64_t n, MatrixView b,
                                          PackStorage storage = PackStorage::F32);
// Uses the k and n B was packed with. Throws Error(InvalidArgument) when `isa` is not the packing target.
// `epilogue` (optional) runs on every finished block of rows x columns of C, as in gemm_f32_panels.
struct TileEpilogue;
void gemm_f32_packed(Isa isa, bool exact, int64_t m, MatrixView a, const PackedB& b, float* c, int64_t ldc,
                     ThreadPool* pool, const TileEpilogue* epilogue = nullptr);

// Columns of a packed B strip on `isa` (the register tile's width).
int64_t gemm_nr(Isa isa);
// Rows of a packed A strip on `isa` (the register tile's height): 12, 6 or 4.
int64_t gemm_mr(Isa isa);

// The shape a PackedB was made for (callers check a constant against the run's shapes).
int64_t packed_b_rows(const PackedB& b);  // k
int64_t packed_b_cols(const PackedB& b);  // n

// A matrix product whose B is never materialised (convolution as an implicit GEMM, kernels/conv.h): the
// product asks `fill` for one panel at a time, rows [p0, p0 + kc) and columns [j0, j0 + nc) of B, laid out as
// packed strips of `nr` columns (strip s at panel + s * kc * nr, element (p, q) at p * nr + q, the ragged last
// strip zero-padded to nr). Panels are at most 256 rows by 128 columns and stay in cache.
struct PanelSource {
  void (*fill)(const void* ctx, int64_t p0, int64_t kc, int64_t j0, int64_t nc, int64_t nr, float* panel);
  const void* ctx;
  // Optional: B read in place, element (p, j) at direct[p * ldb + j] (a 1x1 convolution's input), or at
  // direct[row_off[p] + j] when row_off is set (k entries: the rows of a stride-1 convolution's im2col over a
  // zero-padded input). The microkernel then reads whole strips in place and `fill` is not called; only a
  // ragged last strip is copied. Same per-output order, same bits.
  const float* direct = nullptr;
  int64_t ldb = 0;
  const int64_t* row_off = nullptr;
  // Optional: all of B already packed in pack_b_f32's layout (k-block p0 at p0 * n_pad, strip s at
  // + s * kc * NR); `fill` is not called.
  const float* packed = nullptr;
};

// A packed once (constant weights): all rows, every k-block, in the register tile's row strips.
class PackedA;  // opaque, immutable, shareable across threads (defined in gemm.cc)
std::shared_ptr<const PackedA> pack_a_f32(Isa isa, int64_t m, int64_t k, MatrixView a,
                                          PackStorage storage = PackStorage::F32);
// The m x k float32 values (row-major, at `out`) a float32 packing of A was made from: the exact inverse of
// pack_a_f32. Throws Error(Internal) for a 16-bit packing.
void unpack_a_f32(const PackedA& a, float* out);
// C[m x n] = A * B with A packed and B from panels: the same per-output order as gemm_f32 (one accumulator
// from +0, increasing k), hence the same bits in exact mode. Throws Error(InvalidArgument) when `isa` is not
// the packing target.
// `epilogue` (optional) is called once for every finished block of C, rows [i0, i0 + rows) and columns
// [j0, j0 + cols) at c (row stride ldc), after its last k-block and on the thread that computed it, while the
// block is still in cache (convolution's bias and fused element-wise chains, kernels/conv.h).
// An epilogue the microkernel applies in registers to a finished register tile on its last k-block
// (kernels-gemm.md section 7): C[i][j] = post(tail(pre(((acc + bias[i] or col_bias[j]) * scale[i]) + shift[i]) +
// res[i * res_ld + j])) for the parts that are set, each step one rounded operation, NaN canonical in exact mode: the
// operations, in their order, of the element-wise program it stands for (simd_common-inl.h's formulas), so the bits are
// the program's. GeluErf and GeluTanh are vmath-inl.h's functions, which the Gelu instruction's array kernels map;
// unlike the other tails they are applied to the stored tile (gemm-inl.h GeluTile), and nothing follows them.
// HardSwishSteps is hard-swish as exporters write it, four rounded steps: x * clip(x + add, lo, hi), then divided
// by (or multiplied by) `last`. `pre` and `post` are up to kRegScalarSteps steps by one value each, before and
// after the tail (never with a residual): a Mul, Add or Sub as ew_program-inl.h's ChainLoop encodes them, v * m +
// a (Mul s is (s, -0), Add s is (1, s), Sub s is (1, -s)), or a Max or Min with the value, in the instruction's
// operand order (ew_program-inl.h RunOne's formula: NaN wins, the first operand's if both; equal operands give
// the second).
enum class RegTail : uint8_t { None, Relu, Clip, LeakyRelu, HardSwish, HardSwishSteps, GeluErf, GeluTanh };
// The tails applied to the stored tile, after which no step may follow.
constexpr bool gelu_tail(RegTail t) { return t == RegTail::GeluErf || t == RegTail::GeluTanh; }
enum class RegStepOp : uint8_t { Affine, Max, Min };
struct RegScalarStep {
  RegStepOp op = RegStepOp::Affine;
  bool value_first = false;   // Max / Min: the value is the first operand
  float m = 1.0f, a = -0.0f;  // Affine: v * m + a; Max / Min: the value is a
};
constexpr int kRegScalarSteps = 2;
struct RegEpilogue {
  const float* bias = nullptr;      // one value per row of C
  const float* col_bias = nullptr;  // one value per column of C (a MatMul's bias row; never with bias)
  const float* scale = nullptr;     // one value per row of C (a batch normalisation's a, passes/batchnorm_affine.cc)
  const float* shift = nullptr;     // one value per row of C (its b)
  const float* res = nullptr;       // rows of res_ld floats, one per row of C
  int64_t res_ld = 0;
  bool res_first = false;  // res + v rather than v + res (which operand a NaN result keeps, in fast mode)
  RegTail tail = RegTail::None;
  float lo = 0, hi = 0;           // Clip's bounds (and HardSwishSteps'); lo is LeakyRelu's alpha
  float hs_add = 0, hs_last = 1;  // HardSwishSteps: the added constant and the last step's operand
  bool hs_div = false;            // HardSwishSteps: the last step divides (else multiplies)
  int pres = 0, posts = 0;
  RegScalarStep pre[kRegScalarSteps], post[kRegScalarSteps];
};

struct TileEpilogue {
  void (*apply)(const void* ctx, int64_t i0, int64_t rows, int64_t j0, int64_t cols, float* c, int64_t ldc);
  const void* ctx;
  // Optional: called before the products of that block's last k-block, so that what `apply` will read besides C
  // (a residual) is on its way into the cache while they run.
  void (*prefetch)(const void* ctx, int64_t i0, int64_t rows, int64_t j0, int64_t cols) = nullptr;
  // Optional: the same epilogue in registers (C's rows and columns from (0, 0)). The panels then apply it to
  // every full-width register tile of a strip of at least two rows and call `apply` only for the rest of the
  // strip's columns; `apply` must do exactly what `reg` describes.
  const RegEpilogue* reg = nullptr;
};
void gemm_f32_panels(Isa isa, bool exact, const PackedA& a, int64_t n, const PanelSource& b, float* c, int64_t ldc,
                     ThreadPool* pool, const TileEpilogue* epilogue = nullptr);

// C[m x n] = A * packed B where A is never materialised either: `at` gives panels of A^T (k x m; a convolution's
// im2col, run transposed), which the product asks for once per k-block with all m columns in strips of
// gemm_mr(isa) (A's packed strips, built in parallel over the k-blocks into `a_buf`, which holds
// k * ceil(m / mr) * mr floats). Same bits as gemm_f32_packed with A = (A^T)^T materialised. `at.direct`,
// `row_off` and `packed` are not used.
void gemm_f32_packed_at(Isa isa, bool exact, int64_t m, const PanelSource& at, const PackedB& b, float* a_buf, float* c,
                        int64_t ldc, ThreadPool* pool, const TileEpilogue* epilogue = nullptr);

// One target's entry points (gemm-inl.h defines them per target; gemm.cc picks one per Isa).
struct GemmFns {
  int64_t nr;  // width of a packed B strip; the packed buffer holds ceil(n / nr) * nr columns for every k
  // Packs all of B (k x n) into dst (k * ceil(n/nr) * nr floats, 64-byte aligned).
  void (*pack_b)(int64_t k, int64_t n, MatrixView b, float* dst, ThreadPool* pool);
  // C = A * packed B.
  void (*compute)(bool exact, int64_t m, int64_t n, int64_t k, MatrixView a, const float* packed_b, float* c,
                  int64_t ldc, ThreadPool* pool, const TileEpilogue* epilogue);
  int64_t mr;  // rows of a packed A strip; packed A holds ceil(m / mr) * mr rows for every k
  // Packs all of A (m x k) into dst (k * ceil(m/mr) * mr floats): k-block p0 at dst + p0 * m_pad, its strip
  // of rows r0.. at + r0 * kc, element (p, r) at p * mr + r.
  void (*pack_a)(int64_t m, int64_t k, MatrixView a, float* dst);
  void (*compute_panels)(bool exact, int64_t m, int64_t n, int64_t k, const float* packed_a, const PanelSource& b,
                         float* c, int64_t ldc, ThreadPool* pool, const TileEpilogue* epilogue);
  // Packs all of A (m x k) into dst, as pack_a, from panels of A^T (gemm_f32_packed_at).
  void (*pack_a_panels)(int64_t m, int64_t k, const PanelSource& at, float* dst, ThreadPool* pool);
  int64_t kc;  // rows of a k-block of packed A (the last may be shorter)
};

}  // namespace onemodel::kern
