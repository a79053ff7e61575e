// FusedAttention (domain "onemodel"): what the `attention` pass (passes/attention.cc, graph-passes.md) turns
//   MatMul(Q, Kt) -> [Mul or Div by a constant] -> [Add mask] -> Softmax(last axis) -> MatMul(P, V)
// into. It never materialises the [b, h, sq, sk] score and probability tensors: blocks of 64 query rows go
// through the matrix product, scale and mask, the softmax rows and the second product (see blocks() for why
// not a one-row fused kernel). Exact mode computes every score and output with the operations of the unfused
// graph in their order (kernels-attention.md section 2), so the pass keeps exact bits.
// Inputs Q, K, V [, mask]; attributes:
//   scale, scale_div   the scores are multiplied by scale (scale_div 0) or divided by it (1); fast mode
//                      multiplies by 1/scale instead of dividing
//   q_layout, k_layout, v_layout, out_layout   0: [b, h, s, d] (or [h, s, d] at rank 3), 1: [b, s, h, d]
//     K is given row-wise ([.., sk, d]); layout 1 means the head-split transposes were absorbed (the products
//     read the strided layout), out_layout 1 that the head-merge transpose was.
// Batch and head extents broadcast between Q, K, V as MatMul's would (an extent of 1 reads with stride 0),
// any mask broadcastable to [b, h, sq, sk] is read through strides, and the value head size may differ from
// the query's.
#include <algorithm>
#include <array>
#include <vector>

#include "kernels/gemm.h"
#include "kernels/softmax.h"
#include "ops/common.h"
#include "ops/ops.h"

namespace onemodel::rt {
namespace {

// The operands as strided views: element (b, h, row, x) of Q, K, V, O is at b*sb + h*sh + row*sr + x (x
// contiguous); the optional mask element (b, h, i, j) at b*m_sb + h*m_sh + i*m_si + j*m_sj. A stride of 0
// broadcasts.
struct AttentionArgs {
  int64_t batch = 0, heads = 0, q_len = 0, k_len = 0, d = 0;
  float scale = 1.0f;  // the graph's constant: a multiplier, or a divisor when scale_div (kern::ScoreSoftmax)
  bool scale_div = false;
  const float* q = nullptr;
  int64_t q_sb = 0, q_sh = 0, q_sr = 0;
  const float* k = nullptr;
  int64_t k_sb = 0, k_sh = 0, k_sr = 0;
  const float* v = nullptr;
  int64_t v_sb = 0, v_sh = 0, v_sr = 0;
  const float* mask = nullptr;  // null: no mask (+0)
  int64_t m_sb = 0, m_sh = 0, m_si = 0, m_sj = 0;
  float* out = nullptr;
  int64_t o_sb = 0, o_sh = 0, o_sr = 0;
};

// One operand's extents and element strides in the kernel's terms.
struct Operand {
  int64_t b = 1, h = 1, s = 0, d = 0;
  int64_t sb = 0, sh = 0, sr = 0;
};

Operand describe(const NodeInfo& info, const Shape& shape, int64_t layout, const char* what) {
  Operand o;
  const int r = shape.rank();
  if (layout == 1) {
    if (r != 4) info.fail(ErrorKind::InvalidModel, std::string(what) + " must have rank 4, got " + shape.to_string());
    o.b = shape[0];
    o.s = shape[1];
    o.h = shape[2];
    o.d = shape[3];
    o.sb = o.s * o.h * o.d;
    o.sh = o.d;
    o.sr = o.h * o.d;
  } else {
    if (r != 3 && r != 4)
      info.fail(ErrorKind::InvalidModel, std::string(what) + " must have rank 3 or 4, got " + shape.to_string());
    o.b = r == 4 ? shape[0] : 1;
    o.h = shape[r - 3];
    o.s = shape[r - 2];
    o.d = shape[r - 1];
    o.sr = o.d;
    o.sh = o.s * o.d;
    o.sb = o.h * o.sh;
  }
  return o;
}

// The common extent of a broadcast axis (1 broadcasts), or -1 when they conflict.
int64_t join(int64_t a, int64_t b) { return a == b || b == 1 ? a : a == 1 ? b : -1; }

struct Geometry {
  Operand q, k, v;
  int64_t b = 0, h = 0;
  bool rank3 = false;  // every operand [h, s, d]: so is the output
};

class FusedAttention final : public Kernel {
 public:
  FusedAttention(float scale, bool scale_div, int64_t ql, int64_t kl, int64_t vl, int64_t ol)
      : Kernel(KernelFlags{.exact = true}), scale_(scale), scale_div_(scale_div), ql_(ql), kl_(kl), vl_(vl), ol_(ol) {}

