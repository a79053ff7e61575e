// Executing a plan. Static steps write into slab views prepared when the run state was made; dynamic steps
// are inferred again from the actual tensors and take their outputs from the arena.
#include "runtime/run_state.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>

#include "runtime/inputs.h"
#include "runtime/run_memory.h"

namespace onemodel::rt {

RunState::RunState(const ExecutionPlan& plan) {
  const CompiledGraph& g = plan.graph();
  const size_t n = g.num_values();
  slab = take_run_storage(plan.run_memory(), plan.slab_bytes());
  arena.set_memory(plan.run_memory());
  tensors.assign(n, Tensor());
  if (plan.has_boxed()) boxed.assign(n, Value());
  for (size_t v = 0; v < n; ++v) {
    int id = static_cast<int>(v);
    switch (plan.source(id)) {
      case ValueSource::Constant: tensors[v] = plan.constant(id); break;
      case ValueSource::Slab:
        tensors[v] = Tensor::view_of(slab, static_cast<size_t>(plan.slab_offset(id)), plan.dtype(id), plan.shape(id));
        break;
      default: break;
    }
  }
}

void RunState::begin_run() { arena.reset(); }

void RunState::set_input(const ExecutionPlan& plan, size_t i, const Tensor& t) {
  int v = plan.graph().inputs()[i];
  if (readable_in_place(t)) {
    tensors[static_cast<size_t>(v)] = t;
    return;
  }
  Tensor staged = arena.allocate(t.dtype(), t.shape());
  copy_into(t, staged.raw_mut());
  tensors[static_cast<size_t>(v)] = std::move(staged);
}

void RunState::set_input_bytes(const ExecutionPlan& plan, size_t i, const void* data, size_t bytes) {
  int v = plan.graph().inputs()[i];
  Tensor staged = arena.allocate(plan.dtype(v), plan.shape(v));
  if (bytes != staged.nbytes())
    throw Error(ErrorKind::Internal,
                "staged input needs " + std::to_string(staged.nbytes()) + " bytes, got " + std::to_string(bytes));
  if (bytes) std::memcpy(staged.raw_mut(), data, bytes);
  tensors[static_cast<size_t>(v)] = std::move(staged);
}

void RunState::set_input_value(const ExecutionPlan& plan, size_t i, const Value& value) {
  if (value.is_tensor()) {
    set_input(plan, i, value.tensor());
    return;
  }
  int v = plan.graph().inputs()[i];
  if (boxed.empty() || value.empty())
    throw Error(ErrorKind::Internal, "input '" + plan.graph().value_name(v) +
                                         "' is not a tensor, but the plan "
                                         "was made for a tensor");
  boxed[static_cast<size_t>(v)] = value;
}

Value RunState::value_of(int v) const {
  if (const Value* b = boxed_value(v)) return *b;
  const Tensor& t = tensors[static_cast<size_t>(v)];
  return t.empty() ? Value() : Value(t);
}

namespace {

const char* kind_phrase(ValueKind k) {
  return k == ValueKind::Sequence ? "a sequence" : k == ValueKind::Optional ? "an optional" : "not a tensor";
}

}  // namespace

bool RunState::execute_boxed_step(const ExecutionPlan& plan, const CompiledNode& cn) {
  const CompiledGraph& g = plan.graph();
  const KernelFlags& flags = cn.kernel->flags();
  if (!flags.on_values) {
    for (size_t i = 0; i < cn.inputs.size(); ++i) {
      int v = cn.inputs[i];
      const Value* b = v < 0 ? nullptr : boxed_value(v);
      if (!b) continue;
      if (i == 0 && flags.passes_values && !cn.outputs.empty() && cn.outputs[0] >= 0) {
        boxed[static_cast<size_t>(cn.outputs[0])] = *b;
        return true;
      }
      cn.info.fail(ErrorKind::InvalidModel, "input " + std::to_string(i) + " ('" + g.value_name(v) + "') is " +
                                                kind_phrase(b->kind()) + "; this operator takes tensors");
    }
    return false;  // all tensors: the ordinary dynamic path
  }
  step_value_inputs.resize(cn.inputs.size());
  for (size_t i = 0; i < cn.inputs.size(); ++i) {
    int v = cn.inputs[i];
    step_value_inputs[i] = v < 0 ? Value() : value_of(v);
    if (v >= 0 && step_value_inputs[i].empty())
      cn.info.fail(ErrorKind::Internal, "input " + std::to_string(i) + " was not computed");
  }
  step_value_outputs.assign(cn.outputs.size(), Value());
  step_outputs.assign(cn.outputs.size(), Tensor());
  RunContext ctx{cn.info, step_inputs, step_outputs, g.exact(),         nullptr,
                 &arena,  g.pool(),    g.isa(),      step_value_inputs, step_value_outputs};
  ctx.profile = profile;
  cn.kernel->run(ctx);
  for (size_t o = 0; o < cn.outputs.size(); ++o) {
    int v = cn.outputs[o];
    if (v < 0) continue;
    Value& r = step_value_outputs[o];
    if (r.empty()) cn.info.fail(ErrorKind::Internal, "output " + std::to_string(o) + " was not produced");
    if (r.is_tensor()) {
      const Tensor& t = r.tensor();
      // A tensor passed straight through from a slab input would outlive its block: copy it to the arena.
      const std::byte* p = t.storage().data.get();
      const bool in_slab = slab.data && p >= slab.data.get() && p < slab.data.get() + slab.bytes;
      if (in_slab || !t.is_contiguous()) {
        Tensor c = arena.allocate(t.dtype(), t.shape());
        copy_into(t, c.raw_mut());
        tensors[static_cast<size_t>(v)] = std::move(c);
      } else {
        tensors[static_cast<size_t>(v)] = t;
      }
    } else {
      boxed[static_cast<size_t>(v)] = std::move(r);
    }
  }
  for (Value& x : step_value_inputs) x = Value();
  for (Value& x : step_value_outputs) x = Value();
  return true;
}

namespace {

// Checked builds fill memory whose values died with 0xFF (NaN for floats, -1 for integers), so a kernel or
// planner bug that reads a dead value gives visibly wrong results in the tests instead of stale-but-right
// ones. Release builds skip it: it changes nothing a correct plan can observe.
void poison_freed(const ExecutionPlan& plan, size_t step, Storage& slab) {
#ifndef NDEBUG
  for (auto [offset, bytes] : plan.freed_after(step)) {
    size_t n = std::min(bytes, slab.bytes - std::min(slab.bytes, offset));
    if (n) std::memset(slab.data.get() + offset, 0xFF, n);
  }
#else
  (void)plan, (void)step, (void)slab;
#endif
}

}  // namespace

void RunState::execute(const ExecutionPlan& plan, const ProfileScope* scope) {
  profile = scope;
  const auto& nodes = plan.graph().nodes();
  for (size_t si = 0; si < plan.steps().size(); ++si) {
    const PlanStep& step = plan.steps()[si];
    if (scope) {
      const auto t0 = std::chrono::steady_clock::now();
      execute_step(plan, step);
      const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0);
      scope->profiler->record_step(*scope, nodes[static_cast<size_t>(step.node)].info, ns.count());
    } else {
      execute_step(plan, step);
    }
    poison_freed(plan, si, slab);
  }
  profile = nullptr;
}

