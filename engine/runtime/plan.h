// ExecutionPlan (graph-runtime.md section 3): everything that depends on one list of input element types
// and shapes — output types and shapes of every node, constants found by evaluation, the schedule, and the
// slab layout. Immutable after create(); shared by concurrent runs. It owns the pool of idle RunStates.
#pragma once
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/compiled_graph.h"
#include "runtime/run_memory.h"

namespace onemodel::rt {

struct RunState;

// One input of the key: element type and shape, in the order of CompiledGraph::inputs(). A sequence or
// optional input (section 8) is keyed by its kind alone (dtype Undefined, rank 0): it is a run-time value.
struct InputSignature {
  DType dtype = DType::Undefined;
  Shape shape;
  ValueKind kind = ValueKind::Tensor;
  bool operator==(const InputSignature& o) const { return dtype == o.dtype && shape == o.shape && kind == o.kind; }
};

// The key entry of one input: a tensor by element type and shape, a sequence or optional by its kind. The
// session's run forms and control-flow bodies build their keys with these, so one input gets one plan
// whichever form fed it.
inline InputSignature signature_of(const Tensor& t) { return {t.dtype(), t.shape(), ValueKind::Tensor}; }
inline InputSignature signature_of(const Value& v) {
  return v.is_tensor() ? signature_of(v.tensor()) : InputSignature{DType::Undefined, Shape(), v.kind()};
}

// Where a value lives during a run.
enum class ValueSource : uint8_t {
  None,      // not produced (omitted or dead)
  Input,     // the caller's tensor
  Constant,  // weight, set_constant_output, constant evaluation, or a view of a constant
  Slab,      // static shape: a fixed offset in the run state's slab (views of slab values share it)
  Derived,   // a view of a caller's input, rebuilt every run
  Dynamic,   // shaped at run time; storage from the run's arena (or a kernel-made constant)
};

struct PlanStep {
  int node = 0;                       // index into CompiledGraph::nodes()
  bool dynamic = false;               // infer (and prepare) again in every run from the actual tensors
  bool view = false;                  // the kernel's view_of_input flag: run() is never called
  std::shared_ptr<const void> state;  // what prepare() returned (static steps)
};

class ExecutionPlan {
 public:
  // `memory` (optional): where its run states take their slab and arena chunks (the plan cache's).
  static std::shared_ptr<ExecutionPlan> create(std::shared_ptr<const CompiledGraph> graph,
                                               std::vector<InputSignature> key,
                                               std::shared_ptr<RunMemory> memory = nullptr);
  ~ExecutionPlan();
  ExecutionPlan(const ExecutionPlan&) = delete;
  ExecutionPlan& operator=(const ExecutionPlan&) = delete;

  const CompiledGraph& graph() const { return *graph_; }
  const std::vector<InputSignature>& key() const { return key_; }
  const std::vector<PlanStep>& steps() const { return steps_; }
  ValueSource source(int v) const { return source_[static_cast<size_t>(v)]; }
  DType dtype(int v) const { return dtype_[static_cast<size_t>(v)]; }
  const Shape& shape(int v) const { return shape_[static_cast<size_t>(v)]; }
  int64_t slab_offset(int v) const { return offsets_[static_cast<size_t>(v)]; }
  const Tensor& constant(int v) const { return constants_[static_cast<size_t>(v)]; }
  size_t slab_bytes() const { return slab_bytes_; }
  // Slab ranges free after step i (see MemoryPlan::freed_after).
  const std::vector<std::pair<size_t, size_t>>& freed_after(size_t step) const { return freed_after_[step]; }
  // Values set in every run (inputs, input views, dynamic values); cleared when the run ends.
  const std::vector<int>& per_run_values() const { return per_run_; }
  // True when some value may be a sequence or optional at run time (a sequence/optional input or a
  // KernelFlags::on_values node): run states then keep a Value table beside the tensor table.
  bool has_boxed() const { return has_boxed_; }

  // Run states: an idle one if any (at most kMaxIdle are kept), else a new one.
  std::unique_ptr<RunState> acquire() const;
  void give_back(std::unique_ptr<RunState> state) const;
  static constexpr size_t kMaxIdle = 8;
  // Drops the idle run states, their memory going back to run_memory() (the plan cache does this to the
  // other plans when it builds a new one). Returns how many were dropped.
  size_t drop_idle() const;
  RunMemory* run_memory() const { return memory_.get(); }

 private:
  ExecutionPlan() = default;
  void infer_all();
  bool try_constant_eval(const CompiledNode& cn, std::vector<InputMeta>& metas, std::vector<OutputMeta>& outs);
  bool try_data_dependent_eval(const CompiledNode& cn, const std::vector<InputMeta>& metas);
  void place_memory();

  std::shared_ptr<const CompiledGraph> graph_;
  std::shared_ptr<RunMemory> memory_;
  std::vector<InputSignature> key_;
  std::vector<ValueSource> source_;
  std::vector<DType> dtype_;
  std::vector<Shape> shape_;
  std::vector<int64_t> offsets_;
  std::vector<Tensor> constants_;
  std::vector<PlanStep> steps_;
  std::vector<int> per_run_;
  size_t slab_bytes_ = 0;
  bool has_boxed_ = false;
  std::vector<std::vector<std::pair<size_t, size_t>>> freed_after_;

  mutable std::mutex pool_mutex_;
  mutable std::vector<std::unique_ptr<RunState>> idle_;
};

// A view of `src` (contiguous) with another shape and element type of the same total size or smaller;
// shares src's storage. Throws Error(Internal) if the view would not fit.
Tensor view_with_shape(const Tensor& src, DType dtype, const Shape& shape);

}  // namespace onemodel::rt
