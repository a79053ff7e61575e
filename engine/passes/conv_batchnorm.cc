// The `conv-batchnorm-fold` pass (graph-passes.md; fast mode only): Conv -> BatchNormalization with constant
// statistics becomes one Conv with W' = W·s per output channel and b' = (b - mean)·s + beta, s = scale /
// sqrt(var + epsilon), computed in double precision and rounded once. The scale now applies before the sum,
// so the last bits differ from the two-node graph; the batch normalisation pass over memory disappears.
#include <cmath>
#include <vector>

#include "passes/passes.h"

namespace onemodel::passes {

namespace {

// A float32 constant vector of n elements, or null.
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

}  // namespace

int fold_conv_batchnorm(PassGraph& g) {
  int rewrites = 0;
  for (int c = 0; c < static_cast<int>(g.num_nodes()); ++c) {
    if (g.removed(c)) continue;
    const ir::Node& conv = g.node(c);
    if (conv.op_type != "Conv" || !conv.domain.empty() || conv.inputs.size() < 2 || conv.outputs.size() != 1) continue;
    const Tensor* w = g.constant(conv.inputs[1]);
    if (!w || w->dtype() != DType::F32 || !w->is_contiguous() || w->shape().rank() < 3) continue;
    const int64_t m = w->shape()[0];
    const bool has_bias = conv.inputs.size() > 2 && conv.inputs[2] >= 0;
    const Tensor* b = has_bias ? channel_vector(g, conv.inputs[2], m) : nullptr;
    if (has_bias && !b) continue;
    const int y = conv.outputs[0];
    const int bn_index = g.sole_reader(y, "BatchNormalization");
    if (bn_index < 0) continue;
    const ir::Node& bn = g.node(bn_index);
    if (bn.inputs.empty() || bn.inputs[0] != y || !foldable_batchnorm(g, bn)) continue;
    const Tensor* scale = channel_vector(g, bn.inputs[1], m);
    const Tensor* beta = channel_vector(g, bn.inputs[2], m);
    const Tensor* mean = channel_vector(g, bn.inputs[3], m);
    const Tensor* var = channel_vector(g, bn.inputs[4], m);
    if (!scale || !beta || !mean || !var) continue;
    const ir::Attribute* eps_attr = bn.find_attribute("epsilon");
    const double eps = eps_attr ? static_cast<double>(eps_attr->f) : 1e-5;

    const int64_t per_channel = w->numel() / m;
    Tensor w2 = Tensor::zeros(DType::F32, w->shape());
    Tensor b2 = Tensor::zeros(DType::F32, Shape{m});
    auto wd = w->data<float>();
    auto w2d = w2.mutable_data<float>();
    auto b2d = b2.mutable_data<float>();
    for (int64_t k = 0; k < m; ++k) {
      const double s =
          static_cast<double>(scale->data<float>()[k]) / std::sqrt(static_cast<double>(var->data<float>()[k]) + eps);
      for (int64_t i = 0; i < per_channel; ++i)
        w2d[k * per_channel + i] = static_cast<float>(static_cast<double>(wd[k * per_channel + i]) * s);
      const double bias = b ? static_cast<double>(b->data<float>()[k]) : 0.0;
      b2d[k] = static_cast<float>((bias - static_cast<double>(mean->data<float>()[k])) * s +
                                  static_cast<double>(beta->data<float>()[k]));
    }
    const std::string base = conv.name.empty() ? "conv" : conv.name;
    const int w_id = g.add_constant(base + "/bn_folded_weight", std::move(w2));
    const int b_id = g.add_constant(base + "/bn_folded_bias", std::move(b2));
    const int out = bn.outputs[0];
    ir::Node& fused = g.node(c);
    fused.inputs.resize(3);
    fused.inputs[1] = w_id;
    fused.inputs[2] = b_id;
    fused.outputs[0] = out;
    g.remove(bn_index);
    ++rewrites;
  }
  return rewrites;
}

}  // namespace onemodel::passes
