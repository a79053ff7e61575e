// Eager tensors and tracing (docs/model-building.md section 8, after ../shared/spec/onemodel-tracing.md). An
// EagerTensor computes its value at once on the engine's own kernels (fast or exact mode, per thread); while a
// Tracer records on this thread, every operation on a tensor that depends on a traced input is also written as an
// ONNX node, with the shapes the lazy builder states, so the recording is an ordinary graph:
//
//   Tracer tracer = Tracer::begin();
//   EagerTensor x = tracer.input("x", example, {"batch"});      // axis 0 symbolic
//   tracer.parameter("fc.weight", w);
//   EagerTensor y = x.matmul(w).add(b).relu();                 // real values, and two nodes recorded
//   TracedModel m = tracer.finish({{"y", y}});                  // m.onnx: ONNX bytes, opset 20
//
// Eager code reads sizes as plain integers (`sizes()`), so the tracer keeps which axes are symbolic and rewrites
// the shape operands of Reshape and Expand from Shape chains where needed. Everything decided from values is
// refused at the offending call: ErrorKind::DataDependent, InPlaceMutation, SymbolicShape, InvalidUsage,
// UnsupportedOperation.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "onemodel/operators.h"
#include "onemodel/session.h"

namespace onemodel {

namespace build {
struct EagerCell;
class TraceState;
}  // namespace build

// The arithmetic of eager operations made on this thread from now on (Fast by default).
void set_eager_mode(Mode mode);
Mode eager_mode();

class EagerTensor : public Operators<EagerTensor> {
 public:
  EagerTensor() = default;  // no value: an omitted optional input of op()
  // A tensor of these values (copied, so later writes to `value` cannot reach it).
  explicit EagerTensor(const Tensor& value);
  bool defined() const { return cell_ != nullptr; }
  DType dtype() const;
  // The extents, as plain integers, also while tracing (docs/model-building.md section 8: symbolic axes).
  const Shape& sizes() const;
  // The values (a contiguous tensor). DataDependent while a trace records and this tensor depends on its inputs.
  Tensor value() const;
  template <class T>
  std::vector<T> to_vector() const {
    Tensor v = value();
    auto d = v.data<T>();
    return {d.begin(), d.end()};
  }
  // Writes `values` (same type and shape) into this tensor in place. InPlaceMutation while a trace records and this
  // tensor depends on its inputs; a constant the trace captured and that changes fails the trace at finish.
  void assign(const Tensor& values);
  // A copy of the values; while tracing, the same traced value (a copy writes no node).
  EagerTensor clone() const;

  // Any operator of the engine's table by its ONNX name (LSTM, GRU, ...); V() for an omitted optional input.
  static std::vector<EagerTensor> op(std::string_view op_type, const std::vector<EagerTensor>& inputs,
                                     const std::vector<Attr>& attrs = {}, int num_outputs = 1);
  // For Operators<EagerTensor> (onemodel/operators.h).
  static EagerTensor apply(const EagerTensor& self, std::string_view op, std::vector<EagerTensor> inputs,
                           std::vector<Attr> attrs);
  static EagerTensor int64s(const EagerTensor& self, const std::vector<int64_t>& values);

  explicit EagerTensor(std::shared_ptr<build::EagerCell> cell) : cell_(std::move(cell)) {}
  const std::shared_ptr<build::EagerCell>& cell() const { return cell_; }

 private:
  std::shared_ptr<build::EagerCell> cell_;
};

struct TracedModel {
  std::string onnx;  // ModelProto bytes (opset 20, IR version 9), deterministic
  // The same model in the OneModel file format (docs/format.md).
  std::vector<std::byte> to_onemodel() const;
};

class Tracer {
 public:
  // Starts recording on this thread; InvalidUsage when a trace records here already.
  static Tracer begin();
  Tracer(Tracer&&) noexcept;
  Tracer& operator=(Tracer&&) noexcept;
  ~Tracer();  // stops recording if finish() was not called

  // A graph input with `example`'s type and values; axis_names[i] non-empty makes axis i symbolic (its example
  // size must be at least 2 and differ from every other symbol's: InvalidUsage).
  EagerTensor input(const std::string& name, const Tensor& example, const std::vector<std::string>& axis_names = {});
  // Names a weight: when the trace captures it, its initializer has this name.
  void parameter(const std::string& name, const EagerTensor& weight);
  // The recording, pruned to what `outputs` need, with the outputs so named; stops recording. InvalidUsage for an
  // output that depends on no input, InPlaceMutation when a captured constant changed during the trace.
  TracedModel finish(const std::vector<std::pair<std::string, EagerTensor>>& outputs);

 private:
  explicit Tracer(std::shared_ptr<build::TraceState> s) : state_(std::move(s)) {}
  std::shared_ptr<build::TraceState> state_;
};

}  // namespace onemodel
