// Generators (ops-shape-indexing.md section 2): ConstantOfShape, Range, EyeLike, OneHot and Trilu. Their
// outputs are fills and bit copies, so they are the same in fast and exact mode; Range's one multiply-add per
// element is done in the element type (float16/bfloat16 in float32, then rounded), identical everywhere.
#include <cmath>
#include <cstring>
#include <type_traits>

#include "ops/index_util.h"
#include "ops/ops.h"

namespace onemodel::rt {
namespace {

// Element k of a numeric tensor as a double (float16/bfloat16 widened exactly).
double number_at(const NodeInfo& info, const Tensor& t, int64_t k) {
  const auto* p = static_cast<const std::byte*>(t.raw());
  if (t.dtype() == DType::F16 || t.dtype() == DType::BF16) {
    uint16_t h;
    std::memcpy(&h, p + k * 2, 2);
    return t.dtype() == DType::F16 ? half_to_float(h) : bf16_to_float(h);
  }
  if (t.dtype() == DType::Bool) return static_cast<double>(static_cast<uint8_t>(p[k]) != 0);
  double v = 0;
  if (!visit_numeric(t.dtype(), [&](auto z) {
        decltype(z) x;
        std::memcpy(&x, p + static_cast<size_t>(k) * sizeof x, sizeof x);
        v = static_cast<double>(x);
      }))
    info.fail(ErrorKind::Unsupported, "element type " + type_str(t.dtype()) + " is not supported");
  return v;
}

void fill_bytes(std::byte* dst, int64_t n, const void* elem, size_t esz) {
  for (int64_t i = 0; i < n; ++i) copy_elem(dst + static_cast<size_t>(i) * esz, elem, esz);
}

class ConstantOfShapeKernel final : public Kernel {
 public:
  explicit ConstantOfShapeKernel(Tensor value) : Kernel(KernelFlags{.exact = true}), value_(std::move(value)) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0)) ctx.fail(ErrorKind::InvalidModel, "expects a shape input");
    if (ctx.input(0).dtype != DType::I64 || ctx.input(0).shape.rank() != 1)
      ctx.fail(ErrorKind::InvalidModel, "shape must be 1-D int64");
    if (!have_values(ctx, {0})) return;
    ctx.set_output(0, value_.dtype(), checked_shape(ctx, ints_of(ctx, 0, "shape")));
  }
  void run(RunContext& ctx) const override {
    fill_bytes(out_bytes(ctx, 0), ctx.output(0).numel(), value_.raw(), dtype_size(value_.dtype()));
  }

 private:
  Tensor value_;
};

template <class T>
void range_fill(void* dst, int64_t n, double start, double delta) {
  T* o = static_cast<T*>(dst);
  const T s = static_cast<T>(start), d = static_cast<T>(delta);
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      o[i] = static_cast<T>(static_cast<U>(static_cast<U>(s) + static_cast<U>(static_cast<U>(i) * static_cast<U>(d))));
    } else {
      o[i] = s + static_cast<T>(i) * d;
    }
  }
}

class RangeKernel final : public Kernel {
 public:
  RangeKernel() : Kernel(KernelFlags{.exact = true}) {}

  void infer(InferContext& ctx) const override {
    for (size_t i = 0; i < 3; ++i) {
      if (!ctx.has_input(i)) ctx.fail(ErrorKind::InvalidModel, "expects start, limit and delta");
      if (ctx.input(i).dtype != ctx.input(0).dtype) ctx.fail(ErrorKind::InvalidModel, "inputs differ in type");
      if (ctx.input(i).shape.numel() != 1) ctx.fail(ErrorKind::InvalidModel, "inputs must be scalars");
    }
    const DType t = ctx.input(0).dtype;
    if (t != DType::F32 && t != DType::F64 && t != DType::I16 && t != DType::I32 && t != DType::I64 &&
        t != DType::F16 && t != DType::BF16)
      ctx.fail(ErrorKind::Unsupported, "element type " + type_str(t) + " is not supported");
    if (!have_values(ctx, {0, 1, 2})) return;
    ctx.set_output(
        0, t, Shape{count(ctx.info, value_of(ctx, 0, "start"), value_of(ctx, 1, "limit"), value_of(ctx, 2, "delta"))});
  }

