// Per-target code for kernels/gemm.h. Included once per target by gemm.cc through hwy/foreach_target.h.
//
// Layout (kernels-gemm.md "Structure"): B is packed for all of k and n into k-blocks of KC rows, each cut into
// strips of NR columns (element (p, j) of a strip at p*NR + j, a ragged last strip padded with +0). A tile of
// MC x NC outputs is one chunk of the pool; for each k-block it packs its rows of A into strips of MR rows
// (element (p, r) at p*MR + r) and runs the microkernel for every (B strip, A strip) pair. The microkernel keeps
// R x NR accumulators (R <= MR rows: a ragged last A strip runs a narrower instance instead of padded rows) and
// stores them back into C after each k-block; the next block reloads them, so every output still sees k in
// increasing order in one accumulator.
#if defined(ONEMODEL_KERNELS_GEMM_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEMODEL_KERNELS_GEMM_INL_H_
#undef ONEMODEL_KERNELS_GEMM_INL_H_
#else
#define ONEMODEL_KERNELS_GEMM_INL_H_
#endif

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <new>
#include <utility>

#include "base/big_buffer.h"
#include "base/thread_pool.h"
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels/gemm.h"
#include "kernels/simd_common-inl.h"
#include "kernels/vmath-inl.h"

HWY_BEFORE_NAMESPACE();
namespace onemodel::kern::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace gemm_detail {

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;
constexpr int64_t kLanes = static_cast<int64_t>(hn::MaxLanes(DF()));

// Register tiles from the spec's table, in vectors: AVX-512 12 x (2 x 16), AVX2 6 x (2 x 8), 4-lane targets
// 4 x (2 x 4), the 1-lane scalar fallback 4 x (4 x 1).
constexpr int kMR = kLanes >= 16 ? 12 : kLanes >= 8 ? 6 : 4;
constexpr int kNV = kLanes == 1 ? 4 : 2;
constexpr int64_t kNR = kNV * kLanes;
constexpr int64_t kMC = kLanes >= 8 ? 96 : 64;
constexpr int64_t kNC = kLanes == 1 ? 64 : 128;
constexpr int64_t kKC = 256;
constexpr int64_t kStripsPerPackChunk = 8;
static_assert(kMC % kMR == 0 && kNC % kNR == 0, "tiles hold whole register tiles");

// Work estimates for the pool (kernels-gemm.md): ~40 multiply-adds per ns, 0.5 ns per element packed.
constexpr double kMacsPerNs = 40.0;
constexpr double kNsPerPacked = 0.5;
constexpr double kNsPerWeightByte = 0.05;  // packed weights streamed from memory or the shared cache (ComputePanels)

// A float buffer owned by one thread, grown on demand (by half again at least, on huge pages from 2 MiB:
// base/big_buffer.h) and kept for the thread's next calls, so the steady state allocates nothing.
struct ThreadScratch {
  GrowingFloats buf;
  float* get(int64_t floats) { return buf.get(static_cast<size_t>(floats)); }
};

inline float* APackScratch() {
  thread_local ThreadScratch scratch;
  return scratch.get(kMC * kKC);
}

// Where the microkernel finds the rows of its B strip, one k step after another (`row()` then `next()`): a
// packed strip (rows NR apart, aligned) or a matrix read in place (row stride ldb; a 1x1 convolution's input,
// kernels/gemm.h PanelSource::direct). Pointers stepped rather than indices: in wasm, where V8 compiles the
// loop as clang wrote it, an index cost a shift and an add per operand per k step.
struct PackedRows {
  const float* bp;
  static constexpr bool kAligned = true;
  const float* row() const { return bp; }
  void next() { bp += kNR; }
};
struct StridedRows {  // B read in place: row p at bp + p * ldb
  const float* bp;
  int64_t ldb;
  int64_t at = 0;  // an offset, not a pointer: a pointer stepped past the last row would leave the matrix
  static constexpr bool kAligned = false;
  const float* row() const { return bp + at; }
  void next() { at += ldb; }
};
// B read in place: row p at bp + off[p] (a table costs one load per k step, 4-8% on 1x1 convolutions, so a
// uniform stride keeps StridedRows). Each k step also prefetches the strip's row kAhead steps on (its three
// lines: the rows are shifted taps, rarely aligned): every step reads a new row, and without it the product
// waited on them, the more so in exact mode, whose separate multiply and add leave the core fewer steps in flight.
// PP-OCRv4 det's 96 -> 24 3x3 at 160 x 160 in exact mode (two A strips per B strip, so B comes from L2 for
// each), old and new alternated, minima: one thread 7.71 -> 6.94 ms, two 4.89 -> 3.77; det exact 0.96x at one
// thread, 1.01x at two; ResNet-50 fast 1.01x / 0.99x (noise). 8 steps ahead gained less at two threads (0.80x).
struct OffsetRows {
  const float* bp;
  const int64_t* off;
  const int64_t* end;  // the k-block's last offset + 1
  static constexpr bool kAligned = false;
  static constexpr int64_t kAhead = 16;
  const float* row() const { return bp + *off; }
  void next() {
    if (off + kAhead < end) {
      const float* a = bp + off[kAhead];
      hwy::Prefetch(a);
      hwy::Prefetch(a + kLanes);
      hwy::Prefetch(a + kNR - 1);
    }
    ++off;
  }
};

// Where the microkernel finds its R values of A, one k step after another (`at(r)` then `next()`, until the
// stepped pointer meets `end(kc)`): a packed strip (PackA: MR values per k step) or A read in place (row-major,
// unit column stride; Compute with kInPlaceA).
struct PackedA {
  const float* ap;
  const float* end(int64_t kc) const { return ap + kc * kMR; }
  bool at_end(const float* e) const { return ap == e; }
  float at(int r) const { return ap[r]; }
  void next() { ap += kMR; }
};
// A read in place: row r at a + r * lda, k steps contiguous. Rows in groups of three on one stepped pointer
// each, the second and third of a group at lda and 2 lda from it (an x86 address is base + index * 4, so each
// value is one broadcast from memory, as from a packed strip). Groups past `rows` point at the first row and
// are never read. It saves the packing of A (5% of MiniLM's 1024 x 1536 x 384 product) and, by a model of the
// panel loop alone (one thread, AVX-512, Zen 5), ran 5.97 -> 5.74 ms: each packed strip was one more stream
// from L2.
struct RowsA {
  static constexpr int kGroups = (kMR + 2) / 3;
  const float* g[kGroups];
  int64_t ld, ld2;
  RowsA(const float* a, int64_t lda, int rows) : ld(lda), ld2(2 * lda) {
    for (int i = 0; i < kGroups; ++i) g[i] = 3 * i < rows ? a + 3 * i * lda : a;
  }
  float at(int r) const {
    const float* b = g[r / 3];
    return r % 3 == 0 ? b[0] : r % 3 == 1 ? b[ld] : b[ld2];
  }
  const float* end(int64_t kc) const { return g[0] + kc; }
  bool at_end(const float* e) const { return g[0] == e; }
  void next() {
    for (int i = 0; i < kGroups; ++i) ++g[i];
  }
};
// x86 targets read A in place (AVX2, AVX-512: base + index addressing); the 4-lane targets keep packed strips
// (wasm has no such addressing: each value would cost an address add per k step).
constexpr bool kInPlaceA = kLanes >= 8;

// Any of the above while the loop prefetches another stream, one 64-byte line per k step for its first `left`
// steps: the weights the next k-block (or the next chunk) reads, on their way from memory during this one's
// products (PanelTile's `Prefetch`).
template <class Rows>
struct Prefetching : Rows {
  const char* pf;
  int64_t left;
  void next() {
    Rows::next();
    if (left > 0) {
      hwy::Prefetch(pf);
      pf += 64;
      --left;
    }
  }
};

// One step by one value (gemm.h RegScalarStep) over the tile: Max and Min as ew_program-inl.h's RunOne computes
// them, in the instruction's operand order.
template <int R, int NV>
HWY_INLINE void RegScalarStepTile(DF d, const RegScalarStep& s, VF (&acc)[R][NV]) {
  const VF m = hn::Set(d, s.m), a = hn::Set(d, s.a);
  auto each = [&](auto&& f) {
    HWY_UNROLL(12)
    for (int r = 0; r < R; ++r) {
      HWY_UNROLL(4)
      for (int v = 0; v < NV; ++v) acc[r][v] = f(acc[r][v]);
    }
  };
  if (s.op == RegStepOp::Affine) {
    each([&](VF x) { return hn::Add(hn::Mul(x, m), a); });
    return;
  }
  const bool max = s.op == RegStepOp::Max;
  auto op = [max](VF x, VF y) {  // NaN wins, x's if both; equal operands give y
    const VF r = hn::IfThenElse(max ? hn::Gt(x, y) : hn::Lt(x, y), x, y);
    return hn::IfThenElse(hn::IsNaN(x), x, hn::IfThenElse(hn::IsNaN(y), y, r));
  };
  if (s.value_first) {
    each([&](VF x) { return op(a, x); });
  } else {
    each([&](VF x) { return op(x, a); });
  }
}

// The register microkernel: C[R x NR] (row stride ldc) = (first ? +0 : C) + A strip * B strip over kc steps.
// kExact: separate multiply and add (both rounded), canonical NaN on the last k-block; otherwise MulAdd (fused
// on targets with FMA, multiply then add elsewhere). Where B's rows come from changes no arithmetic.
// The register epilogue (gemm.h RegEpilogue) on a finished tile of R x NV vectors, one step at a time over the
// whole tile: each output still sees the steps in their order, so the bits are those of the steps applied one
// output at a time, and each step's test is made once per tile. Tested per vector, the tests cost about as
// much as the products of a short k: ResNet-50's 64 -> 256 1x1 convolution at 56 x 56 (the product alone, one
// thread, AVX-512) took 0.504 ms bare and 0.576 with a bias; per tile 0.487 (kernels-gemm.md section 7).
// A Gelu tail (the last step: the matcher puts no steps after it) on a stored tile, still in L1, in a function of
// its own: inlined into the microkernel, its long body cost the products that never take it in wasm, where V8
// allocates registers per function (openWakeWord's embedding 1.02x in Node, one thread).
template <bool kExact>
HWY_NOINLINE void GeluTile(bool erf, float* c, int64_t ldc, int64_t rows, int64_t cols) {
  const DF d;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < cols; j += kLanes) {
      const VF v = hn::LoadU(d, c + r * ldc + j);
      hn::StoreU(erf ? GeluErf<kExact>(d, v) : GeluTanh<kExact>(d, v), d, c + r * ldc + j);
    }
}

