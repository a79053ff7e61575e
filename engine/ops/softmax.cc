// Softmax: opsets 1-12 flatten to 2-D at `axis` (default 1) and normalise each row; 13+ normalise along one
// axis (default -1). float32 only (ops-norms.md). Per row (kernels-attention.md "Softmax"):
//   m = max ignoring NaN, e[j] = expNonPositive(x[j] - m), l = Sum16(e), y[j] = e[j] / l   (exact)
//   the same with kernels::fast_exp and y[j] = e[j] * (1/l)                                   (fast)
// fast_exp is the "Fast exponential" of exact-transcendentals.md (degree-3 polynomial, flush below -87.3)
// evaluated without fma, so the fast flavour is also reproducible across platforms; it is ~2.3 ulp.
// NaN results are 0x7FC00000 in both modes. Rows with NaN, +inf or only -inf come out all-NaN by the
// arithmetic itself (inf - inf and -inf - -inf are NaN, and NaN reaches l).
#include <limits>

#include "ops/common.h"
#include "ops/ops.h"

namespace onemodel::rt {
namespace {

void softmax_row(float* row, int64_t n, bool exact) {
  float m = -std::numeric_limits<float>::infinity();
  for (int64_t j = 0; j < n; ++j)
    if (row[j] > m) m = row[j];  // NaN compares false: ignored
  for (int64_t j = 0; j < n; ++j) {
    const float d = row[j] - m;
    row[j] = exact ? kernels::exact_exp_nonpositive(d) : kernels::fast_exp(d);
  }
  const float l = kernels::sum16(row, static_cast<size_t>(n));
  if (exact) {
    for (int64_t j = 0; j < n; ++j) row[j] = kernels::canon(row[j] / l);
  } else {
    const float inv = 1.0f / l;
    for (int64_t j = 0; j < n; ++j) row[j] = kernels::canon(row[j] * inv);
  }
}

class SoftmaxKernel final : public Kernel {
 public:
  SoftmaxKernel(int64_t axis, bool coerce_2d) : Kernel(KernelFlags{.exact = true}), axis_(axis), coerce_2d_(coerce_2d) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0)) ctx.fail(ErrorKind::InvalidModel, "expects one input");
    const InputMeta& x = ctx.input(0);
    if (x.dtype != DType::F32) ctx.fail(ErrorKind::Unsupported, "element type " + type_str(x.dtype) + " is not supported");
    normalize_axis(ctx.info, axis_, x.shape.rank(), coerce_2d_ ? 1 : 0);
    ctx.set_output(0, x.dtype, x.shape);
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (x.shape() != y.shape() || x.dtype() != DType::F32 || y.dtype() != DType::F32)
      ctx.fail(ErrorKind::InvalidInput, "input does not match the planned output " + y.shape().to_string());
    const int rank = x.rank();
    const int axis = normalize_axis(ctx.info, axis_, rank, coerce_2d_ ? 1 : 0);
    // View as [outer, n, inner]; the coerced form is inner = 1 with n = product of dims from axis on.
    int64_t outer = 1, n = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= x.shape()[d];
    if (coerce_2d_) {
      for (int d = axis; d < rank; ++d) n *= x.shape()[d];
    } else {
      n = x.shape()[axis];
      for (int d = axis + 1; d < rank; ++d) inner *= x.shape()[d];
    }
    if (x.numel() == 0) return;
    const float* px = x.data<float>().data();
    float* py = y.mutable_data<float>().data();
    if (inner == 1) {
      for (int64_t o = 0; o < outer; ++o) {
        float* row = py + o * n;
        if (row != px + o * n)
          for (int64_t j = 0; j < n; ++j) row[j] = px[o * n + j];
        softmax_row(row, n, ctx.exact);
      }
      return;
    }
    // Axis not last: gather each strided row into scratch, normalise, scatter back.
    Tensor tmp = ctx.scratch(DType::F32, Shape{n});
    float* row = tmp.mutable_data<float>().data();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t base = o * n * inner + i;
        for (int64_t j = 0; j < n; ++j) row[j] = px[base + j * inner];
        softmax_row(row, n, ctx.exact);
        for (int64_t j = 0; j < n; ++j) py[base + j * inner] = row[j];
      }
  }

 private:
  int64_t axis_;
  bool coerce_2d_;
};

}  // namespace

std::unique_ptr<Kernel> make_softmax(const NodeInfo& info) {
  const bool coerce = info.opset() < 13;
  return std::make_unique<SoftmaxKernel>(info.get_int("axis", coerce ? 1 : -1), coerce);
}

}  // namespace onemodel::rt
