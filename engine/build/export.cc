// Export and compile (docs/model-building.md sections 4-5): what the requested outputs need becomes an ir::Model
// (unused values and nodes pruned, builder order kept, so equal graphs give equal bytes), written by the ONNX
// writer. compile() loads those very bytes into a Session, so what runs is what to_onnx() exports; input specs
// first bind the symbols and check every node again at those sizes with the operator's infer (Error(Compile)).
#include <unordered_map>

#include "build/state.h"
#include "onemodel/model_format.h"
#include "onemodel/trace.h"
#include "onnx/writer.h"

namespace onemodel {
namespace build {
namespace {

using Binding = std::unordered_map<std::string, int64_t>;

struct ExportOptions {
  bool leaf_defaults = true;  // leaves as inputs with their data as initializer (the ONNX form of a default)
  const std::vector<InputSpec>* specs = nullptr;
};

[[noreturn]] void fail(ErrorKind kind, const std::string& m) { throw Error(kind, m); }

// Values and nodes the outputs depend on.
std::vector<bool> needed_values(const State& s, const Outputs& outputs) {
  std::vector<bool> need(s.values.size(), false);
  for (const auto& [name, v] : outputs) {
    check_same_builder(s, v);
    state_of(v);
    need[static_cast<size_t>(v.id())] = true;
  }
  for (size_t n = s.nodes.size(); n-- > 0;) {
    bool used = false;
    for (int o : s.nodes[n].outputs) used |= need[o];
    if (used)
      for (int i : s.nodes[n].inputs)
        if (i >= 0) need[i] = true;
  }
  return need;
}

const InputSpec* spec_for(const ExportOptions& opt, const std::string& name) {
  if (!opt.specs) return nullptr;
  for (const InputSpec& sp : *opt.specs)
    if (sp.name == name) return &sp;
  return nullptr;
}

ir::TypeInfo type_of(const State& s, const ValueRec& r, const InputSpec* spec) {
  ir::TypeInfo t;
  t.kind = ValueKind::Tensor;
  t.elem = r.dtype;
  t.has_shape = true;
  for (size_t a = 0; a < r.dims.size(); ++a) {
    Dim d;
    if (spec)
      d.value = spec->dims[a];
    else if (s.dims.is_constant(r.dims[a]))
      d.value = s.dims.constant_value(r.dims[a]);
    else
      d.param = s.dims.to_string(r.dims[a]);
    t.dims.push_back(std::move(d));
  }
  return t;
}

std::shared_ptr<ir::TensorValue> tensor_value(const Tensor& t) {
  auto tv = std::make_shared<ir::TensorValue>();
  tv->dtype = t.dtype();
  tv->dims = t.shape().to_vector();
  tv->data = t;
  return tv;
}

ir::Model to_model(const State& s, const Outputs& outputs, const ExportOptions& opt) {
  if (outputs.empty()) fail(ErrorKind::InvalidArgument, "export: no outputs were named");
  std::vector<bool> need = needed_values(s, outputs);
  auto g = std::make_shared<ir::Graph>();
  g->name = "built";
  std::unordered_map<std::string, int> taken;  // every ir value name
  std::vector<int> id_of(s.values.size(), -1);
  auto add = [&](std::string name, ir::TypeInfo type) {
    while (taken.count(name)) name += "_";
    ir::Value v;
    v.name = name;
    v.type = std::move(type);
    g->values.push_back(std::move(v));
    taken[g->values.back().name] = static_cast<int>(g->values.size()) - 1;
    return static_cast<int>(g->values.size()) - 1;
  };
  for (const auto& [name, v] : outputs) {
    if (name.empty()) fail(ErrorKind::InvalidArgument, "export: an output needs a name");
    for (const ValueRec& r : s.values)
      if (r.origin != ValueOrigin::Node && r.name == name)
        fail(ErrorKind::InvalidArgument, "export: output name '" + name + "' is also an input or constant name");
  }
  // Leaves of the graph first (inputs, then constants), in the order they were made.
  int constants = 0;
  for (size_t i = 0; i < s.values.size(); ++i) {
    const ValueRec& r = s.values[i];
    if (!need[i] || r.origin == ValueOrigin::Node) continue;
    if (r.origin == ValueOrigin::Constant) {
      int id = add(r.name.empty() ? "const_" + std::to_string(constants++) : r.name, type_of(s, r, nullptr));
      g->values[id].initializer = tensor_value(r.data);
      g->initializers.push_back(id);
      id_of[i] = id;
      continue;
    }
    int id = add(r.name, type_of(s, r, spec_for(opt, r.name)));
    g->values[id].is_input = true;
    g->inputs.push_back(id);
    if (r.origin == ValueOrigin::Leaf && opt.leaf_defaults) {
      g->values[id].initializer = tensor_value(r.data);
      g->initializers.push_back(id);
    }
    id_of[i] = id;
  }
  // Outputs named as requested: a node output the first time it is named, else an Identity.
  std::unordered_map<int, std::string> rename;
  std::vector<std::pair<std::string, int>> identities;
  for (const auto& [name, v] : outputs) {
    for (const auto& [other, w] : identities)
      if (other == name) fail(ErrorKind::InvalidArgument, "export: output name '" + name + "' is used twice");
    for (const auto& [w, other] : rename)
      if (other == name) fail(ErrorKind::InvalidArgument, "export: output name '" + name + "' is used twice");
    if (s.values[v.id()].origin == ValueOrigin::Node && !rename.count(v.id()))
      rename[v.id()] = name;
    else
      identities.emplace_back(name, v.id());
  }
  for (const ir::Node& n : s.nodes) {
    bool used = false;
    for (int o : n.outputs) used |= need[o];
    if (!used) continue;
    // Names from positions in the exported graph, not builder ids: pruned work leaves no trace in the bytes.
    ir::Node c = n;
    c.name = n.op_type + "_" + std::to_string(g->nodes.size());
    for (int& i : c.inputs) i = i < 0 ? ir::kNoValue : id_of[i];
    for (int& o : c.outputs) {
      auto it = rename.find(o);
      ir::TypeInfo t = type_of(s, s.values[o], nullptr);
      int id = add(it != rename.end() ? it->second : "t" + std::to_string(g->values.size()),
                   it != rename.end() ? t : ir::TypeInfo{});
      id_of[o] = id;
      o = id;
    }
    g->nodes.push_back(std::move(c));
  }
  for (auto& [name, v] : identities) {
    ir::Node c;
    c.op_type = "Identity";
    c.name = "Identity_" + name;
    c.inputs = {id_of[v]};
    c.outputs = {add(name, type_of(s, s.values[v], nullptr))};
    g->nodes.push_back(std::move(c));
  }
  for (const auto& [name, v] : outputs) g->outputs.push_back(taken.at(name));
  ir::Model m;
  m.ir_version = 9;
  m.producer_name = "onemodel-builder";
  m.opset_imports.push_back({"", s.opset});
  m.graph = std::move(g);
  return m;
}

// Input specs -> symbol values, then every needed node's infer at those sizes against the stated shapes.
void check_specs(State& s, const Outputs& outputs, const std::vector<InputSpec>& specs) {
  Binding bind;
  for (const InputSpec& sp : specs) {
    int found = -1;
    for (size_t i = 0; i < s.values.size(); ++i)
      if (s.values[i].origin != ValueOrigin::Node && s.values[i].origin != ValueOrigin::Constant &&
          s.values[i].name == sp.name)
        found = static_cast<int>(i);
    if (found < 0) fail(ErrorKind::Compile, "input spec '" + sp.name + "' names no input");
    const ValueRec& r = s.values[found];
    if (sp.dims.size() != r.dims.size())
      fail(ErrorKind::Compile, "input '" + sp.name + "' has rank " + std::to_string(r.dims.size()) + ", its spec " +
                                   std::to_string(sp.dims.size()));
    for (size_t a = 0; a < r.dims.size(); ++a) {
      DimId d = r.dims[a];
      std::string what = "input '" + sp.name + "' axis " + std::to_string(a) + " ";
      if (sp.dims[a] < 0) fail(ErrorKind::Compile, what + "spec is negative");
      if (s.dims.is_constant(d)) {
        if (s.dims.constant_value(d) != sp.dims[a])
          fail(ErrorKind::Compile, what + "is " + s.dims.to_string(d) + ", its spec " + std::to_string(sp.dims[a]));
        continue;
      }
      auto [it, fresh] = bind.try_emplace(s.dims.to_string(d), sp.dims[a]);
      if (!fresh && it->second != sp.dims[a])
        fail(ErrorKind::Compile, what + "is symbol " + it->first + ", bound to " + std::to_string(it->second) +
                                     " by an earlier spec and to " + std::to_string(sp.dims[a]) + " here");
    }
  }
  std::vector<bool> need = needed_values(s, outputs);
  std::unordered_map<int, Tensor> computed;  // values the operators' infer states at these sizes (Shape chains)
  auto known = [&](int v) -> const Tensor* {
    if (auto it = computed.find(v); it != computed.end()) return &it->second;
    const ValueRec& r = s.values[v];
    return r.data.empty() || r.origin == ValueOrigin::Leaf || !r.probe_data[0].empty() ? nullptr : &r.data;
  };
  for (const ir::Node& n : s.nodes) {
    bool used = false, bound = true;
    for (int o : n.outputs) used |= need[o];
    if (!used) continue;
    auto extent = [&](DimId d) {
      bool ok = true;
      int64_t v = s.dims.evaluate(d, bind, ok);
      bound &= ok;
      return v;
    };
    for (int i : n.inputs)
      if (i >= 0)
        for (DimId d : s.values[i].dims) extent(d);
    if (!bound) continue;  // a symbol no spec fixes: checked when the session plans
    std::unique_ptr<rt::Kernel> owned;
    const rt::Kernel& k = s.kernel_for(n, owned);
    std::vector<rt::OutputMeta> outs =
        s.infer_at(n, k, static_cast<int>(n.outputs.size()), ErrorKind::Compile, extent, known);
    s.fold_shape_chain(n, k, known, outs);
    for (size_t o = 0; o < outs.size(); ++o) {
      if (!outs[o].constant.empty()) computed[n.outputs[o]] = outs[o].constant;
      const ValueRec& r = s.values[n.outputs[o]];
      bool same = outs[o].shape.rank() == static_cast<int>(r.dims.size());
      for (size_t a = 0; same && a < r.dims.size(); ++a) same = outs[o].shape[static_cast<int>(a)] == extent(r.dims[a]);
      if (!same)
        fail(ErrorKind::Compile, n.op_type + " output " + std::to_string(o) + " is " + outs[o].shape.to_string() +
                                     " at these sizes, the builder stated " + s.shape_string(n.outputs[o]));
    }
  }
}

}  // namespace
}  // namespace build

std::string GraphBuilder::to_onnx(const Outputs& outputs) const {
  return onnx::write_model(build::to_model(*state_, outputs, {}));
}

std::string GraphBuilder::compiled_onnx(const Outputs& outputs, const std::vector<InputSpec>& specs) const {
  build::State& s = *state_;
  build::check_specs(s, outputs, specs);
  build::ExportOptions opt;
  opt.leaf_defaults = false;  // our runtime treats an input's initializer as a constant: defaults stay outside
  opt.specs = &specs;
  return onnx::write_model(build::to_model(s, outputs, opt));
}

Var GraphBuilder::value(int id) const {
  if (id < 0 || static_cast<size_t>(id) >= state_->values.size())
    throw Error(ErrorKind::InvalidArgument, "GraphBuilder: no value has id " + std::to_string(id));
  return Var(state_, id);
}

std::vector<std::byte> GraphBuilder::to_onemodel(const Outputs& outputs) const {
  const std::string bytes = to_onnx(outputs);
  return model_format::convert_bytes(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())), {}, "<built>");
}

