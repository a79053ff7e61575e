// Attention (opsets 23 and 24, ops-newer.md section 9), float32. Per batch entry b and query head h (key/value
// head h / (q_num_heads / kv_num_heads) under grouped-query attention):
//   K, V = concat(past, new) along the sequence (also the present_key / present_value outputs)
//   s    = sqrt(scale) as a float (scale defaults to 1 / sqrt(head size))
//   S    = (Q * s) (K * s)^T                     each factor rounded, then the matrix product (kernels/gemm.h)
//   S    = softcap * tanh(S / softcap)           when softcap > 0 (before any mask)
//   S    = S + bias, bias = ((+0 + mask) + causal) + padding      mask: the float mask, or 0 / -inf for a bool
//          mask (true takes part); positions past a short mask's last column, later keys under is_causal and
//          keys at or past nonpad_kv_seqlen[b] (opset 24) add -inf
//   Y    = softmax_rows(S) V                     (kernels/softmax.h, then the matrix product)
// Exact mode uses the exact matrix product and softmax, so it is exact; a row masked everywhere is NaN, as the
// softmax of -inf everywhere is. Refused (Unsupported): the qk_matmul_output output, softmax_precision other
// than float, other element types.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "kernels/exact_math.h"
#include "kernels/gemm.h"
#include "kernels/softmax.h"
#include "ops/elementwise_common.h"
#include "ops/ops.h"

namespace onemodel::rt {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

struct AttnGeom {
  int64_t b = 0, hq = 0, hkv = 0, sq = 0, skv = 0, past = 0, d = 0, dv = 0;
  bool three_d = false, has_past = false;
  int64_t total() const { return past + skv; }
};

// Element offset of (b, head, row, x) in a [B, H, S, D] tensor, or in its 3-D form [B, S, H * D].
int64_t at(bool three_d, int64_t b, int64_t h, int64_t row, int64_t x, int64_t heads, int64_t len, int64_t dim) {
  return three_d ? ((b * len + row) * heads + h) * dim + x : ((b * heads + h) * len + row) * dim + x;
}

class AttentionKernel final : public Kernel {
 public:
  AttentionKernel(bool has_scale, float scale, bool causal, int64_t q_heads, int64_t kv_heads, float softcap)
      : Kernel(KernelFlags{.exact = true}),
        has_scale_(has_scale),
        scale_(scale),
        causal_(causal),
        q_heads_(q_heads),
        kv_heads_(kv_heads),
        softcap_(softcap) {}

  void infer(InferContext& ctx) const override {
    ew::require_inputs(ctx, 3);
    for (size_t i : {0, 1, 2, 4, 5})
      if (ctx.has_input(i) && ctx.input(i).dtype != DType::F32)
        ctx.fail(ErrorKind::Unsupported, "element type " + type_str(ctx.input(i).dtype) + " is not supported");
    if (ctx.has_input(3) && ctx.input(3).dtype != DType::F32 && ctx.input(3).dtype != DType::Bool)
      ctx.fail(ErrorKind::InvalidModel, "attn_mask must be float32 (the input type) or bool");
    if (ctx.has_input(6) && ctx.input(6).dtype != DType::I64)
      ctx.fail(ErrorKind::InvalidModel, "nonpad_kv_seqlen must be int64");
    auto shape = [&](size_t i) { return ctx.has_input(i) ? &ctx.input(i).shape : nullptr; };
    const AttnGeom g = geometry(ctx.info, ctx.input(0).shape, ctx.input(1).shape, ctx.input(2).shape, shape(3),
                                shape(4), shape(5), shape(6), ErrorKind::InvalidModel);
    ctx.set_output(0, DType::F32, g.three_d ? Shape{g.b, g.sq, g.hq * g.dv} : Shape{g.b, g.hq, g.sq, g.dv});
    if (ctx.outputs.size() > 1) ctx.set_output(1, DType::F32, Shape{g.b, g.hkv, g.total(), g.d});
    if (ctx.outputs.size() > 2) ctx.set_output(2, DType::F32, Shape{g.b, g.hkv, g.total(), g.dv});
  }

