#include "runtime/profiler.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

namespace onemodel::rt {

namespace {

// A node's name, or for an unnamed node its type and first output ("(Gemm -> logits)"), so that two
// unnamed nodes of one type stay apart in the table.
std::string display_name(const NodeInfo& node) {
  if (!node.name().empty()) return node.name();
  std::string out;
  const CompileScope* scope = node.scope();
  const ir::Node& n = node.node();
  if (scope && scope->graph && !n.outputs.empty() && n.outputs[0] >= 0 &&
      static_cast<size_t>(n.outputs[0]) < scope->graph->values.size())
    out = " -> " + scope->graph->values[static_cast<size_t>(n.outputs[0])].name;
  return "(" + node.op_type() + out + ")";
}

}  // namespace

void Profiler::start() {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.clear();
  runs_ = run_ns_ = 0;
  active_.store(true, std::memory_order_relaxed);
}

void Profiler::record_step(const ProfileScope& scope, const NodeInfo& node, int64_t ns) {
  std::lock_guard<std::mutex> lock(mutex_);
  Entry& e = entries_[&node];
  if (e.calls == 0) {
    e.path = scope.path + display_name(node);
    e.op_type = node.op_type();
    e.depth = scope.depth;
    e.parent = scope.parent;
  }
  ++e.calls;
  e.ns += ns;
}

void Profiler::record_run(int64_t ns) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++runs_;
  run_ns_ += ns;
}

Profile Profiler::finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  active_.store(false, std::memory_order_relaxed);
  Profile p;
  p.runs = runs_;
  p.run_ms = static_cast<double>(run_ns_) * 1e-6;
  std::unordered_map<const NodeInfo*, int64_t> child_ns;
  for (const auto& [key, e] : entries_)
    if (e.parent) child_ns[e.parent] += e.ns;
  std::map<std::string, OpTypeProfile> types;
  for (const auto& [key, e] : entries_) {
    NodeProfile n;
    n.node = e.path;
    n.op_type = e.op_type;
    n.depth = e.depth;
    n.calls = e.calls;
    n.total_ms = static_cast<double>(e.ns) * 1e-6;
    auto c = child_ns.find(key);
    n.self_ms = static_cast<double>(std::max<int64_t>(0, e.ns - (c == child_ns.end() ? 0 : c->second))) * 1e-6;
    p.nodes_ms += n.self_ms;
    OpTypeProfile& t = types[e.op_type];
    t.op_type = e.op_type;
    t.calls += e.calls;
    t.self_ms += n.self_ms;
    p.nodes.push_back(std::move(n));
  }
  for (auto& [name, t] : types) p.op_types.push_back(t);
  p.overhead_ms = std::max(0.0, p.run_ms - p.nodes_ms);
  const double total = p.run_ms > 0 ? p.run_ms : p.nodes_ms;
  for (NodeProfile& n : p.nodes) n.share = total > 0 ? n.self_ms / total : 0;
  for (OpTypeProfile& t : p.op_types) t.share = total > 0 ? t.self_ms / total : 0;
  // Ties (equal times) are ordered by name so the tables are stable.
  std::sort(p.nodes.begin(), p.nodes.end(), [](const NodeProfile& a, const NodeProfile& b) {
    return a.self_ms != b.self_ms ? a.self_ms > b.self_ms : a.node < b.node;
  });
  std::sort(p.op_types.begin(), p.op_types.end(), [](const OpTypeProfile& a, const OpTypeProfile& b) {
    return a.self_ms != b.self_ms ? a.self_ms > b.self_ms : a.op_type < b.op_type;
  });
  entries_.clear();
  runs_ = run_ns_ = 0;
  return p;
}

}  // namespace onemodel::rt

namespace onemodel {

std::string Profile::to_text(int top) const {
  const double per = runs > 0 ? 1.0 / static_cast<double>(runs) : 1.0;
  std::string s;
  char line[512];
  std::snprintf(line, sizeof line,
                "profile: %lld runs, %.4f ms per run (nodes %.4f ms, runtime overhead %.4f ms, %.1f%%)\n",
                static_cast<long long>(runs), run_ms * per, nodes_ms * per, overhead_ms * per,
                run_ms > 0 ? 100.0 * overhead_ms / run_ms : 0.0);
  s += line;
  s += "\nby operator type          ms/run   share   calls/run\n";
  for (const OpTypeProfile& t : op_types) {
    std::snprintf(line, sizeof line, "  %-22s %9.4f  %5.1f%%  %9.1f\n", t.op_type.c_str(), t.self_ms * per,
                  100.0 * t.share, static_cast<double>(t.calls) * per);
    s += line;
  }
  s += "\nby node (self time)                                        op type              ms/run   share\n";
  int shown = 0;
  for (const NodeProfile& n : nodes) {
    if (top > 0 && shown == top) {
      std::snprintf(line, sizeof line, "  ... %zu more nodes\n", nodes.size() - static_cast<size_t>(shown));
      s += line;
      break;
    }
    std::string name = n.node.size() > 56 ? "..." + n.node.substr(n.node.size() - 53) : n.node;
    std::snprintf(line, sizeof line, "  %-56s %-18s %9.4f  %5.1f%%\n", name.c_str(), n.op_type.c_str(), n.self_ms * per,
                  100.0 * n.share);
    s += line;
    ++shown;
  }
  return s;
}

}  // namespace onemodel
