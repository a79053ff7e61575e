// RunState (graph-runtime.md sections 1 and 5): the mutable part of one run — the slab, the arena and the
// value table. A plan pools idle run states so concurrent runs share nothing mutable and a warm run
// allocates nothing for its intermediates.
#pragma once
#include <memory>
#include <vector>

#include "runtime/arena.h"
#include "runtime/plan.h"
#include "runtime/profiler.h"

namespace onemodel::rt {

struct RunState {
  explicit RunState(const ExecutionPlan& plan);

  // Resets the arena. Call before setting the inputs.
  void begin_run();
  // Sets input `i` (CompiledGraph::inputs() order): a contiguous, element-aligned tensor of the plan's
  // type and shape. Anything else is copied into the arena first.
  void set_input(const ExecutionPlan& plan, size_t i, const Tensor& t);
  // Copies raw row-major bytes into the arena as input `i` (span inputs).
  void set_input_bytes(const ExecutionPlan& plan, size_t i, const void* data, size_t bytes);
  // Sets input `i` to any value (section 8): a tensor goes through set_input, a sequence or optional into
  // the Value table (its tensors must stay valid for the run).
  void set_input_value(const ExecutionPlan& plan, size_t i, const Value& value);
  // Runs every step of the plan; with a profile scope, each step is timed and recorded there.
  void execute(const ExecutionPlan& plan, const ProfileScope* profile = nullptr);
  // The tensor of graph value `v` after execute(): contiguous, valid until end_run().
  const Tensor& tensor(int v) const { return tensors[static_cast<size_t>(v)]; }
  // The sequence or optional held by `v`, or null when `v` holds a tensor (or nothing).
  const Value* boxed_value(int v) const {
    if (boxed.empty()) return nullptr;
    const Value& b = boxed[static_cast<size_t>(v)];
    return b.empty() ? nullptr : &b;
  }
  // `v` as a Value of any kind (empty Value when it holds nothing).
  Value value_of(int v) const;
  // Drops references to the caller's tensors and to dynamic values.
  void end_run(const ExecutionPlan& plan);

  void execute_step(const ExecutionPlan& plan, const PlanStep& step);

  Storage slab;
  BumpArena arena;
  std::vector<Tensor> tensors;  // per graph value: its tensor in this run (empty for a sequence or optional)
  std::vector<Value> boxed;     // per value: a sequence or optional, else empty; sized only when plan.has_boxed()
  // Per-step scratch, kept so a warm run does not allocate.
  std::vector<Tensor> step_inputs, step_outputs;
  std::vector<InputMeta> metas, prep_metas;
  std::vector<OutputMeta> out_metas;
  std::vector<Value> step_value_inputs, step_value_outputs;
  const ProfileScope* profile = nullptr;  // during execute()
  // Per dynamic step: what prepare() returned last time and for which inputs (element types, shapes, and the
  // plan constants among them) and outputs, so a step whose shapes do not change is not prepared again in
  // every run (an LSTM after an If packs its weights once, not per call).
  struct Prepared {
    std::vector<DType> dtypes;
    std::vector<Shape> shapes;
    std::vector<const void*> constants;  // the constant's data (plan constants live as long as the plan)
    std::shared_ptr<const void> state;
  };
  std::vector<Prepared> prepared;

 private:
  // Dynamic steps of a plan with boxed values: Value kernels, and tensor kernels meeting a boxed input.
  // Returns true when the step was handled here.
  bool execute_boxed_step(const ExecutionPlan& plan, const CompiledNode& cn);
  // prepare() for a dynamic step, reusing the last state when nothing it may depend on changed.
  const void* prepare_dynamic(const ExecutionPlan& plan, const PlanStep& step, const CompiledNode& cn);
};

// A run state leased from a plan's pool for one run (of a session or of a control-flow body), begun on
// lease and given back however the run ends, so an exception from a kernel never leaks the state or keeps
// the caller's tensors referenced (give_back ends the run).
struct RunLease {
  const ExecutionPlan& plan;
  std::unique_ptr<RunState> state;
  explicit RunLease(const ExecutionPlan& p) : plan(p), state(p.acquire()) { state->begin_run(); }
  ~RunLease() { plan.give_back(std::move(state)); }
  RunLease(const RunLease&) = delete;
  RunLease& operator=(const RunLease&) = delete;
};

}  // namespace onemodel::rt
