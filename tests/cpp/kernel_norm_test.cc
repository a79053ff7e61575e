// kernels/norm.h on every target this machine runs, against ops_norms_ref.h's independent Sum16 and the four
// separately rounded steps written out here: every target must give the reference's bits, for rows of every
// length around the vector and 16-partial boundaries, with NaN, infinities and signed zeros in the data.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kernels/isa.h"
#include "kernels/norm.h"
#include "ops_norms_ref.h"

namespace onemodel::kern {
namespace {

uint32_t bits(float v) { return std::isnan(v) ? 0x7FC00000u : std::bit_cast<uint32_t>(v); }

struct Ref {
  float mean, inv;
};
Ref ref_stats(const std::vector<float>& x, float eps, bool rms) {
  const float n = static_cast<float>(x.size());
  const float mean = rms ? 0.0f : test::ref_sum16(x) / n;
  std::vector<float> sq;
  for (float v : x) sq.push_back((v - mean) * (v - mean));
  return {mean, 1.0f / std::sqrt(test::ref_sum16(sq) / n + eps)};
}

std::vector<float> row(size_t n, unsigned seed, bool specials) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.25f, 3.0f);
  std::vector<float> v(n);
  for (auto& e : v) e = d(rng);
  if (specials && n > 5) {
    v[1] = -0.0f;
    v[n / 2] = std::numeric_limits<float>::infinity();
    v[n - 1] = std::bit_cast<float>(0xFFC12345u);  // a NaN with a payload: outputs are canonical
  }
  return v;
}

TEST(KernelNorm, StatsMatchTheReferenceOnEveryTarget) {
  for (Isa isa : available_isas())
    for (bool rms : {false, true})
      for (size_t n = 1; n <= 70; ++n) {
        const auto x = row(n, static_cast<unsigned>(n), false);
        const Ref want = ref_stats(x, 1e-5f, rms);
        const NormStats got = norm_row_stats(isa, x.data(), static_cast<int64_t>(n), 1e-5f, rms);
        ASSERT_EQ(bits(got.mean), bits(want.mean)) << isa_name(isa) << " n=" << n << " rms=" << rms;
        ASSERT_EQ(bits(got.inv), bits(want.inv)) << isa_name(isa) << " n=" << n << " rms=" << rms;
      }
}

TEST(KernelNorm, ApplyMatchesTheReferenceOnEveryTargetAndTouchesOnlyTheRow) {
  for (Isa isa : available_isas())
    for (size_t n : {1u, 3u, 4u, 7u, 8u, 15u, 16u, 17u, 31u, 33u, 384u, 385u})
      for (int form = 0; form < 3; ++form) {  // per-element with bias, per-element without, uniform
        const auto x = row(n, static_cast<unsigned>(n + 100), true);
        const auto sc = row(n, 7, false), b = row(n, 8, false);
        const NormStats st{0.375f, 1.25f};
        std::vector<float> y(n + 1, 12345.0f);  // a guard element after the row
        if (form == 0) norm_row_apply(isa, x.data(), y.data(), static_cast<int64_t>(n), st, sc.data(), b.data());
        if (form == 1) norm_row_apply(isa, x.data(), y.data(), static_cast<int64_t>(n), st, sc.data(), nullptr);
        if (form == 2) norm_row_apply_uniform(isa, x.data(), y.data(), static_cast<int64_t>(n), st, sc[0], b[0]);
        ASSERT_EQ(y[n], 12345.0f);
        for (size_t j = 0; j < n; ++j) {
          const float s = form == 2 ? sc[0] : sc[j];
          const float t = ((x[j] - st.mean) * st.inv) * s;
          const float want = form == 1 ? t : t + (form == 2 ? b[0] : b[j]);
          const uint32_t got = std::bit_cast<uint32_t>(y[j]);
          ASSERT_EQ(got, bits(want)) << isa_name(isa) << " n=" << n << " form=" << form << " j=" << j;
        }
      }
}

TEST(KernelNorm, InPlaceApplyGivesTheSameBits) {
  for (Isa isa : available_isas()) {
    auto x = row(37, 5, true);
    const auto sc = row(37, 6, false);
    std::vector<float> y(37);
    const NormStats st = norm_row_stats(isa, x.data(), 37, 1e-3f, false);
    norm_row_apply(isa, x.data(), y.data(), 37, st, sc.data(), nullptr);
    norm_row_apply(isa, x.data(), x.data(), 37, st, sc.data(), nullptr);
    for (size_t j = 0; j < 37; ++j) ASSERT_EQ(std::bit_cast<uint32_t>(x[j]), std::bit_cast<uint32_t>(y[j]));
  }
}

}  // namespace
}  // namespace onemodel::kern
