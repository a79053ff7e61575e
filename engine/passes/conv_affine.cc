// The `conv-affine-fold` pass (graph-passes.md section 3a; fast mode only): a Conv whose output goes through a
// chain of Mul, Add, Sub and Div by constants that are one value or one value per output channel becomes one
// Conv with W' = W·s per output channel and b' = b·s + t, where y·s + t is the chain. PP-OCRv4's det and rec
// models (PPLCNetV3's "learnable affine blocks") follow 28 convolutions each with Mul and Add by one-element
// constants; unfolded, that chain kept their epilogues off the register path (kernels-gemm.md section 7), and
// a 16 -> 32 1x1 convolution at 320 x 320 spent as long in it as in its products.
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "passes/conv_fold.h"
#include "passes/passes.h"

namespace onemodel::passes {

namespace {

// A float32 constant that broadcasts against a Conv output of rank `rank` with `m` channels without changing
// its shape: at most `rank` axes (aligned to the right), each of size 1 except the channel axis (1 or m).
// Returns its value per channel (one value repeated when it has a single element), or nothing.
std::optional<std::vector<double>> channel_constant(const PassGraph& g, int v, int64_t rank, int64_t m) {
  const Tensor* t = g.constant(v);
  if (!t || t->dtype() != DType::F32 || !t->is_contiguous() || t->shape().rank() > rank) return std::nullopt;
  const int64_t q = t->shape().rank();
  for (int64_t i = 0; i < q; ++i) {
    const int64_t axis = rank - q + i, d = t->shape()[static_cast<int>(i)];
    if (d != 1 && !(axis == 1 && d == m)) return std::nullopt;
  }
  auto data = t->data<float>();
  std::vector<double> per(static_cast<size_t>(m));
  for (int64_t k = 0; k < m; ++k) per[static_cast<size_t>(k)] = data[data.size() == 1 ? 0 : static_cast<size_t>(k)];
  return per;
}

// One step of the chain read by the Conv's current output `y`: the node (sole reader of y) and what it does to
// every channel, y·scale + shift, or nothing when the reader is not such a step.
struct Step {
  int node = -1;
  std::vector<double> scale, shift;
};

std::optional<Step> next_step(const PassGraph& g, int y, int64_t rank, int64_t m) {
  for (const char* op : {"Mul", "Add", "Sub", "Div"}) {
    const int r = g.sole_reader(y, op);
    if (r < 0) continue;
    const ir::Node& n = g.graph().nodes[static_cast<size_t>(r)];
    if (n.inputs.size() != 2 || n.outputs.size() != 1) return std::nullopt;
    const bool y_first = n.inputs[0] == y;
    // Sub and Div fold only with the Conv's output on the left (c - y and c / y are not affine in y's scale).
    if (!y_first && (n.op_type == "Sub" || n.op_type == "Div")) return std::nullopt;
    const auto c = channel_constant(g, n.inputs[y_first ? 1 : 0], rank, m);
    if (!c) return std::nullopt;
    Step s{r, std::vector<double>(static_cast<size_t>(m), 1.0), std::vector<double>(static_cast<size_t>(m), 0.0)};
    for (size_t k = 0; k < static_cast<size_t>(m); ++k) {
      const double v = (*c)[k];
      if (n.op_type == "Mul") s.scale[k] = v;
      if (n.op_type == "Add") s.shift[k] = v;
      if (n.op_type == "Sub") s.shift[k] = -v;
      if (n.op_type == "Div") {
        if (v == 0.0 || !std::isfinite(1.0 / v)) return std::nullopt;  // keep division by zero as written
        s.scale[k] = 1.0 / v;
      }
    }
    return s;
  }
  return std::nullopt;
}

}  // namespace

int fold_conv_affine(PassGraph& g) {
  int rewrites = 0;
  for (int c = 0; c < static_cast<int>(g.num_nodes()); ++c) {
    if (g.removed(c)) continue;
    const auto conv = foldable_conv(g, c);
    if (!conv) continue;
    const int64_t m = conv->m, rank = conv->w->shape().rank();
    // The whole chain as y·scale + shift, in double; each step's output becomes the next one's input.
    std::vector<double> scale(static_cast<size_t>(m), 1.0), shift(static_cast<size_t>(m), 0.0);
    std::vector<int> absorbed;
    int y = g.node(c).outputs[0];
    while (auto s = next_step(g, y, rank, m)) {
      for (size_t k = 0; k < scale.size(); ++k) {
        scale[k] *= s->scale[k];
        shift[k] = shift[k] * s->scale[k] + s->shift[k];
      }
      absorbed.push_back(s->node);
      y = g.node(s->node).outputs[0];
    }
    if (absorbed.empty()) continue;
    std::vector<double> bias(static_cast<size_t>(m));
    bool finite = true;  // an infinite or NaN factor would turn zero weights into NaN; leave such chains alone
    for (size_t k = 0; k < bias.size(); ++k) {
      bias[k] = (conv->b ? static_cast<double>(conv->b->data<float>()[k]) : 0.0) * scale[k] + shift[k];
      finite = finite && std::isfinite(scale[k]) && std::isfinite(bias[k]);
    }
    if (!finite) continue;
    refold_conv(g, c, *conv, scale, bias, "affine_folded", y);
    for (int n : absorbed) g.remove(n);
    ++rewrites;
  }
  return rewrites;
}

}  // namespace onemodel::passes