template <int R, bool kExact, int NV>
HWY_INLINE void RegEpilogueTile(DF d, const RegEpilogue& e, VF (&acc)[R][NV]) {
  auto each = [&](auto&& f) {
    HWY_UNROLL(12)
    for (int r = 0; r < R; ++r) {
      HWY_UNROLL(4)
      for (int v = 0; v < NV; ++v) acc[r][v] = f(r, v, acc[r][v]);
    }
  };
  auto per_row = [&](const float* values, auto&& op) {
    HWY_UNROLL(12)
    for (int r = 0; r < R; ++r) {
      const VF x = hn::Set(d, values[r]);
      HWY_UNROLL(4)
      for (int v = 0; v < NV; ++v) acc[r][v] = op(acc[r][v], x);
    }
  };
  const auto add = [](VF a, VF b) { return hn::Add(a, b); };
  if (e.bias) per_row(e.bias, add);
  if (e.col_bias) each([&](int, int v, VF a) { return hn::Add(a, hn::LoadU(d, e.col_bias + v * kLanes)); });
  if (e.scale) per_row(e.scale, [](VF a, VF b) { return hn::Mul(a, b); });
  if (e.shift) per_row(e.shift, add);
  for (int i = 0; i < e.pres; ++i) RegScalarStepTile<R, NV>(d, e.pre[i], acc);
  if (e.res) {
    const float* res = e.res;
    const int64_t ld = e.res_ld;
    if (e.res_first) {
      each([&](int r, int v, VF a) { return hn::Add(hn::LoadU(d, res + r * ld + v * kLanes), a); });
    } else {
      each([&](int r, int v, VF a) { return hn::Add(a, hn::LoadU(d, res + r * ld + v * kLanes)); });
    }
  }
  switch (e.tail) {
    case RegTail::None: break;
    case RegTail::Relu: each([&](int, int, VF a) { return VRelu(d, a); }); break;
    case RegTail::Clip: {
      const VF lo = hn::Set(d, e.lo), hi = hn::Set(d, e.hi);
      each([&](int, int, VF a) { return VClip(a, lo, hi); });
      break;
    }
    case RegTail::LeakyRelu: {
      const VF alpha = hn::Set(d, e.lo);
      each([&](int, int, VF a) { return VLeakyRelu(d, a, alpha); });
      break;
    }
    case RegTail::HardSwish: each([&](int, int, VF a) { return VHardSwish(d, a); }); break;
    case RegTail::GeluErf:
    case RegTail::GeluTanh: break;  // on the stored tile (GeluTile)
    case RegTail::HardSwishSteps: {
      const VF add_c = hn::Set(d, e.hs_add), lo = hn::Set(d, e.lo), hi = hn::Set(d, e.hi);
      const VF last = hn::Set(d, e.hs_last);
      if (e.hs_div) {
        each([&](int, int, VF a) { return hn::Div(hn::Mul(a, VClip(hn::Add(a, add_c), lo, hi)), last); });
      } else {
        each([&](int, int, VF a) { return hn::Mul(hn::Mul(a, VClip(hn::Add(a, add_c), lo, hi)), last); });
      }
      break;
    }
  }
  for (int i = 0; i < e.posts; ++i) RegScalarStepTile<R, NV>(d, e.post[i], acc);
  if (kExact) each([&](int, int, VF a) { return CanonicalNaN(d, a); });
}

// `epi` (only on the last k-block): the register epilogue of this tile, bias and res at its first row and
// column.
template <int R, bool kExact, class Rows, int NV = kNV, class A = PackedA>
HWY_INLINE void MicroBody(int64_t kc, A a, Rows rows, float* HWY_RESTRICT c, int64_t ldc, bool first, bool last,
                          const RegEpilogue* epi = nullptr) {
  const DF d;
  VF acc[R][NV];
  if (first) {
    HWY_UNROLL(12)
    for (int r = 0; r < R; ++r) {
      HWY_UNROLL(4)
      for (int v = 0; v < NV; ++v) acc[r][v] = hn::Zero(d);
    }
  } else {
    HWY_UNROLL(12)
    for (int r = 0; r < R; ++r) {
      HWY_UNROLL(4)
      for (int v = 0; v < NV; ++v) acc[r][v] = hn::LoadU(d, c + r * ldc + v * kLanes);
    }
  }
  for (const float* const a_end = a.end(kc); !a.at_end(a_end); a.next(), rows.next()) {
    const float* HWY_RESTRICT bq = rows.row();
    VF b[NV];
    HWY_UNROLL(4)
    for (int v = 0; v < NV; ++v) b[v] = Rows::kAligned ? hn::Load(d, bq + v * kLanes) : hn::LoadU(d, bq + v * kLanes);
    HWY_UNROLL(12)
    for (int r = 0; r < R; ++r) {
      const VF av = hn::Set(d, a.at(r));
      HWY_UNROLL(4)
      for (int v = 0; v < NV; ++v) {
        if constexpr (kExact) {
          acc[r][v] = hn::Add(acc[r][v], hn::Mul(av, b[v]));
        } else {
          acc[r][v] = hn::MulAdd(av, b[v], acc[r][v]);
        }
      }
    }
  }
  if (kExact && last) {
    HWY_UNROLL(12)
    for (int r = 0; r < R; ++r) {
      HWY_UNROLL(4)
      for (int v = 0; v < NV; ++v) acc[r][v] = CanonicalNaN(d, acc[r][v]);
    }
  }
  // No arithmetic on a null res (undefined behaviour even unread; clang's UBSan reports it): RegEpilogueTile
  // forms res's addresses only when it is set.
  if (epi) RegEpilogueTile<R, kExact, NV>(d, *epi, acc);
  HWY_UNROLL(12)
  for (int r = 0; r < R; ++r) {
    HWY_UNROLL(4)
    for (int v = 0; v < NV; ++v) hn::StoreU(acc[r][v], d, c + r * ldc + v * kLanes);
  }
  if (epi && gelu_tail(epi->tail)) GeluTile<kExact>(epi->tail == RegTail::GeluErf, c, ldc, R, NV * kLanes);
}

