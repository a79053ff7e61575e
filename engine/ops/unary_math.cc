// One-input arithmetic (ops-elementwise.md): Neg, Abs, Sign, Reciprocal, Sqrt, Floor, Ceil, Round, the fp32
// transcendentals Exp, Log, Tanh, Sigmoid, Erf (exact-transcendentals.md, on the vector kernels of
// kernels/transcendental.h: the spec's bits in exact mode, fused Horner steps and the fast exp in fast mode),
// IsNaN, IsInf, Not, BitwiseNot, and the trigonometric/hyperbolic functions (platform libm: fast mode only).
// Floor, Ceil, Sqrt, Reciprocal and Round are single IEEE operations, so their exact flavour only fixes NaN bits.
#include "kernels/transcendental.h"
#include "ops/array_unary.h"
#include "ops/elementwise_common.h"
#include "ops/ops.h"

namespace onemodel::rt {

using namespace ew;

std::unique_ptr<Kernel> make_neg(const NodeInfo&) {
  return unary<kSigned | kFloats>([](auto x) {
    using T = decltype(x);
    if constexpr (std::is_integral_v<T>)
      return wrap_sub(T{0}, x);
    else
      return -x;
  });
}

std::unique_ptr<Kernel> make_abs(const NodeInfo&) {
  return unary<kNumeric>([](auto x) {
    using T = decltype(x);
    if constexpr (std::is_floating_point_v<T>)
      return std::fabs(x);
    else if constexpr (std::is_signed_v<T>)
      return x < 0 ? wrap_sub(T{0}, x) : x;  // |MIN| wraps to MIN
    else
      return x;
  });
}

std::unique_ptr<Kernel> make_sign(const NodeInfo&) {
  return unary<kNumeric>([](auto x) {
    using T = decltype(x);
    if constexpr (std::is_floating_point_v<T>) {
      if (x != x) return x;
    }
    return x > T(0) ? T(1) : (x < T(0) ? static_cast<T>(-1) : T(0));  // both zeros give +0
  });
}

std::unique_ptr<Kernel> make_reciprocal(const NodeInfo&) {
  return unary<kFloats>([](auto x) { return decltype(x)(1) / x; });
}
std::unique_ptr<Kernel> make_sqrt(const NodeInfo&) {
  return unary<kFloats>([](auto x) { return std::sqrt(x); });
}
std::unique_ptr<Kernel> make_floor(const NodeInfo&) {
  return unary<kFloats>([](auto x) { return std::floor(x); });
}
std::unique_ptr<Kernel> make_ceil(const NodeInfo&) {
  return unary<kFloats>([](auto x) { return std::ceil(x); });
}
// Half to even, sign of zero kept: nearbyint under the default rounding mode, which the engine never changes.
std::unique_ptr<Kernel> make_round(const NodeInfo&) {
  return unary<kFloats>([](auto x) { return std::nearbyint(x); });
}

std::unique_ptr<Kernel> make_exp(const NodeInfo&) { return array_unary(&kern::exp_f32); }
std::unique_ptr<Kernel> make_log(const NodeInfo&) { return array_unary(&kern::log_f32); }
std::unique_ptr<Kernel> make_tanh(const NodeInfo&) { return array_unary(&kern::tanh_f32); }
std::unique_ptr<Kernel> make_sigmoid(const NodeInfo&) { return array_unary(&kern::sigmoid_f32); }
std::unique_ptr<Kernel> make_erf(const NodeInfo&) { return array_unary(&kern::erf_f32); }

std::unique_ptr<Kernel> make_is_nan(const NodeInfo&) {
  return unary<kFloats>([](auto x) { return x != x; }, true, true);
}
std::unique_ptr<Kernel> make_is_inf(const NodeInfo& info) {
  const bool pos = info.get_int("detect_positive", 1) != 0;
  const bool neg = info.get_int("detect_negative", 1) != 0;
  return unary<kFloats>(
      [pos, neg](auto x) {
        using T = decltype(x);
        return (pos && x == std::numeric_limits<T>::infinity()) || (neg && x == -std::numeric_limits<T>::infinity());
      },
      true, true);
}

std::unique_ptr<Kernel> make_not(const NodeInfo&) {
  return unary<kBool>([](bool x) { return !x; }, true, true);
}
std::unique_ptr<Kernel> make_bitwise_not(const NodeInfo&) {
  return unary<kInts>([](auto x) { return static_cast<decltype(x)>(~x); });
}

// Trigonometric and hyperbolic functions: the platform's libm, which is not bit-reproducible (no exact flavour).
namespace {
template <class F>
std::unique_ptr<Kernel> libm(F f) {
  return unary<kFloats>(f, false);
}
}  // namespace

std::unique_ptr<Kernel> make_sin(const NodeInfo&) {
  return libm([](auto x) { return std::sin(x); });
}
std::unique_ptr<Kernel> make_cos(const NodeInfo&) {
  return libm([](auto x) { return std::cos(x); });
}
std::unique_ptr<Kernel> make_tan(const NodeInfo&) {
  return libm([](auto x) { return std::tan(x); });
}
std::unique_ptr<Kernel> make_asin(const NodeInfo&) {
  return libm([](auto x) { return std::asin(x); });
}
std::unique_ptr<Kernel> make_acos(const NodeInfo&) {
  return libm([](auto x) { return std::acos(x); });
}
std::unique_ptr<Kernel> make_atan(const NodeInfo&) {
  return libm([](auto x) { return std::atan(x); });
}
std::unique_ptr<Kernel> make_sinh(const NodeInfo&) {
  return libm([](auto x) { return std::sinh(x); });
}
std::unique_ptr<Kernel> make_cosh(const NodeInfo&) {
  return libm([](auto x) { return std::cosh(x); });
}
std::unique_ptr<Kernel> make_asinh(const NodeInfo&) {
  return libm([](auto x) { return std::asinh(x); });
}
std::unique_ptr<Kernel> make_acosh(const NodeInfo&) {
  return libm([](auto x) { return std::acosh(x); });
}
std::unique_ptr<Kernel> make_atanh(const NodeInfo&) {
  return libm([](auto x) { return std::atanh(x); });
}

}  // namespace onemodel::rt
