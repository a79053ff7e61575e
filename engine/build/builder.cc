// GraphBuilder and Var (docs/model-building.md sections 1-2): leaves, and the operator methods, each one node of
// the operator table written the way ONNX (the builder's opset, 20 by default) spells it.
#include <cstring>

#include "build/state.h"

namespace onemodel {
namespace build {

int State::add_value(ValueRec v) {
  values.push_back(std::move(v));
  return static_cast<int>(values.size()) - 1;
}

void State::check_new_name(const std::string& name, const char* what) {
  if (name.empty()) throw Error(ErrorKind::InvalidArgument, std::string(what) + " needs a name");
  if (!names_.insert(name).second)
    throw Error(ErrorKind::InvalidArgument, std::string(what) + " name '" + name + "' is used twice");
}

std::string State::shape_string(int value) const {
  std::string s = "[";
  for (size_t a = 0; a < values[value].dims.size(); ++a) s += (a ? "," : "") + dims.to_string(values[value].dims[a]);
  return s + "]";
}

State& state_of(const Var& v) {
  if (!v.defined()) throw Error(ErrorKind::InvalidArgument, "an undefined Var was used as an operand");
  return *v.state();
}

void check_same_builder(const State& s, const Var& v) {
  if (v.defined() && v.state().get() != &s)
    throw Error(ErrorKind::InvalidArgument, "a Var of another GraphBuilder was used as an operand");
}

ir::Attribute to_ir(const Attr& a) {
  ir::Attribute r;
  r.name = a.name;
  switch (a.type) {
    case Attr::Type::Int: r.type = ir::AttrType::Int, r.i = a.i; break;
    case Attr::Type::Float: r.type = ir::AttrType::Float, r.f = a.f; break;
    case Attr::Type::String: r.type = ir::AttrType::String, r.s = a.s; break;
    case Attr::Type::Ints: r.type = ir::AttrType::Ints, r.ints = a.ints; break;
    case Attr::Type::Floats: r.type = ir::AttrType::Floats, r.floats = a.floats; break;
    case Attr::Type::Tensor: {
      r.type = ir::AttrType::Tensor;
      auto t = std::make_shared<ir::TensorValue>();
      t->dtype = a.t.dtype();
      t->dims = a.t.shape().to_vector();
      t->data = a.t.contiguous();
      r.t = std::move(t);
      break;
    }
  }
  return r;
}

namespace {

Tensor int64s(const std::vector<int64_t>& v) {
  return Tensor::from_values(std::span<const int64_t>(v), Shape{static_cast<int64_t>(v.size())});
}

}  // namespace
}  // namespace build

using build::State;

GraphBuilder::GraphBuilder(int64_t opset) : state_(std::make_shared<State>(opset)) {
  if (opset < 20)
    throw Error(ErrorKind::InvalidArgument, "GraphBuilder: opset " + std::to_string(opset) + " is below 20");
}

Var GraphBuilder::input(const std::string& name, DType dtype, const std::vector<DimArg>& dims) {
  State& s = *state_;
  if (!dtype_is_stored(dtype)) throw Error(ErrorKind::InvalidArgument, "input '" + name + "': unsupported type");
  if (dims.size() > static_cast<size_t>(kMaxRank))
    throw Error(ErrorKind::InvalidArgument, "input '" + name + "': rank above " + std::to_string(kMaxRank));
  build::ValueRec r;
  r.origin = build::ValueOrigin::Input;
  r.dtype = dtype;
  r.name = name;
  for (const DimArg& d : dims) {
    if (d.symbol.empty() && d.value < 0)
      throw Error(ErrorKind::InvalidArgument, "input '" + name + "': negative extent " + std::to_string(d.value));
    r.dims.push_back(d.symbol.empty() ? s.dims.constant(d.value) : s.dims.symbol(d.symbol));
    r.symbolic |= !d.symbol.empty();
  }
  s.check_new_name(name, "input");
  return Var(state_, s.add_value(std::move(r)));
}

Var GraphBuilder::constant(const Tensor& value, const std::string& name) {
  State& s = *state_;
  if (value.empty()) throw Error(ErrorKind::InvalidArgument, "constant: empty tensor");
  build::ValueRec r;
  r.origin = build::ValueOrigin::Constant;
  r.dtype = value.dtype();
  r.name = name;
  r.data = value.contiguous();
  for (int64_t e : value.shape().dims()) r.dims.push_back(s.dims.constant(e));
  if (!name.empty()) s.check_new_name(name, "constant");
  return Var(state_, s.add_value(std::move(r)));
}

Var GraphBuilder::leaf(const std::string& name, const Tensor& value, const std::vector<std::string>& axis_names) {
  State& s = *state_;
  if (value.empty()) throw Error(ErrorKind::InvalidArgument, "leaf '" + name + "': empty tensor");
  if (axis_names.size() > static_cast<size_t>(value.rank()))
    throw Error(ErrorKind::InvalidArgument, "leaf '" + name + "': more axis names than axes");
  build::ValueRec r;
  r.origin = build::ValueOrigin::Leaf;
  r.dtype = value.dtype();
  r.name = name;
  for (int a = 0; a < value.rank(); ++a) {
    bool sym = static_cast<size_t>(a) < axis_names.size() && !axis_names[a].empty();
    r.dims.push_back(sym ? s.dims.symbol(axis_names[a]) : s.dims.constant(value.shape()[a]));
    r.symbolic |= sym;
  }
  s.check_new_name(name, "leaf");
  r.data = value.contiguous();  // its default; shape inference never reads a leaf's data (build/infer.cc)
  return Var(state_, s.add_value(std::move(r)));
}

std::vector<Var> GraphBuilder::op(std::string_view op_type, const std::vector<Var>& inputs,
                                  const std::vector<Attr>& attrs, int num_outputs) {
  State& s = *state_;
  if (num_outputs < 1) throw Error(ErrorKind::InvalidArgument, "op: num_outputs must be at least 1");
  ir::Node n;
  n.op_type = std::string(op_type);
  for (const Var& v : inputs) {
    build::check_same_builder(s, v);
    n.inputs.push_back(v.defined() ? v.id() : ir::kNoValue);
  }
  for (const Attr& a : attrs) n.attributes.push_back(build::to_ir(a));
  std::vector<Var> out;
  for (int id : s.add_node(std::move(n), num_outputs)) out.emplace_back(state_, id);
  return out;
}

Var GraphBuilder::concat(const std::vector<Var>& values, int64_t axis) {
  return op("Concat", values, {{"axis", axis}})[0];
}

// ---- Var ----

DType Var::dtype() const { return build::state_of(*this).values[id_].dtype; }
int Var::rank() const { return static_cast<int>(build::state_of(*this).values[id_].dims.size()); }
std::string Var::dim(int axis) const {
  const State& s = build::state_of(*this);
  if (axis < 0 || axis >= rank()) throw Error(ErrorKind::InvalidArgument, "Var::dim: axis out of range");
  return s.dims.to_string(s.values[id_].dims[axis]);
}
std::optional<int64_t> Var::dim_value(int axis) const {
  const State& s = build::state_of(*this);
  if (axis < 0 || axis >= rank()) throw Error(ErrorKind::InvalidArgument, "Var::dim_value: axis out of range");
  build::DimId d = s.values[id_].dims[axis];
  if (!s.dims.is_constant(d)) return std::nullopt;
  return s.dims.constant_value(d);
}
std::string Var::shape_string() const { return build::state_of(*this).shape_string(id_); }

// The builder a Var belongs to, as a handle sharing its state (GraphBuilder's only member).
struct BuilderAccess {
  static GraphBuilder of(const Var& v) {
    build::state_of(v);
    return GraphBuilder(v.state());
  }
};

Var Var::apply(const Var& self, std::string_view op, std::vector<Var> inputs, std::vector<Attr> attrs) {
  return BuilderAccess::of(self).op(op, inputs, attrs)[0];
}
Var Var::int64s(const Var& self, const std::vector<int64_t>& values) {
  return BuilderAccess::of(self).constant(build::int64s(values));
}

}  // namespace onemodel
