// A compiled body of a control-flow node (graph-runtime.md section 8). The kernel compiles each body once,
// at session creation, into a nested CompiledGraph of the same mode and target; each run makes or reuses a
// plan for the body's input shapes (a small per-body plan cache) and runs it with a pooled RunState.
#pragma once
#include <memory>
#include <span>
#include <vector>

#include "runtime/compiled_graph.h"
#include "runtime/session_impl.h"

namespace onemodel::rt {

// Owns its result tensors: a contiguous heap copy of every tensor in `v` (sequence items and optional
// content included), so the value survives the run state or arena it came from.
Value detach_value(const Value& v);

class Subgraph {
 public:
  // Compiles graph attribute `attr` of the node `info` describes. Each capture of the body is matched by
  // name to one of the node's subgraph reads, which follow the node's declared inputs in RunContext.
  // Error(InvalidModel) naming the node for a missing attribute or an unmatched capture; compile errors of
  // the body (missing operators, exact mode) propagate.
  Subgraph(const NodeInfo& info, std::string_view attr);

  size_t num_inputs() const { return num_formal_; }  // declared body inputs
  size_t num_outputs() const { return graph_->outputs().size(); }
  const ir::Graph& body() const { return graph_->graph(); }
  // The declared element type of body output `k` (Undefined when the body does not say).
  DType output_elem(size_t k) const;

  // Runs the body once. `formal` are the declared inputs; `node_inputs` are the node's RunContext value
  // inputs (captures are read from there). `outputs` receives the body outputs, detached (own storage).
  void run(const RunContext& ctx, std::span<const Value> formal, std::vector<Value>& outputs) const;

 private:
  std::string attr_;  // the graph attribute (then_branch, body, ...): the profiler's path names it
  NodeInfo info_;     // a copy: the factory's NodeInfo moves into the CompiledNode afterwards
  std::shared_ptr<const CompiledGraph> graph_;
  std::unique_ptr<PlanCache> cache_;
  size_t num_formal_ = 0;
  std::vector<size_t> capture_slots_;  // per capture that is not a weight: index into the node's compiled inputs
};

}  // namespace onemodel::rt
