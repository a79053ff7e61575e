// Relu (opsets 6, 13, 14): a compare and select (graph-runtime.md section 7). -0 becomes +0, NaN passes
// through (canonicalised in exact mode). Same bits in both modes otherwise.
#include <type_traits>

#include "ops/common.h"
#include "ops/ops.h"

namespace onemodel::rt {
namespace {

template <class T>
void relu_typed(bool exact, const Tensor& x, Tensor& y) {
  const T* px = x.data<T>().data();
  T* py = y.mutable_data<T>().data();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) {
    const T v = px[i];
    if constexpr (std::is_floating_point_v<T>) {
      // Comparisons with NaN are false, so NaN reaches the else branch unchanged.
      const T r = (v < T(0) || v == T(0)) ? T(0) : v;
      py[i] = exact ? kernels::canon(r) : r;
    } else {
      py[i] = v < T(0) ? T(0) : v;
    }
  }
}

class ReluKernel final : public Kernel {
 public:
  ReluKernel() : Kernel(KernelFlags{.exact = true, .in_place_input = 0}) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0)) ctx.fail(ErrorKind::InvalidModel, "expects one input");
    const DType t = ctx.input(0).dtype;
    if (t == DType::Bool || t == DType::BF16 || !dtype_is_stored(t))
      ctx.fail(ErrorKind::Unsupported, "element type " + type_str(t) + " is not supported");
    ctx.set_output(0, t, ctx.input(0).shape);
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (x.shape() != y.shape() || x.dtype() != y.dtype())
      ctx.fail(ErrorKind::InvalidInput, "input does not match the planned output " + y.shape().to_string());
    if (x.dtype() == DType::F16) {
      const auto* px = static_cast<const uint16_t*>(x.raw());
      auto* py = static_cast<uint16_t*>(y.raw_mut());
      for (int64_t i = 0; i < x.numel(); ++i) {
        const uint16_t h = px[i];
        const bool nan = (h & 0x7FFF) > 0x7C00;
        if (nan) py[i] = ctx.exact ? uint16_t{0x7E00} : h;
        else py[i] = (h & 0x8000) ? uint16_t{0} : h;  // negative (incl. -0) -> +0
      }
      return;
    }
    if (!visit_numeric(x.dtype(), [&](auto tag) { relu_typed<decltype(tag)>(ctx.exact, x, y); }))
      ctx.fail(ErrorKind::Unsupported, "element type " + type_str(x.dtype()) + " is not supported");
  }
};

}  // namespace

std::unique_ptr<Kernel> make_relu(const NodeInfo&) { return std::make_unique<ReluKernel>(); }

}  // namespace onemodel::rt
