// Layout operators (ops-shape-indexing.md section 2): Transpose, Expand, Tile, DepthToSpace, SpaceToDepth and
// ReverseSequence. Each is a pure element move, expressed as per-axis offset maps for map_copy (index_util.h)
// where it can be, so every element type shares one loop and the bits are the same in fast and exact mode.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <utility>

#include "ops/index_util.h"
#include "ops/ops.h"

namespace onemodel::rt {
namespace {

// Batched 2-D transpose out[b][c][r] = in[b][r][c] in 32x32 tiles, so reads and writes both stay in cache.
template <class T>
void transpose_tiles(T* out, const T* in, int64_t batch, int64_t rows, int64_t cols) {
  constexpr int64_t kTile = 32;
  for (int64_t b = 0; b < batch; ++b, in += rows * cols, out += rows * cols)
    for (int64_t r0 = 0; r0 < rows; r0 += kTile)
      for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
        const int64_t r1 = std::min(rows, r0 + kTile), c1 = std::min(cols, c0 + kTile);
        for (int64_t c = c0; c < c1; ++c)
          for (int64_t r = r0; r < r1; ++r) out[c * rows + r] = in[r * cols + c];
      }
}

// Copies `in` (contiguous, logical shape `in_dims`) permuted by `perm` into dst. Extent-1 axes are dropped
// and input axes that stay adjacent in the output are merged first; what remains is a plain copy, a
// batched 2-D transpose (tiled) or, in general, a map_copy.
void permute_copy(void* dst, const void* src, size_t esz, const std::vector<int64_t>& in_dims,
                  const std::vector<int>& perm) {
  int64_t total = 1;
  for (int64_t d : in_dims) total *= d;
  if (total == 0) return;
  std::vector<int> keep(in_dims.size(), -1);
  std::vector<int64_t> kept;
  for (size_t a = 0; a < in_dims.size(); ++a)
    if (in_dims[a] != 1) {
      keep[a] = static_cast<int>(kept.size());
      kept.push_back(in_dims[a]);
    }
  std::vector<std::pair<int, int>> groups;  // runs of input axes [first, last], in output order
  for (int a : perm) {
    const int k = keep[static_cast<size_t>(a)];
    if (k < 0) continue;
    if (!groups.empty() && groups.back().second + 1 == k)
      groups.back().second = k;
    else
      groups.emplace_back(k, k);
  }
  std::vector<size_t> by_input(groups.size());
  std::iota(by_input.begin(), by_input.end(), size_t{0});
  std::sort(by_input.begin(), by_input.end(), [&](size_t x, size_t y) { return groups[x].first < groups[y].first; });
  std::vector<int64_t> dims(groups.size());
  std::vector<int> p(groups.size());
  for (size_t i = 0; i < by_input.size(); ++i) {
    const auto& g = groups[by_input[i]];
    dims[i] = 1;
    for (int k = g.first; k <= g.second; ++k) dims[i] *= kept[static_cast<size_t>(k)];
    p[by_input[i]] = static_cast<int>(i);
  }
  const size_t r = p.size();
  bool identity = true;
  for (size_t i = 0; i < r; ++i) identity = identity && p[i] == static_cast<int>(i);
  if (identity) {
    std::memcpy(dst, src, static_cast<size_t>(total) * esz);
    return;
  }
  bool swap_last = r >= 2 && p[r - 1] == static_cast<int>(r - 2) && p[r - 2] == static_cast<int>(r - 1);
  for (size_t i = 0; i + 2 < r; ++i) swap_last = swap_last && p[i] == static_cast<int>(i);
  if (swap_last) {
    const int64_t rows = dims[r - 2], cols = dims[r - 1], batch = total / (rows * cols);
    switch (esz) {
      case 1: transpose_tiles(static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src), batch, rows, cols); return;
      case 2:
        transpose_tiles(static_cast<uint16_t*>(dst), static_cast<const uint16_t*>(src), batch, rows, cols);
        return;
      case 4:
        transpose_tiles(static_cast<uint32_t*>(dst), static_cast<const uint32_t*>(src), batch, rows, cols);
        return;
      default:
        transpose_tiles(static_cast<uint64_t*>(dst), static_cast<const uint64_t*>(src), batch, rows, cols);
        return;
    }
  }
  const std::vector<int64_t> st = row_strides(shape_of(dims));
  std::vector<int64_t> out_dims;
  std::vector<std::vector<int64_t>> maps;
  for (int a : p) {
    const int64_t n = dims[static_cast<size_t>(a)];
    out_dims.push_back(n);
    std::vector<int64_t> m(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) m[static_cast<size_t>(i)] = i * st[static_cast<size_t>(a)];
    maps.push_back(std::move(m));
  }
  map_copy(dst, src, esz, shape_of(out_dims), maps, nullptr);
}

