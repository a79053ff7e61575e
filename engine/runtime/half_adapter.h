// Half-precision storage (docs/fp16.md): float16 and bfloat16 values live between operators, arithmetic runs
// in float32 inside them. CompiledGraph wraps the kernels of a graph that stores anything in half precision in
// an adapter that widens half-precision inputs, runs the float32 kernel and rounds its float32 outputs back.
#pragma once
#include <memory>

#include "ir/graph.h"
#include "runtime/kernel.h"

namespace onemodel::rt {

inline bool is_half(DType t) { return t == DType::F16 || t == DType::BF16; }

// True when the graph (or a body of one of its nodes) mentions float16 or bfloat16 anywhere: a declared
// value type, an initializer, a tensor attribute or a Cast's target (docs/fp16.md section 1).
bool graph_has_half(const ir::Graph& graph);

// Whether the kernel made for `node` gets the adapter (docs/fp16.md section 2: Cast, CastLike, Constant,
// ConstantOfShape, Shape, Size, views, data-dependent and value kernels are never wrapped).
bool half_wrappable(const ir::Node& node, const KernelFlags& flags);

// `inner` behind the adapter. `num_inputs` counts the node's inputs and subgraph reads; `isa` is the session's
// target, which the adapter's widening runs on.
std::unique_ptr<Kernel> wrap_half(std::unique_ptr<Kernel> inner, const ir::Node& node, size_t num_inputs,
                                  kern::Isa isa);

}  // namespace onemodel::rt
