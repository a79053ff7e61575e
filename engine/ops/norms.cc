// LayerNormalization, RMSNormalization, InstanceNormalization and GroupNormalization (ops-norms.md), and
// LpNormalization and MeanVarianceNormalization (below). The first four are float32 and exact; each treats rows of
// `cols` contiguous elements with the same four steps:
//   mean = Sum16(x) / n (RMS: 0);  v = Sum16((x - mean)^2) / n;  inv = 1 / sqrt(v + epsilon);
//   y = (((x - mean) * inv) * scale) + bias   (bias skipped when absent)
// where n = cols as float32 and the difference, square, products and sums are separately rounded. The
// families differ only in what a row is and where its scale and bias come from.
#include <cmath>

#include "kernels/norm.h"
#include "ops/common.h"
#include "ops/ops.h"
#include "ops/reduce_walk.h"

namespace onemodel::rt {
namespace {

void require_f32(const InferContext& ctx, size_t i) {
  if (ctx.has_input(i) && ctx.input(i).dtype != DType::F32)
    ctx.fail(ErrorKind::Unsupported, "element type " + type_str(ctx.input(i).dtype) + " is not supported");
}

// LayerNormalization (17+, optional Mean and InvStdDev outputs) and RMSNormalization (23+, no bias).
class LayerNormKernel final : public Kernel {
 public:
  LayerNormKernel(bool rms, int64_t axis, float epsilon)
      : Kernel(KernelFlags{.exact = true}), rms_(rms), axis_(axis), epsilon_(epsilon) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0) || !ctx.has_input(1)) ctx.fail(ErrorKind::InvalidModel, "expects inputs X and Scale");
    for (size_t i = 0; i < 3; ++i) require_f32(ctx, i);
    const Shape& s = ctx.input(0).shape;
    const int axis = normalize_axis(ctx.info, axis_, s.rank());
    check_param(ctx.info, ctx.input(1).shape, s, axis, "Scale");
    if (!rms_ && ctx.has_input(2)) check_param(ctx.info, ctx.input(2).shape, s, axis, "B");
    ctx.set_output(0, DType::F32, s);
    std::vector<int64_t> sd = s.to_vector();
    for (int d = axis; d < s.rank(); ++d) sd[static_cast<size_t>(d)] = 1;
    for (size_t i = 1; i < ctx.outputs.size(); ++i) ctx.set_output(i, DType::F32, Shape(std::span<const int64_t>(sd)));
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const int axis = normalize_axis(ctx.info, axis_, x.rank());
    int64_t rows = 1, cols = 1;
    for (int d = 0; d < axis; ++d) rows *= x.shape()[d];
    for (int d = axis; d < x.rank(); ++d) cols *= x.shape()[d];
    if (ctx.output(0).shape() != x.shape())
      ctx.fail(ErrorKind::InvalidInput, "input does not match the planned output");
    const Tensor scale = expand(ctx, ctx.input(1), x.shape(), axis, cols, "Scale");
    Tensor bias;
    if (!rms_ && ctx.has_input(2)) bias = expand(ctx, ctx.input(2), x.shape(), axis, cols, "B");
    const float* px = x.data<float>().data();
    float* py = ctx.output(0).mutable_data<float>().data();
    float* pmean =
        ctx.outputs.size() > 1 && !ctx.output(1).empty() ? ctx.output(1).mutable_data<float>().data() : nullptr;
    float* pinv =
        ctx.outputs.size() > 2 && !ctx.output(2).empty() ? ctx.output(2).mutable_data<float>().data() : nullptr;
    const float* ps = scale.data<float>().data();
    const float* pb = bias.empty() ? nullptr : bias.data<float>().data();
    // Rows are independent (each one's statistics and outputs depend on that row only): fixed chunks of rows
    // on the pool. MiniLM's 13 LayerNorms ran on one thread at either thread count.
    const int64_t per = std::max<int64_t>(1, 16384 / std::max<int64_t>(cols, 1));
    const kern::Isa isa = ctx.isa;
    parallel_for(ctx.pool, (rows + per - 1) / per, 2.0 * static_cast<double>(rows * cols), [&](int64_t c) {
      for (int64_t r = c * per; r < std::min(rows, (c + 1) * per); ++r) {
        const kern::NormStats st = kern::norm_row_stats(isa, px + r * cols, cols, epsilon_, rms_);
        kern::norm_row_apply(isa, px + r * cols, py + r * cols, cols, st, ps, pb);
        if (pmean) pmean[r] = kern::canon(st.mean);
        if (pinv) pinv[r] = kern::canon(st.inv);
      }
    });
  }

 private:
  // Scale and B broadcast to the normalized dimensions (right-aligned; missing leading ones are 1).
  static void check_param(const NodeInfo& info, const Shape& p, const Shape& x, int axis, const char* what) {
    const int nd = x.rank() - axis;
    bool ok = p.rank() <= x.rank();
    for (int k = 0; ok && k < p.rank(); ++k) {
      const int d = x.rank() - p.rank() + k;
      const int64_t e = p[k];
      if (d < axis)
        ok = e == 1;
      else
        ok = e == 1 || e == x[d];
    }
    if (!ok)
      info.fail(ErrorKind::InvalidModel, std::string(what) + " of shape " + p.to_string() +
                                             " does not broadcast to the " + std::to_string(nd) +
                                             " normalized dimensions of " + x.to_string());
  }

  // The parameter as `cols` contiguous values: as is when complete, else expanded into scratch.
  Tensor expand(const RunContext& ctx, const Tensor& p, const Shape& x, int axis, int64_t cols,
                const char* what) const {
    check_param(ctx.info, p.shape(), x, axis, what);
    if (p.dtype() != DType::F32) ctx.fail(ErrorKind::InvalidInput, std::string(what) + " must be float32");
    if (p.numel() == cols) return p;
    std::vector<int64_t> nd(x.dims().begin() + axis, x.dims().end());
    const Shape ns{std::span<const int64_t>(nd)};
    std::vector<int64_t> pd;  // the parameter's shape restricted to the normalized dimensions
    for (int k = std::max(0, p.rank() - ns.rank()); k < p.rank(); ++k) pd.push_back(p.shape()[k]);
    const Shape ps{std::span<const int64_t>(pd)};
    Tensor out = ctx.scratch(DType::F32, ns);
    const float* src = p.data<float>().data();
    float* dst = out.mutable_data<float>().data();
    broadcast_n<1>(ns, {&ps}, [&](int64_t o, const auto& off, int64_t n, const auto& st) {
      for (int64_t j = 0; j < n; ++j) dst[o + j] = src[off[0] + j * st[0]];
    });
    return out;
  }

  bool rms_;
  int64_t axis_;
  float epsilon_;
};

