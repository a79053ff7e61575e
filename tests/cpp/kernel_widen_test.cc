// widen_f16_f32 / widen_bf16_f32 on every target this machine runs, over every 16-bit pattern: the bits of
// base/fp16.h's scalar conversions (themselves checked in fp16_test.cc), and for binary16 also the compiler's
// own binary16 conversion where it has one (_Float16 on x86-64, __fp16 on Arm64) (an independent reference for every non-NaN pattern).
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

}  // namespace
}  // namespace onemodel::kern
