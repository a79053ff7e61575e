// Per-target code for kernels/qgemm.h. Included once per target by qgemm.cc through hwy/foreach_target.h.
//
// Layout: B is packed into strips of NR int32 columns; one packed row holds, per column, `pair` consecutive k
// values (the int16 lanes that one int32 lane of ReorderWidenMulAccumulate multiplies and adds). A row pair of
// A is broadcast as one int32 and reinterpreted as int16 lanes, so a vector multiply-add forms
// a[i][p] * b[p][j] + a[i][p+1] * b[p+1][j] in every int32 lane j. The microkernel keeps R x NV accumulators
// for all of k (integer sums need no k-blocking for their bits) and stores them once.
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

#include "base/thread_pool.h"
#include "hwy/highway.h"
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

// C[R x NR] = A rows (R of them, stride lda) * packed strip, over kq row pairs.
template <int R>
HWY_NOINLINE void Micro(int64_t kq, const int16_t* HWY_RESTRICT a, int64_t lda, const int16_t* HWY_RESTRICT bp,
                        int32_t* HWY_RESTRICT c, int64_t ldc) {
  const D32 d32;
  const D16 d16;
  V32 acc0[R][kNV], acc1[R][kNV];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < kNV; ++v) acc0[r][v] = acc1[r][v] = hn::Zero(d32);
  for (int64_t q = 0; q < kq; ++q) {
    const int16_t* HWY_RESTRICT bq = bp + q * kNR * kPair;
    hn::Vec<D16> b[kNV];
    for (int v = 0; v < kNV; ++v) b[v] = hn::LoadU(d16, bq + v * kLanes * kPair);
    for (int r = 0; r < R; ++r) {
      hn::Vec<D16> av;
      if constexpr (kPair == 2) {
        int32_t bits;
        std::memcpy(&bits, a + r * lda + q * 2, sizeof bits);
        av = hn::BitCast(d16, hn::Set(d32, bits));
      } else {
        av = hn::Set(d16, a[r * lda + q]);
      }
      for (int v = 0; v < kNV; ++v) acc0[r][v] = hn::ReorderWidenMulAccumulate(d32, av, b[v], acc0[r][v], acc1[r][v]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < kNV; ++v)
      hn::StoreU(hn::RearrangeToOddPlusEven(acc0[r][v], acc1[r][v]), d32, c + r * ldc + v * kLanes);
}

using MicroFn = void (*)(int64_t, const int16_t*, int64_t, const int16_t*, int32_t*, int64_t);
template <size_t... Rs>
constexpr std::array<MicroFn, kMR> MicroTable(std::index_sequence<Rs...>) {
  return {&Micro<static_cast<int>(Rs) + 1>...};
}
inline constexpr std::array<MicroFn, kMR> kMicro = MicroTable(std::make_index_sequence<kMR>());

inline void Compute(int64_t m, int64_t n, int64_t k, const int16_t* a, int64_t lda, const int16_t* packed_b, int32_t* c,
                    int64_t ldc, ThreadPool* pool) {
  if (m <= 0 || n <= 0) return;
  const int64_t kq = (k + kPair - 1) / kPair, strips = (n + kNR - 1) / kNR;
  const int64_t col_chunks = (strips + kStripsPerChunk - 1) / kStripsPerChunk, row_chunks = (m + kMC - 1) / kMC;
  const double work = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) / kMacsPerNs;
  parallel_for(pool, row_chunks * col_chunks, work, [&](int64_t chunk) {
    const int64_t i0 = (chunk / col_chunks) * kMC, s0 = (chunk % col_chunks) * kStripsPerChunk;
    const int64_t i1 = std::min(m, i0 + kMC), s1 = std::min(strips, s0 + kStripsPerChunk);
    HWY_ALIGN int32_t edge[kMR * kNR];
    for (int64_t s = s0; s < s1; ++s) {
      const int16_t* bs = packed_b + s * kq * kNR * kPair;
      const int64_t j0 = s * kNR, cols = std::min(kNR, n - j0);
      for (int64_t i = i0; i < i1; i += kMR) {
        const int64_t rows = std::min<int64_t>(kMR, i1 - i);
        const MicroFn fn = kMicro[static_cast<size_t>(rows - 1)];
        // k in blocks of kQBlock pairs: within one, |sum| <= 2 * kQBlock * 255 * 255 < 2^31 (no lane can
        // overflow, which the scalar fallback's signed arithmetic must never do); blocks after the first are
        // added with two's-complement wrap-around, the operators' int32 rule.
        for (int64_t q0 = 0; q0 < kq; q0 += kQBlock) {
          const int64_t qn = std::min(kQBlock, kq - q0);
          const int16_t* aq = a + i * lda + q0 * kPair;
          const int16_t* bq = bs + q0 * kNR * kPair;
          if (q0 == 0 && cols == kNR) {
            fn(qn, aq, lda, bq, c + i * ldc + j0, ldc);
            continue;
          }
          fn(qn, aq, lda, bq, edge, kNR);
          for (int64_t r = 0; r < rows; ++r) {
            int32_t* dst = c + (i + r) * ldc + j0;
            const int32_t* src = edge + r * kNR;
            if (q0 == 0) {
              std::memcpy(dst, src, sizeof(int32_t) * static_cast<size_t>(cols));
            } else {
              for (int64_t j = 0; j < cols; ++j)
                dst[j] = static_cast<int32_t>(static_cast<uint32_t>(dst[j]) + static_cast<uint32_t>(src[j]));
            }
          }
        }
      }
    }
  });
}

}  // namespace qgemm_detail

inline constexpr QGemmFns kQGemmFns{qgemm_detail::kNR, qgemm_detail::kPair, &qgemm_detail::PackB,
                                    &qgemm_detail::Compute};

}  // namespace onemodel::kern::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif
