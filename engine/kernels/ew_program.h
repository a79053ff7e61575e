// Running one block of a fused element-wise program (ir/ew_program.h; ops/ew_program.h cuts work into
// blocks). One copy per target from ew_program-inl.h. Every instruction is the vector form of the operator's
// scalar formula (ops/elementwise_common.h): IEEE +, -, *, / and compares and selects in the same order, no
// fused multiply-add, so each lane is the bits of the scalar operator on every target; Sigmoid, Tanh, Gelu and Erf
// call the transcendental kernels. Exact mode rewrites NaN to 0x7FC00000 after every instruction, as the unfused
// operators do when they store.
//
// A program is run as steps (ew_plan): one instruction over the block at a time, or a run of instructions that
// real models repeat done in one pass with the running value in a vector register (docs/architecture.md
// "Fused element-wise programs", fused steps). A step computes the same operations in the same order as its
// instructions, so the bits do not depend on how a program is cut into steps.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "ir/ew_program.h"
#include "kernels/isa.h"

namespace onemodel::kern {

inline constexpr int64_t kEwBlock = 256;

// One program input over a block: n contiguous values from p, or p[0] repeated (scalar).
struct EwOperand {  // no member initialisers: arrays of them are made per call and must cost nothing
  const float* p;
  bool scalar;
};

enum class EwStepKind : uint8_t {
  One,        // instruction `first` alone
  Chain,      // up to 3 Add/Sub/Mul of the running value by a scalar, then optionally Relu, Clip, HardSwish or
              // LeakyRelu
  HardSwish,  // t = x + s; t = clip(t, lo, hi); t = x * t (or t * x); t = t / s' (or t * s'), x read twice
};

struct EwStep {
  EwStepKind kind = EwStepKind::One;
  uint8_t first = 0;  // instructions [first, first + count)
  uint8_t count = 1;
  uint8_t ops = 0;  // Chain: how many of them are scalar Add/Sub/Mul (the rest, 0 or 1, is the tail)
  // The chain's running value starts at instruction `first`'s operand x_operand (0: a, 1: b); the other
  // operand of each scalar instruction is its scalar (a Sub's is always b).
  uint8_t x_operand = 0;
};

struct EwPlan {
  ir::EwProgram prog;
  std::vector<EwStep> steps;
  // Set by ew_plan when the program ends in a Mul of one input (`scale_input`, read by no other instruction)
  // by a value computed without it: the other factor is input `scale_value_input`, or else the result of
  // `scale_prefix` (the instructions before the Mul, ending in it). Where that input is laid out as the output
  // and every other input is one value per row, ops/ew_program.cc computes the factor once per row, then runs
  // the Mul alone (kern::scale_rows), `scale_first`: factor * input, else input * factor.
  int scale_input = -1;
  int scale_value_input = -1;
  bool scale_first = false;
  std::shared_ptr<const EwPlan> scale_prefix;
};

// `prog` cut into steps. A run becomes a fused step only when the registers it writes before its last
// instruction are read by nothing after it.
EwPlan ew_plan(ir::EwProgram prog);

// out[0, n) = the program over in[0 .. prog.inputs), n <= kEwBlock. `out` may be the memory of a non-scalar
// input (each element is read before it is written).
void ew_block(Isa isa, bool exact, const EwPlan& plan, const EwOperand* in, int64_t n, float* out);

struct EwFns {
  void (*block)(Isa isa, bool exact, const EwPlan& plan, const EwOperand* in, int64_t n, float* out);
};

}  // namespace onemodel::kern
