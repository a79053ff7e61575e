// The public Session: loading, metadata, and the three run forms. Every check on the caller's arguments
// happens before a plan is made or a kernel runs.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>

#include "onnx/import.h"
#include "runtime/inputs.h"
#include "runtime/run_state.h"
#include "runtime/session_impl.h"
#include "runtime/subgraph.h"

namespace onemodel {

namespace {

[[noreturn]] void invalid(const std::string& message) { throw Error(ErrorKind::InvalidInput, message); }

// Returns a run state to its plan however the run ends, so an exception from a kernel never leaks the
// state or keeps the caller's tensors referenced.
struct StateLease {
  const rt::ExecutionPlan& plan;
  std::unique_ptr<rt::RunState> state;
  explicit StateLease(const rt::ExecutionPlan& p) : plan(p), state(p.acquire()) { state->begin_run(); }
  ~StateLease() { plan.give_back(std::move(state)); }
  StateLease(const StateLease&) = delete;
  StateLease& operator=(const StateLease&) = delete;
};

// Times one run for the profiler while it is active, however the run ends; scope() is what execute() takes.
class RunTimer {
 public:
  explicit RunTimer(rt::Profiler& p) : profiler_(p), on_(p.active()) {
    if (on_) t0_ = std::chrono::steady_clock::now();
  }
  ~RunTimer() {
    if (on_)
      profiler_.record_run(
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0_).count());
  }
  RunTimer(const RunTimer&) = delete;
  RunTimer& operator=(const RunTimer&) = delete;
  const rt::ProfileScope* scope() { return on_ ? &scope_ : nullptr; }

 private:
  rt::Profiler& profiler_;
  bool on_;
  std::chrono::steady_clock::time_point t0_;
  rt::ProfileScope scope_{&profiler_, {}, 0, nullptr};
};

// Per-thread key scratch so looking up a cached plan allocates nothing once warm.
std::vector<rt::InputSignature>& key_scratch() {
  thread_local std::vector<rt::InputSignature> key;
  return key;
}

// A requested output that the caller pre-allocated must match exactly; checked before anything is written.
void check_output_slot(const ValueInfo& info, const Tensor& slot, DType dtype, const Shape& shape) {
  if (slot.empty()) return;
  if (slot.dtype() != dtype || slot.shape() != shape)
    invalid("output '" + info.name + "' is " + std::string(dtype_short_name(dtype)) + " " + shape.to_string() +
            ", but the tensor given for it is " + std::string(dtype_short_name(slot.dtype())) + " " +
            slot.shape().to_string());
  if (!slot.is_contiguous()) invalid("the tensor given for output '" + info.name + "' is not contiguous");
}

}  // namespace