  void run(RunContext& ctx) const override {
    const int64_t n = ctx.output(0).numel();
    const double start = number_at(ctx.info, ctx.input(0), 0), delta = number_at(ctx.info, ctx.input(2), 0);
    void* o = ctx.output(0).raw_mut();
    switch (ctx.output(0).dtype()) {
      case DType::F32: range_fill<float>(o, n, start, delta); break;
      case DType::F64: range_fill<double>(o, n, start, delta); break;
      case DType::I16: range_fill<int16_t>(o, n, start, delta); break;
      case DType::I32: range_fill<int32_t>(o, n, start, delta); break;
      case DType::I64: {
        // Read the int64 operands directly: a double would round values beyond 2^53.
        const int64_t s = static_cast<const int64_t*>(ctx.input(0).raw())[0],
                      d = static_cast<const int64_t*>(ctx.input(2).raw())[0];
        auto* p = static_cast<int64_t*>(o);
        for (int64_t i = 0; i < n; ++i)
          p[i] = static_cast<int64_t>(static_cast<uint64_t>(s) + static_cast<uint64_t>(i) * static_cast<uint64_t>(d));
        break;
      }
      default: {  // float16 / bfloat16: computed in float32, rounded to nearest even
        const bool half = ctx.output(0).dtype() == DType::F16;
        auto* p = static_cast<uint16_t*>(o);
        const auto s = static_cast<float>(start), d = static_cast<float>(delta);
        for (int64_t i = 0; i < n; ++i) {
          const float v = s + static_cast<float>(i) * d;
          p[i] = half ? float_to_half(v) : float_to_bf16(v);
        }
      }
    }
  }

 private:
  // max(ceil((limit - start) / delta), 0), the quotient in double precision.
  static int64_t count(const NodeInfo& info, const Tensor& a, const Tensor& b, const Tensor& c) {
    const double start = number_at(info, a, 0), limit = number_at(info, b, 0), delta = number_at(info, c, 0);
    if (delta == 0) info.fail(ErrorKind::InvalidModel, "delta is zero");
    const double q = std::ceil((limit - start) / delta);
    if (!std::isfinite(q)) info.fail(ErrorKind::InvalidModel, "the element count is not finite");
    if (q > static_cast<double>(kMaxElements)) info.fail(ErrorKind::Unsupported, "the element count exceeds 2^31-1");
    return q < 0 ? 0 : static_cast<int64_t>(q);
  }
};

class EyeLikeKernel final : public Kernel {
 public:
  EyeLikeKernel(DType dtype, int64_t k) : Kernel(KernelFlags{.exact = true}), dtype_(dtype), k_(k) {}
  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0)) ctx.fail(ErrorKind::InvalidModel, "expects one input");
    if (ctx.input(0).shape.rank() != 2)
      ctx.fail(ErrorKind::InvalidModel, "input must be 2-D, got " + ctx.input(0).shape.to_string());
    const DType t = dtype_ == DType::Undefined ? ctx.input(0).dtype : dtype_;
    if (!dtype_is_stored(t)) ctx.fail(ErrorKind::Unsupported, "element type " + type_str(t) + " is not supported");
    ctx.set_output(0, t, ctx.input(0).shape);
  }
  void run(RunContext& ctx) const override {
    Tensor& o = ctx.output(0);
    const size_t esz = dtype_size(o.dtype());
    std::memset(o.raw_mut(), 0, o.nbytes());
    const ElemBytes one = elem_from_double(ctx.info, o.dtype(), 1.0);
    const int64_t rows = o.shape()[0], cols = o.shape()[1];
    for (int64_t i = 0; i < rows; ++i) {
      if (k_ < -i || k_ >= cols - i) continue;  // j = i + k outside [0, cols), compared without overflow
      copy_elem(out_bytes(ctx, 0) + static_cast<size_t>(i * cols + i + k_) * esz, one.b, esz);
    }
  }

 private:
  DType dtype_;
  int64_t k_;
};

// OneHot: output = indices' shape with depth inserted at axis; on where the index (negative counts from the
// end) equals the position, off elsewhere. An index outside [-depth, depth) or NaN gives an all-off row.
class OneHotKernel final : public Kernel {
 public:
  explicit OneHotKernel(int64_t axis) : Kernel(KernelFlags{.exact = true}), axis_(axis) {}

  void infer(InferContext& ctx) const override {
    for (size_t i = 0; i < 3; ++i)
      if (!ctx.has_input(i)) ctx.fail(ErrorKind::InvalidModel, "expects indices, depth and values");
    if (ctx.input(1).shape.numel() != 1) ctx.fail(ErrorKind::InvalidModel, "depth must hold one element");
    if (ctx.input(2).shape.rank() != 1 || ctx.input(2).shape[0] != 2)
      ctx.fail(ErrorKind::InvalidModel, "values must be [off, on]");
    if (!have_values(ctx, {1})) return;
    const Shape& is = ctx.input(0).shape;
    const int a = normalize_axis(ctx.info, axis_, is.rank() + 1);
    std::vector<int64_t> dims = is.to_vector();
    dims.insert(dims.begin() + a, depth(ctx.info, *ctx.input(1).value));
    ctx.set_output(0, ctx.input(2).dtype, checked_shape(ctx, dims));
  }