// InstanceNormalization (6+): one row per (sample, channel) plane with that channel's scale and bias.
// GroupNormalization: one row per (sample, group) block; scale and bias per group (opsets 18-20) or per
// channel spread across the block (21+).
class ChannelNormKernel final : public Kernel {
 public:
  ChannelNormKernel(int64_t groups, bool per_channel, float epsilon)
      : Kernel(KernelFlags{.exact = true}), groups_(groups), per_channel_(per_channel), epsilon_(epsilon) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0) || !ctx.has_input(1) || !ctx.has_input(2))
      ctx.fail(ErrorKind::InvalidModel, "expects inputs X, scale and B");
    for (size_t i = 0; i < 3; ++i) require_f32(ctx, i);
    check(ctx.info, ctx.input(0).shape, ctx.input(1).shape, ctx.input(2).shape);
    ctx.set_output(0, DType::F32, ctx.input(0).shape);
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    check(ctx.info, x.shape(), ctx.input(1).shape(), ctx.input(2).shape());
    if (ctx.output(0).shape() != x.shape())
      ctx.fail(ErrorKind::InvalidInput, "input does not match the planned output");
    const int64_t c = x.shape()[1];
    const int64_t g = groups_ > 0 ? groups_ : c;
    int64_t spatial = 1;
    for (int d = 2; d < x.rank(); ++d) spatial *= x.shape()[d];
    const int64_t per_group = c / g;
    const int64_t cols = per_group * spatial;
    const float* px = x.data<float>().data();
    float* py = ctx.output(0).mutable_data<float>().data();
    const float* ps = ctx.input(1).data<float>().data();
    const float* pb = ctx.input(2).data<float>().data();
    const int64_t rows = x.shape()[0] * g;
    const kern::Isa isa = ctx.isa;
    // Rows are independent: fixed chunks of max(1, 16384 / cols) rows on the pool, as LayerNormalization.
    const int64_t per = std::max<int64_t>(1, 16384 / std::max<int64_t>(cols, 1));
    parallel_for(ctx.pool, (rows + per - 1) / per, 2.0 * static_cast<double>(rows * cols), [&](int64_t chunk) {
      for (int64_t r = chunk * per; r < std::min(rows, (chunk + 1) * per); ++r) {
        const float* xr = px + r * cols;
        float* yr = py + r * cols;
        const kern::NormStats st = kern::norm_row_stats(isa, xr, cols, epsilon_, false);
        const int64_t grp = r % g;
        if (!per_channel_) {
          kern::norm_row_apply_uniform(isa, xr, yr, cols, st, ps[grp], pb[grp]);
          continue;
        }
        for (int64_t k = 0; k < per_group; ++k) {
          const int64_t ch = grp * per_group + k;
          kern::norm_row_apply_uniform(isa, xr + k * spatial, yr + k * spatial, spatial, st, ps[ch], pb[ch]);
        }
      }
    });
  }

 private:
  void check(const NodeInfo& info, const Shape& x, const Shape& s, const Shape& b) const {
    if (x.rank() < 2) info.fail(ErrorKind::InvalidModel, "input must have rank 2 or more, got " + x.to_string());
    const int64_t c = x[1];
    const int64_t g = groups_ > 0 ? groups_ : c;
    if (groups_ > 0 && (g <= 0 || c % g != 0))
      info.fail(ErrorKind::InvalidModel,
                "num_groups " + std::to_string(g) + " does not divide " + std::to_string(c) + " channels");
    const int64_t want = per_channel_ ? c : g;
    if (s.rank() != 1 || s[0] != want || b.rank() != 1 || b[0] != want)
      info.fail(ErrorKind::InvalidModel, "scale and B must have shape [" + std::to_string(want) + "], got " +
                                             s.to_string() + " and " + b.to_string());
  }

  int64_t groups_;  // 0: one row per channel (InstanceNormalization)
  bool per_channel_;
  float epsilon_;
};

