// Running one node on known inputs, outside any plan (docs/model-building.md section 3): the builder evaluates
// Shape chains at its probe bindings with it, and the eager tensors of the tracer compute every value with it.
// The operator's own kernel runs (prepare, then run, as a plan's constant evaluation does), so the values are the
// engine's, bit for bit, in the mode asked for.
#pragma once
#include <span>
#include <vector>

#include "base/thread_pool.h"
#include "kernels/isa.h"
#include "runtime/kernel.h"

namespace onemodel::build {

// Inputs: `inputs[i].value` set for every present input; `outs` as the kernel's infer stated them (a stated
// constant is returned as it is). Kernels with data-dependent outputs allocate their own; kernels over sequences
// and optionals are refused (Error(Unsupported)).
std::vector<Tensor> evaluate_node(const rt::Kernel& kernel, const ir::Node& node, std::span<const rt::InputMeta> inputs,
                                  std::span<const rt::OutputMeta> outs, bool exact, kern::Isa isa,
                                  ThreadPool* pool = nullptr);

}  // namespace onemodel::build
