// Types and shapes of built nodes (docs/model-building.md section 3). The operator's own `infer` (the runtime's
// shape logic) runs on concrete shapes: once when every input dimension is fixed, and otherwise at two probe
// bindings of the symbols (dim_expr.h). Each output axis then gets the expression that gives the inferred extent at
// both bindings: an operator rule where one is needed (Concat's sum, a convolution's or pool's spatial formula,
// Reshape's -1), else an input axis, a constant, an input axis plus or times a constant, or a product of input
// axes. An axis nothing explains is refused (GraphBuild), never guessed.
#include <algorithm>
#include <functional>

#include "build/eval.h"
#include "build/state.h"

namespace onemodel::build {
namespace {

[[noreturn]] void build_error(const State& s, const ir::Node& node, const std::string& why,
                              ErrorKind kind = ErrorKind::GraphBuild) {
  std::string shapes;
  for (int v : node.inputs)
    shapes += (shapes.empty() ? "" : ", ") + (v < 0 ? std::string("(none)") : s.shape_string(v));
  throw Error(kind, node.op_type + " of " + shapes + ": " + why);  // what() adds the kind: "GraphBuild: ..."
}

int64_t axis_of(const ir::Node& n, std::string_view attr, int64_t dflt, int64_t rank) {
  const ir::Attribute* a = n.find_attribute(attr);
  int64_t axis = a ? a->i : dflt;
  return axis < 0 ? axis + rank : axis;
}

int64_t at_or(const std::vector<int64_t>& v, size_t i, int64_t dflt) { return i < v.size() ? v[i] : dflt; }

std::vector<int64_t> ints_of(const ir::Node& n, std::string_view attr) {
  const ir::Attribute* a = n.find_attribute(attr);
  return a ? a->ints : std::vector<int64_t>{};
}

// Spatial axis j of a Conv, ConvTranspose or pool output as an expression of the input's axis (ONNX's formulas).
DimId window_rule(State& s, const ir::Node& n, size_t j, size_t spatial) {
  DimTable& d = s.dims;
  const ValueRec& x = s.values[n.inputs[0]];
  std::vector<int64_t> ks = ints_of(n, "kernel_shape");
  int64_t k = at_or(ks, j, -1);
  if (k < 0 && n.inputs.size() > 1 && n.inputs[1] >= 0) {
    const ValueRec& w = s.values[n.inputs[1]];
    if (w.dims.size() == spatial + 2 && d.is_constant(w.dims[2 + j])) k = d.constant_value(w.dims[2 + j]);
  }
  if (k < 0) return -1;
  int64_t stride = at_or(ints_of(n, "strides"), j, 1), dil = at_or(ints_of(n, "dilations"), j, 1);
  std::vector<int64_t> pads = ints_of(n, "pads");
  int64_t pad = at_or(pads, j, 0) + at_or(pads, j + spatial, 0), ek = (k - 1) * dil + 1;
  const ir::Attribute* ap = n.find_attribute("auto_pad");
  std::string auto_pad = ap ? ap->s : "NOTSET";
  DimId in = x.dims[2 + j], st = d.constant(stride);
  if (n.op_type == "ConvTranspose") {
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") return d.mul(in, st);
    int64_t extra = at_or(ints_of(n, "output_padding"), j, 0) + ek - (auto_pad == "VALID" ? 0 : pad);
    return d.add(d.mul(d.sub(in, d.constant(1)), st), d.constant(extra));
  }
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") return d.div(d.add(in, d.constant(stride - 1)), st);
  if (auto_pad == "VALID") pad = 0;
  const ir::Attribute* cm = n.find_attribute("ceil_mode");
  int64_t round_up = (cm && cm->i != 0) ? stride - 1 : 0;
  return d.add(d.div(d.add(in, d.constant(pad - ek + round_up)), st), d.constant(1));
}

// The operator rule for output `o`'s axis, or -1.
DimId rule(State& s, const ir::Node& n, size_t o, size_t axis, size_t rank) {
  if (o != 0) return -1;
  if (n.op_type == "Concat") {
    if (static_cast<int64_t>(axis) != axis_of(n, "axis", 0, static_cast<int64_t>(rank))) return -1;
    DimId sum = s.dims.constant(0);
    for (int v : n.inputs) sum = s.dims.add(sum, s.values[v].dims[axis]);
    return sum;
  }
  bool window =
      n.op_type == "Conv" || n.op_type == "ConvTranspose" || n.op_type == "MaxPool" || n.op_type == "AveragePool";
  if (window && axis >= 2) return window_rule(s, n, axis - 2, rank - 2);
  return -1;
}

bool matches(const DimTable& d, DimId e, const int64_t (&v)[DimTable::kProbes]) {
  for (int k = 0; k < DimTable::kProbes; ++k)
    if (d.probe(e, k) != v[k]) return false;
  return true;
}

// The generic candidates: input axes, a constant, an input axis plus or times or divided by a constant, products
// of consecutive axes of the first input.
// The axes an output axis may come from: every input's axes, and the extents behind inputs computed from Shape.
std::vector<DimId> candidates(const State& s, const ir::Node& n) {
  std::vector<DimId> c;
  for (int in : n.inputs) {
    if (in < 0) continue;
    c.insert(c.end(), s.values[in].dims.begin(), s.values[in].dims.end());
    c.insert(c.end(), s.values[in].shape_sources.begin(), s.values[in].shape_sources.end());
  }
  return c;
}

DimId generic(State& s, const ir::Node& n, const int64_t (&v)[DimTable::kProbes]) {
  DimTable& d = s.dims;
  const std::vector<DimId> cands = candidates(s, n);
  for (DimId e : cands)
    if (matches(d, e, v)) return e;
  if (v[0] == v[1]) return d.constant(v[0]);
  {
    for (DimId e : cands) {
      if (d.is_constant(e)) continue;
      int64_t p0 = d.probe(e, 0), p1 = d.probe(e, 1);
      if (v[0] - p0 == v[1] - p1) return d.add(e, d.constant(v[0] - p0));
      if (p0 != 0 && v[0] % p0 == 0 && v[0] / p0 == v[1] / p1 && v[1] % p1 == 0) return d.mul(e, d.constant(v[0] / p0));
      if (v[0] != 0 && p0 % v[0] == 0 && v[1] != 0 && p1 % v[1] == 0 && p0 / v[0] == p1 / v[1])
        return d.div(e, d.constant(p0 / v[0]));
    }
  }
  if (!n.inputs.empty() && n.inputs[0] >= 0) {
    const std::vector<DimId>& x = s.values[n.inputs[0]].dims;
    for (size_t i = 0; i < x.size(); ++i) {
      DimId p = x[i];
      for (size_t j = i + 1; j < x.size(); ++j) {
        p = d.mul(p, x[j]);
        if (matches(d, p, v)) return p;
      }
    }
  }
  return -1;
}

}  // namespace

std::vector<rt::OutputMeta> State::infer_at(const ir::Node& node, const rt::Kernel& kernel, int num_outputs,
                                            ErrorKind kind, const std::function<int64_t(DimId)>& extent,
                                            const std::function<const Tensor*(int)>& known) const {
  std::vector<rt::InputMeta> metas(node.inputs.size());
  std::vector<rt::OutputMeta> outs(static_cast<size_t>(num_outputs));
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    int v = node.inputs[i];
    if (v < 0) continue;
    const ValueRec& r = values[v];
    int64_t ext[kMaxRank];
    for (size_t a = 0; a < r.dims.size(); ++a) ext[a] = extent(r.dims[a]);
    metas[i].present = true;
    metas[i].dtype = r.dtype;
    try {
      metas[i].shape = Shape(std::span<const int64_t>(ext, r.dims.size()));
    } catch (const Error& e) {
      build_error(*this, node, "the sizes give an invalid shape (" + e.message() + ")", kind);
    }
    if (const Tensor* t = known(v)) {
      metas[i].value = t;
      metas[i].constant = true;
    }
  }
  rt::NodeInfo info(node, false);
  rt::InferContext ctx{info, metas, outs, false};
  try {
    kernel.infer(ctx);
  } catch (const Error& e) {
    build_error(*this, node, e.message(), kind);
  }
  if (ctx.needs_runtime_values)
    build_error(*this, node, "a shape or index input must be a constant (the builder states every shape)", kind);
  return outs;
}

