// Per-target code for kernels/qgemm.h. Included once per target by qgemm.cc through hwy/foreach_target.h.
//
// Layout: B is packed into strips of NR int32 columns; one packed row holds, per column, `pair` consecutive k
// values (the int16 lanes that one int32 lane of ReorderWidenMulAccumulate multiplies and adds). A is packed
// into panels of MR rows, the rows' pairs side by side for each k pair, so one pointer walks the panel and each
// row is a fixed offset from it (in wasm an immediate of the load: 4 address computations fewer per k pair
// than row-major A, which V8 compiles literally; ISNet small (int8) in Node wasm 5.55 -> 5.25-5.38 s). A row pair of A
// is broadcast as one int32 and reinterpreted as int16 lanes, so a vector multiply-add forms a[i][p] * b[p][j] +
// a[i][p+1] * b[p+1][j] in every int32 lane j. The microkernel keeps R x NV accumulators for all of k (integer sums
// need no k-blocking for their bits) and stores them once.
#if defined(ONEMODEL_KERNELS_QGEMM_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEMODEL_KERNELS_QGEMM_INL_H_
#undef ONEMODEL_KERNELS_QGEMM_INL_H_
#else
#define ONEMODEL_KERNELS_QGEMM_INL_H_
#endif

#include <algorithm>
#include <array>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/thread_pool.h"
#include "hwy/highway.h"
#include "kernels/isa.h"
#include "kernels/qgemm.h"

