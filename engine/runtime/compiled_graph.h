// CompiledGraph (graph-runtime.md section 1): the model with every operator resolved to a kernel and the
// weights ready, independent of input shapes. Immutable once built and shared by every plan and run.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "base/thread_pool.h"
#include "kernels/isa.h"
#include "runtime/kernel.h"

namespace onemodel::rt {

struct CompiledNode {
  const ir::Node* node = nullptr;  // points into the graph CompiledGraph keeps alive
  NodeInfo info;
  std::unique_ptr<Kernel> kernel;
  std::vector<int> inputs;  // the node's inputs followed by its subgraph reads (section 8)
  std::vector<int> outputs;
  // The kernel's packing of input 1 when the session freed that weight (Kernel::pack_weight), else null.
  std::shared_ptr<const void> packed_weight = nullptr;
};

class CompiledGraph {
 public:
  // Resolves operators, checks the mode, prepares weights. `model.graph` must be set.
  // Runs the graph passes `level` selects (passes/passes.h; none in exact mode that would change bits).
  static std::shared_ptr<const CompiledGraph> create(std::shared_ptr<const ir::Model> model, bool exact,
                                                     OpLookup lookup = &find_op, int threads = 1,
                                                     OptimizationLevel level = OptimizationLevel::All,
                                                     WeightStorage storage = WeightStorage::Float32);
  // A subgraph (If/Loop/Scan/SequenceMap body, graph-runtime.md section 8) as its own compiled graph: its
  // inputs are the body's declared inputs followed by its captures (graph().captures order), all accepted
  // whatever their declared type. Shares the enclosing session's target and pool; runs no passes itself (run_passes
  // rewrote the body with its enclosing graph).
  // `capture_weights` (empty, or one per capture) holds the captures whose outer value is a weight: those
  // become weights of the body and are not among its inputs.
  static std::shared_ptr<const CompiledGraph> create_body(std::shared_ptr<const ir::Graph> body, bool exact,
                                                          OpLookup lookup, kern::Isa isa, ThreadPool* pool,
                                                          std::vector<Tensor> capture_weights = {}, bool half = false);

  bool exact() const { return exact_; }
  // Kernels are wrapped in the half-precision adapter (docs/fp16.md section 1).
  bool half() const { return half_; }
  // The instruction-set target every kernel of this session runs on (chosen once, at creation).
  kern::Isa isa() const { return isa_; }
  // The intra-op pool every run of this session shares (never null; threads() == 1 means no workers).
  ThreadPool* pool() const { return pool_; }
  // The graph the kernels run: the imported one, or the passes' rewrite of it.
  const ir::Graph& graph() const { return *graph_; }
  // Per pass that ran: its name and how many patterns it rewrote.
  const std::vector<std::pair<std::string, int>>& pass_report() const { return pass_report_; }
  size_t num_values() const { return graph().values.size(); }
  const std::string& value_name(int v) const { return graph().values[static_cast<size_t>(v)].name; }

  // Live nodes in graph order (dead nodes were dropped).
  const std::vector<CompiledNode>& nodes() const { return nodes_; }
  // Per value id: the weight (aligned, contiguous) for initializers, else empty.
  const std::vector<Tensor>& weights() const { return weights_; }
  // Graph inputs the caller must pass (initializer-backed inputs excluded), in declaration order.
  const std::vector<int>& inputs() const { return inputs_; }
  const std::vector<int>& outputs() const { return outputs_; }
  const std::vector<ValueInfo>& input_infos() const { return input_infos_; }
  const std::vector<ValueInfo>& output_infos() const { return output_infos_; }

 private:
  CompiledGraph() = default;
  void collect_live_nodes();
  void resolve_operators(OpLookup lookup);
  void load_weights(std::vector<Tensor> capture_weights);
  Tensor widen_for_cast(int v, const ir::TensorValue& tv) const;
  void check_sources() const;
  void note_constant_outputs(const CompiledNode& cn);
  void describe_io();
  int pack_weights(bool owns_model);

  // The imported model's graph (sharing ownership of the model), the passes' rewrite of it, or a body. A
  // rewrite holds the initializers it kept, so the model itself is not kept: the float32 weights that
  // compaction replaced (fp16.md section 6) and the ones the passes folded are freed with it.
  std::shared_ptr<const ir::Graph> graph_;
  bool body_ = false;
  bool exact_ = false;
  bool half_ = false;
  kern::Isa isa_ = kern::Isa::Scalar;
  std::shared_ptr<ThreadPool> own_pool_;
  ThreadPool* pool_ = nullptr;
  CompileScope scope_;  // what this graph's kernels see through NodeInfo::scope()
  std::vector<std::pair<std::string, int>> pass_report_;
  std::vector<int> live_;  // indices into graph().nodes
  std::vector<CompiledNode> nodes_;
  std::vector<Tensor> weights_;
  std::vector<Tensor> known_constants_;  // weights_ plus input-less nodes' outputs (CompileScope::constants)
  std::vector<int> inputs_, outputs_;
  std::vector<ValueInfo> input_infos_, output_infos_;
};

}  // namespace onemodel::rt
