// ArgMax, ArgMin, CumSum and CumProd (ops-norms.md "ArgMax, ArgMin", "CumSum"; ops-newer.md section 3): scans
// along one axis, viewed as [outer, n, inner]. Nothing is rounded except the scans' additions or products, which
// run in the fixed direction of accumulation, so fast and exact agree.
//   ArgMax/ArgMin: from index 0 a later element wins when strictly greater (smaller), or greater (smaller) or
//     equal with select_last_index; NaN never wins unless first. int64 output; an axis of extent 0 gives 0.
//   CumSum: inclusive y[i] = y[i-1] + x[i]; exclusive shifts by one from 0; reverse runs from the end.
//     Integers wrap around. The axis is an input read at run time.
//   CumProd (opset 26): the same scan with products; the exclusive scan starts from 1.
#include "ops/common.h"
#include "ops/ops.h"
#include "ops/reduce_walk.h"

namespace onemodel::rt {
namespace {

struct AxisView {
  int64_t outer = 1, n = 1, inner = 1;
};
AxisView axis_view(const Shape& s, int axis) {
  AxisView v;
  for (int d = 0; d < axis; ++d) v.outer *= s[d];
  v.n = s[axis];
  for (int d = axis + 1; d < s.rank(); ++d) v.inner *= s[d];
  return v;
}

class ArgKernel final : public Kernel {
 public:
  ArgKernel(bool max, int64_t axis, bool keepdims, bool last)
      : Kernel(KernelFlags{.exact = true}), max_(max), axis_(axis), keepdims_(keepdims), last_(last) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0)) ctx.fail(ErrorKind::InvalidModel, "expects a data input");
    const InputMeta& x = ctx.input(0);
    if (!visit_numeric(x.dtype, [](auto) {}))
      ctx.fail(ErrorKind::Unsupported, "element type " + type_str(x.dtype) + " is not supported");
    ctx.set_output(0, DType::I64, out_shape(ctx.info, x.shape));
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (y.shape() != out_shape(ctx.info, x.shape()) || y.dtype() != DType::I64)
      ctx.fail(ErrorKind::InvalidInput, "input does not match the planned output " + y.shape().to_string());
    const AxisView v = axis_view(x.shape(), normalize_axis(ctx.info, axis_, x.rank()));
    int64_t* py = y.mutable_data<int64_t>().data();
    visit_numeric(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.data<T>().data();
      for (int64_t o = 0; o < v.outer; ++o)
        for (int64_t i = 0; i < v.inner; ++i) {
          const T* p = px + o * v.n * v.inner + i;
          int64_t best = 0;
          for (int64_t j = 1; j < v.n; ++j) {
            const T a = p[j * v.inner], b = p[best * v.inner];
            const bool wins = max_ ? (last_ ? a >= b : a > b) : (last_ ? a <= b : a < b);
            if (wins) best = j;
          }
          py[o * v.inner + i] = best;
        }
    });
  }

 private:
  Shape out_shape(const NodeInfo& info, const Shape& in) const {
    if (in.rank() == 0) info.fail(ErrorKind::InvalidModel, "input must have rank 1 or more");
    const int axis = normalize_axis(info, axis_, in.rank());
    std::vector<int64_t> d;
    for (int k = 0; k < in.rank(); ++k) {
      if (k != axis)
        d.push_back(in[k]);
      else if (keepdims_)
        d.push_back(1);
    }
    return Shape(std::span<const int64_t>(d));
  }

  bool max_;
  int64_t axis_;
  bool keepdims_, last_;
};

bool cumsum_type(DType t) {
  return t == DType::F32 || t == DType::F64 || t == DType::I32 || t == DType::I64 || t == DType::U32 || t == DType::U64;
}

class CumScanKernel final : public Kernel {
 public:
  CumScanKernel(bool exclusive, bool reverse, bool product)
      : Kernel(KernelFlags{.exact = true}), exclusive_(exclusive), reverse_(reverse), product_(product) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0) || !ctx.has_input(1)) ctx.fail(ErrorKind::InvalidModel, "expects inputs x and axis");
    const InputMeta& x = ctx.input(0);
    if (!cumsum_type(x.dtype))
      ctx.fail(ErrorKind::Unsupported, "element type " + type_str(x.dtype) + " is not supported");
    if (x.shape.rank() == 0) ctx.fail(ErrorKind::InvalidModel, "input must have rank 1 or more");
    ctx.set_output(0, x.dtype, x.shape);
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (y.shape() != x.shape() || y.dtype() != x.dtype() || !cumsum_type(x.dtype()))
      ctx.fail(ErrorKind::InvalidInput, "input does not match the planned output " + y.shape().to_string());
    const Tensor& a = ctx.input(1);
    if (a.numel() != 1 || a.rank() > 1)
      ctx.fail(ErrorKind::InvalidInput, "axis must hold one value, got shape " + a.shape().to_string());
    const int64_t axis = read_int_tensor(ctx.info, a, "axis")[0];
    const int rank = x.rank();
    if (axis < -rank || axis >= rank)
      ctx.fail(ErrorKind::InvalidInput,
               "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
    const AxisView v = axis_view(x.shape(), static_cast<int>(axis < 0 ? axis + rank : axis));
    visit_numeric(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* px = x.data<T>().data();
      T* py = y.mutable_data<T>().data();
      for (int64_t o = 0; o < v.outer; ++o)
        for (int64_t i = 0; i < v.inner; ++i) {
          const int64_t base = o * v.n * v.inner + i;
          T acc = product_ ? T(1) : T(0);
          auto step = [this](T a, T b) { return product_ ? mul_wrap(a, b) : add_wrap(a, b); };
          for (int64_t s = 0; s < v.n; ++s) {
            const int64_t at = base + (reverse_ ? v.n - 1 - s : s) * v.inner;
            if (exclusive_) {
              py[at] = canon_any(acc);
              acc = step(acc, px[at]);
            } else {
              acc = s == 0 ? px[at] : step(acc, px[at]);
              py[at] = canon_any(acc);
            }
          }
        }
    });
  }

 private:
  bool exclusive_, reverse_, product_;
};

}  // namespace

std::unique_ptr<Kernel> make_argmax(const NodeInfo& info) {
  return std::make_unique<ArgKernel>(true, info.get_int("axis", 0), info.get_int("keepdims", 1) != 0,
                                     info.opset() >= 12 && info.get_int("select_last_index", 0) != 0);
}
std::unique_ptr<Kernel> make_argmin(const NodeInfo& info) {
  return std::make_unique<ArgKernel>(false, info.get_int("axis", 0), info.get_int("keepdims", 1) != 0,
                                     info.opset() >= 12 && info.get_int("select_last_index", 0) != 0);
}
std::unique_ptr<Kernel> make_cumsum(const NodeInfo& info) {
  return std::make_unique<CumScanKernel>(info.get_int("exclusive", 0) != 0, info.get_int("reverse", 0) != 0, false);
}
std::unique_ptr<Kernel> make_cumprod(const NodeInfo& info) {
  return std::make_unique<CumScanKernel>(info.get_int("exclusive", 0) != 0, info.get_int("reverse", 0) != 0, true);
}

}  // namespace onemodel::rt
