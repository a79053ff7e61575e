// Making a plan: types and shapes in graph order, constant evaluation, dynamic nodes, then the slab layout.
#include "runtime/plan.h"

#include <algorithm>
#include <optional>
#include <string>

#include "kernels/widen.h"
#include "runtime/arena.h"
#include "runtime/inputs.h"
#include "runtime/memory_planner.h"
#include "runtime/run_state.h"

namespace onemodel::rt {

namespace {

constexpr uint64_t kFoldLimit = 64 * 1024;  // constant results larger than this and their inputs stay runtime

uint64_t byte_size(DType t, const Shape& s) { return static_cast<uint64_t>(s.numel()) * dtype_size(t); }

// A float16 or bfloat16 constant widened exactly to float32 (what onemodel.WidenWeight computes).
Tensor widen_compact(const Tensor& narrow, kern::Isa isa) {
  if (!narrow.is_contiguous() || (narrow.dtype() != DType::F16 && narrow.dtype() != DType::BF16))
    throw Error(ErrorKind::Internal, "compact weights must be a contiguous float16 or bfloat16 constant");
  Tensor wide = Tensor::zeros(DType::F32, narrow.shape());
  const auto* src = static_cast<const uint16_t*>(narrow.raw());
  float* dst = wide.mutable_data<float>().data();
  (narrow.dtype() == DType::BF16 ? kern::widen_bf16_f32 : kern::widen_f16_f32)(isa, src, dst, narrow.numel());
  return wide;
}

}  // namespace

Tensor view_with_shape(const Tensor& src, DType dtype, const Shape& shape) {
  if (!src.is_contiguous()) throw Error(ErrorKind::Internal, "a view needs a contiguous source tensor");
  uint64_t need = byte_size(dtype, shape);
  if (need > src.nbytes())
    throw Error(ErrorKind::Internal, "a view of " + std::to_string(need) + " bytes exceeds its source of " +
                                         std::to_string(src.nbytes()) + " bytes");
  size_t byte_offset = static_cast<size_t>(src.offset()) * dtype_size(src.dtype());
  return Tensor::view_of(src.storage(), byte_offset, dtype, shape);
}

std::shared_ptr<ExecutionPlan> ExecutionPlan::create(std::shared_ptr<const CompiledGraph> graph,
                                                     std::vector<InputSignature> key,
                                                     std::shared_ptr<RunMemory> memory) {
  std::shared_ptr<ExecutionPlan> p(new ExecutionPlan());
  p->graph_ = std::move(graph);
  p->memory_ = std::move(memory);
  p->key_ = std::move(key);
  if (p->key_.size() != p->graph_->inputs().size())
    throw Error(ErrorKind::Internal, "plan key has " + std::to_string(p->key_.size()) + " inputs, the graph " +
                                         std::to_string(p->graph_->inputs().size()));
  p->infer_all();
  p->place_memory();
  return p;
}

ExecutionPlan::~ExecutionPlan() = default;

void ExecutionPlan::infer_all() {
  const CompiledGraph& g = *graph_;
  const size_t n = g.num_values();
  source_.assign(n, ValueSource::None);
  dtype_.assign(n, DType::Undefined);
  shape_.assign(n, Shape());
  constants_.assign(n, Tensor());
  for (size_t v = 0; v < n; ++v) {
    const Tensor& w = g.weights()[v];
    if (w.empty()) continue;
    source_[v] = ValueSource::Constant;
    constants_[v] = w;
    dtype_[v] = w.dtype();
    shape_[v] = w.shape();
  }
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    auto v = static_cast<size_t>(g.inputs()[i]);
    if (key_[i].kind != ValueKind::Tensor) {
      source_[v] = ValueSource::Dynamic;  // a sequence or optional: consumers run as dynamic steps
      has_boxed_ = true;
      per_run_.push_back(static_cast<int>(v));
      continue;
    }
    source_[v] = ValueSource::Input;
    dtype_[v] = key_[i].dtype;
    shape_[v] = key_[i].shape;
    per_run_.push_back(static_cast<int>(v));
  }

