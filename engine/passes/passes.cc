#include "passes/passes.h"

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

std::shared_ptr<ir::Graph> run_passes(const ir::Graph& graph, OptimizationLevel level, bool exact,
                                      std::vector<PassReport>* report, WeightStorage storage) {
  std::unique_ptr<PassGraph> g;
  int total = 0;
  for (const GraphPass& p : kPasses) {
    if (rank(level) < rank(p.min_level) || (exact && !p.preserves_bits)) continue;
    if (!g) g = std::make_unique<PassGraph>(graph);
    const int n = p.run(*g);
    if (n > 0) g->finish();
    total += n;
    if (report) report->push_back({std::string(p.name), n});
  }
  if (storage != WeightStorage::Float32) {
    if (!g) g = std::make_unique<PassGraph>(graph);
    const int n = compact_weights(*g, storage);
    if (n > 0) g->finish();
    total += n;
    if (report) report->push_back({"compact-weights", n});
  }
  if (!g || total == 0) return nullptr;
  return std::make_shared<ir::Graph>(std::move(g->graph()));
}

}  // namespace onemodel::passes
