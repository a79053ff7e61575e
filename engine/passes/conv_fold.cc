#include "passes/conv_fold.h"

#include <string>

namespace onemodel::passes {

std::optional<FoldableConv> foldable_conv(const PassGraph& g, int node) {
  const ir::Node& conv = g.graph().nodes[static_cast<size_t>(node)];
  if (conv.op_type != "Conv" || !conv.domain.empty() || conv.inputs.size() < 2 || conv.outputs.size() != 1)
    return std::nullopt;
  const Tensor* w = g.constant(conv.inputs[1]);
  if (!w || w->dtype() != DType::F32 || !w->is_contiguous() || w->shape().rank() < 3) return std::nullopt;
  FoldableConv f{w, nullptr, w->shape()[0]};
  if (conv.inputs.size() > 2 && conv.inputs[2] >= 0) {
    f.b = g.constant(conv.inputs[2]);
    if (!f.b || f.b->dtype() != DType::F32 || !f.b->is_contiguous() || f.b->shape().rank() != 1 ||
        f.b->shape()[0] != f.m)
      return std::nullopt;
  }
  return f;
}

void refold_conv(PassGraph& g, int node, const FoldableConv& conv, std::span<const double> scale,
                 std::span<const double> bias, const char* what, int out) {
  const int64_t m = conv.m, per_channel = conv.w->numel() / m;
  Tensor w2 = Tensor::zeros(DType::F32, conv.w->shape());
  Tensor b2 = Tensor::zeros(DType::F32, Shape{m});
  auto wd = conv.w->data<float>();
  auto w2d = w2.mutable_data<float>();
  auto b2d = b2.mutable_data<float>();
  for (int64_t k = 0; k < m; ++k) {
    const double s = scale[static_cast<size_t>(k)];
    for (int64_t i = 0; i < per_channel; ++i)
      w2d[k * per_channel + i] = static_cast<float>(static_cast<double>(wd[k * per_channel + i]) * s);
    b2d[k] = static_cast<float>(bias[static_cast<size_t>(k)]);
  }
  const std::string name = g.node(node).name;
  const std::string base = (name.empty() ? std::string("conv") : name) + "/" + what;
  const int w_id = g.add_constant(base + "_weight", std::move(w2));
  const int b_id = g.add_constant(base + "_bias", std::move(b2));
  ir::Node& fused = g.node(node);
  fused.inputs.resize(3);
  fused.inputs[1] = w_id;
  fused.inputs[2] = b_id;
  fused.outputs[0] = out;
}

}  // namespace onemodel::passes
