// widen_f16_f32 / widen_bf16_f32 on every target this machine runs, over every 16-bit pattern (and the
// narrowings narrow_f32_f16 / narrow_f32_bf16 over millions of float32 patterns, every rounding boundary among
// them): the bits of
// base/fp16.h's scalar conversions (themselves checked in fp16_test.cc), and for binary16 also the compiler's
// own binary16 conversion where it has one (_Float16 on x86-64, __fp16 on Arm64) (an independent reference for every
// non-NaN pattern).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "base/fp16.h"
#include "kernels/isa.h"
#include "kernels/widen.h"

namespace onemodel::kern {
namespace {

std::vector<uint16_t> every_pattern() {
  std::vector<uint16_t> v(65536);
  for (uint32_t i = 0; i < 65536; ++i) v[i] = static_cast<uint16_t>(i);
  return v;
}

TEST(KernelWiden, Binary16EveryPatternOnEveryTarget) {
  const std::vector<uint16_t> src = every_pattern();
  for (Isa isa : available_isas()) {
    std::vector<float> out(src.size() + 1, 12345.f);
    widen_f16_f32(isa, src.data(), out.data(), static_cast<int64_t>(src.size()));
    ASSERT_EQ(out.back(), 12345.f) << isa_name(isa);
    for (size_t i = 0; i < src.size(); ++i) {
      ASSERT_EQ(std::bit_cast<uint32_t>(out[i]), std::bit_cast<uint32_t>(half_to_float(src[i])))
          << isa_name(isa) << " pattern " << std::hex << i;
#if defined(__x86_64__) && defined(__FLT16_MAX__)
      const float ref = static_cast<float>(std::bit_cast<_Float16>(src[i]));
#elif defined(__aarch64__)
      const float ref = static_cast<float>(std::bit_cast<__fp16>(src[i]));  // GCC 12 C++ has no _Float16 here
#endif
#if (defined(__x86_64__) && defined(__FLT16_MAX__)) || defined(__aarch64__)
      if (!std::isnan(ref)) ASSERT_EQ(std::bit_cast<uint32_t>(out[i]), std::bit_cast<uint32_t>(ref)) << std::hex << i;
#endif
    }
  }
}

TEST(KernelWiden, BFloat16EveryPatternOnEveryTarget) {
  const std::vector<uint16_t> src = every_pattern();
  for (Isa isa : available_isas()) {
    std::vector<float> out(src.size() + 1, 12345.f);
    widen_bf16_f32(isa, src.data(), out.data(), static_cast<int64_t>(src.size()));
    ASSERT_EQ(out.back(), 12345.f) << isa_name(isa);
    for (size_t i = 0; i < src.size(); ++i) {
      const uint32_t want = std::bit_cast<uint32_t>(bf16_to_float(src[i]));
      ASSERT_EQ(std::bit_cast<uint32_t>(out[i]), want) << isa_name(isa) << " pattern " << std::hex << i;
      // Independently: the pattern shifted up, with the quiet bit set only for NaN.
      const uint32_t shifted = static_cast<uint32_t>(src[i]) << 16;
      ASSERT_EQ(want, std::isnan(std::bit_cast<float>(shifted)) ? (shifted | 0x00400000u) : shifted);
    }
  }
}

// Every length up to a few vectors, at every start offset: the vector loop and its scalar tail, no element
// written past the end.
TEST(KernelWiden, LengthsAndOffsets) {
  const std::vector<uint16_t> src = every_pattern();
  for (Isa isa : available_isas())
    for (int64_t off = 0; off < 3; ++off)
      for (int64_t n = 0; n <= 70; ++n) {
        std::vector<float> a(static_cast<size_t>(n) + 1, -7.f), b(static_cast<size_t>(n) + 1, -7.f);
        const uint16_t* s = src.data() + 0x3C00 + off * 37;
        widen_f16_f32(isa, s, a.data(), n);
        widen_bf16_f32(isa, s, b.data(), n);
        ASSERT_EQ(a.back(), -7.f);
        ASSERT_EQ(b.back(), -7.f);
        for (int64_t i = 0; i < n; ++i) {
          ASSERT_EQ(a[static_cast<size_t>(i)], half_to_float(s[i])) << isa_name(isa);
          ASSERT_EQ(b[static_cast<size_t>(i)], bf16_to_float(s[i])) << isa_name(isa);
        }
      }
}

// Float32 patterns for the narrowings: every 4099th pattern of all 2^32, and around every rounding boundary of
// both 16-bit types (the midpoint between two neighbours, exact in float32, and one float32 ulp either side),
// each with both signs; infinities and NaNs are among them.
std::vector<float> narrowing_patterns() {
  std::vector<uint32_t> bits;
  for (uint64_t u = 0; u <= 0xFFFFFFFFull; u += 4099) bits.push_back(static_cast<uint32_t>(u));
  for (uint32_t h = 0; h < 0x7C00; ++h) {
    const double mid = (static_cast<double>(half_to_float(static_cast<uint16_t>(h))) +
                        static_cast<double>(half_to_float(static_cast<uint16_t>(h + 1)))) /
                       2;
    const uint32_t m = std::bit_cast<uint32_t>(static_cast<float>(mid));
    for (uint32_t b : {m - 1, m, m + 1}) bits.push_back(b);
  }
  for (uint32_t b = 0; b < 0x7F80; ++b)
    for (uint32_t d : {0x7FFFu, 0x8000u, 0x8001u}) bits.push_back((b << 16) + d);
  for (uint32_t b : {0x7F800000u, 0x7F800001u, 0x7FC00000u, 0x7FFFFFFFu, 0x477FEFFFu, 0x477FF000u, 0x33000000u,
                     0x33000001u, 0x387FFFFFu, 0x38800000u, 0x00000001u, 0x007FFFFFu})
    bits.push_back(b);
  std::vector<float> out;
  out.reserve(bits.size() * 2);
  for (uint32_t b : bits) {
    out.push_back(std::bit_cast<float>(b & 0x7FFFFFFFu));
    out.push_back(std::bit_cast<float>(b | 0x80000000u));
  }
  return out;
}

TEST(KernelWiden, NarrowingsMatchTheScalarRoundingOnEveryTarget) {
  const std::vector<float> src = narrowing_patterns();
  ASSERT_GT(src.size(), 2000000u);
  for (Isa isa : available_isas()) {
    std::vector<uint16_t> h(src.size() + 1, 0xABCD), b(src.size() + 1, 0xABCD);
    narrow_f32_f16(isa, src.data(), h.data(), static_cast<int64_t>(src.size()));
    narrow_f32_bf16(isa, src.data(), b.data(), static_cast<int64_t>(src.size()));
    ASSERT_EQ(h.back(), 0xABCD) << isa_name(isa);
    ASSERT_EQ(b.back(), 0xABCD) << isa_name(isa);
    for (size_t i = 0; i < src.size(); ++i) {
      const uint32_t u = std::bit_cast<uint32_t>(src[i]);
      ASSERT_EQ(h[i], float_to_half(src[i])) << isa_name(isa) << " float32 bits " << std::hex << u;
      ASSERT_EQ(b[i], float_to_bf16(src[i])) << isa_name(isa) << " float32 bits " << std::hex << u;
#if defined(__x86_64__) && defined(__FLT16_MAX__)
      // Independently, for every non-NaN value: the compiler's own binary16 conversion (round to nearest even).
      if (!std::isnan(src[i])) ASSERT_EQ(h[i], std::bit_cast<uint16_t>(static_cast<_Float16>(src[i]))) << std::hex << u;
#endif
    }
  }
}

TEST(KernelWiden, NarrowingLengthsAndOffsets) {
  std::vector<float> src(300);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i) * 0.37f - 40.f;
  for (Isa isa : available_isas())
    for (int64_t off = 0; off < 3; ++off)
      for (int64_t n = 0; n <= 70; ++n) {
        std::vector<uint16_t> a(static_cast<size_t>(n) + 1, 7), b(static_cast<size_t>(n) + 1, 7);
        const float* s = src.data() + off * 37;
        narrow_f32_f16(isa, s, a.data(), n);
        narrow_f32_bf16(isa, s, b.data(), n);
        ASSERT_EQ(a.back(), 7);
        ASSERT_EQ(b.back(), 7);
        for (int64_t i = 0; i < n; ++i) {
          ASSERT_EQ(a[static_cast<size_t>(i)], float_to_half(s[i])) << isa_name(isa);
          ASSERT_EQ(b[static_cast<size_t>(i)], float_to_bf16(s[i])) << isa_name(isa);
        }
      }
}

}  // namespace
}  // namespace onemodel::kern
