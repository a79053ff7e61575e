// Test-only operators and a tiny graph builder, so plans can be tested for behaviour the real operator set
// does not exercise yet (non-exact kernels, run-time values, data-dependent outputs, in-place, large
// constant results). Each kernel is a few obvious lines; counters record how often run() was called.
#pragma once
#include <atomic>
#include <cmath>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "attr_util.h"
#include "ir/graph.h"
#include "runtime/kernel.h"

namespace onemodel::rt::fake {

inline std::atomic<int> add_runs{0}, grow_runs{0};
inline std::atomic<bool> last_add_in_place{false};

// y = x + k (float attribute "k"); in place when the int attribute "inplace" is 1.
class AddK final : public Kernel {
 public:
  AddK(float k, bool in_place) : Kernel(KernelFlags{.exact = true, .in_place_input = in_place ? 0 : -1}), k_(k) {}
  void infer(InferContext& c) const override { c.set_output(0, DType::F32, c.input(0).shape); }
  void run(RunContext& c) const override {
    ++add_runs;
    auto x = c.input(0).data<float>();
    auto y = c.output(0).mutable_data<float>();
    last_add_in_place = static_cast<const void*>(x.data()) == static_cast<const void*>(y.data());
    for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] + k_;
  }

 private:
  float k_;
};

// y = a + b, same shapes; output may reuse a.
class Sum2 final : public Kernel {
 public:
  Sum2() : Kernel(KernelFlags{.exact = true, .in_place_input = 0}) {}
  void infer(InferContext& c) const override {
    if (c.input(0).shape != c.input(1).shape) c.fail(ErrorKind::InvalidInput, "shapes differ");
    c.set_output(0, DType::F32, c.input(0).shape);
  }
  void run(RunContext& c) const override {
    auto a = c.input(0).data<float>(), b = c.input(1).data<float>();
    auto y = c.output(0).mutable_data<float>();
    for (size_t i = 0; i < a.size(); ++i) y[i] = a[i] + b[i];
  }
};

// Element-wise cos without an exact flavour.
class FakeCos final : public Kernel {
 public:
  FakeCos() : Kernel(KernelFlags{}) {}
  void infer(InferContext& c) const override { c.set_output(0, DType::F32, c.input(0).shape); }
  void run(RunContext& c) const override {
    auto x = c.input(0).data<float>();
    auto y = c.output(0).mutable_data<float>();
    for (size_t i = 0; i < x.size(); ++i) y[i] = std::cos(x[i]);
  }
};

// Repeats its input 20000 times: a result far larger than its input and than 64 KiB.
class Grow final : public Kernel {
 public:
  Grow() : Kernel(KernelFlags{.exact = true}) {}
  void infer(InferContext& c) const override { c.set_output(0, DType::F32, Shape{c.input(0).shape.numel() * 20000}); }
  void run(RunContext& c) const override {
    ++grow_runs;
    auto x = c.input(0).data<float>();
    auto y = c.output(0).mutable_data<float>();
    for (size_t i = 0; i < y.size(); ++i) y[i] = x[i % x.size()];
  }
};

// Output 0 = input 0 viewed with the shape held by input 1 (I64); needs that value.
class ReshapeTo final : public Kernel {
 public:
  ReshapeTo() : Kernel(KernelFlags{.exact = true, .view_of_input = true}) {}
  void infer(InferContext& c) const override {
    if (!c.input(1).value) {
      c.require_runtime_values();
      return;
    }
    auto d = c.input(1).value->data<int64_t>();
    Shape s{std::span<const int64_t>(d.data(), d.size())};
    if (s.numel() != c.input(0).shape.numel()) c.fail(ErrorKind::InvalidInput, "element count differs");
    c.set_output(0, c.input(0).dtype, s);
  }
  void run(RunContext& c) const override { c.fail(ErrorKind::Internal, "a view kernel was run"); }
};

// The positive elements of x: output shape depends on values.
class Positives final : public Kernel {
 public:
  Positives() : Kernel(KernelFlags{.exact = true, .outputs_data_dependent = true}) {}
  void infer(InferContext& c) const override { c.fail(ErrorKind::Internal, "infer called"); }
  void run(RunContext& c) const override {
    auto x = c.input(0).data<float>();
    int64_t n = 0;
    for (float v : x) n += v > 0;
    Tensor& y = c.allocate_output(0, DType::F32, Shape{n});
    auto out = y.mutable_data<float>();
    size_t k = 0;
    for (float v : x)
      if (v > 0) out[k++] = v;
  }
};

