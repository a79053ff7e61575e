// The `attention` pass (graph-passes.md section 5; both modes: the fused kernel keeps exact bits):
//   MatMul(Q, Kt) -> [Mul or Div by a constant] -> [Add mask] -> Softmax(last axis) -> MatMul(P, V)
// becomes one FusedAttention node (ops/attention.cc) on the fused kernel, which never materialises the score
// and probability tensors (for BERT-base at sequence 512, two 12 MiB tensors per layer). The head-split
// transposes are absorbed when only the pattern reads them: Q and V as Transpose(x, [0, 2, 1, 3]) of
// [b, s, h, d]; K^T as Transpose(k, [0, 2, 3, 1]) of [b, s, h, d], or Transpose(k, [0, 1, 3, 2]) of
// [b, h, s, d] (itself possibly Transpose([0, 2, 1, 3]) of [b, s, h, d]); and the head-merge
// Transpose(ctx, [0, 2, 1, 3]) after. A K^T not made by one of these transposes is left alone (the kernel reads
// K row-wise). Every intermediate must be read by the pattern only.
#include <cmath>

#include "passes/passes.h"

namespace onemodel::passes {

namespace {

std::vector<int64_t> perm_of(const ir::Node& n) {
  const ir::Attribute* a = n.find_attribute("perm");
  return a && a->type == ir::AttrType::Ints ? a->ints : std::vector<int64_t>{};
}

bool is_perm(const ir::Node& n, std::initializer_list<int64_t> want) {
  return perm_of(n) == std::vector<int64_t>(want);
}

// v = Transpose(x, perm) read only by `reader`: the transpose's index, else -1.
int absorbed_transpose(PassGraph& g, int v, int reader, std::initializer_list<int64_t> perm) {
  const int t = g.producer_of_type(v, "Transpose");
  if (t < 0 || !is_perm(g.node(t), perm) || !g.only_reader(v, reader) || g.node(t).inputs.size() != 1) return -1;
  return t;
}

// Softmax over the last axis: axis -1 at any opset, or 3 when the pattern proves rank 4.
bool last_axis_softmax(const ir::Node& sm, bool rank4) {
  const ir::Attribute* a = sm.find_attribute("axis");
  const int64_t axis = a ? a->i : (sm.opset >= 13 ? -1 : 1);
  return axis == -1 || (rank4 && axis == 3);
}

// Scores = [Mul or Div by a one-element float32, float16 or bfloat16 constant](MatMul(Q, Kt)), each read only by
// the next step.
struct ScoreChain {
  int qk = -1;
  int scale_node = -1;
  float scale = 1.0f;
  bool divides = false;  // the scores are divided by scale (Div), else multiplied (Mul)
};

ScoreChain match_scores(PassGraph& g, int v, int reader) {
  ScoreChain c;
  if (!g.only_reader(v, reader)) return c;
  if (const int mm = g.producer_of_type(v, "MatMul"); mm >= 0) {
    if (g.node(mm).inputs.size() == 2) c.qk = mm;
    return c;
  }
  for (const char* op : {"Mul", "Div"}) {
    const int sc = g.producer_of_type(v, op);
    if (sc < 0 || g.node(sc).inputs.size() != 2) continue;
    const ir::Node& n = g.node(sc);
    const bool mul = op[0] == 'M';
    for (int side = 0; side < (mul ? 2 : 1); ++side) {
      const auto k = g.scalar_float(n.inputs[static_cast<size_t>(1 - side)]);
      const int x = n.inputs[static_cast<size_t>(side)];
      const int mm = g.producer_of_type(x, "MatMul");
      if (!k || mm < 0 || !g.only_reader(x, sc) || g.node(mm).inputs.size() != 2) continue;
      c.qk = mm;
      c.scale_node = sc;
      c.scale = k->first;
      c.divides = !mul;
      return c;
    }
  }
  return c;
}

}  // namespace

int fuse_attention(PassGraph& g) {
  int rewrites = 0;
  for (int s = 0; s < static_cast<int>(g.num_nodes()); ++s) {
    if (g.removed(s)) continue;
    const ir::Node& sm = g.node(s);
    if (sm.op_type != "Softmax" || !sm.domain.empty() || sm.inputs.size() != 1 || sm.outputs.size() != 1) continue;
    std::vector<int> pattern{s};
    // Softmax -> MatMul(P, V)
    const int pv = g.sole_reader(sm.outputs[0], "MatMul");
    if (pv < 0 || g.node(pv).inputs.size() != 2 || g.node(pv).inputs[0] != sm.outputs[0]) continue;
    pattern.push_back(pv);
    // [Add mask] <- [Mul or Div by a constant] <- MatMul(Q, Kt)
    int scores = sm.inputs[0];
    int mask = -1;
    ScoreChain chain;
    if (const int add = g.producer_of_type(scores, "Add"); add >= 0 && g.only_reader(scores, s)) {
      const ir::Node& a = g.node(add);
      if (a.inputs.size() != 2) continue;
      for (int side = 0; side < 2 && chain.qk < 0; ++side) {
        chain = match_scores(g, a.inputs[static_cast<size_t>(side)], add);
        if (chain.qk >= 0) mask = a.inputs[static_cast<size_t>(1 - side)];
      }
      if (chain.qk < 0) continue;
      pattern.push_back(add);
    } else {
      chain = match_scores(g, scores, s);
      if (chain.qk < 0) continue;
    }
    // The scale constant shows the scores' type: float32, or float16 / bfloat16 (a half-precision export: the
    // adapter widens Q, K, V and the mask around the float32 kernel and rounds the context once, where the
    // nodes as written round the scores, scaled scores, masked scores and probabilities to 11 or 8 bits each;
    // docs/fp16.md section 4). Without one, leave the graph alone.
    if (chain.scale_node < 0) continue;
    pattern.push_back(chain.scale_node);
    const int qk = chain.qk;
    const float scale = chain.scale;
    const int64_t scale_div = chain.divides ? 1 : 0;
    pattern.push_back(qk);

    int q = g.node(qk).inputs[0], kt = g.node(qk).inputs[1], v = g.node(pv).inputs[1];
    int64_t q_layout = 0, k_layout = 0, v_layout = 0, out_layout = 0;
    bool rank4 = false;
    // K: K^T must come from a transpose the kernel can read row-wise.
    int k = -1;
    if (int t = absorbed_transpose(g, kt, qk, {0, 2, 3, 1}); t >= 0) {
      k = g.node(t).inputs[0];
      k_layout = 1;
      rank4 = true;
      pattern.push_back(t);
    } else if ((t = absorbed_transpose(g, kt, qk, {0, 1, 3, 2})) >= 0) {
      k = g.node(t).inputs[0];
      rank4 = true;
      pattern.push_back(t);
      if (int t2 = absorbed_transpose(g, k, t, {0, 2, 1, 3}); t2 >= 0) {
        k = g.node(t2).inputs[0];
        k_layout = 1;
        pattern.push_back(t2);
      }
    }
    if (k < 0) continue;
    if (int t = absorbed_transpose(g, q, qk, {0, 2, 1, 3}); t >= 0) {
      q = g.node(t).inputs[0];
      q_layout = 1;
      pattern.push_back(t);
    }
    if (int t = absorbed_transpose(g, v, pv, {0, 2, 1, 3}); t >= 0) {
      v = g.node(t).inputs[0];
      v_layout = 1;
      pattern.push_back(t);
    }
    if (!last_axis_softmax(sm, rank4)) continue;
    // The head-merge transpose after.
    int last = pv;
    if (int t = g.sole_reader(g.node(pv).outputs[0], "Transpose"); t >= 0 && is_perm(g.node(t), {0, 2, 1, 3})) {
      last = t;
      out_layout = 1;
      pattern.push_back(t);
    }

    ir::Node& fused = g.node(last);
    const int out = fused.outputs[0];
    fused.op_type = "FusedAttention";
    fused.domain = "onemodel";
    fused.opset = 1;
    fused.inputs = {q, k, v};
    if (mask >= 0) fused.inputs.push_back(mask);
    fused.outputs = {out};
    fused.attributes = {float_attribute("scale", scale),     int_attribute("scale_div", scale_div),
                        int_attribute("q_layout", q_layout), int_attribute("k_layout", k_layout),
                        int_attribute("v_layout", v_layout), int_attribute("out_layout", out_layout)};
    for (int n : pattern)
      if (n != last) g.remove(n);
    ++rewrites;
  }
  return rewrites;
}

}  // namespace onemodel::passes
