// Dispatch for kernels/qgemm.h: the Highway per-target pass, then the entry point, which owns the packed-B
// buffer (kept per calling thread) and pads A's rows to whole pairs when k is odd.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/qgemm.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/qgemm-inl.h"

#if HWY_ONCE
#include <cstring>
#include <string>
#include <vector>

#include "kernels/per_target.h"
#include "kernels/qgemm.h"
#include "onemodel/error.h"

namespace onemodel::kern {

void qgemm_s16(Isa isa, int64_t m, int64_t n, int64_t k, const int16_t* a, int64_t lda, const int16_t* b, int64_t ldb,
               int32_t* c, int64_t ldc, ThreadPool* pool) {
  if (m < 0 || n < 0 || k < 0)
    throw Error(ErrorKind::InvalidArgument, "qgemm_s16: negative size m=" + std::to_string(m) +
                                                " n=" + std::to_string(n) + " k=" + std::to_string(k));
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i) std::memset(c + i * ldc, 0, sizeof(int32_t) * static_cast<size_t>(n));
    return;
  }
  const QGemmFns& fns = *ONEMODEL_PER_TARGET(kQGemmFns, isa);
  if (fns.dot && fns.dot(m, n, k, a, lda, b, ldb, c, ldc, pool)) return;
  const int64_t kq = (k + fns.pair - 1) / fns.pair, strips = (n + fns.nr - 1) / fns.nr;
  thread_local std::vector<int16_t> packed, padded_a;
  packed.resize(static_cast<size_t>(strips * kq * fns.nr * fns.pair));
  fns.pack_b(k, n, b, ldb, packed.data());
  if (kq * fns.pair != k) {  // odd k: rows padded with one 0 so every pair is readable
    const int64_t kp = kq * fns.pair;
    padded_a.assign(static_cast<size_t>(m * kp), 0);
    for (int64_t i = 0; i < m; ++i) std::memcpy(padded_a.data() + i * kp, a + i * lda, sizeof(int16_t) * size_t(k));
    a = padded_a.data();
    lda = kp;
  }
  fns.compute(m, n, k, a, lda, packed.data(), c, ldc, pool);
}

QGemmLayout qgemm_layout(Isa isa) {
  const QGemmFns& fns = *ONEMODEL_PER_TARGET(kQGemmFns, isa);
  return QGemmLayout{fns.nr, fns.pair};
}

void qgemm_s16_packed(Isa isa, int64_t m, int64_t n, int64_t k, const int16_t* a, int64_t lda, const int16_t* packed_b,
                      int32_t* c, int64_t ldc, ThreadPool* pool) {
  if (m < 0 || n < 0 || k < 0) throw Error(ErrorKind::InvalidArgument, "qgemm_s16_packed: negative size");
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i) std::memset(c + i * ldc, 0, sizeof(int32_t) * static_cast<size_t>(n));
    return;
  }
  ONEMODEL_PER_TARGET(kQGemmFns, isa)->compute(m, n, k, a, lda, packed_b, c, ldc, pool);
}

void qgemm_strip_from_rows(Isa isa, const int16_t* base, const int64_t* tap, int64_t k, int16_t* dst) {
  ONEMODEL_PER_TARGET(kQGemmFns, isa)->strip_from_rows(base, tap, k, dst);
}

QGemmLayout qgemm_q8_layout(Isa isa) {
  const QGemmFns& fns = *ONEMODEL_PER_TARGET(kQGemmFns, isa);
  // The instructions are the CPU's, not the target's: AVX-512 VNNI on top of the Avx512 target.
  const bool runs = fns.q8 && isa == Isa::Avx512 && x86_vnni();
  return QGemmLayout{runs ? fns.q8_nr : 0, 4};
}

void qgemm_q8_packed(Isa isa, int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda, const uint8_t* packed_b,
                     const Q8Fix& fix, int32_t* c, int64_t ldc, ThreadPool* pool) {
  if (m < 0 || n < 0 || k < 0) throw Error(ErrorKind::InvalidArgument, "qgemm_q8_packed: negative size");
  if (qgemm_q8_layout(isa).nr == 0)
    throw Error(ErrorKind::Internal, "qgemm_q8_packed: no byte product on " + std::string(isa_name(isa)));
  if (m == 0 || n == 0) return;
  if (k == 0) {  // no product: the correction alone, with column sums 0
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const uint32_t vw = fix.v ? static_cast<uint32_t>(fix.v[i]) * static_cast<uint32_t>(fix.w[j]) : 0u;
        c[i * ldc + j] = static_cast<int32_t>(0u - static_cast<uint32_t>(fix.r[i]) - vw);
      }
    return;
  }
  ONEMODEL_PER_TARGET(kQGemmFns, isa)->q8(m, n, k, a, lda, packed_b, fix, c, ldc, pool);
}

}  // namespace onemodel::kern
#endif