// A node of a Shape chain (Gather, Concat, Mul ... of a Shape's output) runs now when every input is known, so its
// value, like the Shape's, is known at this binding and a Reshape or Expand fed by it has a constant shape operand
// there (as plan-time constant evaluation folds it in the runtime). Only small results: shape vectors.
void State::fold_shape_chain(const ir::Node& node, const rt::Kernel& kernel,
                             const std::function<const Tensor*(int)>& known, std::vector<rt::OutputMeta>& outs) const {
  bool from_shape = false;
  std::vector<rt::InputMeta> metas(node.inputs.size());
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    int v = node.inputs[i];
    if (v < 0) continue;
    const Tensor* t = known(v);
    if (!t) return;
    from_shape |= values[v].origin == ValueOrigin::Node;
    metas[i] = {true, t->dtype(), t->shape(), t, true};
  }
  bool all = true;
  for (const rt::OutputMeta& o : outs) {
    all &= !o.constant.empty();
    if (o.dtype == DType::Undefined || o.shape.numel() * static_cast<int64_t>(dtype_size(o.dtype)) > 4096) return;
  }
  if (!from_shape || all || kernel.flags().outputs_data_dependent || kernel.flags().on_values) return;
  std::vector<Tensor> r;
  try {
    r = evaluate_node(kernel, node, metas, outs, false, kern::Isa::Scalar);
  } catch (const Error& e) {
    build_error(*this, node, e.message());
  }
  for (size_t o = 0; o < outs.size(); ++o) outs[o].constant = r[o];
}

