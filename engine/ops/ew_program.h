// Running a fused element-wise program (ir/ew_program.h) on float32 data: spans and broadcast tensors cut
// into blocks of kern::kEwBlock elements for the per-target block kernel (kernels/ew_program.h). Every
// instruction runs over a block in registers of kEwBlock floats (L1-resident), so a chain of N operators
// reads and writes memory once instead of N times, and each element gets the bits of the unfused chain
// whatever the block size, chunking or thread count.
#pragma once
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
void run_span(const kern::EwPlan& prog, kern::Isa isa, bool exact, std::span<const Operand> in, int64_t n,
              float* out);

// out = the program over `inputs` (contiguous float32 tensors) broadcast NumPy style to out's shape, in chunks
// of rows on `pool`.
void run_broadcast(const kern::EwPlan& prog, kern::Isa isa, bool exact, std::span<const Tensor* const> inputs,
                   Tensor& out, ThreadPool* pool);

// The program inputs 1.. of a FusedConv / FusedMatMul node (its inputs from 3 on: contiguous float32 tensors,
// InvalidInput otherwise) into `in`; returns the broadcast shape of `result` with them.
Shape program_inputs(const RunContext& ctx, const Shape& result, std::vector<const Tensor*>& in);

// The program of a FusedElementwise / FusedConv node, checked (InvalidModel naming the node otherwise), with
// at most `inputs` program inputs.
ir::EwProgram read_program(const NodeInfo& info, size_t inputs);

}  // namespace onemodel::rt::ewp