  // Compact weights (docs/fp16.md section 6; graph-runtime.md section 4): the step that widens a 16-bit
  // constant for its one reader (onemodel.WidenWeight, never folded) waits for that reader. A reader that may
  // take compact weights as input 1 (KernelFlags::compact_weights, a static step) is offered the constant in
  // prepare(); if it takes it (PrepareContext::took_compact: its packing keeps the 16 bits), the widening never
  // runs and the reader sees the 16-bit constant as that input; otherwise the step is scheduled just before it.
  std::vector<int> readers(n, 0);
  for (const CompiledNode& cn : g.nodes())
    for (int v : cn.inputs)
      if (v >= 0) ++readers[static_cast<size_t>(v)];
  for (int v : g.outputs()) readers[static_cast<size_t>(v)] += 2;
  std::vector<std::optional<PlanStep>> waiting(n);  // by the widened value
  std::vector<int> widened_from(n, -1);             // its 16-bit constant
  auto schedule = [&](int v) {
    auto& w = waiting[static_cast<size_t>(v)];
    if (!w) return;
    steps_.push_back(std::move(*w));
    w.reset();
  };

  std::vector<InputMeta> metas;
  std::vector<OutputMeta> outs;
  for (size_t k = 0; k < g.nodes().size(); ++k) {
    const CompiledNode& cn = g.nodes()[k];
    const KernelFlags& flags = cn.kernel->flags();
    PlanStep step;
    step.node = static_cast<int>(k);
    step.view = flags.view_of_input;

    metas.assign(cn.inputs.size(), InputMeta());
    bool runtime_shaped = false, all_constant = true;
    for (size_t i = 0; i < cn.inputs.size(); ++i) {
      int v = cn.inputs[i];
      if (v < 0) continue;
      auto vi = static_cast<size_t>(v);
      if (source_[vi] == ValueSource::None)
        cn.info.fail(ErrorKind::InvalidModel, "input '" + g.value_name(v) + "' has no value in this plan");
      metas[i].present = true;
      if (source_[vi] == ValueSource::Dynamic) {
        runtime_shaped = true;
        all_constant = false;
        continue;
      }
      metas[i].dtype = dtype_[vi];
      metas[i].shape = shape_[vi];
      if (source_[vi] == ValueSource::Constant) {
        metas[i].value = &constants_[vi];
        metas[i].constant = true;
      } else
        all_constant = false;
    }
    // Waiting widenings this node reads: input 1 is offered below if the node may take compact weights, the
    // others are scheduled now (before this node's step).
    int offered = -1;
    for (size_t i = 0; i < cn.inputs.size(); ++i) {
      const int v = cn.inputs[i];
      if (v < 0 || !waiting[static_cast<size_t>(v)]) continue;
      if (i == 1 && flags.compact_weights && !runtime_shaped)
        offered = v;
      else
        schedule(v);
    }
    auto decline = [&] {  // the offered widening runs after all
      if (offered >= 0) schedule(offered);
      offered = -1;
    };

    auto mark_dynamic = [&] {
      decline();
      step.dynamic = true;
      for (int v : cn.outputs)
        if (v >= 0) {
          source_[static_cast<size_t>(v)] = ValueSource::Dynamic;
          per_run_.push_back(v);
        }
      steps_.push_back(step);
    };
    if (flags.on_values) has_boxed_ = true;
    if (!runtime_shaped && flags.outputs_data_dependent && !flags.on_values && all_constant &&
        try_data_dependent_eval(cn, metas))
      continue;
    if (runtime_shaped || flags.outputs_data_dependent || flags.on_values) {
      mark_dynamic();
      continue;
    }

    outs.assign(cn.outputs.size(), OutputMeta());
    InferContext ctx{cn.info, metas, outs, g.exact()};
    cn.kernel->infer(ctx);
    if (ctx.needs_runtime_values) {
      mark_dynamic();
      continue;
    }

    size_t present = 0, constant = 0;
    for (size_t o = 0; o < cn.outputs.size(); ++o) {
      if (cn.outputs[o] < 0) continue;
      ++present;
      if (!outs[o].constant.empty()) ++constant;
      if (!dtype_is_stored(outs[o].dtype))
        cn.info.fail(ErrorKind::Internal, "shape inference stated no element type for output " + std::to_string(o));
    }
    if (constant != 0 && constant != present)
      cn.info.fail(ErrorKind::Internal, "some outputs were stated constant and others not");
    for (size_t o = 0; o < cn.outputs.size(); ++o) {
      int v = cn.outputs[o];
      if (v < 0) continue;
      dtype_[static_cast<size_t>(v)] = outs[o].dtype;
      shape_[static_cast<size_t>(v)] = outs[o].shape;
    }
    if (present > 0 && constant == present) {
      decline();
      for (size_t o = 0; o < cn.outputs.size(); ++o) {
        int v = cn.outputs[o];
        if (v < 0) continue;
        const Tensor& c = outs[o].constant;
        constants_[static_cast<size_t>(v)] = c.is_contiguous() ? c : contiguous_copy(c);
        source_[static_cast<size_t>(v)] = ValueSource::Constant;
      }
      continue;
    }

    if (flags.view_of_input) {
      int in = cn.inputs.empty() ? -1 : cn.inputs[0];
      int out = cn.outputs.empty() ? -1 : cn.outputs[0];
      if (in < 0 || out < 0) cn.info.fail(ErrorKind::InvalidModel, "a view needs input 0 and output 0");
      auto ii = static_cast<size_t>(in), oi = static_cast<size_t>(out);
      if (byte_size(dtype_[oi], shape_[oi]) > byte_size(dtype_[ii], shape_[ii]))
        cn.info.fail(ErrorKind::Internal,
                     "view output " + shape_[oi].to_string() + " is larger than its input " + shape_[ii].to_string());
      switch (source_[ii]) {
        case ValueSource::Constant:
          constants_[oi] = view_with_shape(constants_[ii], dtype_[oi], shape_[oi]);
          source_[oi] = ValueSource::Constant;
          continue;  // a view of a constant is a constant: not scheduled
        case ValueSource::Slab:
          source_[oi] = ValueSource::Slab;  // the planner gives it the source's block
          break;
        default:
          source_[oi] = ValueSource::Derived;
          per_run_.push_back(out);
          break;
      }
      steps_.push_back(step);
      continue;
    }

    // A node whose weight only its packing holds runs at run time: folding would read the placeholder.
    if (all_constant && !flags.never_folded && !cn.packed_weight && try_constant_eval(cn, metas, outs)) continue;

    Tensor wide;  // the offered compact weights widened, for prepare() only
    if (offered >= 0) {
      const Tensor& narrow = constants_[static_cast<size_t>(widened_from[static_cast<size_t>(offered)])];
      wide = widen_compact(narrow, g.isa());
      metas[1].value = &wide;
      metas[1].compact = &narrow;
    }
    PrepareContext pctx{cn.info, metas, outs, g.exact(), g.isa()};
    pctx.packed_weight = cn.packed_weight;
    step.state = cn.kernel->prepare(pctx);
    if (offered >= 0) {
      const auto v = static_cast<size_t>(offered);
      metas[1].value = nullptr;
      metas[1].compact = nullptr;
      if (pctx.took_compact) {
        constants_[v] = constants_[static_cast<size_t>(widened_from[v])];
        source_[v] = ValueSource::Constant;
        waiting[v].reset();
      } else {
        decline();
      }
    }
    for (int v : cn.outputs)
      if (v >= 0) source_[static_cast<size_t>(v)] = ValueSource::Slab;
    // A widening of a constant for one reader waits for it (above).
    if (flags.never_folded && all_constant && cn.inputs.size() == 1 && cn.outputs.size() == 1 && cn.inputs[0] >= 0 &&
        cn.outputs[0] >= 0 && readers[static_cast<size_t>(cn.outputs[0])] == 1) {
      widened_from[static_cast<size_t>(cn.outputs[0])] = cn.inputs[0];
      waiting[static_cast<size_t>(cn.outputs[0])] = std::move(step);
      continue;
    }
    steps_.push_back(step);
  }
  for (size_t v = 0; v < n; ++v) schedule(static_cast<int>(v));  // none should be left: readers come later

