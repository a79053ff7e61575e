// Arithmetic on two broadcast inputs (ops-elementwise.md): Add, Sub, Mul, Div (7+), Mod (10+), Pow (7+),
// BitShift (11+) and BitwiseAnd/Or/Xor (18+). Floats: each element is one correctly rounded IEEE operation
// (f16 in float, rounded once), so fast and exact differ only in NaN bits. Integers wrap; Div truncates;
// x/0 and x%0 are 0; MIN/-1 wraps to MIN and MIN%-1 is 0 (the spec's choice where C would trap).
// Pow is the one inexact operator: it calls the platform pow.
#include "ops/elementwise_common.h"
#include "ops/ops.h"

namespace onemodel::rt {
namespace {

using namespace ew;

template <class T>
T int_div(T a, T b) {
  if (b == 0) return T{0};
  if constexpr (std::is_signed_v<T>) {
    if (a == std::numeric_limits<T>::min() && b == T(-1)) return a;
  }
  return static_cast<T>(a / b);
}

// Truncated remainder (sign of the dividend), 0 for the trapping cases.
template <class T>
T int_rem(T a, T b) {
  if (b == 0) return T{0};
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return T{0};
  }
  return static_cast<T>(a % b);
}

// ---- Pow: base and exponent of different types ----
constexpr uint32_t kPowBase = bit(DType::F16) | bit(DType::F32) | bit(DType::F64) | bit(DType::I32) | bit(DType::I64);
constexpr uint32_t kPowExp = kPowBase | bit(DType::U32) | bit(DType::U64);

template <class B, class E>
B pow_one(B x, E e) {
  if constexpr (std::is_same_v<B, float> || std::is_same_v<B, double>) {
    const auto y = static_cast<B>(e);
    return y == B(2) ? x * x : std::pow(x, y);
  } else {
    const double xd = static_cast<double>(x), y = static_cast<double>(e);
    return saturate_cast<B>(y == 2.0 ? xd * xd : std::pow(xd, y));
  }
}

bool exponent_is_two(const InputMeta& e) {
  if (!e.value) return false;
  bool all = true;
  const Tensor& t = *e.value;
  if (t.dtype() == DType::F16) {
    for (int64_t i = 0; i < t.numel(); ++i)
      all = all && half_to_float(static_cast<const uint16_t*>(t.raw())[i]) == 2.0f;
    return all;
  }
  const bool known = visit_numeric(t.dtype(), [&](auto z) {
    using T = decltype(z);
    for (int64_t i = 0; i < t.numel(); ++i) all = all && static_cast<const T*>(t.raw())[i] == T(2);
  });
  return known && all;
}

class PowKernel final : public Kernel {
 public:
  // Exact only where it is a plain product: an exponent known at plan time whose every element is 2 gives
  // x * x, one rounding (ops-elementwise.md). That is how exported models square (variances in LayerNorm
  // decompositions, STFT magnitudes), so they run in exact mode; any other exponent is refused when the plan
  // learns it, with ExactModeUnavailable naming the node, like the float64 log reductions.
  PowKernel() : Kernel(KernelFlags{.exact = true}) {}

  void infer(InferContext& ctx) const override {
    require_inputs(ctx, 2);
    check_type(ctx.info, ctx.input(0).dtype, kPowBase, "base type");
    check_type(ctx.info, ctx.input(1).dtype, kPowExp, "exponent type");
    if (ctx.exact && !exponent_is_two(ctx.input(1)))
      ctx.fail(ErrorKind::ExactModeUnavailable,
               "Pow is exact only with a constant exponent of 2 (x * x); this exponent is not known to be 2 when the "
               "plan is made. Use fast mode");
    const std::array<const Shape*, 2> s{&ctx.input(0).shape, &ctx.input(1).shape};
    ctx.set_output(0, ctx.input(0).dtype, broadcast_all(ctx.info, s, ErrorKind::InvalidModel));
  }

