// The `gelu` pass (graph-passes.md; fast mode only): the erf-form GELU as exporters write it becomes one Gelu
// node (opset 20, erf form), one pass over memory instead of five. Two shapes are matched, both ending in a Mul:
//   torch's F.gelu (opset 13-17):   Mul(Mul(x, Add(Erf(Div(x, √2)), 1)), 0.5)
//   the BERT-style expression:      Mul(Mul(x, 0.5), Add(1, Erf(Div(x, √2))))
// with Mul(x, 1/√2) accepted for the Div and either operand order of Add and Mul. Every intermediate must be
// read by the pattern only. The constants are float32, or float16 / bfloat16 holding the rounding of √2 or 1/√2
// (a half-precision export, docs/fp16.md section 4): then x is of that type and the half-precision adapter widens
// it around the float32 Gelu kernel, so the five nodes round once instead of five times and compute with √2 itself.
#include <cmath>

#include "base/fp16.h"
#include "passes/passes.h"

namespace onemodel::passes {

namespace {

bool near(float v, double want) { return std::fabs(static_cast<double>(v) - want) <= 1e-6 * std::fabs(want); }

// For a two-input node, the input that is not `known`, or -1.
int other_input(const ir::Node& n, int known) {
  if (n.inputs.size() != 2) return -1;
  if (n.inputs[0] == known) return n.inputs[1];
  if (n.inputs[1] == known) return n.inputs[0];
  return -1;
}

bool is_scalar(const PassGraph& g, int v, double want) {
  const auto c = g.scalar_float(v);
  if (!c) return false;
  const float w = static_cast<float>(want);
  if (want == 0.5 || want == 1.0) return c->first == w;
  if (c->second == DType::F16) return c->first == half_to_float(float_to_half(w));
  if (c->second == DType::BF16) return c->first == bf16_to_float(float_to_bf16(w));
  return near(c->first, want);
}

}  // namespace

int fuse_gelu(PassGraph& g) {
  int rewrites = 0;
  for (int e = 0; e < static_cast<int>(g.num_nodes()); ++e) {
    const ir::Node& erf = g.node(e);
    if (g.removed(e) || erf.op_type != "Erf" || !erf.domain.empty() || erf.inputs.size() != 1 ||
        erf.outputs.size() != 1)
      continue;
    // x / √2 or x * (1/√2)
    const int scaled = erf.inputs[0];
    int div = g.producer_of_type(scaled, "Div");
    int x = -1;
    if (div >= 0 && g.node(div).inputs.size() == 2 && is_scalar(g, g.node(div).inputs[1], std::sqrt(2.0))) {
      x = g.node(div).inputs[0];
    } else if ((div = g.producer_of_type(scaled, "Mul")) >= 0) {
      const ir::Node& m = g.node(div);
      if (m.inputs.size() == 2 && is_scalar(g, m.inputs[1], std::sqrt(0.5)))
        x = m.inputs[0];
      else if (m.inputs.size() == 2 && is_scalar(g, m.inputs[0], std::sqrt(0.5)))
        x = m.inputs[1];
    }
    if (x < 0 || !g.only_reader(scaled, e)) continue;
    // 1 + erf
    const int add = g.sole_reader(erf.outputs[0], "Add");
    if (add < 0 || !is_scalar(g, other_input(g.node(add), erf.outputs[0]), 1.0)) continue;
    const int one_plus = g.node(add).outputs[0];
    const int m1 = g.sole_reader(one_plus, "Mul");
    if (m1 < 0) continue;
    const int partner = other_input(g.node(m1), one_plus);
    int last = -1, half_mul = -1;
    if (partner == x) {
      // torch: Mul(Mul(x, 1 + erf), 0.5)
      const int m2 = g.sole_reader(g.node(m1).outputs[0], "Mul");
      if (m2 >= 0 && is_scalar(g, other_input(g.node(m2), g.node(m1).outputs[0]), 0.5)) last = m2;
    } else if ((half_mul = g.producer_of_type(partner, "Mul")) >= 0 && g.only_reader(partner, m1) &&
               other_input(g.node(half_mul), x) >= 0 && is_scalar(g, other_input(g.node(half_mul), x), 0.5)) {
      // BERT: Mul(Mul(x, 0.5), 1 + erf)
      last = m1;
    }
    if (last < 0) continue;
    ir::Node& fused = g.node(last);
    fused.op_type = "Gelu";
    fused.opset = 20;
    fused.attributes.clear();
    fused.inputs = {x};
    for (int n : {div, e, add, m1, half_mul})
      if (n >= 0 && n != last) g.remove(n);
    ++rewrites;
  }
  return rewrites;
}

}  // namespace onemodel::passes
