// The operator vocabulary of building models in code (docs/model-building.md section 1), written once for the lazy
// builder's Var and the eager tracer's EagerTensor: each method names one ONNX operator with its attributes, and
// the value type V decides what applying it means (append a node; compute now and, while tracing, record it).
// V provides `static V apply(const V& self, std::string_view op, std::vector<V> inputs, std::vector<Attr> attrs)`
// and `static V int64s(const V& self, const std::vector<int64_t>& values)` (an int64 constant beside self).
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onemodel/tensor.h"

namespace onemodel {

// A node attribute, typed as ONNX types it.
struct Attr {
  enum class Type { Int, Float, String, Ints, Floats, Tensor };
  Attr(std::string n, int64_t v) : name(std::move(n)), type(Type::Int), i(v) {}
  Attr(std::string n, int v) : name(std::move(n)), type(Type::Int), i(v) {}
  Attr(std::string n, float v) : name(std::move(n)), type(Type::Float), f(v) {}
  Attr(std::string n, const char* v) : name(std::move(n)), type(Type::String), s(v) {}
  Attr(std::string n, std::string v) : name(std::move(n)), type(Type::String), s(std::move(v)) {}
  Attr(std::string n, std::vector<int64_t> v) : name(std::move(n)), type(Type::Ints), ints(std::move(v)) {}
  Attr(std::string n, std::vector<float> v) : name(std::move(n)), type(Type::Floats), floats(std::move(v)) {}
  Attr(std::string n, Tensor v) : name(std::move(n)), type(Type::Tensor), t(std::move(v)) {}
  std::string name;
  Type type;
  int64_t i = 0;
  float f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  Tensor t;
};

// Convolution and pooling attributes (ONNX Conv / ConvTranspose / MaxPool / AveragePool); empty = the default.
struct ConvAttrs {
  std::vector<int64_t> strides, pads, dilations, kernel_shape, output_padding;
  int64_t group = 1;
  bool ceil_mode = false;          // pools
  bool count_include_pad = false;  // AveragePool
};

template <class V>
class Operators {
 public:
  // Element-wise with numpy broadcasting.
  V add(const V& b) const { return call("Add", {b}); }
  V sub(const V& b) const { return call("Sub", {b}); }
  V mul(const V& b) const { return call("Mul", {b}); }
  V div(const V& b) const { return call("Div", {b}); }
  V pow(const V& b) const { return call("Pow", {b}); }
  V neg() const { return call("Neg", {}); }
  V relu() const { return call("Relu", {}); }
  V sigmoid() const { return call("Sigmoid", {}); }
  V tanh() const { return call("Tanh", {}); }
  V exp() const { return call("Exp", {}); }
  V log() const { return call("Log", {}); }
  V sqrt() const { return call("Sqrt", {}); }
  V abs() const { return call("Abs", {}); }
  V erf() const { return call("Erf", {}); }
  V gelu(bool tanh_approximation = false) const {
    return call("Gelu", {}, {{"approximate", tanh_approximation ? "tanh" : "none"}});
  }
  // Products, normalisations, softmax.
  V matmul(const V& b) const { return call("MatMul", {b}); }
  V softmax(int64_t axis = -1) const { return call("Softmax", {}, {{"axis", axis}}); }
  V log_softmax(int64_t axis = -1) const { return call("LogSoftmax", {}, {{"axis", axis}}); }
  V layer_norm(const V& scale, const V& bias = V(), int64_t axis = -1, float epsilon = 1e-5f) const {
    return call("LayerNormalization", {scale, bias}, {{"axis", axis}, {"epsilon", epsilon}});
  }
  V batch_norm(const V& scale, const V& bias, const V& mean, const V& var, float epsilon = 1e-5f) const {
    return call("BatchNormalization", {scale, bias, mean, var}, {{"epsilon", epsilon}});
  }
  // Convolution and pooling (NCHW; weights [M, C/group, kH, kW]; ConvTranspose weights [C, M/group, kH, kW]).
  V conv(const V& w, const V& b = V(), const ConvAttrs& a = {}) const {
    return call("Conv", {w, b}, window(a, true, false));
  }
  V conv_transpose(const V& w, const V& b = V(), const ConvAttrs& a = {}) const {
    return call("ConvTranspose", {w, b}, window(a, true, false));
  }
  V max_pool(const ConvAttrs& a) const { return call("MaxPool", {}, window(a, false, false)); }
  V average_pool(const ConvAttrs& a) const { return call("AveragePool", {}, window(a, false, true)); }
  // Resize to explicit sizes (every axis); mode "nearest" (asymmetric, floor) or "linear" (half_pixel); any other
  // mode is refused by the operator.
  V resize(const std::vector<int64_t>& sizes, std::string_view mode = "nearest") const {
    const bool nearest = mode == "nearest";
    std::vector<Attr> a{{"coordinate_transformation_mode", nearest ? "asymmetric" : "half_pixel"},
                        {"mode", std::string(mode)}};
    if (nearest) a.emplace_back("nearest_mode", "floor");
    return call("Resize", {V(), V(), ints(sizes)}, std::move(a));
  }
  // Shape and indexing.
  V gather(const V& indices, int64_t axis = 0) const { return call("Gather", {indices}, {{"axis", axis}}); }
  V reduce_sum(const std::vector<int64_t>& axes, bool keepdims = true) const {
    return call("ReduceSum", {ints(axes)}, {{"keepdims", keepdims ? 1 : 0}});
  }
  V reduce_mean(const std::vector<int64_t>& axes, bool keepdims = true) const {
    return call("ReduceMean", {ints(axes)}, {{"keepdims", keepdims ? 1 : 0}});
  }
  V transpose(const std::vector<int64_t>& perm) const { return call("Transpose", {}, {{"perm", perm}}); }
  V reshape(const std::vector<int64_t>& dims) const { return call("Reshape", {ints(dims)}); }  // 0 copies, one -1
  V squeeze(const std::vector<int64_t>& axes) const { return call("Squeeze", {ints(axes)}); }
  V unsqueeze(const std::vector<int64_t>& axes) const { return call("Unsqueeze", {ints(axes)}); }
  V expand(const std::vector<int64_t>& dims) const { return call("Expand", {ints(dims)}); }
  V slice(const std::vector<int64_t>& starts, const std::vector<int64_t>& ends, const std::vector<int64_t>& axes,
          const std::vector<int64_t>& steps = {}) const {
    if (steps.empty()) return call("Slice", {ints(starts), ints(ends), ints(axes)});
    return call("Slice", {ints(starts), ints(ends), ints(axes), ints(steps)});
  }
  V cast(DType to) const { return call("Cast", {}, {{"to", static_cast<int64_t>(to)}}); }
  // The extents as an int64 vector [rank] (docs/model-building.md section 3: Shape chains).
  V shape() const { return call("Shape", {}); }