class TransposeKernel final : public Kernel {
 public:
  explicit TransposeKernel(std::vector<int64_t> perm) : Kernel(KernelFlags{.exact = true}), perm_(std::move(perm)) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0)) ctx.fail(ErrorKind::InvalidModel, "expects one input");
    const Shape& in = ctx.input(0).shape;
    const std::vector<int> p = perm_for(ctx.info, in.rank());
    std::vector<int64_t> dims;
    for (int a : p) dims.push_back(in[a]);
    ctx.set_output(0, ctx.input(0).dtype, shape_of(dims));
  }
  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    permute_copy(ctx.output(0).raw_mut(), x.raw(), dtype_size(x.dtype()), x.shape().to_vector(),
                 perm_for(ctx.info, x.rank()));
  }

 private:
  // The default reverses the axes; a given perm must be a permutation of 0..rank-1.
  std::vector<int> perm_for(const NodeInfo& info, int rank) const {
    std::vector<int> p(static_cast<size_t>(rank));
    if (perm_.empty()) {
      for (int i = 0; i < rank; ++i) p[static_cast<size_t>(i)] = rank - 1 - i;
      return p;
    }
    if (perm_.size() != static_cast<size_t>(rank))
      info.fail(ErrorKind::InvalidModel,
                "perm has " + std::to_string(perm_.size()) + " entries for rank " + std::to_string(rank));
    std::vector<bool> seen(static_cast<size_t>(rank), false);
    for (size_t i = 0; i < perm_.size(); ++i) {
      const int a = normalize_axis(info, perm_[i], rank);
      if (seen[static_cast<size_t>(a)]) info.fail(ErrorKind::InvalidModel, "perm repeats axis " + std::to_string(a));
      seen[static_cast<size_t>(a)] = true;
      p[i] = a;
    }
    return p;
  }
  std::vector<int64_t> perm_;
};

