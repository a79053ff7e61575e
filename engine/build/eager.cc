// EagerTensor (docs/model-building.md section 8): every operation runs now, on the operator's own kernel (its
// infer, then build/eval.cc), so eager values are the engine's in the mode asked for; while a trace records, an
// operation on a traced tensor is also written (build/trace.cc).
#include <cstring>

#include "build/eval.h"
#include "build/trace_state.h"

namespace onemodel {
namespace {

thread_local Mode g_mode = Mode::Fast;
constexpr int64_t kEagerOpset = 20;

std::string shapes_of(const std::vector<EagerTensor>& in) {
  std::string s;
  for (const EagerTensor& t : in) s += (s.empty() ? "" : ", ") + (t.defined() ? t.sizes().to_string() : "(none)");
  return s;
}

// `data_dependent`: the output shapes depend on the values (NonZero, ...), which a trace cannot record.
std::vector<Tensor> compute(std::string_view op, const std::vector<EagerTensor>& inputs, const std::vector<Attr>& attrs,
                            int num_outputs, bool& data_dependent) {
  const bool exact = g_mode == Mode::Exact;
  ir::Node node;
  node.op_type = std::string(op);
  node.name = node.op_type;
  node.opset = kEagerOpset;
  for (size_t i = 0; i < inputs.size(); ++i)
    node.inputs.push_back(inputs[i].defined() ? static_cast<int>(i) : ir::kNoValue);
  for (int o = 0; o < num_outputs; ++o) node.outputs.push_back(o);
  for (const Attr& a : attrs) node.attributes.push_back(build::to_ir(a));
  auto fail = [&](ErrorKind kind, const std::string& why) {
    throw Error(kind, node.op_type + " of " + shapes_of(inputs) + ": " + why);
  };
  const rt::OpDef* def = rt::find_op("", node.op_type, kEagerOpset);
  if (!def) fail(ErrorKind::UnsupportedOperator, "no such operator at opset 20");
  std::vector<rt::InputMeta> metas(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) continue;
    const Tensor& v = inputs[i].cell()->value;
    metas[i] = {true, v.dtype(), v.shape(), &v, true};
  }
  try {
    std::unique_ptr<rt::Kernel> kernel = def->factory(rt::NodeInfo(node, exact));
    if (exact && !kernel->flags().exact) fail(ErrorKind::ExactModeUnavailable, "no exact kernel");
    if (kernel->flags().on_values)
      fail(ErrorKind::UnsupportedOperation, "operators over sequences and optionals have no eager form");
    data_dependent = kernel->flags().outputs_data_dependent;
    std::vector<rt::OutputMeta> outs(static_cast<size_t>(num_outputs));
    if (!kernel->flags().outputs_data_dependent && !kernel->flags().on_values) {
      rt::NodeInfo info(node, exact);
      rt::InferContext ctx{info, metas, outs, exact};
      kernel->infer(ctx);
      if (ctx.needs_runtime_values) fail(ErrorKind::Internal, "infer asked for values it was given");
    }
    std::vector<Tensor> results = build::evaluate_node(*kernel, node, metas, outs, exact, kern::session_isa());
    // A result that shares an input's storage (a view, a stated constant) is copied: eager tensors never alias, so
    // assign() to one cannot change another unseen (and the trace's version checks see every change).
    for (Tensor& r : results)
      for (const EagerTensor& in : inputs)
        if (in.defined() && r.storage().data == in.cell()->value.storage().data) {
          r = r.clone();
          break;
        }
    return results;
  } catch (const Error& e) {
    if (e.message().rfind(node.op_type + " of ", 0) == 0) throw;
    fail(e.kind(), e.message());
  }
  return {};
}

EagerTensor wrap(Tensor t) {
  auto cell = std::make_shared<build::EagerCell>();
  cell->value = std::move(t);
  return EagerTensor(std::move(cell));
}

}  // namespace

void set_eager_mode(Mode mode) { g_mode = mode; }
Mode eager_mode() { return g_mode; }

EagerTensor::EagerTensor(const Tensor& value) : cell_(std::make_shared<build::EagerCell>()) {
  if (value.empty()) throw Error(ErrorKind::InvalidArgument, "EagerTensor: an empty tensor");
  cell_->value = value.clone();
}

DType EagerTensor::dtype() const {
  sizes();
  return cell_->value.dtype();
}

const Shape& EagerTensor::sizes() const {
  if (!cell_) throw Error(ErrorKind::InvalidArgument, "EagerTensor: no value");
  return cell_->value.shape();
}

Tensor EagerTensor::value() const {
  sizes();
  if (auto tr = build::TraceState::active(); tr && tr->traces(*cell_))
    throw Error(ErrorKind::DataDependent, "the values of a traced tensor " + sizes().to_string() +
                                              " were read while tracing: the graph cannot depend on them");
  return cell_->value;
}

void EagerTensor::assign(const Tensor& values) {
  sizes();
  if (auto tr = build::TraceState::active(); tr && tr->traces(*cell_))
    throw Error(ErrorKind::InPlaceMutation, "a traced tensor " + sizes().to_string() + " was changed in place");
  if (values.dtype() != cell_->value.dtype() || values.shape() != cell_->value.shape())
    throw Error(ErrorKind::InvalidArgument, "assign: the values must have this tensor's type and shape");
  Tensor c = values.contiguous();
  std::memcpy(cell_->value.raw_mut(), c.raw(), c.nbytes());
  ++cell_->version;
}

EagerTensor EagerTensor::clone() const {
  sizes();
  auto cell = std::make_shared<build::EagerCell>(*cell_);
  cell->value = cell_->value.clone();
  cell->version = 0;
  return EagerTensor(std::move(cell));
}

std::vector<EagerTensor> EagerTensor::op(std::string_view op_type, const std::vector<EagerTensor>& inputs,
                                         const std::vector<Attr>& attrs, int num_outputs) {
  if (num_outputs < 1) throw Error(ErrorKind::InvalidArgument, "op: num_outputs must be at least 1");
  std::vector<EagerTensor> results;
  bool data_dependent = false;
  for (Tensor& t : compute(op_type, inputs, attrs, num_outputs, data_dependent)) results.push_back(wrap(std::move(t)));
  if (auto tr = build::TraceState::active(); tr) {
    bool traced = false;
    for (const EagerTensor& t : inputs) traced |= t.defined() && tr->traces(*t.cell());
    if (traced && data_dependent)
      throw Error(ErrorKind::DataDependent,
                  std::string(op_type) + " of " + shapes_of(inputs) + ": its output shape depends on traced values");
    if (traced) tr->record(op_type, inputs, attrs, results);
  }
  return results;
}

EagerTensor EagerTensor::apply(const EagerTensor& self, std::string_view op, std::vector<EagerTensor> inputs,
                               std::vector<Attr> attrs) {
  return EagerTensor::op(op, inputs, attrs)[0];
}

EagerTensor EagerTensor::int64s(const EagerTensor&, const std::vector<int64_t>& values) {
  return wrap(Tensor::from_values(std::span<const int64_t>(values), Shape{static_cast<int64_t>(values.size())}));
}

}  // namespace onemodel