  void run(RunContext& ctx) const override {
    auto shape = [&](size_t i) { return ctx.has_input(i) ? &ctx.input(i).shape() : nullptr; };
    const AttnGeom g = geometry(ctx.info, ctx.input(0).shape(), ctx.input(1).shape(), ctx.input(2).shape(), shape(3),
                                shape(4), shape(5), shape(6), ErrorKind::InvalidInput);
    const int64_t t = g.total();
    // The keys and values with their past, [B, Hkv, T, D]: the present outputs when asked for, else scratch.
    Tensor kt = ctx.outputs.size() > 1 && !ctx.output(1).empty() ? ctx.output(1)
                                                                 : ctx.workspace(DType::F32, Shape{g.b, g.hkv, t, g.d});
    Tensor vt = ctx.outputs.size() > 2 && !ctx.output(2).empty()
                    ? ctx.output(2)
                    : ctx.workspace(DType::F32, Shape{g.b, g.hkv, t, g.dv});
    if (kt.shape() != Shape{g.b, g.hkv, t, g.d} || vt.shape() != Shape{g.b, g.hkv, t, g.dv} ||
        ctx.output(0).numel() != g.b * g.hq * g.sq * g.dv)
      ctx.fail(ErrorKind::InvalidInput, "inputs do not match the planned outputs");
    concat_past(ctx, 1, 4, g, g.d, kt.mutable_data<float>().data());
    concat_past(ctx, 2, 5, g, g.dv, vt.mutable_data<float>().data());

    const float s = std::sqrt(has_scale_ ? scale_ : static_cast<float>(1.0 / std::sqrt(static_cast<double>(g.d))));
    const float* q = ctx.input(0).data<float>().data();
    const float* kp = kt.data<float>().data();
    const float* vp = vt.data<float>().data();
    float* y = ctx.output(0).mutable_data<float>().data();
    Tensor qs_t = ctx.workspace(DType::F32, Shape{std::max<int64_t>(g.sq * g.d, 1)});
    Tensor ks_t = ctx.workspace(DType::F32, Shape{std::max<int64_t>(t * g.d, 1)});
    Tensor sc_t = ctx.workspace(DType::F32, Shape{std::max<int64_t>(g.sq * t, 1)});
    float* qs = qs_t.mutable_data<float>().data();
    float* ks = ks_t.mutable_data<float>().data();
    float* sc = sc_t.mutable_data<float>().data();
    const int64_t group = g.hq / g.hkv;
    for (int64_t b = 0; b < g.b; ++b)
      for (int64_t h = 0; h < g.hq; ++h) {
        const int64_t kh = h / group;
        for (int64_t i = 0; i < g.sq; ++i)
          for (int64_t x = 0; x < g.d; ++x) qs[i * g.d + x] = q[at(g.three_d, b, h, i, x, g.hq, g.sq, g.d)] * s;
        const float* kr = kp + (b * g.hkv + kh) * t * g.d;
        for (int64_t j = 0; j < t * g.d; ++j) ks[j] = kr[j] * s;
        kern::gemm_f32(ctx.isa, ctx.exact, g.sq, t, g.d, {qs, g.d, 1}, {ks, 1, g.d}, sc, t, ctx.pool);
        for (int64_t i = 0; i < g.sq; ++i)
          for (int64_t j = 0; j < t; ++j) {
            float& v = sc[i * t + j];
            if (softcap_ > 0.0f) v = kern::exact_tanh(v / softcap_) * softcap_;
            v = v + bias(ctx, g, b, h, i, j);
          }
        kern::softmax_rows(ctx.isa, ctx.exact, sc, sc, g.sq, t);
        // Y rows of this head: [Sq, Dv] at its layout's strides (row stride Hq * Dv in the 3-D form).
        float* yh = y + at(g.three_d, b, h, 0, 0, g.hq, g.sq, g.dv);
        kern::gemm_f32(ctx.isa, ctx.exact, g.sq, g.dv, t, {sc, t, 1}, {vp + (b * g.hkv + kh) * t * g.dv, g.dv, 1}, yh,
                       g.three_d ? g.hq * g.dv : g.dv, ctx.pool);
      }
  }

