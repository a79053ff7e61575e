// Activation functions (ops-elementwise.md "Function definitions"): Relu, Gelu, LeakyRelu, HardSigmoid,
// HardSwish, Softsign, ThresholdedRelu, Shrink and PRelu are compares, selects and rounded IEEE operations in
// a fixed order (Gelu on the vector kernels of kernels/transcendental.h), hence exact. Elu, Selu, Celu and Softplus use
// the exact exponential and logarithm and are exact too (float32 only); so are Mish and Swish (ops-newer.md section
// 2). Attribute defaults are the ONNX ones.
#include "kernels/exact_math.h"
#include "kernels/transcendental.h"
#include "ops/array_unary.h"
#include "ops/elementwise_common.h"
#include "ops/ops.h"

namespace onemodel::rt {

using namespace ew;

std::unique_ptr<Kernel> make_relu(const NodeInfo&) {
  return unary<kNumeric>([](auto x) { return relu_value(x); });
}

std::unique_ptr<Kernel> make_gelu(const NodeInfo& info) {
  const std::string approx = info.get_string("approximate", "none");
  if (approx == "none") return array_unary(&kern::gelu_erf_f32);
  if (approx == "tanh") return array_unary(&kern::gelu_tanh_f32);
  info.fail(ErrorKind::InvalidModel, "approximate must be 'none' or 'tanh', got '" + approx + "'");
}

std::unique_ptr<Kernel> make_leaky_relu(const NodeInfo& info) {
  const float alpha = info.get_float("alpha", 0.01f);
  return unary<kFloats>([alpha](auto x) { return leaky_relu_value(x, alpha); });
}

std::unique_ptr<Kernel> make_hard_sigmoid(const NodeInfo& info) {
  const float alpha = info.get_float("alpha", 0.2f), beta = info.get_float("beta", 0.5f);
  return unary<kFloats>([alpha, beta](auto x) { return hard_sigmoid_value(x, alpha, beta); });
}

std::unique_ptr<Kernel> make_hard_swish(const NodeInfo&) {
  return unary<kFloats>([](auto x) { return hard_swish_value(x); });
}

std::unique_ptr<Kernel> make_softsign(const NodeInfo&) {
  return unary<kFloats>([](auto x) {
    using T = decltype(x);
    return x / (T(1) + std::fabs(x));
  });
}

std::unique_ptr<Kernel> make_thresholded_relu(const NodeInfo& info) {
  const float alpha = info.get_float("alpha", 1.0f);
  return unary<kFloats>([alpha](auto x) {
    using T = decltype(x);
    return x > static_cast<T>(alpha) ? x : T(0);
  });
}

// Integers compute in double and convert back (bias and lambd are floats).
std::unique_ptr<Kernel> make_shrink(const NodeInfo& info) {
  const float bias = info.get_float("bias", 0.0f), lambd = info.get_float("lambd", 0.5f);
  return unary<kNumeric>([bias, lambd](auto x) {
    using T = decltype(x);
    using W = std::conditional_t<std::is_floating_point_v<T>, T, double>;
    const W v = static_cast<W>(x), b = static_cast<W>(bias), l = static_cast<W>(lambd);
    if (v < -l) return static_cast<T>(v + b);
    if (v > l) return static_cast<T>(v - b);
    return T(0);
  });
}

std::unique_ptr<Kernel> make_prelu(const NodeInfo&) {
  return binary<kNumeric>([](auto x, auto slope) {
    using T = decltype(x);
    if constexpr (std::is_integral_v<T>)
      return x < T(0) ? wrap_mul(slope, x) : x;
    else
      return x < T(0) ? slope * x : x;
  });
}

// ---- activations over the exact exponential and logarithm (float32, like Exp and Log) ----
// Each output is a fixed sequence of rounded IEEE operations and exact-transcendentals.md functions, so
// these are exact; the double-precision forms are not served, as for Exp (ops-elementwise.md).

std::unique_ptr<Kernel> make_elu(const NodeInfo& info) {
  const float alpha = info.get_float("alpha", 1.0f);
  return unary<kF32>([alpha](float x) { return x < 0.0f ? alpha * (kern::exact_exp(x) - 1.0f) : x; });
}

std::unique_ptr<Kernel> make_selu(const NodeInfo& info) {
  const float alpha = info.get_float("alpha", 1.67326319217681884765625f);
  const float gamma = info.get_float("gamma", 1.05070102214813232421875f);
  return unary<kF32>(
      [alpha, gamma](float x) { return x > 0.0f ? gamma * x : gamma * (alpha * kern::exact_exp(x) - alpha); });
}

std::unique_ptr<Kernel> make_celu(const NodeInfo& info) {
  const float alpha = info.get_float("alpha", 1.0f);
  if (alpha == 0.0f) info.fail(ErrorKind::InvalidModel, "alpha must not be 0");
  return unary<kF32>([alpha](float x) {
    if (x != x || x > 0.0f) return x;
    return alpha * (kern::exact_exp(x / alpha) - 1.0f);
  });
}

// softplus(x) = max(x, 0) + log1p(exp(-|x|)): neither overflows. log1p(t) is computed as
// log(u) * t / (u - 1) with u = 1 + t rounded (u - 1 is exact, and the quotient corrects the rounding of u),
// which keeps small results that log(1 + t) alone would lose; u == 1 means t < 2^-24 and log1p(t) = t.
namespace {
float softplus_value(float x) {
  if (x != x) return x;
  const float t = kern::exact_exp(x > 0.0f ? -x : x);
  const float u = 1.0f + t;
  const float l = u == 1.0f ? t : kern::exact_log(u) * t / (u - 1.0f);
  return (x > 0.0f ? x : 0.0f) + l;
}
}  // namespace

std::unique_ptr<Kernel> make_softplus(const NodeInfo&) {
  return unary<kF32>([](float x) { return softplus_value(x); });
}

// ---- newer activations (ops-newer.md section 2): float32, and float16 computed in float and rounded once ----

// Mish (opset 18): the ONNX function body Softplus, Tanh, Mul, in that order, on the exact functions above.
// Mish(-inf) is -inf * tanh(+0) = NaN, as the body gives.
std::unique_ptr<Kernel> make_mish(const NodeInfo&) {
  return unary<kF32 | bit(DType::F16)>([](float x) { return x * kern::exact_tanh(softplus_value(x)); });
}

// Swish (opset 24): the ONNX function body Mul(alpha, X), Sigmoid, Mul(X, that), each rounded once.
std::unique_ptr<Kernel> make_swish(const NodeInfo& info) {
  const float alpha = info.get_float("alpha", 1.0f);
  return unary<kF32 | bit(DType::F16)>([alpha](float x) { return x * kern::exact_sigmoid(alpha * x); });
}

}  // namespace onemodel::rt
