// `onemodel info MODEL`: what a model declares and whether this engine can run it.
// This command reads the imported graph (format/format.h: ONNX or the OneModel format) and the operator table
// (runtime/kernel.h) instead of creating a Session, because it must still describe a model whose operators are missing
// - exactly the case where creating a Session fails.
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "cli/cli.h"
#include "format/format.h"
#include "runtime/kernel.h"

namespace onemodel::cli {

namespace {

ValueInfo to_value_info(const ir::Value& v) {
  ValueInfo info;
  info.name = v.name;
  info.kind = v.type.kind;
  info.dtype = v.type.elem;
  info.has_shape = v.type.has_shape;
  info.dims = v.type.dims;
  return info;
}

std::string domain_name(const std::string& d) { return d.empty() ? "ai.onnx" : d; }

// "Gemm (opset 13)" for ai.onnx, "com.microsoft.FusedConv (opset 1)" otherwise: the same wording the
// runtime uses in UnsupportedOperator errors.
std::string op_label(const std::string& domain, const std::string& type, int64_t opset) {
  return (domain.empty() ? type : domain + "." + type) + " (opset " + std::to_string(opset) + ")";
}

struct OpStats {
  int count = 0;
  bool missing = false;
  bool function = false;    // defined by a model-local function
  bool exact = false;       // an exact kernel exists
  std::string build_error;  // the kernel refused the node's attributes
};

using OpKey = std::tuple<std::string, std::string, int64_t>;  // domain, type, opset

// Every node, including those inside If/Loop/Scan bodies.
void collect(const ir::Graph& g, const ir::Model& model, std::map<OpKey, OpStats>& ops) {
  for (const ir::Node& n : g.nodes) {
    OpStats& s = ops[{n.domain, n.op_type, n.opset}];
    ++s.count;
    bool is_function = false;
    for (const auto& f : model.functions)
      if (f.name == n.op_type && domain_name(f.domain) == domain_name(n.domain)) is_function = true;
    // Control flow (If, Loop, Scan) compiles its bodies only inside a session, so its factory cannot be
    // tried here; what decides whether it runs, and in exact mode, is its bodies' nodes, which are
    // collected below like any others.
    bool has_body = false;
    for (const ir::Attribute& a : n.attributes) has_body = has_body || a.g || !a.graphs.empty();
    const rt::OpDef* def = is_function ? nullptr : rt::find_op(n.domain, n.op_type, n.opset);
    if (is_function) {
      s.function = true;
    } else if (def && has_body) {
      s.exact = s.count == 1 || s.exact;
    } else if (def) {
      // Building the exact flavour tells whether one exists; a node with bad attributes makes the
      // factory throw, which info reports instead of failing.
      try {
        auto kernel = def->factory(rt::NodeInfo(n, true));
        if (s.count == 1)
          s.exact = kernel && kernel->flags().exact;
        else
          s.exact = s.exact && kernel && kernel->flags().exact;
      } catch (const Error& e) {
        s.build_error = e.what();
      }
    } else {
      s.missing = true;
    }
    for (const ir::Attribute& a : n.attributes) {
      if (a.g) collect(*a.g, model, ops);
      for (const auto& sub : a.graphs)
        if (sub) collect(*sub, model, ops);
    }
  }
}

}  // namespace

int cmd_info(const std::vector<std::string>& args) {
  if (args.size() != 1) throw UsageError("info takes exactly one MODEL argument");
  const std::string& path = args[0];
  ir::Model model = format::import_model_file(path);
  const ir::Graph& g = *model.graph;

  std::printf("model: %s\n", path.c_str());
  if (!model.producer_name.empty())
    std::printf("producer: %s %s\n", model.producer_name.c_str(), model.producer_version.c_str());
  std::printf("ir version: %lld\n", static_cast<long long>(model.ir_version));
  std::printf("opsets:");
  for (const auto& o : model.opset_imports)
    std::printf(" %s %lld", domain_name(o.domain).c_str(), static_cast<long long>(o.version));
  std::printf("\n");

  std::printf("inputs:\n");
  for (int id : g.inputs) {
    const ir::Value& v = g.values[static_cast<size_t>(id)];
    std::printf("  %s: %s%s\n", v.name.c_str(), describe_value(to_value_info(v)).c_str(),
                v.initializer ? " (optional: defaults to an initializer)" : "");
  }
  std::printf("outputs:\n");
  for (int id : g.outputs) {
    const ir::Value& v = g.values[static_cast<size_t>(id)];
    std::printf("  %s: %s\n", v.name.c_str(), describe_value(to_value_info(v)).c_str());
  }

  std::map<OpKey, OpStats> ops;
  collect(g, model, ops);
  int nodes = 0;
  for (const auto& [k, s] : ops) nodes += s.count;
  std::printf("operators (%zu op types, %d nodes):\n", ops.size(), nodes);
  std::vector<std::string> missing, not_exact, broken;
  for (const auto& [k, s] : ops) {
    const auto& [domain, type, opset] = k;
    std::string label = op_label(domain, type, opset);
    const char* note = s.missing                ? "  MISSING"
                       : s.function             ? "  (model function)"
                       : !s.build_error.empty() ? "  (refused)"
                       : s.exact                ? ""
                                                : "  (fast only)";
    std::printf("  %-40s x%d%s\n", label.c_str(), s.count, note);
    if (s.missing)
      missing.push_back(label);
    else if (!s.build_error.empty())
      broken.push_back(label + ": " + s.build_error);
    else if (!s.function && !s.exact)
      not_exact.push_back(label);
  }
  auto join = [](const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
    return out;
  };
  std::printf("missing operators: %s\n", missing.empty() ? "none" : join(missing).c_str());
  for (const auto& b : broken) std::printf("refused node: %s\n", b.c_str());
  if (!missing.empty() || !broken.empty())
    std::printf("exact mode: unavailable (the model cannot run)\n");
  else if (!not_exact.empty())
    std::printf("exact mode: unavailable (no exact kernel for %s)\n", join(not_exact).c_str());
  else
    std::printf("exact mode: available\n");
  return 0;
}

}  // namespace onemodel::cli
