// qgemm_s16 (kernels/qgemm.h) on every target this machine runs and at 1, 2 and 7 threads, against a plain
// triple loop summing in int64 and wrapping to int32 (the int8 operators' rule): integer sums are exact, so
// every target, tile and thread count must give exactly the reference's values, including wrap-around. On
// aarch64 with the dot-product instructions, operands whose rows (A) and columns (B) span at most 255 -- fill 2,
// what the operators pass, and fill 1 -- take the SDOT path (docs/arm64.md section 4), the others the widening
// one; tools/arm64/run.sh runs this test on CPUs with and without SDOT.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "kernels/isa.h"
#include "kernels/qgemm.h"

namespace onemodel::kern {
namespace {

struct Case {
  int64_t m, n, k;
  // 0 random in [-255, 255]; 1 all -255 (the largest products: sums wrap for large k); 2 8-bit values less
  // zero points: A[i][p] = x - za[i] with x, za[i] uint8, B[p][j] = w - zb[j] with w, zb[j] int8
  int fill;
};

std::vector<int32_t> reference(const Case& c, const std::vector<int16_t>& a, int64_t lda, const std::vector<int16_t>& b,
                               int64_t ldb) {
  std::vector<int32_t> out(static_cast<size_t>(c.m * c.n));
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < c.n; ++j) {
      int64_t s = 0;
      for (int64_t p = 0; p < c.k; ++p)
        s += int64_t{a[static_cast<size_t>(i * lda + p)]} * b[static_cast<size_t>(p * ldb + j)];
      out[static_cast<size_t>(i * c.n + j)] = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(s)));
    }
  return out;
}

// got (m rows of stride ldc, one sentinel -99 after each row's n values) equals want (m x n, dense).
void expect_product(const std::vector<int32_t>& got, const std::vector<int32_t>& want, int64_t m, int64_t n,
                    int64_t ldc, const std::string& where) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j)
      ASSERT_EQ(got[static_cast<size_t>(i * ldc + j)], want[static_cast<size_t>(i * n + j)])
          << "(" << i << "," << j << ") " << where;
    ASSERT_EQ(got[static_cast<size_t>(i * ldc + n)], -99) << "wrote past a row " << where;
  }
}

TEST(KernelQGemm, EveryTargetAndThreadCountMatchesPlainLoop) {
  std::vector<Case> cases = {{1, 1, 1, 0},
                             {1, 1, 0, 0},
                             {3, 5, 7, 0},
                             {4, 16, 2, 0},
                             {5, 17, 33, 0},
                             {13, 40, 64, 0},
                             {64, 31, 9, 0},
                             {65, 70, 27, 0},
                             {130, 3, 5, 0},
                             {2, 129, 18, 0},
                             {7, 300, 11, 0},
                             // k past one register block (16384 pairs): sums added in blocks, and wrapped.
                             {2, 3, 40001, 0},
                             {3, 2, 40000, 1},
                             {1, 33, 33025, 1},
                             {1, 1, 1, 2},
                             {4, 16, 4, 2},
                             {5, 17, 33, 2},
                             {65, 70, 27, 2},
                             {7, 300, 11, 2},
                             {3, 40, 40001, 2}};
  std::mt19937 rng(11);
  auto pick = [&](int lo, int hi) { return int64_t(std::uniform_int_distribution<int>(lo, hi)(rng)); };
  for (int i = 0; i < 30; ++i) cases.push_back({pick(1, 40), pick(1, 80), pick(0, 90), 0});
  for (int i = 0; i < 30; ++i) cases.push_back({pick(1, 40), pick(1, 80), pick(0, 90), 2});
  ThreadPool pool2(2), pool7(7);
  std::uniform_int_distribution<int> val(-255, 255);
  for (const Case& c : cases) {
    // Strided operands: row strides larger than the rows, so packing must honour them.
    const int64_t lda = c.k + 3, ldb = c.n + 2, ldc = c.n + 1;
    std::vector<int16_t> a(static_cast<size_t>(c.m * lda + 1), 7777), b(static_cast<size_t>(c.k * ldb + 1), 7777);
    std::vector<int> za(static_cast<size_t>(c.m)), zb(static_cast<size_t>(c.n));
    if (c.fill == 2) {
      for (int& z : za) z = static_cast<int>(pick(0, 255));
      for (int& z : zb) z = static_cast<int>(pick(-128, 127));
    }
    auto value = [&](int zero, int lo, int hi) {
      return static_cast<int16_t>(c.fill == 0 ? val(rng) : c.fill == 1 ? -255 : static_cast<int>(pick(lo, hi)) - zero);
    };
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t p = 0; p < c.k; ++p) a[static_cast<size_t>(i * lda + p)] = value(za[static_cast<size_t>(i)], 0, 255);
    for (int64_t p = 0; p < c.k; ++p)
      for (int64_t j = 0; j < c.n; ++j)
        b[static_cast<size_t>(p * ldb + j)] = value(zb[static_cast<size_t>(j)], -128, 127);
    const std::vector<int32_t> want = reference(c, a, lda, b, ldb);
    for (Isa isa : available_isas())
      for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2, &pool7}) {
        std::vector<int32_t> got(static_cast<size_t>(c.m * ldc + 1), -99);
        qgemm_s16(isa, c.m, c.n, c.k, a.data(), lda, b.data(), ldb, got.data(), ldc, pool);
        const std::string where = std::string(isa_name(isa)) + " threads " +
                                  std::to_string(pool ? pool->threads() : 1) + " m=" + std::to_string(c.m) +
                                  " n=" + std::to_string(c.n) + " k=" + std::to_string(c.k);
        expect_product(got, want, c.m, c.n, ldc, where);
      }
  }
}

