// Array kernels of the fp32 functions of exact-transcendentals.md: y[i] = f(x[i]) for i < n (x == y allowed).
// `exact`: the spec's operation sequence, bit for bit the scalar code of kernels/exact_math.h on every target
// (and in the wasm build); every NaN result is 0x7FC00000. Fast: the same algorithms with fused Horner steps
// (FMA where the target has it), and FastMath.Exp for exp_nonpositive; within a few ulp of exact. exp itself
// keeps the full-range algorithm in fast mode, because FastMath.Exp's clamp at 88.3 would give finite wrong
// values above it.
#pragma once
#include <cstdint>

#include "kernels/isa.h"

namespace onemodel::kern {

void exp_f32(Isa isa, bool exact, const float* x, float* y, int64_t n);
// exp for arguments <= 0 (softmax, attention): +0 below -87.33654 instead of subnormals.
void exp_nonpositive_f32(Isa isa, bool exact, const float* x, float* y, int64_t n);
void log_f32(Isa isa, bool exact, const float* x, float* y, int64_t n);
void sigmoid_f32(Isa isa, bool exact, const float* x, float* y, int64_t n);
void tanh_f32(Isa isa, bool exact, const float* x, float* y, int64_t n);
void erf_f32(Isa isa, bool exact, const float* x, float* y, int64_t n);
// 1 + erf(x) without cancellation for negative x.
void one_plus_erf_f32(Isa isa, bool exact, const float* x, float* y, int64_t n);
// GELU, erf form (0.5x)(1 + erf(x/sqrt 2)) and tanh form x*sigmoid(2u).
void gelu_erf_f32(Isa isa, bool exact, const float* x, float* y, int64_t n);
void gelu_tanh_f32(Isa isa, bool exact, const float* x, float* y, int64_t n);

// One target's entry points (what transcendental-inl.h defines per target).
using ArrayFn = void (*)(bool exact, const float* x, float* y, int64_t n);
struct TranscendentalFns {
  ArrayFn exp, exp_nonpositive, log, sigmoid, tanh, erf, one_plus_erf, gelu_erf, gelu_tanh;
};

}  // namespace onemodel::kern