template <int R, bool kExact>
HWY_NOINLINE void Micro(int64_t kc, const float* HWY_RESTRICT ap, const float* HWY_RESTRICT bp, float* HWY_RESTRICT c,
                        int64_t ldc, bool first, bool last, const RegEpilogue* epi) {
  MicroBody<R, kExact>(kc, PackedA{ap}, PackedRows{bp}, c, ldc, first, last, epi);
}

template <int R, bool kExact>
HWY_NOINLINE void MicroPrefetch(int64_t kc, const float* HWY_RESTRICT ap, const float* HWY_RESTRICT bp,
                                float* HWY_RESTRICT c, int64_t ldc, bool first, bool last, const RegEpilogue* epi,
                                const char* pf, int64_t lines) {
  MicroBody<R, kExact>(kc, PackedA{ap}, Prefetching<PackedRows>{{bp}, pf, lines}, c, ldc, first, last, epi);
}

// The left half of a B strip only (NV = kNV / 2 vectors): a ragged last strip of at most NR / 2 columns.
template <int R, bool kExact>
HWY_NOINLINE void MicroHalf(int64_t kc, const float* HWY_RESTRICT ap, const float* HWY_RESTRICT bp,
                            float* HWY_RESTRICT c, int64_t ldc, bool first, bool last, const RegEpilogue*) {
  MicroBody<R, kExact, PackedRows, kNV / 2>(kc, PackedA{ap}, PackedRows{bp}, c, ldc, first, last);
}

template <int R, bool kExact>
HWY_NOINLINE void MicroStrided(int64_t kc, const float* HWY_RESTRICT ap, const float* bp, int64_t ldb,
                               float* HWY_RESTRICT c, int64_t ldc, bool first, bool last, const RegEpilogue* epi,
                               const char* pf, int64_t lines) {
  MicroBody<R, kExact>(kc, PackedA{ap}, Prefetching<StridedRows>{{bp, ldb}, pf, lines}, c, ldc, first, last, epi);
}

template <int R, bool kExact>
HWY_NOINLINE void MicroInPlace(int64_t kc, const float* HWY_RESTRICT ap, const float* bp, const int64_t* off,
                               float* HWY_RESTRICT c, int64_t ldc, bool first, bool last, const RegEpilogue* epi,
                               const char* pf, int64_t lines) {
  MicroBody<R, kExact>(kc, PackedA{ap}, Prefetching<OffsetRows>{{bp, off, off + kc}, pf, lines}, c, ldc, first, last,
                       epi);
}

using MicroStridedFn = void (*)(int64_t, const float*, const float*, int64_t, float*, int64_t, bool, bool,
                                const RegEpilogue*, const char*, int64_t);
using MicroInPlaceFn = void (*)(int64_t, const float*, const float*, const int64_t*, float*, int64_t, bool, bool,
                                const RegEpilogue*, const char*, int64_t);
template <bool kExact, size_t... Rs>
constexpr std::array<MicroStridedFn, kMR> MicroStridedTable(std::index_sequence<Rs...>) {
  return {&MicroStrided<static_cast<int>(Rs) + 1, kExact>...};
}
template <bool kExact, size_t... Rs>
constexpr std::array<MicroInPlaceFn, kMR> MicroInPlaceTable(std::index_sequence<Rs...>) {
  return {&MicroInPlace<static_cast<int>(Rs) + 1, kExact>...};
}
template <bool kExact>
inline constexpr std::array<MicroStridedFn, kMR> kMicroStrided =
    MicroStridedTable<kExact>(std::make_index_sequence<kMR>());
template <bool kExact>
inline constexpr std::array<MicroInPlaceFn, kMR> kMicroInPlace =
    MicroInPlaceTable<kExact>(std::make_index_sequence<kMR>());

using MicroFn = void (*)(int64_t, const float*, const float*, float*, int64_t, bool, bool, const RegEpilogue*);

template <bool kExact, size_t... Rs>
constexpr std::array<MicroFn, kMR> MicroTable(std::index_sequence<Rs...>) {
  return {&Micro<static_cast<int>(Rs) + 1, kExact>...};
}

// micro[R - 1] handles R rows.
template <bool kExact>
inline constexpr std::array<MicroFn, kMR> kMicro = MicroTable<kExact>(std::make_index_sequence<kMR>());

using MicroPrefetchFn = void (*)(int64_t, const float*, const float*, float*, int64_t, bool, bool, const RegEpilogue*,
                                 const char*, int64_t);
template <bool kExact, size_t... Rs>
constexpr std::array<MicroPrefetchFn, kMR> MicroPrefetchTable(std::index_sequence<Rs...>) {
  return {&MicroPrefetch<static_cast<int>(Rs) + 1, kExact>...};
}
template <bool kExact>
inline constexpr std::array<MicroPrefetchFn, kMR> kMicroPrefetch =
    MicroPrefetchTable<kExact>(std::make_index_sequence<kMR>());

template <bool kExact, size_t... Rs>
constexpr std::array<MicroFn, kMR> MicroHalfTable(std::index_sequence<Rs...>) {
  return {&MicroHalf<static_cast<int>(Rs) + 1, kExact>...};
}
template <bool kExact>
inline constexpr std::array<MicroFn, kMR> kMicroHalf = MicroHalfTable<kExact>(std::make_index_sequence<kMR>());

// The microkernels over a packed B strip with A read in place (RowsA): the full width, prefetching or not, and
// the left half.
template <int R, bool kExact, int NV>
HWY_NOINLINE void MicroA(int64_t kc, const float* a, int64_t lda, const float* HWY_RESTRICT bp, float* HWY_RESTRICT c,
                         int64_t ldc, bool first, bool last, const RegEpilogue* epi, const char* pf, int64_t lines) {
  if (pf) {
    MicroBody<R, kExact, Prefetching<PackedRows>, NV>(kc, RowsA(a, lda, R), Prefetching<PackedRows>{{bp}, pf, lines}, c,
                                                      ldc, first, last, epi);
  } else {
    MicroBody<R, kExact, PackedRows, NV>(kc, RowsA(a, lda, R), PackedRows{bp}, c, ldc, first, last, epi);
  }
}
using MicroAFn = void (*)(int64_t, const float*, int64_t, const float*, float*, int64_t, bool, bool, const RegEpilogue*,
                          const char*, int64_t);
template <bool kExact, int NV, size_t... Rs>
constexpr std::array<MicroAFn, kMR> MicroATable(std::index_sequence<Rs...>) {
  return {&MicroA<static_cast<int>(Rs) + 1, kExact, NV>...};
}
template <bool kExact>
inline constexpr std::array<MicroAFn, kMR> kMicroA = MicroATable<kExact, kNV>(std::make_index_sequence<kMR>());
template <bool kExact>
inline constexpr std::array<MicroAFn, kMR> kMicroHalfA = MicroATable<kExact, kNV / 2>(std::make_index_sequence<kMR>());

// One row of A against kRowStrips consecutive full B strips (stride `strip` floats apart) at once: C[1 x
// kRowStrips*NR] at c. The one-row microkernel keeps only kNV accumulator chains, so a product with m = 1 (a
// classifier's Gemm) waited on the multiply-add latency and kept few loads in flight; 8 chains over 4 strips
// hide both. Each output still sums k in increasing order in one accumulator: the same bits as Micro<1>.
constexpr int64_t kRowStrips = 4;
template <bool kExact>
HWY_NOINLINE void MicroRow(int64_t kc, const float* HWY_RESTRICT ap, int64_t astep, const float* HWY_RESTRICT bp,
                           int64_t strip, float* HWY_RESTRICT c, bool first, bool last) {
  const DF d;
  VF acc[kRowStrips][kNV];
  HWY_UNROLL(4)
  for (int64_t s = 0; s < kRowStrips; ++s) {
    HWY_UNROLL(4)
    for (int v = 0; v < kNV; ++v) acc[s][v] = first ? hn::Zero(d) : hn::LoadU(d, c + s * kNR + v * kLanes);
  }
  for (int64_t p = 0; p < kc; ++p) {
    const VF a = hn::Set(d, ap[p * astep]);
    HWY_UNROLL(4)
    for (int64_t s = 0; s < kRowStrips; ++s) {
      HWY_UNROLL(4)
      for (int v = 0; v < kNV; ++v) {
        const VF b = hn::Load(d, bp + s * strip + p * kNR + v * kLanes);
        if constexpr (kExact) {
          acc[s][v] = hn::Add(acc[s][v], hn::Mul(a, b));
        } else {
          acc[s][v] = hn::MulAdd(a, b, acc[s][v]);
        }
      }
    }
  }
  HWY_UNROLL(4)
  for (int64_t s = 0; s < kRowStrips; ++s) {
    HWY_UNROLL(4)
    for (int v = 0; v < kNV; ++v) {
      if (kExact && last) acc[s][v] = CanonicalNaN(d, acc[s][v]);
      hn::StoreU(acc[s][v], d, c + s * kNR + v * kLanes);
    }
  }
}

