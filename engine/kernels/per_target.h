// Picking one target's copy of a Highway kernel. A kernel's x.cc includes its x-inl.h once per target through
// hwy/foreach_target.h; each copy lives in namespace onemodel::kern::N_<TARGET>. Highway's own HWY_EXPORT /
// HWY_DYNAMIC_DISPATCH would choose through libhwy's global target state; we choose per session instead
// (kernels/isa.h), so x.cc's HWY_ONCE part maps an Isa to a copy with ONEMODEL_PER_TARGET.
//
// Usage, inside namespace onemodel::kern in the HWY_ONCE section of x.cc:
//   const BiasFns& bias_fns(Isa isa) { return *ONEMODEL_PER_TARGET(kBiasFns, isa); }
// where every target's x-inl.h defines `inline constexpr BiasFns kBiasFns{...}` in its HWY_NAMESPACE.
#pragma once
#include "hwy/highway.h"
#include "kernels/isa.h"

// The portable fallback: EMU128 (4 emulated lanes), or HWY_SCALAR (1 lane) where Highway marks EMU128 broken
// (GCC < 12.3, which includes Debian 12's g++). Kernels therefore use only ops HWY_SCALAR also has.
#if HWY_TARGETS & HWY_EMU128
#define ONEMODEL_SCALAR_NS N_EMU128
#else
#define ONEMODEL_SCALAR_NS N_SCALAR
#endif

#if defined(ONEMODEL_FUZZ_ONE_TARGET)
// The fuzz build (docs/fuzzing.md section 2) compiles each kernel once, for the compiler's static target:
// five instrumented copies made that build about 20 minutes long. kern::available_isas() is then Scalar alone.
#define ONEMODEL_PER_TARGET(name, isa) (static_cast<void>(isa), &HWY_NAMESPACE::name)
#elif HWY_ARCH_X86
// Native x86 builds compile exactly these four targets (CMake: HWY_COMPILE_ALL_ATTAINABLE, SSSE3 disabled).
#if (HWY_TARGETS & (HWY_SSE4 | HWY_AVX2 | HWY_AVX3 | HWY_BASELINE_SCALAR)) != \
    (HWY_SSE4 | HWY_AVX2 | HWY_AVX3 | HWY_BASELINE_SCALAR)
#error "x86 kernels must be compiled for the scalar fallback, SSE4, AVX2 and AVX3 (see engine/CMakeLists.txt)"
#endif
#define ONEMODEL_PER_TARGET(name, isa)                    \
  ((isa) == ::onemodel::kern::Isa::Avx512 ? &N_AVX3::name \
   : (isa) == ::onemodel::kern::Isa::Avx2 ? &N_AVX2::name \
   : (isa) == ::onemodel::kern::Isa::Sse4 ? &N_SSE4::name \
                                          : &ONEMODEL_SCALAR_NS::name)
#elif HWY_ARCH_WASM
#define ONEMODEL_PER_TARGET(name, isa) (static_cast<void>(isa), &N_WASM::name)
#elif HWY_ARCH_ARM_A64
// The aarch64 build compiles exactly NEON and the fallback (CMake: SVE disabled; docs/arm64.md).
#if (HWY_TARGETS & (HWY_NEON | HWY_BASELINE_SCALAR)) != (HWY_NEON | HWY_BASELINE_SCALAR) || \
    (HWY_TARGETS & ~(HWY_NEON | HWY_BASELINE_SCALAR)) != 0
#error "aarch64 kernels must be compiled for NEON and the scalar fallback only (see engine/CMakeLists.txt)"
#endif
#define ONEMODEL_PER_TARGET(name, isa) \
  ((isa) == ::onemodel::kern::Isa::Neon ? &N_NEON::name : &ONEMODEL_SCALAR_NS::name)
#else
// Other architectures: the static target, plus the fallback for Isa::Scalar.
#define ONEMODEL_PER_TARGET(name, isa) \
  ((isa) == ::onemodel::kern::Isa::Scalar ? &ONEMODEL_SCALAR_NS::name : &HWY_NAMESPACE::name)
#endif
