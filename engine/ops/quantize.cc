// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear (int8.md "Operators"). Every output is a fixed
// sequence of float32 operations (one division or one multiplication) and integer steps, identical in both
// modes, so all three are exact.
#include <cmath>
#include <algorithm>
#include <string>
#include <vector>

#include "kernels/quantize.h"
#include "ops/common.h"
#include "ops/quant_common.h"
#include "ops/ops.h"

namespace onemodel::rt {
namespace {

using quant::AxisLayout;

// ONNX TensorProto data type codes of the quantized output types (QuantizeLinear's output_dtype).
DType dtype_from_onnx_code(int64_t code) {
  switch (code) {
    case 2: return DType::U8;
    case 3: return DType::I8;
    case 4: return DType::U16;
    case 5: return DType::I16;
    default: return DType::Undefined;
  }
}

class QuantizeKernel final : public Kernel {
 public:
  explicit QuantizeKernel(const NodeInfo& info) : Kernel(KernelFlags{.exact = true}) {
    allow_axis_ = info.opset() >= 13;
    axis_ = info.get_int("axis", 1);
    if (info.get_int("block_size", 0) != 0)
      info.fail(ErrorKind::Unsupported, "blocked quantization (block_size) is not supported");
    const int64_t code = info.get_int("output_dtype", 0);
    if (code != 0) {
      out_attr_ = dtype_from_onnx_code(code);
      if (out_attr_ == DType::Undefined)
        info.fail(ErrorKind::Unsupported,
                  "output_dtype " + std::to_string(code) + " is not supported (uint8, int8, uint16, int16)");
    }
  }

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0) || !ctx.has_input(1)) ctx.fail(ErrorKind::InvalidModel, "expects inputs x and y_scale");
    if (ctx.input(0).dtype != DType::F32 || ctx.input(1).dtype != DType::F32)
      ctx.fail(ErrorKind::Unsupported, "x and y_scale must be float32, got " + type_str(ctx.input(0).dtype) + " and " +
                                           type_str(ctx.input(1).dtype));
    DType out = out_attr_ == DType::Undefined ? DType::U8 : out_attr_;
    if (ctx.has_input(2)) {
      const DType z = ctx.input(2).dtype;
      if (out_attr_ != DType::Undefined && z != out_attr_)
        ctx.fail(ErrorKind::InvalidModel,
                 "y_zero_point is " + type_str(z) + " but output_dtype is " + type_str(out_attr_));
      out = z;
    }
    if (!quant::visit_q(out, [](auto) {}))
      ctx.fail(ErrorKind::Unsupported, "output type " + type_str(out) + " is not supported");
    AxisLayout lay;
    std::string why;
    if (!quant::axis_layout(ctx.input(0).shape, ctx.input(1).shape, ctx.has_input(2) ? &ctx.input(2).shape : nullptr,
                            axis_, allow_axis_, lay, why))
      ctx.fail(ErrorKind::InvalidModel, why);
    ctx.set_output(0, out, ctx.input(0).shape);
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& scale = ctx.input(1);
    const Tensor* zp = ctx.has_input(2) ? &ctx.input(2) : nullptr;
    Tensor& y = ctx.output(0);
    AxisLayout lay;
    std::string why;
    if (!quant::axis_layout(x.shape(), scale.shape(), zp ? &zp->shape() : nullptr, axis_, allow_axis_, lay, why))
      ctx.fail(ErrorKind::InvalidInput, why);
    if (x.dtype() != DType::F32 || scale.dtype() != DType::F32 || (zp && zp->dtype() != y.dtype()) ||
        y.shape() != x.shape())
      ctx.fail(ErrorKind::InvalidInput, "inputs do not match the planned output");
    const auto xs = x.data<float>();
    const auto ss = scale.data<float>();
    quant::visit_q(y.dtype(), [&](auto tag) {
      using Q = decltype(tag);
      constexpr int64_t lo = std::numeric_limits<Q>::min(), hi = std::numeric_limits<Q>::max();
      Q* out = y.mutable_data<Q>().data();
      for (int64_t e = 0; e < x.numel(); ++e) {
        const int64_t ch = lay.channel(e);
        const float q = xs[static_cast<size_t>(e)] / ss[static_cast<size_t>(ch)];
        out[e] = static_cast<Q>(quant::saturate_round(q, zp ? quant::int_at(*zp, ch) : 0, lo, hi));
      }
    });
  }

 private:
  bool allow_axis_ = true;
  int64_t axis_ = 1;
  DType out_attr_ = DType::Undefined;
};