// One register tile of C at cp: the microkernel straight into C when the B strip is full width; for a
// ragged right edge (cols < NR) the full-width microkernel on the scratch tile `edge`, then the valid
// columns out (loaded in first when later k-blocks accumulate onto them).
// A ragged strip of at most NR / 2 columns runs the half-width microkernel (`half`): a 14 x 14 plane (196
// columns, 6 strips and 4 columns) spent a sixth of its products on the ragged strip's zero columns.
// `epi`: the register epilogue of a full-width tile (a ragged one is left to TileEpilogue::apply).
// `run(half, c, ldc, epi)` runs the full-width (or, when `half`, the half-width) microkernel into c.
template <class Run>
HWY_INLINE void MicroIntoWith(Run run, float* cp, int64_t ldc, int64_t rows, int64_t cols, bool first, float* edge,
                              const RegEpilogue* epi) {
  if (cols == kNR) {
    run(false, cp, ldc, epi);
    return;
  }
  if (!first)
    for (int64_t r = 0; r < rows; ++r) std::memcpy(edge + r * kNR, cp + r * ldc, static_cast<size_t>(cols) * 4);
  run(2 * cols <= kNR && kNV % 2 == 0, edge, kNR, nullptr);
  for (int64_t r = 0; r < rows; ++r) std::memcpy(cp + r * ldc, edge + r * kNR, static_cast<size_t>(cols) * 4);
}
HWY_INLINE void MicroInto(MicroFn fn, MicroFn half, int64_t kc, const float* astrip, const float* bstrip, float* cp,
                          int64_t ldc, int64_t rows, int64_t cols, bool first, bool last, float* edge,
                          const RegEpilogue* epi = nullptr) {
  MicroIntoWith([&](bool h, float* c, int64_t l,
                    const RegEpilogue* e) { (h ? half : fn)(kc, astrip, bstrip, c, l, first, last, e); },
                cp, ldc, rows, cols, first, edge, epi);
}

// Packs rows [i0, i0 + rows) and columns [p0, p0 + kc) of A into strips of MR rows. Rows past the last one are
// not written: a ragged strip runs the microkernel with only its real rows.
HWY_NOINLINE void PackA(const MatrixView& a, int64_t i0, int64_t rows, int64_t p0, int64_t kc, float* dst) {
  for (int64_t r0 = 0; r0 < rows; r0 += kMR) {
    const int64_t rr = std::min<int64_t>(kMR, rows - r0);
    float* HWY_RESTRICT ds = dst + r0 * kc;
    const float* src = a.data + (i0 + r0) * a.row_stride + p0 * a.col_stride;
    const int64_t cs = a.col_stride, rs = a.row_stride;
    if (cs == 1 && rr == kMR) {
      // Whole strips: kMR rows read side by side, the strip written in order (one row at a time wrote it with
      // a stride of kMR floats: 1024^3 ran at 62% of peak, mostly in this loop).
      const float* rows_at[kMR];
      for (int r = 0; r < kMR; ++r) rows_at[r] = src + r * rs;
      int64_t p = 0;
#if HWY_TARGET != HWY_SCALAR
      if constexpr (kMR % 2 == 0) {
        // Four k steps at a time: each group of four rows is a 4 x 4 block, transposed in registers, whose
        // columns are the strip's next four k steps for those rows; AVX2's six rows end in a pair, interleaved
        // into two values per k step. One value at a time, this loop was 7% of MiniLM's 128 x 1536 x 384 product
        // (perf, AVX-512), and 3.6% of the whole model on AVX2 while its six-row strips still took it.
        const hn::FixedTag<float, 4> d4;
        const hn::FixedTag<float, 2> d2;
        for (; p + 4 <= kc; p += 4) {
          int g = 0;
          for (; g + 4 <= kMR; g += 4) {
            const auto x0 = hn::LoadU(d4, rows_at[g] + p), x1 = hn::LoadU(d4, rows_at[g + 1] + p);
            const auto x2 = hn::LoadU(d4, rows_at[g + 2] + p), x3 = hn::LoadU(d4, rows_at[g + 3] + p);
            const auto t0 = hn::InterleaveLower(d4, x0, x1), t1 = hn::InterleaveLower(d4, x2, x3);
            const auto t2 = hn::InterleaveUpper(d4, x0, x1), t3 = hn::InterleaveUpper(d4, x2, x3);
            hn::StoreU(hn::ConcatLowerLower(d4, t1, t0), d4, ds + (p + 0) * kMR + g);
            hn::StoreU(hn::ConcatUpperUpper(d4, t1, t0), d4, ds + (p + 1) * kMR + g);
            hn::StoreU(hn::ConcatLowerLower(d4, t3, t2), d4, ds + (p + 2) * kMR + g);
            hn::StoreU(hn::ConcatUpperUpper(d4, t3, t2), d4, ds + (p + 3) * kMR + g);
          }
          if constexpr (kMR % 4 == 2) {
            const auto x0 = hn::LoadU(d4, rows_at[g] + p), x1 = hn::LoadU(d4, rows_at[g + 1] + p);
            const auto t0 = hn::InterleaveLower(d4, x0, x1), t1 = hn::InterleaveUpper(d4, x0, x1);
            hn::StoreU(hn::LowerHalf(d2, t0), d2, ds + (p + 0) * kMR + g);
            hn::StoreU(hn::UpperHalf(d2, t0), d2, ds + (p + 1) * kMR + g);
            hn::StoreU(hn::LowerHalf(d2, t1), d2, ds + (p + 2) * kMR + g);
            hn::StoreU(hn::UpperHalf(d2, t1), d2, ds + (p + 3) * kMR + g);
          }
        }
      }
#endif
      for (; p < kc; ++p)
        for (int r = 0; r < kMR; ++r) ds[p * kMR + r] = rows_at[r][p];
      continue;
    }
    if (rs == 1) {
      // A stored transposed (a narrow convolution's col^T): each k step's rows lie side by side. A whole strip
      // is one fixed-size copy per k step, which compiles to vector moves; element by element, this loop was
      // 17% of MobileNetV3's 960 -> 160 1x1 convolution at 7 x 7 (49 rows, run transposed; perf, two threads).
      if (rr == kMR) {
        for (int64_t p = 0; p < kc; ++p) std::memcpy(ds + p * kMR, src + p * cs, kMR * sizeof(float));
        continue;
      }
      for (int64_t p = 0; p < kc; ++p)
        for (int64_t r = 0; r < rr; ++r) ds[p * kMR + r] = src[p * cs + r];
      continue;
    }
    for (int64_t r = 0; r < rr; ++r) {
      const float* row = src + r * rs;
      if (cs == 1) {
        for (int64_t p = 0; p < kc; ++p) ds[p * kMR + r] = row[p];
      } else {
        for (int64_t p = 0; p < kc; ++p) ds[p * kMR + r] = row[p * cs];
      }
    }
  }
}

// Packs strip s of k-block kb of B (see the layout above); n_pad = strips * NR.
HWY_NOINLINE void PackBStrip(const MatrixView& b, int64_t k, int64_t n, int64_t kb, int64_t s, float* dst,
                             int64_t n_pad) {
  const int64_t p0 = kb * kKC, kc = std::min(kKC, k - p0);
  const int64_t j0 = s * kNR, cols = std::min(kNR, n - j0);
  float* HWY_RESTRICT ds = dst + p0 * n_pad + s * kc * kNR;
  const float* src = b.data + p0 * b.row_stride + j0 * b.col_stride;
  if (b.col_stride == 1) {
    for (int64_t p = 0; p < kc; ++p) std::memcpy(ds + p * kNR, src + p * b.row_stride, static_cast<size_t>(cols) * 4);
  } else {
    // Column-major walks (a transposed B) read along memory in the inner loop.
    for (int64_t j = 0; j < cols; ++j) {
      const float* col = src + j * b.col_stride;
      for (int64_t p = 0; p < kc; ++p) ds[p * kNR + j] = col[p * b.row_stride];
    }
  }
  if (cols < kNR)
    for (int64_t p = 0; p < kc; ++p)
      for (int64_t j = cols; j < kNR; ++j) ds[p * kNR + j] = 0.0f;
}