void RunState::execute_step(const ExecutionPlan& plan, const PlanStep& step) {
  const CompiledGraph& g = plan.graph();
  {
    const CompiledNode& cn = g.nodes()[static_cast<size_t>(step.node)];
    step_inputs.resize(cn.inputs.size());
    for (size_t i = 0; i < cn.inputs.size(); ++i) {
      int v = cn.inputs[i];
      step_inputs[i] = v < 0 ? Tensor() : tensors[static_cast<size_t>(v)];
    }
    const size_t nout = cn.outputs.size();

    if (!step.dynamic) {
      if (step.view) {
        int out = cn.outputs[0];
        // Slab views were placed by the planner at their source's offset and need no work.
        if (plan.source(out) == ValueSource::Derived)
          tensors[static_cast<size_t>(out)] = view_with_shape(step_inputs[0], plan.dtype(out), plan.shape(out));
        return;
      }
      step_outputs.resize(nout);
      for (size_t o = 0; o < nout; ++o) {
        int v = cn.outputs[o];
        step_outputs[o] = v < 0 ? Tensor() : tensors[static_cast<size_t>(v)];
      }
      RunContext ctx{cn.info, step_inputs, step_outputs, g.exact(), step.state.get(), &arena, g.pool(), g.isa()};
      ctx.profile = profile;
      cn.kernel->run(ctx);
      return;
    }

    // Dynamic: shaped again from the actual tensors, every input value known.
    if (!boxed.empty() && execute_boxed_step(plan, cn)) return;
    metas.resize(cn.inputs.size());
    for (size_t i = 0; i < cn.inputs.size(); ++i) {
      InputMeta& m = metas[i];
      m = InputMeta();
      if (cn.inputs[i] < 0) continue;  // an omitted optional input, possibly before present ones
      const Tensor& t = step_inputs[i];
      if (t.empty()) cn.info.fail(ErrorKind::Internal, "input " + std::to_string(i) + " was not computed");
      m.present = true;
      m.dtype = t.dtype();
      m.shape = t.shape();
      m.value = &t;
      m.constant = plan.source(cn.inputs[i]) == ValueSource::Constant;
    }
    step_outputs.assign(nout, Tensor());
    const KernelFlags& flags = cn.kernel->flags();
    if (!flags.outputs_data_dependent) {
      out_metas.assign(nout, OutputMeta());
      InferContext ictx{cn.info, metas, out_metas, g.exact()};
      cn.kernel->infer(ictx);
      bool constant = false;
      for (size_t o = 0; o < nout; ++o)
        if (cn.outputs[o] >= 0 && !out_metas[o].constant.empty()) constant = true;
      if (constant) {
        for (size_t o = 0; o < nout; ++o)
          if (cn.outputs[o] >= 0) step_outputs[o] = out_metas[o].constant;
      } else if (flags.view_of_input) {
        step_outputs[0] = view_with_shape(step_inputs[0], out_metas[0].dtype, out_metas[0].shape);
      } else {
        for (size_t o = 0; o < nout; ++o)
          if (cn.outputs[o] >= 0) step_outputs[o] = arena.allocate(out_metas[o].dtype, out_metas[o].shape);
        const void* prepared_state = prepare_dynamic(plan, step, cn);
        RunContext ctx{cn.info, step_inputs, step_outputs, g.exact(), prepared_state, &arena, g.pool(), g.isa()};
        ctx.profile = profile;
        cn.kernel->run(ctx);
      }
    } else {
      RunContext ctx{cn.info, step_inputs, step_outputs, g.exact(), nullptr, &arena, g.pool(), g.isa()};
      ctx.profile = profile;
      cn.kernel->run(ctx);
    }
    for (size_t o = 0; o < nout; ++o) {
      int v = cn.outputs[o];
      if (v < 0) continue;
      Tensor& t = step_outputs[o];
      if (t.empty()) cn.info.fail(ErrorKind::Internal, "output " + std::to_string(o) + " was not produced");
      tensors[static_cast<size_t>(v)] = t.is_contiguous() ? std::move(t) : contiguous_copy(t);
    }
  }
}

