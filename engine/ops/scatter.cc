// Scatter (9-10), ScatterElements and ScatterND (ops-shape-indexing.md section 2): the output starts as a
// copy of the data, then the updates are applied in index order. Without a reduction this is a byte move
// for every element type (duplicates: the last write wins); with one (add, mul from 16, max, min from 18) it
// folds typed values in index order. max/min follow ONNX Runtime: `u < o ? o : u` and `o < u ? o : u`.
#include <cstring>
#include <type_traits>

#include "ops/index_util.h"
#include "ops/ops.h"

namespace onemodel::rt {
namespace {

enum class Reduction { None, Add, Mul, Max, Min };

template <class T>
T fold(Reduction r, T o, T u) {
  if constexpr (std::is_integral_v<T>) {
    // Integer add/mul wrap around (two's complement), never undefined behaviour.
    using U = std::make_unsigned_t<T>;
    if (r == Reduction::Add) return static_cast<T>(static_cast<U>(static_cast<U>(o) + static_cast<U>(u)));
    if (r == Reduction::Mul) return static_cast<T>(static_cast<U>(static_cast<U>(o) * static_cast<U>(u)));
  } else {
    if (r == Reduction::Add) return o + u;
    if (r == Reduction::Mul) return o * u;
  }
  if (r == Reduction::Max) return u < o ? o : u;
  if (r == Reduction::Min) return o < u ? o : u;
  return u;
}

// Applies n elements of `src` onto `dst` with the reduction (typed) or as a byte copy.
void apply(Reduction r, DType t, std::byte* dst, const std::byte* src, int64_t n) {
  const size_t esz = dtype_size(t);
  if (r == Reduction::None) {
    std::memcpy(dst, src, static_cast<size_t>(n) * esz);
    return;
  }
  visit_numeric(t, [&](auto z) {
    using T = decltype(z);
    for (int64_t i = 0; i < n; ++i) {
      T o, u;
      std::memcpy(&o, dst + static_cast<size_t>(i) * esz, sizeof(T));
      std::memcpy(&u, src + static_cast<size_t>(i) * esz, sizeof(T));
      o = fold(r, o, u);
      std::memcpy(dst + static_cast<size_t>(i) * esz, &o, sizeof(T));
    }
  });
}

void check_reduction_type(const InferContext& ctx, Reduction r) {
  const DType t = ctx.input(0).dtype;
  if (r != Reduction::None &&
      (t == DType::Bool || t == DType::F16 || t == DType::BF16 || !visit_numeric(t, [](auto) {})))
    ctx.fail(ErrorKind::Unsupported, "reduction on element type " + type_str(t) + " is not supported");
}

void copy_data(RunContext& ctx) {
  if (ctx.input(0).nbytes() != 0) std::memcpy(ctx.output(0).raw_mut(), ctx.input(0).raw(), ctx.input(0).nbytes());
}

class ScatterElementsKernel final : public Kernel {
 public:
  ScatterElementsKernel(int64_t axis, Reduction r) : Kernel(KernelFlags{.exact = true}), axis_(axis), r_(r) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0) || !ctx.has_input(1) || !ctx.has_input(2))
      ctx.fail(ErrorKind::InvalidModel, "expects data, indices and updates");
    check_index_type(ctx, 1, "indices");
    const Shape& s = ctx.input(0).shape;
    const Shape& is = ctx.input(1).shape;
    if (s.rank() == 0 || is.rank() != s.rank())
      ctx.fail(ErrorKind::InvalidModel, "data and indices must have the same rank >= 1");
    if (ctx.input(2).shape != is) ctx.fail(ErrorKind::InvalidModel, "updates shape differs from indices shape");
    if (ctx.input(2).dtype != ctx.input(0).dtype)
      ctx.fail(ErrorKind::InvalidModel, "updates type differs from data type");
    const int a = normalize_axis(ctx.info, axis_, s.rank());
    for (int d = 0; d < s.rank(); ++d)
      if (d != a && is[d] > s[d])
        ctx.fail(ErrorKind::InvalidModel, "indices " + is.to_string() + " exceed data " + s.to_string());
    check_reduction_type(ctx, r_);
    ctx.set_output(0, ctx.input(0).dtype, s);
  }

  void run(RunContext& ctx) const override {
    copy_data(ctx);
    const Shape& s = ctx.input(0).shape();
    const int a = normalize_axis(ctx.info, axis_, s.rank());
    const DType t = ctx.input(0).dtype();
    const size_t esz = dtype_size(t);
    std::byte* o = out_bytes(ctx, 0);
    const std::byte* u = in_bytes(ctx, 2);
    walk_element_indices(ctx, s, ctx.input(1), a, [&](int64_t j, int64_t off) {
      apply(r_, t, o + static_cast<size_t>(off) * esz, u + static_cast<size_t>(j) * esz, 1);
    });
  }

 private:
  int64_t axis_;
  Reduction r_;
};

class ScatterNDKernel final : public Kernel {
 public:
  explicit ScatterNDKernel(Reduction r) : Kernel(KernelFlags{.exact = true}), r_(r) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0) || !ctx.has_input(1) || !ctx.has_input(2))
      ctx.fail(ErrorKind::InvalidModel, "expects data, indices and updates");
    check_index_type(ctx, 1, "indices");
    const NdLayout l = nd_layout(ctx.info, ctx.input(0).shape, ctx.input(1).shape, 0);
    if (ctx.input(2).shape != shape_of(l.out_dims))
      ctx.fail(ErrorKind::InvalidModel,
               "updates shape " + ctx.input(2).shape.to_string() + " should be " + shape_of(l.out_dims).to_string());
    if (ctx.input(2).dtype != ctx.input(0).dtype)
      ctx.fail(ErrorKind::InvalidModel, "updates type differs from data type");
    check_reduction_type(ctx, r_);
    ctx.set_output(0, ctx.input(0).dtype, ctx.input(0).shape);
  }

  void run(RunContext& ctx) const override {
    copy_data(ctx);
    const NdLayout l = nd_layout(ctx.info, ctx.input(0).shape(), ctx.input(1).shape(), 0);
    const DType t = ctx.input(0).dtype();
    const size_t esz = dtype_size(t);
    for (int64_t k = 0; k < l.tuples; ++k) {
      const int64_t off = nd_offset(ctx, l, ctx.input(1), 0, k);
      apply(r_, t, out_bytes(ctx, 0) + static_cast<size_t>(off) * esz,
            in_bytes(ctx, 2) + static_cast<size_t>(k * l.slice) * esz, l.slice);
    }
  }

 private:
  Reduction r_;
};

Reduction reduction_of(const NodeInfo& info) {
  const std::string r = info.get_string("reduction", "none");
  if (r == "none") return Reduction::None;
  if (info.opset() >= 16 && r == "add") return Reduction::Add;
  if (info.opset() >= 16 && r == "mul") return Reduction::Mul;
  if (info.opset() >= 18 && r == "max") return Reduction::Max;
  if (info.opset() >= 18 && r == "min") return Reduction::Min;
  info.fail(ErrorKind::InvalidModel, "unknown reduction '" + r + "' for opset " + std::to_string(info.opset()));
}

}  // namespace

std::unique_ptr<Kernel> make_scatter_elements(const NodeInfo& info) {
  return std::make_unique<ScatterElementsKernel>(info.get_int("axis", 0), reduction_of(info));
}
std::unique_ptr<Kernel> make_scatter_nd(const NodeInfo& info) {
  return std::make_unique<ScatterNDKernel>(reduction_of(info));
}

}  // namespace onemodel::rt
