// Gather, GatherElements and GatherND (ops-shape-indexing.md section 2): index-driven copies by element size.
// Every index is checked against its extent before it is used (negative ones count from the end), so bad
// indices are Error(InvalidInput) naming the node and never a read outside the data.
#include <cstring>

#include "ops/index_util.h"
#include "ops/ops.h"

namespace onemodel::rt {
namespace {

class GatherKernel final : public Kernel {
 public:
  explicit GatherKernel(int64_t axis) : Kernel(KernelFlags{.exact = true}), axis_(axis) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0) || !ctx.has_input(1)) ctx.fail(ErrorKind::InvalidModel, "expects data and indices");
    check_index_type(ctx, 1, "indices");
    const Shape& s = ctx.input(0).shape;
    if (s.rank() == 0) ctx.fail(ErrorKind::InvalidModel, "data must have rank >= 1");
    const int a = normalize_axis(ctx.info, axis_, s.rank());
    std::vector<int64_t> dims;
    for (int d = 0; d < a; ++d) dims.push_back(s[d]);
    for (int64_t e : ctx.input(1).shape.dims()) dims.push_back(e);
    for (int d = a + 1; d < s.rank(); ++d) dims.push_back(s[d]);
    ctx.set_output(0, ctx.input(0).dtype, checked_shape(ctx, dims));
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& ind = ctx.input(1);
    const Shape& s = x.shape();
    const int a = normalize_axis(ctx.info, axis_, s.rank());
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < s.rank(); ++d) {
      if (d < a) outer *= s[d];
      if (d > a) inner *= s[d];
    }
    const int64_t n = s[a], k = ind.numel();
    const size_t esz = dtype_size(x.dtype()), chunk = static_cast<size_t>(inner) * esz;
    std::vector<int64_t> fixed(static_cast<size_t>(k));
    for (int64_t j = 0; j < k; ++j) fixed[static_cast<size_t>(j)] = fix_index(ctx, index_at(ind, j), n, "index");
    std::byte* o = out_bytes(ctx, 0);
    if (chunk == 0) return;
    for (int64_t r = 0; r < outer; ++r)
      for (int64_t j = 0; j < k; ++j, o += chunk)
        std::memcpy(o, in_bytes(ctx, 0) + static_cast<size_t>(r * n + fixed[static_cast<size_t>(j)]) * chunk, chunk);
  }

 private:
  int64_t axis_;
};

// out[i] = data[i with i[axis] replaced by indices[i]]; the indices may be smaller than the data off the axis.
class GatherElementsKernel final : public Kernel {
 public:
  explicit GatherElementsKernel(int64_t axis) : Kernel(KernelFlags{.exact = true}), axis_(axis) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0) || !ctx.has_input(1)) ctx.fail(ErrorKind::InvalidModel, "expects data and indices");
    check_index_type(ctx, 1, "indices");
    const Shape& s = ctx.input(0).shape;
    const Shape& is = ctx.input(1).shape;
    if (s.rank() == 0 || is.rank() != s.rank())
      ctx.fail(ErrorKind::InvalidModel, "data and indices must have the same rank >= 1");
    const int a = normalize_axis(ctx.info, axis_, s.rank());
    for (int d = 0; d < s.rank(); ++d)
      if (d != a && is[d] > s[d])
        ctx.fail(ErrorKind::InvalidModel,
                 "indices " + is.to_string() + " exceed data " + s.to_string() + " off the axis");
    ctx.set_output(0, ctx.input(0).dtype, is);
  }

  void run(RunContext& ctx) const override {
    const Tensor& ind = ctx.input(1);
    const Shape& s = ctx.input(0).shape();
    const int a = normalize_axis(ctx.info, axis_, s.rank());
    const size_t esz = dtype_size(ctx.input(0).dtype());
    std::byte* o = out_bytes(ctx, 0);
    for_each_element_index(ctx, s, ind, a, [&](int64_t j, int64_t off) {
      copy_elem(o + static_cast<size_t>(j) * esz, in_bytes(ctx, 0) + static_cast<size_t>(off) * esz, esz);
    });
  }

 private:
  int64_t axis_;

 public:
  // Calls f(j, data offset) for every entry j of `ind` (row-major over its shape), with the axis
  // coordinate replaced by the checked index value. Shared with ScatterElements.
  template <class F>
  static void for_each_element_index(const RunContext& ctx, const Shape& s, const Tensor& ind, int a, F&& f) {
    const Shape& is = ind.shape();
    const std::vector<int64_t> st = row_strides(s);
    const int r = s.rank();
    std::vector<int64_t> idx(static_cast<size_t>(r), 0);
    const int64_t total = ind.numel();
    for (int64_t j = 0; j < total; ++j) {
      int64_t off = 0;
      for (int d = 0; d < r; ++d) off += (d == a ? 0 : idx[static_cast<size_t>(d)]) * st[static_cast<size_t>(d)];
      off += fix_index(ctx, index_at(ind, j), s[a], "index") * st[static_cast<size_t>(a)];
      f(j, off);
      for (int d = r - 1; d >= 0; --d) {
        if (++idx[static_cast<size_t>(d)] < is[d]) break;
        idx[static_cast<size_t>(d)] = 0;
      }
    }
  }
};

}  // namespace