HWY_BEFORE_NAMESPACE();
namespace onemodel::kern::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace qgemm_detail {

using D32 = hn::ScalableTag<int32_t>;
constexpr int64_t kLanes = static_cast<int64_t>(hn::MaxLanes(D32()));
// Twice the int32 lanes as int16, except on the 1-lane HWY_SCALAR target, where each int32 lane takes one.
using D16 = std::conditional_t<kLanes == 1, hn::Rebind<int16_t, D32>, hn::Repartition<int16_t, D32>>;
using V32 = hn::Vec<D32>;
constexpr int64_t kPair = static_cast<int64_t>(hn::MaxLanes(D16())) / kLanes;  // 2, or 1 on HWY_SCALAR
// 4 x 2 vectors of int32 sums: in wasm, V8 (Node 20) keeps xmm0-14 for values, loads a k pair's B vectors and
// broadcasts before its multiply-adds, and spills beyond that: 5 x 2 and 6 x 2 tiles ran ISNet small (int8)
// at 1.6x and 1.4x the time, and so did unrolling k by 2 (the second pair's loads hoisted).
constexpr int kMR = 4;
constexpr int kNV = kLanes == 1 ? 4 : 2;
constexpr int64_t kNR = kNV * kLanes;
constexpr int64_t kMC = kMR * 16;       // rows per chunk
constexpr int64_t kStripsPerChunk = 4;  // strips (kNR columns each) per chunk
constexpr int64_t kQBlock = 8192;       // row pairs summed in registers before adding into C
static_assert(kPair == 1 || kPair == 2, "int16 lanes per int32 lane");

// ~16 multiply-adds per ns per thread on 8-lane targets; the pool only uses it to decide how many join.
constexpr double kMacsPerNs = 16.0;

inline void PackB(int64_t k, int64_t n, const int16_t* b, int64_t ldb, int16_t* dst) {
  const int64_t kq = (k + kPair - 1) / kPair, strips = (n + kNR - 1) / kNR;
  for (int64_t s = 0; s < strips; ++s) {
    const int64_t j0 = s * kNR, cols = std::min(kNR, n - j0);
    int16_t* ds = dst + s * kq * kNR * kPair;
    for (int64_t q = 0; q < kq; ++q) {
      int16_t* row = ds + q * kNR * kPair;
      for (int64_t t = 0; t < kPair; ++t) {
        const int64_t p = q * kPair + t;
        const int16_t* src = p < k ? b + p * ldb + j0 : nullptr;
        for (int64_t j = 0; j < kNR; ++j) row[j * kPair + t] = (src && j < cols) ? src[j] : int16_t{0};
      }
    }
  }
}

// kernels/qgemm.h qgemm_strip_from_rows: with pairs, each 8 columns of rows 2q and 2q+1 as two 128-bit
// vectors interleaved (a0 b0 a1 b1 ..., the order of a packed row).
inline void StripFromRows(const int16_t* base, const int64_t* tap, int64_t k, int16_t* dst) {
  const int64_t kq = (k + kPair - 1) / kPair;
#if HWY_TARGET != HWY_SCALAR
  if constexpr (kPair == 2 && kNR % 8 == 0) {
    const hn::Full128<int16_t> d8;
    for (int64_t q = 0; q < kq; ++q, dst += kNR * 2) {
      const int16_t* a = base + tap[2 * q];
      const int16_t* b = 2 * q + 1 < k ? base + tap[2 * q + 1] : nullptr;
      for (int64_t j = 0; j < kNR; j += 8) {
        const auto va = hn::LoadU(d8, a + j), vb = b ? hn::LoadU(d8, b + j) : hn::Zero(d8);
        hn::StoreU(hn::InterleaveLower(d8, va, vb), d8, dst + 2 * j);
        hn::StoreU(hn::InterleaveUpper(d8, va, vb), d8, dst + 2 * j + 8);
      }
    }
    return;
  }
#endif
  for (int64_t q = 0; q < kq; ++q, dst += kNR * kPair)
    for (int64_t t = 0; t < kPair; ++t) {
      const int64_t p = q * kPair + t;
      for (int64_t j = 0; j < kNR; ++j) dst[j * kPair + t] = p < k ? base[tap[p] + j] : int16_t{0};
    }
}

// A (m x k, row stride lda, kq * kPair readable columns per row) as panels of kMR rows: panel p, pair q,
// row r, member t at ((p * kq + q) * kMR + r) * kPair + t; rows past m are 0.
inline void PackA(int64_t m, int64_t kq, const int16_t* a, int64_t lda, int16_t* dst) {
  for (int64_t p = 0; p * kMR < m; ++p)
    for (int64_t q = 0; q < kq; ++q)
      for (int64_t r = 0; r < kMR; ++r) {
        int16_t* d = dst + ((p * kq + q) * kMR + r) * kPair;
        const int64_t i = p * kMR + r;
        if (i < m)
          std::memcpy(d, a + i * lda + q * kPair, sizeof(int16_t) * kPair);
        else
          std::memset(d, 0, sizeof(int16_t) * kPair);
      }
}

// C[R x NR] = the first R rows of an A panel (PackA; `a` at the panel's first pair) * packed strip, over kq row
// pairs. (lda is the drivers' row stride, unused: the rows are kPair apart in the panel.)
// GCC 12's loop vectorizer miscompiles this loop on the 1-lane target for aarch64 at -O3 (Micro<1> summed the
// wrong k pairs when kq was even; the arm64 golden row matmulinteger_u8s8 and KernelQGemm found it, and
// -fno-tree-loop-vectorize alone cures it), so that target keeps its loop scalar, as the target is meant to be.
#if HWY_TARGET == HWY_SCALAR && defined(__GNUC__) && !defined(__clang__)
#define ONEMODEL_QGEMM_MICRO_ATTR __attribute__((optimize("no-tree-loop-vectorize")))
#else
#define ONEMODEL_QGEMM_MICRO_ATTR
#endif
template <int R>
ONEMODEL_QGEMM_MICRO_ATTR HWY_NOINLINE void Micro(int64_t kq, const int16_t* HWY_RESTRICT a, int64_t /*lda*/,
                                                  const int16_t* HWY_RESTRICT bp, int32_t* HWY_RESTRICT c,
                                                  int64_t ldc) {
  const D32 d32;
  const D16 d16;
  V32 acc0[R][kNV], acc1[R][kNV];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < kNV; ++v) acc0[r][v] = acc1[r][v] = hn::Zero(d32);
  // Two pointers stepped and compared with an end pointer: clang keeps index loops as written, and in wasm an
  // index costs a shift and an add per operand per step.
  const int16_t* HWY_RESTRICT bq = bp;
  const int16_t* const a_end = a + kq * kMR * kPair;
  for (const int16_t* HWY_RESTRICT aq = a; aq != a_end; aq += kMR * kPair, bq += kNR * kPair) {
    hn::Vec<D16> b[kNV];
    for (int v = 0; v < kNV; ++v) b[v] = hn::LoadU(d16, bq + v * kLanes * kPair);
    for (int r = 0; r < R; ++r) {
      hn::Vec<D16> av;
      if constexpr (kPair == 2) {
        int32_t bits;
        std::memcpy(&bits, aq + r * 2, sizeof bits);
        av = hn::BitCast(d16, hn::Set(d32, bits));
      } else {
        av = hn::Set(d16, aq[r]);
      }
      for (int v = 0; v < kNV; ++v) acc0[r][v] = hn::ReorderWidenMulAccumulate(d32, av, b[v], acc0[r][v], acc1[r][v]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < kNV; ++v)
      hn::StoreU(hn::RearrangeToOddPlusEven(acc0[r][v], acc1[r][v]), d32, c + r * ldc + v * kLanes);
}

#undef ONEMODEL_QGEMM_MICRO_ATTR

using MicroFn = void (*)(int64_t, const int16_t*, int64_t, const int16_t*, int32_t*, int64_t);
template <size_t... Rs>
constexpr std::array<MicroFn, kMR> MicroTable(std::index_sequence<Rs...>) {
  return {&Micro<static_cast<int>(Rs) + 1>...};
}
inline constexpr std::array<MicroFn, kMR> kMicro = MicroTable(std::make_index_sequence<kMR>());

// No correction after a tile (the int16 products). A Post sees each strip of packed B before its tiles
// (`strip(bs, kq, j0, cols)`) and each finished tile (`tile(i, rows, j0, cols, c, ldc)`: rows i.., columns j0..
// of C, at `c`); one Post per chunk, so it may keep per-strip state.
struct NoPost {
  template <typename TB>
  void strip(const TB*, int64_t, int64_t, int64_t) {}
  void tile(int64_t, int64_t, int64_t, int64_t, int32_t*, int64_t) {}
};

// The driver shared by the microkernel families: C = A * packed B with `Micro` (A's elements TA, packed B's TB,
// G k values per int32 lane of a packed row, strips of NR columns), over chunks of kMC rows x kStripsPerChunk
// strips. Row i, lane group q of A is at a + i * lda + q * a_step (row-major A: a_step = G; panels of MR rows:
// lda = kq * G, which puts row i = MR * p at panel p, and a_step = MR * G). k is summed in blocks of `qblock`
// lane groups, blocks after the first added into C with wrap-around. `make_post()` gives each chunk its Post
// (NoPost above).
template <typename TA, typename TB, int64_t G, int64_t NR, size_t MR, class MakePost>
void ComputeWith(const std::array<void (*)(int64_t, const TA*, int64_t, const TB*, int32_t*, int64_t), MR>& micro,
                 int64_t qblock, int64_t m, int64_t n, int64_t k, const TA* a, int64_t lda, int64_t a_step,
                 const TB* packed_b, int32_t* c, int64_t ldc, ThreadPool* pool, const MakePost& make_post) {
  if (m <= 0 || n <= 0) return;
  const int64_t kq = (k + G - 1) / G, strips = (n + NR - 1) / NR;
  const int64_t col_chunks = (strips + kStripsPerChunk - 1) / kStripsPerChunk, row_chunks = (m + kMC - 1) / kMC;
  const double work = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) / kMacsPerNs;
  parallel_for(pool, row_chunks * col_chunks, work, [&](int64_t chunk) {
    const int64_t i0 = (chunk / col_chunks) * kMC, s0 = (chunk % col_chunks) * kStripsPerChunk;
    const int64_t i1 = std::min(m, i0 + kMC), s1 = std::min(strips, s0 + kStripsPerChunk);
    HWY_ALIGN int32_t edge[MR * NR];
    auto post = make_post();
    for (int64_t s = s0; s < s1; ++s) {
      const TB* bs = packed_b + s * kq * NR * G;
      const int64_t j0 = s * NR, cols = std::min(NR, n - j0);
      post.strip(bs, kq, j0, cols);
      for (int64_t i = i0; i < i1; i += static_cast<int64_t>(MR)) {
        const int64_t rows = std::min<int64_t>(static_cast<int64_t>(MR), i1 - i);
        const auto fn = micro[static_cast<size_t>(rows - 1)];
        for (int64_t q0 = 0; q0 < kq; q0 += qblock) {
          const int64_t qn = std::min(qblock, kq - q0);
          const TA* aq = a + i * lda + q0 * a_step;
          const TB* bq = bs + q0 * NR * G;
          if (q0 == 0 && cols == NR) {
            fn(qn, aq, lda, bq, c + i * ldc + j0, ldc);
            continue;
          }
          fn(qn, aq, lda, bq, edge, NR);
          for (int64_t r = 0; r < rows; ++r) {
            int32_t* dst = c + (i + r) * ldc + j0;
            const int32_t* src = edge + r * NR;
            if (q0 == 0) {
              std::memcpy(dst, src, sizeof(int32_t) * static_cast<size_t>(cols));
            } else {
              for (int64_t j = 0; j < cols; ++j)
                dst[j] = static_cast<int32_t>(static_cast<uint32_t>(dst[j]) + static_cast<uint32_t>(src[j]));
            }
          }
        }
        post.tile(i, rows, j0, cols, c + i * ldc + j0, ldc);
      }
    }
  });
}

// k in blocks of kQBlock pairs: within one, |sum| <= 2 * kQBlock * 255 * 255 < 2^31 (no lane can overflow,
// which the scalar fallback's signed arithmetic must never do); blocks after the first are added with
// two's-complement wrap-around, the operators' int32 rule.
inline void Compute(int64_t m, int64_t n, int64_t k, const int16_t* a, int64_t lda, const int16_t* packed_b, int32_t* c,
                    int64_t ldc, ThreadPool* pool) {
  static_assert(kMC % kMR == 0, "chunks hold whole panels");
  const int64_t kq = (k + kPair - 1) / kPair;
  thread_local std::vector<int16_t> panels;
  panels.resize(static_cast<size_t>((m + kMR - 1) / kMR * kMR * kq * kPair));
  PackA(m, kq, a, lda, panels.data());
  ComputeWith<int16_t, int16_t, kPair, kNR>(kMicro, kQBlock, m, n, k, panels.data(), kq * kPair, kMR * kPair, packed_b,
                                            c, ldc, pool, [] { return NoPost{}; });
}

#if HWY_TARGET == HWY_NEON && HWY_ARCH_ARM_A64
// The Arm dot-product path (docs/arm64.md section 4): SDOT multiplies four int8 pairs and adds them to an
// int32 lane. Operands are int16, so each row of A and each column of B is shifted by an offset that brings it
// into int8 (possible when its values span at most 255, which every 8-bit value less a zero point does):
// a = a' + oa[i], b = b' + ob[j], and sum_p a*b = sum_p a'b' + oa[i] * sum_p b' + ob[j] * sum_p a' + k*oa[i]*ob[j],
// all modulo 2^32 (SDOT's lanes wrap; the corrections are computed in uint64 and truncated). Highway 1.0.3 has
// no dot-product op and no runtime choice of it, so the microkernel carries the instruction set itself
// (Armv8.2-A, where the instructions may first appear, plus dotprod: GCC 12 inlines vdotq_s32 only there) and
// runs only when the CPU reports it (kern::arm_dot_product, HWCAP_ASIMDDP).
namespace dot {
constexpr int64_t kQuad = 4;                    // k values per int32 lane
constexpr int kDotNV = 4;                       // int32x4 vectors per strip
constexpr int64_t kDotNR = kDotNV * 4;          // columns per strip
constexpr int64_t kNoBlock = int64_t{1} << 62;  // the hardware's lanes wrap: k needs no blocks

template <int R>
__attribute__((target("arch=armv8.2-a+crypto+dotprod"))) HWY_NOINLINE void Micro(int64_t kq,
                                                                                 const int8_t* HWY_RESTRICT a,
                                                                                 int64_t lda,
                                                                                 const int8_t* HWY_RESTRICT bp,
                                                                                 int32_t* HWY_RESTRICT c, int64_t ldc) {
  int32x4_t acc[R][kDotNV];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < kDotNV; ++v) acc[r][v] = vdupq_n_s32(0);
  for (int64_t q = 0; q < kq; ++q) {
    const int8_t* HWY_RESTRICT bq = bp + q * kDotNR * kQuad;
    int8x16_t b[kDotNV];
    for (int v = 0; v < kDotNV; ++v) b[v] = vld1q_s8(bq + v * 16);
    for (int r = 0; r < R; ++r) {
      int32_t bits;
      std::memcpy(&bits, a + r * lda + q * kQuad, sizeof bits);
      const int8x16_t av = vreinterpretq_s8_s32(vdupq_n_s32(bits));
      for (int v = 0; v < kDotNV; ++v) acc[r][v] = vdotq_s32(acc[r][v], b[v], av);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < kDotNV; ++v) vst1q_s32(c + r * ldc + v * 4, acc[r][v]);
}

using DotMicroFn = void (*)(int64_t, const int8_t*, int64_t, const int8_t*, int32_t*, int64_t);
inline constexpr std::array<DotMicroFn, kMR> kDotMicro = {&Micro<1>, &Micro<2>, &Micro<3>, &Micro<4>};

// The offset of `count` values read with `step` that brings them into [-128, 127] (their minimum + 128), or
// false when they span more than 255.
inline bool Offset(const int16_t* v, int64_t count, int64_t step, int32_t& offset) {
  int32_t lo = v[0], hi = v[0];
  for (int64_t p = 1; p < count; ++p) {
    lo = std::min<int32_t>(lo, v[p * step]);
    hi = std::max<int32_t>(hi, v[p * step]);
  }
  offset = lo + 128;
  return hi - lo <= 255;
}

// C = A * B through SDOT; false (C untouched) when the CPU lacks the instructions or an operand row or column
// spans more than 255. k >= 1, m, n >= 1.
inline bool Product(int64_t m, int64_t n, int64_t k, const int16_t* a, int64_t lda, const int16_t* b, int64_t ldb,
                    int32_t* c, int64_t ldc, ThreadPool* pool) {
  if (!arm_dot_product()) return false;
  thread_local std::vector<int32_t> oa, ob;
  thread_local std::vector<int64_t> sa, sb;
  oa.resize(static_cast<size_t>(m));
  ob.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < m; ++i)
    if (!Offset(a + i * lda, k, 1, oa[static_cast<size_t>(i)])) return false;
  for (int64_t j = 0; j < n; ++j)
    if (!Offset(b + j, k, ldb, ob[static_cast<size_t>(j)])) return false;
  const int64_t kq = (k + kQuad - 1) / kQuad, kp = kq * kQuad, strips = (n + kDotNR - 1) / kDotNR;
  // A' row-major with rows of kp (zero padded), B' in strips: element (p, j) at
  // ((j / NR * kq + p / 4) * NR + j % NR) * 4 + p % 4, padding 0 (padding adds nothing to sum a'b').
  thread_local std::vector<int8_t> pa, pb;
  pa.assign(static_cast<size_t>(m * kp), 0);
  pb.assign(static_cast<size_t>(strips * kq * kDotNR * kQuad), 0);
  sa.assign(static_cast<size_t>(m), 0);
  sb.assign(static_cast<size_t>(n), 0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p) {
      const int32_t v = a[i * lda + p] - oa[static_cast<size_t>(i)];
      pa[static_cast<size_t>(i * kp + p)] = static_cast<int8_t>(v);
      sa[static_cast<size_t>(i)] += v;
    }
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = 0; j < n; ++j) {
      const int32_t v = b[p * ldb + j] - ob[static_cast<size_t>(j)];
      pb[static_cast<size_t>(((j / kDotNR * kq + p / kQuad) * kDotNR + j % kDotNR) * kQuad + p % kQuad)] =
          static_cast<int8_t>(v);
      sb[static_cast<size_t>(j)] += v;
    }
  ComputeWith<int8_t, int8_t, kQuad, kDotNR>(kDotMicro, kNoBlock, m, n, k, pa.data(), kp, kQuad, pb.data(), c, ldc,
                                             pool, [] { return NoPost{}; });
  for (int64_t i = 0; i < m; ++i) {
    const uint64_t oi = static_cast<uint64_t>(int64_t{oa[static_cast<size_t>(i)]});
    const uint64_t si = static_cast<uint64_t>(sa[static_cast<size_t>(i)]);
    for (int64_t j = 0; j < n; ++j) {
      const uint64_t oj = static_cast<uint64_t>(int64_t{ob[static_cast<size_t>(j)]});
      const uint64_t fix =
          oi * static_cast<uint64_t>(sb[static_cast<size_t>(j)]) + oj * si + static_cast<uint64_t>(k) * oi * oj;
      int32_t& out = c[i * ldc + j];
      out = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(static_cast<uint32_t>(out)) + fix));
    }
  }
  return true;
}
}  // namespace dot
inline constexpr auto kDotProduct = &dot::Product;
#else
inline constexpr QGemmFns::DotFn kDotProduct = nullptr;
#endif

