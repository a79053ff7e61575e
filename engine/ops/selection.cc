// Selection operators (ops-shape-indexing.md sections 2 and 5): NonZero, TopK, Compress and Unique. They
// compare values (typed, float16/bfloat16 widened to float, NaN ordered above every number and equal to
// itself) but output only copied elements and int64 positions, so fast and exact mode give the same bits.
// NonZero, Compress and Unique have data-dependent output extents and allocate their outputs in run().
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <type_traits>

#include "ops/index_util.h"
#include "ops/ops.h"

namespace onemodel::rt {
namespace {

template <class T>
bool key_less(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

// Calls f(keys) with the elements of x as a pointer to a comparable C++ type.
template <class F>
void with_keys(const NodeInfo& info, const Tensor& x, F&& f) {
  const DType t = x.dtype();
  if (t == DType::F16 || t == DType::BF16) {
    std::vector<float> tmp(static_cast<size_t>(x.numel()));
    const auto* h = static_cast<const uint16_t*>(x.raw());
    for (size_t i = 0; i < tmp.size(); ++i) tmp[i] = t == DType::F16 ? half_to_float(h[i]) : bf16_to_float(h[i]);
    f(static_cast<const float*>(tmp.data()));
  } else if (t == DType::Bool) {
    f(static_cast<const uint8_t*>(x.raw()));
  } else if (!visit_numeric(t, [&](auto z) { f(static_cast<const decltype(z)*>(x.raw())); })) {
    info.fail(ErrorKind::Unsupported, "element type " + type_str(t) + " is not supported");
  }
}

// [outer, n, inner] view of a shape around `axis`.
struct Rows {
  int64_t outer = 1, n = 1, inner = 1;
};
Rows rows_of(const Shape& s, int a) {
  Rows r;
  for (int d = 0; d < s.rank(); ++d) {
    if (d < a) r.outer *= s[d];
    if (d > a) r.inner *= s[d];
  }
  r.n = s[a];
  return r;
}

// Rows around `axis`, or the flattened input as one row when there is no axis (Compress, Unique).
Rows axis_rows(const RunContext& ctx, const Tensor& x, bool has_axis, int64_t axis, int& a) {
  a = 0;
  if (!has_axis) return Rows{1, x.numel(), 1};
  if (x.rank() == 0) ctx.fail(ErrorKind::InvalidModel, "input must have rank >= 1 with an axis");
  a = normalize_axis(ctx.info, axis, x.rank());
  return rows_of(x.shape(), a);
}

class NonZeroKernel final : public Kernel {
 public:
  NonZeroKernel() : Kernel(KernelFlags{.exact = true, .outputs_data_dependent = true}) {}
  void infer(InferContext& ctx) const override { ctx.fail(ErrorKind::Internal, "NonZero has data-dependent outputs"); }
  void run(RunContext& ctx) const override {
    if (!ctx.has_input(0)) ctx.fail(ErrorKind::InvalidModel, "expects an input");
    const Tensor& x = ctx.input(0);
    std::vector<int64_t> hits;
    with_keys(ctx.info, x, [&](auto keys) {
      using T = std::remove_cv_t<std::remove_pointer_t<decltype(keys)>>;
      for (int64_t i = 0; i < x.numel(); ++i)
        if (keys[i] != T(0)) hits.push_back(i);  // -0.0 == 0 is zero; NaN != 0 counts
    });
    const int r = std::max(x.rank(), 1);
    const auto count = static_cast<int64_t>(hits.size());
    Tensor& o = ctx.allocate_output(0, DType::I64, Shape{r, count});
    int64_t* p = o.mutable_data<int64_t>().data();
    const std::vector<int64_t> st = x.rank() == 0 ? std::vector<int64_t>{1} : row_strides(x.shape());
    for (int64_t j = 0; j < count; ++j) {
      int64_t rem = hits[static_cast<size_t>(j)];
      for (int d = 0; d < r; ++d) {
        p[d * count + j] = rem / st[static_cast<size_t>(d)];
        rem %= st[static_cast<size_t>(d)];
      }
    }
  }
};

// TopK: per row along the axis, the k largest (or smallest) in order, ties by lower index first. A total
// order (value, then index) makes partial_sort give exactly the stable order.
class TopKKernel final : public Kernel {
 public:
  TopKKernel(int64_t axis, bool largest, int64_t attr_k)
      : Kernel(KernelFlags{.exact = true}), axis_(axis), largest_(largest), attr_k_(attr_k) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0)) ctx.fail(ErrorKind::InvalidModel, "expects an input");
    const Shape& s = ctx.input(0).shape;
    if (s.rank() == 0) ctx.fail(ErrorKind::InvalidModel, "input must have rank >= 1");
    const int a = normalize_axis(ctx.info, axis_, s.rank());
    int64_t k = attr_k_;
    if (attr_k_ < 0) {
      if (!ctx.has_input(1)) ctx.fail(ErrorKind::InvalidModel, "expects a K input");
      if (ctx.input(1).dtype != DType::I64 || ctx.input(1).shape.numel() != 1)
        ctx.fail(ErrorKind::InvalidModel, "K must be one int64");
      if (!have_values(ctx, {1})) return;
      k = ints_of(ctx, 1, "K")[0];
    }
    if (k < 0 || k > s[a])
      ctx.fail(ErrorKind::InvalidModel, "k " + std::to_string(k) + " is outside [0, " + std::to_string(s[a]) + "]");
    std::vector<int64_t> dims = s.to_vector();
    dims[static_cast<size_t>(a)] = k;
    ctx.set_output(0, ctx.input(0).dtype, shape_of(dims));
    if (ctx.outputs.size() > 1) ctx.set_output(1, DType::I64, shape_of(dims));
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const int a = normalize_axis(ctx.info, axis_, x.rank());
    const Rows rw = rows_of(x.shape(), a);
    const int64_t k = ctx.output(0).shape()[a];
    const size_t esz = dtype_size(x.dtype());
    std::byte* vo = out_bytes(ctx, 0);
    int64_t* io =
        ctx.outputs.size() > 1 && !ctx.output(1).empty() ? ctx.output(1).mutable_data<int64_t>().data() : nullptr;
    std::vector<int64_t> order(static_cast<size_t>(rw.n));
    with_keys(ctx.info, x, [&](auto keys) {
      for (int64_t o = 0; o < rw.outer; ++o)
        for (int64_t i = 0; i < rw.inner; ++i) {
          const int64_t base = o * rw.n * rw.inner + i;
          auto at = [&](int64_t j) { return keys[base + j * rw.inner]; };
          std::iota(order.begin(), order.end(), int64_t{0});
          std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t p, int64_t q) {
            const bool before = largest_ ? key_less(at(q), at(p)) : key_less(at(p), at(q));
            const bool after = largest_ ? key_less(at(p), at(q)) : key_less(at(q), at(p));
            return before || (!after && p < q);
          });
          for (int64_t j = 0; j < k; ++j) {
            const int64_t dst = (o * k + j) * rw.inner + i, src = base + order[static_cast<size_t>(j)] * rw.inner;
            copy_elem(vo + static_cast<size_t>(dst) * esz, in_bytes(ctx, 0) + static_cast<size_t>(src) * esz, esz);
            if (io) io[dst] = order[static_cast<size_t>(j)];
          }
        }
    });
  }

 private:
  int64_t axis_;
  bool largest_;
  int64_t attr_k_;  // -1: K is input 1
};

