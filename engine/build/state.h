// The graph a GraphBuilder grows (docs/model-building.md section 1): values and nodes are only ever appended, so a
// Var (state, id) never changes meaning. Each node is an ir::Node whose inputs and outputs are builder value ids;
// export (build/export.cc) renumbers what the requested outputs need into an ir::Model.
#pragma once
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "build/dim_expr.h"
#include "ir/graph.h"
#include "onemodel/builder.h"
#include "runtime/kernel.h"

namespace onemodel::build {

enum class ValueOrigin { Input, Leaf, Constant, Node };

struct ValueRec {
  ValueOrigin origin = ValueOrigin::Node;
  DType dtype = DType::Undefined;
  std::vector<DimId> dims;
  bool symbolic = false;  // some dim is not a constant
  std::string name;       // inputs, leaves and named constants
  Tensor data;            // constants and leaves; node outputs known at build time (Shape of fixed sizes)
  // Node outputs whose content, not only shape, depends on the symbols (Shape of a symbolic value and what is
  // computed from it): their value at each probe binding, so shape operands built from Shape chains work.
  Tensor probe_data[DimTable::kProbes];
  // For those: the extents of the values whose Shape they come from, candidates for the axes of what a Reshape
  // or Expand fed by them produces (build/infer.cc).
  std::vector<DimId> shape_sources;
  int node = -1;  // Node: the producing node
};

class State {
 public:
  explicit State(int64_t opset) : opset(opset) {}

  // Appends `node` (inputs set, outputs empty) with `num_outputs` new values whose types and shapes come from
  // the operator's infer (build/infer.cc); throws Error(GraphBuild) naming the operator and input shapes.
  std::vector<int> add_node(ir::Node node, int num_outputs);
  int add_value(ValueRec v);
  // Runs a node of a Shape chain whose inputs are all known and states its outputs as constants (build/infer.cc).
  void fold_shape_chain(const ir::Node& node, const rt::Kernel& kernel, const std::function<const Tensor*(int)>& known,
                        std::vector<rt::OutputMeta>& outs) const;
  // The operator's infer with every input axis at `extent(dim)` and the known values `known(value id)` (null:
  // unknown); errors become Error(kind) naming the node.
  std::vector<rt::OutputMeta> infer_at(const ir::Node& node, const rt::Kernel& kernel, int num_outputs, ErrorKind kind,
                                       const std::function<int64_t(DimId)>& extent,
                                       const std::function<const Tensor*(int)>& known) const;
  void check_new_name(const std::string& name, const char* what);
  std::string shape_string(int value) const;

  // The runtime kernel for a node, for infer: attribute-free nodes share one per operator (the chain benchmark
  // of bench/build_cost.cc builds thousands of them); others are made into `owned`.
  const rt::Kernel& kernel_for(const ir::Node& node, std::unique_ptr<rt::Kernel>& owned);

  int64_t opset;
  DimTable dims;
  // Deques: appending never moves what is there (a vector's doubling copied every node and value, a 1.6x
  // slower block of 400 operations in bench/cpp/build_cost.cc).
  std::deque<ValueRec> values;
  std::deque<ir::Node> nodes;

 private:
  std::unordered_set<std::string> names_;
  std::unordered_map<std::string, std::unique_ptr<rt::Kernel>> shared_kernels_;
};

// A builder attribute as the ir node attribute it writes.
ir::Attribute to_ir(const Attr& a);

// The State behind a Var; Error(InvalidArgument) for an undefined Var or one of another builder.
State& state_of(const Var& v);
void check_same_builder(const State& s, const Var& v);

}  // namespace onemodel::build