// Expand (bidirectional broadcast with the shape input) and Tile (repeats input) both read input offset
// (i mod extent) or (0 when the extent broadcasts) along each axis.
class RepeatKernel final : public Kernel {
 public:
  explicit RepeatKernel(bool tile) : Kernel(KernelFlags{.exact = true}), tile_(tile) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0) || !ctx.has_input(1)) ctx.fail(ErrorKind::InvalidModel, "expects two inputs");
    if (ctx.input(1).dtype != DType::I64) ctx.fail(ErrorKind::InvalidModel, "second input must be int64");
    if (ctx.input(1).shape.rank() != 1) ctx.fail(ErrorKind::InvalidModel, "second input must be 1-D");
    if (!have_values(ctx, {1})) return;
    const std::vector<int64_t> v = ints_of(ctx, 1, tile_ ? "repeats" : "shape");
    const Shape& in = ctx.input(0).shape;
    std::vector<int64_t> dims;
    if (tile_) {
      if (v.size() != static_cast<size_t>(in.rank()))
        ctx.fail(ErrorKind::InvalidModel,
                 "repeats has " + std::to_string(v.size()) + " entries for rank " + std::to_string(in.rank()));
      for (int d = 0; d < in.rank(); ++d) {
        if (v[static_cast<size_t>(d)] < 0)
          ctx.fail(ErrorKind::InvalidModel, "negative repeat " + std::to_string(v[static_cast<size_t>(d)]));
        if (v[static_cast<size_t>(d)] != 0 && in[d] > kMaxElements / v[static_cast<size_t>(d)])
          ctx.fail(ErrorKind::Unsupported, "tiled extent exceeds 2^31-1");
        dims.push_back(in[d] * v[static_cast<size_t>(d)]);
      }
      ctx.set_output(0, ctx.input(0).dtype, checked_shape(ctx, dims));
      return;
    }
    for (int64_t d : v)
      if (d < 0) ctx.fail(ErrorKind::InvalidModel, "negative extent " + std::to_string(d) + " in shape");
    if (v.size() > static_cast<size_t>(kMaxRank)) ctx.fail(ErrorKind::Unsupported, "shape rank exceeds 8");
    try {
      ctx.set_output(0, ctx.input(0).dtype, Shape::broadcast(in, shape_of(v)));
    } catch (const Error&) {
      ctx.fail(ErrorKind::InvalidModel, "cannot expand " + in.to_string() + " to " + shape_of(v).to_string());
    }
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Shape& out = ctx.output(0).shape();
    const std::vector<int64_t> st = row_strides(x.shape());
    const int off = out.rank() - x.rank();
    std::vector<std::vector<int64_t>> maps(static_cast<size_t>(out.rank()));
    for (int d = 0; d < out.rank(); ++d) {
      std::vector<int64_t>& m = maps[static_cast<size_t>(d)];
      m.assign(static_cast<size_t>(out[d]), 0);
      if (d < off) continue;
      const int64_t n = x.shape()[d - off];
      const int64_t s = st[static_cast<size_t>(d - off)];
      for (int64_t i = 0; i < out[d]; ++i) m[static_cast<size_t>(i)] = (n == 1 ? 0 : i % n) * s;
    }
    map_copy(ctx.output(0).raw_mut(), x.raw(), dtype_size(x.dtype()), out, maps, nullptr);
  }

 private:
  bool tile_;
};

// DepthToSpace (DCR and CRD) and SpaceToDepth: a 6-D reshape, a transpose and a 4-D reshape.
class BlockKernel final : public Kernel {
 public:
  BlockKernel(bool to_space, bool crd, int64_t b)
      : Kernel(KernelFlags{.exact = true}), to_space_(to_space), crd_(crd), b_(b) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0)) ctx.fail(ErrorKind::InvalidModel, "expects one input");
    const Shape& s = ctx.input(0).shape;
    if (s.rank() != 4) ctx.fail(ErrorKind::InvalidModel, "input must be 4-D, got " + s.to_string());
    if (b_ <= 0 || b_ > 65536) ctx.fail(ErrorKind::InvalidModel, "blocksize must be positive");
    const int64_t bb = b_ * b_;
    if (to_space_) {
      if (s[1] % bb != 0)
        ctx.fail(ErrorKind::InvalidModel, "channels " + std::to_string(s[1]) + " are not divisible by blocksize^2");
      ctx.set_output(0, ctx.input(0).dtype, Shape{s[0], s[1] / bb, s[2] * b_, s[3] * b_});
    } else {
      if (s[2] % b_ != 0 || s[3] % b_ != 0)
        ctx.fail(ErrorKind::InvalidModel, "height and width must be divisible by blocksize");
      ctx.set_output(0, ctx.input(0).dtype, Shape{s[0], s[1] * bb, s[2] / b_, s[3] / b_});
    }
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Shape& s = x.shape();
    const int64_t n = s[0], c = s[1], h = s[2], w = s[3], b = b_;
    std::vector<int64_t> dims;
    std::vector<int> perm;
    if (to_space_ && crd_) {
      dims = {n, c / (b * b), b, b, h, w};
      perm = {0, 1, 4, 2, 5, 3};
    } else if (to_space_) {
      dims = {n, b, b, c / (b * b), h, w};
      perm = {0, 3, 4, 1, 5, 2};
    } else {
      dims = {n, c, h / b, b, w / b, b};
      perm = {0, 3, 5, 1, 2, 4};
    }
    permute_copy(ctx.output(0).raw_mut(), x.raw(), dtype_size(x.dtype()), dims, perm);
  }

 private:
  bool to_space_, crd_;
  int64_t b_;
};