// prepare() sees what a static step's prepare sees: the value of an input only when it is a plan constant
// (weights, folded values). So its result can depend only on the element types and shapes of the inputs and
// outputs and on those constants, and is kept while they are the same.
const void* RunState::prepare_dynamic(const ExecutionPlan& plan, const PlanStep& step, const CompiledNode& cn) {
  const size_t si = static_cast<size_t>(&step - plan.steps().data());
  if (prepared.size() != plan.steps().size()) prepared.resize(plan.steps().size());
  Prepared& p = prepared[si];
  const size_t n = metas.size(), no = out_metas.size();
  bool same = p.state != nullptr && p.dtypes.size() == n + no;
  for (size_t i = 0; i < n && same; ++i) {
    const int v = cn.inputs[i];
    const void* c = v >= 0 && plan.source(v) == ValueSource::Constant ? plan.constant(v).raw() : nullptr;
    same = p.dtypes[i] == metas[i].dtype && p.shapes[i] == metas[i].shape && p.constants[i] == c;
  }
  for (size_t o = 0; o < no && same; ++o)
    same = p.dtypes[n + o] == out_metas[o].dtype && p.shapes[n + o] == out_metas[o].shape;
  if (same) return p.state.get();

  prep_metas.assign(metas.begin(), metas.end());
  p.dtypes.assign(n + no, DType::Undefined);
  p.shapes.assign(n + no, Shape());
  p.constants.assign(n, nullptr);
  for (size_t i = 0; i < n; ++i) {
    const int v = cn.inputs[i];
    if (!(v >= 0 && plan.source(v) == ValueSource::Constant)) prep_metas[i].value = nullptr;
    p.dtypes[i] = metas[i].dtype;
    p.shapes[i] = metas[i].shape;
    p.constants[i] = prep_metas[i].value ? plan.constant(v).raw() : nullptr;
  }
  for (size_t o = 0; o < no; ++o) {
    p.dtypes[n + o] = out_metas[o].dtype;
    p.shapes[n + o] = out_metas[o].shape;
  }
  const CompiledGraph& g = plan.graph();
  PrepareContext pctx{cn.info, prep_metas, out_metas, g.exact(), g.isa()};
  pctx.packed_weight = cn.packed_weight;
  p.state = cn.kernel->prepare(pctx);
  if (!p.state) p.dtypes.clear();  // nothing to keep: prepare again next time (it is cheap or absent)
  for (InputMeta& m : prep_metas) m = InputMeta();
  return p.state.get();
}

void RunState::end_run(const ExecutionPlan& plan) {
  for (int v : plan.per_run_values()) tensors[static_cast<size_t>(v)] = Tensor();
  if (!boxed.empty())
    for (int v : plan.per_run_values()) boxed[static_cast<size_t>(v)] = Value();
  for (Tensor& t : step_inputs) t = Tensor();
  for (Tensor& t : step_outputs) t = Tensor();
  for (InputMeta& m : metas) m = InputMeta();
  for (OutputMeta& m : out_metas) m = OutputMeta();
}

}  // namespace onemodel::rt
