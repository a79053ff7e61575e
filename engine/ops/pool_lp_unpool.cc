// LpPool and MaxUnpool. LpPool shares the window geometry of the other pools but raises to a power
// through libm, so it has no exact flavour (ops-coverage.md lists it as refused in exact mode). MaxUnpool
// only moves elements, so it is exact; the rule for `output_shape` is ops-coverage.md's: an index is a
// position in the shape the pooling implies and is re-based into `output_shape`.
#include <cmath>
#include <cstring>

#include "ops/index_util.h"
#include "ops/reduce_walk.h"
#include "ops/ops.h"
#include "ops/window.h"

namespace onemodel::rt {
namespace {

// y = (sum over the window's taps inside the input of |x|^p)^(1/p); padding taps are zeros and add nothing.
class LpPoolKernel final : public Kernel {
 public:
  LpPoolKernel(WindowAttrs a, float p) : Kernel(KernelFlags{.exact = false}), a_(std::move(a)), p_(p) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0)) ctx.fail(ErrorKind::InvalidModel, "expects an input X");
    const DType t = ctx.input(0).dtype;
    if (t != DType::F32 && t != DType::F64)
      ctx.fail(ErrorKind::Unsupported, "element type " + type_str(t) + " is not supported");
    ctx.set_output(0, t, pool_geometry(ctx.info, ctx.input(0).shape, a_).out_shape);
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const WindowGeom g = pool_geometry(ctx.info, x.shape(), a_);
    if (ctx.output(0).shape() != g.out_shape)
      ctx.fail(ErrorKind::InvalidInput, "input does not match the planned output");
    if (x.dtype() == DType::F32)
      go<float>(g, x.data<float>().data(), ctx.output(0).mutable_data<float>().data());
    else
      go<double>(g, x.data<double>().data(), ctx.output(0).mutable_data<double>().data());
  }

 private:
  template <class T>
  void go(const WindowGeom& g, const T* x, T* y) const {
    std::array<std::vector<AxisWindow>, 3> w;
    for (size_t j = 0; j < 3; ++j) w[j] = axis_windows(g, j);
    const T p = static_cast<T>(p_);
    const int64_t plane = g.in_plane();
    int64_t o = 0;
    for (int64_t pl = 0; pl < g.n * g.c; ++pl) {
      const T* xp = x + pl * plane;
      for (const AxisWindow& wd : w[0])
        for (const AxisWindow& wh : w[1])
          for (const AxisWindow& ww : w[2]) {
            T acc = T(0);
            for (int64_t a = 0, id = wd.first; a < wd.count; ++a, id += wd.step)
              for (int64_t b = 0, ih = wh.first; b < wh.count; ++b, ih += wh.step)
                for (int64_t c = 0, iw = ww.first; c < ww.count; ++c, iw += ww.step) {
                  const T v = std::fabs(xp[(id * g.in[1] + ih) * g.in[2] + iw]);
                  acc += p_ == 2.0f ? v * v : p_ == 1.0f ? v : std::pow(v, p);
                }
            y[o++] = p_ == 2.0f ? std::sqrt(acc) : p_ == 1.0f ? acc : std::pow(acc, T(1) / p);
          }
    }
  }

  WindowAttrs a_;
  float p_;
};

