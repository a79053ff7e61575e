// Softmax rows (kernels/softmax.h) on every target this machine runs. The exact flavour is compared bit for bit
// with a naive reference written here from kernels-attention.md "Softmax" (scalar float arithmetic, one
// rounding per operator: the engine is built with -ffp-contract=off); the fast flavour with double-precision
// references within stated bounds.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kernels/exact_math.h"
#include "kernels/isa.h"
#include "kernels/softmax.h"
#include "ops_norms_ref.h"

namespace onemodel::kern {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
uint32_t u32(float f) { return std::bit_cast<uint32_t>(f); }

// ---- references ----

using test::ref_sum16;

float canon(float v) { return v != v ? std::bit_cast<float>(0x7FC00000u) : v; }

std::vector<float> ref_softmax(const std::vector<float>& x, bool log) {
  float m = -kInf;
  for (float v : x)
    if (v > m) m = v;
  std::vector<float> dd(x.size()), e(x.size()), y(x.size());
  for (size_t j = 0; j < x.size(); ++j) {
    dd[j] = x[j] - m;
    e[j] = kern::exact_exp_nonpositive(dd[j]);
  }
  const float l = ref_sum16(e);
  const float ll = kern::exact_log(l);
  for (size_t j = 0; j < x.size(); ++j) y[j] = canon(log ? dd[j] - ll : e[j] / l);
  return y;
}

// ---- softmax rows ----

TEST(KernelSoftmax, ExactRowsEqualReferenceOnEveryTarget) {
  std::mt19937 rng(11);
  std::normal_distribution<float> g(0.0f, 4.0f);
  const float specials[] = {kInf, -kInf, std::bit_cast<float>(0xFFC12345u), 0.0f, -0.0f, 1e-40f, -100.0f, 88.0f};
  for (int64_t n : {1, 2, 3, 15, 16, 17, 31, 33, 64, 70, 257, 1000}) {
    for (int variant = 0; variant < 6; ++variant) {
      std::vector<float> x(static_cast<size_t>(n));
      for (float& v : x) v = g(rng);
      if (variant == 1) x[static_cast<size_t>(n / 2)] = specials[rng() % 8];  // one special
      if (variant == 2)
        for (float& v : x) v = -kInf;  // all -inf
      if (variant == 3) x[0] = -kInf;  // one -inf
      if (variant == 4)
        for (size_t j = 0; j < x.size(); j += 3) x[j] = specials[rng() % 8];  // many
      if (variant == 5)
        for (float& v : x) v = v * 30.0f;  // wide
      for (bool log : {false, true}) {
        const std::vector<float> want = ref_softmax(x, log);
        for (Isa isa : available_isas()) {
          std::vector<float> y(x.size() + 1, 555.0f);
          if (log)
            log_softmax_rows(isa, true, x.data(), y.data(), 1, n);
          else
            softmax_rows(isa, true, x.data(), y.data(), 1, n);
          ASSERT_EQ(y.back(), 555.0f);
          for (size_t j = 0; j < x.size(); ++j)
            ASSERT_EQ(u32(y[j]), u32(want[j]))
                << isa_name(isa) << " log=" << log << " n=" << n << " variant=" << variant << " j=" << j;
          // In place gives the same bits.
          std::vector<float> z = x;
          if (log)
            log_softmax_rows(isa, true, z.data(), z.data(), 1, n);
          else
            softmax_rows(isa, true, z.data(), z.data(), 1, n);
          for (size_t j = 0; j < x.size(); ++j) ASSERT_EQ(u32(z[j]), u32(want[j]));
        }
      }
    }
  }
}

TEST(KernelSoftmax, FastRowsAreCloseToDouble) {
  std::mt19937 rng(5);
  std::normal_distribution<float> g(0.0f, 3.0f);
  for (int64_t n : {1, 7, 64, 333}) {
    std::vector<float> x(static_cast<size_t>(n * 3));
    for (float& v : x) v = g(rng);
    for (Isa isa : available_isas()) {
      std::vector<float> y(x.size()), yl(x.size());
      softmax_rows(isa, false, x.data(), y.data(), 3, n);
      log_softmax_rows(isa, false, x.data(), yl.data(), 3, n);
      for (int64_t r = 0; r < 3; ++r) {
        double m = -INFINITY, l = 0;
        for (int64_t j = 0; j < n; ++j) m = std::max(m, static_cast<double>(x[static_cast<size_t>(r * n + j)]));
        for (int64_t j = 0; j < n; ++j) l += std::exp(x[static_cast<size_t>(r * n + j)] - m);
        for (int64_t j = 0; j < n; ++j) {
          const double xv = x[static_cast<size_t>(r * n + j)];
          const double want = std::exp(xv - m) / l;
          // Fast exp is about 2.3 ulp, the 1/l product and the sum add a few more: 1e-6 relative.
          EXPECT_NEAR(y[static_cast<size_t>(r * n + j)], want, 1e-6 * want + 1e-30) << isa_name(isa);
          EXPECT_NEAR(yl[static_cast<size_t>(r * n + j)], xv - m - std::log(l), 2e-6 * (1 + std::fabs(xv - m)))
              << isa_name(isa);
        }
      }
    }
  }
}

// Attention's score rows (kernels-attention.md section 2): exact bits equal s * c (or s / c) rounded, + mask
// rounded, then the reference softmax; masks of one value per row (mask_col 0), one per key, or none.
TEST(KernelSoftmax, ExactScoreRowsEqualTheSeparateSteps) {
  std::mt19937 rng(17);
  std::normal_distribution<float> g(0.0f, 4.0f);
  const float specials[] = {kInf, -kInf, std::bit_cast<float>(0xFFC12345u), -0.0f, 1e-40f, 3e38f, -3e38f};
  for (int64_t n : {1, 5, 16, 17, 32, 33, 48, 128, 131}) {
    for (int variant = 0; variant < 3; ++variant) {
      const int64_t rows = 3;
      std::vector<float> s(static_cast<size_t>(rows * n)), mask(static_cast<size_t>(rows * n));
      for (float& v : s) v = g(rng);
      for (float& v : mask) v = rng() % 4 == 0 ? std::numeric_limits<float>::lowest() : g(rng);
      if (variant > 0)
        for (size_t j = variant; j < s.size(); j += 7) s[j] = specials[rng() % 7];
      if (variant == 2)
        for (size_t j = 1; j < mask.size(); j += 5) mask[j] = specials[rng() % 7];
      for (int masking = 0; masking < 3; ++masking) {  // none, one value per row, one per key
        for (bool div : {false, true}) {
          const float c = div ? 5.656854f : 0.17677669f;
          std::vector<float> want;
          for (int64_t r = 0; r < rows; ++r) {
            std::vector<float> row(static_cast<size_t>(n));
            for (int64_t j = 0; j < n; ++j) {
              float v = s[static_cast<size_t>(r * n + j)];
              v = div ? v / c : v * c;
              if (masking == 1) v = v + mask[static_cast<size_t>(r * n)];
              if (masking == 2) v = v + mask[static_cast<size_t>(r * n + j)];
              row[static_cast<size_t>(j)] = v;
            }
            const std::vector<float> y = ref_softmax(row, false);
            want.insert(want.end(), y.begin(), y.end());
          }
          ScoreSoftmax a{c, div, masking == 0 ? nullptr : mask.data(), n, masking == 1 ? 0 : 1};
          for (Isa isa : available_isas()) {
            std::vector<float> y = s;
            score_softmax_rows(isa, true, y.data(), rows, n, a);
            for (size_t j = 0; j < y.size(); ++j)
              ASSERT_EQ(u32(y[j]), u32(want[j])) << isa_name(isa) << " n=" << n << " variant=" << variant
                                                 << " masking=" << masking << " div=" << div << " j=" << j;
          }
        }
      }
    }
  }
}

// Fast flavour: close to double, and a NaN anywhere in a row (score or mask) makes the whole row canonical NaN,
// as in softmax_rows (whose fast exponential passes NaN on uncanonicalised: the normalisation canonicalises it).
TEST(KernelSoftmax, FastScoreRowsAreCloseToDoubleAndNaNRowsCanonical) {
  std::mt19937 rng(23);
  std::normal_distribution<float> g(0.0f, 3.0f);
  const float qnan = std::bit_cast<float>(0xFFC12345u);
  for (int64_t n : {1, 7, 16, 33, 128, 333}) {
    const int64_t rows = 3;
    std::vector<float> s(static_cast<size_t>(rows * n)), mask(static_cast<size_t>(n));
    for (float& v : s) v = g(rng) * 8.0f;
    for (float& v : mask) v = rng() % 5 == 0 ? -10000.0f : 0.0f;
    for (Isa isa : available_isas()) {
      std::vector<float> y = s;
      score_softmax_rows(isa, false, y.data(), rows, n, ScoreSoftmax{8.0f, true, mask.data(), 0, 1});
      for (int64_t r = 0; r < rows; ++r) {
        std::vector<double> t(static_cast<size_t>(n));
        double m = -INFINITY, l = 0;
        for (int64_t j = 0; j < n; ++j) {
          t[static_cast<size_t>(j)] =
              static_cast<double>(s[static_cast<size_t>(r * n + j)]) / 8.0 + mask[static_cast<size_t>(j)];
          m = std::max(m, t[static_cast<size_t>(j)]);
        }
        for (double v : t) l += std::exp(v - m);
        for (int64_t j = 0; j < n; ++j) {
          const double want = std::exp(t[static_cast<size_t>(j)] - m) / l;
          EXPECT_NEAR(y[static_cast<size_t>(r * n + j)], want, 1e-6 * want + 1e-30) << isa_name(isa) << " n=" << n;
        }
      }
      // A NaN score in row 1, a NaN mask value for every row: rows all canonical NaN.
      for (int where = 0; where < 2; ++where) {
        std::vector<float> z = s, mk = mask;
        if (where == 0) z[static_cast<size_t>(n + n / 2)] = qnan;
        if (where == 1) mk[static_cast<size_t>(n - 1)] = qnan;
        score_softmax_rows(isa, false, z.data(), rows, n, ScoreSoftmax{0.125f, false, mk.data(), 0, 1});
        for (int64_t r = where == 0 ? 1 : 0; r < (where == 0 ? 2 : rows); ++r)
          for (int64_t j = 0; j < n; ++j)
            ASSERT_EQ(u32(z[static_cast<size_t>(r * n + j)]), 0x7FC00000u) << isa_name(isa) << " n=" << n;
        std::vector<float> p = s;
        p[static_cast<size_t>(n / 3)] = qnan;
        softmax_rows(isa, false, p.data(), p.data(), 1, n);
        for (int64_t j = 0; j < n; ++j) ASSERT_EQ(u32(p[static_cast<size_t>(j)]), 0x7FC00000u) << isa_name(isa);
      }
    }
  }
}

TEST(KernelSoftmax, Sum16EqualsReference) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1e4f, 1e4f);
  for (int64_t n = 0; n <= 100; ++n) {
    std::vector<float> x(static_cast<size_t>(n));
    for (float& v : x) v = u(rng);
    if (n == 50) x[7] = -0.0f;
    for (Isa isa : available_isas()) ASSERT_EQ(u32(sum16_f32(isa, x.data(), n)), u32(ref_sum16(x))) << n;
  }
}

}  // namespace
}  // namespace onemodel::kern
