// add_channel_bias and scale_rows on every target this machine runs, against a plain loop: one rounding per element, so
// every target must give the reference's bits (canonical NaN in exact mode, payloads kept in fast mode).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kernels/bias.h"
#include "kernels/isa.h"
#include "onemodel/error.h"

namespace onemodel::kern {
namespace {

// Values with the special cases of one rounded operation: NaN (one with a payload), infinities, signed zeros,
// subnormals, and a value whose products overflow.
const float kSpecials[] = {std::numeric_limits<float>::quiet_NaN(),
                           std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(),
                           0.f,
                           -0.f,
                           1e-40f,
                           -1e-40f,
                           std::bit_cast<float>(0xFFC12345u),
                           3e38f};
constexpr size_t kNumSpecials = sizeof(kSpecials) / sizeof(kSpecials[0]);

TEST(KernelBias, EveryTargetMatchesPlainLoop) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-4.f, 4.f);
  const float* specials = kSpecials;
  for (Isa isa : available_isas()) {
    for (bool exact : {false, true}) {
      for (int64_t channels : {0, 1, 3}) {
        for (int64_t spatial = 0; spatial <= 70; ++spatial) {
          std::vector<float> y(static_cast<size_t>(channels * spatial)), bias(static_cast<size_t>(channels));
          for (size_t i = 0; i < y.size(); ++i) y[i] = (i % 11 == 3) ? specials[i % kNumSpecials] : u(rng);
          for (size_t i = 0; i < bias.size(); ++i) bias[i] = (i == 2) ? specials[(spatial + 1) % kNumSpecials] : u(rng);
          // Guard elements after the data: the kernel must not touch them.
          std::vector<float> buf = y;
          buf.push_back(12345.f);
          add_channel_bias(isa, exact, buf.data(), bias.data(), channels, spatial);
          ASSERT_EQ(buf.back(), 12345.f);
          for (int64_t c = 0; c < channels; ++c)
            for (int64_t s = 0; s < spatial; ++s) {
              const size_t i = static_cast<size_t>(c * spatial + s);
              float want = y[i] + bias[static_cast<size_t>(c)];
              uint32_t want_bits = std::bit_cast<uint32_t>(want);
              if (exact && std::isnan(want)) want_bits = 0x7FC00000u;
              if (!exact && std::isnan(want)) {
                ASSERT_TRUE(std::isnan(buf[i])) << isa_name(isa);
                continue;
              }
              ASSERT_EQ(std::bit_cast<uint32_t>(buf[i]), want_bits)
                  << isa_name(isa) << " exact=" << exact << " c=" << c << " s=" << s;
            }
        }
      }
    }
  }
}

// scale_rows: one product per element in the program's operand order, rows of one value as one run (sizes 1
// with row counts past a vector), ragged row lengths, output in place or apart, guards untouched.
TEST(KernelBias, ScaleRowsMatchesPlainLoop) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-4.f, 4.f);
  const float* specials = kSpecials;
  for (Isa isa : available_isas()) {
    for (bool exact : {false, true}) {
      for (bool first : {false, true}) {
        for (bool in_place : {false, true}) {
          for (int64_t rows : {0, 1, 3, 37}) {
            for (int64_t size = 0; size <= 35; ++size) {
              const auto n = static_cast<size_t>(rows * size);
              std::vector<float> x(n), scale(static_cast<size_t>(rows));
              for (size_t i = 0; i < n; ++i) x[i] = (i % 7 == 2) ? specials[i % kNumSpecials] : u(rng);
              for (size_t i = 0; i < scale.size(); ++i)
                scale[i] = (i % 5 == 1) ? specials[(i + size) % kNumSpecials] : u(rng);
              std::vector<float> y = in_place ? x : std::vector<float>(n, 7.f);
              y.push_back(12345.f);  // a guard past the data
              scale_rows(isa, exact, first, scale.data(), in_place ? y.data() : x.data(), rows, size, y.data());
              ASSERT_EQ(y.back(), 12345.f);
              for (size_t i = 0; i < n; ++i) {
                const float f = scale[i / static_cast<size_t>(size)];
                const float want = first ? f * x[i] : x[i] * f;
                if (std::isnan(want)) {
                  ASSERT_TRUE(std::isnan(y[i])) << isa_name(isa);
                  if (exact) {
                    ASSERT_EQ(std::bit_cast<uint32_t>(y[i]), 0x7FC00000u) << isa_name(isa);
                  }
                  continue;
                }
                ASSERT_EQ(std::bit_cast<uint32_t>(y[i]), std::bit_cast<uint32_t>(want))
                    << isa_name(isa) << " exact=" << exact << " rows=" << rows << " size=" << size << " i=" << i;
              }
            }
          }
        }
      }
    }
  }
}

TEST(KernelIsa, CapRules) {
  EXPECT_EQ(isa_for_cap(""), best_isa());
  EXPECT_THROW(isa_for_cap("avx3"), Error);
  try {
    isa_for_cap("neon2");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("neon2"), std::string::npos);
  }
#if defined(__x86_64__)
  EXPECT_EQ(isa_for_cap("scalar"), Isa::Scalar);
  EXPECT_EQ(isa_for_cap("SCALAR"), Isa::Scalar);
  // A cap is a ceiling: the chosen target is available and not above it.
  for (const char* cap : {"sse4", "avx2", "avx512"}) {
    const Isa got = isa_for_cap(cap);
    bool found = false;
    for (Isa i : available_isas()) found |= (i == got);
    EXPECT_TRUE(found) << cap;
  }
  EXPECT_LE(static_cast<int>(isa_for_cap("sse4")), static_cast<int>(Isa::Sse4));
  EXPECT_LE(static_cast<int>(isa_for_cap("avx2")), static_cast<int>(Isa::Avx2));
  EXPECT_EQ(isa_for_cap("neon"), best_isa());  // another architecture's name: accepted, ignored
#endif
#if defined(__aarch64__)
  // The aarch64 build runs NEON and the scalar fallback (docs/arm64.md); x86 names change nothing there.
  ASSERT_EQ(available_isas().size(), 2u);
  EXPECT_EQ(available_isas()[0], Isa::Scalar);
  EXPECT_EQ(available_isas()[1], Isa::Neon);
  EXPECT_EQ(isa_for_cap(""), Isa::Neon);
  EXPECT_EQ(isa_for_cap("NEON"), Isa::Neon);
  EXPECT_EQ(isa_for_cap("scalar"), Isa::Scalar);
  for (const char* cap : {"sse4", "avx2", "avx512"}) EXPECT_EQ(isa_for_cap(cap), Isa::Neon) << cap;
  EXPECT_EQ(isa_name(isa_for_cap("")), "Neon");
#endif
}

}  // namespace
}  // namespace onemodel::kern