std::vector<std::byte> TracedModel::to_onemodel() const {
  return model_format::convert_bytes(std::as_bytes(std::span<const char>(onnx.data(), onnx.size())), {}, "<traced>");
}

BuiltModel GraphBuilder::compile(const Outputs& outputs, const SessionOptions& options,
                                 const std::vector<InputSpec>& specs) const {
  build::State& s = *state_;
  std::string bytes = compiled_onnx(outputs, specs);
  Session session =
      Session::load_bytes(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())), options, "<built>");
  std::vector<NamedTensor> defaults;
  std::vector<bool> need = build::needed_values(s, outputs);
  for (size_t i = 0; i < s.values.size(); ++i)
    if (need[i] && s.values[i].origin == build::ValueOrigin::Leaf)
      defaults.push_back({s.values[i].name, s.values[i].data});
  return BuiltModel(std::move(session), std::move(defaults));
}

std::vector<Tensor> BuiltModel::run(std::span<const NamedTensor> inputs) const {
  std::vector<NamedTensor> all(inputs.begin(), inputs.end());
  for (const NamedTensor& d : defaults_) {
    bool given = false;
    for (const NamedTensor& in : inputs) given |= in.name == d.name;
    if (!given) all.push_back(d);
  }
  try {
    return session_.run(all);
  } catch (const Error& e) {
    Error wrapped(e.kind(), "Execution: " + e.message());
    wrapped.with_node(e.node()).with_operators(e.operators());
    throw wrapped;
  }
}

}  // namespace onemodel
