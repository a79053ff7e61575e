// Target detection. We do not link libhwy (the wasm build cannot, and the CMake package should not drag a
// shared library along): CPU features come from cpuid/xgetbv here, checked against exactly the feature
// strings Highway 1.0.3 compiles each x86 target with (hwy/ops/set_macros-inl.h), so a target we report is
// one whose instructions the CPU and OS accept.
#include "kernels/isa.h"

#include <array>
#include <cctype>
#include <cstdlib>
#include <string>

#include "onemodel/error.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define ONEMODEL_X86 1
#endif
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

namespace onemodel::kern {
namespace {

#ifdef ONEMODEL_X86
struct X86Features {
  bool sse4 = false, avx2 = false, avx512 = false, avx512_vnni = false;
};

uint64_t xgetbv0() {
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

X86Features detect_x86() {
  X86Features f;
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  const bool ssse3 = c & (1u << 9), fma = c & (1u << 12), sse41 = c & (1u << 19), sse42 = c & (1u << 20);
  const bool aes = c & (1u << 25), pclmul = c & (1u << 1), osxsave = c & (1u << 27), avx = c & (1u << 28);
  const bool f16c = c & (1u << 29), sse2 = d & (1u << 26);
  f.sse4 = sse2 && ssse3 && sse41 && sse42 && aes && pclmul;
  if (!f.sse4 || !osxsave || !avx) return f;
  const uint64_t xcr0 = xgetbv0();
  if ((xcr0 & 0x6) != 0x6) return f;  // the OS saves XMM and YMM state
  unsigned a7 = 0, b7 = 0, c7 = 0, d7 = 0;
  if (!__get_cpuid_count(7, 0, &a7, &b7, &c7, &d7)) return f;
  const bool bmi1 = b7 & (1u << 3), avx2 = b7 & (1u << 5), bmi2 = b7 & (1u << 8);
  f.avx2 = avx2 && bmi1 && bmi2 && fma && f16c;
  const bool avx512f = b7 & (1u << 16), avx512dq = b7 & (1u << 17), avx512bw = b7 & (1u << 30),
             avx512vl = b7 & (1u << 31);
  const bool zmm_state = (xcr0 & 0xE0) == 0xE0;  // opmask, upper ZMM0-15, ZMM16-31
  f.avx512 = f.avx2 && avx512f && avx512dq && avx512bw && avx512vl && zmm_state;
  f.avx512_vnni = f.avx512 && (c7 & (1u << 11));  // CPUID.(7,0):ECX.AVX512_VNNI
  return f;
}
#endif

struct IsaList {
  std::array<Isa, 6> items{};
  size_t count = 0;
  void add(Isa i) { items[count++] = i; }
};

IsaList detect() {
  IsaList l;
#if defined(__EMSCRIPTEN__) || defined(__wasm__)
  l.add(Isa::Wasm128);
#elif defined(ONEMODEL_FUZZ_ONE_TARGET)
  l.add(Isa::Scalar);  // one kernel copy, the static target's (kernels/per_target.h)
#elif defined(ONEMODEL_X86)
  l.add(Isa::Scalar);
  const X86Features f = detect_x86();
  if (f.sse4) l.add(Isa::Sse4);
  if (f.avx2) l.add(Isa::Avx2);
  if (f.avx512) l.add(Isa::Avx512);
#elif defined(__aarch64__) || defined(__ARM_NEON)
  l.add(Isa::Scalar);
  l.add(Isa::Neon);
#else
  l.add(Isa::Scalar);
#endif
  return l;
}

const IsaList& detected() {
  static const IsaList list = detect();
  return list;
}

bool available(Isa isa) {
  for (Isa i : available_isas())
    if (i == isa) return true;
  return false;
}

}  // namespace

std::string_view isa_name(Isa isa) noexcept {
  switch (isa) {
    case Isa::Scalar: return "Scalar";
    case Isa::Sse4: return "Sse4";
    case Isa::Avx2: return "Avx2";
    case Isa::Avx512: return "Avx512";
    case Isa::Neon: return "Neon";
    case Isa::Wasm128: return "Wasm128";
  }
  return "Scalar";
}

std::span<const Isa> available_isas() noexcept {
  const IsaList& l = detected();
  return {l.items.data(), l.count};
}

Isa best_isa() noexcept { return available_isas().back(); }

bool x86_vnni() noexcept {
#if defined(ONEMODEL_X86) && !defined(ONEMODEL_FUZZ_ONE_TARGET)
  static const bool has = detect_x86().avx512_vnni;
  return has;
#else
  return false;
#endif
}

bool arm_dot_product() noexcept {
#if defined(__aarch64__) && defined(__linux__) && defined(HWCAP_ASIMDDP)
  static const bool has = (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
  return has;
#else
  return false;
#endif
}

Isa isa_for_cap(std::string_view cap) {
  if (cap.empty()) return best_isa();
  std::string lower;
  for (char ch : cap) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(ch))));
  Isa want;
  if (lower == "scalar")
    want = Isa::Scalar;
  else if (lower == "sse4")
    want = Isa::Sse4;
  else if (lower == "avx2")
    want = Isa::Avx2;
  else if (lower == "avx512")
    want = Isa::Avx512;
  else if (lower == "neon")
    want = Isa::Neon;
  else
    throw Error(ErrorKind::InvalidArgument,
                "ONEMODEL_ISA='" + std::string(cap) + "' is not one of scalar, sse4, avx2, avx512, neon");
  if (available(want)) return want;
  // Another architecture's name (neon on x86 or wasm; an x86 name on Arm, below) is accepted and ignored.
  if (want == Isa::Neon) return best_isa();
  // A ceiling: the best available target not above it (x86 entries are ordered by capability).
  Isa pick = available_isas().front();
  for (Isa i : available_isas())
    if (static_cast<int>(i) <= static_cast<int>(want) && i != Isa::Wasm128 && i != Isa::Neon) pick = i;
  if (!available(Isa::Scalar) || want != Isa::Scalar) {
    // wasm / Arm: only "scalar" would change anything, and that target is not compiled there.
    if (available(Isa::Wasm128) || available(Isa::Neon)) return best_isa();
  }
  return pick;
}

Isa session_isa() {
  const char* env = std::getenv("ONEMODEL_ISA");
  return isa_for_cap(env ? std::string_view(env) : std::string_view());
}

}  // namespace onemodel::kern