const rt::Kernel& State::kernel_for(const ir::Node& node, std::unique_ptr<rt::Kernel>& owned) {
  const rt::OpDef* def = rt::find_op(node.domain, node.op_type, node.opset);
  if (!def) build_error(*this, node, "no operator " + node.op_type + " at opset " + std::to_string(node.opset));
  // Shared per operator, output count and set of present inputs (a factory may look at either).
  bool shared = node.attributes.empty();
  std::string key = node.op_type + "/" + std::to_string(node.outputs.size()) + "/";
  for (int v : node.inputs) key.push_back(v < 0 ? '0' : '1');
  if (shared)
    if (auto it = shared_kernels_.find(key); it != shared_kernels_.end()) return *it->second;
  std::unique_ptr<rt::Kernel> k;
  try {
    k = def->factory(rt::NodeInfo(node, false));
  } catch (const Error& e) {
    build_error(*this, node, e.message());
  }
  const rt::Kernel& ref = *k;
  if (shared)
    shared_kernels_.emplace(std::move(key), std::move(k));
  else
    owned = std::move(k);
  return ref;
}

std::vector<int> State::add_node(ir::Node node, int num_outputs) {
  node.opset = opset;
  node.name = node.op_type + "_" + std::to_string(nodes.size());
  node.outputs.assign(static_cast<size_t>(num_outputs), 0);  // factories and infer read how many are wanted
  std::unique_ptr<rt::Kernel> owned;
  const rt::Kernel& kernel = kernel_for(node, owned);
  if (kernel.flags().outputs_data_dependent || kernel.flags().on_values)
    build_error(*this, node, "the output shape depends on the data, which the builder cannot express");
  bool symbolic = false;
  for (int v : node.inputs) symbolic |= v >= 0 && (values[v].symbolic || !values[v].probe_data[0].empty());
  const int probes = symbolic ? DimTable::kProbes : 1;

  std::vector<rt::OutputMeta> outs[DimTable::kProbes];
  for (int k = 0; k < probes; ++k) {
    auto known = [&](int v) -> const Tensor* {
      const ValueRec& r = values[v];
      if (symbolic && !r.probe_data[k].empty()) return &r.probe_data[k];
      return r.data.empty() || r.origin == ValueOrigin::Leaf ? nullptr : &r.data;  // a leaf's data is a default
    };
    outs[k] = infer_at(
        node, kernel, num_outputs, ErrorKind::GraphBuild, [&](DimId d) { return dims.probe(d, k); }, known);
    fold_shape_chain(node, kernel, known, outs[k]);
  }

  std::vector<int> ids;
  for (int o = 0; o < num_outputs; ++o) {
    const rt::OutputMeta& m0 = outs[0][o];
    ValueRec r;
    r.origin = ValueOrigin::Node;
    r.dtype = m0.dtype;
    r.node = static_cast<int>(nodes.size());
    const int rank = m0.shape.rank();
    if (symbolic && outs[1][o].shape.rank() != rank)
      build_error(*this, node, "the output rank depends on symbolic sizes");
    std::vector<size_t> open;  // axes only Reshape's quotient can explain
    for (int a = 0; a < rank; ++a) {
      if (!symbolic) {
        r.dims.push_back(dims.constant(m0.shape[a]));
        continue;
      }
      int64_t v[DimTable::kProbes] = {m0.shape[a], outs[1][o].shape[a]};
      DimId e = rule(*this, node, static_cast<size_t>(o), static_cast<size_t>(a), static_cast<size_t>(rank));
      if (e < 0 || !matches(dims, e, v)) e = generic(*this, node, v);
      if (e < 0) open.push_back(static_cast<size_t>(a));
      r.dims.push_back(e);
      r.symbolic |= e >= 0 && !dims.is_constant(e);
    }
    if (open.size() == 1 && (node.op_type == "Reshape" || node.op_type == "Flatten")) {
      DimId total = dims.constant(1), rest = dims.constant(1);
      for (DimId e : values[node.inputs[0]].dims) total = dims.mul(total, e);
      for (int a = 0; a < rank; ++a)
        if (static_cast<size_t>(a) != open[0]) rest = dims.mul(rest, r.dims[a]);
      DimId q = dims.div(total, rest);
      int64_t v[DimTable::kProbes] = {m0.shape[static_cast<int>(open[0])], outs[1][o].shape[static_cast<int>(open[0])]};
      if (matches(dims, q, v)) {
        r.dims[open[0]] = q;
        r.symbolic = true;
        open.clear();
      }
    }
    if (!open.empty())
      build_error(*this, node,
                  "output " + std::to_string(o) + " axis " + std::to_string(open[0]) +
                      " is no expression of the symbolic input sizes the builder can state");
    if (!symbolic && !m0.constant.empty()) r.data = m0.constant;  // known at build time (Shape of fixed sizes)
    if (symbolic && !m0.constant.empty() && !outs[1][o].constant.empty()) {
      for (int k = 0; k < DimTable::kProbes; ++k) r.probe_data[k] = outs[k][o].constant;
      for (int v : node.inputs) {  // Shape: its input's extents; a chain: what its inputs came from
        if (v < 0) continue;
        const ValueRec& in = values[v];
        const std::vector<DimId>& from = node.op_type == "Shape" ? in.dims : in.shape_sources;
        for (DimId e : from)
          if (!dims.is_constant(e) && r.shape_sources.size() < 16 &&
              std::find(r.shape_sources.begin(), r.shape_sources.end(), e) == r.shape_sources.end())
            r.shape_sources.push_back(e);
      }
    }
    ids.push_back(add_value(std::move(r)));
  }
  node.outputs = ids;
  nodes.push_back(std::move(node));
  return ids;
}

}  // namespace onemodel::build
