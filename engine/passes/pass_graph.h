// The graph the passes edit (graph-runtime.md section 6): a private copy of the imported graph, shape-free.
// Passes rewrite nodes in place, add constants and mark nodes removed; finish() then compacts the node list,
// rebuilds producers and consumers and drops every node nothing reads. A fused node takes the position of
// the last node of its pattern, so the list stays in dependency order without re-sorting.
#pragma once
#include <map>
#include <utility>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "onemodel/tensor.h"

namespace onemodel::passes {

// Attributes of fused nodes.
ir::Attribute float_attribute(std::string name, float value);
ir::Attribute int_attribute(std::string name, int64_t value);

class PassGraph {
 public:
  // `f32_captures` (a flag per value id of g) makes g a subgraph: the captures its enclosing graph proved float32
  // (run_passes). A subgraph's declared inputs prove nothing, since nothing checks them when it runs (its node
  // passes whatever it has, graph-runtime.md section 8).
  explicit PassGraph(ir::Graph g, const std::vector<char>* f32_captures = nullptr);

  ir::Graph& graph() { return g_; }
  const ir::Graph& graph() const { return g_; }
  size_t num_nodes() const { return g_.nodes.size(); }
  ir::Node& node(int i) { return g_.nodes[static_cast<size_t>(i)]; }
  bool removed(int i) const { return removed_[static_cast<size_t>(i)] != 0; }

  // The node producing value v (its index), or -1 for inputs, initializers, captures and omitted values.
  int producer(int v) const;
  // The producing node of v when it has the given op type in the default domain, else -1.
  int producer_of_type(int v, std::string_view op_type) const;
  // How many places read v: node inputs, subgraph reads and graph outputs, each occurrence counted.
  int uses(int v) const;
  // True when node `reader` is the only place reading v (it may read it once only).
  bool only_reader(int v, int reader) const;
  // The node that is the only place reading v, when it is a default-domain node of type `op` with a first
  // output; else -1 (also when a graph output or a second node reads v).
  int sole_reader(int v, std::string_view op) const;

  // A value whose content is fixed at compile time: an initializer that is not also a graph input (an input's
  // initializer is an overridable default), or the output of a Constant node holding a tensor. Null otherwise.
  const Tensor* constant(int v) const;
  // Known to be float32 before any node runs: a float32 constant, a declared float32 input of a top-level graph, or
  // a capture the enclosing graph proved float32.
  bool f32_source(int v) const;
  // The value of a one-element float32 constant, or nothing.
  std::optional<float> scalar_f32(int v) const;
  // The value of a one-element float32, float16 or bfloat16 constant (widened: exact) and its type, or nothing.
  // For patterns whose constants a half-precision export rounded (docs/fp16.md section 4).
  std::optional<std::pair<float, DType>> scalar_float(int v) const;

  // Adds an initializer value holding `t` (contiguous) named after `base` (made unique); returns its id.
  int add_constant(const std::string& base, Tensor t);
  // Makes value v (not yet an initializer; its producer is removed by the caller) an initializer holding `t`.
  void set_constant(int v, Tensor t);
  // Adds a value no node produces yet (a float tensor of `dims`, for a node given to insert_before), named
  // after `base` (made unique); returns its id.
  int add_value(const std::string& base, DType dtype, const std::vector<int64_t>& dims);
  // The same, of unknown shape.
  int add_value(const std::string& base, DType dtype);
  // Queues `n` to run just before node `before` (finish() inserts it): a helper node whose result only that
  // node reads, placed there so the memory planner keeps the result alive for that step alone.
  void insert_before(int before, ir::Node n) { inserted_.emplace_back(before, std::move(n)); }
  void remove(int node) { removed_[static_cast<size_t>(node)] = 1; }

  // Compacts the node list, rebuilds links, drops nodes none of whose outputs is read. Returns the number of
  // nodes removed in total by this pass.
  int finish();

 private:
  void rebuild_links();
  ir::Graph g_;
  bool body_ = false;
  std::vector<char> f32_captures_;
  std::vector<char> removed_;
  std::vector<std::pair<int, ir::Node>> inserted_;  // (before which node, the node), in the order queued
  std::vector<int> output_uses_;                    // per value: occurrences in g_.outputs
  // Per value id: a Constant's value_float as a tensor, and aligned copies of stored tensors whose bytes sit
  // at an address not aligned for their element type (initializers are views into the file). std::map: the
  // pointers constant() returns stay valid while passes add values.
  std::map<int, Tensor> attr_constants_;
  mutable std::map<int, Tensor> aligned_;
  const Tensor* aligned(int v, const Tensor& t) const;
};

}  // namespace onemodel::passes