inline void PackB(int64_t k, int64_t n, MatrixView b, float* dst, ThreadPool* pool) {
  if (k <= 0 || n <= 0) return;
  const int64_t strips = (n + kNR - 1) / kNR, n_pad = strips * kNR;
  const int64_t kblocks = (k + kKC - 1) / kKC;
  const int64_t groups = (strips + kStripsPerPackChunk - 1) / kStripsPerPackChunk;
  const double work = kNsPerPacked * static_cast<double>(k) * static_cast<double>(n_pad);
  parallel_for(pool, kblocks * groups, work, [&](int64_t chunk) {
    const int64_t kb = chunk / groups, g = chunk % groups;
    const int64_t s_end = std::min(strips, (g + 1) * kStripsPerPackChunk);
    for (int64_t s = g * kStripsPerPackChunk; s < s_end; ++s) PackBStrip(b, k, n, kb, s, dst, n_pad);
  });
}

struct TileArgs {
  int64_t m, n, k, n_pad, tiles_n;
  MatrixView a;
  const float* pb;
  float* c;
  int64_t ldc;
};

// One MC x NC tile, all of k (the unit of work the pool hands out).
template <bool kExact>
HWY_NOINLINE void ComputeTile(const TileArgs& t, int64_t tile) {
  const int64_t i0 = (tile / t.tiles_n) * kMC, j0 = (tile % t.tiles_n) * kNC;
  const int64_t mc = std::min(kMC, t.m - i0), nc = std::min(kNC, t.n - j0);
  float* apack = APackScratch();
  const auto& micro = kMicro<kExact>;
  HWY_ALIGN float edge[kMR * kNR];
  for (int64_t p0 = 0; p0 < t.k; p0 += kKC) {
    const int64_t kc = std::min(kKC, t.k - p0);
    const bool first = p0 == 0, last = p0 + kc == t.k;
    PackA(t.a, i0, mc, p0, kc, apack);
    for (int64_t jj = 0; jj < nc; jj += kNR) {
      const int64_t cols = std::min(kNR, nc - jj);
      const float* bstrip = t.pb + p0 * t.n_pad + ((j0 + jj) / kNR) * kc * kNR;
      for (int64_t ii = 0; ii < mc; ii += kMR) {
        const int64_t rows = std::min<int64_t>(kMR, mc - ii);
        const MicroFn fn = micro[static_cast<size_t>(rows - 1)];
        float* cp = t.c + (i0 + ii) * t.ldc + j0 + jj;
        MicroInto(fn, kMicroHalf<kExact>[static_cast<size_t>(rows - 1)], kc, apack + ii * kc, bstrip, cp, t.ldc, rows,
                  cols, first, last, edge);
      }
    }
  }
}

inline void ComputePanelsFrom(bool exact, int64_t m, int64_t n, int64_t k, const float* packed_a,
                              const PanelSource& src, float* c, int64_t ldc, ThreadPool* pool,
                              const TileEpilogue* epilogue, const MatrixView* a_rows);

// Packed A of at most this many floats (16 MiB) is packed whole, once, before the product.
constexpr int64_t kWholeAFloats = int64_t{1} << 22;

inline void Compute(bool exact, int64_t m, int64_t n, int64_t k, MatrixView a, const float* packed_b, float* c,
                    int64_t ldc, ThreadPool* pool, const TileEpilogue* epilogue) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0.0f);
    if (epilogue) epilogue->apply(epilogue->ctx, 0, m, 0, n, c, ldc);
    return;
  }
  const int64_t m_pad = (m + kMR - 1) / kMR * kMR;
  if (kInPlaceA && a.col_stride == 1) {
    // A read in place (RowsA): the same strips, k-blocks and order as packed, hence the same bits.
    PanelSource src{nullptr, nullptr};
    src.packed = packed_b;
    ComputePanelsFrom(exact, m, n, k, nullptr, src, c, ldc, pool, epilogue, &a);
    return;
  }
  if (k * m_pad <= kWholeAFloats) {
    // A packed once, in parallel over (k-block, 16 strips), then the panels' product over B already packed;
    // tiles re-packed their rows of A for every column tile before (alternated minima, one thread, AVX2:
    // MiniLM's 128 x 384 x 1536 product 1.75 -> 1.62 ms, 1024^3 27.5 -> 24 ms). The same strips and k-blocks
    // in the same order, hence the same bits.
    thread_local ThreadScratch whole_a;
    float* pa = whole_a.get(k * m_pad);
    const int64_t strips = m_pad / kMR, groups = (strips + 15) / 16, kblocks = (k + kKC - 1) / kKC;
    parallel_for(pool, kblocks * groups, kNsPerPacked * static_cast<double>(k) * static_cast<double>(m_pad),
                 [&](int64_t t) {
                   const int64_t p0 = (t / groups) * kKC, kc = std::min(kKC, k - p0);
                   const int64_t i0 = (t % groups) * 16 * kMR, rows = std::min<int64_t>(16 * kMR, m - i0);
                   float* blk = pa + p0 * m_pad + i0 * kc;
                   const int64_t last = (strips - 1) * kMR;  // a ragged last strip: rows past m stay defined
                   if (m % kMR != 0 && last >= i0 && last < i0 + 16 * kMR)
                     std::fill(blk + (last - i0) * kc, blk + (last - i0) * kc + kMR * kc, 0.0f);
                   PackA(a, i0, rows, p0, kc, blk);
                 });
    PanelSource src{nullptr, nullptr};
    src.packed = packed_b;
    ComputePanelsFrom(exact, m, n, k, pa, src, c, ldc, pool, epilogue, nullptr);
    return;
  }
  const int64_t strips = (n + kNR - 1) / kNR;
  TileArgs t{m, n, k, strips * kNR, (n + kNC - 1) / kNC, a, packed_b, c, ldc};
  const int64_t tiles = ((m + kMC - 1) / kMC) * t.tiles_n;
  const double work = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) / kMacsPerNs +
                      kNsPerPacked * static_cast<double>(m) * static_cast<double>(k) * static_cast<double>(t.tiles_n);
  if (exact) {
    parallel_for(pool, tiles, work, [&](int64_t tile) { ComputeTile<true>(t, tile); });
  } else {
    parallel_for(pool, tiles, work, [&](int64_t tile) { ComputeTile<false>(t, tile); });
  }
  // A larger than the whole-A path takes: the epilogue after the product, in fixed blocks of rows.
  if (epilogue)
    parallel_for(pool, (m + kMC - 1) / kMC, 2.0 * static_cast<double>(m) * static_cast<double>(n), [&](int64_t b) {
      const int64_t i0 = b * kMC;
      epilogue->apply(epilogue->ctx, i0, std::min(kMC, m - i0), 0, n, c + i0 * ldc, ldc);
    });
}

// A's packing from panels of its transpose (gemm.h gemm_f32_packed_at): a panel of A^T in strips of kMR columns
// is a k-block of A's packed strips, so each k-block is one fill, in parallel over the k-blocks.
inline void PackAPanels(int64_t m, int64_t k, const PanelSource& at, float* dst, ThreadPool* pool) {
  const int64_t m_pad = (m + kMR - 1) / kMR * kMR;
  parallel_for(pool, (k + kKC - 1) / kKC, kNsPerPacked * static_cast<double>(k) * static_cast<double>(m_pad),
               [&](int64_t b) {
                 const int64_t p0 = b * kKC;
                 at.fill(at.ctx, p0, std::min(kKC, k - p0), 0, m, kMR, dst + p0 * m_pad);
               });
}

// ---- A packed once, B from panels (kernels/gemm.h PanelSource) ----

