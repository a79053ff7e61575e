// Compact weights (docs/fp16.md section 6, SessionOptions::weight_storage): the last rewrite of a session's graph.
// Each constant float32 input 1 of a product (MatMul, Gemm, Conv and their fused forms FusedMatMul, FusedConv)
// with at least 1024 values that nothing else reads is replaced by its rounding to binary16 or bfloat16 and a
// WidenWeight node placed just before the product: the graph then holds the 16-bit copy. The plan lets a product
// that packs its weights keep them in 16 bits and drops the step (runtime/plan.cc); otherwise the float32 values
// exist in the slab only from that node to the product (the memory planner reuses the block afterwards). The
// product reads exactly the rounded weights widened, so the results are the model's with its weights rounded
// beforehand. A weight that does not fit the format (binary16: a value beyond 65504; either: NaN or infinity) is
// left as it is.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>
#include <string>

#include "base/big_buffer.h"
#include "base/fp16.h"
#include "passes/passes.h"

namespace onemodel::passes {

namespace {

constexpr int64_t kMinValues = 1024;

bool is_product(const ir::Node& n) {
  if (n.domain.empty()) return n.op_type == "MatMul" || n.op_type == "Gemm" || n.op_type == "Conv";
  return n.domain == "onemodel" && (n.op_type == "FusedMatMul" || n.op_type == "FusedConv");
}

float load(const std::byte* p, int64_t i) {
  float x;
  std::memcpy(&x, p + i * 4, 4);  // in place: an initializer inside a protobuf need not be 4-byte aligned
  return x;
}

// `w` rounded to nearest even in `to`, or empty when a value does not fit (see above).
Tensor rounded(const Tensor& w, DType to) {
  const auto* p = static_cast<const std::byte*>(w.raw());
  const int64_t n = w.numel();
  for (int64_t i = 0; i < n; ++i) {
    const float x = load(p, i);
    if (!std::isfinite(x)) return {};
    if (to == DType::F16 && std::fabs(x) > 65504.0f) return {};
    if (to == DType::BF16 && std::isinf(bf16_to_float(float_to_bf16(x)))) return {};
  }
  Tensor out = Tensor::zeros(to, w.shape());
  auto* q = static_cast<uint16_t*>(out.raw_mut());
  for (int64_t i = 0; i < n; ++i) q[i] = to == DType::F16 ? float_to_half(load(p, i)) : float_to_bf16(load(p, i));
  return out;
}

// Which node widens a rounded weight: a session's WidenWeight (run at every call) or, in a converted file, an ONNX
// Cast to float32 (which widen_stored_weights folds at load).
enum class Widening { Session, File };

int round_weights(PassGraph& g, WeightStorage storage, Widening how) {
  if (storage != WeightStorage::Float16 && storage != WeightStorage::BFloat16) return 0;
  const DType to = storage == WeightStorage::Float16 ? DType::F16 : DType::BF16;
  int rewrites = 0;
  const int count = static_cast<int>(g.num_nodes());
  for (int i = 0; i < count; ++i) {
    if (g.removed(i) || !is_product(g.node(i)) || g.node(i).inputs.size() < 2) continue;
    const int w = g.node(i).inputs[1];
    if (w < 0 || !g.only_reader(w, i)) continue;
    // Initializers only, read where they are (PassGraph::constant would make an aligned float32 copy).
    const ir::Value& val = g.graph().values[static_cast<size_t>(w)];
    if (!val.initializer || val.is_input) continue;
    const Tensor* t = &val.initializer->data;
    if (t->dtype() != DType::F32 || t->numel() < kMinValues || !t->is_contiguous()) continue;
    Tensor narrow = rounded(*t, to);
    if (narrow.empty()) continue;
    // The float32 bytes are not read again by this session: a mapped file's pages may go.
    if (how == Widening::Session) release_clean_pages(t->raw(), t->nbytes());
    const std::string base = val.name;
    const std::vector<int64_t> dims(t->shape().dims().begin(), t->shape().dims().end());
    const int stored = g.add_constant(base + (to == DType::F16 ? "/float16" : "/bfloat16"), std::move(narrow));
    const int wide = g.add_value(base + "/widened", DType::F32, dims);
    ir::Node widen;
    widen.name = base + "/widen";
    if (how == Widening::Session) {
      widen.op_type = "WidenWeight";
      widen.domain = "onemodel";
      widen.opset = 1;
    } else {
      widen.op_type = "Cast";
      widen.opset = g.node(i).opset;  // the product's: an ai.onnx node of the same model
      widen.attributes.push_back(int_attribute("to", static_cast<int64_t>(DType::F32)));
    }
    widen.file_index = g.node(i).file_index;
    widen.inputs = {stored};
    widen.outputs = {wide};
    g.node(i).inputs[1] = wide;
    g.insert_before(i, std::move(widen));
    ++rewrites;
  }
  return rewrites;
}

}  // namespace

int compact_weights(PassGraph& g, WeightStorage storage) { return round_weights(g, storage, Widening::Session); }

int store_weights_compact(PassGraph& g, WeightStorage storage) { return round_weights(g, storage, Widening::File); }

// A Cast to float32 of a float16 or bfloat16 initializer that nothing else reads (what store_weights_compact
// writes; also how half-precision exports keep float32 products): its output becomes that initializer widened
// exactly, so the passes see a float32 constant (a Conv's weights for the batch-normalisation fold) and the
// plan does not cast it again at every run (results of more than 64 KiB are not folded, runtime/plan.cc). A
// tensor with a NaN is left to the Cast (exact mode's Cast makes NaN canonical).
int widen_stored_weights(PassGraph& g) {
  int rewrites = 0;
  for (int i = 0; i < static_cast<int>(g.num_nodes()); ++i) {
    ir::Node& n = g.node(i);
    if (g.removed(i) || !n.domain.empty() || n.op_type != "Cast" || n.inputs.size() != 1 || n.outputs.size() != 1 ||
        n.outputs[0] < 0)
      continue;
    const ir::Attribute* to = n.find_attribute("to");
    if (!to || to->type != ir::AttrType::Int || to->i != static_cast<int64_t>(DType::F32)) continue;
    const int v = n.inputs[0];
    if (v < 0 || !g.only_reader(v, i)) continue;
    const ir::Value& val = g.graph().values[static_cast<size_t>(v)];
    if (!val.initializer || val.is_input || !val.initializer->data.is_contiguous()) continue;
    const Tensor& h = val.initializer->data;
    if (h.dtype() != DType::F16 && h.dtype() != DType::BF16) continue;
    std::vector<uint16_t> bits(static_cast<size_t>(h.numel()));
    if (!bits.empty()) std::memcpy(bits.data(), h.raw(), bits.size() * 2);  // in place: may be unaligned
    Tensor wide = Tensor::zeros(DType::F32, h.shape());
    auto* out = static_cast<float*>(wide.raw_mut());
    bool nan = false;
    for (size_t k = 0; k < bits.size() && !nan; ++k) {
      out[k] = h.dtype() == DType::F16 ? half_to_float(bits[k]) : bf16_to_float(bits[k]);
      nan = std::isnan(out[k]);
    }
    if (nan) continue;
    ir::Value& result = g.graph().values[static_cast<size_t>(n.outputs[0])];
    const auto& outs = g.graph().outputs;
    if (result.initializer || result.is_input || std::find(outs.begin(), outs.end(), n.outputs[0]) != outs.end())
      continue;
    g.set_constant(n.outputs[0], std::move(wide));
    // The 16-bit tensor is read by nothing now: dropped, so the graph no longer counts as half-precision.
    ir::Value& source = g.graph().values[static_cast<size_t>(v)];
    source.initializer.reset();
    source.type = ir::TypeInfo();
    auto& inits = g.graph().initializers;
    inits.erase(std::remove(inits.begin(), inits.end(), v), inits.end());
    g.remove(i);
    ++rewrites;
  }
  return rewrites;
}

}  // namespace onemodel::passes
