// Comparisons, boolean logic and selects (ops-elementwise.md).
// Equal (7+, numeric and bool), Less and Greater (7+), LessOrEqual and GreaterOrEqual (12+), And, Or, Xor
// (7+, bool): broadcast NumPy style, bool output. NaN compares false with everything, itself included (the
// C++ operators already behave so; f16 is compared after the exact widening to float).
// Where: out = cond ? X : Y with three-way NumPy broadcasting, any stored type (bfloat16 is copied as bits).
// Clip: min(max(x, lo), hi) with the upper bound winning when lo > hi; an omitted bound is the type's finite
// extreme (so Clip(+inf) is the largest finite value); NaN passes through. Bounds are the attributes min/max
// before opset 11 and optional scalar inputs from 11 on.
#include "ops/elementwise_common.h"
#include "ops/ops.h"

namespace onemodel::rt {
namespace {

using namespace ew;

constexpr uint32_t kWhereTypes = kNumeric | kBool;

class WhereKernel final : public Kernel {
 public:
  WhereKernel() : Kernel(KernelFlags{.exact = true}) {}

  void infer(InferContext& ctx) const override {
    require_inputs(ctx, 3);
    if (ctx.input(0).dtype != DType::Bool)
      ctx.fail(ErrorKind::InvalidModel, "condition must be bool, got " + type_str(ctx.input(0).dtype));
    require_same_type(ctx, 1, 3);
    check_type(ctx.info, ctx.input(1).dtype, kWhereTypes | bit(DType::BF16));
    const std::array<const Shape*, 3> s{&ctx.input(0).shape, &ctx.input(1).shape, &ctx.input(2).shape};
    ctx.set_output(0, ctx.input(1).dtype, broadcast_all(ctx.info, s, ErrorKind::InvalidModel));
  }

  void run(RunContext& ctx) const override {
    const Tensor& c = ctx.input(0);
    const Tensor& x = ctx.input(1);
    const Tensor& y = ctx.input(2);
    Tensor& out = ctx.output(0);
    const std::array<const Shape*, 3> s{&c.shape(), &x.shape(), &y.shape()};
    check_run_shapes(ctx, s, out);
    if (c.dtype() != DType::Bool || x.dtype() != y.dtype() || out.dtype() != x.dtype())
      ctx.fail(ErrorKind::InvalidInput, "input types differ from the planned ones");
    const bool exact = ctx.exact;
    auto select = [&](auto tag) {
      using E = Elem<decltype(tag)>;
      const auto* pc = in_ptr<uint8_t>(c);
      const auto* px = in_ptr<typename E::Store>(x);
      const auto* py = in_ptr<typename E::Store>(y);
      auto* po = out_ptr<typename E::Store>(out);
      broadcast_n<3>(out.shape(), s, [&](int64_t o, const auto& off, int64_t n, const auto& st) {
        for (int64_t k = 0; k < n; ++k) {
          const auto v = pc[off[0] + k * st[0]] ? px[off[1] + k * st[1]] : py[off[2] + k * st[2]];
          po[o + k] = E::store(E::load(v), exact);
        }
      });
    };
    if (x.dtype() == DType::BF16) return select(uint16_t{});  // bits copied unchanged
    if (!visit<kWhereTypes>(x.dtype(), select))
      ctx.fail(ErrorKind::Unsupported, "element type " + type_str(x.dtype()) + " is not supported");
  }
};

// The finite extremes of a type in its arithmetic type (f16: +-65504).
template <class Tag>
auto type_lowest() {
  if constexpr (std::is_same_v<Tag, Half>)
    return -65504.0f;
  else
    return std::numeric_limits<Tag>::lowest();
}
template <class Tag>
auto type_highest() {
  if constexpr (std::is_same_v<Tag, Half>)
    return 65504.0f;
  else
    return std::numeric_limits<Tag>::max();
}

class ClipKernel final : public Kernel {
 public:
  // Before opset 11: bounds from attributes (absent = NaN marker via has_*); from 11: from inputs 1 and 2.
  ClipKernel(bool from_inputs, bool has_lo, float lo, bool has_hi, float hi)
      : Kernel(KernelFlags{.exact = true, .in_place_input = 0}),
        from_inputs_(from_inputs),
        has_lo_(has_lo),
        has_hi_(has_hi),
        lo_(lo),
        hi_(hi) {}

