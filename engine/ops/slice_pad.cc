// Slice, Pad (ops-shape-indexing.md sections 3 and 4) and CenterCropPad (ops-newer.md section 5). All become per-axis
// offset maps for map_copy: a slice reads start + i*step, a pad reads the mirrored, clamped or wrapped index (or the
// fill value), a centred crop or pad reads i shifted by the crop start minus the pad start (or zero).
#include <algorithm>
#include <climits>

#include "ops/index_util.h"
#include "ops/ops.h"

namespace onemodel::rt {
namespace {

struct AxisSlice {
  int64_t start = 0, step = 1, count = 0;
};

// Per-axis start/step/count, ONNX Runtime's reading included: with a negative step an end of exactly
// INT32_MAX or INT64_MAX means "through element 0".
std::vector<AxisSlice> slice_plan(const NodeInfo& info, const Shape& s, const std::vector<int64_t>& starts,
                                  const std::vector<int64_t>& ends, std::vector<int64_t> axes,
                                  std::vector<int64_t> steps) {
  const size_t k = starts.size();
  if (ends.size() != k) info.fail(ErrorKind::InvalidModel, "starts and ends differ in length");
  if (axes.empty())
    for (size_t i = 0; i < k; ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(k, 1);
  if (axes.size() != k || steps.size() != k)
    info.fail(ErrorKind::InvalidModel, "axes/steps differ in length from starts");
  std::vector<AxisSlice> plan(static_cast<size_t>(s.rank()));
  std::vector<bool> seen(static_cast<size_t>(s.rank()), false);
  for (int d = 0; d < s.rank(); ++d) plan[static_cast<size_t>(d)] = AxisSlice{0, 1, s[d]};
  for (size_t i = 0; i < k; ++i) {
    const int d = normalize_axis(info, axes[i], s.rank());
    if (seen[static_cast<size_t>(d)])
      info.fail(ErrorKind::InvalidModel, "axis " + std::to_string(axes[i]) + " is repeated");
    seen[static_cast<size_t>(d)] = true;
    const int64_t n = s[d];
    if (steps[i] == 0) info.fail(ErrorKind::InvalidModel, "step 0 on axis " + std::to_string(axes[i]));
    const int64_t step = std::clamp<int64_t>(steps[i], INT32_MIN, INT32_MAX);
    int64_t b = starts[i], e = ends[i];
    AxisSlice& p = plan[static_cast<size_t>(d)];
    p.step = step;
    if (n == 0) {
      p.count = 0;
      continue;
    }
    if (b < 0) b += n;
    if (step > 0) {
      if (e < 0) e += n;
      b = std::clamp<int64_t>(b, 0, n);
      e = std::clamp<int64_t>(e, 0, n);
      p.count = e > b ? (e - b + step - 1) / step : 0;
    } else {
      if (e == INT32_MAX || e == INT64_MAX)
        e = -1;
      else if (e < 0)
        e = std::max<int64_t>(e + n, -1);
      b = std::clamp<int64_t>(b, 0, n - 1);
      e = std::clamp<int64_t>(e, -1, n - 1);
      p.count = b > e ? (b - e + (-step) - 1) / (-step) : 0;
    }
    p.start = b;
  }
  return plan;
}

class SliceKernel final : public Kernel {
 public:
  SliceKernel(bool inputs, std::vector<int64_t> starts, std::vector<int64_t> ends, std::vector<int64_t> axes)
      : Kernel(KernelFlags{.exact = true}),
        inputs_(inputs),
        starts_(std::move(starts)),
        ends_(std::move(ends)),
        axes_(std::move(axes)) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0)) ctx.fail(ErrorKind::InvalidModel, "expects a data input");
    if (inputs_) {
      if (!ctx.has_input(1) || !ctx.has_input(2)) ctx.fail(ErrorKind::InvalidModel, "expects starts and ends inputs");
      for (size_t i = 1; i < 5; ++i)
        if (ctx.has_input(i)) check_index_type(ctx, i, "starts/ends/axes/steps");
      if (!have_values(ctx, {1, 2, 3, 4})) return;
    }
    std::vector<int64_t> dims;
    for (const AxisSlice& p :
         plan(ctx.info, ctx.input(0).shape, [&](size_t i) { return ctx.has_input(i) ? ctx.input(i).value : nullptr; }))
      dims.push_back(p.count);
    ctx.set_output(0, ctx.input(0).dtype, shape_of(dims));
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const std::vector<AxisSlice> ps =
        plan(ctx.info, x.shape(), [&](size_t i) { return ctx.has_input(i) ? &ctx.input(i) : nullptr; });
    const std::vector<int64_t> st = row_strides(x.shape());
    std::vector<std::vector<int64_t>> maps(ps.size());
    for (size_t d = 0; d < ps.size(); ++d) {
      maps[d].reserve(static_cast<size_t>(ps[d].count));
      for (int64_t i = 0; i < ps[d].count; ++i) maps[d].push_back((ps[d].start + i * ps[d].step) * st[d]);
    }
    map_copy(ctx.output(0).raw_mut(), x.raw(), dtype_size(x.dtype()), ctx.output(0).shape(), maps, nullptr);
  }