// LpNormalization and MeanVarianceNormalization: normalisations over an axis (Lp) or an axis set (MVN) that
// ops-norms.md does not list. They reuse the reduction walk, so their sums follow the same orders as
// ReduceL1/ReduceSumSquare/ReduceMean over the same axes, and are exact. float32 and float64.
//   LpNormalization (1, 22): norm = Sum(|x|) (p = 1) or sqrt(Sum(x*x)) (p = 2); y = x / norm, and 0 where the
//     norm is 0 (ONNX Runtime's choice; the ONNX reference would give NaN).
//   MeanVarianceNormalization (9, 13), the steps of its ONNX function body: mean = Sum(x) / n,
//     ex2 = Sum(x*x) / n, std = sqrt(ex2 - mean*mean), y = (x - mean) / (std + 1e-9).

// Calls f(pointer offset, n) for the pieces of output o's sequence, as walk_sequence but yielding offsets
// from the start of `x` so the caller can write the matching elements of y.
template <class T, class F>
void walk_offsets(const ReduceGeometry& g, const T* x, int64_t o, F&& f) {
  walk_sequence(g, x, o, [&](const T* p, int64_t n) { f(p - x, n); });
}

class AxesNormKernel final : public Kernel {
 public:
  // p: 1 or 2 for LpNormalization, 0 for MeanVarianceNormalization.
  AxesNormKernel(int p, std::vector<int64_t> axes)
      : Kernel(KernelFlags{.exact = true}), p_(p), axes_(std::move(axes)) {}

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
    if (x.dtype() == DType::F32)
      apply<float>(g, x.data<float>().data(), y.mutable_data<float>().data());
    else
      apply<double>(g, x.data<double>().data(), y.mutable_data<double>().data());
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

std::unique_ptr<Kernel> make_layer_normalization(const NodeInfo& info) {
  return std::make_unique<LayerNormKernel>(false, info.get_int("axis", -1), info.get_float("epsilon", 1e-5f));
}
std::unique_ptr<Kernel> make_rms_normalization(const NodeInfo& info) {
  return std::make_unique<LayerNormKernel>(true, info.get_int("axis", -1), info.get_float("epsilon", 1e-5f));
}
std::unique_ptr<Kernel> make_instance_normalization(const NodeInfo& info) {
  return std::make_unique<ChannelNormKernel>(0, true, info.get_float("epsilon", 1e-5f));
}
std::unique_ptr<Kernel> make_group_normalization(const NodeInfo& info) {
  if (!info.has("num_groups")) info.fail(ErrorKind::InvalidModel, "attribute num_groups is required");
  const int64_t g = info.get_int("num_groups", 0);
  if (g <= 0) info.fail(ErrorKind::InvalidModel, "num_groups must be positive, got " + std::to_string(g));
  return std::make_unique<ChannelNormKernel>(g, info.opset() >= 21, info.get_float("epsilon", 1e-5f));
}

std::unique_ptr<Kernel> make_lp_normalization(const NodeInfo& info) {
  const int64_t p = info.get_int("p", 2);
  if (p != 1 && p != 2) info.fail(ErrorKind::InvalidModel, "p must be 1 or 2, got " + std::to_string(p));
  return std::make_unique<AxesNormKernel>(static_cast<int>(p), std::vector<int64_t>{info.get_int("axis", -1)});
}
std::unique_ptr<Kernel> make_mean_variance_normalization(const NodeInfo& info) {
  std::vector<int64_t> axes = info.has("axes") ? info.get_ints("axes") : std::vector<int64_t>{0, 2, 3};
  if (axes.empty()) info.fail(ErrorKind::InvalidModel, "axes must not be empty");
  return std::make_unique<AxesNormKernel>(0, std::move(axes));
}

}  // namespace onemodel::rt