#if HWY_TARGET == HWY_AVX3
// The byte product on AVX-512 VNNI (docs/int8.md "Integer product kernel"): VPDPBUSD multiplies four u8 x s8 pairs and
// adds them to an int32 lane without saturating (the sum wraps), twice the k values per instruction of the
// int16 pmaddwd. Highway 1.0.3 has no op for it and no VNNI target of its own, so the microkernel carries the
// instruction set itself and runs only where the CPU reports it (kern::x86_vnni). A holds signed bytes (rows of
// kq * 4, broadcast four at a time), packed B unsigned bytes in strips of 32 columns by quads of k.
namespace vnni {
#define ONEMODEL_VNNI_ATTR __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx512vnni")))
constexpr int64_t kQuad = 4;         // k values per int32 lane
constexpr int kVMR = 8;              // rows of accumulators
constexpr int kVNV = 2;              // zmm vectors of int32 per strip
constexpr int64_t kVNR = kVNV * 16;  // columns per strip
static_assert(kMC % kVMR == 0, "chunks hold whole row tiles");
constexpr int64_t kNoBlock = int64_t{1} << 62;  // the instruction's lanes wrap: k needs no blocks

template <int R>
ONEMODEL_VNNI_ATTR HWY_NOINLINE void Micro(int64_t kq, const int8_t* HWY_RESTRICT a, int64_t lda,
                                           const uint8_t* HWY_RESTRICT bp, int32_t* HWY_RESTRICT c, int64_t ldc) {
  __m512i acc[R][kVNV];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < kVNV; ++v) acc[r][v] = _mm512_setzero_si512();
  for (int64_t q = 0; q < kq; ++q) {
    const uint8_t* HWY_RESTRICT bq = bp + q * kVNR * kQuad;
    __m512i b[kVNV];
    for (int v = 0; v < kVNV; ++v) b[v] = _mm512_loadu_si512(bq + v * 64);
    for (int r = 0; r < R; ++r) {
      int32_t bits;
      std::memcpy(&bits, a + r * lda + q * kQuad, sizeof bits);
      const __m512i av = _mm512_set1_epi32(bits);
      for (int v = 0; v < kVNV; ++v) acc[r][v] = _mm512_dpbusd_epi32(acc[r][v], b[v], av);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < kVNV; ++v) _mm512_storeu_si512(c + r * ldc + v * 16, acc[r][v]);
}

using VMicroFn = void (*)(int64_t, const int8_t*, int64_t, const uint8_t*, int32_t*, int64_t);
template <size_t... Rs>
constexpr std::array<VMicroFn, kVMR> VMicroTable(std::index_sequence<Rs...>) {
  return {&Micro<static_cast<int>(Rs) + 1>...};
}
inline constexpr std::array<VMicroFn, kVMR> kVMicro = VMicroTable(std::make_index_sequence<kVMR>());

// The column sums of one packed strip (u[j] = sum_p B[p][j], modulo 2^32): VPDPBUSD of each quad row against
// signed ones, before the strip's tiles, which then find its bytes in cache (1/m of the product's VPDPBUSD).
ONEMODEL_VNNI_ATTR HWY_NOINLINE inline void StripSums(int64_t kq, const uint8_t* HWY_RESTRICT bp, int32_t* u) {
  const __m512i ones = _mm512_set1_epi8(1);
  __m512i s0 = _mm512_setzero_si512(), s1 = _mm512_setzero_si512();
  for (int64_t q = 0; q < kq; ++q) {
    s0 = _mm512_dpbusd_epi32(s0, _mm512_loadu_si512(bp + q * kVNR * kQuad), ones);
    s1 = _mm512_dpbusd_epi32(s1, _mm512_loadu_si512(bp + q * kVNR * kQuad + 64), ones);
  }
  _mm512_storeu_si512(u, s0);
  _mm512_storeu_si512(u + 16, s1);
}

// c[i][j] += s[i] * u[j] - r[i] - v[i] * w[j] on each finished tile (uint32 arithmetic: wrap-around), u the
// column sums of packed B.
struct Fix {
  const Q8Fix& f;
  HWY_ALIGN int32_t u[kVNR];
  void strip(const uint8_t* bs, int64_t kq, int64_t, int64_t) { StripSums(kq, bs, u); }
  void tile(int64_t i0, int64_t rows, int64_t j0, int64_t cols, int32_t* c, int64_t ldc) const {
    for (int64_t r = 0; r < rows; ++r) {
      const uint32_t s = static_cast<uint32_t>(f.s[i0 + r]), rr = static_cast<uint32_t>(f.r[i0 + r]);
      int32_t* HWY_RESTRICT row = c + r * ldc;
      if (f.w) {
        const uint32_t v = static_cast<uint32_t>(f.v[i0 + r]);
        const int32_t* w = f.w + j0;
        for (int64_t j = 0; j < cols; ++j)
          row[j] = static_cast<int32_t>(static_cast<uint32_t>(row[j]) + s * static_cast<uint32_t>(u[j]) - rr -
                                        v * static_cast<uint32_t>(w[j]));
      } else {
        for (int64_t j = 0; j < cols; ++j)
          row[j] = static_cast<int32_t>(static_cast<uint32_t>(row[j]) + s * static_cast<uint32_t>(u[j]) - rr);
      }
    }
  }
};

inline void Compute(int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda, const uint8_t* packed_b,
                    const Q8Fix& fix, int32_t* c, int64_t ldc, ThreadPool* pool) {
  ComputeWith<int8_t, uint8_t, kQuad, kVNR>(kVMicro, kNoBlock, m, n, k, a, lda, kQuad, packed_b, c, ldc, pool, [&fix] {
    return Fix{fix, {}};
  });
}
#undef ONEMODEL_VNNI_ATTR
}  // namespace vnni
inline constexpr QGemmFns::Q8Fn kQ8Product = &vnni::Compute;
inline constexpr int64_t kQ8Nr = vnni::kVNR;
#else
inline constexpr QGemmFns::Q8Fn kQ8Product = nullptr;
inline constexpr int64_t kQ8Nr = 0;
#endif

}  // namespace qgemm_detail

inline constexpr QGemmFns kQGemmFns{qgemm_detail::kNR,        qgemm_detail::kPair,         &qgemm_detail::PackB,
                                    &qgemm_detail::Compute,   qgemm_detail::kDotProduct,   qgemm_detail::kQ8Nr,
                                    qgemm_detail::kQ8Product, &qgemm_detail::StripFromRows};

}  // namespace onemodel::kern::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif
