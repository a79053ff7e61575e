// Graph resolution (onnx-import.md section 4): the value table (inputs, initializers, sparse
// initializers, node outputs, then captures as they are first read), scopes for subgraphs, opsets,
// declared types, the stable topological order and the consumer lists.
#include <queue>
#include <unordered_map>

#include "onnx/proto.h"

namespace onemodel::onnx {
namespace {

struct Scope {
  ir::Graph* g = nullptr;
  std::unordered_map<std::string, int> names;
  Scope* parent = nullptr;
  bool open = false;               // function-body subgraph: unknown names are taken from the function
  std::vector<int> capture_outer;  // parallel to g->captures: the id in the parent graph (-1 if open)
};

// Finds `name` here or in an enclosing scope; an outer value becomes a capture in every graph on the way.
int lookup(Scope& s, const std::string& name) {
  if (auto it = s.names.find(name); it != s.names.end()) return it->second;
  int outer = -1;
  if (s.parent) {
    outer = lookup(*s.parent, name);
    if (outer < 0) return -1;
  } else if (!s.open) {
    return -1;
  }
  ir::Value v;
  v.name = name;
  v.is_capture = true;
  if (s.parent) v.type = s.parent->g->values[static_cast<size_t>(outer)].type;
  int id = static_cast<int>(s.g->values.size());
  s.g->values.push_back(std::move(v));
  s.g->captures.push_back(id);
  s.capture_outer.push_back(outer);
  s.names.emplace(name, id);
  return id;
}

class Resolver {
 public:
  Resolver(ImportState& st, const ir::Model& m) : st_(st), model_(m) {}

  std::shared_ptr<ir::Graph> resolve(ParsedGraph& pg, Scope& scope, bool function_body);

 private:
  [[noreturn]] void fail(const std::string& msg, const std::string& path, int64_t offset,
                         const std::string& node = {}) {
    Error e(ErrorKind::InvalidModel, msg);
    e.with_source(st_.ctx.source());
    if (offset >= 0) e.with_offset(offset);
    if (!path.empty()) e.with_field_path(path);
    if (!node.empty()) e.with_node(node);
    throw e;
  }
  static std::string node_label(const ParsedNode& n, size_t index) {
    return n.node.name.empty() ? n.node.op_type + " #" + std::to_string(index) : n.node.name;
  }
  int define(Scope& s, const std::string& name, const std::string& path, int64_t offset, const std::string& node = {}) {
    if (s.names.count(name)) fail("value '" + name + "' is defined twice", path, offset, node);
    int id = static_cast<int>(s.g->values.size());
    s.g->values.emplace_back();
    s.g->values.back().name = name;
    s.names.emplace(name, id);
    return id;
  }
  void sort_nodes(ir::Graph& g, const std::vector<ParsedNode>& pnodes);