  void run(RunContext& ctx) const override {
    const Tensor& ind = ctx.input(0);
    const int64_t d = depth(ctx.info, ctx.input(1));
    const int a = normalize_axis(ctx.info, axis_, ind.rank() + 1);
    int64_t outer = 1, inner = 1;
    for (int k = 0; k < ind.rank(); ++k) (k < a ? outer : inner) *= ind.shape()[k];
    const size_t esz = dtype_size(ctx.output(0).dtype());
    const std::byte* off = in_bytes(ctx, 2);
    std::byte* o = out_bytes(ctx, 0);
    fill_bytes(o, ctx.output(0).numel(), off, esz);
    for (int64_t r = 0; r < outer; ++r)
      for (int64_t i = 0; i < inner; ++i) {
        double v = number_at(ctx.info, ind, r * inner + i);
        if (!(v >= static_cast<double>(-d) && v < static_cast<double>(d))) continue;  // NaN fails both
        auto pos = static_cast<int64_t>(v);
        if (pos < 0) pos += d;
        if (pos < 0 || pos >= d) continue;
        copy_elem(o + static_cast<size_t>((r * d + pos) * inner + i) * esz, off + esz, esz);
      }
  }

 private:
  static int64_t depth(const NodeInfo& info, const Tensor& t) {
    const double v = number_at(info, t, 0);
    if (!(v >= 1) || v > static_cast<double>(kMaxElements))
      info.fail(ErrorKind::InvalidModel, "depth must be a positive count");
    return static_cast<int64_t>(v);
  }
  int64_t axis_;
};

// Trilu: keeps the upper (j - i >= k) or lower (j - i <= k) triangle of each trailing matrix, zeroes the rest.
class TriluKernel final : public Kernel {
 public:
  explicit TriluKernel(bool upper) : Kernel(KernelFlags{.exact = true}), upper_(upper) {}
  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0)) ctx.fail(ErrorKind::InvalidModel, "expects an input");
    if (ctx.input(0).shape.rank() < 2) ctx.fail(ErrorKind::InvalidModel, "input must have rank >= 2");
    if (ctx.has_input(1) && (ctx.input(1).dtype != DType::I64 || ctx.input(1).shape.numel() != 1))
      ctx.fail(ErrorKind::InvalidModel, "k must be an int64 scalar");
    ctx.set_output(0, ctx.input(0).dtype, ctx.input(0).shape);
  }
  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const int64_t k = ctx.has_input(1) ? static_cast<const int64_t*>(ctx.input(1).raw())[0] : 0;
    const int r = x.rank();
    const int64_t rows = x.shape()[r - 2], cols = x.shape()[r - 1];
    const size_t esz = dtype_size(x.dtype());
    if (x.nbytes() != 0) std::memcpy(ctx.output(0).raw_mut(), x.raw(), x.nbytes());
    const int64_t mats = rows * cols == 0 ? 0 : x.numel() / (rows * cols);
    std::byte* o = out_bytes(ctx, 0);
    for (int64_t m = 0; m < mats; ++m)
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) {
          // j - i with k: compare without overflow (k may be any int64).
          const int64_t diff = j - i;
          const bool keep = upper_ ? diff >= k : diff <= k;
          if (!keep) std::memset(o + static_cast<size_t>((m * rows + i) * cols + j) * esz, 0, esz);
        }
  }

 private:
  bool upper_;
};

}  // namespace

std::unique_ptr<Kernel> make_constant_of_shape(const NodeInfo& info) {
  Tensor v = Tensor::zeros(DType::F32, Shape{1});
  if (const ir::TensorValue* t = info.get_tensor("value")) {
    if (!dtype_is_stored(t->dtype))
      info.fail(ErrorKind::Unsupported, "value type " + type_str(t->dtype) + " is not supported");
    if (t->data.numel() != 1) info.fail(ErrorKind::InvalidModel, "value must hold exactly one element");
    v = Tensor::copy_of(t->dtype, t->data.shape(), t->data.raw(),
                        t->data.nbytes());  // aligned: the file offset may not be
  }
  return std::make_unique<ConstantOfShapeKernel>(v);
}
std::unique_ptr<Kernel> make_range(const NodeInfo&) { return std::make_unique<RangeKernel>(); }
std::unique_ptr<Kernel> make_eye_like(const NodeInfo& info) {
  const auto t = static_cast<DType>(info.get_int("dtype", 0));
  if (info.has("dtype") && !dtype_is_stored(t))
    info.fail(ErrorKind::Unsupported, "dtype " + type_str(t) + " is not supported");
  return std::make_unique<EyeLikeKernel>(t, info.get_int("k", 0));
}
std::unique_ptr<Kernel> make_one_hot(const NodeInfo& info) {
  return std::make_unique<OneHotKernel>(info.get_int("axis", -1));
}
std::unique_ptr<Kernel> make_trilu(const NodeInfo& info) {
  return std::make_unique<TriluKernel>(info.get_int("upper", 1) != 0);
}

}  // namespace onemodel::rt
