// Add, Sub, Mul, Div (opset 7+): NumPy multidirectional broadcasting over f16, f32, f64 and every integer
// type (ops-elementwise.md). Each output element is one correctly rounded IEEE operation, so fast and exact
// differ only in NaN bits, which exact mode canonicalises. Integers wrap; Div truncates, x/0 = 0 and
// MIN/-1 = MIN. Half precision computes in float32 and rounds once (exact for + - * /).
#include <limits>
#include <type_traits>

#include "ops/common.h"
#include "ops/ops.h"

namespace onemodel::rt {
namespace {

enum class BinOp { Add, Sub, Mul, Div };

template <class T>
T apply_int(BinOp op, T a, T b) {
  // Arithmetic on uint64_t wraps by definition; converting back to T keeps the low bits (C++20).
  const auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  switch (op) {
    case BinOp::Add: return static_cast<T>(ua + ub);
    case BinOp::Sub: return static_cast<T>(ua - ub);
    case BinOp::Mul: return static_cast<T>(ua * ub);
    case BinOp::Div:
      if (b == 0) return T{0};
      if constexpr (std::is_signed_v<T>) {
        if (a == std::numeric_limits<T>::min() && b == T(-1)) return a;
      }
      return static_cast<T>(a / b);
  }
  return T{0};
}

template <class T>
T apply_float(BinOp op, T a, T b) {
  switch (op) {
    case BinOp::Add: return a + b;
    case BinOp::Sub: return a - b;
    case BinOp::Mul: return a * b;
    case BinOp::Div: return a / b;
  }
  return a;
}

template <class T>
void run_typed(BinOp op, bool exact, const Tensor& a, const Tensor& b, Tensor& out) {
  const T* pa = a.data<T>().data();
  const T* pb = b.data<T>().data();
  T* po = out.mutable_data<T>().data();
  broadcast_loop(out.shape(), a.shape(), b.shape(),
                 [&](int64_t o, int64_t ia, int64_t ib, int64_t n, int64_t sa, int64_t sb) {
                   for (int64_t k = 0; k < n; ++k) {
                     const T x = pa[ia + k * sa], y = pb[ib + k * sb];
                     if constexpr (std::is_floating_point_v<T>) {
                       const T r = apply_float(op, x, y);
                       po[o + k] = exact ? kernels::canon(r) : r;
                     } else {
                       po[o + k] = apply_int(op, x, y);
                     }
                   }
                 });
}

void run_half(BinOp op, bool exact, const Tensor& a, const Tensor& b, Tensor& out) {
  const auto* pa = static_cast<const uint16_t*>(a.raw());
  const auto* pb = static_cast<const uint16_t*>(b.raw());
  auto* po = static_cast<uint16_t*>(out.raw_mut());
  broadcast_loop(out.shape(), a.shape(), b.shape(),
                 [&](int64_t o, int64_t ia, int64_t ib, int64_t n, int64_t sa, int64_t sb) {
                   for (int64_t k = 0; k < n; ++k) {
                     const float r = apply_float(op, half_to_float(pa[ia + k * sa]), half_to_float(pb[ib + k * sb]));
                     po[o + k] = (exact && r != r) ? uint16_t{0x7E00} : float_to_half(r);
                   }
                 });
}

class BinaryKernel final : public Kernel {
 public:
  explicit BinaryKernel(BinOp op) : Kernel(KernelFlags{.exact = true, .in_place_input = 0}), op_(op) {}

  void infer(InferContext& ctx) const override {
    if (ctx.inputs.size() != 2 || !ctx.has_input(0) || !ctx.has_input(1))
      ctx.fail(ErrorKind::InvalidModel, "expects exactly two inputs");
    const DType t = ctx.input(0).dtype;
    if (ctx.input(1).dtype != t)
      ctx.fail(ErrorKind::InvalidModel, "input types differ: " + type_str(t) + " and " + type_str(ctx.input(1).dtype));
    if (!supported(t)) ctx.fail(ErrorKind::Unsupported, "element type " + type_str(t) + " is not supported");
    Shape s;
    try {
      s = Shape::broadcast(ctx.input(0).shape, ctx.input(1).shape);
    } catch (const Error&) {
      ctx.fail(ErrorKind::InvalidModel, "inputs of shapes " + ctx.input(0).shape.to_string() + " and " +
                                            ctx.input(1).shape.to_string() + " do not broadcast");
    }
    ctx.set_output(0, t, s);
  }

  void run(RunContext& ctx) const override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    Tensor& out = ctx.output(0);
    Shape s;
    try {
      s = Shape::broadcast(a.shape(), b.shape());
    } catch (const Error&) {
      ctx.fail(ErrorKind::InvalidInput, "inputs of shapes " + a.shape().to_string() + " and " +
                                            b.shape().to_string() + " do not broadcast");
    }
    if (s != out.shape() || a.dtype() != b.dtype() || out.dtype() != a.dtype())
      ctx.fail(ErrorKind::InvalidInput, "inputs do not match the planned output " + out.shape().to_string());
    if (a.dtype() == DType::F16) return run_half(op_, ctx.exact, a, b, out);
    if (!visit_numeric(a.dtype(), [&](auto tag) { run_typed<decltype(tag)>(op_, ctx.exact, a, b, out); }))
      ctx.fail(ErrorKind::Unsupported, "element type " + type_str(a.dtype()) + " is not supported");
  }

 private:
  static bool supported(DType t) {
    return t == DType::F16 || (t != DType::Bool && t != DType::BF16 && dtype_is_stored(t));
  }
  BinOp op_;
};

}  // namespace

std::unique_ptr<Kernel> make_add(const NodeInfo&) { return std::make_unique<BinaryKernel>(BinOp::Add); }
std::unique_ptr<Kernel> make_sub(const NodeInfo&) { return std::make_unique<BinaryKernel>(BinOp::Sub); }
std::unique_ptr<Kernel> make_mul(const NodeInfo&) { return std::make_unique<BinaryKernel>(BinOp::Mul); }
std::unique_ptr<Kernel> make_div(const NodeInfo&) { return std::make_unique<BinaryKernel>(BinOp::Div); }

}  // namespace onemodel::rt