class MaxUnpoolKernel final : public Kernel {
 public:
  explicit MaxUnpoolKernel(WindowAttrs a) : Kernel(KernelFlags{.exact = true}), a_(std::move(a)) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0) || !ctx.has_input(1)) ctx.fail(ErrorKind::InvalidModel, "expects inputs X and I");
    if (ctx.input(1).dtype != DType::I64) ctx.fail(ErrorKind::InvalidModel, "I must be int64");
    if (ctx.input(0).shape != ctx.input(1).shape)
      ctx.fail(ErrorKind::InvalidModel,
               "X " + ctx.input(0).shape.to_string() + " and I " + ctx.input(1).shape.to_string() + " differ in shape");
    if (ctx.has_input(2) && !have_values(ctx, {2})) return;
    const Shape implied = implied_shape(ctx.info, ctx.input(0).shape);
    ctx.set_output(0, ctx.input(0).dtype,
                   ctx.has_input(2) ? given_shape(ctx.info, *ctx.input(2).value, implied) : implied);
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& ind = ctx.input(1);
    const Shape implied = implied_shape(ctx.info, x.shape());
    const Shape out = ctx.has_input(2) ? given_shape(ctx.info, ctx.input(2), implied) : implied;
    Tensor& y = ctx.output(0);
    if (y.shape() != out || ind.shape() != x.shape())
      ctx.fail(ErrorKind::InvalidInput, "inputs do not match the planned output");
    const size_t esz = dtype_size(x.dtype());
    std::memset(y.raw_mut(), 0, y.nbytes());
    const int64_t in_plane = x.numel() == 0 ? 0 : x.numel() / (x.shape()[0] * x.shape()[1]);
    const int64_t imp_plane = implied.numel() / std::max<int64_t>(1, implied[0] * implied[1]);
    const int64_t out_plane = out.numel() / std::max<int64_t>(1, out[0] * out[1]);
    const int k = x.rank() - 2;
    const int64_t* pi = ind.data<int64_t>().data();
    const auto* src = static_cast<const std::byte*>(x.raw());
    auto* dst = static_cast<std::byte*>(y.raw_mut());
    for (int64_t e = 0; e < x.numel(); ++e) {
      const int64_t v = pi[e];
      const int64_t nc = e / in_plane;
      // The index names an element of the implied tensor; split it and check it lies in this sample's
      // channel plane (ONNX indices are flat over the whole tensor).
      if (v < 0 || v >= implied.numel() || v / imp_plane != nc)
        ctx.fail(ErrorKind::InvalidInput, "index " + std::to_string(v) + " at position " + std::to_string(e) +
                                              " is outside its plane of the pooled shape " + implied.to_string());
      int64_t rem = v % imp_plane, target = 0, mul = 1;
      for (int d = k - 1; d >= 0; --d) {
        const int64_t coord = rem % implied[d + 2];
        rem /= implied[d + 2];
        if (coord >= out[d + 2])
          ctx.fail(ErrorKind::InvalidInput,
                   "index " + std::to_string(v) + " lies outside output_shape " + out.to_string());
        target += coord * mul;
        mul *= out[d + 2];
      }
      copy_elem(dst + static_cast<size_t>(nc * out_plane + target) * esz, src + static_cast<size_t>(e) * esz, esz);
    }
  }

 private:
  // (in - 1) * stride + kernel - pad_begin - pad_end per spatial axis.
  Shape implied_shape(const NodeInfo& info, const Shape& x) const {
    const size_t k = a_.kernel.size();
    if (x.rank() != static_cast<int>(k) + 2)
      info.fail(ErrorKind::InvalidModel, "input of shape " + x.to_string() + " does not have the " + std::to_string(k) +
                                             " spatial axes of kernel_shape");
    std::vector<int64_t> d{x[0], x[1]};
    for (size_t i = 0; i < k; ++i) {
      const int64_t n = x[static_cast<int>(i) + 2];
      const int64_t o = n == 0 ? 0 : (n - 1) * a_.strides[i] + a_.kernel[i] - a_.pads[i] - a_.pads[i + k];
      if (o < 0)
        info.fail(ErrorKind::InvalidModel, "pads exceed the unpooled extent of spatial axis " + std::to_string(i));
      d.push_back(o);
    }
    if (!Shape::valid(d)) info.fail(ErrorKind::InvalidModel, "unpooled output would have more than 2^31-1 elements");
    return shape_of(d);
  }
  static Shape given_shape(const NodeInfo& info, const Tensor& t, const Shape& implied) {
    const std::vector<int64_t> d = read_int_tensor(info, t, "output_shape");
    if (static_cast<int>(d.size()) != implied.rank() || d[0] != implied[0] || d[1] != implied[1] || !Shape::valid(d))
      info.fail(ErrorKind::InvalidModel, "output_shape must be [N, C, spatial...] matching " + implied.to_string());
    return shape_of(d);
  }
  WindowAttrs a_;
};

}  // namespace

std::unique_ptr<Kernel> make_lp_pool(const NodeInfo& info) {
  WindowAttrs a = read_window_attrs(info, WindowOp::Pool);
  const float p = info.opset() < 2 ? info.get_float("p", 2.0f) : static_cast<float>(info.get_int("p", 2));
  if (!(p > 0.0f) || !std::isfinite(p)) info.fail(ErrorKind::InvalidModel, "p must be a positive number");
  return std::make_unique<LpPoolKernel>(std::move(a), p);
}

std::unique_ptr<Kernel> make_max_unpool(const NodeInfo& info) {
  return std::make_unique<MaxUnpoolKernel>(read_window_attrs(info, WindowOp::Pool));
}

}  // namespace onemodel::rt