 private:
  // The added bias of score (b, h, i, j), in the order of the comment at the top.
  float bias(const RunContext& ctx, const AttnGeom& g, int64_t b, int64_t h, int64_t i, int64_t j) const {
    float v = 0.0f;
    if (ctx.has_input(3)) {
      const Tensor& m = ctx.input(3);
      const Shape& ms = m.shape();
      const int r = ms.rank();
      const int64_t cols = ms[r - 1];
      if (j >= cols) {
        v = v + kNegInf;
      } else {
        // Right-aligned broadcast against [B, Hq, Sq, cols].
        const int64_t idx[4] = {b, h, i, j};
        int64_t off = 0, stride = 1;
        for (int k = r - 1; k >= 0; --k) {
          const int64_t e = ms[k];
          off += (e == 1 ? 0 : idx[4 - r + k]) * stride;
          stride *= e;
        }
        if (m.dtype() == DType::Bool)
          v = v + (static_cast<const uint8_t*>(m.raw())[off] ? 0.0f : kNegInf);
        else
          v = v + static_cast<const float*>(m.raw())[off];
      }
    }
    const bool pad = ctx.has_input(6);
    const int64_t valid = pad ? ctx.input(6).data<int64_t>()[static_cast<size_t>(b)] : 0;
    if (causal_) {
      // Under opset 24's external cache (nonpad_kv_seqlen without past_key) the last query sees key valid - 1.
      const int64_t offset = g.has_past || !pad ? g.past : valid - g.sq;
      if (j > i + offset) v = v + kNegInf;
    }
    if (pad) v = v + (j < valid ? 0.0f : kNegInf);
    return v;
  }

  // present = concat(past, new) along the sequence, per (b, kv head): [B, Hkv, T, dim].
  static void concat_past(const RunContext& ctx, size_t cur, size_t past, const AttnGeom& g, int64_t dim, float* out) {
    const float* c = ctx.input(cur).data<float>().data();
    const float* p = ctx.has_input(past) ? ctx.input(past).data<float>().data() : nullptr;
    const int64_t t = g.total();
    for (int64_t b = 0; b < g.b; ++b)
      for (int64_t h = 0; h < g.hkv; ++h) {
        float* o = out + (b * g.hkv + h) * t * dim;
        for (int64_t r = 0; r < g.past; ++r)
          for (int64_t x = 0; x < dim; ++x) o[r * dim + x] = p[((b * g.hkv + h) * g.past + r) * dim + x];
        for (int64_t r = 0; r < g.skv; ++r)
          for (int64_t x = 0; x < dim; ++x) o[(g.past + r) * dim + x] = c[at(g.three_d, b, h, r, x, g.hkv, g.skv, dim)];
      }
  }

