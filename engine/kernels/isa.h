// Instruction-set targets (kernels-gemm.md "Dispatch"). Every kernel is one Highway source compiled for each
// target of the build; a session picks one target when it is created and keeps it, so a session's results and
// its reported kernel_path() never change under it.
#pragma once
#include <cstdint>
#include <span>
#include <string_view>

namespace onemodel::kern {

// Order matters only within one architecture: a later x86 entry is a superset of an earlier one.
enum class Isa : uint8_t { Scalar, Sse4, Avx2, Avx512, Neon, Wasm128 };

// "Scalar", "Sse4", "Avx2", "Avx512", "Neon", "Wasm128" (what Session::kernel_path() reports).
std::string_view isa_name(Isa isa) noexcept;

// Targets this build compiled AND this CPU (and OS) can run, worst first. Never empty.
std::span<const Isa> available_isas() noexcept;

// The best available target.
Isa best_isa() noexcept;

// Whether this CPU runs Arm's int8 dot-product instructions (SDOT; HWCAP_ASIMDDP on aarch64 Linux). The NEON
// target uses them for the integer product when present (docs/arm64.md section 4); false elsewhere.
bool arm_dot_product() noexcept;

// Whether this x86 CPU runs AVX-512 VNNI (VPDPBUSD: four u8 x s8 products added to an int32 lane) on top of
// the Avx512 target. That target uses it for the byte product of kernels/qgemm.h (docs/int8.md, "Integer product
// kernel"); false elsewhere.
bool x86_vnni() noexcept;

// The target a new session uses: best_isa(), capped by the environment variable ONEMODEL_ISA
// (scalar | sse4 | avx2 | avx512 | neon; case-insensitive). Unknown values throw Error(InvalidArgument). A cap
// above what the machine offers falls back to the best available target (the cap is a ceiling, not a demand).
// Another architecture's names are accepted and ignored: on wasm and Arm only "scalar" changes anything (it
// selects the scalar target when that target is compiled in), and "neon" on x86 or wasm gives the best target.
Isa session_isa();

// The same rule for a given value (empty = no cap); exposed for tests.
Isa isa_for_cap(std::string_view cap);

}  // namespace onemodel::kern