 private:
  template <class Get>
  std::vector<AxisSlice> plan(const NodeInfo& info, const Shape& s, Get get) const {
    if (!inputs_) return slice_plan(info, s, starts_, ends_, axes_, {});
    auto ints = [&](size_t i) {
      return get(i) ? read_int_tensor(info, *get(i), "slice parameter") : std::vector<int64_t>{};
    };
    return slice_plan(info, s, ints(1), ints(2), ints(3), ints(4));
  }
  bool inputs_;
  std::vector<int64_t> starts_, ends_, axes_;
};

enum class PadMode { Constant, Edge, Reflect, Wrap };

// The input index output position i of an axis reads, or -1 for the fill value.
int64_t pad_source(int64_t i, int64_t before, int64_t n, PadMode mode) {
  int64_t j = i - before;
  if (j >= 0 && j < n) return j;
  switch (mode) {
    case PadMode::Constant: return -1;
    case PadMode::Edge: return j < 0 ? 0 : n - 1;
    case PadMode::Wrap: return ((j % n) + n) % n;
    case PadMode::Reflect: {
      if (n == 1) return 0;
      const int64_t period = 2 * (n - 1);
      j = ((j % period) + period) % period;
      return j < n ? j : period - j;
    }
  }
  return -1;
}

class PadKernel final : public Kernel {
 public:
  PadKernel(PadMode mode, bool inputs, std::vector<int64_t> pads, double value)
      : Kernel(KernelFlags{.exact = true}), mode_(mode), inputs_(inputs), pads_(std::move(pads)), value_(value) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0)) ctx.fail(ErrorKind::InvalidModel, "expects a data input");
    if (inputs_) {
      if (!ctx.has_input(1)) ctx.fail(ErrorKind::InvalidModel, "expects a pads input");
      if (ctx.input(1).dtype != DType::I64) ctx.fail(ErrorKind::InvalidModel, "pads must be int64");
      if (ctx.has_input(2) && ctx.input(2).dtype != ctx.input(0).dtype)
        ctx.fail(ErrorKind::InvalidModel, "constant_value type differs from the data type");
      if (ctx.has_input(3)) check_index_type(ctx, 3, "axes");
      if (!have_values(ctx, {1, 3})) return;
    }
    const Shape& s = ctx.input(0).shape;
    const std::vector<int64_t> p = full_pads(ctx.info, s, ctx.has_input(1) ? ctx.input(1).value : nullptr,
                                             ctx.has_input(3) ? ctx.input(3).value : nullptr);
    std::vector<int64_t> dims;
    const auto r = static_cast<size_t>(s.rank());
    for (size_t d = 0; d < r; ++d) {
      const int64_t n = s[static_cast<int>(d)];
      const int64_t e = n + p[d] + p[d + r];
      if (e < 0) ctx.fail(ErrorKind::InvalidModel, "pads crop axis " + std::to_string(d) + " below zero");
      if (mode_ != PadMode::Constant && n == 0 && e > 0)
        ctx.fail(ErrorKind::InvalidModel, "cannot pad the empty axis " + std::to_string(d) + " in a non-constant mode");
      dims.push_back(e);
    }
    ctx.set_output(0, ctx.input(0).dtype, checked_shape(ctx, dims));
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Shape& s = x.shape();
    const Shape& out = ctx.output(0).shape();
    const std::vector<int64_t> p =
        full_pads(ctx.info, s, ctx.has_input(1) ? &ctx.input(1) : nullptr, ctx.has_input(3) ? &ctx.input(3) : nullptr);
    const std::vector<int64_t> st = row_strides(s);
    const auto r = static_cast<size_t>(s.rank());
    std::vector<std::vector<int64_t>> maps(r);
    for (size_t d = 0; d < r; ++d) {
      maps[d].reserve(static_cast<size_t>(out[static_cast<int>(d)]));
      for (int64_t i = 0; i < out[static_cast<int>(d)]; ++i) {
        const int64_t j = pad_source(i, p[d], s[static_cast<int>(d)], mode_);
        maps[d].push_back(j < 0 ? INT64_MIN / 16 : j * st[d]);
      }
    }
    ElemBytes fill = elem_from_double(ctx.info, x.dtype(), inputs_ ? 0.0 : value_);
    if (inputs_ && ctx.has_input(2)) {
      if (ctx.input(2).numel() != 1) ctx.fail(ErrorKind::InvalidInput, "constant_value must hold one element");
      std::memcpy(fill.b, ctx.input(2).raw(), dtype_size(x.dtype()));
    }
    map_copy(ctx.output(0).raw_mut(), x.raw(), dtype_size(x.dtype()), out, maps, fill.b);
  }

 private:
  // 2*rank pads (begins then ends), expanding the listed axes (opset 18) to all axes.
  std::vector<int64_t> full_pads(const NodeInfo& info, const Shape& s, const Tensor* pads, const Tensor* axes_t) const {
    const std::vector<int64_t> given = pads ? read_int_tensor(info, *pads, "pads") : pads_;
    const auto r = static_cast<size_t>(s.rank());
    std::vector<int64_t> axes;
    if (axes_t) {
      for (int64_t a : read_int_tensor(info, *axes_t, "axes")) axes.push_back(normalize_axis(info, a, s.rank()));
    } else {
      for (size_t d = 0; d < r; ++d) axes.push_back(static_cast<int64_t>(d));
    }
    if (given.size() != 2 * axes.size())
      info.fail(ErrorKind::InvalidModel,
                "pads has " + std::to_string(given.size()) + " entries for " + std::to_string(axes.size()) + " axes");
    std::vector<int64_t> p(2 * r, 0);
    for (size_t i = 0; i < axes.size(); ++i) {
      const auto d = static_cast<size_t>(axes[i]);
      if (given[i] < -kMaxElements || given[i] > kMaxElements || given[i + axes.size()] < -kMaxElements ||
          given[i + axes.size()] > kMaxElements)
        info.fail(ErrorKind::InvalidModel, "pad value out of range");
      p[d] = given[i];
      p[d + r] = given[i + axes.size()];
    }
    return p;
  }
  PadMode mode_;
  bool inputs_;
  std::vector<int64_t> pads_;
  double value_;
};

// CenterCropPad (opset 18): per listed axis, the target extent t of input extent n keeps the input window starting at
// floor((n - t) / 2) when t < n, and puts the input at floor((t - n) / 2) in zeros when t > n (the odd pixel goes to
// the end either way).
class CenterCropPadKernel final : public Kernel {
 public:
  explicit CenterCropPadKernel(std::vector<int64_t> axes)
      : Kernel(KernelFlags{.exact = true}), axes_(std::move(axes)) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0) || !ctx.has_input(1)) ctx.fail(ErrorKind::InvalidModel, "expects input_data and shape");
    check_index_type(ctx, 1, "shape");
    if (ctx.input(1).shape.rank() != 1)
      ctx.fail(ErrorKind::InvalidModel, "shape must be 1-D, got " + ctx.input(1).shape.to_string());
    if (!have_values(ctx, {1})) return;
    const std::vector<int64_t> dims =
        target(ctx.info, ctx.input(0).shape, ints_of(ctx, 1, "shape"), ErrorKind::InvalidModel);
    ctx.set_output(0, ctx.input(0).dtype, checked_shape(ctx, dims));
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Shape& s = x.shape();
    const Shape& out = ctx.output(0).shape();
    const std::vector<int64_t> dims =
        target(ctx.info, s, read_int_tensor(ctx.info, ctx.input(1), "shape"), ErrorKind::InvalidInput);
    if (shape_of(dims) != out)
      ctx.fail(ErrorKind::InvalidInput, "shape value does not match the planned output " + out.to_string());
    const std::vector<int64_t> st = row_strides(s);
    std::vector<std::vector<int64_t>> maps(static_cast<size_t>(s.rank()));
    for (int d = 0; d < s.rank(); ++d) {
      const int64_t n = s[d], t = out[d];
      const int64_t shift = n > t ? (n - t) / 2 : -((t - n) / 2);  // source index of output index 0
      for (int64_t i = 0; i < t; ++i) {
        const int64_t j = i + shift;
        maps[static_cast<size_t>(d)].push_back(j < 0 || j >= n ? INT64_MIN / 16 : j * st[static_cast<size_t>(d)]);
      }
    }
    const ElemBytes zero;
    map_copy(ctx.output(0).raw_mut(), x.raw(), dtype_size(x.dtype()), out, maps, zero.b);
  }

 private:
  // The output extents: `shape` entries on the listed axes (all axes when none are listed), the rest kept.
  std::vector<int64_t> target(const NodeInfo& info, const Shape& s, const std::vector<int64_t>& shape,
                              ErrorKind kind) const {
    std::vector<int64_t> axes = axes_;
    if (axes.empty())
      for (int d = 0; d < s.rank(); ++d) axes.push_back(d);
    if (shape.size() != axes.size())
      info.fail(kind,
                "shape has " + std::to_string(shape.size()) + " entries for " + std::to_string(axes.size()) + " axes");
    std::vector<int64_t> dims(s.dims().begin(), s.dims().end());
    std::vector<bool> seen(static_cast<size_t>(s.rank()), false);
    for (size_t i = 0; i < axes.size(); ++i) {
      const auto d = static_cast<size_t>(normalize_axis(info, axes[i], s.rank()));
      if (seen[d]) info.fail(ErrorKind::InvalidModel, "axis " + std::to_string(axes[i]) + " is repeated");
      seen[d] = true;
      if (shape[i] < 0 || shape[i] > kMaxElements)
        info.fail(kind, "target extent " + std::to_string(shape[i]) + " is out of range");
      dims[d] = shape[i];
    }
    return dims;
  }
  std::vector<int64_t> axes_;
};

}  // namespace

std::unique_ptr<Kernel> make_center_crop_pad(const NodeInfo& info) {
  return std::make_unique<CenterCropPadKernel>(info.get_ints("axes"));
}

std::unique_ptr<Kernel> make_slice(const NodeInfo& info) {
  if (info.opset() >= 10)
    return std::make_unique<SliceKernel>(true, std::vector<int64_t>{}, std::vector<int64_t>{}, std::vector<int64_t>{});
  if (!info.has("starts") || !info.has("ends")) info.fail(ErrorKind::InvalidModel, "needs starts and ends attributes");
  return std::make_unique<SliceKernel>(false, info.get_ints("starts"), info.get_ints("ends"), info.get_ints("axes"));
}

std::unique_ptr<Kernel> make_pad(const NodeInfo& info) {
  const std::string m = info.get_string("mode", "constant");
  PadMode mode = PadMode::Constant;
  if (m == "edge")
    mode = PadMode::Edge;
  else if (m == "reflect")
    mode = PadMode::Reflect;
  else if (m == "wrap" && info.opset() >= 19)
    mode = PadMode::Wrap;
  else if (m != "constant")
    info.fail(ErrorKind::InvalidModel, "unknown mode '" + m + "'");
  if (info.opset() >= 11) return std::make_unique<PadKernel>(mode, true, std::vector<int64_t>{}, 0.0);
  const char* attr = info.opset() < 2 ? "paddings" : "pads";
  if (!info.has(attr)) info.fail(ErrorKind::InvalidModel, std::string("needs the ") + attr + " attribute");
  return std::make_unique<PadKernel>(mode, false, info.get_ints(attr), info.get_float("value", 0.0f));
}

}  // namespace onemodel::rt