  void infer(InferContext& ctx) const override {
    require_inputs(ctx, 1);
    const DType t = ctx.input(0).dtype;
    check_type(ctx.info, t, from_inputs_ ? kNumeric : kFloats);
    for (size_t i = 1; i < 3 && from_inputs_; ++i) {
      if (!ctx.has_input(i)) continue;
      if (ctx.input(i).dtype != t)
        ctx.fail(ErrorKind::InvalidModel,
                 "bound type " + type_str(ctx.input(i).dtype) + " differs from " + type_str(t));
      if (ctx.input(i).shape.numel() != 1)
        ctx.fail(ErrorKind::InvalidModel, "bounds must be scalars, got shape " + ctx.input(i).shape.to_string());
    }
    if (!from_inputs_ && ctx.inputs.size() > 1)
      ctx.fail(ErrorKind::InvalidModel, "takes one input before opset 11 (bounds are attributes)");
    ctx.set_output(0, t, ctx.input(0).shape);
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (x.shape() != y.shape() || x.dtype() != y.dtype())
      ctx.fail(ErrorKind::InvalidInput, "input does not match the planned output " + y.shape().to_string());
    for (size_t i = 1; i < 3; ++i)
      if (ctx.has_input(i) && (ctx.input(i).numel() != 1 || ctx.input(i).dtype() != x.dtype()))
        ctx.fail(ErrorKind::InvalidInput, "bounds must be scalars of the input's type");
    const bool exact = ctx.exact;
    if (!visit<kNumeric>(x.dtype(), [&](auto tag) {
          using E = Elem<decltype(tag)>;
          using C = typename E::Calc;
          C lo = static_cast<C>(type_lowest<decltype(tag)>());
          C hi = static_cast<C>(type_highest<decltype(tag)>());
          if (from_inputs_) {
            if (ctx.has_input(1)) lo = E::load(in_ptr<typename E::Store>(ctx.input(1))[0]);
            if (ctx.has_input(2)) hi = E::load(in_ptr<typename E::Store>(ctx.input(2))[0]);
          } else {
            if (has_lo_) lo = static_cast<C>(lo_);
            if (has_hi_) hi = static_cast<C>(hi_);
          }
          const auto* px = in_ptr<typename E::Store>(x);
          auto* py = out_ptr<typename E::Store>(y);
          with_exact(exact, [&](auto ex) {
            for_chunks(ctx.pool, x.numel(), [&](int64_t b, int64_t e) {
              for (int64_t i = b; i < e; ++i) {
                py[i] = E::store(clip_value(E::load(px[i]), lo, hi), ex.value);
              }
            });
          });
        }))
      ctx.fail(ErrorKind::Unsupported, "element type " + type_str(x.dtype()) + " is not supported");
  }

 private:
  bool from_inputs_, has_lo_, has_hi_;
  float lo_, hi_;
};

}  // namespace

std::unique_ptr<Kernel> make_equal(const NodeInfo&) {
  return binary<kNumeric | kBool>([](auto a, auto b) { return a == b; }, true, true);
}
std::unique_ptr<Kernel> make_less(const NodeInfo&) {
  return binary<kNumeric>([](auto a, auto b) { return a < b; }, true, true);
}
std::unique_ptr<Kernel> make_greater(const NodeInfo&) {
  return binary<kNumeric>([](auto a, auto b) { return a > b; }, true, true);
}
std::unique_ptr<Kernel> make_less_or_equal(const NodeInfo&) {
  return binary<kNumeric>([](auto a, auto b) { return a <= b; }, true, true);
}
std::unique_ptr<Kernel> make_greater_or_equal(const NodeInfo&) {
  return binary<kNumeric>([](auto a, auto b) { return a >= b; }, true, true);
}

std::unique_ptr<Kernel> make_and(const NodeInfo&) {
  return binary<kBool>([](bool a, bool b) { return a && b; }, true, true);
}
std::unique_ptr<Kernel> make_or(const NodeInfo&) {
  return binary<kBool>([](bool a, bool b) { return a || b; }, true, true);
}
std::unique_ptr<Kernel> make_xor(const NodeInfo&) {
  return binary<kBool>([](bool a, bool b) { return a != b; }, true, true);
}

std::unique_ptr<Kernel> make_where(const NodeInfo&) { return std::make_unique<WhereKernel>(); }

std::unique_ptr<Kernel> make_clip(const NodeInfo& info) {
  if (info.opset() >= 11) return std::make_unique<ClipKernel>(true, false, 0.0f, false, 0.0f);
  return std::make_unique<ClipKernel>(false, info.has("min"), info.get_float("min", 0.0f), info.has("max"),
                                      info.get_float("max", 0.0f));
}

}  // namespace onemodel::rt
