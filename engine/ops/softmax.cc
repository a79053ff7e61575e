// Softmax, LogSoftmax and Hardmax (ops-norms.md "Softmax, LogSoftmax, Hardmax"): opsets 1-12 flatten to 2-D
// at `axis` (default 1) and treat each row; 13+ work along one axis (default -1). float32 only. A strided
// row (axis not last) is gathered into scratch, treated and scattered back. Per row:
//   Softmax    m = max ignoring NaN, e[j] = exp(x[j] - m), l = Sum16(e), y[j] = e[j] / l (fast: e[j] * (1/l))
//   LogSoftmax d[j] = x[j] - m, l = Sum16(exp(d)), y[j] = d[j] - log(l)
//   Hardmax    1 at the first maximum, 0 elsewhere; a row holding NaN is all zeros
// The exponential is ExpNonPositive in exact mode and the fast exponential in fast mode
// (exact-transcendentals.md); the log is the library's. NaN results are 0x7FC00000 in both modes. Rows with
// NaN, +inf or only -inf come out all-NaN by the arithmetic itself (inf - inf and -inf - -inf are NaN, and
// NaN reaches l). Softmax and LogSoftmax rows run on the vector kernels of kernels/softmax.h in fixed chunks of
// max(1, 16384 / n) rows over the session's pool (a row is never split, so threads cannot change a bit); rows
// along an axis that is not the last are first gathered into a contiguous scratch copy.
#include <algorithm>
#include <limits>

#include "kernels/softmax.h"
#include "ops/common.h"
#include "ops/ops.h"

namespace onemodel::rt {
namespace {

enum class RowOp { Softmax, LogSoftmax, Hardmax };

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
    if (x.dtype != DType::F32)
      ctx.fail(ErrorKind::Unsupported, "element type " + type_str(x.dtype) + " is not supported");
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
    if (op_ == RowOp::Hardmax) {
      run_hardmax(ctx, px, py, outer, n, inner);
      return;
    }
    const int64_t rows = outer * inner;
    if (inner == 1) {
      run_rows(ctx, px, py, rows, n);
      return;
    }
    // Rows along a strided axis: gather them contiguous, treat them, scatter them back.
    Tensor tmp = ctx.scratch(DType::F32, Shape{rows * n});
    float* t = tmp.mutable_data<float>().data();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < inner; ++i) t[(o * inner + i) * n + j] = px[(o * n + j) * inner + i];
    run_rows(ctx, t, t, rows, n);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < inner; ++i) py[(o * n + j) * inner + i] = t[(o * inner + i) * n + j];
  }

 private:
  // Contiguous rows of n (x == y allowed), in fixed chunks of max(1, 16384 / n) rows (ops-norms.md).
  void run_rows(const RunContext& ctx, const float* x, float* y, int64_t rows, int64_t n) const {
    const int64_t per = std::max<int64_t>(1, 16384 / n);
    const int64_t chunks = (rows + per - 1) / per;
    const kern::Isa isa = ctx.isa;
    const bool exact = ctx.exact;
    const bool log = op_ == RowOp::LogSoftmax;
    // About 2 ns per element (exponential, sum, division); it only caps how many threads wake.
    parallel_for(ctx.pool, chunks, 2.0 * static_cast<double>(rows * n), [&](int64_t c) {
      const int64_t r0 = c * per;
      const int64_t cnt = std::min(per, rows - r0);
      if (log) {
        kern::log_softmax_rows(isa, exact, x + r0 * n, y + r0 * n, cnt, n);
      } else {
        kern::softmax_rows(isa, exact, x + r0 * n, y + r0 * n, cnt, n);
      }
    });
  }

  static void run_hardmax(const RunContext& ctx, const float* px, float* py, int64_t outer, int64_t n, int64_t inner) {
    Tensor tmp = ctx.scratch(DType::F32, Shape{n});
    float* row = tmp.mutable_data<float>().data();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t base = o * n * inner + i;
        for (int64_t j = 0; j < n; ++j) row[j] = px[base + j * inner];
        hardmax_row(row, n);
        for (int64_t j = 0; j < n; ++j) py[base + j * inner] = row[j];
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