// ReverseSequence: along time_axis, the first sequence_lens[b] elements of batch b are reversed; the rest
// are copied. A length outside [0, time extent] is InvalidInput.
class ReverseSequenceKernel final : public Kernel {
 public:
  ReverseSequenceKernel(int64_t batch_axis, int64_t time_axis)
      : Kernel(KernelFlags{.exact = true}), batch_axis_(batch_axis), time_axis_(time_axis) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0) || !ctx.has_input(1)) ctx.fail(ErrorKind::InvalidModel, "expects input and sequence_lens");
    const Shape& s = ctx.input(0).shape;
    if (s.rank() < 2) ctx.fail(ErrorKind::InvalidModel, "input must have rank >= 2");
    if (!((batch_axis_ == 0 && time_axis_ == 1) || (batch_axis_ == 1 && time_axis_ == 0)))
      ctx.fail(ErrorKind::InvalidModel, "batch_axis and time_axis must be 0 and 1 in some order");
    check_index_type(ctx, 1, "sequence_lens");
    const Shape& l = ctx.input(1).shape;
    if (l.rank() != 1 || l[0] != s[static_cast<int>(batch_axis_)])
      ctx.fail(ErrorKind::InvalidModel, "sequence_lens must be 1-D of the batch extent, got " + l.to_string());
    ctx.set_output(0, ctx.input(0).dtype, s);
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Shape& s = x.shape();
    const size_t esz = dtype_size(x.dtype());
    const int64_t rest = s.numel() == 0 ? 0 : s.numel() / (s[0] * s[1]);
    const int64_t T = s[static_cast<int>(time_axis_)], B = s[static_cast<int>(batch_axis_)];
    const int64_t st_t = time_axis_ == 0 ? s[1] * rest : rest, st_b = batch_axis_ == 0 ? s[1] * rest : rest;
    const size_t row = static_cast<size_t>(rest) * esz;
    for (int64_t b = 0; b < B; ++b) {
      const int64_t len = index_at(ctx.input(1), b);
      if (len < 0 || len > T)
        ctx.fail(ErrorKind::InvalidInput,
                 "sequence length " + std::to_string(len) + " is outside [0, " + std::to_string(T) + "]");
      for (int64_t t = 0; t < T; ++t) {
        const int64_t src_t = t < len ? len - 1 - t : t;
        if (row != 0)
          std::memcpy(out_bytes(ctx, 0) + static_cast<size_t>(t * st_t + b * st_b) * esz,
                      in_bytes(ctx, 0) + static_cast<size_t>(src_t * st_t + b * st_b) * esz, row);
      }
    }
  }

 private:
  int64_t batch_axis_, time_axis_;
};

}  // namespace

std::unique_ptr<Kernel> make_transpose(const NodeInfo& info) {
  return std::make_unique<TransposeKernel>(info.get_ints("perm"));
}
std::unique_ptr<Kernel> make_expand(const NodeInfo&) { return std::make_unique<RepeatKernel>(false); }
std::unique_ptr<Kernel> make_tile(const NodeInfo&) { return std::make_unique<RepeatKernel>(true); }
std::unique_ptr<Kernel> make_depth_to_space(const NodeInfo& info) {
  const std::string mode = info.get_string("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") info.fail(ErrorKind::InvalidModel, "unknown mode '" + mode + "'");
  if (!info.has("blocksize")) info.fail(ErrorKind::InvalidModel, "needs the blocksize attribute");
  return std::make_unique<BlockKernel>(true, mode == "CRD", info.get_int("blocksize", 0));
}
std::unique_ptr<Kernel> make_space_to_depth(const NodeInfo& info) {
  if (!info.has("blocksize")) info.fail(ErrorKind::InvalidModel, "needs the blocksize attribute");
  return std::make_unique<BlockKernel>(false, false, info.get_int("blocksize", 0));
}
std::unique_ptr<Kernel> make_reverse_sequence(const NodeInfo& info) {
  return std::make_unique<ReverseSequenceKernel>(info.get_int("batch_axis", 1), info.get_int("time_axis", 0));
}

}  // namespace onemodel::rt