// Declared for scatter.cc: the index walk of GatherElements, shared by ScatterElements.
void walk_element_indices(const RunContext& ctx, const Shape& s, const Tensor& ind, int axis,
                          const std::function<void(int64_t, int64_t)>& f) {
  GatherElementsKernel::for_each_element_index(ctx, s, ind, axis, f);
}

// Shape rules of GatherND and ScatterND: data [B..., D...], indices [B..., I..., m]; one index tuple of m
// coordinates addresses a slice of prod(D[m:]) elements. Returns the tuple count per batch, the slice size
// and the batch count; InvalidModel when the shapes disagree.
NdLayout nd_layout(const NodeInfo& info, const Shape& data, const Shape& ind, int64_t batch_dims) {
  NdLayout l;
  if (ind.rank() < 1) info.fail(ErrorKind::InvalidModel, "indices must have rank >= 1");
  if (batch_dims < 0 || batch_dims >= std::min(data.rank(), ind.rank()))
    info.fail(ErrorKind::InvalidModel, "batch_dims " + std::to_string(batch_dims) + " is out of range");
  const int b = static_cast<int>(batch_dims);
  for (int d = 0; d < b; ++d)
    if (data[d] != ind[d]) info.fail(ErrorKind::InvalidModel, "batch extents of data and indices differ");
  l.m = ind[ind.rank() - 1];
  if (l.m < 1 || l.m > data.rank() - b)
    info.fail(ErrorKind::InvalidModel,
              "index tuples of length " + std::to_string(l.m) + " do not fit data " + data.to_string());
  l.batch = 1;
  for (int d = 0; d < b; ++d) l.batch *= data[d];
  l.tuples = 1;
  for (int d = b; d < ind.rank() - 1; ++d) l.tuples *= ind[d];
  l.slice = 1;
  for (int d = b + static_cast<int>(l.m); d < data.rank(); ++d) l.slice *= data[d];
  l.batch_stride = 1;
  for (int d = b; d < data.rank(); ++d) l.batch_stride *= data[d];
  for (int d = 0; d < ind.rank() - 1; ++d) l.out_dims.push_back(ind[d]);
  for (int d = b + static_cast<int>(l.m); d < data.rank(); ++d) l.out_dims.push_back(data[d]);
  const std::vector<int64_t> st = row_strides(data);
  for (int64_t k = 0; k < l.m; ++k) {
    l.coord_stride.push_back(st[static_cast<size_t>(b + k)]);
    l.coord_extent.push_back(data[b + static_cast<int>(k)]);
  }
  return l;
}

// Element offset (within its batch) of index tuple t of batch bi; InvalidInput when a coordinate is out of range.
int64_t nd_offset(const RunContext& ctx, const NdLayout& l, const Tensor& ind, int64_t bi, int64_t t) {
  int64_t off = 0;
  const int64_t base = (bi * l.tuples + t) * l.m;
  for (int64_t k = 0; k < l.m; ++k)
    off += fix_index(ctx, index_at(ind, base + k), l.coord_extent[static_cast<size_t>(k)], "index") *
           l.coord_stride[static_cast<size_t>(k)];
  return off;
}

namespace {

class GatherNDKernel final : public Kernel {
 public:
  explicit GatherNDKernel(int64_t batch_dims) : Kernel(KernelFlags{.exact = true}), batch_dims_(batch_dims) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0) || !ctx.has_input(1)) ctx.fail(ErrorKind::InvalidModel, "expects data and indices");
    check_index_type(ctx, 1, "indices");
    const NdLayout l = nd_layout(ctx.info, ctx.input(0).shape, ctx.input(1).shape, batch_dims_);
    ctx.set_output(0, ctx.input(0).dtype, checked_shape(ctx, l.out_dims));
  }

  void run(RunContext& ctx) const override {
    const NdLayout l = nd_layout(ctx.info, ctx.input(0).shape(), ctx.input(1).shape(), batch_dims_);
    const size_t esz = dtype_size(ctx.input(0).dtype()), chunk = static_cast<size_t>(l.slice) * esz;
    std::byte* o = out_bytes(ctx, 0);
    for (int64_t bi = 0; bi < l.batch; ++bi)
      for (int64_t t = 0; t < l.tuples; ++t, o += chunk) {
        const int64_t off = bi * l.batch_stride + nd_offset(ctx, l, ctx.input(1), bi, t);
        if (chunk != 0) std::memcpy(o, in_bytes(ctx, 0) + static_cast<size_t>(off) * esz, chunk);
      }
  }

 private:
  int64_t batch_dims_;
};

}  // namespace

std::unique_ptr<Kernel> make_gather(const NodeInfo& info) {
  return std::make_unique<GatherKernel>(info.get_int("axis", 0));
}
std::unique_ptr<Kernel> make_gather_elements(const NodeInfo& info) {
  return std::make_unique<GatherElementsKernel>(info.get_int("axis", 0));
}
std::unique_ptr<Kernel> make_gather_nd(const NodeInfo& info) {
  return std::make_unique<GatherNDKernel>(info.get_int("batch_dims", 0));
}

}  // namespace onemodel::rt