 private:
  const V& self() const { return static_cast<const V&>(*this); }
  V call(std::string_view op, std::initializer_list<V> rest, std::vector<Attr> attrs = {}) const {
    std::vector<V> in{self()};
    in.insert(in.end(), rest.begin(), rest.end());
    return V::apply(self(), op, std::move(in), std::move(attrs));
  }
  V ints(const std::vector<int64_t>& v) const { return V::int64s(self(), v); }
  static std::vector<Attr> window(const ConvAttrs& a, bool conv, bool average) {
    std::vector<Attr> r;
    if (!conv && average) r.emplace_back("count_include_pad", a.count_include_pad ? 1 : 0);
    if (!conv) r.emplace_back("ceil_mode", a.ceil_mode ? 1 : 0);
    if (!a.dilations.empty()) r.emplace_back("dilations", a.dilations);
    if (conv && a.group != 1) r.emplace_back("group", a.group);
    if (!a.kernel_shape.empty()) r.emplace_back("kernel_shape", a.kernel_shape);
    if (!a.output_padding.empty()) r.emplace_back("output_padding", a.output_padding);
    if (!a.pads.empty()) r.emplace_back("pads", a.pads);
    if (!a.strides.empty()) r.emplace_back("strides", a.strides);
    return r;
  }
};

template <class V>
V operator+(const Operators<V>& a, const V& b) {
  return a.add(b);
}
template <class V>
V operator-(const Operators<V>& a, const V& b) {
  return a.sub(b);
}
template <class V>
V operator*(const Operators<V>& a, const V& b) {
  return a.mul(b);
}
template <class V>
V operator/(const Operators<V>& a, const V& b) {
  return a.div(b);
}

}  // namespace onemodel
