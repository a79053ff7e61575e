// Reshape (opsets 5-13 and 14+ with allowzero) and Identity: view_of_input kernels. Infer states the new
// shape; the session makes the view, so run() is only the copying fallback for a caller that wants the data
// in a separate buffer (same row-major order either way). A shape input whose value is unknown at plan time
// asks for run-time values; the runtime then shapes the node again in every run.
#include <cstring>

#include <algorithm>

#include "ops/common.h"
#include "ops/index_util.h"
#include "ops/ops.h"

namespace onemodel::rt {
namespace {

void copy_into(RunContext& ctx) {
  const Tensor& src = ctx.input(0);  // contiguous by the kernel contract
  Tensor& out = ctx.output(0);
  if (out.dtype() != src.dtype() || out.numel() != src.numel())
    ctx.fail(ErrorKind::InvalidInput, "input does not match the planned output " + out.shape().to_string());
  if (src.nbytes() != 0 && out.raw_mut() != src.raw()) std::memcpy(out.raw_mut(), src.raw(), src.nbytes());
}

// ONNX Reshape: 0 copies the input extent at that index (unless allowzero), -1 is inferred (at most once).
Shape reshape_target(const NodeInfo& info, const Shape& in, const std::vector<int64_t>& spec, bool allowzero,
                     ErrorKind kind) {
  if (spec.size() > static_cast<size_t>(kMaxRank))
    info.fail(ErrorKind::Unsupported,
              "target rank " + std::to_string(spec.size()) + " exceeds " + std::to_string(kMaxRank));
  std::vector<int64_t> dims(spec.size());
  int infer_at = -1;
  bool has_zero = false;
  int64_t known = 1;
  for (size_t i = 0; i < spec.size(); ++i) {
    int64_t d = spec[i];
    if (d == -1) {
      if (infer_at >= 0) info.fail(kind, "shape has more than one -1");
      infer_at = static_cast<int>(i);
      continue;
    }
    if (d < -1) info.fail(kind, "shape has a negative extent " + std::to_string(d));
    if (d == 0) {
      has_zero = true;
      if (!allowzero) {
        if (static_cast<int>(i) >= in.rank())
          info.fail(kind, "shape entry 0 at index " + std::to_string(i) + " has no input extent to copy (input " +
                              in.to_string() + ")");
        d = in[static_cast<int>(i)];
      }
    }
    dims[i] = d;
    if (d != 0 && known > kMaxElements / d) info.fail(ErrorKind::Unsupported, "target shape exceeds 2^31-1 elements");
    known *= d;
  }
  if (allowzero && has_zero && infer_at >= 0) info.fail(kind, "allowzero shape cannot hold both 0 and -1");
  if (infer_at >= 0) {
    if (known == 0) info.fail(kind, "cannot infer -1 when the other extents multiply to 0");
    if (in.numel() % known != 0)
      info.fail(kind, "cannot reshape " + in.to_string() + " (" + std::to_string(in.numel()) + " elements) with -1");
    dims[static_cast<size_t>(infer_at)] = in.numel() / known;
    known = in.numel();
  }
  if (known != in.numel()) {
    std::string s = "[";
    for (size_t i = 0; i < spec.size(); ++i) s += (i ? "," : "") + std::to_string(spec[i]);
    info.fail(kind, "cannot reshape " + in.to_string() + " to " + s + "]");
  }
  return Shape(std::span<const int64_t>(dims));
}

class ReshapeKernel final : public Kernel {
 public:
  explicit ReshapeKernel(bool allowzero)
      : Kernel(KernelFlags{.exact = true, .view_of_input = true}), allowzero_(allowzero) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0) || !ctx.has_input(1)) ctx.fail(ErrorKind::InvalidModel, "expects data and shape inputs");
    const InputMeta& s = ctx.input(1);
    if (s.dtype != DType::I64) ctx.fail(ErrorKind::InvalidModel, "shape input must be int64, got " + type_str(s.dtype));
    if (s.shape.rank() != 1) ctx.fail(ErrorKind::InvalidModel, "shape input must be 1-D, got " + s.shape.to_string());
    if (!s.value) {
      ctx.require_runtime_values();
      return;
    }
    const std::vector<int64_t> spec = read_int_tensor(ctx.info, *s.value, "shape");
    ctx.set_output(0, ctx.input(0).dtype,
                   reshape_target(ctx.info, ctx.input(0).shape, spec, allowzero_, ErrorKind::InvalidModel));
  }

  void run(RunContext& ctx) const override {
    const Shape want = reshape_target(ctx.info, ctx.input(0).shape(), read_int_tensor(ctx.info, ctx.input(1), "shape"),
                                      allowzero_, ErrorKind::InvalidInput);
    if (want != ctx.output(0).shape())
      ctx.fail(ErrorKind::InvalidInput,
               "shape value does not match the planned output " + ctx.output(0).shape().to_string());
    copy_into(ctx);
  }

 private:
  bool allowzero_;
};