class DequantizeKernel final : public Kernel {
 public:
  explicit DequantizeKernel(const NodeInfo& info) : Kernel(KernelFlags{.exact = true}) {
    allow_axis_ = info.opset() >= 13;
    axis_ = info.get_int("axis", 1);
    if (info.get_int("block_size", 0) != 0)
      info.fail(ErrorKind::Unsupported, "blocked quantization (block_size) is not supported");
    if (info.get_int("output_dtype", 0) != 0 && info.get_int("output_dtype", 0) != 1)
      info.fail(ErrorKind::Unsupported, "output_dtype other than float32 is not supported");
  }

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0) || !ctx.has_input(1)) ctx.fail(ErrorKind::InvalidModel, "expects inputs x and x_scale");
    const DType t = ctx.input(0).dtype;
    if (!quant::visit_q(t, [](auto) {}) && t != DType::I32)
      ctx.fail(ErrorKind::Unsupported, "input type " + type_str(t) + " is not supported");
    if (ctx.input(1).dtype != DType::F32)
      ctx.fail(ErrorKind::Unsupported, "x_scale must be float32, got " + type_str(ctx.input(1).dtype));
    if (ctx.has_input(2) && ctx.input(2).dtype != t)
      ctx.fail(ErrorKind::InvalidModel, "x_zero_point is " + type_str(ctx.input(2).dtype) + " but x is " + type_str(t));
    AxisLayout lay;
    std::string why;
    if (!quant::axis_layout(ctx.input(0).shape, ctx.input(1).shape, ctx.has_input(2) ? &ctx.input(2).shape : nullptr,
                            axis_, allow_axis_, lay, why))
      ctx.fail(ErrorKind::InvalidModel, why);
    ctx.set_output(0, DType::F32, ctx.input(0).shape);
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& scale = ctx.input(1);
    const Tensor* zp = ctx.has_input(2) ? &ctx.input(2) : nullptr;
    AxisLayout lay;
    std::string why;
    if (!quant::axis_layout(x.shape(), scale.shape(), zp ? &zp->shape() : nullptr, axis_, allow_axis_, lay, why))
      ctx.fail(ErrorKind::InvalidInput, why);
    if (scale.dtype() != DType::F32 || (zp && zp->dtype() != x.dtype()) || ctx.output(0).shape() != x.shape())
      ctx.fail(ErrorKind::InvalidInput, "inputs do not match the planned output");
    if (x.dtype() == DType::I32 && zp)
      for (int64_t i = 0; i < zp->numel(); ++i)
        if (quant::int_at(*zp, i) != 0) ctx.fail(ErrorKind::InvalidInput, "an int32 input needs a zero point of 0");
    const auto ss = scale.data<float>();
    float* out = ctx.output(0).mutable_data<float>().data();
    for (int64_t e = 0; e < x.numel(); ++e) {
      const int64_t ch = lay.channel(e);
      // x - zp in 64-bit integers (exact), then one conversion and one multiplication.
      const int64_t v = quant::int_at(x, e) - (zp ? quant::int_at(*zp, ch) : 0);
      out[e] = static_cast<float>(v) * ss[static_cast<size_t>(ch)];
    }
  }

 private:
  bool allow_axis_ = true;
  int64_t axis_ = 1;
};

