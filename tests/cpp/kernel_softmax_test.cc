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