class IdentityKernel final : public Kernel {
 public:
  IdentityKernel() : Kernel(KernelFlags{.exact = true, .view_of_input = true, .passes_values = true}) {}
  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0)) ctx.fail(ErrorKind::InvalidModel, "expects one input");
    ctx.set_output(0, ctx.input(0).dtype, ctx.input(0).shape);
  }
  void run(RunContext& ctx) const override {
    if (ctx.output(0).shape() != ctx.input(0).shape())
      ctx.fail(ErrorKind::InvalidInput, "input does not match the planned output " + ctx.output(0).shape().to_string());
    copy_into(ctx);
  }
};

// Squeeze: axes from the attribute (before 13) or the optional input (13+); none = every extent-1 axis.
class SqueezeKernel final : public Kernel {
 public:
  explicit SqueezeKernel(std::vector<int64_t> attr_axes, bool axes_input)
      : Kernel(KernelFlags{.exact = true, .view_of_input = true}),
        attr_axes_(std::move(attr_axes)),
        axes_input_(axes_input) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0)) ctx.fail(ErrorKind::InvalidModel, "expects a data input");
    std::vector<int64_t> axes = attr_axes_;
    if (axes_input_ && ctx.has_input(1)) {
      if (!have_values(ctx, {1})) return;
      axes = ints_of(ctx, 1, "axes");
    }
    const Shape& in = ctx.input(0).shape;
    std::vector<bool> drop(static_cast<size_t>(in.rank()), false);
    if (axes.empty()) {
      for (int d = 0; d < in.rank(); ++d) drop[static_cast<size_t>(d)] = in[d] == 1;
    }
    for (int64_t a : axes) {
      const int d = normalize_axis(ctx.info, a, in.rank());
      if (drop[static_cast<size_t>(d)])
        ctx.fail(ErrorKind::InvalidModel, "axis " + std::to_string(a) + " is listed twice");
      if (in[d] != 1)
        ctx.fail(ErrorKind::InvalidModel,
                 "cannot squeeze axis " + std::to_string(a) + " of extent " + std::to_string(in[d]));
      drop[static_cast<size_t>(d)] = true;
    }
    std::vector<int64_t> dims;
    for (int d = 0; d < in.rank(); ++d)
      if (!drop[static_cast<size_t>(d)]) dims.push_back(in[d]);
    ctx.set_output(0, ctx.input(0).dtype, shape_of(dims));
  }
  void run(RunContext& ctx) const override { copy_into(ctx); }

 private:
  std::vector<int64_t> attr_axes_;
  bool axes_input_;
};

// Unsqueeze: axes index the output (negative counts from the output's end); duplicates are an error.
class UnsqueezeKernel final : public Kernel {
 public:
  explicit UnsqueezeKernel(std::vector<int64_t> attr_axes, bool axes_input)
      : Kernel(KernelFlags{.exact = true, .view_of_input = true}),
        attr_axes_(std::move(attr_axes)),
        axes_input_(axes_input) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0)) ctx.fail(ErrorKind::InvalidModel, "expects a data input");
    std::vector<int64_t> axes = attr_axes_;
    if (axes_input_) {
      if (!ctx.has_input(1)) ctx.fail(ErrorKind::InvalidModel, "expects an axes input");
      if (!have_values(ctx, {1})) return;
      axes = ints_of(ctx, 1, "axes");
    }
    const Shape& in = ctx.input(0).shape;
    const int64_t out_rank = in.rank() + static_cast<int64_t>(axes.size());
    if (out_rank > kMaxRank)
      ctx.fail(ErrorKind::Unsupported,
               "output rank " + std::to_string(out_rank) + " exceeds " + std::to_string(kMaxRank));
    std::vector<bool> ins(static_cast<size_t>(out_rank), false);
    for (int64_t a : axes) {
      const int d = normalize_axis(ctx.info, a, static_cast<int>(out_rank));
      if (ins[static_cast<size_t>(d)])
        ctx.fail(ErrorKind::InvalidModel, "axis " + std::to_string(a) + " is listed twice");
      ins[static_cast<size_t>(d)] = true;
    }
    std::vector<int64_t> dims;
    int next = 0;
    for (int64_t d = 0; d < out_rank; ++d) dims.push_back(ins[static_cast<size_t>(d)] ? 1 : in[next++]);
    ctx.set_output(0, ctx.input(0).dtype, shape_of(dims));
  }
  void run(RunContext& ctx) const override { copy_into(ctx); }

 private:
  std::vector<int64_t> attr_axes_;
  bool axes_input_;
};

