// The `conv-batchnorm-fold` pass (graph-passes.md; fast mode only): Conv -> BatchNormalization with constant
// statistics becomes one Conv with W' = W·s per output channel and b' = (b - mean)·s + beta, s = scale /
// sqrt(var + epsilon), computed in double precision and rounded once. The scale now applies before the sum,
// so the last bits differ from the two-node graph; the batch normalisation pass over memory disappears.
#include <cmath>
#include <vector>

#include "passes/conv_fold.h"
#include "passes/passes.h"

namespace onemodel::passes {

const Tensor* channel_vector(const PassGraph& g, int v, int64_t n) {
  const Tensor* t = g.constant(v);
  if (!t || t->dtype() != DType::F32 || !t->is_contiguous() || t->shape().rank() != 1 || t->shape()[0] != n)
    return nullptr;
  return t;
}

bool foldable_batchnorm(const PassGraph& g, const ir::Node& bn) {
  if (bn.inputs.size() != 5 || bn.outputs.empty() || bn.outputs[0] < 0) return false;
  if (bn.opset < 9) {
    // Before opset 9, spatial = 0 meant statistics per element, not per channel.
    if (const ir::Attribute* s = bn.find_attribute("spatial"); s && s->i != 1) return false;
  }
  if (const ir::Attribute* t = bn.find_attribute("training_mode"); t && t->i != 0) return false;
  for (size_t o = 1; o < bn.outputs.size(); ++o)
    if (bn.outputs[o] >= 0 && g.uses(bn.outputs[o]) > 0) return false;
  return true;
}

int fold_conv_batchnorm(PassGraph& g) {
  int rewrites = 0;
  for (int c = 0; c < static_cast<int>(g.num_nodes()); ++c) {
    if (g.removed(c)) continue;
    const auto conv = foldable_conv(g, c);
    if (!conv) continue;
    const int64_t m = conv->m;
    const int bn_index = g.sole_reader(g.node(c).outputs[0], "BatchNormalization");
    if (bn_index < 0) continue;
    const ir::Node& bn = g.node(bn_index);
    if (bn.inputs.empty() || bn.inputs[0] != g.node(c).outputs[0] || !foldable_batchnorm(g, bn)) continue;
    const Tensor* scale = channel_vector(g, bn.inputs[1], m);
    const Tensor* beta = channel_vector(g, bn.inputs[2], m);
    const Tensor* mean = channel_vector(g, bn.inputs[3], m);
    const Tensor* var = channel_vector(g, bn.inputs[4], m);
    if (!scale || !beta || !mean || !var) continue;
    const ir::Attribute* eps_attr = bn.find_attribute("epsilon");
    const double eps = eps_attr ? static_cast<double>(eps_attr->f) : 1e-5;
    std::vector<double> s(static_cast<size_t>(m)), b(static_cast<size_t>(m));
    for (int64_t k = 0; k < m; ++k) {
      const auto i = static_cast<size_t>(k);
      s[i] = static_cast<double>(scale->data<float>()[i]) / std::sqrt(static_cast<double>(var->data<float>()[i]) + eps);
      const double bias = conv->b ? static_cast<double>(conv->b->data<float>()[i]) : 0.0;
      b[i] = (bias - static_cast<double>(mean->data<float>()[i])) * s[i] + static_cast<double>(beta->data<float>()[i]);
    }
    refold_conv(g, c, *conv, s, b, "bn_folded", bn.outputs[0]);
    g.remove(bn_index);
    ++rewrites;
  }
  return rewrites;
}

}  // namespace onemodel::passes
