// Det (opsets 11+): the determinant of each trailing M x M matrix, by LU decomposition with partial pivoting
// (Golub and Van Loan, algorithm 3.4.1) in the input's type. The pivot is the first row holding the largest
// magnitude in the column; each row swap flips the sign; the determinant is the product of the pivots taken in
// column order, starting from the sign. Only + - * / in this fixed order, so it is exact (ops-coverage.md), with
// canonical NaN in exact mode. A zero column below the diagonal gives a determinant of zero at once.
#include <cmath>
#include <limits>

#include "ops/common.h"
#include "ops/index_util.h"
#include "ops/ops.h"

namespace onemodel::rt {
namespace {

template <class T>
T lu_det(T* a, int64_t m) {
  T det = T(1);
  for (int64_t k = 0; k < m; ++k) {
    int64_t p = k;
    for (int64_t i = k + 1; i < m; ++i)
      if (std::abs(a[i * m + k]) > std::abs(a[p * m + k])) p = i;
    if (a[p * m + k] == T(0)) return T(0);
    if (p != k) {
      for (int64_t j = 0; j < m; ++j) std::swap(a[k * m + j], a[p * m + j]);
      det = -det;
    }
    const T pivot = a[k * m + k];
    det = det * pivot;
    for (int64_t i = k + 1; i < m; ++i) {
      const T f = a[i * m + k] / pivot;
      for (int64_t j = k + 1; j < m; ++j) a[i * m + j] = a[i * m + j] - f * a[k * m + j];
    }
  }
  return det;
}

class DetKernel final : public Kernel {
 public:
  DetKernel() : Kernel(KernelFlags{.exact = true}) {}

  void infer(InferContext& ctx) const override {
    const InputMeta& x = ctx.input(0);
    if (x.dtype != DType::F32 && x.dtype != DType::F64)
      ctx.fail(ErrorKind::Unsupported, "element type " + type_str(x.dtype) + " is not supported");
    ctx.set_output(0, x.dtype, out_shape(ctx.info, x.shape));
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (y.shape() != out_shape(ctx.info, x.shape()))
      ctx.fail(ErrorKind::InvalidInput, "input does not match the planned output");
    if (x.dtype() == DType::F32)
      run_typed<float>(ctx, x, y);
    else
      run_typed<double>(ctx, x, y);
  }

 private:
  static Shape out_shape(const NodeInfo& info, const Shape& x) {
    if (x.rank() < 2 || x[x.rank() - 1] != x[x.rank() - 2])
      info.fail(ErrorKind::InvalidModel, "input must be [..., M, M], not " + x.to_string());
    std::vector<int64_t> d = x.to_vector();
    d.resize(d.size() - 2);
    return shape_of(d);
  }

  template <class T>
  static void run_typed(RunContext& ctx, const Tensor& x, Tensor& y) {
    const int64_t m = x.shape()[x.rank() - 1];
    const int64_t count = y.numel();
    std::vector<T> work(static_cast<size_t>(m * m));
    const T* px = x.data<T>().data();
    T* py = y.mutable_data<T>().data();
    for (int64_t b = 0; b < count; ++b) {
      std::copy(px + b * m * m, px + (b + 1) * m * m, work.begin());
      T d = lu_det(work.data(), m);
      if (ctx.exact && std::isnan(d)) d = std::numeric_limits<T>::quiet_NaN();
      py[b] = d;
    }
  }
};

}  // namespace

std::unique_ptr<Kernel> make_det(const NodeInfo&) { return std::make_unique<DetKernel>(); }

}  // namespace onemodel::rt