  void run(RunContext& ctx) const override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    Tensor& out = ctx.output(0);
    const std::array<const Shape*, 2> s{&a.shape(), &b.shape()};
    check_run_shapes(ctx, s, out);
    if (out.dtype() != a.dtype()) ctx.fail(ErrorKind::InvalidInput, "input type differs from the planned output");
    bool ok = false;
    visit<kPowBase>(a.dtype(), [&](auto btag) {
      ok = visit<kPowExp>(b.dtype(), [&](auto etag) {
        using EB = Elem<decltype(btag)>;
        using EE = Elem<decltype(etag)>;
        const auto* pa = in_ptr<typename EB::Store>(a);
        const auto* pb = in_ptr<typename EE::Store>(b);
        auto* po = out_ptr<typename EB::Store>(out);
        broadcast_n<2>(out.shape(), s, [&](int64_t o, const auto& off, int64_t n, const auto& st) {
          for (int64_t k = 0; k < n; ++k)
            po[o + k] =
                EB::store(pow_one(EB::load(pa[off[0] + k * st[0]]), EE::load(pb[off[1] + k * st[1]])), ctx.exact);
        });
      });
    });
    if (!ok)
      ctx.fail(ErrorKind::Unsupported,
               "Pow of " + type_str(a.dtype()) + " by " + type_str(b.dtype()) + " is not supported");
  }
};

}  // namespace

std::unique_ptr<Kernel> make_add(const NodeInfo&) {
  return binary<kNumeric>([](auto a, auto b) {
    if constexpr (std::is_integral_v<decltype(a)>)
      return wrap_add(a, b);
    else
      return a + b;
  });
}
std::unique_ptr<Kernel> make_sub(const NodeInfo&) {
  return binary<kNumeric>([](auto a, auto b) {
    if constexpr (std::is_integral_v<decltype(a)>)
      return wrap_sub(a, b);
    else
      return a - b;
  });
}
std::unique_ptr<Kernel> make_mul(const NodeInfo&) {
  return binary<kNumeric>([](auto a, auto b) {
    if constexpr (std::is_integral_v<decltype(a)>)
      return wrap_mul(a, b);
    else
      return a * b;
  });
}
std::unique_ptr<Kernel> make_div(const NodeInfo&) {
  return binary<kNumeric>([](auto a, auto b) {
    if constexpr (std::is_integral_v<decltype(a)>)
      return int_div(a, b);
    else
      return a / b;
  });
}

std::unique_ptr<Kernel> make_mod(const NodeInfo& info) {
  const int64_t fmod = info.get_int("fmod", 0);
  if (fmod != 0 && fmod != 1) info.fail(ErrorKind::InvalidModel, "fmod must be 0 or 1, got " + std::to_string(fmod));
  if (fmod == 1)
    return binary<kNumeric>([](auto a, auto b) {
      using T = decltype(a);
      if constexpr (std::is_integral_v<T>)
        return int_rem(a, b);
      else
        return std::fmod(a, b);
    });
  // Floor modulus (sign of the divisor); floats need fmod = 1 and are reported by the type check.
  return binary<kInts>([](auto a, auto b) {
    using T = decltype(a);
    T r = int_rem(a, b);
    if constexpr (std::is_signed_v<T>) {
      if (r != 0 && ((r < 0) != (b < 0))) r = wrap_add(r, b);
    }
    return r;
  });
}

std::unique_ptr<Kernel> make_pow(const NodeInfo&) { return std::make_unique<PowKernel>(); }

std::unique_ptr<Kernel> make_bit_shift(const NodeInfo& info) {
  const std::string dir = info.get_string("direction", "");
  if (dir != "LEFT" && dir != "RIGHT")
    info.fail(ErrorKind::InvalidModel, "direction must be LEFT or RIGHT, got '" + dir + "'");
  // A shift by the width or more gives 0 (C++ leaves it undefined).
  if (dir == "LEFT")
    return binary<kUnsigned>([](auto a, auto b) {
      using T = decltype(a);
      return b >= sizeof(T) * 8 ? T{0} : static_cast<T>(a << b);
    });
  return binary<kUnsigned>([](auto a, auto b) {
    using T = decltype(a);
    return b >= sizeof(T) * 8 ? T{0} : static_cast<T>(a >> b);
  });
}

std::unique_ptr<Kernel> make_bitwise_and(const NodeInfo&) {
  return binary<kInts>([](auto a, auto b) { return static_cast<decltype(a)>(a & b); });
}
std::unique_ptr<Kernel> make_bitwise_or(const NodeInfo&) {
  return binary<kInts>([](auto a, auto b) { return static_cast<decltype(a)>(a | b); });
}
std::unique_ptr<Kernel> make_bitwise_xor(const NodeInfo&) {
  return binary<kInts>([](auto a, auto b) { return static_cast<decltype(a)>(a ^ b); });
}

}  // namespace onemodel::rt
