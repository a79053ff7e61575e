#include "passes/passes.h"

#include <algorithm>
#include <array>

namespace onemodel::passes {

namespace {

// graph-passes.md's table, in order. `constant-fold` is not a pass here: every plan already evaluates the nodes
// whose inputs are constants (runtime/plan.cc, at every level), so Basic and None select the same passes.
constexpr std::array kPasses = {
    GraphPass{"conv-batchnorm-fold", OptimizationLevel::All, false, fold_conv_batchnorm},
    // The batch normalisations left (all of them in exact mode) as Mul and Add for fuse-elementwise.
    GraphPass{"batchnorm-affine", OptimizationLevel::All, true, batchnorm_to_affine},
    // After the batch normalisation fold: Conv -> BatchNormalization -> Mul reaches it as Conv -> Mul.
    GraphPass{"conv-affine-fold", OptimizationLevel::All, false, fold_conv_affine},
    GraphPass{"gelu", OptimizationLevel::All, false, fuse_gelu},
    GraphPass{"attention", OptimizationLevel::All, true, fuse_attention},
    // Last: the patterns above are made of element-wise operators this one would otherwise take.
    GraphPass{"fuse-elementwise", OptimizationLevel::All, true, fuse_elementwise},
};

int rank(OptimizationLevel l) { return l == OptimizationLevel::None ? 0 : l == OptimizationLevel::Basic ? 1 : 2; }

}  // namespace

std::span<const GraphPass> all_passes() { return kPasses; }

std::shared_ptr<ir::Graph> widen_stored(const ir::Graph& graph, int* rewrites) {
  PassGraph g(graph);
  *rewrites = widen_stored_weights(g);
  if (*rewrites == 0) return nullptr;
  g.finish();
  return std::make_shared<ir::Graph>(std::move(g.graph()));
}

namespace {

// run_passes on `graph`, a subgraph when f32_captures is set (PassGraph).
std::shared_ptr<ir::Graph> rewrite(const ir::Graph& graph, OptimizationLevel level, bool exact,
                                   std::vector<PassReport>* report, WeightStorage storage,
                                   const std::vector<char>* f32_captures) {
  auto copy = [&] { return std::make_unique<PassGraph>(graph, f32_captures); };
  bool bodies = false;
  for (const ir::Node& n : graph.nodes)
    for (const ir::Attribute& a : n.attributes) bodies = bodies || a.g || !a.graphs.empty();
  // What the subgraphs may take as float32: the facts of this graph before the passes below (a value a subgraph
  // reads keeps its id and name through them, PassGraph::uses), from the copy they then rewrite.
  std::unique_ptr<PassGraph> g;
  std::vector<char> proven;
  if (bodies) {
    g = copy();
    proven = proven_float32(*g);
  }
  int total = 0;
  for (const GraphPass& p : kPasses) {
    if (rank(level) < rank(p.min_level) || (exact && !p.preserves_bits)) continue;
    if (!g) g = copy();
    const int n = p.run(*g);
    if (n > 0) g->finish();
    total += n;
    if (report) report->push_back({std::string(p.name), n});
  }
  // Subgraphs (If branches, Loop and Scan bodies, nested ones too) through the same passes, each in place of its
  // attribute in the copy; their counts join this graph's report lines (graph-passes.md section 1).
  // A body reads outer values by name and the passes keep every value a body reads, so rewriting either side
  // leaves the other's references intact.
  // (The list as the passes left it: they never fuse a node with a subgraph; g exists whenever there are bodies.)
  const std::vector<ir::Node>& nodes = g ? g->graph().nodes : graph.nodes;
  for (size_t i = 0; bodies && i < nodes.size(); ++i)
    for (size_t a = 0; a < nodes[i].attributes.size(); ++a) {
      const ir::Attribute& at = nodes[i].attributes[a];
      const size_t count = at.g ? 1 : at.graphs.size();
      for (size_t b = 0; b < count; ++b) {
        const ir::Graph* body = (at.g ? at.g : at.graphs[b]).get();
        if (!body) continue;
        // Each capture is one of the node's subgraph reads by name (as runtime/subgraph.cc matches them).
        std::vector<char> known(body->values.size(), 0);
        for (int c : body->captures)
          for (int outer : nodes[i].subgraph_reads)
            if (outer >= 0 && static_cast<size_t>(outer) < proven.size() &&
                graph.values[static_cast<size_t>(outer)].name == body->values[static_cast<size_t>(c)].name)
              known[static_cast<size_t>(c)] = proven[static_cast<size_t>(outer)];
        std::vector<PassReport> inner;
        std::shared_ptr<ir::Graph> rewritten = rewrite(*body, level, exact, &inner, WeightStorage::Float32, &known);
        if (!rewritten) continue;
        for (const PassReport& r : inner) {
          total += r.rewrites;
          if (!report) continue;
          auto same =
              std::find_if(report->begin(), report->end(), [&](const PassReport& o) { return o.name == r.name; });
          if (same != report->end())
            same->rewrites += r.rewrites;
          else
            report->push_back(r);
        }
        ir::Attribute& dst = g->graph().nodes[i].attributes[a];
        (dst.g ? dst.g : dst.graphs[b]) = std::move(rewritten);
      }
    }
  if (storage != WeightStorage::Float32) {
    if (!g) g = copy();
    const int n = compact_weights(*g, storage);
    if (n > 0) g->finish();
    total += n;
    if (report) report->push_back({"compact-weights", n});
  }
  if (!g || total == 0) return nullptr;
  return std::make_shared<ir::Graph>(std::move(g->graph()));
}

}  // namespace

std::shared_ptr<ir::Graph> run_passes(const ir::Graph& graph, OptimizationLevel level, bool exact,
                                      std::vector<PassReport>* report, WeightStorage storage) {
  return rewrite(graph, level, exact, report, storage, nullptr);
}

}  // namespace onemodel::passes
