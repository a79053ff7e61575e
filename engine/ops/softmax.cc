// Softmax, LogSoftmax and Hardmax (ops-norms.md "Softmax, LogSoftmax, Hardmax"): opsets 1-12 flatten to 2-D
// at `axis` (default 1) and treat each row; 13+ work along one axis (default -1). float32 only. A strided
// row (axis not last) is gathered into scratch, treated and scattered back. Per row:
//   Softmax    m = max ignoring NaN, e[j] = exp(x[j] - m), l = Sum16(e), y[j] = e[j] / l (fast: e[j] * (1/l))
//   LogSoftmax d[j] = x[j] - m, l = Sum16(exp(d)), y[j] = d[j] - log(l)
//   Hardmax    1 at the first maximum, 0 elsewhere; a row holding NaN is all zeros
// The exponential is ExpNonPositive in exact mode and the fast exponential in fast mode
// (exact-transcendentals.md); the log is the library's. NaN results are 0x7FC00000 in both modes. Rows with
// NaN, +inf or only -inf come out all-NaN by the arithmetic itself (inf - inf and -inf - -inf are NaN, and
// NaN reaches l).
#include <algorithm>
#include <limits>

#include "ops/common.h"
#include "ops/norm_ops.h"
#include "ops/ops.h"

namespace onemodel::rt {
namespace {

enum class RowOp { Softmax, LogSoftmax, Hardmax };

float row_max(const float* row, int64_t n) {
  float m = -std::numeric_limits<float>::infinity();
  for (int64_t j = 0; j < n; ++j)
    if (row[j] > m) m = row[j];  // NaN compares false: ignored
  return m;
}

void softmax_row(float* row, int64_t n, bool exact) {
  const float m = row_max(row, n);
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

// `tmp` holds n floats of scratch for the exponentials (the row itself keeps the differences).
void log_softmax_row(float* row, float* tmp, int64_t n, bool exact) {
  const float m = row_max(row, n);
  for (int64_t j = 0; j < n; ++j) {
    row[j] = row[j] - m;
    tmp[j] = exact ? kernels::exact_exp_nonpositive(row[j]) : kernels::fast_exp(row[j]);
  }
  const float ll = kernels::exact_log(kernels::sum16(tmp, static_cast<size_t>(n)));
  for (int64_t j = 0; j < n; ++j) row[j] = kernels::canon(row[j] - ll);
}

void hardmax_row(float* row, int64_t n) {
  int64_t best = -1;
  for (int64_t j = 0; j < n; ++j) {
    if (row[j] != row[j]) {  // NaN anywhere: the row is all zeros
      best = -1;
      break;
    }
    if (best < 0 || row[j] > row[best]) best = j;
  }
  for (int64_t j = 0; j < n; ++j) row[j] = j == best ? 1.0f : 0.0f;
}

class RowKernel final : public Kernel {
 public:
  RowKernel(RowOp op, int64_t axis, bool coerce_2d)
      : Kernel(KernelFlags{.exact = true}), op_(op), axis_(axis), coerce_2d_(coerce_2d) {}

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
    Tensor tmp = ctx.scratch(DType::F32, Shape{2 * n});
    float* row = tmp.mutable_data<float>().data();
    float* aux = row + n;
    if (inner == 1) {  // contiguous rows: treat them in the output directly
      for (int64_t o = 0; o < outer; ++o) {
        std::copy(px + o * n, px + (o + 1) * n, py + o * n);
        treat(py + o * n, aux, n, ctx.exact);
      }
      return;
    }
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t base = o * n * inner + i;
        for (int64_t j = 0; j < n; ++j) row[j] = px[base + j * inner];
        treat(row, aux, n, ctx.exact);
        for (int64_t j = 0; j < n; ++j) py[base + j * inner] = row[j];
      }
  }

 private:
  void treat(float* row, float* aux, int64_t n, bool exact) const {
    switch (op_) {
      case RowOp::Softmax: softmax_row(row, n, exact); break;
      case RowOp::LogSoftmax: log_softmax_row(row, aux, n, exact); break;
      case RowOp::Hardmax: hardmax_row(row, n); break;
    }
  }

  RowOp op_;
  int64_t axis_;
  bool coerce_2d_;
};

std::unique_ptr<Kernel> make_row_op(const NodeInfo& info, RowOp op) {
  const bool coerce = info.opset() < 13;
  return std::make_unique<RowKernel>(op, info.get_int("axis", coerce ? 1 : -1), coerce);
}

}  // namespace

std::unique_ptr<Kernel> make_softmax(const NodeInfo& info) { return make_row_op(info, RowOp::Softmax); }
std::unique_ptr<Kernel> make_log_softmax(const NodeInfo& info) { return make_row_op(info, RowOp::LogSoftmax); }
std::unique_ptr<Kernel> make_hardmax(const NodeInfo& info) { return make_row_op(info, RowOp::Hardmax); }

}  // namespace onemodel::rt
