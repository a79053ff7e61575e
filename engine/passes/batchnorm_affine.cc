// The `batchnorm-affine` pass (graph-passes.md section 3b; both modes): an inference BatchNormalization with
// constant float32 statistics becomes Mul by a and Add of b, per-channel constants of shape [C, 1, ...] that
// base/batchnorm_affine.h computes as the kernel does (ops/batchnorm_lrn.cc), so the two nodes give the
// kernel's bits: y = x * a + b, each operation rounded, NaN canonical in exact mode on both sides. What it buys
// is the next pass: fuse-elementwise takes the Mul and Add into the producing convolution's epilogue (with the
// activation after them), so exact mode, where conv-batchnorm-fold does not run, loses a pass over memory per
// batch normalisation (PP-OCR cls, 35 of them: 0.64 -> see graph-passes.md). In fast mode it takes the batch
// normalisations conv-batchnorm-fold left (one whose convolution output has a second reader, say).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "base/batchnorm_affine.h"
#include "passes/conv_fold.h"
#include "passes/passes.h"

namespace onemodel::passes {

namespace {

// The rank of value v when the graph tells it: a declared shape, a constant's, the output of a Conv or
// ConvTranspose whose constant weight has that rank, or of an Add, Sub, Mul or Div (the larger rank of its
// inputs, when both are known; `depth` bounds the walk up); else 0.
int known_rank(PassGraph& g, int v, int depth = 4) {
  if (v < 0) return 0;
  const ir::Value& val = g.graph().values[static_cast<size_t>(v)];
  if (val.type.kind == ValueKind::Tensor && val.type.has_shape) return static_cast<int>(val.type.dims.size());
  if (const Tensor* t = g.constant(v)) return t->shape().rank();
  const int p = g.producer(v);
  if (p < 0 || depth == 0) return 0;
  const ir::Node& n = g.node(p);
  if (!n.domain.empty() || n.inputs.size() < 2) return 0;
  if (n.op_type == "Conv" || n.op_type == "ConvTranspose") {
    const Tensor* w = n.inputs[1] >= 0 ? g.constant(n.inputs[1]) : nullptr;
    return w && w->shape().rank() >= 3 ? w->shape().rank() : 0;
  }
  if (n.op_type != "Add" && n.op_type != "Sub" && n.op_type != "Mul" && n.op_type != "Div") return 0;
  const int a = known_rank(g, n.inputs[0], depth - 1), b = known_rank(g, n.inputs[1], depth - 1);
  return a > 0 && b > 0 ? std::max(a, b) : 0;
}

}  // namespace

int batchnorm_to_affine(PassGraph& g) {
  int rewrites = 0;
  const int count = static_cast<int>(g.num_nodes());
  for (int i = 0; i < count; ++i) {
    if (g.removed(i)) continue;
    ir::Node& bn = g.node(i);
    if (!bn.domain.empty() || bn.op_type != "BatchNormalization" || !foldable_batchnorm(g, bn) || bn.inputs[0] < 0)
      continue;
    const int rank = known_rank(g, bn.inputs[0]);
    if (rank < 2) continue;
    const Tensor* scale = g.constant(bn.inputs[1]);
    if (!scale || scale->shape().rank() != 1) continue;
    const int64_t c = scale->shape()[0];
    const Tensor* beta = channel_vector(g, bn.inputs[2], c);
    const Tensor* mean = channel_vector(g, bn.inputs[3], c);
    const Tensor* var = channel_vector(g, bn.inputs[4], c);
    if (!channel_vector(g, bn.inputs[1], c) || !beta || !mean || !var) continue;
    const ir::Attribute* eps_attr = bn.find_attribute("epsilon");
    const float eps = eps_attr ? eps_attr->f : 1e-5f;  // read as float32, as the kernel reads it
    std::vector<int64_t> dims(static_cast<size_t>(rank - 1), 1);
    dims[0] = c;
    Tensor a = Tensor::zeros(DType::F32, Shape(dims)), b = Tensor::zeros(DType::F32, Shape(dims));
    float* pa = a.mutable_data<float>().data();
    float* pb = b.mutable_data<float>().data();
    for (int64_t k = 0; k < c; ++k) {
      const auto i_k = static_cast<size_t>(k);
      const auto [ak, bk] = batchnorm_affine(scale->data<float>()[i_k], beta->data<float>()[i_k],
                                             mean->data<float>()[i_k], var->data<float>()[i_k], eps);
      pa[k] = ak;
      pb[k] = bk;
    }
    const int va = g.add_constant(bn.name + "/bn_scale", std::move(a));
    const int vb = g.add_constant(bn.name + "/bn_shift", std::move(b));
    const int scaled = g.add_value(bn.name + "/bn_scaled", DType::F32);
    ir::Node mul;
    mul.name = bn.name + "/mul";
    mul.op_type = "Mul";
    mul.opset = bn.opset;
    mul.file_index = bn.file_index;
    mul.inputs = {bn.inputs[0], va};
    mul.outputs = {scaled};
    ir::Node& add = g.node(i);  // the batch normalisation becomes the Add, keeping its name and output
    add.op_type = "Add";
    add.attributes.clear();
    add.inputs = {scaled, vb};
    add.outputs = {add.outputs[0]};
    g.insert_before(i, std::move(mul));
    ++rewrites;
  }
  return rewrites;
}

}  // namespace onemodel::passes