// y = x; its prepare() waits while `gate_closed` when x has `gate_extent` elements (a slow plan build), and
// fails with InvalidInput when x has `fail_extent` elements (a build that fails).
inline std::atomic<bool> gate_closed{false};
inline std::atomic<int> gate_waiting{0}, gate_prepares{0};
inline std::atomic<int64_t> gate_extent{-1}, fail_extent{-1};
class Gate final : public Kernel {
 public:
  Gate() : Kernel(KernelFlags{.exact = true}) {}
  void infer(InferContext& c) const override { c.set_output(0, DType::F32, c.input(0).shape); }
  std::shared_ptr<const void> prepare(PrepareContext& c) const override {
    ++gate_prepares;
    const int64_t n = c.inputs[0].shape.numel();
    if (n == fail_extent) c.info.fail(ErrorKind::InvalidInput, "gate refuses this shape");
    if (n == gate_extent) {
      ++gate_waiting;
      while (gate_closed) std::this_thread::yield();
      --gate_waiting;
    }
    return nullptr;
  }
  void run(RunContext& c) const override {
    auto x = c.input(0).data<float>();
    auto y = c.output(0).mutable_data<float>();
    for (size_t i = 0; i < x.size(); ++i) y[i] = x[i];
  }
};

inline std::unique_ptr<Kernel> make_add(const NodeInfo& i) {
  return std::make_unique<AddK>(i.get_float("k", 0.0f), i.get_int("inplace", 0) == 1);
}
inline std::unique_ptr<Kernel> make_sum(const NodeInfo&) { return std::make_unique<Sum2>(); }
inline std::unique_ptr<Kernel> make_cos(const NodeInfo&) { return std::make_unique<FakeCos>(); }
inline std::unique_ptr<Kernel> make_grow(const NodeInfo&) { return std::make_unique<Grow>(); }
inline std::unique_ptr<Kernel> make_reshape(const NodeInfo&) { return std::make_unique<ReshapeTo>(); }
inline std::unique_ptr<Kernel> make_positives(const NodeInfo&) { return std::make_unique<Positives>(); }
inline std::unique_ptr<Kernel> make_gate(const NodeInfo&) { return std::make_unique<Gate>(); }

inline const OpDef kOps[] = {
    {"", "AddK", 1, 30, make_add},
    {"", "Sum2", 1, 30, make_sum},
    {"", "FakeCos", 1, 30, make_cos},
    {"", "FakeSin", 1, 30, make_cos},
    {"", "Grow", 1, 30, make_grow},
    {"", "ReshapeTo", 1, 30, make_reshape},
    {"", "Positives", 1, 30, make_positives},
    {"", "Gate", 1, 30, make_gate},
};

inline const OpDef* lookup(std::string_view domain, std::string_view op, int64_t opset) {
  for (const OpDef& d : kOps)
    if (d.domain == domain && d.op_type == op && opset >= d.min_opset && opset <= d.max_opset) return &d;
  return nullptr;
}

// Builds an ir::Model by names.
class Builder {
 public:
  Builder() : model_(std::make_shared<ir::Model>()) {
    model_->graph = std::make_shared<ir::Graph>();
    model_->opset_imports.push_back({"", 1});
  }
  ir::Graph& g() { return *model_->graph; }

  int value(const std::string& name) {
    int v = g().find_value(name);
    if (v >= 0) return v;
    ir::Value val;
    val.name = name;
    g().values.push_back(val);
    return static_cast<int>(g().values.size() - 1);
  }
  // dims: -1 becomes the symbolic dimension "n".
  Builder& input(const std::string& name, DType t, std::vector<int64_t> dims) {
    int v = value(name);
    ir::Value& val = g().values[static_cast<size_t>(v)];
    val.is_input = true;
    val.type.kind = ValueKind::Tensor;
    val.type.elem = t;
    val.type.has_shape = true;
    for (int64_t d : dims) val.type.dims.push_back(d < 0 ? Dim{-1, "n"} : Dim{d, ""});
    g().inputs.push_back(v);
    return *this;
  }
  Builder& init(const std::string& name, Tensor t) {
    int v = value(name);
    auto tv = std::make_shared<ir::TensorValue>();
    tv->name = name;
    tv->dtype = t.dtype();
    tv->dims = t.shape().to_vector();
    tv->data = std::move(t);
    g().values[static_cast<size_t>(v)].initializer = tv;
    g().initializers.push_back(v);
    return *this;
  }
  Builder& node(const std::string& op, std::vector<std::string> ins, std::vector<std::string> outs,
                std::vector<ir::Attribute> attrs = {}, const std::string& domain = "") {
    ir::Node n;
    n.name = "n" + std::to_string(g().nodes.size()) + "_" + op;
    n.op_type = op;
    n.domain = domain;
    n.opset = 1;
    n.attributes = std::move(attrs);
    for (auto& i : ins) n.inputs.push_back(i.empty() ? ir::kNoValue : value(i));
    int idx = static_cast<int>(g().nodes.size());
    for (size_t o = 0; o < outs.size(); ++o) {
      int v = value(outs[o]);
      n.outputs.push_back(v);
      g().values[static_cast<size_t>(v)].producer = idx;
      g().values[static_cast<size_t>(v)].producer_output = static_cast<int>(o);
    }
    g().nodes.push_back(std::move(n));
    return *this;
  }
  Builder& output(const std::string& name) {
    g().outputs.push_back(value(name));
    return *this;
  }
  std::shared_ptr<const ir::Model> model() const { return model_; }

 private:
  std::shared_ptr<ir::Model> model_;
};

}  // namespace onemodel::rt::fake