inline void PackAAll(int64_t m, int64_t k, MatrixView a, float* dst) {
  const int64_t m_pad = (m + kMR - 1) / kMR * kMR;
  for (int64_t p0 = 0; p0 < k; p0 += kKC) {
    const int64_t kc = std::min(kKC, k - p0);
    float* blk = dst + p0 * m_pad;
    std::fill(blk, blk + kc * m_pad, 0.0f);  // rows past m (never read by the microkernel) stay defined
    PackA(a, 0, m, p0, kc, blk);
  }
}

inline float* PanelScratch(int64_t nt) {
  thread_local ThreadScratch scratch;
  return scratch.get(kKC * nt);
}

// Operands smaller than this (128 KiB) are not prefetched: they stay in the caches between runs.
constexpr int64_t kPrefetchMinFloats = int64_t{1} << 15;
// The B-strip-in-L1 order of PanelTile, taken where multiply and add are separate instructions (exact mode, or a
// target without FMA: wasm): k-blocks of at least this many rows, chunks of at least this many A strips, rows in
// blocks of A of at most 192 KiB.
template <bool kExact>
constexpr bool kSeparateMulAdd = kExact || !HWY_NATIVE_FMA;
constexpr int64_t kL1StripMinK = 64;
constexpr int64_t kL1StripMinStrips = 8;
constexpr int64_t kL1StripBlockFloats = int64_t{48} << 10;

// Columns [col0, col0 + cols) of B read in place (PanelSource::direct, rows `off` or ldb apart), k rows from p0,
// as one packed strip of NR columns, zero-padded.
inline void CopyBStrip(const PanelSource& src, const int64_t* off, int64_t p0, int64_t kc, int64_t col0, int64_t cols,
                       float* HWY_RESTRICT dst) {
  for (int64_t p = 0; p < kc; ++p) {
    const float* row = src.direct + (off ? off[p] : (p0 + p) * src.ldb) + col0;
    if (cols == kNR) {
      std::memcpy(dst + p * kNR, row, sizeof(float) * kNR);
    } else {
      for (int64_t q = 0; q < kNR; ++q) dst[p * kNR + q] = q < cols ? row[q] : 0.0f;
    }
  }
}

// What the products of one k-block prefetch (PanelTile): `lines` 64-byte lines from `at`, `per_call` of them per
// full-width microkernel call. take() hands one call its share and moves past it.
struct Prefetch {
  const char* at = nullptr;
  int64_t lines = 0, per_call = 0;
  struct Share {
    const char* at;
    int64_t lines;
  };
  Share take() {
    const Share s{at, std::min(per_call, lines)};
    lines -= s.lines;
    at += s.lines * 64;
    return s;
  }
};