Session::Session(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

std::shared_ptr<rt::SessionCore> Session::Impl::core() const {
  std::lock_guard<std::mutex> lock(mutex);
  if (!core_) throw Error(ErrorKind::Disposed, "the session was released");
  return core_;
}

void Session::Impl::release() {
  std::shared_ptr<rt::SessionCore> dropped;
  {
    std::lock_guard<std::mutex> lock(mutex);
    dropped = std::move(core_);
  }
}

Session make_session(std::shared_ptr<const ir::Model> model, const SessionOptions& options, rt::OpLookup lookup) {
  rt::validate_options(options);
  auto graph = rt::CompiledGraph::create(model, options.mode == Mode::Exact, lookup, options.intra_op_threads,
                                         options.optimization_level);
  auto impl = std::make_shared<Session::Impl>();
  impl->options = options;
  impl->inputs = graph->input_infos();
  impl->outputs = graph->output_infos();
  for (const ir::OpsetImport& o : model->opset_imports)
    impl->opsets.emplace_back(o.domain == "ai.onnx" ? std::string() : o.domain, o.version);
  impl->graph_passes = graph->pass_report();  // a copy: release() frees the graph
  impl->core_ = std::make_shared<rt::SessionCore>(std::move(graph), static_cast<size_t>(options.max_cached_plans));
  return Session(std::move(impl));
}

Session Session::load(const std::filesystem::path& path, const SessionOptions& options) {
  rt::validate_options(options);
  onnx::ImportOptions io;
  io.max_nesting = options.max_nesting;
  io.external_data_dir = options.external_data_dir;
  auto model = std::make_shared<ir::Model>(onnx::import_file(path, io));
  return make_session(std::move(model), options);
}

Session Session::load_bytes(std::span<const std::byte> bytes, const SessionOptions& options,
                            std::string_view source_name) {
  rt::validate_options(options);
  // One aligned copy: the importer's tensors may be views into it, and it outlives the caller's buffer.
  Storage copy = allocate_storage(bytes.size());
  if (!bytes.empty()) std::memcpy(copy.data.get(), bytes.data(), bytes.size());
  onnx::ImportOptions io;
  io.max_nesting = options.max_nesting;
  io.external_data_dir = options.external_data_dir;
  auto model = std::make_shared<ir::Model>(onnx::import_bytes(std::move(copy), std::string(source_name), io));
  return make_session(std::move(model), options);
}

const std::vector<ValueInfo>& Session::inputs() const {
  impl_->core();
  return impl_->inputs;
}
const std::vector<ValueInfo>& Session::outputs() const {
  impl_->core();
  return impl_->outputs;
}
const SessionOptions& Session::options() const {
  impl_->core();
  return impl_->options;
}
const std::vector<std::pair<std::string, int64_t>>& Session::opsets() const {
  impl_->core();
  return impl_->opsets;
}

// The kernel path is fixed for the life of the session: the target chosen when it was created (best the CPU
// offers, capped by ONEMODEL_ISA).
std::string_view Session::kernel_path() const { return kern::isa_name(impl_->core()->graph->isa()); }

const std::vector<std::pair<std::string, int>>& Session::graph_passes() const {
  impl_->core();
  return impl_->graph_passes;
}

void Session::release() { impl_->release(); }

void Session::start_profiling() const { impl_->core()->profiler.start(); }
Profile Session::end_profiling() const { return impl_->core()->profiler.finish(); }

std::vector<Tensor> Session::run(std::span<const NamedTensor> inputs, std::span<const std::string> output_names) const {
  std::vector<std::string> names;
  std::vector<Tensor> tensors;
  names.reserve(inputs.size());
  tensors.reserve(inputs.size());
  for (const NamedTensor& nt : inputs) {
    names.push_back(nt.name);
    tensors.push_back(nt.tensor);
  }
  size_t count = output_names.empty() ? impl_->outputs.size() : output_names.size();
  std::vector<std::string> out_names;
  if (output_names.empty()) {
    impl_->core();
    for (const ValueInfo& o : impl_->outputs) out_names.push_back(o.name);
  } else {
    out_names.assign(output_names.begin(), output_names.end());
  }
  std::vector<Tensor> outputs(count);
  run(names, tensors, out_names, outputs);
  return outputs;
}

void Session::run(std::span<const std::string> input_names, std::span<const Tensor> inputs,
                  std::span<const std::string> output_names, std::span<Tensor> outputs) const {
  std::shared_ptr<rt::SessionCore> core = impl_->core();
  RunTimer timer(core->profiler);
  const rt::CompiledGraph& graph = *core->graph;
  std::vector<size_t> slots = rt::match_inputs(impl_->inputs, input_names, inputs);
  if (output_names.empty()) invalid("no output names were given");
  std::vector<size_t> wanted = rt::match_outputs(impl_->outputs, output_names);
  if (outputs.size() != output_names.size())
    invalid(std::to_string(output_names.size()) + " output names were given for " +
            std::to_string(outputs.size()) + " output tensors");

  for (size_t k : wanted) {
    const ValueInfo& o = impl_->outputs[k];
    if (o.kind == ValueKind::Sequence || o.kind == ValueKind::Optional)
      invalid("output '" + o.name + "' is " + (o.kind == ValueKind::Sequence ? "a sequence" : "an optional") +
              "; read it as a Value (Session::run_values)");
  }

  auto& key = key_scratch();
  key.resize(slots.size());
  for (size_t i = 0; i < slots.size(); ++i) key[i] = {inputs[slots[i]].dtype(), inputs[slots[i]].shape()};
  std::shared_ptr<const rt::ExecutionPlan> plan = core->cache.get(core->graph, key);

  // Outputs whose shape the plan knows are checked before running.
  for (size_t k = 0; k < wanted.size(); ++k) {
    int v = graph.outputs()[wanted[k]];
    if (plan->source(v) != rt::ValueSource::Dynamic)
      check_output_slot(impl_->outputs[wanted[k]], outputs[k], plan->dtype(v), plan->shape(v));
  }

  StateLease lease(*plan);
  for (size_t i = 0; i < slots.size(); ++i) lease.state->set_input(*plan, i, inputs[slots[i]]);
  lease.state->execute(*plan, timer.scope());
  for (size_t k = 0; k < wanted.size(); ++k) {
    const Tensor& r = lease.state->value(graph.outputs()[wanted[k]]);
    if (r.empty())
      invalid("output '" + impl_->outputs[wanted[k]].name + "' is not a tensor in this run; read it as a Value "
              "(Session::run_values)");
    check_output_slot(impl_->outputs[wanted[k]], outputs[k], r.dtype(), r.shape());
  }
  for (size_t k = 0; k < wanted.size(); ++k) {
    const Tensor& r = lease.state->value(graph.outputs()[wanted[k]]);
    if (outputs[k].empty())
      outputs[k] = Tensor::copy_of(r.dtype(), r.shape(), r.raw(), r.nbytes());
    else if (r.nbytes())
      std::memmove(outputs[k].raw_mut(), r.raw(), r.nbytes());
  }
}

std::vector<Value> Session::run_values(std::span<const NamedValue> inputs,
                                      std::span<const std::string> output_names) const {
  std::shared_ptr<rt::SessionCore> core = impl_->core();
  RunTimer timer(core->profiler);
  const rt::CompiledGraph& graph = *core->graph;
  std::vector<std::string> names;
  std::vector<Value> given;
  for (const NamedValue& nv : inputs) {
    names.push_back(nv.name);
    given.push_back(nv.value);
  }
  std::vector<Value> values;
  rt::match_value_inputs(impl_->inputs, names, given, values);
  std::vector<size_t> wanted = rt::match_outputs(impl_->outputs, output_names);

  std::vector<rt::InputSignature> key(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const Value& v = values[i];
    if (v.is_tensor())
      key[i] = {v.tensor().dtype(), v.tensor().shape(), ValueKind::Tensor};
    else
      key[i] = {DType::Undefined, Shape(), v.kind()};
  }
  std::shared_ptr<const rt::ExecutionPlan> plan = core->cache.get(core->graph, key);
  StateLease lease(*plan);
  for (size_t i = 0; i < values.size(); ++i) lease.state->set_input_value(*plan, i, values[i]);
  lease.state->execute(*plan, timer.scope());
  std::vector<Value> out;
  out.reserve(wanted.size());
  for (size_t k : wanted) {
    Value r = lease.state->value_of(graph.outputs()[k]);
    if (r.empty()) throw Error(ErrorKind::Internal, "output '" + impl_->outputs[k].name + "' was not produced");
    out.push_back(rt::detach_value(r));
  }
  return out;
}

std::vector<int64_t> Session::run_into(DType in_type, const void* input, size_t input_bytes,
                                       std::span<const int64_t> shape, DType out_type, void* output,
                                       size_t output_bytes) const {
  std::shared_ptr<rt::SessionCore> core = impl_->core();
  RunTimer timer(core->profiler);
  const rt::CompiledGraph& graph = *core->graph;
  if (impl_->inputs.size() != 1 || impl_->outputs.size() != 1)
    invalid("the span form needs a model with one input and one output; this one has " +
            std::to_string(impl_->inputs.size()) + " inputs and " + std::to_string(impl_->outputs.size()) +
            " outputs");
  const ValueInfo& in_info = impl_->inputs[0];
  const ValueInfo& out_info = impl_->outputs[0];
  if (!Shape::valid(shape)) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
    invalid("input '" + in_info.name + "' has an invalid shape " + s + "]");
  }
  Shape in_shape(shape);
  rt::check_input(in_info, in_type, in_shape);
  size_t need_in = static_cast<size_t>(in_shape.numel()) * dtype_size(in_type);
  if (input_bytes != need_in)
    invalid("input '" + in_info.name + "' of shape " + in_shape.to_string() + " needs " + std::to_string(need_in) +
            " bytes, got " + std::to_string(input_bytes));
  if (need_in != 0 && input == nullptr) invalid("input '" + in_info.name + "' has no data");

  auto& key = key_scratch();
  key.resize(1);
  key[0] = {in_type, in_shape};
  std::shared_ptr<const rt::ExecutionPlan> plan = core->cache.get(core->graph, key);
  const int out_v = graph.outputs()[0];
  auto check_out = [&](DType t, const Shape& s) {
    if (t != out_type)
      invalid("output '" + out_info.name + "' is " + std::string(dtype_short_name(t)) + ", the buffer holds " +
              std::string(dtype_short_name(out_type)));
    size_t need = static_cast<size_t>(s.numel()) * dtype_size(t);
    if (output_bytes < need)
      invalid("the output buffer holds " + std::to_string(output_bytes) + " bytes; output '" + out_info.name +
              "' " + s.to_string() + " needs " + std::to_string(need));
    if (need != 0 && output == nullptr) invalid("the output buffer is null");
  };
  if (plan->source(out_v) != rt::ValueSource::Dynamic) check_out(plan->dtype(out_v), plan->shape(out_v));

  StateLease lease(*plan);
  lease.state->set_input_bytes(*plan, 0, input, input_bytes);
  lease.state->execute(*plan, timer.scope());
  const Tensor& r = lease.state->value(out_v);
  if (r.empty()) invalid("output '" + out_info.name + "' is not a tensor; read it with Session::run_values");
  check_out(r.dtype(), r.shape());
  if (r.nbytes()) std::memcpy(output, r.raw(), r.nbytes());
  return r.shape().to_vector();
}

}  // namespace onemodel
