// The public Session: loading, metadata, and the three run forms. Every check on the caller's arguments
// happens before a plan is made or a kernel runs.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>

#include "base/big_buffer.h"
#include "format/format.h"
#include "runtime/inputs.h"
#include "runtime/run_memory.h"
#include "runtime/run_state.h"
#include "runtime/session_impl.h"
#include "runtime/subgraph.h"

namespace onemodel {

namespace {

[[noreturn]] void invalid(const std::string& message) { throw Error(ErrorKind::InvalidInput, message); }

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

namespace {
// What the importer takes from the session options (both load forms).
onnx::ImportOptions import_options(const SessionOptions& options) {
  onnx::ImportOptions io;
  io.max_nesting = options.max_nesting;
  io.external_data_dir = options.external_data_dir;
  return io;
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
  auto impl = std::make_shared<Session::Impl>();
  for (const ir::OpsetImport& o : model->opset_imports)
    impl->opsets.emplace_back(o.domain == "ai.onnx" ? std::string() : o.domain, o.version);
  // Handed over (not copied): a model only the session holds may lose the weights its kernels pack for good.
  auto graph = rt::CompiledGraph::create(std::move(model), options.mode == Mode::Exact, lookup,
                                         options.intra_op_threads, options.optimization_level, options.weight_storage);
  impl->options = options;
  impl->inputs = graph->input_infos();
  impl->outputs = graph->output_infos();
  impl->graph_passes = graph->pass_report();  // a copy: release() frees the graph
  impl->core_ = std::make_shared<rt::SessionCore>(std::move(graph), static_cast<size_t>(options.max_cached_plans));
  return Session(std::move(impl));
}

Session Session::load(const std::filesystem::path& path, const SessionOptions& options) {
  rt::validate_options(options);
  auto model = std::make_shared<ir::Model>(format::import_model_file(path, import_options(options)));
  return make_session(std::move(model), options);
}

Session Session::load_bytes(std::span<const std::byte> bytes, const SessionOptions& options,
                            std::string_view source_name) {
  rt::validate_options(options);
  auto model =
      std::make_shared<ir::Model>(format::import_model_span(bytes, std::string(source_name), import_options(options)));
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
int Session::threads() const { return impl_->core()->graph->pool()->threads(); }

const std::vector<std::pair<std::string, int>>& Session::graph_passes() const {
  impl_->core();
  return impl_->graph_passes;
}

void Session::release() { impl_->release(); }

void Session::start_profiling() const { impl_->core()->profiler.start(); }
Profile Session::end_profiling() const { return impl_->core()->profiler.finish(); }

namespace {

// The caller's inputs as one public run form passed them, before matching: named tensors (Session::run),
// named values (run_values), or the model's one input as raw row-major bytes (run_into).
struct Feed {
  enum class Form { Tensors, Values, Bytes } form = Form::Tensors;
  std::span<const std::string> names{};  // Tensors, Values
  std::span<const Tensor> tensors{};     // Tensors
  std::span<const Value> values{};       // Values
  DType dtype = DType::Undefined;        // Bytes: element type, shape, data
  std::span<const int64_t> shape{};
  const void* data = nullptr;
  size_t bytes = 0;
};

// A feed matched to the model's inputs: model input i is tensors[slots[i]], values[i] or the bytes. Every
// check on the inputs (Error(InvalidInput)) is made here, before a plan is looked up.
class Matched {
 public:
  Matched(const Session::Impl& impl, const Feed& feed) : feed_(feed) {
    switch (feed.form) {
      case Feed::Form::Tensors: slots_ = rt::match_inputs(impl.inputs, feed.names, feed.tensors); break;
      case Feed::Form::Values: rt::match_value_inputs(impl.inputs, feed.names, feed.values, values_); break;
      case Feed::Form::Bytes: match_bytes(impl); break;
    }
  }
  size_t size() const {
    return feed_.form == Feed::Form::Tensors ? slots_.size() : feed_.form == Feed::Form::Values ? values_.size() : 1;
  }
  rt::InputSignature signature(size_t i) const {
    switch (feed_.form) {
      case Feed::Form::Tensors: return rt::signature_of(feed_.tensors[slots_[i]]);
      case Feed::Form::Values: return rt::signature_of(values_[i]);
      case Feed::Form::Bytes: break;
    }
    return {feed_.dtype, shape_};
  }
  void set(rt::RunState& state, const rt::ExecutionPlan& plan, size_t i) const {
    switch (feed_.form) {
      case Feed::Form::Tensors: return state.set_input(plan, i, feed_.tensors[slots_[i]]);
      case Feed::Form::Values: return state.set_input_value(plan, i, values_[i]);
      case Feed::Form::Bytes: return state.set_input_bytes(plan, i, feed_.data, feed_.bytes);
    }
  }

 private:
  void match_bytes(const Session::Impl& impl) {
    if (impl.inputs.size() != 1 || impl.outputs.size() != 1)
      invalid("the span form needs a model with one input and one output; this one has " +
              std::to_string(impl.inputs.size()) + " inputs and " + std::to_string(impl.outputs.size()) + " outputs");
    const ValueInfo& info = impl.inputs[0];
    if (!Shape::valid(feed_.shape)) {
      std::string s = "[";
      for (size_t i = 0; i < feed_.shape.size(); ++i) s += (i ? "," : "") + std::to_string(feed_.shape[i]);
      invalid("input '" + info.name + "' has an invalid shape " + s + "]");
    }
    shape_ = Shape(feed_.shape);
    rt::check_input(info, feed_.dtype, shape_);
    size_t need = static_cast<size_t>(shape_.numel()) * dtype_size(feed_.dtype);
    if (feed_.bytes != need)
      invalid("input '" + info.name + "' of shape " + shape_.to_string() + " needs " + std::to_string(need) +
              " bytes, got " + std::to_string(feed_.bytes));
    if (need != 0 && feed_.data == nullptr) invalid("input '" + info.name + "' has no data");
  }

  const Feed& feed_;
  std::vector<size_t> slots_;  // Tensors
  std::vector<Value> values_;  // Values: checked, optional inputs wrapped
  Shape shape_;                // Bytes
};

// The one run path of every public form. `out` says which outputs are wanted and takes them:
//   match()        model output indices in the caller's order, after its own checks (called after the inputs')
//   kTensors       the outputs are read as tensors: check(k, dtype, shape) vets output k before anything is
//                  written (before the run when the plan knows its type and shape, and after it), then
//                  write(k, tensor) copies it out; kNotTensor ends the message for a non-tensor output
//   take(k, value) otherwise: receives output k as a Value of any kind
// Reading happens while the run state is leased; the outputs must be copied (or detached) by then.
template <class Out>
void run_graph(const Session::Impl& impl, const Feed& feed, Out& out) {
  std::shared_ptr<rt::SessionCore> core = impl.core();
  RunTimer timer(core->profiler);
  const rt::CompiledGraph& graph = *core->graph;
  const Matched in(impl, feed);
  const std::span<const size_t> wanted = out.match();
  const auto output_value = [&](size_t k) { return graph.outputs()[wanted[k]]; };

  auto& key = key_scratch();
  key.resize(in.size());
  for (size_t i = 0; i < in.size(); ++i) key[i] = in.signature(i);
  std::shared_ptr<const rt::ExecutionPlan> plan = core->cache.get(core->graph, key);
  if constexpr (Out::kTensors) {
    for (size_t k = 0; k < wanted.size(); ++k) {
      const int v = output_value(k);
      if (plan->source(v) != rt::ValueSource::Dynamic) out.check(k, plan->dtype(v), plan->shape(v));
    }
  }

  rt::RunLease lease(*plan);
  for (size_t i = 0; i < in.size(); ++i) in.set(*lease.state, *plan, i);
  lease.state->execute(*plan, timer.scope());
  const rt::RunState& state = *lease.state;
  if constexpr (Out::kTensors) {
    // Every output is vetted before any is written, so a refused output leaves the caller's buffers as they were.
    for (size_t k = 0; k < wanted.size(); ++k) {
      const Tensor& r = state.tensor(output_value(k));
      if (r.empty()) invalid("output '" + impl.outputs[wanted[k]].name + "' is not a tensor" + Out::kNotTensor);
      out.check(k, r.dtype(), r.shape());
    }
    for (size_t k = 0; k < wanted.size(); ++k) out.write(k, state.tensor(output_value(k)));
  } else {
    for (size_t k = 0; k < wanted.size(); ++k) out.take(k, state.value_of(output_value(k)));
  }
}

constexpr size_t kBigOutputBytes = size_t{1} << 20;

// A new output of kBigOutputBytes or more, on huge pages (base/big_buffer.h): PP-OCRv4 rec's 1.5 MB output at
// a new width took 366 first writes to 4 KiB pages, about 4 ms on the virtual machines we measure. Mapped for
// itself and unmapped when its last tensor goes: from malloc, a freed block of 2 MiB raised glibc's mmap
// threshold, and the outputs after it stayed in a heap that grew while the Node addon's outputs waited for
// V8's collection (PP-OCRv4 rec in Node, 200 calls: 164-180 MB resident, mapped 130-146; one huge page fault
// of about 60 us per call instead). `bytes` of the storage is the whole mapping, which the addon reports to V8.
Storage big_output_storage(size_t bytes) {
  Storage st = rt::map_huge_storage(bytes);
  if (!st.data) {  // no huge pages here
    st.data = std::shared_ptr<std::byte>(allocate_big_buffer(bytes, true).release(), BigBufferFree());
    st.bytes = bytes;
  }
  return st;
}

// Session::run's outputs: outputs[k] receives output names[k], into the tensor given for it or a new one.
struct TensorOutputs {
  static constexpr bool kTensors = true;
  static constexpr const char* kNotTensor = " in this run; read it as a Value (Session::run_values)";
  const Session::Impl& impl;
  std::span<const std::string> names;
  std::span<Tensor> outputs;
  std::vector<size_t> wanted;

  std::span<const size_t> match() {
    if (names.empty()) invalid("no output names were given");
    wanted = rt::match_outputs(impl.outputs, names);
    if (outputs.size() != names.size())
      invalid(std::to_string(names.size()) + " output names were given for " + std::to_string(outputs.size()) +
              " output tensors");
    for (size_t k : wanted) {
      const ValueInfo& o = impl.outputs[k];
      if (o.kind == ValueKind::Sequence || o.kind == ValueKind::Optional)
        invalid("output '" + o.name + "' is " + (o.kind == ValueKind::Sequence ? "a sequence" : "an optional") +
                "; read it as a Value (Session::run_values)");
    }
    return wanted;
  }
  void check(size_t k, DType dtype, const Shape& shape) const {
    check_output_slot(impl.outputs[wanted[k]], outputs[k], dtype, shape);
  }
  void write(size_t k, const Tensor& r) const {
    if (outputs[k].empty() && r.nbytes() >= kBigOutputBytes) {
      Storage st = big_output_storage(r.nbytes());
      std::memcpy(st.data.get(), r.raw(), r.nbytes());
      outputs[k] = Tensor::view_of(std::move(st), 0, r.dtype(), r.shape());
    } else if (outputs[k].empty())
      outputs[k] = Tensor::copy_of(r.dtype(), r.shape(), r.raw(), r.nbytes());
    else if (r.nbytes())
      std::memmove(outputs[k].raw_mut(), r.raw(), r.nbytes());
  }
};

// run_values' outputs: detached copies (own storage) of the outputs named, all in model order when none are.
struct ValueOutputs {
  static constexpr bool kTensors = false;
  const Session::Impl& impl;
  std::span<const std::string> names;
  std::vector<size_t> wanted;
  std::vector<Value> values;

  std::span<const size_t> match() {
    wanted = rt::match_outputs(impl.outputs, names);
    values.reserve(wanted.size());
    return wanted;
  }
  void take(size_t k, const Value& r) {
    if (r.empty()) throw Error(ErrorKind::Internal, "output '" + impl.outputs[wanted[k]].name + "' was not produced");
    values.push_back(rt::detach_value(r));
  }
};

// run_into's output: the model's one output, copied into the caller's buffer of `bytes` bytes of `dtype`.
// Allocates nothing, so a warm span run allocates only the shape it returns.
struct BufferOutput {
  static constexpr bool kTensors = true;
  static constexpr const char* kNotTensor = "; read it with Session::run_values";
  const Session::Impl& impl;
  DType dtype;
  void* data;
  size_t bytes;
  size_t wanted = 0;
  Shape shape{};  // what was written

  std::span<const size_t> match() { return {&wanted, 1}; }
  void check(size_t, DType t, const Shape& s) const {
    const ValueInfo& info = impl.outputs[0];
    if (t != dtype)
      invalid("output '" + info.name + "' is " + std::string(dtype_short_name(t)) + ", the buffer holds " +
              std::string(dtype_short_name(dtype)));
    size_t need = static_cast<size_t>(s.numel()) * dtype_size(t);
    if (bytes < need)
      invalid("the output buffer holds " + std::to_string(bytes) + " bytes; output '" + info.name + "' " +
              s.to_string() + " needs " + std::to_string(need));
    if (need != 0 && data == nullptr) invalid("the output buffer is null");
  }
  void write(size_t, const Tensor& r) {
    if (r.nbytes()) std::memcpy(data, r.raw(), r.nbytes());
    shape = r.shape();
  }
};

}  // namespace

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
  Feed feed{.form = Feed::Form::Tensors, .names = input_names, .tensors = inputs};
  TensorOutputs out{*impl_, output_names, outputs, {}};
  run_graph(*impl_, feed, out);
}

std::vector<Value> Session::run_values(std::span<const NamedValue> inputs,
                                       std::span<const std::string> output_names) const {
  std::vector<std::string> names;
  std::vector<Value> given;
  names.reserve(inputs.size());
  given.reserve(inputs.size());
  for (const NamedValue& nv : inputs) {
    names.push_back(nv.name);
    given.push_back(nv.value);
  }
  Feed feed{.form = Feed::Form::Values, .names = names, .values = given};
  ValueOutputs out{*impl_, output_names, {}, {}};
  run_graph(*impl_, feed, out);
  return std::move(out.values);
}

std::vector<int64_t> Session::run_into(DType in_type, const void* input, size_t input_bytes,
                                       std::span<const int64_t> shape, DType out_type, void* output,
                                       size_t output_bytes) const {
  Feed feed{.form = Feed::Form::Bytes, .dtype = in_type, .shape = shape, .data = input, .bytes = input_bytes};
  BufferOutput out{*impl_, out_type, output, output_bytes};
  run_graph(*impl_, feed, out);
  return out.shape.to_vector();
}

}  // namespace onemodel
