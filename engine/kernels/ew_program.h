// Running one block of a fused element-wise program (ir/ew_program.h; ops/ew_program.h cuts work into
// blocks). One copy per target from ew_program-inl.h. Every instruction is the vector form of the operator's
// scalar formula (ops/elementwise_common.h): IEEE +, -, *, / and compares and selects in the same order, no
// fused multiply-add, so each lane is the bits of the scalar operator on every target; Sigmoid and Tanh call
// the transcendental kernels. Exact mode rewrites NaN to 0x7FC00000 after every instruction, as the unfused
// operators do when they store.
#pragma once
#include <cstdint>

#include "ir/ew_program.h"
#include "kernels/isa.h"

namespace onemodel::kern {

inline constexpr int64_t kEwBlock = 256;

// One program input over a block: n contiguous values from p, or p[0] repeated (scalar).
struct EwOperand {  // no member initialisers: arrays of them are made per call and must cost nothing
  const float* p;
  bool scalar;
};

// out[0, n) = the program over in[0 .. prog.inputs), n <= kEwBlock. `out` may be the memory of a non-scalar
// input (each element is read before it is written).
void ew_block(Isa isa, bool exact, const ir::EwProgram& prog, const EwOperand* in, int64_t n, float* out);

struct EwFns {
  void (*block)(Isa isa, bool exact, const ir::EwProgram& prog, const EwOperand* in, int64_t n, float* out);
};

}  // namespace onemodel::kern
