// NegativeLogLikelihoodLoss (opsets 12, 13, 22) and SoftmaxCrossEntropyLoss (opsets 12, 13), ONNX text plus
// the backend data's reference (onnx/backend/test/case/node/{negativeloglikelihoodloss,softmaxcrossentropy}.py).
// Input [N, C, d1..dk] is viewed as [N, C, D]; target [N, d1..dk] as [N, D].
//   loss[n, d] = -w[t] * x[n, t, d] with t = target[n, d]; 0 (and weight 0) where t == ignore_index.
//   none: loss shaped like target. sum: the losses summed. mean: summed, then divided by the summed weights
//   (w = 1 without a weight input; an ignored element weighs 0).
// Sums run sequentially from +0 in index order (n, then d), products and sums rounded separately: with only
// + - * / in a fixed order NegativeLogLikelihoodLoss is exact (ops-coverage.md). SoftmaxCrossEntropyLoss takes a
// log-softmax over C first and is fast-only, as ops-coverage.md lists it. float16 runs through float.
// A target outside [0, C) that is not ignore_index is an InvalidInput error naming the node and the position.
#include <cmath>
#include <limits>
#include <optional>

#include "ops/common.h"
#include "ops/ops.h"

namespace onemodel::rt {
namespace {

enum class Reduction { None, Sum, Mean };

bool loss_type(DType t) { return t == DType::F32 || t == DType::F64 || t == DType::F16; }

template <class T>
double load(const T* p, int64_t i) {
  if constexpr (std::is_same_v<T, uint16_t>)
    return half_to_float(p[i]);
  else
    return static_cast<double>(p[i]);
}

class LossKernel final : public Kernel {
 public:
  LossKernel(bool softmax, Reduction r, std::optional<int64_t> ignore)
      : Kernel(KernelFlags{.exact = !softmax}), softmax_(softmax), reduction_(r), ignore_(ignore) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0) || !ctx.has_input(1)) ctx.fail(ErrorKind::InvalidModel, "expects input and target");
    const InputMeta& x = ctx.input(0);
    const InputMeta& t = ctx.input(1);
    if (!loss_type(x.dtype))
      ctx.fail(ErrorKind::Unsupported, "element type " + type_str(x.dtype) + " is not supported");
    if (t.dtype != DType::I32 && t.dtype != DType::I64)
      ctx.fail(ErrorKind::InvalidModel, "target must be int32 or int64, not " + type_str(t.dtype));
    check_shapes(ctx.info, x.shape, t.shape);
    if (ctx.has_input(2)) {
      const InputMeta& w = ctx.input(2);
      if (w.dtype != x.dtype) ctx.fail(ErrorKind::InvalidModel, "weight type differs from the input type");
      if (w.shape.rank() != 1 || w.shape[0] != x.shape[1])
        ctx.fail(ErrorKind::InvalidModel,
                 "weight must have shape [" + std::to_string(x.shape[1]) + "], not " + w.shape.to_string());
    }
    ctx.set_output(0, x.dtype, reduction_ == Reduction::None ? t.shape : Shape());
    if (ctx.outputs.size() > 1) {
      if (!softmax_) ctx.fail(ErrorKind::InvalidModel, "has one output");
      ctx.set_output(1, x.dtype, x.shape);
    }
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    check_shapes(ctx.info, x.shape(), ctx.input(1).shape());
    switch (x.dtype()) {
      case DType::F32: run_typed<float>(ctx); break;
      case DType::F64: run_typed<double>(ctx); break;
      default: run_typed<uint16_t>(ctx); break;
    }
  }

 private:
  static void check_shapes(const NodeInfo& info, const Shape& x, const Shape& t) {
    if (x.rank() < 2) info.fail(ErrorKind::InvalidModel, "input must be [N, C, ...], not " + x.to_string());
    bool ok = t.rank() == x.rank() - 1 && t[0] == x[0];
    for (int d = 2; ok && d < x.rank(); ++d) ok = t[d - 1] == x[d];
    if (!ok) info.fail(ErrorKind::InvalidModel, "target " + t.to_string() + " does not match input " + x.to_string());
  }

  // Calc is float for float/float16 inputs and double for double: the reference computes in the input type.
  template <class T>
  void run_typed(RunContext& ctx) const {
    using Calc = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const Tensor& xt = ctx.input(0);
    const Tensor& tt = ctx.input(1);
    const int64_t n = xt.shape()[0], c = xt.shape()[1];
    const int64_t d = n * c == 0 ? 0 : xt.numel() / (n * c);
    // raw(): float16 elements are read as their uint16_t bits (Tensor::data refuses that type pun).
    const T* px = static_cast<const T*>(xt.raw());
    const T* pw = ctx.has_input(2) ? static_cast<const T*>(ctx.input(2).raw()) : nullptr;

    // Log-probabilities (SoftmaxCrossEntropyLoss): over C for each (n, d), max-shifted, in Calc.
    std::vector<Calc> logp;
    if (softmax_) {
      logp.resize(static_cast<size_t>(xt.numel()));
      for (int64_t i = 0; i < n; ++i)
        for (int64_t k = 0; k < d; ++k) {
          const int64_t base = i * c * d + k;
          Calc m = -std::numeric_limits<Calc>::infinity();
          for (int64_t j = 0; j < c; ++j) m = std::max(m, static_cast<Calc>(load(px, base + j * d)));
          Calc sum = 0;
          for (int64_t j = 0; j < c; ++j) sum = sum + std::exp(static_cast<Calc>(load(px, base + j * d)) - m);
          const Calc lse = std::log(sum);
          for (int64_t j = 0; j < c; ++j)
            logp[static_cast<size_t>(base + j * d)] = static_cast<Calc>(load(px, base + j * d)) - m - lse;
        }
      if (ctx.outputs.size() > 1 && !ctx.output(1).empty()) store_all(ctx.output(1), logp);
    }
    auto value = [&](int64_t idx) -> Calc {
      return softmax_ ? logp[static_cast<size_t>(idx)] : static_cast<Calc>(load(px, idx));
    };

    Tensor& out = ctx.output(0);
    std::vector<Calc> none;
    if (reduction_ == Reduction::None) none.resize(static_cast<size_t>(n * d));
    Calc total = 0, weights = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < d; ++k) {
        const int64_t t = target_at(tt, i * d + k);
        Calc loss = 0, w = 0;
        if (!(ignore_ && t == *ignore_)) {
          if (t < 0 || t >= c)
            ctx.fail(ErrorKind::InvalidInput, "target " + std::to_string(t) + " at position " +
                                                  std::to_string(i * d + k) + " is outside [0, " + std::to_string(c) +
                                                  ")");
          w = pw ? static_cast<Calc>(load(pw, t)) : Calc(1);
          const Calc neg = -value(i * c * d + t * d + k);
          loss = pw ? w * neg : neg;
        }
        if (reduction_ == Reduction::None) none[static_cast<size_t>(i * d + k)] = loss;
        total = total + loss;
        weights = weights + w;
      }
    if (reduction_ == Reduction::None) {
      store_all(out, none);
    } else {
      Calc r = total;
      if (reduction_ == Reduction::Mean) r = (pw || ignore_) ? total / weights : total / static_cast<Calc>(n * d);
      if (ctx.exact && std::isnan(r)) r = std::numeric_limits<Calc>::quiet_NaN();
      store_one(out, 0, r);
    }
  }

  static int64_t target_at(const Tensor& t, int64_t i) {
    return t.dtype() == DType::I32 ? t.data<int32_t>()[static_cast<size_t>(i)]
                                   : t.data<int64_t>()[static_cast<size_t>(i)];
  }

  template <class Calc>
  static void store_one(Tensor& out, int64_t i, Calc v) {
    const auto k = static_cast<size_t>(i);
    switch (out.dtype()) {
      case DType::F32: out.mutable_data<float>()[k] = static_cast<float>(v); break;
      case DType::F64: out.mutable_data<double>()[k] = static_cast<double>(v); break;
      default: static_cast<uint16_t*>(out.raw_mut())[k] = float_to_half(static_cast<float>(v)); break;
    }
  }
  template <class Calc>
  static void store_all(Tensor& out, const std::vector<Calc>& v) {
    for (size_t i = 0; i < v.size(); ++i) store_one(out, static_cast<int64_t>(i), v[i]);
  }

  bool softmax_;
  Reduction reduction_;
  std::optional<int64_t> ignore_;
};

std::unique_ptr<Kernel> make_loss(const NodeInfo& info, bool softmax) {
  const std::string r = info.get_string("reduction", "mean");
  Reduction red;
  if (r == "none")
    red = Reduction::None;
  else if (r == "sum")
    red = Reduction::Sum;
  else if (r == "mean")
    red = Reduction::Mean;
  else
    info.fail(ErrorKind::InvalidModel, "reduction '" + r + "' is not none, sum or mean");
  std::optional<int64_t> ignore;
  if (info.has("ignore_index")) ignore = info.get_int("ignore_index", 0);
  if (!softmax && info.num_outputs() != 1) info.fail(ErrorKind::InvalidModel, "has exactly one output");
  return std::make_unique<LossKernel>(softmax, red, ignore);
}

}  // namespace

std::unique_ptr<Kernel> make_negative_log_likelihood_loss(const NodeInfo& info) { return make_loss(info, false); }
std::unique_ptr<Kernel> make_softmax_cross_entropy_loss(const NodeInfo& info) { return make_loss(info, true); }

}  // namespace onemodel::rt
