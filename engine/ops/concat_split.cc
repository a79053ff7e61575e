// Concat and Split (ops-shape-indexing.md section 2): both view the tensors as [outer, extent * inner] rows
// and move whole row pieces with memcpy, whatever the element type.
#include <algorithm>
#include <cstring>
#include <vector>

#include "ops/index_util.h"
#include "ops/ops.h"

namespace onemodel::rt {
namespace {

// Product of the extents before and after `axis`.
void outer_inner(const Shape& s, int axis, int64_t& outer, int64_t& inner) {
  outer = 1;
  inner = 1;
  for (int d = 0; d < s.rank(); ++d) {
    if (d < axis) outer *= s[d];
    if (d > axis) inner *= s[d];
  }
}

class ConcatKernel final : public Kernel {
 public:
  explicit ConcatKernel(int64_t axis) : Kernel(KernelFlags{.exact = true}), axis_(axis) {}

  void infer(InferContext& ctx) const override {
    if (ctx.inputs.empty()) ctx.fail(ErrorKind::InvalidModel, "expects at least one input");
    for (size_t i = 0; i < ctx.inputs.size(); ++i)
      if (!ctx.has_input(i)) ctx.fail(ErrorKind::InvalidModel, "input " + std::to_string(i) + " is missing");
    const InputMeta& first = ctx.input(0);
    const int rank = first.shape.rank();
    if (rank == 0) ctx.fail(ErrorKind::InvalidModel, "cannot concatenate scalars");
    const int a = normalize_axis(ctx.info, axis_, rank);
    std::vector<int64_t> dims = first.shape.to_vector();
    int64_t total = 0;
    for (size_t i = 0; i < ctx.inputs.size(); ++i) {
      const InputMeta& m = ctx.input(i);
      if (m.dtype != first.dtype)
        ctx.fail(ErrorKind::InvalidModel,
                 "input " + std::to_string(i) + " is " + type_str(m.dtype) + ", input 0 is " + type_str(first.dtype));
      if (m.shape.rank() != rank) ctx.fail(ErrorKind::InvalidModel, "inputs differ in rank");
      for (int d = 0; d < rank; ++d)
        if (d != a && m.shape[d] != first.shape[d])
          ctx.fail(ErrorKind::InvalidModel, "input " + std::to_string(i) + " shape " + m.shape.to_string() +
                                                " does not match " + first.shape.to_string() + " off the axis");
      total += m.shape[a];
    }
    dims[static_cast<size_t>(a)] = total;
    ctx.set_output(0, first.dtype, shape_of(dims));
  }

  void run(RunContext& ctx) const override {
    const Shape& out = ctx.output(0).shape();
    const int a = normalize_axis(ctx.info, axis_, out.rank());
    int64_t outer, inner;
    outer_inner(out, a, outer, inner);
    const size_t esz = dtype_size(ctx.output(0).dtype());
    std::byte* o = out_bytes(ctx, 0);
    // Large results are copied in pieces of at most 256 KiB on the pool (PP-OCRv4 det's 9.8 MB Concat took
    // 1.1 ms on one thread at any thread count); small ones in order on this thread.
    constexpr size_t kPiece = size_t{256} << 10;
    const size_t total = ctx.output(0).nbytes();
    struct Copy {
      const std::byte* src;
      std::byte* dst;
      size_t bytes;
    };
    thread_local std::vector<Copy> kept;  // a warm run allocates nothing
    std::vector<Copy>& copies = kept;     // this thread's list, also inside the pool's chunks
    copies.clear();
    const bool split = ctx.pool && ctx.pool->threads() > 1 && total >= 4 * kPiece;
    for (int64_t r = 0; r < outer; ++r)
      for (size_t i = 0; i < ctx.inputs.size(); ++i) {
        const size_t chunk = static_cast<size_t>(ctx.input(i).shape()[a] * inner) * esz;
        if (chunk == 0) continue;
        const std::byte* src = in_bytes(ctx, i) + static_cast<size_t>(r) * chunk;
        if (!split) {
          std::memcpy(o, src, chunk);
        } else {
          for (size_t b = 0; b < chunk; b += kPiece) copies.push_back({src + b, o + b, std::min(kPiece, chunk - b)});
        }
        o += chunk;
      }
    if (split)
      parallel_for(ctx.pool, static_cast<int64_t>(copies.size()), 0.1 * static_cast<double>(total), [&](int64_t c) {
        const Copy& k = copies[static_cast<size_t>(c)];
        std::memcpy(k.dst, k.src, k.bytes);
      });
  }

