// LpNormalization and MeanVarianceNormalization: normalisations over an axis (Lp) or an axis set (MVN) that
// ops-norms.md does not list. They reuse the reduction walk, so their sums follow the same orders as
// ReduceL1/ReduceSumSquare/ReduceMean over the same axes, and are exact. float32 and float64.
//   LpNormalization (1, 22): norm = Sum(|x|) (p = 1) or sqrt(Sum(x*x)) (p = 2); y = x / norm, and 0 where the
//     norm is 0 (ONNX Runtime's choice; the ONNX reference would give NaN).
//   MeanVarianceNormalization (9, 13), the steps of its ONNX function body: mean = Sum(x) / n,
//     ex2 = Sum(x*x) / n, std = sqrt(ex2 - mean*mean), y = (x - mean) / (std + 1e-9).
#include <cmath>

#include "ops/common.h"
#include "ops/norm_ops.h"
#include "ops/reduce_walk.h"

namespace onemodel::rt {
namespace {

// Calls f(pointer offset, n) for the pieces of output o's sequence, as walk_sequence but yielding offsets
// from the start of `x` so the caller can write the matching elements of y.
template <class T, class F>
void walk_offsets(const ReduceGeometry& g, const T* x, int64_t o, F&& f) {
  walk_sequence(g, x, o, [&](const T* p, int64_t n) { f(p - x, n); });
}

class GroupNormKernel final : public Kernel {
 public:
  // p: 1 or 2 for LpNormalization, 0 for MeanVarianceNormalization.
  GroupNormKernel(int p, std::vector<int64_t> axes) : Kernel(KernelFlags{.exact = true}), p_(p), axes_(std::move(axes)) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0)) ctx.fail(ErrorKind::InvalidModel, "expects one input");
    const InputMeta& x = ctx.input(0);
    if (x.dtype != DType::F32 && x.dtype != DType::F64)
      ctx.fail(ErrorKind::Unsupported, "element type " + type_str(x.dtype) + " is not supported");
    reduce_axes(ctx.info, x.shape, axes_, true, false);
    ctx.set_output(0, x.dtype, x.shape);
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (y.shape() != x.shape() || y.dtype() != x.dtype())
      ctx.fail(ErrorKind::InvalidInput, "input does not match the planned output " + y.shape().to_string());
    const ReduceGeometry g = reduce_geometry(x.shape(), reduce_axes(ctx.info, x.shape(), axes_, true, false).reduced);
    if (x.numel() == 0) return;
    if (x.dtype() == DType::F32) apply<float>(g, x.data<float>().data(), y.mutable_data<float>().data());
    else apply<double>(g, x.data<double>().data(), y.mutable_data<double>().data());
  }

 private:
  template <class T>
  void apply(const ReduceGeometry& g, const T* px, T* py) const {
    for (int64_t o = 0; o < g.outputs; ++o) {
      if (p_ == 0) {
        const T n = static_cast<T>(static_cast<float>(g.count));
        const T mean = reduce_sum(g, px, o, [](T v) { return v; }) / n;
        const T ex2 = reduce_sum(g, px, o, [](T v) { return v * v; }) / n;
        const T den = std::sqrt(ex2 - mean * mean) + static_cast<T>(1e-9f);
        walk_offsets(g, px, o, [&](int64_t at, int64_t k) {
          for (int64_t j = 0; j < k; ++j) py[at + j] = canon_any((px[at + j] - mean) / den);
        });
        continue;
      }
      const T norm = p_ == 1 ? reduce_sum(g, px, o, [](T v) { return std::fabs(v); })
                             : std::sqrt(reduce_sum(g, px, o, [](T v) { return v * v; }));
      walk_offsets(g, px, o, [&](int64_t at, int64_t k) {
        for (int64_t j = 0; j < k; ++j) py[at + j] = norm == T(0) ? T(0) : canon_any(px[at + j] / norm);
      });
    }
  }

  int p_;
  std::vector<int64_t> axes_;
};

}  // namespace

std::unique_ptr<Kernel> make_lp_normalization(const NodeInfo& info) {
  const int64_t p = info.get_int("p", 2);
  if (p != 1 && p != 2) info.fail(ErrorKind::InvalidModel, "p must be 1 or 2, got " + std::to_string(p));
  return std::make_unique<GroupNormKernel>(static_cast<int>(p), std::vector<int64_t>{info.get_int("axis", -1)});
}
std::unique_ptr<Kernel> make_mean_variance_normalization(const NodeInfo& info) {
  std::vector<int64_t> axes = info.has("axes") ? info.get_ints("axes") : std::vector<int64_t>{0, 2, 3};
  if (axes.empty()) info.fail(ErrorKind::InvalidModel, "axes must not be empty");
  return std::make_unique<GroupNormKernel>(0, std::move(axes));
}

}  // namespace onemodel::rt