  for (int v : g.outputs())
    if (source_[static_cast<size_t>(v)] == ValueSource::None)
      throw Error(ErrorKind::InvalidModel, "graph output '" + g.value_name(v) + "' is not produced by any node");
}

// Runs a node whose inputs are all constants once, now, unless its result would be larger than all of its
// inputs together and than 64 KiB (folding would then trade a cheap op for a lot of plan memory: Expand,
// Tile). A Concat of weight slices is folded (Silero VAD reorders its LSTM gates that way: 256 KiB, and the
// LSTM then packs the folded weights once instead of every run). The same kernel computes the same bits, only
// earlier.
bool ExecutionPlan::try_constant_eval(const CompiledNode& cn, std::vector<InputMeta>& metas,
                                      std::vector<OutputMeta>& outs) {
  uint64_t out_bytes = 0, sum_in = 0;
  for (size_t o = 0; o < cn.outputs.size(); ++o)
    if (cn.outputs[o] >= 0) out_bytes += byte_size(outs[o].dtype, outs[o].shape);
  for (const InputMeta& m : metas)
    if (m.present) sum_in += byte_size(m.dtype, m.shape);
  if (out_bytes > kFoldLimit && out_bytes > sum_in) return false;

  const CompiledGraph& g = *graph_;
  PrepareContext pctx{cn.info, metas, outs, g.exact(), g.isa()};
  std::shared_ptr<const void> state = cn.kernel->prepare(pctx);
  std::vector<Tensor> ins(metas.size()), results(cn.outputs.size());
  for (size_t i = 0; i < metas.size(); ++i)
    if (metas[i].present) ins[i] = *metas[i].value;
  for (size_t o = 0; o < cn.outputs.size(); ++o)
    if (cn.outputs[o] >= 0) results[o] = Tensor::zeros(outs[o].dtype, outs[o].shape);
  BumpArena arena;
  RunContext rctx{cn.info, ins, results, g.exact(), state.get(), &arena, nullptr, g.isa()};
  cn.kernel->run(rctx);
  for (size_t o = 0; o < cn.outputs.size(); ++o) {
    int v = cn.outputs[o];
    if (v < 0) continue;
    constants_[static_cast<size_t>(v)] = std::move(results[o]);
    source_[static_cast<size_t>(v)] = ValueSource::Constant;
  }
  return true;
}

