// The recording of a trace (docs/model-building.md section 8): operations on traced eager tensors become nodes of a
// GraphBuilder, whose symbolic shapes are checked against the eager sizes at the example binding; constants are
// captured once per storage; Reshape and Expand shape operands that eager code wrote as plain sizes are rebuilt
// from Shape chains where an axis is symbolic.
#include <algorithm>

#include "build/trace_state.h"

namespace onemodel::build {
namespace {

std::string storage_key(const Tensor& t) {
  std::string k = std::to_string(reinterpret_cast<uintptr_t>(t.storage().data.get())) + "/" +
                  std::to_string(t.offset()) + "/" + std::to_string(static_cast<int>(t.dtype())) + "/" +
                  t.shape().to_string();
  for (int64_t s : t.strides()) k += "," + std::to_string(s);
  return k;
}

Tensor int64_tensor(const std::vector<int64_t>& v) {
  return Tensor::from_values(std::span<const int64_t>(v), Shape{static_cast<int64_t>(v.size())});
}

}  // namespace

std::shared_ptr<TraceState>& TraceState::active() {
  thread_local std::shared_ptr<TraceState> a;
  return a;
}

int64_t TraceState::example_of(DimId d) const {
  bool ok = true;
  int64_t v = builder.state()->dims.evaluate(d, example_, ok);
  return ok ? v : -1;
}

void TraceState::link(const EagerTensor& t, const Var& v) {
  t.cell()->tracer = weak_from_this();
  t.cell()->var = v.id();
  const ValueRec& r = builder.state()->values[static_cast<size_t>(v.id())];
  for (size_t a = 0; a < r.dims.size(); ++a)
    if (!builder.state()->dims.is_constant(r.dims[a])) sources_.try_emplace(r.dims[a], v.id(), static_cast<int>(a));
}

EagerTensor TraceState::input(const std::string& name, const Tensor& example,
                              const std::vector<std::string>& axis_names) {
  if (!recording) throw Error(ErrorKind::InvalidUsage, "Tracer::input after finish");
  if (example.empty()) throw Error(ErrorKind::InvalidUsage, "input '" + name + "': an empty example");
  if (axis_names.size() > static_cast<size_t>(example.rank()))
    throw Error(ErrorKind::InvalidUsage, "input '" + name + "': more axis names than axes");
  std::vector<DimArg> dims;
  for (int a = 0; a < example.rank(); ++a) {
    const std::string sym = static_cast<size_t>(a) < axis_names.size() ? axis_names[a] : "";
    const int64_t size = example.shape()[a];
    if (sym.empty()) {
      dims.emplace_back(size);
      continue;
    }
    std::string where = "input '" + name + "' axis " + std::to_string(a) + " (symbol " + sym + ")";
    if (size < 2)
      throw Error(ErrorKind::InvalidUsage, where + ": its example size " + std::to_string(size) + " is below 2");
    for (const auto& [other, s] : example_)
      if (other != sym && s == size)
        throw Error(ErrorKind::InvalidUsage, where + ": its example size equals symbol " + other + "'s");
    auto [it, fresh] = example_.try_emplace(sym, size);
    if (!fresh && it->second != size)
      throw Error(ErrorKind::InvalidUsage,
                  where + ": example size " + std::to_string(size) + ", earlier " + std::to_string(it->second));
    dims.emplace_back(sym);
  }
  Var v;
  try {
    v = builder.input(name, example.dtype(), dims);
  } catch (const Error& e) {
    throw Error(ErrorKind::InvalidUsage, e.message());
  }
  EagerTensor t(example);
  link(t, v);
  return t;
}

void TraceState::parameter(const std::string& name, const EagerTensor& weight) {
  if (!weight.defined()) throw Error(ErrorKind::InvalidUsage, "parameter '" + name + "': no tensor");
  for (const auto& [key, other] : parameters_)
    if (other.first == name) throw Error(ErrorKind::InvalidUsage, "parameter name '" + name + "' is used twice");
  parameters_[storage_key(weight.cell()->value)] = {name, weight.cell()};
}

Var TraceState::var_of(const EagerTensor& t) {
  if (!t.defined()) return Var();
  if (traces(*t.cell())) return builder.value(t.cell()->var);
  // Everything else is a constant, also a tensor of a finished trace (its values are the example run's).
  // A constant: captured once per storage, named if it is a parameter; its version is checked at finish.
  const std::string key = storage_key(t.cell()->value);
  if (auto it = constants_.find(key); it != constants_.end()) return builder.value(it->second);
  auto named = parameters_.find(key);
  Var c;
  try {
    c = builder.constant(t.cell()->value, named == parameters_.end() ? "" : named->second.first);
  } catch (const Error& e) {
    throw Error(ErrorKind::InvalidUsage, e.message());
  }
  constants_[key] = c.id();
  captured_.emplace_back(t.cell(), t.cell()->version);
  return c;
}

// A shape operand for `dims`: constants, one -1 for a single symbolic extent (Reshape), else a Shape chain: each
// symbolic extent as the product of its atoms, each atom read from the Shape of a traced value that has it.
Var TraceState::shape_operand(const std::vector<DimId>& dims, bool allow_minus_one) {
  DimTable& d = builder.state()->dims;
  std::vector<int64_t> fixed;
  int symbolic = 0;
  for (DimId e : dims) {
    symbolic += !d.is_constant(e);
    fixed.push_back(d.is_constant(e) ? d.constant_value(e) : -1);
  }
  if (symbolic == 0 || (symbolic == 1 && allow_minus_one)) return builder.constant(int64_tensor(fixed));
  std::vector<Var> pieces;
  for (DimId e : dims) {
    if (d.is_constant(e)) {
      pieces.push_back(builder.constant(int64_tensor({d.constant_value(e)})));
      continue;
    }
    int64_t coef = 1;
    std::vector<DimId> atoms;
    d.factors(e, coef, atoms);
    Var piece;
    for (DimId a : atoms) {
      auto src = sources_.find(a);
      if (src == sources_.end())
        throw Error(ErrorKind::SymbolicShape, "the extent " + d.to_string(a) + " is no axis of a traced value");
      Var axis = builder.value(src->second.first).shape().slice({src->second.second}, {src->second.second + 1}, {0});
      piece = piece.defined() ? piece.mul(axis) : axis;
    }
    if (coef != 1) piece = piece.mul(builder.constant(int64_tensor({coef})));
    pieces.push_back(piece);
  }
  return builder.concat(pieces, 0);
}

// The extents of a Reshape of x to `target` (the eager result's sizes) as expressions (tracing notes section 4):
// both shapes split into groups of equal element count; in each group an output extent takes an atom of the inputs
// whose example size it is, else a constant that divides the group's constant factor, else every atom left or one
// atom times such a constant; the last extent of a group takes the rest.
std::vector<DimId> TraceState::reshape_dims(const Var& x, const Shape& target) {
  DimTable& d = builder.state()->dims;
  const std::vector<DimId>& in = builder.state()->values[static_cast<size_t>(x.id())].dims;
  std::vector<DimId> out;
  size_t i = 0, j = 0;
  const size_t n = in.size(), m = static_cast<size_t>(target.rank());
  while (i < n || j < m) {
    std::vector<size_t> gi, gj;
    int64_t pin = 1, pout = 1;
    do {
      if ((pin <= pout && i < n) || j == m) {
        pin *= example_of(in[i]);
        gi.push_back(i++);
      } else {
        pout *= target[static_cast<int>(j)];
        gj.push_back(j++);
      }
    } while ((pin != pout || gi.empty() || gj.empty()) && (i < n || j < m));
    if (pin != pout) throw Error(ErrorKind::SymbolicShape, "Reshape: the element counts do not match");
    int64_t coef = 1;
    std::vector<DimId> atoms;
    for (size_t a : gi) d.factors(in[a], coef, atoms);
    for (size_t k = 0; k < gj.size(); ++k) {
      const int64_t v = target[static_cast<int>(gj[k])];
      if (k + 1 == gj.size()) {  // the last extent of the group takes what is left
        DimId rest = d.constant(coef);
        for (DimId a : atoms) rest = d.mul(rest, a);
        if (example_of(rest) != v) throw Error(ErrorKind::SymbolicShape, "Reshape: an extent mixes symbolic sizes");
        out.push_back(rest);
        break;
      }
      // An atom of that size; a constant; every atom left times a constant; one atom times a constant.
      auto hit = std::find_if(atoms.begin(), atoms.end(), [&](DimId a) { return example_of(a) == v; });
      int64_t all = 1;
      for (DimId a : atoms) all *= example_of(a);
      auto part = std::find_if(atoms.begin(), atoms.end(), [&](DimId a) {
        const int64_t e = example_of(a);
        return e > 0 && v % e == 0 && coef % (v / e) == 0;
      });
      if (hit != atoms.end()) {
        out.push_back(*hit);
        atoms.erase(hit);
      } else if (v != 0 && coef % v == 0) {
        out.push_back(d.constant(v));
        coef /= v;
      } else if (!atoms.empty() && all > 0 && v % all == 0 && coef % (v / all) == 0) {
        DimId e = d.constant(v / all);
        for (DimId a : atoms) e = d.mul(e, a);
        out.push_back(e);
        coef /= v / all;
        atoms.clear();
      } else if (part != atoms.end()) {
        const int64_t f = v / example_of(*part);
        out.push_back(d.mul(*part, d.constant(f)));
        coef /= f;
        atoms.erase(part);
      } else {
        throw Error(ErrorKind::SymbolicShape,
                    "Reshape: extent " + std::to_string(v) + " splits a symbolic size ambiguously");
      }
    }
  }
  return out;
}

// Expand: an axis the input already has keeps it (1 in the operand); a new extent is a constant, or a symbol of the
// trace whose example size it is.
std::vector<DimId> TraceState::expand_dims(const Var& x, const Shape& target) {
  DimTable& d = builder.state()->dims;
  const std::vector<DimId>& in = builder.state()->values[static_cast<size_t>(x.id())].dims;
  std::vector<DimId> out;
  const int offset = target.rank() - static_cast<int>(in.size());
  for (int k = 0; k < target.rank(); ++k) {
    const int64_t v = target[k];
    const int a = k - offset;
    if (v == 1 || (a >= 0 && example_of(in[static_cast<size_t>(a)]) == v)) {
      out.push_back(d.constant(1));
      continue;
    }
    DimId e = d.constant(v);
    for (const auto& [sym, size] : example_)
      if (size == v) e = d.symbol(sym);
    out.push_back(e);
  }
  return out;
}

void TraceState::check_sizes(std::string_view op, const std::vector<Var>& out,
                             const std::vector<EagerTensor>& results) const {
  const DimTable& d = builder.state()->dims;
  for (size_t o = 0; o < out.size(); ++o) {
    const std::vector<DimId>& dims = builder.state()->values[static_cast<size_t>(out[o].id())].dims;
    const Shape& eager = results[o].sizes();
    bool same = static_cast<int>(dims.size()) == eager.rank();
    for (size_t a = 0; same && a < dims.size(); ++a) same = example_of(dims[a]) == eager[static_cast<int>(a)];
    if (!same) {
      std::string stated = "[";
      for (size_t a = 0; a < dims.size(); ++a) stated += (a ? "," : "") + d.to_string(dims[a]);
      throw Error(ErrorKind::SymbolicShape, std::string(op) + ": the traced graph states " + stated + "]" +
                                                " where the eager run gave " + eager.to_string() +
                                                ": a symbolic axis reaches a fixed size");
    }
  }
}

void TraceState::record(std::string_view op, const std::vector<EagerTensor>& inputs, const std::vector<Attr>& attrs,
                        const std::vector<EagerTensor>& results) {
  const std::string op_type(op);
  std::vector<Var> in;
  for (const EagerTensor& t : inputs) in.push_back(var_of(t));
  const Var& x = in[0];
  const bool x_traced = inputs[0].defined() && traces(*inputs[0].cell());
  // Aliases write no node: a Reshape to the same shape, a Slice that keeps every element.
  if ((op_type == "Reshape" || op_type == "Slice") && x_traced && results[0].sizes() == inputs[0].sizes()) {
    bool full = true;
    if (op_type == "Slice" && inputs.size() > 4 && inputs[4].defined())
      for (int64_t s : inputs[4].cell()->value.data<int64_t>()) full &= s == 1;
    if (full) {
      link(results[0], x);
      return;
    }
  }
  bool symbolic_x = false;
  if (x_traced)
    for (DimId e : builder.state()->values[static_cast<size_t>(x.id())].dims)
      symbolic_x |= !builder.state()->dims.is_constant(e);
  const bool constant_operand = inputs.size() > 1 && inputs[1].defined() && !traces(*inputs[1].cell());
  if (symbolic_x && constant_operand && op_type == "Reshape")
    in[1] = shape_operand(reshape_dims(x, results[0].sizes()), true);
  if (symbolic_x && constant_operand && op_type == "Expand")
    in[1] = shape_operand(expand_dims(x, results[0].sizes()), false);
  if (symbolic_x && op_type == "Resize")
    throw Error(ErrorKind::SymbolicShape, "Resize of " + builder.state()->shape_string(x.id()) +
                                              ": explicit sizes cannot follow a symbolic axis");
  std::vector<Var> out;
  try {
    out = builder.op(op, in, attrs, static_cast<int>(results.size()));
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::GraphBuild) throw Error(ErrorKind::SymbolicShape, e.message());
    throw;
  }
  check_sizes(op, out, results);
  for (size_t o = 0; o < out.size(); ++o) link(results[o], out[o]);
}

