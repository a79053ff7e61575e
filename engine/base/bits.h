// Reinterpreting the bits of a value as another type of the same size (float <-> uint32, double <-> uint64).
// C++20's std::bit_cast is missing from the libc++ of emscripten's clang 14, so bit_cast below is built on
// __builtin_bit_cast, which that clang and GCC 12 both provide (and which is constexpr like std::bit_cast).
#pragma once
#include <cstdint>
#include <type_traits>

namespace onemodel {

template <class To, class From>
constexpr To bit_cast(const From& from) noexcept {
  static_assert(sizeof(To) == sizeof(From), "bit_cast needs types of one size");
  static_assert(std::is_trivially_copyable_v<To> && std::is_trivially_copyable_v<From>,
                "bit_cast needs trivially copyable types");
  return __builtin_bit_cast(To, from);
}

constexpr uint32_t float_bits(float x) noexcept { return bit_cast<uint32_t>(x); }
constexpr float float_from_bits(uint32_t u) noexcept { return bit_cast<float>(u); }
constexpr uint64_t double_bits(double x) noexcept { return bit_cast<uint64_t>(x); }
constexpr double double_from_bits(uint64_t u) noexcept { return bit_cast<double>(u); }

}  // namespace onemodel