class DynamicQuantizeKernel final : public Kernel {
 public:
  DynamicQuantizeKernel() : Kernel(KernelFlags{.exact = true}) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0)) ctx.fail(ErrorKind::InvalidModel, "expects input x");
    if (ctx.input(0).dtype != DType::F32)
      ctx.fail(ErrorKind::Unsupported, "x must be float32, got " + type_str(ctx.input(0).dtype));
    if (ctx.outputs.size() != 3) ctx.fail(ErrorKind::InvalidModel, "expects three outputs");
    ctx.set_output(0, DType::U8, ctx.input(0).shape);
    ctx.set_output(1, DType::F32, Shape{});
    ctx.set_output(2, DType::U8, Shape{});
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DType::F32) ctx.fail(ErrorKind::InvalidInput, "x must be float32");
    const auto xs = x.data<float>();
    const float* px = xs.data();
    const int64_t count = static_cast<int64_t>(xs.size());
    // lo = min(0, min x), hi = max(0, max x); NaN elements take no part (compares are false). Minimum and
    // maximum do not depend on the order, so chunks of the pool each reduce their part and the parts combine.
    constexpr int64_t kChunk = 65536;
    const int64_t chunks = (count + kChunk - 1) / kChunk;
    std::vector<float> part_lo(static_cast<size_t>(chunks), 0.0f), part_hi(static_cast<size_t>(chunks), 0.0f);
    parallel_for(ctx.pool, chunks, 0.3 * static_cast<double>(count), [&](int64_t c) {
      float l = 0.0f, h = 0.0f;
      const int64_t b = c * kChunk;
      kern::min_max_f32(ctx.isa, px + b, std::min(kChunk, count - b), l, h);
      part_lo[static_cast<size_t>(c)] = l;
      part_hi[static_cast<size_t>(c)] = h;
    });
    float lo = 0.0f, hi = 0.0f;
    for (int64_t c = 0; c < chunks; ++c) {
      lo = std::min(lo, part_lo[static_cast<size_t>(c)]);
      hi = std::max(hi, part_hi[static_cast<size_t>(c)]);
    }
    float scale = (hi - lo) / 255.0f;
    int64_t zp = 0;
    if (scale == 0.0f) {
      scale = 1.0f;  // all zeros (int8.md): scale 1, zero point 0
    } else {
      const float q = lo / scale;
      zp = quant::saturate_round(0.0f - q, 0, 0, 255);
    }
    if (ctx.outputs.size() > 0 && !ctx.output(0).empty()) {
      uint8_t* y = ctx.output(0).mutable_data<uint8_t>().data();
      // The vector form of saturate_round(x / scale, zp, 0, 255) (kernels/quantize.h): ISNet's 119 of these
      // took 2.2 s of a 12 s run one element at a time (a library nearbyint call each).
      parallel_for(ctx.pool, chunks, 0.3 * static_cast<double>(count), [&](int64_t c) {
        const int64_t b = c * kChunk;
        kern::quantize_u8(ctx.isa, px + b, std::min(kChunk, count - b), scale, static_cast<int32_t>(zp), y + b);
      });
    }
    if (ctx.outputs.size() > 1 && !ctx.output(1).empty()) ctx.output(1).mutable_data<float>()[0] = scale;
    if (ctx.outputs.size() > 2 && !ctx.output(2).empty())
      ctx.output(2).mutable_data<uint8_t>()[0] = static_cast<uint8_t>(zp);
  }
};

}  // namespace

std::unique_ptr<Kernel> make_quantize_linear(const NodeInfo& info) { return std::make_unique<QuantizeKernel>(info); }
std::unique_ptr<Kernel> make_dequantize_linear(const NodeInfo& info) {
  return std::make_unique<DequantizeKernel>(info);
}
std::unique_ptr<Kernel> make_dynamic_quantize_linear(const NodeInfo&) {
  return std::make_unique<DynamicQuantizeKernel>();
}

}  // namespace onemodel::rt