// The data-dependent flavour of constant evaluation: the output shapes are only known after running, so
// the node runs once and the results are kept only if they pass the same size rule.
bool ExecutionPlan::try_data_dependent_eval(const CompiledNode& cn, const std::vector<InputMeta>& metas) {
  uint64_t max_in = 0;
  std::vector<Tensor> ins(metas.size()), results(cn.outputs.size());
  for (size_t i = 0; i < metas.size(); ++i)
    if (metas[i].present) {
      ins[i] = *metas[i].value;
      max_in = std::max(max_in, byte_size(metas[i].dtype, metas[i].shape));
    }
  BumpArena arena;
  RunContext rctx{cn.info, ins, results, graph_->exact(), nullptr, &arena, nullptr};
  cn.kernel->run(rctx);
  uint64_t out_bytes = 0;
  for (size_t o = 0; o < cn.outputs.size(); ++o) {
    if (cn.outputs[o] < 0) continue;
    if (results[o].empty()) cn.info.fail(ErrorKind::Internal, "output " + std::to_string(o) + " was not produced");
    out_bytes += results[o].nbytes();
  }
  if (out_bytes > kFoldLimit && out_bytes > max_in) return false;
  for (size_t o = 0; o < cn.outputs.size(); ++o) {
    int v = cn.outputs[o];
    if (v < 0) continue;
    auto vi = static_cast<size_t>(v);
    constants_[vi] = contiguous_copy(results[o]);  // own storage: not a slice of the scratch arena's chunk
    source_[vi] = ValueSource::Constant;
    dtype_[vi] = constants_[vi].dtype();
    shape_[vi] = constants_[vi].shape();
  }
  return true;
}

void ExecutionPlan::place_memory() {
  const CompiledGraph& g = *graph_;
  const size_t n = g.num_values();
  std::vector<SlabValue> values(n);
  for (size_t v = 0; v < n; ++v) {
    if (source_[v] != ValueSource::Slab) continue;
    values[v].in_slab = true;
    values[v].bytes = static_cast<size_t>(byte_size(dtype_[v], shape_[v]));
    values[v].dtype = dtype_[v];
  }
  std::vector<SlabStep> steps;
  steps.reserve(steps_.size());
  for (const PlanStep& s : steps_) {
    const CompiledNode& cn = g.nodes()[static_cast<size_t>(s.node)];
    SlabStep ps;
    ps.inputs = cn.inputs;
    ps.outputs = cn.outputs;
    ps.view = s.view;
    // In-place aliasing is decided for static steps only; a dynamic step's outputs live in the arena.
    if (!s.dynamic) ps.in_place_input = cn.kernel->flags().in_place_input;
    steps.push_back(std::move(ps));
  }
  MemoryPlan mp = plan_memory(values, steps, g.outputs());
  offsets_ = std::move(mp.offsets);
  slab_bytes_ = mp.slab_bytes;
  freed_after_ = std::move(mp.freed_after);
}

std::unique_ptr<RunState> ExecutionPlan::acquire() const {
  {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    if (!idle_.empty()) {
      std::unique_ptr<RunState> s = std::move(idle_.back());
      idle_.pop_back();
      return s;
    }
  }
  return std::make_unique<RunState>(*this);
}

size_t ExecutionPlan::drop_idle() const {
  std::vector<std::unique_ptr<RunState>> dropped;
  {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    dropped.swap(idle_);
  }
  return dropped.size();  // destroyed here, outside the lock
}

void ExecutionPlan::give_back(std::unique_ptr<RunState> state) const {
  state->end_run(*this);
  std::lock_guard<std::mutex> lock(pool_mutex_);
  if (idle_.size() < kMaxIdle) idle_.push_back(std::move(state));
}

}  // namespace onemodel::rt
