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

// Every level, both modes, before the rest (and before the graph is judged half-precision): a copy of `graph`
// where each Cast to float32 of a float16 / bfloat16 initializer only it reads is that initializer widened (a
// converted file's 16-bit weights, docs/fp16.md section 6); null when there is none. `rewrites` gets the count.
std::shared_ptr<ir::Graph> widen_stored(const ir::Graph& graph, int* rewrites);

// Runs the selected passes on a copy of `graph` and, the same way, on its subgraphs (nested ones too), then,
// whatever the level and mode, the weight compaction `storage` asks for on the top-level graph (compact_weights:
// it keeps the bits of the model with rounded weights). Returns null when nothing was rewritten (the caller keeps
// the imported graph); `report` receives one entry per pass that ran, subgraphs' rewrites included.
std::shared_ptr<ir::Graph> run_passes(const ir::Graph& graph, OptimizationLevel level, bool exact,
                                      std::vector<PassReport>* report = nullptr,
                                      WeightStorage storage = WeightStorage::Float32);

// Per value id of g: proven float32 before the plan knows types (a float32 constant or source, a Conv or
// constant-matrix MatMul output, an element-wise result with a float32 operand, what keeps such a type), the facts
// fuse-elementwise groups by (elementwise.cc); run_passes hands a subgraph the ones of the values it captures.
std::vector<char> proven_float32(const PassGraph& g);

// The passes (one file each).
int fold_conv_batchnorm(PassGraph& g);   // conv_batchnorm.cc
int batchnorm_to_affine(PassGraph& g);   // batchnorm_affine.cc
int fold_conv_affine(PassGraph& g);      // conv_affine.cc
int fuse_gelu(PassGraph& g);             // gelu.cc
int fuse_attention(PassGraph& g);        // attention.cc
int fuse_elementwise(PassGraph& g);      // elementwise.cc
int widen_stored_weights(PassGraph& g);  // compact_weights.cc
// Not in the table (the option selects it, not the level): compact_weights.cc.
int compact_weights(PassGraph& g, WeightStorage storage);
// For conversion (format/convert.cc): the same weights rounded, each behind an ONNX Cast to float32.
int store_weights_compact(PassGraph& g, WeightStorage storage);

}  // namespace onemodel::passes
