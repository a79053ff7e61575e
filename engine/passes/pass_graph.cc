#include "passes/pass_graph.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "base/fp16.h"
#include "tensor/readable.h"

namespace onemodel::passes {

namespace {
ir::Attribute named(std::string name, ir::AttrType type) {
  ir::Attribute a;
  a.name = std::move(name);
  a.type = type;
  return a;
}
}  // namespace

ir::Attribute float_attribute(std::string name, float value) {
  ir::Attribute a = named(std::move(name), ir::AttrType::Float);
  a.f = value;
  return a;
}

ir::Attribute int_attribute(std::string name, int64_t value) {
  ir::Attribute a = named(std::move(name), ir::AttrType::Int);
  a.i = value;
  return a;
}

PassGraph::PassGraph(ir::Graph g, const std::vector<char>* f32_captures)
    : g_(std::move(g)), body_(f32_captures != nullptr), removed_(g_.nodes.size(), 0) {
  if (f32_captures) f32_captures_ = *f32_captures;
  rebuild_links();
}

bool PassGraph::f32_source(int v) const {
  if (v < 0 || static_cast<size_t>(v) >= g_.values.size()) return false;
  const ir::Value& val = g_.values[static_cast<size_t>(v)];
  if (const Tensor* t = constant(v); t && t->dtype() == DType::F32) return true;
  if (val.is_capture) return static_cast<size_t>(v) < f32_captures_.size() && f32_captures_[static_cast<size_t>(v)];
  return !body_ && val.is_input && val.type.kind == ValueKind::Tensor && val.type.elem == DType::F32;
}

void PassGraph::rebuild_links() {
  for (ir::Value& v : g_.values) {
    v.producer = -1;
    v.producer_output = -1;
    v.consumers.clear();
  }
  output_uses_.assign(g_.values.size(), 0);
  for (int v : g_.outputs)
    if (v >= 0) ++output_uses_[static_cast<size_t>(v)];
  attr_constants_.clear();
  aligned_.clear();
  for (size_t k = 0; k < g_.nodes.size(); ++k) {
    const ir::Node& n = g_.nodes[k];
    for (size_t o = 0; o < n.outputs.size(); ++o) {
      const int v = n.outputs[o];
      if (v < 0) continue;
      g_.values[static_cast<size_t>(v)].producer = static_cast<int>(k);
      g_.values[static_cast<size_t>(v)].producer_output = static_cast<int>(o);
    }
    auto reads = [&](int v) {
      if (v < 0) return;
      auto& c = g_.values[static_cast<size_t>(v)].consumers;
      if (c.empty() || c.back() != static_cast<int>(k)) c.push_back(static_cast<int>(k));
    };
    for (int v : n.inputs) reads(v);
    for (int v : n.subgraph_reads) reads(v);
    if (n.op_type == "Constant" && n.domain.empty() && n.outputs.size() == 1 && n.outputs[0] >= 0) {
      if (const ir::Attribute* a = n.find_attribute("value_float"); a && a->type == ir::AttrType::Float)
        attr_constants_[n.outputs[0]] = Tensor::from_values<float>({a->f}, Shape());
    }
  }
}

int PassGraph::producer(int v) const {
  if (v < 0 || static_cast<size_t>(v) >= g_.values.size()) return -1;
  const int p = g_.values[static_cast<size_t>(v)].producer;
  return p >= 0 && !removed(p) ? p : -1;
}

int PassGraph::producer_of_type(int v, std::string_view op_type) const {
  const int p = producer(v);
  if (p < 0) return -1;
  const ir::Node& n = g_.nodes[static_cast<size_t>(p)];
  return n.domain.empty() && n.op_type == op_type ? p : -1;
}

int PassGraph::uses(int v) const {
  if (v < 0) return 0;
  int count = output_uses_[static_cast<size_t>(v)];
  for (int c : g_.values[static_cast<size_t>(v)].consumers) {
    if (removed(c)) continue;
    const ir::Node& n = g_.nodes[static_cast<size_t>(c)];
    count += static_cast<int>(std::count(n.inputs.begin(), n.inputs.end(), v));
    count += static_cast<int>(std::count(n.subgraph_reads.begin(), n.subgraph_reads.end(), v));
  }
  return count;
}

bool PassGraph::only_reader(int v, int reader) const {
  if (uses(v) != 1) return false;
  const auto& c = g_.values[static_cast<size_t>(v)].consumers;
  return std::find(c.begin(), c.end(), reader) != c.end();
}

int PassGraph::sole_reader(int v, std::string_view op) const {
  if (v < 0 || uses(v) != 1) return -1;
  for (int c : g_.values[static_cast<size_t>(v)].consumers) {
    if (removed(c)) continue;
    const ir::Node& n = g_.nodes[static_cast<size_t>(c)];
    return n.domain.empty() && n.op_type == op && !n.outputs.empty() && n.outputs[0] >= 0 ? c : -1;
  }
  return -1;
}

const Tensor* PassGraph::aligned(int v, const Tensor& t) const {
  if (t.empty() || !t.is_contiguous()) return nullptr;
  if (readable_in_place(t)) return &t;
  auto it = aligned_.find(v);
  if (it == aligned_.end()) it = aligned_.emplace(v, Tensor::copy_of(t.dtype(), t.shape(), t.raw(), t.nbytes())).first;
  return &it->second;
}

const Tensor* PassGraph::constant(int v) const {
  if (v < 0 || static_cast<size_t>(v) >= g_.values.size()) return nullptr;
  const ir::Value& val = g_.values[static_cast<size_t>(v)];
  if (val.initializer) return val.is_input ? nullptr : aligned(v, val.initializer->data);
  const int p = producer(v);
  if (p < 0) return nullptr;
  const ir::Node& n = g_.nodes[static_cast<size_t>(p)];
  if (n.op_type != "Constant" || !n.domain.empty()) return nullptr;
  if (const ir::Attribute* a = n.find_attribute("value"); a && a->type == ir::AttrType::Tensor && a->t)
    return aligned(v, a->t->data);
  auto it = attr_constants_.find(v);
  return it == attr_constants_.end() ? nullptr : &it->second;
}

std::optional<float> PassGraph::scalar_f32(int v) const {
  const auto c = scalar_float(v);
  if (!c || c->second != DType::F32) return std::nullopt;
  return c->first;
}

std::optional<std::pair<float, DType>> PassGraph::scalar_float(int v) const {
  const Tensor* t = constant(v);
  if (!t || t->numel() != 1) return std::nullopt;
  if (t->dtype() == DType::F32) return std::pair{t->data<float>()[0], DType::F32};
  if (t->dtype() != DType::F16 && t->dtype() != DType::BF16) return std::nullopt;
  uint16_t bits = 0;
  std::memcpy(&bits, t->raw(), 2);  // a view of a file's bytes may be unaligned
  return std::pair{t->dtype() == DType::F16 ? half_to_float(bits) : bf16_to_float(bits), t->dtype()};
}

int PassGraph::add_constant(const std::string& base, Tensor t) {
  std::string name = base;
  for (int k = 1; g_.find_value(name) >= 0; ++k) name = base + "_" + std::to_string(k);
  ir::Value val;
  val.name = name;
  g_.values.push_back(std::move(val));
  output_uses_.push_back(0);
  const int id = static_cast<int>(g_.values.size()) - 1;
  set_constant(id, std::move(t));
  return id;
}

void PassGraph::set_constant(int v, Tensor t) {
  ir::Value& val = g_.values[static_cast<size_t>(v)];
  auto tv = std::make_shared<ir::TensorValue>();
  tv->name = val.name;
  tv->dtype = t.dtype();
  tv->dims.assign(t.shape().dims().begin(), t.shape().dims().end());
  tv->data = std::move(t);
  val.type = ir::TypeInfo();
  val.type.kind = ValueKind::Tensor;
  val.type.elem = tv->dtype;
  val.type.has_shape = true;
  for (int64_t d : tv->dims) val.type.dims.push_back(Dim{d, {}});
  val.initializer = std::move(tv);
  g_.initializers.push_back(v);
}

int PassGraph::add_value(const std::string& base, DType dtype, const std::vector<int64_t>& dims) {
  const int v = add_value(base, dtype);
  ir::Value& val = g_.values[static_cast<size_t>(v)];
  val.type.has_shape = true;
  for (int64_t d : dims) val.type.dims.push_back(Dim{d, {}});
  return v;
}

int PassGraph::add_value(const std::string& base, DType dtype) {
  std::string name = base;
  for (int k = 1; g_.find_value(name) >= 0; ++k) name = base + "_" + std::to_string(k);
  ir::Value val;
  val.name = name;
  val.type.kind = ValueKind::Tensor;
  val.type.elem = dtype;
  g_.values.push_back(std::move(val));
  output_uses_.push_back(0);
  return static_cast<int>(g_.values.size()) - 1;
}

int PassGraph::finish() {
  const size_t before = g_.nodes.size();
  if (!inserted_.empty()) {  // queued nodes go in front of theirs, in the order queued
    // (An index sort: std::stable_sort's temporary buffer is allocated in a way runtime_alloc_test's counting
    // operator delete does not pair with.)
    std::vector<size_t> order(inserted_.size());
    for (size_t q = 0; q < order.size(); ++q) order[q] = q;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return inserted_[a].first != inserted_[b].first ? inserted_[a].first < inserted_[b].first : a < b;
    });
    std::vector<ir::Node> nodes;
    std::vector<char> removed;
    nodes.reserve(g_.nodes.size() + inserted_.size());
    size_t q = 0;
    for (size_t k = 0; k < g_.nodes.size(); ++k) {
      for (; q < order.size() && inserted_[order[q]].first == static_cast<int>(k); ++q) {
        nodes.push_back(std::move(inserted_[order[q]].second));
        removed.push_back(0);
      }
      nodes.push_back(std::move(g_.nodes[k]));
      removed.push_back(removed_[k]);
    }
    for (; q < order.size(); ++q) {  // queued before a node past the end: last
      nodes.push_back(std::move(inserted_[order[q]].second));
      removed.push_back(0);
    }
    inserted_.clear();
    g_.nodes = std::move(nodes);
    removed_ = std::move(removed);
  }
  // Drop nodes none of whose outputs anything reads, last to first (one sweep: the list is in dependency order).
  std::vector<int> reads(g_.values.size(), 0);
  for (int v : g_.outputs)
    if (v >= 0) ++reads[static_cast<size_t>(v)];
  for (size_t k = g_.nodes.size(); k-- > 0;) {
    if (removed_[k]) continue;
    const ir::Node& n = g_.nodes[k];
    const bool read = std::any_of(n.outputs.begin(), n.outputs.end(),
                                  [&](int v) { return v >= 0 && reads[static_cast<size_t>(v)] > 0; });
    if (!read) {
      removed_[k] = 1;
      continue;
    }
    for (int v : n.inputs)
      if (v >= 0) ++reads[static_cast<size_t>(v)];
    for (int v : n.subgraph_reads)
      if (v >= 0) ++reads[static_cast<size_t>(v)];
  }
  // Initializers nothing reads any more (a weight the compaction replaced, one a fusion folded) are dropped,
  // values and declarations with them: the rewritten graph is what a session keeps (the imported model is not
  // kept, runtime/compiled_graph.h), so their bytes are freed, and a converted file does not write them.
  std::erase_if(g_.initializers, [&](int v) {
    ir::Value& val = g_.values[static_cast<size_t>(v)];
    if (reads[static_cast<size_t>(v)] > 0 || val.is_input) return false;
    val.initializer.reset();
    val.type = ir::TypeInfo();
    return true;
  });
  std::vector<ir::Node> kept;
  kept.reserve(g_.nodes.size());
  for (size_t k = 0; k < g_.nodes.size(); ++k)
    if (!removed_[k]) kept.push_back(std::move(g_.nodes[k]));
  g_.nodes = std::move(kept);
  removed_.assign(g_.nodes.size(), 0);
  rebuild_links();
  return static_cast<int>(before) - static_cast<int>(g_.nodes.size());
}

}  // namespace onemodel::passes
