// Scatter (9-10), ScatterElements and ScatterND (ops-shape-indexing.md section 2): the output starts as a
// copy of the data, then the updates are applied in index order. Without a reduction this is a byte move
// for every element type (duplicates: the last write wins); with one (add, mul from 16, max, min from 18) it
// folds typed values in index order. max/min follow ONNX Runtime: `u < o ? o : u` and `o < u ? o : u`.
// TensorScatter (24, ops-newer.md section 8) writes whole rows of the update into a copy of the cache.
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

// TensorScatter: present = past_cache with, for every index prefix (b, ...) before `axis`, update row s written at
// row write_indices[b] + s of the cache's axis (modulo its extent in circular mode, the non-negative remainder).
// A linear write beyond the extent or before row 0 is InvalidInput; axis 0 (the batch axis) is InvalidModel.
class TensorScatterKernel final : public Kernel {
 public:
  TensorScatterKernel(int64_t axis, bool circular)
      : Kernel(KernelFlags{.exact = true}), axis_(axis), circular_(circular) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0) || !ctx.has_input(1)) ctx.fail(ErrorKind::InvalidModel, "expects past_cache and update");
    const InputMeta& past = ctx.input(0);
    if (!dtype_is_stored(past.dtype))
      ctx.fail(ErrorKind::Unsupported, "element type " + type_str(past.dtype) + " is not supported");
    if (ctx.input(1).dtype != past.dtype) ctx.fail(ErrorKind::InvalidModel, "update type differs from past_cache");
    if (ctx.has_input(2) && ctx.input(2).dtype != DType::I64)
      ctx.fail(ErrorKind::InvalidModel, "write_indices must be int64");
    check_shapes(ctx.info, past.shape, ctx.input(1).shape, ErrorKind::InvalidModel);
    ctx.set_output(0, past.dtype, past.shape);
  }

  void run(RunContext& ctx) const override {
    const Tensor& past = ctx.input(0);
    const Tensor& upd = ctx.input(1);
    Tensor& out = ctx.output(0);
    const int axis = check_shapes(ctx.info, past.shape(), upd.shape(), ErrorKind::InvalidInput);
    if (out.shape() != past.shape())
      ctx.fail(ErrorKind::InvalidInput, "inputs do not match the planned output " + out.shape().to_string());
    const Shape& s = past.shape();
    const int64_t batch = s[0], max_len = s[axis], len = upd.shape()[axis];
    int64_t prefix = 1, row = 1;  // index prefixes per batch entry, elements per row of the axis
    for (int d = 1; d < axis; ++d) prefix *= s[d];
    for (int d = axis + 1; d < s.rank(); ++d) row *= s[d];
    if (ctx.has_input(2) && ctx.input(2).shape() != Shape{batch})
      ctx.fail(ErrorKind::InvalidInput, "write_indices must have shape [" + std::to_string(batch) + "], got " +
                                            ctx.input(2).shape().to_string());
    const size_t esz = dtype_size(past.dtype()), row_bytes = static_cast<size_t>(row) * esz;
    if (past.nbytes() > 0) std::memcpy(out.raw_mut(), past.raw(), past.nbytes());
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t w = ctx.has_input(2) ? ctx.input(2).data<int64_t>()[static_cast<size_t>(b)] : 0;
      if (len == 0) continue;  // nothing to write, whatever the index
      if (!circular_ && (w < 0 || w > max_len - len))
        ctx.fail(ErrorKind::InvalidInput, "write index " + std::to_string(w) + " of batch entry " + std::to_string(b) +
                                              " does not fit " + std::to_string(len) + " rows in " +
                                              std::to_string(max_len));
      for (int64_t p = 0; p < prefix; ++p) {
        const int64_t q = b * prefix + p;
        for (int64_t r = 0; r < len; ++r) {
          int64_t at = circular_ ? (w % max_len + r) % max_len : w + r;
          if (at < 0) at += max_len;
          std::memcpy(out_bytes(ctx, 0) + static_cast<size_t>(q * max_len + at) * row_bytes,
                      static_cast<const std::byte*>(upd.raw()) + static_cast<size_t>(q * len + r) * row_bytes,
                      row_bytes);
        }
      }
    }
  }

 private:
  // The normalised axis; the shapes must agree except on it, where the update is not longer than the cache.
  int check_shapes(const NodeInfo& info, const Shape& past, const Shape& upd, ErrorKind kind) const {
    const int axis = normalize_axis(info, axis_, past.rank());
    if (axis == 0) info.fail(ErrorKind::InvalidModel, "axis must not be the batch axis 0");
    bool ok = upd.rank() == past.rank();
    for (int d = 0; ok && d < past.rank(); ++d) ok = d == axis ? upd[d] <= past[d] : upd[d] == past[d];
    if (!ok)
      info.fail(kind, "update of shape " + upd.to_string() + " does not fit past_cache of shape " + past.to_string() +
                          " on axis " + std::to_string(axis));
    return axis;
  }
  int64_t axis_;
  bool circular_;
};

}  // namespace

std::unique_ptr<Kernel> make_tensor_scatter(const NodeInfo& info) {
  const std::string mode = info.get_string("mode", "linear");
  if (mode != "linear" && mode != "circular") info.fail(ErrorKind::InvalidModel, "unknown mode '" + mode + "'");
  return std::make_unique<TensorScatterKernel>(info.get_int("axis", -2), mode == "circular");
}

std::unique_ptr<Kernel> make_scatter_elements(const NodeInfo& info) {
  return std::make_unique<ScatterElementsKernel>(info.get_int("axis", 0), reduction_of(info));
}
std::unique_ptr<Kernel> make_scatter_nd(const NodeInfo& info) {
  return std::make_unique<ScatterNDKernel>(reduction_of(info));
}

}  // namespace onemodel::rt