// Compress: the slices along `axis` (or the elements of the flattened input) whose condition is true. The
// condition may be shorter than the extent; a longer one is InvalidInput.
class CompressKernel final : public Kernel {
 public:
  CompressKernel(bool has_axis, int64_t axis)
      : Kernel(KernelFlags{.exact = true, .outputs_data_dependent = true}), has_axis_(has_axis), axis_(axis) {}
  void infer(InferContext& ctx) const override { ctx.fail(ErrorKind::Internal, "Compress has data-dependent outputs"); }
  void run(RunContext& ctx) const override {
    if (!ctx.has_input(0) || !ctx.has_input(1)) ctx.fail(ErrorKind::InvalidModel, "expects input and condition");
    const Tensor& x = ctx.input(0);
    const Tensor& c = ctx.input(1);
    if (c.dtype() != DType::Bool || c.rank() != 1)
      ctx.fail(ErrorKind::InvalidModel, "condition must be a 1-D bool tensor");
    int a = 0;
    const Rows rw = axis_rows(ctx, x, has_axis_, axis_, a);
    if (c.numel() > rw.n)
      ctx.fail(ErrorKind::InvalidInput,
               "condition has " + std::to_string(c.numel()) + " entries for extent " + std::to_string(rw.n));
    std::vector<int64_t> keep;
    const auto* cv = static_cast<const uint8_t*>(c.raw());
    for (int64_t j = 0; j < c.numel(); ++j)
      if (cv[j] != 0) keep.push_back(j);
    std::vector<int64_t> dims{static_cast<int64_t>(keep.size())};
    if (has_axis_) {
      dims = x.shape().to_vector();
      dims[static_cast<size_t>(a)] = static_cast<int64_t>(keep.size());
    }
    Tensor& o = ctx.allocate_output(0, x.dtype(), shape_of(dims));
    const size_t chunk = static_cast<size_t>(rw.inner) * dtype_size(x.dtype());
    auto* dst = static_cast<std::byte*>(o.raw_mut());
    if (chunk == 0) return;
    for (int64_t r = 0; r < rw.outer; ++r)
      for (int64_t j : keep) {
        std::memcpy(dst, in_bytes(ctx, 0) + static_cast<size_t>(r * rw.n + j) * chunk, chunk);
        dst += chunk;
      }
  }

