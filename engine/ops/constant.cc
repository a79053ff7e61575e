// Constant (all opsets) and Shape (1-14, 15+ with start/end): outputs known from attributes or shapes alone,
// stated with set_constant_output so the node is never scheduled. run() copies the same value for a caller
// that schedules the node anyway (constant evaluation runs kernels), giving the same bits.
#include <algorithm>
#include <cstring>

#include "ops/common.h"
#include "ops/ops.h"
#include "tensor/readable.h"

namespace onemodel::rt {
namespace {

void copy_value(RunContext& ctx, const Tensor& value) {
  Tensor& out = ctx.output(0);
  if (out.empty()) {
    if (!ctx.arena) ctx.fail(ErrorKind::Internal, "output 0 is not allocated and there is no arena");
    ctx.allocate_output(0, value.dtype(), value.shape());
  }
  Tensor& o = ctx.output(0);
  if (o.dtype() != value.dtype() || o.shape() != value.shape())
    ctx.fail(ErrorKind::Internal,
             "output was allocated as " + o.shape().to_string() + " instead of " + value.shape().to_string());
  if (value.nbytes() != 0) std::memcpy(o.raw_mut(), value.raw(), value.nbytes());
}

class ConstantKernel final : public Kernel {
 public:
  explicit ConstantKernel(Tensor value) : Kernel(KernelFlags{.exact = true}), value_(std::move(value)) {}
  void infer(InferContext& ctx) const override { ctx.set_constant_output(0, value_); }
  void run(RunContext& ctx) const override { copy_value(ctx, value_); }

 private:
  Tensor value_;
};

Tensor constant_value(const NodeInfo& info) {
  static constexpr const char* kForms[] = {"value",      "value_float",  "value_floats",  "value_int",
                                           "value_ints", "value_string", "value_strings", "sparse_value"};
  int count = 0;
  for (const char* f : kForms) count += info.has(f) ? 1 : 0;
  if (count != 1) info.fail(ErrorKind::InvalidModel, "needs exactly one value attribute, got " + std::to_string(count));
  if (info.has("sparse_value")) info.fail(ErrorKind::Unsupported, "sparse_value is not supported");
  if (info.has("value_string") || info.has("value_strings"))
    info.fail(ErrorKind::Unsupported, "string constants are not supported");
  if (info.has("value_float")) {
    const float v = info.get_float("value_float", 0.0f);
    return Tensor::from_values<float>({v}, Shape{});
  }
  if (info.has("value_int")) {
    const int64_t v = info.get_int("value_int", 0);
    return Tensor::from_values<int64_t>({v}, Shape{});
  }
  if (info.has("value_floats")) {
    const std::vector<float> v = info.get_floats("value_floats");
    return Tensor::from_values(std::span<const float>(v), Shape{static_cast<int64_t>(v.size())});
  }
  if (info.has("value_ints")) {
    const std::vector<int64_t> v = info.get_ints("value_ints");
    return Tensor::from_values(std::span<const int64_t>(v), Shape{static_cast<int64_t>(v.size())});
  }
  const ir::TensorValue* t = info.get_tensor("value");
  if (!dtype_is_stored(t->dtype))
    info.fail(ErrorKind::Unsupported, "element type " + type_str(t->dtype) + " of the value is not supported");
  if (t->data.empty()) {
    // A stored type with no data is only valid for an empty tensor.
    const Shape s(std::span<const int64_t>(t->dims));
    if (s.numel() != 0) info.fail(ErrorKind::InvalidModel, "value tensor has no data");
    return Tensor::zeros(t->dtype, s);
  }
  // The attribute's tensor views the model's bytes at whatever offset the encoding put it; the value feeds
  // plans (constant inputs read in place) and kernels, which need element alignment: copy it when it has none.
  if (!readable_in_place(t->data)) return Tensor::copy_of(t->dtype, t->data.shape(), t->data.raw(), t->data.nbytes());
  return t->data;
}

class ShapeKernel final : public Kernel {
 public:
  ShapeKernel(int64_t start, int64_t end, bool has_end)
      : Kernel(KernelFlags{.exact = true}), start_(start), end_(end), has_end_(has_end) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0)) ctx.fail(ErrorKind::InvalidModel, "expects one input");
    ctx.set_constant_output(0, value(ctx.input(0).shape));
  }
  void run(RunContext& ctx) const override { copy_value(ctx, value(ctx.input(0).shape())); }

 private:
  // start/end are clamped to [0, rank] after adding rank to negative values; start >= end gives [].
  Tensor value(const Shape& s) const {
    const int64_t r = s.rank();
    auto clamp = [r](int64_t v) { return std::clamp(v < 0 ? v + r : v, int64_t{0}, r); };
    const int64_t b = clamp(start_);
    const int64_t e = has_end_ ? clamp(end_) : r;
    std::vector<int64_t> dims;
    for (int64_t i = b; i < e; ++i) dims.push_back(s[static_cast<int>(i)]);
    return Tensor::from_values(std::span<const int64_t>(dims), Shape{static_cast<int64_t>(dims.size())});
  }
  int64_t start_, end_;
  bool has_end_;
};

// Size: the element count as an int64 scalar, a constant of the plan.
class SizeKernel final : public Kernel {
 public:
  SizeKernel() : Kernel(KernelFlags{.exact = true}) {}
  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0)) ctx.fail(ErrorKind::InvalidModel, "expects one input");
    ctx.set_constant_output(0, Tensor::from_values<int64_t>({ctx.input(0).shape.numel()}, Shape{}));
  }
  void run(RunContext& ctx) const override {
    copy_value(ctx, Tensor::from_values<int64_t>({ctx.input(0).numel()}, Shape{}));
  }
};

}  // namespace

std::unique_ptr<Kernel> make_size(const NodeInfo&) { return std::make_unique<SizeKernel>(); }

std::unique_ptr<Kernel> make_constant(const NodeInfo& info) {
  return std::make_unique<ConstantKernel>(constant_value(info));
}

std::unique_ptr<Kernel> make_shape(const NodeInfo& info) {
  if (info.opset() < 15) return std::make_unique<ShapeKernel>(0, 0, false);
  return std::make_unique<ShapeKernel>(info.get_int("start", 0), info.get_int("end", 0), info.has("end"));
}

}  // namespace onemodel::rt