  AttnGeom geometry(const NodeInfo& info, const Shape& q, const Shape& k, const Shape& v, const Shape* mask,
                    const Shape* past_k, const Shape* past_v, const Shape* nonpad, ErrorKind kind) const {
    AttnGeom g;
    if (q.rank() != k.rank() || q.rank() != v.rank() || (q.rank() != 3 && q.rank() != 4))
      info.fail(kind, "Q, K and V must all be 3-D or all 4-D, got " + q.to_string() + ", " + k.to_string() + ", " +
                          v.to_string());
    if (q.rank() == 4) {
      g = {q[0], q[1], k[1], q[2], k[2], 0, q[3], v[3], false, false};
      if (v[1] != g.hkv || v[2] != g.skv || k[3] != g.d)
        info.fail(kind, "K " + k.to_string() + " and V " + v.to_string() + " do not match Q " + q.to_string());
    } else {
      if (q_heads_ <= 0 || kv_heads_ <= 0)
        info.fail(ErrorKind::InvalidModel, "3-D inputs need positive q_num_heads and kv_num_heads attributes");
      if (q[2] % q_heads_ != 0 || k[2] % kv_heads_ != 0 || v[2] % kv_heads_ != 0)
        info.fail(kind, "hidden sizes of Q, K, V are not multiples of their head counts");
      g = {q[0], q_heads_, kv_heads_, q[1], k[1], 0, q[2] / q_heads_, v[2] / kv_heads_, true, false};
      if (k[2] / kv_heads_ != g.d || v[1] != g.skv)
        info.fail(kind, "K " + k.to_string() + " and V " + v.to_string() + " do not match Q " + q.to_string());
    }
    if (k[0] != g.b || v[0] != g.b) info.fail(kind, "Q, K and V differ in batch size");
    if (g.hkv <= 0 || g.hq % g.hkv != 0)
      info.fail(kind,
                "q_num_heads " + std::to_string(g.hq) + " is not a multiple of kv_num_heads " + std::to_string(g.hkv));
    if (g.d == 0) info.fail(kind, "the head size is 0");
    if ((past_k == nullptr) != (past_v == nullptr)) info.fail(kind, "past_key and past_value come together");
    if (past_k) {
      const Shape& pk = *past_k;
      if (pk.rank() != 4 || pk[0] != g.b || pk[1] != g.hkv || pk[3] != g.d)
        info.fail(kind, "past_key " + pk.to_string() + " must be [batch, kv_num_heads, past, head size]");
      g.past = pk[2];
      g.has_past = true;
      if (*past_v != Shape{g.b, g.hkv, g.past, g.dv})
        info.fail(kind, "past_value " + past_v->to_string() + " does not match past_key " + pk.to_string());
      if (g.total() > kMaxElements) info.fail(kind, "past and new sequence are too long");
    }
    if (mask) {
      const Shape& m = *mask;
      const int64_t want[4] = {g.b, g.hq, g.sq, g.total()};
      bool ok = m.rank() >= 1 && m.rank() <= 4 && m[m.rank() - 1] <= g.total();
      for (int d = 0; ok && d < m.rank() - 1; ++d) {
        const int64_t e = m[d], w = want[4 - m.rank() + d];
        ok = e == 1 || e == w;
      }
      if (!ok)
        info.fail(kind, "attn_mask " + m.to_string() + " does not broadcast to [" + std::to_string(g.b) + "," +
                            std::to_string(g.hq) + "," + std::to_string(g.sq) + "," + std::to_string(g.total()) + "]");
    }
    if (nonpad) {
      if (info.opset() < 24) info.fail(ErrorKind::InvalidModel, "nonpad_kv_seqlen is an input from opset 24");
      if (*nonpad != Shape{g.b}) info.fail(kind, "nonpad_kv_seqlen must have shape [batch]");
    }
    // Score and scratch sizes stay inside the engine's element limit.
    if (g.sq * g.total() > kMaxElements || g.total() * g.d > kMaxElements)
      info.fail(ErrorKind::Unsupported, "the score matrix of " + std::to_string(g.sq) + " x " +
                                            std::to_string(g.total()) + " is beyond the engine's limits");
    return g;
  }

  bool has_scale_;
  float scale_;
  bool causal_;
  int64_t q_heads_, kv_heads_;
  float softcap_;
};

}  // namespace

std::unique_ptr<Kernel> make_attention(const NodeInfo& info) {
  const auto& outs = info.node().outputs;
  if (outs.size() > 3 && outs[3] != ir::kNoValue)
    info.fail(ErrorKind::Unsupported, "the qk_matmul_output output is not supported");
  const int64_t precision = info.get_int("softmax_precision", 0);
  if (precision != 0 && precision != static_cast<int64_t>(DType::F32))
    info.fail(ErrorKind::Unsupported,
              "softmax_precision " + std::to_string(precision) + " is not supported (float only)");
  const int64_t qh = info.get_int("q_num_heads", 0), kvh = info.get_int("kv_num_heads", 0);
  if (qh < 0 || kvh < 0 || qh > kMaxElements || kvh > kMaxElements)
    info.fail(ErrorKind::InvalidModel, "q_num_heads and kv_num_heads must be in [0, 2^31)");
  const float softcap = info.get_float("softcap", 0.0f);
  if (!(softcap >= 0.0f) || std::isinf(softcap)) info.fail(ErrorKind::InvalidModel, "softcap must be finite and >= 0");
  const float scale = info.get_float("scale", 1.0f);
  if (info.has("scale") && !(std::isfinite(scale) && scale > 0.0f))
    info.fail(ErrorKind::InvalidModel, "scale must be finite and positive");
  return std::make_unique<AttentionKernel>(info.has("scale"), scale, info.get_int("is_causal", 0) != 0, qh, kvh,
                                           softcap);
}

}  // namespace onemodel::rt
