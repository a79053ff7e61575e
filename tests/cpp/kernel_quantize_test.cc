// quantize_u8 (kernels/quantize.h) on every target this machine runs, against the scalar rule the other
// quantizing operators use (ops/quant_common.h saturate_round of x / scale): round half to even, clamp to
// [0, 255], NaN to 0, for ties, infinities, huge and tiny values, several scales and zero points, ragged
// lengths, and nothing written past n.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/isa.h"
#include "kernels/quantize.h"
#include "ops/quant_common.h"

namespace onemodel::kern {
namespace {

TEST(KernelQuantize, EveryTargetMatchesTheScalarRule) {
  const float inf = std::numeric_limits<float>::infinity();
  std::mt19937 rng(3);
  for (Isa isa : available_isas())
    for (float scale : {1.0f, 0.5f, 1.0f / 255.0f, 0.0123f, 3e-39f, 7.5f})
      for (int32_t zp : {0, 1, 128, 255})
        for (int64_t n : {1, 7, 8, 9, 31, 64, 100}) {
          std::uniform_real_distribution<float> u(-300.0f * scale, 300.0f * scale);
          std::vector<float> x(static_cast<size_t>(n));
          for (int64_t i = 0; i < n; ++i) {
            const float ties = (static_cast<float>(i % 9) - 4.0f + 0.5f) * scale;  // k + 1/2 after the division
            const float specials[] = {std::nanf(""), inf, -inf, -0.0f, 1e30f, -1e30f, 1e-40f, ties, 255.5f * scale};
            x[static_cast<size_t>(i)] = i % 3 == 0 ? specials[(i / 3) % 9] : u(rng);
          }
          std::vector<uint8_t> y(static_cast<size_t>(n) + 1, 77);
          quantize_u8(isa, x.data(), n, scale, zp, y.data());
          ASSERT_EQ(y.back(), 77) << isa_name(isa);
          for (int64_t i = 0; i < n; ++i) {
            const float v = x[static_cast<size_t>(i)];
            const auto want = static_cast<uint8_t>(rt::quant::saturate_round(v / scale, zp, 0, 255));
            ASSERT_EQ(y[static_cast<size_t>(i)], want)
                << isa_name(isa) << " x=" << v << " scale=" << scale << " zp=" << zp << " i=" << i;
          }
        }
}

TEST(KernelQuantize, MinMaxIgnoresNaNOnEveryTarget) {
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> u(-5.0f, 5.0f);
  for (Isa isa : available_isas())
    for (int64_t n : {0, 1, 5, 8, 13, 64, 99}) {
      for (int pattern = 0; pattern < 3; ++pattern) {  // mixed, all positive with -0s, all NaN
        std::vector<float> x(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) {
          float v = pattern == 1 ? std::fabs(u(rng)) : u(rng);
          if (i % 4 == 1) v = pattern == 1 ? -0.0f : std::nanf("");
          if (pattern == 2) v = std::nanf("");
          x[static_cast<size_t>(i)] = v;
        }
        float lo = 0.0f, hi = 0.0f, want_lo = 0.0f, want_hi = 0.0f;
        for (float v : x) {
          want_lo = v < want_lo ? v : want_lo;
          want_hi = v > want_hi ? v : want_hi;
        }
        min_max_f32(isa, x.data(), n, lo, hi);
        EXPECT_EQ(std::signbit(lo), std::signbit(want_lo)) << isa_name(isa) << " n=" << n;
        EXPECT_EQ(lo, want_lo) << isa_name(isa) << " n=" << n << " pattern " << pattern;
        EXPECT_EQ(hi, want_hi) << isa_name(isa) << " n=" << n << " pattern " << pattern;
      }
    }
}

}  // namespace
}  // namespace onemodel::kern