// The byte product (qgemm_q8_packed, AVX-512 VNNI) against a plain loop: signed-byte A, unsigned-byte B packed
// at QGemmLayout::at (padding rows 0), plus the correction s[i] * u[j] - r[i] - v[i] * w[j] with u the column
// sums, all wrapped to int32. Extreme bytes (-128, 127, 0, 255) and k past 2^31 / (128 * 255) so sums wrap.
TEST(KernelQGemm, BytePathMatchesPlainLoopWithCorrections) {
  const QGemmLayout lay = qgemm_q8_layout(Isa::Avx512);
  if (lay.nr == 0) GTEST_SKIP() << "this CPU has no byte product (AVX-512 VNNI)";
  struct BCase {
    int64_t m, n, k;
    bool extreme, vw;
  };
  std::vector<BCase> cases = {{1, 1, 1, false, false},   {3, 5, 0, false, true},      {8, 32, 4, false, true},
                              {9, 33, 5, false, false},  {3, 70, 37, true, true},     {70, 65, 130, false, true},
                              {130, 7, 9, false, false}, {2, 40, 70001, true, false}, {17, 100, 1152, false, true}};
  std::mt19937 rng(23);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int i = 0; i < 20; ++i)
    cases.push_back({pick(1, 40), pick(1, 100), pick(0, 90), pick(0, 1) == 1, pick(0, 1) == 1});
  ThreadPool pool2(2), pool7(7);
  for (const BCase& c : cases) {
    const int64_t kq = lay.kq(c.k), kp = kq * lay.pair, lda = kp + 4, ldc = c.n + 3;
    std::vector<int8_t> a(static_cast<size_t>(c.m * lda), 0);
    std::vector<uint8_t> b(static_cast<size_t>(c.k * c.n)), packed(static_cast<size_t>(lay.packed_size(c.k, c.n)), 0);
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t p = 0; p < c.k; ++p)
        a[static_cast<size_t>(i * lda + p)] =
            static_cast<int8_t>(c.extreme ? (pick(0, 1) ? -128 : 127) : pick(-128, 127));
    for (int64_t p = 0; p < c.k; ++p)
      for (int64_t j = 0; j < c.n; ++j) {
        const auto v = static_cast<uint8_t>(c.extreme ? (pick(0, 1) ? 255 : 0) : pick(0, 255));
        b[static_cast<size_t>(p * c.n + j)] = v;
        packed[static_cast<size_t>(lay.at(c.k, p, j))] = v;
      }
    std::vector<int32_t> fs(static_cast<size_t>(c.m)), fr(fs.size()), fv(fs.size()), fw(static_cast<size_t>(c.n));
    for (auto* vec : {&fs, &fr, &fv, &fw})
      for (int32_t& x : *vec)  // some large enough that the corrections wrap (products taken modulo 2^32)
        x = static_cast<int32_t>(static_cast<uint32_t>(int64_t{pick(-100000, 100000)} * (pick(0, 3) == 0 ? 30000 : 1)));
    const Q8Fix fix{fs.data(), fr.data(), c.vw ? fv.data() : nullptr, c.vw ? fw.data() : nullptr};
    std::vector<int32_t> want(static_cast<size_t>(c.m * c.n));
    for (int64_t j = 0; j < c.n; ++j) {
      int64_t u = 0;
      for (int64_t p = 0; p < c.k; ++p) u += b[static_cast<size_t>(p * c.n + j)];
      for (int64_t i = 0; i < c.m; ++i) {
        int64_t sum = 0;
        for (int64_t p = 0; p < c.k; ++p)
          sum += int64_t{a[static_cast<size_t>(i * lda + p)]} * b[static_cast<size_t>(p * c.n + j)];
        const uint64_t total = static_cast<uint64_t>(sum) +
                               static_cast<uint64_t>(int64_t{fs[static_cast<size_t>(i)]}) * static_cast<uint64_t>(u) -
                               static_cast<uint64_t>(int64_t{fr[static_cast<size_t>(i)]}) -
                               (c.vw ? static_cast<uint64_t>(int64_t{fv[static_cast<size_t>(i)]}) *
                                           static_cast<uint64_t>(int64_t{fw[static_cast<size_t>(j)]})
                                     : 0);
        want[static_cast<size_t>(i * c.n + j)] = static_cast<int32_t>(static_cast<uint32_t>(total));
      }
    }
    for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2, &pool7}) {
      std::vector<int32_t> got(static_cast<size_t>(c.m * ldc), -99);
      qgemm_q8_packed(Isa::Avx512, c.m, c.n, c.k, a.data(), lda, packed.data(), fix, got.data(), ldc, pool);
      const std::string where = "threads " + std::to_string(pool ? pool->threads() : 1) + " m=" + std::to_string(c.m) +
                                " n=" + std::to_string(c.n) + " k=" + std::to_string(c.k);
      expect_product(got, want, c.m, c.n, ldc, where);
    }
  }
}

}  // namespace
}  // namespace onemodel::kern