  Geometry geometry(const NodeInfo& info, const Shape& q, const Shape& k, const Shape& v) const {
    Geometry g;
    g.q = describe(info, q, ql_, "Q");
    g.k = describe(info, k, kl_, "K");
    g.v = describe(info, v, vl_, "V");
    g.rank3 = q.rank() == 3 && k.rank() == 3 && v.rank() == 3;
    g.b = join(join(g.q.b, g.k.b), g.v.b);
    g.h = join(join(g.q.h, g.k.h), g.v.h);
    if (g.b < 0 || g.h < 0 || g.q.d != g.k.d || g.k.s != g.v.s)
      info.fail(ErrorKind::InvalidModel,
                "Q " + q.to_string() + ", K " + k.to_string() + " and V " + v.to_string() +
                    " do not form an attention (batch, heads, key length or head size differ)");
    return g;
  }

  Shape out_shape(const Geometry& g) const {
    if (ol_ == 1) return Shape{g.b, g.q.s, g.h, g.v.d};
    if (g.rank3) return Shape{g.h, g.q.s, g.v.d};
    return Shape{g.b, g.h, g.q.s, g.v.d};
  }

  void infer(InferContext& ctx) const override {
    for (size_t i = 0; i < 3; ++i)
      if (!ctx.has_input(i) || ctx.input(i).dtype != DType::F32)
        ctx.fail(ErrorKind::Unsupported, "Q, K and V must be float32");
    if (ctx.has_input(3) && ctx.input(3).dtype != DType::F32)
      ctx.fail(ErrorKind::Unsupported, "the mask must be float32");
    const Geometry g = geometry(ctx.info, ctx.input(0).shape, ctx.input(1).shape, ctx.input(2).shape);
    if (ctx.has_input(3)) mask_strides(ctx.info, ctx.input(3).shape, g);
    ctx.set_output(0, DType::F32, out_shape(g));
  }

  void run(RunContext& ctx) const override {
    const Geometry g = geometry(ctx.info, ctx.input(0).shape(), ctx.input(1).shape(), ctx.input(2).shape());
    AttentionArgs a;
    a.batch = g.b;
    a.heads = g.h;
    a.q_len = g.q.s;
    a.k_len = g.k.s;
    a.d = g.q.d;
    a.scale_div = scale_div_;
    a.scale = scale_;
    auto bind = [](const Operand& o, int64_t b, int64_t h, int64_t& sb, int64_t& sh, int64_t& sr) {
      sb = b > 1 && o.b == 1 ? 0 : o.sb;
      sh = h > 1 && o.h == 1 ? 0 : o.sh;
      sr = o.sr;
    };
    a.q = ctx.input(0).data<float>().data();
    bind(g.q, g.b, g.h, a.q_sb, a.q_sh, a.q_sr);
    a.k = ctx.input(1).data<float>().data();
    bind(g.k, g.b, g.h, a.k_sb, a.k_sh, a.k_sr);
    a.v = ctx.input(2).data<float>().data();
    bind(g.v, g.b, g.h, a.v_sb, a.v_sh, a.v_sr);
    if (ctx.has_input(3)) {
      const auto st = mask_strides(ctx.info, ctx.input(3).shape(), g);
      a.mask = ctx.input(3).data<float>().data();
      a.m_sb = st[0];
      a.m_sh = st[1];
      a.m_si = st[2];
      a.m_sj = st[3];
    }
    Tensor& out = ctx.output(0);
    a.out = out.mutable_data<float>().data();
    if (ol_ == 1) {
      a.o_sr = g.h * g.v.d;
      a.o_sh = g.v.d;
      a.o_sb = g.q.s * a.o_sr;
    } else {
      a.o_sr = g.v.d;
      a.o_sh = g.q.s * g.v.d;
      a.o_sb = g.h * a.o_sh;
    }
    if (ctx.exact)
      blocks<true>(ctx, a, g.v.d);
    else
      blocks<false>(ctx, a, g.v.d);
  }

 private:
  // Strides reading a mask of `shape` as [b, h, sq, sk] (right-aligned broadcasting; extent 1 reads stride 0).
  static std::array<int64_t, 4> mask_strides(const NodeInfo& info, const Shape& shape, const Geometry& g) {
    const int r = shape.rank();
    if (r > 4) info.fail(ErrorKind::InvalidModel, "the attention mask " + shape.to_string() + " has rank above 4");
    const int64_t want[4] = {g.b, g.h, g.q.s, g.k.s};
    std::array<int64_t, 4> st{0, 0, 0, 0};
    int64_t stride = 1;
    for (int k = 3; k >= 0; --k) {
      const int axis = r - 4 + k;
      if (axis < 0) break;
      const int64_t e = shape[axis];
      if (e != 1 && e != want[k])
        info.fail(ErrorKind::InvalidModel, "the attention mask " + shape.to_string() +
                                               " does not broadcast to the scores [" + std::to_string(g.b) + ", " +
                                               std::to_string(g.h) + ", " + std::to_string(g.q.s) + ", " +
                                               std::to_string(g.k.s) + "]");
      st[static_cast<size_t>(k)] = e == 1 ? 0 : stride;
      stride *= e;
    }
    return st;
  }

