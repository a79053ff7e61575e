// Building models in code (docs/model-building.md): a lazy graph builder. Values are immutable handles to nodes
// of one growing graph; an operation computes nothing, it appends a node and states its output types and shapes,
// found by the runtime's own shape inference for the operator (the operator table's `infer`), so the builder and
// the engine cannot disagree. Dimensions may be symbolic (named axes and expressions of them). A shape or type
// error is raised by the operation that causes it (ErrorKind::GraphBuild), naming the operator and its input
// shapes; compiling with input specs that fix the symbols checks the whole graph again (ErrorKind::Compile).
//
//   GraphBuilder b;
//   Var x = b.input("x", DType::F32, {"batch", 784});
//   Var w = b.constant(weights);                    // [784, 10]
//   Var y = x.matmul(w).add(b.constant(bias)).softmax();
//   BuiltModel m = b.compile({{"probs", y}});       // or b.to_onnx({{"probs", y}})
//   std::vector<Tensor> out = m.run({{"x", images}});
#pragma once
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onemodel/operators.h"
#include "onemodel/session.h"
#include "onemodel/tensor.h"

namespace onemodel {

namespace build {
class State;  // build/state.h
}

// A dimension as declared for an input: a fixed extent or the name of a symbolic axis.
struct DimArg {
  DimArg(int64_t v) : value(v) {}
  DimArg(int v) : value(v) {}
  DimArg(const char* s) : symbol(s) {}
  DimArg(std::string s) : symbol(std::move(s)) {}
  int64_t value = -1;
  std::string symbol;  // non-empty: symbolic
};

class Var : public Operators<Var> {
 public:
  Var() : id_(-1) {}  // no value: an omitted optional input of op()
  bool defined() const { return state_ != nullptr; }
  DType dtype() const;
  int rank() const;
  std::string dim(int axis) const;                   // the axis as text: "64", "batch", "(seq + 2)"
  std::optional<int64_t> dim_value(int axis) const;  // the extent when it is fixed
  std::string shape_string() const;                  // "[batch,seq,384]"

  // The operators (onemodel/operators.h) come from Operators<Var>; each appends one node.
  static Var apply(const Var& self, std::string_view op, std::vector<Var> inputs, std::vector<Attr> attrs);
  static Var int64s(const Var& self, const std::vector<int64_t>& values);

  Var(std::shared_ptr<build::State> state, int id) : state_(std::move(state)), id_(id) {}
  const std::shared_ptr<build::State>& state() const { return state_; }
  int id() const { return id_; }

 private:
  std::shared_ptr<build::State> state_;
  int id_;
};

// The extents a compiled model's input takes: fixes its symbolic axes.
struct InputSpec {
  std::string name;
  std::vector<int64_t> dims;
};

// A compiled model: a Session plus the default values of the builder's data-carrying leaves.
class BuiltModel {
 public:
  BuiltModel(Session session, std::vector<NamedTensor> defaults)
      : session_(std::move(session)), defaults_(std::move(defaults)) {}
  const Session& session() const { return session_; }
  const std::vector<NamedTensor>& defaults() const { return defaults_; }
  // Inputs by name; a leaf not given takes its default. Outputs in the order compile() named them.
  std::vector<Tensor> run(std::span<const NamedTensor> inputs = {}) const;
  std::vector<Tensor> run(std::initializer_list<NamedTensor> inputs) const {
    return run(std::span<const NamedTensor>(inputs.begin(), inputs.size()));
  }

 private:
  Session session_;
  std::vector<NamedTensor> defaults_;
};

using Outputs = std::vector<std::pair<std::string, Var>>;

class GraphBuilder {
 public:
  // `opset`: the ai.onnx opset of the built graph (20 or later: Gelu is an opset-20 operator).
  explicit GraphBuilder(int64_t opset = 20);

  // A graph input without data; dims are extents or symbol names (the same name is the same extent).
  Var input(const std::string& name, DType dtype, const std::vector<DimArg>& dims);
  // A constant (an initializer when exported); `name` empty: named by position.
  Var constant(const Tensor& value, const std::string& name = "");
  // An input that carries data: compiled models run without it (the data is its default) or with another value.
  // `axis_names[i]` non-empty makes axis i symbolic, so one compiled model takes other extents there.
  Var leaf(const std::string& name, const Tensor& value, const std::vector<std::string>& axis_names = {});
  // Any operator of the table by ONNX name, for operators without a method (LSTM, GRU, ...). Omitted optional
  // inputs are Var(). Returns `num_outputs` values.
  std::vector<Var> op(std::string_view op_type, const std::vector<Var>& inputs, const std::vector<Attr>& attrs = {},
                      int num_outputs = 1);
  Var concat(const std::vector<Var>& values, int64_t axis);

  // ONNX ModelProto bytes of what `outputs` need (unused values and nodes are pruned); deterministic.
  std::string to_onnx(const Outputs& outputs) const;
  // The same model in the OneModel file format (docs/format.md), deterministic as well.
  std::vector<std::byte> to_onemodel(const Outputs& outputs) const;
  // The bytes compile() loads: `specs` checked and fixed on the inputs (Error(Compile)), leaves written as plain
  // inputs (their data is the caller's default to add; our runtime treats an input's initializer as constant).
  std::string compiled_onnx(const Outputs& outputs, const std::vector<InputSpec>& specs = {}) const;
  // The value with this id (Var::id()), for bindings that pass ids; Error(InvalidArgument) when out of range.
  Var value(int id) const;
  // A session of what `outputs` need; `specs` fix symbolic axes of the inputs they name.
  BuiltModel compile(const Outputs& outputs, const SessionOptions& options = {},
                     const std::vector<InputSpec>& specs = {}) const;

  const std::shared_ptr<build::State>& state() const { return state_; }

 private:
  friend struct BuilderAccess;
  explicit GraphBuilder(std::shared_ptr<build::State> state) : state_(std::move(state)) {}
  std::shared_ptr<build::State> state_;
};

}  // namespace onemodel