 private:
  int64_t axis_;
};

// Split: sizes from the attribute (before 13) or the optional input (13+); without sizes, equal parts
// before 18 and ceil(extent / n) parts with a shorter last one from 18.
class SplitKernel final : public Kernel {
 public:
  SplitKernel(int64_t axis, std::vector<int64_t> attr_split, int64_t opset, int64_t num_outputs)
      : Kernel(KernelFlags{.exact = true}),
        axis_(axis),
        attr_split_(std::move(attr_split)),
        opset_(opset),
        num_outputs_(num_outputs) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0)) ctx.fail(ErrorKind::InvalidModel, "expects a data input");
    const Shape& s = ctx.input(0).shape;
    const int a = normalize_axis(ctx.info, axis_, s.rank());
    const Tensor* given = nullptr;
    if (opset_ >= 13 && ctx.has_input(1)) {
      if (!have_values(ctx, {1})) return;
      given = ctx.input(1).value;
    }
    const std::vector<int64_t> sizes = part_sizes(ctx.info, s[a], given, ctx.outputs.size());
    std::vector<int64_t> dims = s.to_vector();
    for (size_t i = 0; i < sizes.size(); ++i) {
      dims[static_cast<size_t>(a)] = sizes[i];
      ctx.set_output(i, ctx.input(0).dtype, shape_of(dims));
    }
  }

  void run(RunContext& ctx) const override {
    const Shape& s = ctx.input(0).shape();
    const int a = normalize_axis(ctx.info, axis_, s.rank());
    const Tensor* given = opset_ >= 13 && ctx.has_input(1) ? &ctx.input(1) : nullptr;
    const std::vector<int64_t> sizes = part_sizes(ctx.info, s[a], given, ctx.outputs.size());
    int64_t outer, inner;
    outer_inner(s, a, outer, inner);
    const size_t esz = dtype_size(ctx.input(0).dtype());
    const size_t in_row = static_cast<size_t>(s[a] * inner) * esz;
    size_t at = 0;
    for (size_t i = 0; i < ctx.outputs.size(); ++i) {
      const size_t chunk = static_cast<size_t>(sizes[i] * inner) * esz;
      if (!ctx.output(i).empty() && chunk != 0)
        for (int64_t r = 0; r < outer; ++r)
          std::memcpy(out_bytes(ctx, i) + static_cast<size_t>(r) * chunk,
                      in_bytes(ctx, 0) + static_cast<size_t>(r) * in_row + at, chunk);
      at += chunk;
    }
  }

 private:
  std::vector<int64_t> part_sizes(const NodeInfo& info, int64_t ext, const Tensor* given, size_t outputs) const {
    const auto n = static_cast<int64_t>(outputs);
    if (n == 0) info.fail(ErrorKind::InvalidModel, "has no outputs");
    std::vector<int64_t> sizes = given ? read_int_tensor(info, *given, "split") : attr_split_;
    if (sizes.empty()) {
      if (opset_ >= 18) {
        const int64_t parts = num_outputs_ > 0 ? num_outputs_ : n;
        if (parts != n)
          info.fail(ErrorKind::InvalidModel,
                    "num_outputs " + std::to_string(parts) + " does not match " + std::to_string(n) + " outputs");
        const int64_t each = (ext + parts - 1) / parts;
        int64_t left = ext;
        for (int64_t i = 0; i < parts; ++i) {
          sizes.push_back(std::min(each, left));
          left -= sizes.back();
        }
      } else {
        if (ext % n != 0)
          info.fail(ErrorKind::InvalidModel,
                    "extent " + std::to_string(ext) + " does not split into " + std::to_string(n) + " equal parts");
        sizes.assign(static_cast<size_t>(n), ext / n);
      }
    }
    if (static_cast<int64_t>(sizes.size()) != n)
      info.fail(ErrorKind::InvalidModel,
                "split has " + std::to_string(sizes.size()) + " sizes for " + std::to_string(n) + " outputs");
    int64_t sum = 0;
    for (int64_t v : sizes) {
      if (v < 0) info.fail(ErrorKind::InvalidModel, "negative split size " + std::to_string(v));
      sum += v;
    }
    if (sum != ext)
      info.fail(ErrorKind::InvalidModel,
                "split sizes add up to " + std::to_string(sum) + ", extent is " + std::to_string(ext));
    return sizes;
  }

  int64_t axis_;
  std::vector<int64_t> attr_split_;
  int64_t opset_, num_outputs_;
};

}  // namespace

std::unique_ptr<Kernel> make_concat(const NodeInfo& info) {
  if (info.opset() >= 4 && !info.has("axis")) info.fail(ErrorKind::InvalidModel, "needs the axis attribute");
  return std::make_unique<ConcatKernel>(info.get_int("axis", 1));
}
std::unique_ptr<Kernel> make_split(const NodeInfo& info) {
  return std::make_unique<SplitKernel>(info.get_int("axis", 0),
                                       info.opset() < 13 ? info.get_ints("split") : std::vector<int64_t>{},
                                       info.opset(), info.get_int("num_outputs", 0));
}

}  // namespace onemodel::rt