TracedModel TraceState::finish(const std::vector<std::pair<std::string, EagerTensor>>& outputs) {
  if (!recording) throw Error(ErrorKind::InvalidUsage, "Tracer::finish called twice");
  Outputs named;
  for (const auto& [name, t] : outputs) {
    if (!t.defined() || !traces(*t.cell()))
      throw Error(ErrorKind::InvalidUsage, "output '" + name + "' does not depend on a traced input");
    named.emplace_back(name, builder.value(t.cell()->var));
  }
  for (const auto& [cell, version] : captured_)
    if (cell->version != version)
      throw Error(ErrorKind::InPlaceMutation,
                  "a constant " + cell->value.shape().to_string() + " the trace captured was changed during the trace");
  TracedModel m;
  try {
    m.onnx = builder.to_onnx(named);
  } catch (const Error& e) {
    throw Error(e.kind() == ErrorKind::InvalidArgument ? ErrorKind::InvalidUsage : e.kind(), e.message());
  }
  recording = false;
  if (active().get() == this) active().reset();
  return m;
}

}  // namespace onemodel::build

namespace onemodel {

Tracer Tracer::begin() {
  auto& a = build::TraceState::active();
  if (a && a->recording) throw Error(ErrorKind::InvalidUsage, "a trace records on this thread already");
  a = std::make_shared<build::TraceState>();
  return Tracer(a);
}

Tracer::Tracer(Tracer&&) noexcept = default;
Tracer& Tracer::operator=(Tracer&&) noexcept = default;

Tracer::~Tracer() {
  if (!state_) return;
  state_->recording = false;
  if (build::TraceState::active() == state_) build::TraceState::active().reset();
}

EagerTensor Tracer::input(const std::string& name, const Tensor& example, const std::vector<std::string>& axis_names) {
  return state_->input(name, example, axis_names);
}
void Tracer::parameter(const std::string& name, const EagerTensor& weight) { state_->parameter(name, weight); }
TracedModel Tracer::finish(const std::vector<std::pair<std::string, EagerTensor>>& outputs) {
  return state_->finish(outputs);
}

}  // namespace onemodel
