// Running a fused element-wise program (ir/ew_program.h) on float32 data: spans and broadcast tensors cut
// into blocks of kern::kEwBlock elements for the per-target block kernel (kernels/ew_program.h). Every
// instruction runs over a block in registers of kEwBlock floats (L1-resident), so a chain of N operators
// reads and writes memory once instead of N times, and each element gets the bits of the unfused chain
// whatever the block size, chunking or thread count.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <span>

#include "base/thread_pool.h"
#include "ir/ew_program.h"
#include "kernels/ew_program.h"
#include "kernels/isa.h"
#include "onemodel/tensor.h"
#include "runtime/kernel.h"

namespace onemodel::rt::ewp {

using Operand = kern::EwOperand;

// out[0, n) = the program over `in` (one Operand per program input), any n. `out` may be the same memory as a
// non-scalar input run (each element is read before it is written).
void run_span(const kern::EwPlan& prog, kern::Isa isa, bool exact, std::span<const Operand> in, int64_t n, float* out);

// out = the program over `inputs` (contiguous float32 tensors) broadcast NumPy style to out's shape, in chunks
// of rows on `pool`.
void run_broadcast(const kern::EwPlan& prog, kern::Isa isa, bool exact, std::span<const Tensor* const> inputs,
                   Tensor& out, ThreadPool* pool);

// `rows` rows of `size` values back to back: input i is a run laid out as the rows from runs[i], or, where
// runs[i] is null, one value per row, value(i, r). Rows of at most half a block go several to a program block,
// such a value spread over its row in a buffer (MobileNetV3's 7 x 7 planes ran a block of 49 values each); a
// longer row is cut into blocks of its own, where the value is one value (kernels/ew_program.h: an instruction
// on one value runs once). out may be a run input. Every element gets the operations run_span gives it.
template <class Value>
void run_rows(const kern::EwPlan& prog, kern::Isa isa, bool exact, size_t inputs, const float* const* runs, Value value,
              int64_t rows, int64_t size, float* out) {
  alignas(64) float spread[ir::kEwMaxInputs][kern::kEwBlock];
  std::array<Operand, ir::kEwMaxInputs> ops;
  if (size * 2 > kern::kEwBlock) {
    for (int64_t r = 0; r < rows; ++r) {
      for (size_t i = 0; i < inputs; ++i) {
        if (runs[i]) {
          ops[i] = Operand{runs[i] + r * size, false};
          continue;
        }
        spread[i][0] = value(i, r);
        ops[i] = Operand{spread[i], true};
      }
      run_span(prog, isa, exact, std::span<const Operand>(ops.data(), inputs), size, out + r * size);
    }
    return;
  }
  const int64_t per_block = kern::kEwBlock / size;
  for (int64_t r0 = 0; r0 < rows; r0 += per_block) {
    const int64_t nr = std::min(per_block, rows - r0);
    for (size_t i = 0; i < inputs; ++i) {
      if (runs[i]) {
        ops[i] = Operand{runs[i] + r0 * size, false};
        continue;
      }
      for (int64_t j = 0; j < nr; ++j) std::fill_n(spread[i] + j * size, size, value(i, r0 + j));
      ops[i] = Operand{spread[i], false};
    }
    kern::ew_block(isa, exact, prog, ops.data(), nr * size, out + r0 * size);
  }
}

// The program inputs 1.. of a FusedConv / FusedMatMul node (its inputs from 3 on: contiguous float32 tensors,
// InvalidInput otherwise) into `in`; returns the broadcast shape of `result` with them.
Shape program_inputs(const RunContext& ctx, const Shape& result, std::vector<const Tensor*>& in);

// The program of a FusedElementwise / FusedConv node, checked (InvalidModel naming the node otherwise), with
// at most `inputs` program inputs.
ir::EwProgram read_program(const NodeInfo& info, size_t inputs);

}  // namespace onemodel::rt::ewp