// One chunk: rows [i0, i0 + mb) of C and columns [j0, j0 + NC), all of k. Each k-block fills its B panel
// (kc x NC, in L2) once; then every A strip (kc x MR, in L1) runs against every B strip of the panel. A is
// read once per chunk and k-block, so a chunk normally holds all of m and the chunks are column tiles.
// `full_b` (optional): all of B already filled, in PackB's layout (k-block p0 at p0 * n_pad, strip s at
// + s * kc * NR); the chunk then reads its panels there instead of filling them.
// `a_rows` (only with B packed, src.packed): A read in place (RowsA), pa unused.
template <bool kExact>
HWY_NOINLINE void PanelTile(int64_t m, int64_t n, int64_t k, const float* pa, const PanelSource& src, float* c,
                            int64_t ldc, int64_t nt, int64_t tiles_n, int64_t tiles_m, int64_t mb, int64_t tile,
                            bool rows_first, const float* full_b, const TileEpilogue* epilogue,
                            const MatrixView* a_rows) {
  const int64_t i0 = (rows_first ? tile % tiles_m : tile / tiles_n) * mb;
  const int64_t j0 = (rows_first ? tile / tiles_m : tile % tiles_n) * nt;
  const int64_t mc = std::min(mb, m - i0), nc = std::min(nt, n - j0);
  const int64_t m_pad = (m + kMR - 1) / kMR * kMR;
  const int64_t n_pad = (n + kNR - 1) / kNR * kNR;
  float* scratch = full_b ? nullptr : PanelScratch(nt);
  const auto& micro = kMicro<kExact>;
  const auto& micro_strided = kMicroStrided<kExact>;
  const auto& micro_in_place = kMicroInPlace<kExact>;
  HWY_ALIGN float edge[kMR * kNR];
  // The register epilogue of the tile at rows i0 + ii, columns j0 + jj (gemm.h TileEpilogue::reg), and the
  // strip's epilogue call for whatever the register epilogue did not cover (columns from `done` on).
  RegEpilogue tile_epi;
  auto reg_at = [&](const RegEpilogue* reg, int64_t ii, int64_t jj) -> const RegEpilogue* {
    if (!reg) return nullptr;
    tile_epi = *reg;
    if (reg->bias) tile_epi.bias = reg->bias + i0 + ii;
    if (reg->col_bias) tile_epi.col_bias = reg->col_bias + j0 + jj;
    if (reg->scale) tile_epi.scale = reg->scale + i0 + ii;
    if (reg->shift) tile_epi.shift = reg->shift + i0 + ii;
    if (reg->res) tile_epi.res = reg->res + (i0 + ii) * reg->res_ld + j0 + jj;
    return &tile_epi;
  };
  auto finish_strip = [&](const RegEpilogue* reg, int64_t ii, int64_t rows, float* crow) {
    const int64_t done = reg ? nc / kNR * kNR : 0;
    if (done < nc) epilogue->apply(epilogue->ctx, i0 + ii, rows, j0 + done, nc - done, crow + done, ldc);
  };
  // The weights of a layer are read once per run, mostly from memory (a model's weights outgrow the caches), and
  // the first A strip of a k-block met them all at once: the full-width products of each k-block prefetch
  // the block of the operand that holds them which the next k-block reads (B when packed whole, else A; the
  // next chunk's first block after the last k-block), one line per k step, spread over the block's calls.
  // ResNet-50's 512 -> 512 3x3 at 7 x 7 in a chain of eight: 14.2 -> 13.6 ms (one thread, alternated minima;
  // kernels-gemm.md section 3, "Weights prefetched a k-block ahead").
  Prefetch pref;
  const auto& micro_pf = kMicroPrefetch<kExact>;
  for (int64_t p0 = 0; p0 < k; p0 += kKC) {
    const int64_t kc = std::min(kKC, k - p0);
    const bool first = p0 == 0, last = p0 + kc == k;
    const float* ablk = pa ? pa + p0 * m_pad : nullptr;
    {
      int64_t np0 = p0 + kKC, ni0 = i0, nj0 = j0;
      if (last) {
        const int64_t t1 = tile + 1;
        np0 = t1 < tiles_m * tiles_n ? 0 : k;
        ni0 = (rows_first ? t1 % tiles_m : t1 / tiles_n) * mb;
        nj0 = (rows_first ? t1 / tiles_m : t1 % tiles_n) * nt;
      }
      const int64_t calls = ((mc + kMR - 1) / kMR) * (nc / kNR);
      const int64_t weight_floats = full_b ? k * n_pad : k * m_pad;
      pref = Prefetch{};
      if (np0 < k && calls > 0 && weight_floats >= kPrefetchMinFloats) {
        const int64_t kc2 = std::min(kKC, k - np0);
        const float* from;
        int64_t floats;
        if (full_b) {
          from = full_b + np0 * n_pad + (nj0 / kNR) * kc2 * kNR;
          floats = kc2 * ((std::min(nt, n - nj0) + kNR - 1) / kNR * kNR);
        } else {
          from = pa + np0 * m_pad + ni0 * kc2;
          floats = kc2 * ((std::min(mb, m - ni0) + kMR - 1) / kMR * kMR);
        }
        pref.at = reinterpret_cast<const char*>(from);
        pref.lines = floats * static_cast<int64_t>(sizeof(float)) / 64;
        pref.per_call = (pref.lines + calls - 1) / calls;
      }
    }
    if (kSeparateMulAdd<kExact> && !src.packed && kc >= kL1StripMinK && mc >= kL1StripMinStrips * kMR) {
      // Separate multiply and add (exact mode, or wasm's fast mode), B from activations: each B strip (kc x NR,
      // in L1; B read in place is copied into one first) against every A strip of a block of rows (in L2). In
      // the order below (A strip in L1, every B strip streamed from L2) the product waited on B: twice the
      // instructions per k step leave fewer loads in flight. One thread, AVX2, exact, alternated minima:
      // ResNet-50's 256 -> 1024 1x1 at 14 x 14 1.71 -> 1.33 ms, 512 -> 1024 stride 2 3.68 -> 3.02 ms; whole
      // models ResNet-50 0.936x, MobileNetV3 0.971x (one process alternating both orders); Node wasm: ResNet-50
      // exact 0.81x, fast 0.84x, PP-OCRv4 det 0.90x and 0.95x. Fast mode with FMA gained nothing measurable
      // (ResNet-50 1.02x, MobileNetV3 1.00x), nor did products over packed weights (MiniLM exact 1.00x), so they
      // keep that order (kernels-gemm.md section 3). Each output's k order is the same, so are its bits.
      const int64_t* off = src.direct && src.row_off ? src.row_off + p0 : nullptr;
      const float* panel = src.direct ? nullptr : full_b ? full_b + p0 * n_pad + (j0 / kNR) * kc * kNR : scratch;
      if (!src.direct && !full_b) src.fill(src.ctx, p0, kc, j0, nc, kNR, scratch);
      const RegEpilogue* reg = last && epilogue ? epilogue->reg : nullptr;
      const int64_t rb = std::max<int64_t>(kMR, kL1StripBlockFloats / kc / kMR * kMR);
      for (int64_t ib = 0; ib < mc; ib += rb) {
        const int64_t ie = std::min(mc, ib + rb);
        for (int64_t jj = 0; jj < nc; jj += kNR) {
          const int64_t cols = std::min(kNR, nc - jj);
          const float* bstrip = panel ? panel + (jj / kNR) * kc * kNR : scratch;
          if (!panel) CopyBStrip(src, off, p0, kc, j0 + jj, cols, scratch);
          for (int64_t ii = ib; ii < ie; ii += kMR) {
            const int64_t rows = std::min<int64_t>(kMR, mc - ii);
            if (jj == 0 && last && epilogue && epilogue->prefetch)
              epilogue->prefetch(epilogue->ctx, i0 + ii, rows, j0, nc);
            float* cp = c + (i0 + ii) * ldc + j0 + jj;
            const float* astrip = ablk + (i0 + ii) * kc;
            if (cols == kNR && pref.lines > 0) {
              const Prefetch::Share pf = pref.take();
              micro_pf[static_cast<size_t>(rows - 1)](kc, astrip, bstrip, cp, ldc, first, last, reg_at(reg, ii, jj),
                                                      pf.at, pf.lines);
              continue;
            }
            MicroInto(micro[static_cast<size_t>(rows - 1)], kMicroHalf<kExact>[static_cast<size_t>(rows - 1)], kc,
                      astrip, bstrip, cp, ldc, rows, cols, first, last, edge,
                      cols == kNR ? reg_at(reg, ii, jj) : nullptr);
          }
        }
        if (last && epilogue)
          for (int64_t ii = ib; ii < ie; ii += kMR)
            finish_strip(reg, ii, std::min<int64_t>(kMR, mc - ii), c + (i0 + ii) * ldc + j0);
      }
      continue;
    }
    if (src.direct) {
      // B read in place: whole strips straight from its rows, a ragged last strip copied (zero-padded) first.
      const int64_t* off = src.row_off ? src.row_off + p0 : nullptr;
      const int64_t full = nc / kNR * kNR;
      if (full < nc) CopyBStrip(src, off, p0, kc, j0 + full, nc - full, scratch);
      for (int64_t ii = 0; ii < mc; ii += kMR) {
        const int64_t rows = std::min<int64_t>(kMR, mc - ii);
        const MicroFn fn = micro[static_cast<size_t>(rows - 1)];
        const float* astrip = ablk + (i0 + ii) * kc;
        float* crow = c + (i0 + ii) * ldc + j0;
        if (last && epilogue && epilogue->prefetch) epilogue->prefetch(epilogue->ctx, i0 + ii, rows, j0, nc);
        const RegEpilogue* reg = last && epilogue ? epilogue->reg : nullptr;
        if (off) {
          const MicroInPlaceFn fo = micro_in_place[static_cast<size_t>(rows - 1)];
          for (int64_t jj = 0; jj < full; jj += kNR) {
            const Prefetch::Share pf = pref.take();
            fo(kc, astrip, src.direct + j0 + jj, off, crow + jj, ldc, first, last, reg_at(reg, ii, jj), pf.at,
               pf.lines);
          }
        } else {
          const MicroStridedFn fs = micro_strided[static_cast<size_t>(rows - 1)];
          for (int64_t jj = 0; jj < full; jj += kNR) {
            const Prefetch::Share pf = pref.take();
            fs(kc, astrip, src.direct + p0 * src.ldb + j0 + jj, src.ldb, crow + jj, ldc, first, last,
               reg_at(reg, ii, jj), pf.at, pf.lines);
          }
        }
        if (full < nc)
          MicroInto(fn, kMicroHalf<kExact>[static_cast<size_t>(rows - 1)], kc, astrip, scratch, crow + full, ldc, rows,
                    nc - full, first, last, edge);
        if (last && epilogue) finish_strip(reg, ii, rows, crow);
      }
      continue;
    }
    const float* panel = full_b ? full_b + p0 * n_pad + (j0 / kNR) * kc * kNR : scratch;
    if (!full_b) src.fill(src.ctx, p0, kc, j0, nc, kNR, scratch);
    for (int64_t ii = 0; ii < mc; ii += kMR) {
      const int64_t rows = std::min<int64_t>(kMR, mc - ii);
      const size_t ri = static_cast<size_t>(rows - 1);
      const MicroFn fn = micro[ri];
      const float* astrip = a_rows ? a_rows->data + (i0 + ii) * a_rows->row_stride + p0 : ablk + (i0 + ii) * kc;
      if (last && epilogue && epilogue->prefetch) epilogue->prefetch(epilogue->ctx, i0 + ii, rows, j0, nc);
      // One-row strips run MicroRow, which has no register epilogue: the whole strip goes through apply.
      const RegEpilogue* reg = last && epilogue && rows > 1 ? epilogue->reg : nullptr;
      int64_t jj = 0;
      if (rows == 1)
        for (; jj + kRowStrips * kNR <= nc; jj += kRowStrips * kNR)
          MicroRow<kExact>(kc, astrip, a_rows ? 1 : kMR, panel + (jj / kNR) * kc * kNR, kc * kNR,
                           c + (i0 + ii) * ldc + j0 + jj, first, last);
      for (; jj < nc; jj += kNR) {
        const int64_t cols = std::min(kNR, nc - jj);
        const float* bstrip = panel + (jj / kNR) * kc * kNR;
        float* cp = c + (i0 + ii) * ldc + j0 + jj;
        if constexpr (kInPlaceA) {
          if (a_rows) {
            const int64_t lda = a_rows->row_stride;
            const Prefetch::Share pf = cols == kNR ? pref.take() : Prefetch::Share{nullptr, 0};
            MicroIntoWith(
                [&](bool h, float* cc, int64_t l, const RegEpilogue* e) {
                  (h ? kMicroHalfA<kExact> : kMicroA<kExact>)[ri](kc, astrip, lda, bstrip, cc, l, first, last, e,
                                                                  pf.lines > 0 ? pf.at : nullptr, pf.lines);
                },
                cp, ldc, rows, cols, first, edge, cols == kNR ? reg_at(reg, ii, jj) : nullptr);
            continue;
          }
        }
        if (cols == kNR && pref.lines > 0) {
          const Prefetch::Share pf = pref.take();
          micro_pf[ri](kc, astrip, bstrip, cp, ldc, first, last, reg_at(reg, ii, jj), pf.at, pf.lines);
          continue;
        }
        MicroInto(fn, kMicroHalf<kExact>[ri], kc, astrip, bstrip, cp, ldc, rows, cols, first, last, edge,
                  cols == kNR ? reg_at(reg, ii, jj) : nullptr);
      }
      // A finished strip of MR rows x NC columns (a few KB, still in L1).
      if (last && epilogue) finish_strip(reg, ii, rows, c + (i0 + ii) * ldc + j0);
    }
  }
}