// Flatten: [prod(dims before axis), prod(dims from axis)], axis in [-rank, rank].
class FlattenKernel final : public Kernel {
 public:
  explicit FlattenKernel(int64_t axis) : Kernel(KernelFlags{.exact = true, .view_of_input = true}), axis_(axis) {}
  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0)) ctx.fail(ErrorKind::InvalidModel, "expects one input");
    const Shape& in = ctx.input(0).shape;
    const int a = normalize_axis(ctx.info, axis_, in.rank(), 1);
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < in.rank(); ++d) (d < a ? outer : inner) *= in[d];
    ctx.set_output(0, ctx.input(0).dtype, Shape{outer, inner});
  }
  void run(RunContext& ctx) const override { copy_into(ctx); }

 private:
  int64_t axis_;
};

// Dropout at inference: the output is the input. With a mask output it cannot be a view (the view contract
// covers output 0 only), so that form copies and fills the mask with true. A training_mode that is true is
// Unsupported unless the ratio is 0 (nothing is dropped, so training mode is the identity too and needs no
// random numbers); one that is not a plan-time constant makes the node shaped (and so checked) in every run.
class DropoutKernel final : public Kernel {
  static bool zero_ratio(InferContext& ctx) {
    if (!ctx.has_input(1)) return false;  // the default ratio is 0.5
    if (!have_values(ctx, {1})) return false;
    const Tensor& r = *ctx.input(1).value;
    if (r.numel() != 1) return false;
    switch (r.dtype()) {
      case DType::F32: return *static_cast<const float*>(r.raw()) == 0.0f;
      case DType::F64: return *static_cast<const double*>(r.raw()) == 0.0;
      case DType::F16: return half_to_float(*static_cast<const uint16_t*>(r.raw())) == 0.0f;
      default: return false;
    }
  }

 public:
  explicit DropoutKernel(bool view) : Kernel(KernelFlags{.exact = true, .view_of_input = view}) {}
  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0)) ctx.fail(ErrorKind::InvalidModel, "expects a data input");
    if (ctx.has_input(2)) {
      if (!have_values(ctx, {2})) return;
      const Tensor& t = *ctx.input(2).value;
      if (t.dtype() != DType::Bool || t.numel() != 1)
        ctx.fail(ErrorKind::InvalidModel, "training_mode must be a bool scalar");
      if (*static_cast<const uint8_t*>(t.raw()) != 0 && !zero_ratio(ctx))
        ctx.fail(ErrorKind::Unsupported,
                 "training_mode true with a ratio other than 0 is not supported (random masks)");
    }
    ctx.set_output(0, ctx.input(0).dtype, ctx.input(0).shape);
    if (ctx.outputs.size() > 1) ctx.set_output(1, DType::Bool, ctx.input(0).shape);
  }
  void run(RunContext& ctx) const override {
    copy_into(ctx);
    if (ctx.outputs.size() > 1 && !ctx.output(1).empty() && ctx.output(1).nbytes() != 0)
      std::memset(ctx.output(1).raw_mut(), 1, ctx.output(1).nbytes());
  }
};

}  // namespace

std::unique_ptr<Kernel> make_squeeze(const NodeInfo& info) {
  return std::make_unique<SqueezeKernel>(info.opset() < 13 ? info.get_ints("axes") : std::vector<int64_t>{},
                                         info.opset() >= 13);
}
std::unique_ptr<Kernel> make_unsqueeze(const NodeInfo& info) {
  if (info.opset() < 13 && !info.has("axes")) info.fail(ErrorKind::InvalidModel, "needs the axes attribute");
  return std::make_unique<UnsqueezeKernel>(info.opset() < 13 ? info.get_ints("axes") : std::vector<int64_t>{},
                                           info.opset() >= 13);
}
std::unique_ptr<Kernel> make_flatten(const NodeInfo& info) {
  return std::make_unique<FlattenKernel>(info.get_int("axis", 1));
}
std::unique_ptr<Kernel> make_dropout(const NodeInfo& info) {
  const bool mask = info.num_outputs() > 1 && info.node().outputs[1] != ir::kNoValue;
  return std::make_unique<DropoutKernel>(!mask);
}

std::unique_ptr<Kernel> make_reshape(const NodeInfo& info) {
  const bool allowzero = info.opset() >= 14 && info.get_int("allowzero", 0) != 0;
  return std::make_unique<ReshapeKernel>(allowzero);
}
std::unique_ptr<Kernel> make_identity(const NodeInfo&) { return std::make_unique<IdentityKernel>(); }

}  // namespace onemodel::rt
