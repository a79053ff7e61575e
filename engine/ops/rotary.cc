// RotaryEmbedding (opset 23, ops-newer.md section 7), float32. X is [B, H, S, D] (heads first) or [B, S, H * D]
// with the num_heads attribute. The first R = rotary_embedding_dim (0: D) entries of each head vector are rotated,
// the rest copied. The pairs are (i, i + R/2) (halves) or (2i, 2i + 1) (interleaved), i < R/2; with c, s the cosine
// and sine of position (b, t) and index i (cos_cache[position_ids[b, t], i] when position_ids is given, else
// cos_cache[b, t, i]):
//   first  = round(round(c * x1) - round(s * x2))
//   second = round(round(s * x1) + round(c * x2))
// the ONNX function body's operations, each rounded once, so fast and exact agree (canonical NaN in exact mode).
#include <memory>
#include <string>

#include "ops/elementwise_common.h"
#include "ops/ops.h"

namespace onemodel::rt {
namespace {

struct RopeGeom {
  int64_t b = 0, h = 0, s = 0, d = 0;
  bool heads_first = true;  // [B, H, S, D]; false: [B, S, H * D]
};

class RotaryEmbeddingKernel final : public Kernel {
 public:
  RotaryEmbeddingKernel(bool interleaved, int64_t num_heads, int64_t rot)
      : Kernel(KernelFlags{.exact = true}), interleaved_(interleaved), num_heads_(num_heads), rot_(rot) {}

  void infer(InferContext& ctx) const override {
    ew::require_inputs(ctx, 3);
    for (size_t i = 0; i < 3; ++i)
      if (ctx.input(i).dtype != DType::F32)
        ctx.fail(ErrorKind::Unsupported, "element type " + type_str(ctx.input(i).dtype) + " is not supported");
    if (ctx.has_input(3) && ctx.input(3).dtype != DType::I64)
      ctx.fail(ErrorKind::InvalidModel, "position_ids must be int64");
    check(ctx.info, ctx.input(0).shape, ctx.input(1).shape, ctx.input(2).shape,
          ctx.has_input(3) ? &ctx.input(3).shape : nullptr, ErrorKind::InvalidModel);
    ctx.set_output(0, DType::F32, ctx.input(0).shape);
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    const bool ids = ctx.has_input(3);
    const RopeGeom g = check(ctx.info, x.shape(), ctx.input(1).shape(), ctx.input(2).shape(),
                             ids ? &ctx.input(3).shape() : nullptr, ErrorKind::InvalidInput);
    if (y.shape() != x.shape()) ctx.fail(ErrorKind::InvalidInput, "input does not match the planned output");
    if (x.numel() == 0) return;  // (a 3-D input of hidden size 0 could otherwise loop over num_heads empty heads)
    const float* px = x.data<float>().data();
    const float* pc = ctx.input(1).data<float>().data();
    const float* ps = ctx.input(2).data<float>().data();
    float* py = y.mutable_data<float>().data();
    const int64_t rot = rot_ == 0 ? g.d : rot_, half = rot / 2;
    const int64_t max_pos = ids ? ctx.input(1).shape()[0] : 0;
    const bool exact = ctx.exact;
    for (int64_t b = 0; b < g.b; ++b)
      for (int64_t t = 0; t < g.s; ++t) {
        int64_t row = b * g.s + t;  // cache row: [B, S, R/2] without position_ids
        if (ids) {
          row = ctx.input(3).data<int64_t>()[static_cast<size_t>(b * g.s + t)];
          if (row < 0 || row >= max_pos)
            ctx.fail(ErrorKind::InvalidInput, "position id " + std::to_string(row) + " is outside the cache's " +
                                                  std::to_string(max_pos) + " rows");
        }
        const float* cr = pc + row * half;
        const float* sr = ps + row * half;
        for (int64_t hd = 0; hd < g.h; ++hd) {
          const int64_t off = g.heads_first ? ((b * g.h + hd) * g.s + t) * g.d : ((b * g.s + t) * g.h + hd) * g.d;
          const float* xv = px + off;
          float* yv = py + off;
          for (int64_t i = 0; i < half; ++i) {
            const int64_t i1 = interleaved_ ? 2 * i : i, i2 = interleaved_ ? 2 * i + 1 : i + half;
            const float x1 = xv[i1], x2 = xv[i2], c = cr[i], s = sr[i];
            const float first = c * x1 - s * x2, second = s * x1 + c * x2;
            yv[i1] = exact ? kern::canon(first) : first;
            yv[i2] = exact ? kern::canon(second) : second;
          }
          for (int64_t i = rot; i < g.d; ++i) yv[i] = exact ? kern::canon(xv[i]) : xv[i];
        }
      }
  }

 private:
  RopeGeom check(const NodeInfo& info, const Shape& x, const Shape& cos, const Shape& sin, const Shape* ids,
                 ErrorKind kind) const {
    RopeGeom g;
    if (x.rank() == 4) {
      g = {x[0], x[1], x[2], x[3], true};
      if (num_heads_ != 0 && num_heads_ != g.h)
        info.fail(kind, "num_heads " + std::to_string(num_heads_) + " differs from the input's " + std::to_string(g.h));
    } else if (x.rank() == 3) {
      if (num_heads_ <= 0) info.fail(ErrorKind::InvalidModel, "a 3-D input needs a positive num_heads attribute");
      if (x[2] % num_heads_ != 0)
        info.fail(kind, "hidden size " + std::to_string(x[2]) + " is not a multiple of num_heads " +
                            std::to_string(num_heads_));
      g = {x[0], num_heads_, x[1], x[2] / num_heads_, false};
    } else {
      info.fail(kind, "input must be 3-D or 4-D, got " + x.to_string());
    }
    const int64_t rot = rot_ == 0 ? g.d : rot_;
    if (rot % 2 != 0 || rot > g.d)
      info.fail(kind, "rotary_embedding_dim " + std::to_string(rot) + " must be even and at most the head size " +
                          std::to_string(g.d));
    if (cos != sin) info.fail(kind, "cos_cache " + cos.to_string() + " and sin_cache " + sin.to_string() + " differ");
    const bool ok =
        ids ? (cos.rank() == 2 && cos[1] == rot / 2 && *ids == Shape{g.b, g.s}) : (cos == Shape{g.b, g.s, rot / 2});
    if (!ok)
      info.fail(kind, std::string("cos_cache ") + cos.to_string() +
                          (ids ? " must be [max_position, " + std::to_string(rot / 2) + "] and position_ids " +
                                     ids->to_string() + " [" + std::to_string(g.b) + "," + std::to_string(g.s) + "]"
                               : " must be [" + std::to_string(g.b) + "," + std::to_string(g.s) + "," +
                                     std::to_string(rot / 2) + "]"));
    return g;
  }

  bool interleaved_;
  int64_t num_heads_, rot_;
};

}  // namespace

std::unique_ptr<Kernel> make_rotary_embedding(const NodeInfo& info) {
  const int64_t heads = info.get_int("num_heads", 0), rot = info.get_int("rotary_embedding_dim", 0);
  if (heads < 0 || heads > kMaxElements)
    info.fail(ErrorKind::InvalidModel, "num_heads " + std::to_string(heads) + " is out of range");
  if (rot < 0 || rot > kMaxElements)
    info.fail(ErrorKind::InvalidModel, "rotary_embedding_dim " + std::to_string(rot) + " is out of range");
  return std::make_unique<RotaryEmbeddingKernel>(info.get_int("interleaved", 0) != 0, heads, rot);
}

}  // namespace onemodel::rt