  // Work items of kRows query rows of one (b, h): S = Q_rows K^T on the matrix product (K read transposed
  // through strides), S = S * scale + mask, softmax rows, O_rows = S V. Scores exist for kRows rows at a time
  // (64 x sk floats per thread) instead of the whole [b, h, sq, sk] tensor twice. Why not a one-row fused kernel
  // (the founding notes' exact attention definition fixes the order of each dot per query row): it has no
  // register blocking over rows; such a kernel took 46 ms on attention_s512 (BERT-base, 1 thread, AVX-512)
  // against 21.6 ms for the unfused graph (kernels-attention.md "Not done"). The product's register tiles are
  // the fast path. Exact: each score and output is one accumulator over increasing k on either path, so the
  // exact product gives the unfused MatMul's bits; the scale and mask are two separately rounded steps.
  template <bool kExact>
  static void blocks(const RunContext& ctx, const AttentionArgs& a, int64_t dv) {
    constexpr int64_t kRows = 64;
    const int64_t qblocks = (a.q_len + kRows - 1) / kRows;
    const int64_t heads = a.batch * a.heads;
    const kern::Isa isa = ctx.isa;
    const double work_ns = 0.02 * static_cast<double>(heads * a.q_len) * static_cast<double>(a.k_len) *
                           static_cast<double>(a.d + dv) * 2.0;
    // With enough heads for every thread, an item is one (b, h): K^T and V are packed once for all its query
    // blocks. Otherwise an item is one query block and each packs its own (few heads, long sequences).
    const int threads = ctx.pool ? ctx.pool->threads() : 1;
    const bool per_head = heads >= 2 * threads || qblocks == 1;
    const int64_t items = per_head ? heads : heads * qblocks;
    parallel_for(ctx.pool, items, work_ns, [&](int64_t item) {
      const int64_t bh = per_head ? item : item / qblocks;
      const int64_t b = bh / a.heads, h = bh % a.heads;
      const int64_t first = per_head ? 0 : item % qblocks;
      const int64_t last = per_head ? qblocks : first + 1;
      const int64_t n = a.k_len;
      const float* k = a.k + b * a.k_sb + h * a.k_sh;
      const float* v = a.v + b * a.v_sb + h * a.v_sh;
      const auto kt = kern::pack_b_f32(isa, a.d, n, {k, 1, a.k_sr});
      const auto vp = kern::pack_b_f32(isa, n, dv, {v, a.v_sr, 1});
      // One scratch block per thread, kept between calls (no allocation per item once grown).
      thread_local std::vector<float> scores;
      const size_t need = static_cast<size_t>(kRows * std::max<int64_t>(n, 1));
      if (scores.size() < need) scores.resize(need);
      float* s = scores.data();
      for (int64_t blk = first; blk < last; ++blk) {
        const int64_t i0 = blk * kRows;
        const int64_t rows = std::min(kRows, a.q_len - i0);
        const float* q = a.q + b * a.q_sb + h * a.q_sh + i0 * a.q_sr;
        float* out = a.out + b * a.o_sb + h * a.o_sh + i0 * a.o_sr;
        kern::gemm_f32_packed(isa, kExact, rows, {q, a.q_sr, 1}, *kt, s, n, nullptr);
        kern::ScoreSoftmax sm{a.scale, a.scale_div, nullptr, a.m_si, a.m_sj};
        if (a.mask) sm.mask = a.mask + b * a.m_sb + h * a.m_sh + i0 * a.m_si;
        kern::score_softmax_rows(isa, kExact, s, rows, n, sm);
        kern::gemm_f32_packed(isa, kExact, rows, {s, n, 1}, *vp, out, a.o_sr, nullptr);
      }
    });
  }

  float scale_;
  bool scale_div_;
  int64_t ql_, kl_, vl_, ol_;
};

}  // namespace

std::unique_ptr<Kernel> make_fused_attention(const NodeInfo& info) {
  auto layout = [&](const char* name) {
    const int64_t l = info.get_int(name, 0);
    if (l != 0 && l != 1)
      info.fail(ErrorKind::InvalidModel, std::string(name) + " must be 0 or 1, got " + std::to_string(l));
    return l;
  };
  const int64_t div = info.get_int("scale_div", 0);
  if (div != 0 && div != 1) info.fail(ErrorKind::InvalidModel, "scale_div must be 0 or 1, got " + std::to_string(div));
  return std::make_unique<FusedAttention>(info.get_float("scale", 1.0f), div == 1, layout("q_layout"),
                                          layout("k_layout"), layout("v_layout"), layout("out_layout"));
}

}  // namespace onemodel::rt
