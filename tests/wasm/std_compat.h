// Force-included into the wasm build of the C++ kernel tests only (tests/wasm/CMakeLists.txt).
// Emscripten 3.1.6 ships a libc++ older than std::bit_cast, which the kernel tests use to compare bit
// patterns; the engine itself does not use it. Clang has the builtin, so the missing function is supplied
// here for that libc++ alone (with a newer one, __cpp_lib_bit_cast is defined and nothing is added).
#pragma once
#include <bit>
#include <type_traits>
#include <version>

#if !defined(__cpp_lib_bit_cast)
namespace std {
template <class To, class From>
requires(sizeof(To) == sizeof(From) && is_trivially_copyable_v<To> && is_trivially_copyable_v<From>) constexpr To
    bit_cast(const From& from) noexcept {
  return __builtin_bit_cast(To, from);
}
}  // namespace std
#endif