// `a_rows` (with src.packed only): A read in place instead of packed_a (PanelTile).
inline void ComputePanelsFrom(bool exact, int64_t m, int64_t n, int64_t k, const float* packed_a,
                              const PanelSource& src, float* c, int64_t ldc, ThreadPool* pool,
                              const TileEpilogue* epilogue, const MatrixView* a_rows) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0.0f);
    if (epilogue) epilogue->apply(epilogue->ctx, 0, m, 0, n, c, ldc);
    return;
  }
  // Chunks are column tiles of all of m, kNC wide. With fewer than 8 such tiles, an A that stays in L2 for
  // every tile (at most 192 KiB packed) and k of at least 128, the tiles narrow (whole strips, down to one)
  // before m is cut: cutting m needs all of B filled first, a serial phase when B is small (openWakeWord's
  // 72 x 216 x 240 product ran no faster at 2 threads than at 1). Short k keeps wide tiles: the epilogue runs
  // per strip row, and its fixed cost outweighed the products on narrow tiles (PP-OCR cls's 200 x 32 x 192
  // 1x1 convolutions with hard-swish, 0.060 -> 0.090 ms). Otherwise m is cut too, into blocks of whole A
  // strips. Chunking is a function of the shape only, and no output's arithmetic depends on it.
  const int64_t m_pad = (m + kMR - 1) / kMR * kMR;
  int64_t nt = kNC;
  if ((n + kNC - 1) / kNC < 8 && k >= 128 && m_pad * k * static_cast<int64_t>(sizeof(float)) <= 192 * 1024)
    nt = std::clamp<int64_t>(((n + 7) / 8 + kNR - 1) / kNR * kNR, kNR, kNC);
  else if (src.direct && k <= 64 && n >= 8 * kNC)
    // B read in place with short k (a 1x1 convolution from few channels): the products are cheap and the
    // epilogue's fixed cost per strip row dominated; tiles of up to 8 x NC columns cut its calls 8-fold
    // (MobileNetV3's 16 -> 64 expansion at 112 x 112: 0.81 -> 0.40 ms; the whole model 10.06 -> 9.24 ms at one
    // thread, 6.93 -> 6.35 at two; alternated minima, AVX-512). B's rows are read in place, so no panel grows.
    nt = kNC * std::clamp<int64_t>(256 / std::max<int64_t>(k, 1), 1, 8);
  // A one-row product (a squeeze-and-excitation convolution on its 1 x 1 plane, run transposed) keeps tiles of
  // whole MicroRow groups: narrowed to 3 strips, MobileNetV3's 168 -> 672 layers ran every strip through the
  // one-row microkernel and its two dependent accumulator chains (the model's SE convolutions 0.95x, the whole
  // model 0.995x, one thread, alternated minima, session 16).
  if (m == 1) nt = std::max<int64_t>(nt, kRowStrips * kNR);
  int64_t tiles_n = (n + nt - 1) / nt;
  const int64_t want_m = tiles_n >= 8 ? 1 : (8 + tiles_n - 1) / tiles_n;
  const int64_t strips = (m + kMR - 1) / kMR;
  // Blocks of at least 4 strips; a last block of less than half the others joins them (each block reads all of
  // B once more: ResNet-50's 2048 -> 512 1x1 convolutions at 7 x 7, run transposed with 49 rows, read their
  // 4 MB of weights a second time for a block of one row). A B packed whole in at most 1 MiB is read again
  // from the caches, so blocks of 2 strips: MobileNetV3's 960 -> 160 at 7 x 7 (49 rows, 160 columns, two
  // column tiles of 3 and 2 strips) alone at two threads 0.060 -> 0.051 ms, the whole model 0.976x at two
  // threads and 1.00x at one (alternated minima of five).
  const bool small_b = src.packed && k * ((n + kNR - 1) / kNR * kNR) <= (int64_t{1} << 18);
  const int64_t per = std::max<int64_t>(small_b ? 2 : 4, (strips + want_m - 1) / want_m);
  int64_t blocks = (strips + per - 1) / per;
  if (blocks > 1 && strips - (blocks - 1) * per < (per + 1) / 2) --blocks;
  const int64_t mb = (strips + blocks - 1) / blocks * kMR;
  const int64_t tiles_m = (m + mb - 1) / mb;
  // With m one block and a few column tiles, the tiles are made as even as whole strips allow: the chunks are
  // the tiles then, and a short last tile left threads idle (MobileNetV3's 960 -> 160 1x1 convolutions at 7 x 7,
  // run transposed with 49 rows: tiles of 128 and 32 columns, slower at two threads than at one).
  if (tiles_m == 1 && tiles_n > 1 && tiles_n < 8 && m > 1) {
    nt = kNR * (((n + kNR - 1) / kNR + tiles_n - 1) / tiles_n);
    tiles_n = (n + nt - 1) / nt;
  }
  // Cut into row blocks, every block would fill the same panels again: fill all of B once first (it is small
  // then: fewer than 8 column tiles), in parallel over (k-block, column tile), then share it.
  const float* full_b = src.packed;
  if (!full_b && tiles_m > 1 && !src.direct) {
    const int64_t n_pad = (n + kNR - 1) / kNR * kNR, kblocks = (k + kKC - 1) / kKC, panels = (n + kNC - 1) / kNC;
    thread_local ThreadScratch whole;
    float* dst = whole.get(k * n_pad);
    parallel_for(pool, kblocks * panels, kNsPerPacked * static_cast<double>(k) * static_cast<double>(n_pad),
                 [&](int64_t t) {
                   const int64_t p0 = (t / panels) * kKC, j0 = (t % panels) * kNC;
                   const int64_t kc = std::min(kKC, k - p0), nc = std::min(kNC, n - j0);
                   src.fill(src.ctx, p0, kc, j0, nc, kNR, dst + p0 * n_pad + (j0 / kNR) * kc * kNR);
                 });
    full_b = dst;
  }
  // The estimate counts the panels' fill only when the chunks fill them: B packed once (a constant, or all of it
  // above) or read in place is not filled here. Counted anyway, Silero VAD's 129 -> 128 convolution over 4
  // positions (B its packed weights: 5 us of products estimated at 30 us) ran on two threads at 33 us against
  // 16 at one.
  const bool fills = full_b == nullptr && src.direct == nullptr;
  double work = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) / kMacsPerNs +
                (fills ? kNsPerPacked * static_cast<double>(k) * static_cast<double>(n) : 0.0);
  // A product of few rows over packed weights is bound by reading them, not by its multiply-adds: their bytes at
  // about 20 GB/s per core bound the estimate from below (MobileNetV3's squeeze-and-excitation 240 -> 960 on one
  // position: 6 us of products estimated, its 0.92 MB of weights read in 30-45 us, so it never took a second
  // thread).
  if (src.packed)
    work = std::max(
        work, kNsPerWeightByte * static_cast<double>(sizeof(float)) * static_cast<double>(k) * static_cast<double>(n));
  // Consecutive chunks share the larger operand: B's column tile (all of k) when B is the larger (a layer's
  // weights in MatMul), else A's row block (a convolution's weights). Read in the other order, the larger one
  // came from memory once per tile of the other: MiniLM's 128 x 1536 x 384 product read its 2.4 MB of weights
  // three times per run. Which chunk computes an output is unchanged, so are its bits.
  const bool rows_first = k * n > m * k;
  if (exact) {
    parallel_for(pool, tiles_m * tiles_n, work, [&](int64_t t) {
      PanelTile<true>(m, n, k, packed_a, src, c, ldc, nt, tiles_n, tiles_m, mb, t, rows_first, full_b, epilogue,
                      a_rows);
    });
  } else {
    parallel_for(pool, tiles_m * tiles_n, work, [&](int64_t t) {
      PanelTile<false>(m, n, k, packed_a, src, c, ldc, nt, tiles_n, tiles_m, mb, t, rows_first, full_b, epilogue,
                       a_rows);
    });
  }
}

inline void ComputePanels(bool exact, int64_t m, int64_t n, int64_t k, const float* packed_a, const PanelSource& src,
                          float* c, int64_t ldc, ThreadPool* pool, const TileEpilogue* epilogue) {
  ComputePanelsFrom(exact, m, n, k, packed_a, src, c, ldc, pool, epilogue, nullptr);
}

}  // namespace gemm_detail

inline constexpr GemmFns kGemmFns{gemm_detail::kNR,          &gemm_detail::PackB,    &gemm_detail::Compute,
                                  gemm_detail::kMR,          &gemm_detail::PackAAll, &gemm_detail::ComputePanels,
                                  &gemm_detail::PackAPanels, gemm_detail::kKC};

}  // namespace onemodel::kern::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif
