// What the passes that fold constants into a Conv's weights share (conv-batchnorm-fold, conv-affine-fold;
// graph-passes.md sections 3 and 3a): the Conv they can rewrite, and the rewrite; and the batch normalisations
// conv-batchnorm-fold and batchnorm-affine (section 3b) take.
#pragma once
#include <cstdint>
#include <optional>
#include <span>

#include "passes/pass_graph.h"

namespace onemodel::passes {

// A default-domain Conv with one output, a constant float32 weight of rank >= 3 (M = W.shape[0] output
// channels) and no bias or a constant float32 vector of M elements.
struct FoldableConv {
  const Tensor* w = nullptr;
  const Tensor* b = nullptr;  // null without a bias
  int64_t m = 0;
};
std::optional<FoldableConv> foldable_conv(const PassGraph& g, int node);

// Gives Conv `node` the weight W·scale[k] per output channel k and the bias bias[k] (both computed by the
// caller in double, rounded to float32 here once), as new constants named `<conv name>/<what>_weight` and
// `_bias`, and makes it produce value `out`.
void refold_conv(PassGraph& g, int node, const FoldableConv& conv, std::span<const double> scale,
                 std::span<const double> bias, const char* what, int out);

// A float32 constant vector of n elements, or null.
const Tensor* channel_vector(const PassGraph& g, int v, int64_t n);
// A BatchNormalization node of inference form: five inputs, per-channel statistics (spatial = 1 before opset
// 9), not training_mode, no output other than the first read.
bool foldable_batchnorm(const PassGraph& g, const ir::Node& bn);

}  // namespace onemodel::passes
