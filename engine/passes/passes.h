// Graph passes (graph-passes.md): rewrites applied once per session, between import and operator lookup,
// selected by SessionOptions::optimization_level and the mode. Each pass is one function in its own file and
// one line of the table in passes.cc; a pass that does not preserve bits never runs in exact mode, so the
// exact pipeline (and the golden hashes) is the same at every level.
#pragma once
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "onemodel/session.h"
#include "passes/pass_graph.h"

namespace onemodel::passes {

struct GraphPass {
  std::string_view name;
  OptimizationLevel min_level;
  bool preserves_bits;
  int (*run)(PassGraph& g);  // returns how many patterns it rewrote
};

// The passes in the order they run.
std::span<const GraphPass> all_passes();

struct PassReport {
  std::string name;
  int rewrites = 0;
};

// Runs the selected passes on a copy of `graph`, then, whatever the level and mode, the weight compaction
// `storage` asks for (compact_weights: it keeps the bits of the model with rounded weights). Returns null when
// nothing was rewritten (the caller keeps the imported graph); `report` receives one entry per pass that ran.
std::shared_ptr<ir::Graph> run_passes(const ir::Graph& graph, OptimizationLevel level, bool exact,
                                      std::vector<PassReport>* report = nullptr,
                                      WeightStorage storage = WeightStorage::Float32);

// The passes (one file each).
int fold_conv_batchnorm(PassGraph& g);  // conv_batchnorm.cc
int fold_conv_affine(PassGraph& g);     // conv_affine.cc
int fuse_gelu(PassGraph& g);            // gelu.cc
int fuse_attention(PassGraph& g);       // attention.cc
int fuse_elementwise(PassGraph& g);     // elementwise.cc
// Not in the table (the option selects it, not the level): compact_weights.cc.
int compact_weights(PassGraph& g, WeightStorage storage);

}  // namespace onemodel::passes