 private:
  bool has_axis_;
  int64_t axis_;
};

// Unique: distinct elements (no axis: of the flattened input) or distinct slices along `axis`, sorted
// ascending (lexicographically for slices) or in order of first occurrence. Outputs: values, first-occurrence
// indices, inverse indices and counts.
class UniqueKernel final : public Kernel {
 public:
  UniqueKernel(bool sorted, bool has_axis, int64_t axis)
      : Kernel(KernelFlags{.exact = true, .outputs_data_dependent = true}),
        sorted_(sorted),
        has_axis_(has_axis),
        axis_(axis) {}
  void infer(InferContext& ctx) const override { ctx.fail(ErrorKind::Internal, "Unique has data-dependent outputs"); }
  void run(RunContext& ctx) const override {
    if (!ctx.has_input(0)) ctx.fail(ErrorKind::InvalidModel, "expects an input");
    const Tensor& x = ctx.input(0);
    int a = 0;
    const Rows rw = axis_rows(ctx, x, has_axis_, axis_, a);
    // Slice s holds the elements (o, s, i) for all o, i; compare slices lexicographically in (o, i) order.
    std::vector<int64_t> order(static_cast<size_t>(rw.n));
    std::iota(order.begin(), order.end(), int64_t{0});
    std::vector<int64_t> group_of(static_cast<size_t>(rw.n));
    std::vector<int64_t> firsts;  // first occurrence of each group, groups in sorted order
    with_keys(ctx.info, x, [&](auto keys) {
      auto cmp = [&](int64_t p, int64_t q) {  // -1, 0, 1
        for (int64_t o = 0; o < rw.outer; ++o)
          for (int64_t i = 0; i < rw.inner; ++i) {
            const auto u = keys[(o * rw.n + p) * rw.inner + i], v = keys[(o * rw.n + q) * rw.inner + i];
            if (key_less(u, v)) return -1;
            if (key_less(v, u)) return 1;
          }
        return 0;
      };
      // Ties keep index order: the same result as a stable sort of 0..n-1, without libstdc++'s temporary
      // buffer (GCC 12 frees it with a call ASan reports as an alloc-dealloc mismatch).
      std::sort(order.begin(), order.end(), [&](int64_t p, int64_t q) {
        const int c = cmp(p, q);
        return c != 0 ? c < 0 : p < q;
      });
      for (size_t j = 0; j < order.size(); ++j) {
        if (j == 0 || cmp(order[j - 1], order[j]) != 0) firsts.push_back(order[j]);
        group_of[static_cast<size_t>(order[j])] = static_cast<int64_t>(firsts.size()) - 1;
      }
    });
    const auto g = static_cast<int64_t>(firsts.size());
    // Output position of each sorted group: itself, or its rank by first occurrence.
    std::vector<int64_t> pos(static_cast<size_t>(g));
    std::iota(pos.begin(), pos.end(), int64_t{0});
    if (!sorted_) {
      std::vector<int64_t> by_first(pos);
      std::sort(by_first.begin(), by_first.end(),
                [&](int64_t p, int64_t q) { return firsts[static_cast<size_t>(p)] < firsts[static_cast<size_t>(q)]; });
      for (int64_t r = 0; r < g; ++r) pos[static_cast<size_t>(by_first[static_cast<size_t>(r)])] = r;
    }
    std::vector<int64_t> dims{g};
    if (has_axis_) {
      dims = x.shape().to_vector();
      dims[static_cast<size_t>(a)] = g;
    }
    Tensor& y = ctx.allocate_output(0, x.dtype(), shape_of(dims));
    const size_t chunk = static_cast<size_t>(rw.inner) * dtype_size(x.dtype());
    for (int64_t grp = 0; grp < g; ++grp)
      for (int64_t o = 0; o < rw.outer && chunk != 0; ++o)
        std::memcpy(
            static_cast<std::byte*>(y.raw_mut()) + static_cast<size_t>(o * g + pos[static_cast<size_t>(grp)]) * chunk,
            in_bytes(ctx, 0) + static_cast<size_t>(o * rw.n + firsts[static_cast<size_t>(grp)]) * chunk, chunk);
    if (ctx.outputs.size() > 1) {
      int64_t* p = ctx.allocate_output(1, DType::I64, Shape{g}).mutable_data<int64_t>().data();
      for (int64_t grp = 0; grp < g; ++grp) p[pos[static_cast<size_t>(grp)]] = firsts[static_cast<size_t>(grp)];
    }
    if (ctx.outputs.size() > 2) {
      int64_t* p = ctx.allocate_output(2, DType::I64, Shape{rw.n}).mutable_data<int64_t>().data();
      for (int64_t j = 0; j < rw.n; ++j) p[j] = pos[static_cast<size_t>(group_of[static_cast<size_t>(j)])];
    }
    if (ctx.outputs.size() > 3) {
      int64_t* p = ctx.allocate_output(3, DType::I64, Shape{g}).mutable_data<int64_t>().data();
      for (int64_t j = 0; j < rw.n; ++j) ++p[pos[static_cast<size_t>(group_of[static_cast<size_t>(j)])]];
    }
  }

 private:
  bool sorted_, has_axis_;
  int64_t axis_;
};

}  // namespace

std::unique_ptr<Kernel> make_non_zero(const NodeInfo&) { return std::make_unique<NonZeroKernel>(); }
std::unique_ptr<Kernel> make_top_k(const NodeInfo& info) {
  int64_t k = -1;
  if (info.opset() < 10) {
    if (!info.has("k")) info.fail(ErrorKind::InvalidModel, "needs the k attribute");
    k = info.get_int("k", 0);
    if (k < 0) info.fail(ErrorKind::InvalidModel, "k must not be negative");
  }
  return std::make_unique<TopKKernel>(info.get_int("axis", -1), info.get_int("largest", 1) != 0, k);
}
std::unique_ptr<Kernel> make_compress(const NodeInfo& info) {
  return std::make_unique<CompressKernel>(info.has("axis"), info.get_int("axis", 0));
}
std::unique_ptr<Kernel> make_unique_op(const NodeInfo& info) {
  return std::make_unique<UniqueKernel>(info.get_int("sorted", 1) != 0, info.has("axis"), info.get_int("axis", 0));
}

}  // namespace onemodel::rt