  ImportState& st_;
  const ir::Model& model_;
};

std::shared_ptr<ir::Graph> Resolver::resolve(ParsedGraph& pg, Scope& scope, bool function_body) {
  auto gp = std::make_shared<ir::Graph>();
  ir::Graph& g = *gp;
  scope.g = &g;
  g.name = pg.name;
  g.doc_string = pg.doc_string;

  for (size_t k = 0; k < pg.inputs.size(); ++k) {
    const auto& in = pg.inputs[k];
    if (in.name.empty()) fail("graph input " + std::to_string(k) + " has an empty name", in.path, in.offset);
    int id = define(scope, in.name, in.path, in.offset);
    g.values[static_cast<size_t>(id)].is_input = true;
    g.values[static_cast<size_t>(id)].type = in.type;
    g.inputs.push_back(id);
  }
  for (auto& init : pg.initializers) {
    const std::string& name = init.tensor->name;
    if (name.empty()) fail("initializer has an empty name", init.path, init.offset);
    int id;
    if (auto it = scope.names.find(name); it != scope.names.end() &&
                                          g.values[static_cast<size_t>(it->second)].is_input &&
                                          !g.values[static_cast<size_t>(it->second)].initializer) {
      id = it->second;  // IR < 4 style: an input's default value
    } else {
      id = define(scope, name, init.path, init.offset);
    }
    g.values[static_cast<size_t>(id)].initializer = init.tensor;
    g.initializers.push_back(id);
  }
  for (auto& sp : pg.sparse_initializers) {
    const std::string& name = sp.tensor->values.name;
    if (name.empty()) fail("sparse initializer has an empty name", sp.path, sp.offset);
    int id = define(scope, name, sp.path, sp.offset);
    g.values[static_cast<size_t>(id)].sparse_initializer = sp.tensor;
  }
  g.nodes.resize(pg.nodes.size());
  for (size_t i = 0; i < pg.nodes.size(); ++i) {
    auto& pn = pg.nodes[i];
    for (size_t k = 0; k < pn.outputs.size(); ++k) {
      int id = ir::kNoValue;
      if (!pn.outputs[k].empty()) {
        id = define(scope, pn.outputs[k], pn.path + st_.node_outputs_field + "[" + std::to_string(k) + "]", pn.offset,
                    node_label(pn, i));
        g.values[static_cast<size_t>(id)].producer = static_cast<int>(i);
        g.values[static_cast<size_t>(id)].producer_output = static_cast<int>(k);
      }
      pn.node.outputs.push_back(id);
    }
  }
  // Declared types: inputs (above), then outputs, then value_info for values still without one.
  for (const auto& out : pg.outputs) {
    int id = lookup(scope, out.name);
    if (id < 0) fail("graph output '" + out.name + "' is not defined", out.path, out.offset);
    auto& v = g.values[static_cast<size_t>(id)];
    if (v.type.kind == ValueKind::Unknown) v.type = out.type;
    g.outputs.push_back(id);
  }
  for (const auto& vi : pg.value_info) {
    auto it = scope.names.find(vi.name);
    if (it == scope.names.end()) continue;
    auto& v = g.values[static_cast<size_t>(it->second)];
    if (v.type.kind == ValueKind::Unknown) v.type = vi.type;
  }

  for (size_t i = 0; i < pg.nodes.size(); ++i) {
    auto& pn = pg.nodes[i];
    ir::Node& n = pn.node;
    n.file_index = static_cast<int>(i);
    if (n.domain == "ai.onnx") n.domain.clear();
    if (!function_body) {
      bool imported = false;
      for (const auto& o : model_.opset_imports)
        if (o.domain == n.domain) imported = true;
      if (!imported)
        fail("node " + n.op_type + " uses domain '" + n.domain + "', which the model does not import",
             pn.path + ".domain", pn.offset, node_label(pn, i));
      n.opset = model_.opset_for(n.domain);
    }
    for (size_t k = 0; k < pn.inputs.size(); ++k) {
      int id = ir::kNoValue;
      if (!pn.inputs[k].empty()) {
        id = lookup(scope, pn.inputs[k]);
        if (id < 0)
          fail("node input '" + pn.inputs[k] + "' is not defined",
               pn.path + st_.node_inputs_field + "[" + std::to_string(k) + "]", pn.offset, node_label(pn, i));
      }
      n.inputs.push_back(id);
    }
    for (auto& sub : pn.subgraphs) {
      Scope child;
      child.parent = &scope;
      auto rg = resolve(*sub.graph, child, function_body);
      auto& a = n.attributes[sub.attr];
      if (sub.index < 0)
        a.g = rg;
      else
        a.graphs[static_cast<size_t>(sub.index)] = rg;
      for (int outer : child.capture_outer) {
        bool seen = false;
        for (int r : n.subgraph_reads) seen = seen || r == outer;
        if (!seen && outer >= 0) n.subgraph_reads.push_back(outer);
      }
    }
    g.nodes[i] = std::move(n);
  }
  sort_nodes(g, pg.nodes);
  return gp;
}

// Kahn's algorithm taking, at each step, the ready node with the smallest file index. Input already in
// topological order comes out unchanged.
void Resolver::sort_nodes(ir::Graph& g, const std::vector<ParsedNode>& pnodes) {
  const size_t n = g.nodes.size();
  std::vector<std::vector<int>> succ(n);
  std::vector<int> pending(n, 0);
  for (size_t i = 0; i < n; ++i) {
    std::vector<int> deps;
    auto add = [&](int vid) {
      if (vid == ir::kNoValue) return;
      int p = g.values[static_cast<size_t>(vid)].producer;
      if (p < 0) return;
      for (int d : deps)
        if (d == p) return;
      deps.push_back(p);
    };
    for (int v : g.nodes[i].inputs) add(v);
    for (int v : g.nodes[i].subgraph_reads) add(v);
    pending[i] = static_cast<int>(deps.size());
    for (int d : deps) succ[static_cast<size_t>(d)].push_back(static_cast<int>(i));
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (size_t i = 0; i < n; ++i)
    if (pending[i] == 0) ready.push(static_cast<int>(i));
  std::vector<int> order;
  order.reserve(n);
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int s : succ[static_cast<size_t>(i)])
      if (--pending[static_cast<size_t>(s)] == 0) ready.push(s);
  }
  if (order.size() != n) {
    for (size_t i = 0; i < n; ++i)
      if (pending[i] > 0)
        fail("the graph has a cycle through node " + g.nodes[i].op_type, pnodes[i].path, pnodes[i].offset,
             g.nodes[i].name.empty() ? g.nodes[i].op_type + " #" + std::to_string(i) : g.nodes[i].name);
  }
  bool identity = true;
  for (size_t k = 0; k < n; ++k) identity = identity && order[k] == static_cast<int>(k);
  if (!identity) {
    g.nodes_were_reordered = true;
    std::vector<int> new_index(n);
    std::vector<ir::Node> sorted;
    sorted.reserve(n);
    for (size_t k = 0; k < n; ++k) {
      new_index[static_cast<size_t>(order[k])] = static_cast<int>(k);
      sorted.push_back(std::move(g.nodes[static_cast<size_t>(order[k])]));
    }
    g.nodes = std::move(sorted);
    for (auto& v : g.values)
      if (v.producer >= 0) v.producer = new_index[static_cast<size_t>(v.producer)];
  }
  for (size_t k = 0; k < n; ++k) {
    auto reads = [&](int vid) {
      if (vid == ir::kNoValue) return;
      auto& c = g.values[static_cast<size_t>(vid)].consumers;
      if (c.empty() || c.back() != static_cast<int>(k)) c.push_back(static_cast<int>(k));
    };
    for (int v : g.nodes[k].inputs) reads(v);
    for (int v : g.nodes[k].subgraph_reads) reads(v);
  }
}

}  // namespace

std::shared_ptr<ir::Graph> resolve_graph(ImportState& st, const ir::Model& model, ParsedGraph& graph) {
  Resolver r(st, model);
  Scope root;
  return r.resolve(graph, root, false);
}

std::shared_ptr<ir::Graph> resolve_function_subgraph(ImportState& st, const ir::Model& model, ParsedGraph& graph) {
  Resolver r(st, model);
  Scope root;
  root.open = true;
  return r.resolve(graph, root, true);
}

}  // namespace onemodel::onnx
