// Reshape (opsets 5-13 and 14+ with allowzero) and Identity: view_of_input kernels. Infer states the new
// shape; the session makes the view, so run() is only the copying fallback for a caller that wants the data
// in a separate buffer (same row-major order either way). A shape input whose value is unknown at plan time
// asks for run-time values; the runtime then shapes the node again in every run.
#include <cstring>

#include "ops/common.h"
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
    info.fail(ErrorKind::Unsupported, "target rank " + std::to_string(spec.size()) + " exceeds " + std::to_string(kMaxRank));
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
  explicit ReshapeKernel(bool allowzero) : Kernel(KernelFlags{.exact = true, .view_of_input = true}), allowzero_(allowzero) {}

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
    ctx.set_output(0, ctx.input(0).dtype, reshape_target(ctx.info, ctx.input(0).shape, spec, allowzero_, ErrorKind::InvalidModel));
  }

  void run(RunContext& ctx) const override {
    const Shape want = reshape_target(ctx.info, ctx.input(0).shape(), read_int_tensor(ctx.info, ctx.input(1), "shape"),
                                      allowzero_, ErrorKind::InvalidInput);
    if (want != ctx.output(0).shape())
      ctx.fail(ErrorKind::InvalidInput, "shape value does not match the planned output " + ctx.output(0).shape().to_string());
    copy_into(ctx);
  }

 private:
  bool allowzero_;
};

class IdentityKernel final : public Kernel {
 public:
  IdentityKernel() : Kernel(KernelFlags{.exact = true, .view_of_input = true}) {}
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

}  // namespace

std::unique_ptr<Kernel> make_reshape(const NodeInfo& info) {
  const bool allowzero = info.opset() >= 14 && info.get_int("allowzero", 0) != 0;
  return std::make_unique<ReshapeKernel>(allowzero);
}
std::unique_ptr<Kernel> make_identity(const NodeInfo&) { return std::make_unique<IdentityKernel>(); }

}  // namespace onemodel::rt
