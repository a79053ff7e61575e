// Building a CompiledGraph: drop dead nodes, resolve every operator (reporting all missing ones at once),
// create kernels, check exact mode, and make the weights usable by kernels (aligned, stored types only; narrow
// initializers that are only cast are widened first, ops-newer.md section 10).
#include "runtime/compiled_graph.h"

#include "base/big_buffer.h"
#include "base/narrow_types.h"
#include "passes/passes.h"
#include "runtime/half_adapter.h"
#include "runtime/inputs.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

namespace onemodel::rt {

namespace {

std::string op_label(const ir::Node& n) {
  std::string type = n.domain.empty() || n.domain == "ai.onnx" ? n.op_type : n.domain + "." + n.op_type;
  return type + " (opset " + std::to_string(n.opset) + ")";
}

std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + items[i];
  return s;
}

// Sequences and optionals are described by their content: a sequence's item element type, an optional's
// content kind and element type (optional(sequence(tensor(float))) is Optional, Sequence, F32).
ValueInfo describe(const ir::Value& v) {
  ValueInfo info;
  info.name = v.name;
  info.kind = v.type.kind;
  if (v.type.kind == ValueKind::Sequence || v.type.kind == ValueKind::Optional) {
    const ir::TypeInfo* inner = v.type.inner.get();
    if (v.type.kind == ValueKind::Optional && inner) {
      info.element_kind = inner->kind;
      if (inner->kind == ValueKind::Sequence) inner = inner->inner.get();
    }
    if (inner && inner->kind == ValueKind::Tensor) info.dtype = inner->elem;
    return info;
  }
  info.dtype = v.type.elem;
  info.has_shape = v.type.has_shape;
  info.dims = v.type.dims;
  return info;
}

}  // namespace

std::shared_ptr<const CompiledGraph> CompiledGraph::create(std::shared_ptr<const ir::Model> model, bool exact,
                                                           OpLookup lookup, int threads, OptimizationLevel level,
                                                           WeightStorage storage) {
  if (!model || !model->graph) throw Error(ErrorKind::InvalidModel, "the model has no graph");
  const bool owns_model = model.use_count() == 1;  // nobody else sees its initializers
  std::shared_ptr<CompiledGraph> g(new CompiledGraph());
  const ir::Graph* imported = model->graph.get();
  g->graph_ = std::shared_ptr<const ir::Graph>(std::move(model), imported);
  std::vector<passes::PassReport> report;
  int widened = 0;
  if (auto w = passes::widen_stored(*g->graph_, &widened)) g->graph_ = std::move(w);
  if (widened > 0) report.push_back({"widen-stored-weights", widened});
  g->half_ = graph_has_half(*g->graph_);
  // The passes preserve bits for float32 values only: in a half-precision graph they would fuse across the
  // roundings to the storage type, so exact mode runs it unfused (docs/fp16.md section 4).
  if (g->half_ && exact) level = OptimizationLevel::None;
  if (auto rewritten = passes::run_passes(*g->graph_, level, exact, &report, storage)) g->graph_ = std::move(rewritten);
  for (const auto& r : report) g->pass_report_.emplace_back(r.name, r.rewrites);
  g->exact_ = exact;
  g->isa_ = kern::session_isa();
  g->own_pool_ = ThreadPool::for_session(threads);
  g->pool_ = g->own_pool_.get();
  g->scope_ = CompileScope{g->graph_.get(), lookup, g->isa_, g->pool_, &g->known_constants_, g->half_};
  g->collect_live_nodes();
  g->load_weights({});
  g->describe_io();
  g->resolve_operators(lookup);
  g->check_sources();
  if (const int packed = g->pack_weights(owns_model); packed > 0) g->pass_report_.emplace_back("pack-weights", packed);
  return g;
}

std::shared_ptr<const CompiledGraph> CompiledGraph::create_body(std::shared_ptr<const ir::Graph> body, bool exact,
                                                                OpLookup lookup, kern::Isa isa, ThreadPool* pool,
                                                                std::vector<Tensor> capture_weights, bool half) {
  if (!body) throw Error(ErrorKind::InvalidModel, "a subgraph attribute holds no graph");
  std::shared_ptr<CompiledGraph> g(new CompiledGraph());
  g->graph_ = std::move(body);
  g->body_ = true;
  g->exact_ = exact;
  g->isa_ = isa;
  if (!pool) {
    g->own_pool_ = std::make_shared<ThreadPool>(1);
    pool = g->own_pool_.get();
  }
  g->pool_ = pool;
  g->half_ = half || graph_has_half(*g->graph_);
  g->scope_ = CompileScope{g->graph_.get(), lookup, isa, pool, &g->known_constants_, g->half_};
  g->collect_live_nodes();
  g->load_weights(std::move(capture_weights));
  g->describe_io();
  g->resolve_operators(lookup);
  g->check_sources();
  return g;
}

// A node is live when one of its outputs reaches a graph output. Graph order is topological, so one
// backward sweep suffices.
void CompiledGraph::collect_live_nodes() {
  const ir::Graph& gr = graph();
  std::vector<char> needed(gr.values.size(), 0);
  for (int v : gr.outputs)
    if (v >= 0 && static_cast<size_t>(v) < gr.values.size()) needed[static_cast<size_t>(v)] = 1;
  std::vector<char> live(gr.nodes.size(), 0);
  for (size_t i = gr.nodes.size(); i-- > 0;) {
    const ir::Node& n = gr.nodes[i];
    bool any = std::any_of(n.outputs.begin(), n.outputs.end(), [&](int v) {
      return v >= 0 && static_cast<size_t>(v) < needed.size() && needed[static_cast<size_t>(v)];
    });
    if (!any) continue;
    live[i] = 1;
    auto mark = [&](int v) {
      if (v < 0) return;
      if (static_cast<size_t>(v) >= needed.size())
        throw Error(ErrorKind::InvalidModel, op_label(n) + " node '" + n.name + "' refers to value id " +
                                                 std::to_string(v) + " outside the graph")
            .with_node(n.name);
      needed[static_cast<size_t>(v)] = 1;
    };
    for (int v : n.inputs) mark(v);
    for (int v : n.subgraph_reads) mark(v);
  }
  for (size_t i = 0; i < gr.nodes.size(); ++i)
    if (live[i]) live_.push_back(static_cast<int>(i));
}

void CompiledGraph::describe_io() {
  const ir::Graph& gr = graph();
  if (body_) {
    // A body takes whatever its node passes (section 8): declared types are not checked, so the infos
    // say Unknown. Captures follow the declared inputs, except those that are weights here.
    for (int list = 0; list < 2; ++list)
      for (int v : list == 0 ? gr.inputs : gr.captures) {
        if (list == 1 && !weights_[static_cast<size_t>(v)].empty()) continue;
        const ir::Value& val = gr.values[static_cast<size_t>(v)];
        inputs_.push_back(v);
        ValueInfo info;
        info.name = val.name;
        info.kind = ValueKind::Unknown;
        input_infos_.push_back(std::move(info));
      }
    for (int v : gr.outputs) {
      outputs_.push_back(v);
      output_infos_.push_back(describe(gr.values[static_cast<size_t>(v)]));
    }
    return;
  }
  for (int v : gr.inputs) {
    const ir::Value& val = gr.values[static_cast<size_t>(v)];
    if (val.initializer || val.sparse_initializer) continue;  // has a default: not a required input
    if (val.type.kind == ValueKind::Map || val.type.kind == ValueKind::SparseTensor ||
        val.type.kind == ValueKind::Opaque)
      throw Error(ErrorKind::Unsupported, "graph input '" + val.name +
                                              "' is not a tensor, sequence or optional; map and sparse inputs are "
                                              "not supported");
    if (val.type.kind == ValueKind::Tensor && val.type.elem != DType::Undefined && !dtype_is_stored(val.type.elem))
      throw Error(ErrorKind::Unsupported, "graph input '" + val.name + "' has element type " +
                                              std::string(dtype_name(val.type.elem)) + ", which is not supported");
    inputs_.push_back(v);
    input_infos_.push_back(describe(val));
  }
  for (int v : gr.outputs) {
    const ir::Value& val = gr.values[static_cast<size_t>(v)];
    if (val.type.kind == ValueKind::Tensor && val.type.elem != DType::Undefined && !dtype_is_stored(val.type.elem))
      throw Error(ErrorKind::Unsupported, "graph output '" + val.name + "' has element type " +
                                              std::string(dtype_name(val.type.elem)) + ", which is not supported");
    outputs_.push_back(v);
    output_infos_.push_back(describe(val));
  }
}

void CompiledGraph::resolve_operators(OpLookup lookup) {
  const ir::Graph& gr = graph();
  std::vector<std::string> missing;
  std::vector<const OpDef*> defs;
  for (int i : live_) {
    const ir::Node& n = gr.nodes[static_cast<size_t>(i)];
    const OpDef* def = lookup(n.domain, n.op_type, n.opset);
    defs.push_back(def);
    if (!def) {
      std::string label = op_label(n);
      if (std::find(missing.begin(), missing.end(), label) == missing.end()) missing.push_back(label);
    }
  }
  if (!missing.empty())
    throw Error(ErrorKind::UnsupportedOperator,
                "The model uses operators this library does not implement: " + join(missing) + ".")
        .with_operators(missing);

  std::vector<std::string> not_exact;
  nodes_.reserve(live_.size());
  for (size_t k = 0; k < live_.size(); ++k) {
    const ir::Node& n = gr.nodes[static_cast<size_t>(live_[k])];
    CompiledNode cn{&n, NodeInfo(n, exact_, &scope_), nullptr, {}, {}};
    cn.kernel = defs[k]->factory(cn.info);
    if (!cn.kernel)
      throw Error(ErrorKind::Internal, "the factory of " + op_label(n) + " returned no kernel").with_node(n.name);
    if (half_ && half_wrappable(n, cn.kernel->flags()))
      cn.kernel = wrap_half(std::move(cn.kernel), n, n.inputs.size() + n.subgraph_reads.size(), isa_);
    if (exact_ && !cn.kernel->flags().exact &&
        std::find(not_exact.begin(), not_exact.end(), n.op_type) == not_exact.end())
      not_exact.push_back(n.op_type);
    cn.inputs = n.inputs;
    cn.inputs.insert(cn.inputs.end(), n.subgraph_reads.begin(), n.subgraph_reads.end());
    cn.outputs = n.outputs;
    note_constant_outputs(cn);
    nodes_.push_back(std::move(cn));
  }
  if (!not_exact.empty())
    throw Error(ErrorKind::ExactModeUnavailable, "Exact mode is not available: no exact kernel exists for " +
                                                     join(not_exact) + ". Use fast mode or remove these operators.")
        .with_operators(not_exact);
}

// A float8, float4, e8m0 or 4-bit integer initializer that is only ever the input of a Cast or CastLike, widened
// exactly to the stored type of its values (float32, int8 or uint8; base/narrow_types.h): the Cast of the widened
// value is the Cast of the narrow one (ops-newer.md section 10). Empty when the initializer is used otherwise (a
// graph output, a subgraph's capture, any other operator or input position) or its type is not narrow.
Tensor CompiledGraph::widen_for_cast(int v, const ir::TensorValue& tv) const {
  const ir::Graph& gr = graph();
  const DType wide = narrow_widened_type(tv.dtype);
  if (wide == DType::Undefined || !Shape::valid(tv.dims)) return {};
  for (int o : gr.outputs)
    if (o == v) return {};
  bool read = false;
  for (int i : live_) {
    const ir::Node& n = gr.nodes[static_cast<size_t>(i)];
    for (int r : n.subgraph_reads)
      if (r == v) return {};
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      if (n.inputs[k] != v) continue;
      const bool cast = n.domain.empty() || n.domain == "ai.onnx";
      if (!cast || k != 0 || (n.op_type != "Cast" && n.op_type != "CastLike")) return {};
      read = true;
    }
  }
  if (!read) return {};
  const Shape shape{std::span<const int64_t>(tv.dims)};
  Tensor t = Tensor::zeros(wide, shape);
  const std::span<const std::byte> bytes(static_cast<const std::byte*>(tv.raw.data.get()), tv.raw.bytes);
  if (!decode_narrow(tv.dtype, bytes, shape.numel(), t.raw_mut())) return {};
  return t;
}

// Weights stay where the importer put them (a mapped file, the caller's copied bytes) when they are usable
// in place; shared ownership keeps that memory alive. A tensor whose data is not aligned to its element size
// (possible inside a protobuf) is copied, because kernels read elements with typed loads.
void CompiledGraph::load_weights(std::vector<Tensor> capture_weights) {
  const ir::Graph& gr = graph();
  weights_.assign(gr.values.size(), Tensor());
  std::vector<char> used(gr.values.size(), 0);
  for (int i : live_) {
    const ir::Node& n = gr.nodes[static_cast<size_t>(i)];
    for (int v : n.inputs)
      if (v >= 0) used[static_cast<size_t>(v)] = 1;
    for (int v : n.subgraph_reads)
      if (v >= 0) used[static_cast<size_t>(v)] = 1;
  }
  for (int v : gr.outputs) used[static_cast<size_t>(v)] = 1;
  if (!capture_weights.empty() && capture_weights.size() != gr.captures.size())
    throw Error(ErrorKind::Internal, "a body with " + std::to_string(gr.captures.size()) + " captures was given " +
                                         std::to_string(capture_weights.size()) + " capture weights");
  for (size_t k = 0; k < capture_weights.size(); ++k)
    weights_[static_cast<size_t>(gr.captures[k])] = std::move(capture_weights[k]);

  for (size_t v = 0; v < gr.values.size(); ++v) {
    const ir::Value& val = gr.values[v];
    if (val.sparse_initializer && !val.initializer && used[v])
      throw Error(ErrorKind::Unsupported, "sparse initializer '" + val.name + "' is not supported");
    // An initializer nothing live reads gets no weight: its bytes are not copied or touched (a weight the
    // compaction replaced, docs/fp16.md section 6; a dead branch's constants).
    if (!val.initializer || !used[v]) continue;
    const ir::TensorValue& tv = *val.initializer;
    if (!dtype_is_stored(tv.dtype)) {
      Tensor widened = widen_for_cast(static_cast<int>(v), tv);
      if (widened.empty())
        throw Error(ErrorKind::Unsupported, "initializer '" + val.name + "' has element type " +
                                                std::string(dtype_name(tv.dtype)) + ", which is not supported");
      weights_[v] = widened;
      continue;
    }
    Shape shape{std::span<const int64_t>(tv.dims)};
    Tensor t = tv.data;
    if (t.empty()) {
      if (shape.numel() != 0)
        throw Error(ErrorKind::InvalidModel,
                    "initializer '" + val.name + "' has no data for shape " + shape.to_string());
      t = Tensor::zeros(tv.dtype, shape);
    }
    if (t.dtype() != tv.dtype || t.shape() != shape)
      throw Error(ErrorKind::Internal, "initializer '" + val.name + "' data does not match its declared type");
    weights_[v] = usable(t);
    // Copied (raw_data inside protobuf is mostly not aligned to its element size): the bytes it came from are
    // not read again, and where they are a mapped file's pages they leave the resident set (ResNet-50 from its
    // file: 71 of its 98 MB were copied, peak RSS 370 -> 298 MB; onnx-import.md section 6).
    if (weights_[v].raw() != t.raw()) release_clean_pages(t.raw(), t.nbytes());
  }
  known_constants_ = weights_;
}

// An input-less node whose output infer() states as a constant (Constant, ConstantOfShape of an attribute
// shape...) is known now: record it for the bodies compiled after it (CompileScope::constants). The plan
// still evaluates the node itself; this only lets a body that captures the value treat it as a weight.
void CompiledGraph::note_constant_outputs(const CompiledNode& cn) {
  const KernelFlags& f = cn.kernel->flags();
  if (!cn.inputs.empty() || cn.outputs.size() != 1 || cn.outputs[0] < 0 || f.on_values || f.outputs_data_dependent)
    return;
  std::vector<OutputMeta> outs(1);
  InferContext ctx{cn.info, {}, outs, exact_};
  cn.kernel->infer(ctx);
  const Tensor& c = outs[0].constant;
  if (ctx.needs_runtime_values || c.empty()) return;
  known_constants_[static_cast<size_t>(cn.outputs[0])] = usable(c);
}

// Every value a live node reads must come from somewhere.
void CompiledGraph::check_sources() const {
  const ir::Graph& gr = graph();
  for (const CompiledNode& n : nodes_)
    for (int v : n.inputs) {
      if (v < 0) continue;
      const ir::Value& val = gr.values[static_cast<size_t>(v)];
      if (val.producer < 0 && !val.is_input && !val.initializer && !val.is_capture)
        n.info.fail(ErrorKind::InvalidModel, "input '" + val.name +
                                                 "' is not produced by any node, input or "
                                                 "initializer");
    }
}

// Weights the packing keeps (graph-runtime.md section 4): a float32 weight of at least kMinPackedValues values
// whose only reader packs it for good (Kernel::pack_weight) is packed now and its values are freed, as ONNX Runtime
// frees the initialisers its kernels pre-pack. Before, a session held every matrix product's weights twice (the
// MiniLM-shaped encoder: 43 of its 90 MB). Each weight is freed right after its packing is made, so loading needs
// room for one weight more than the packings, not for both sets. The plans see a placeholder of the weight's type
// and shape (typed access to it throws) and hand the packing to prepare(). The model's initialiser is emptied too.
// A model someone else also holds keeps its values whatever this graph does, so then nothing is packed here.
int CompiledGraph::pack_weights(bool owns_model) {
  constexpr int64_t kMinPackedValues = 1024;
  if (!owns_model) return 0;
  std::vector<int> readers(num_values(), 0);
  for (const CompiledNode& cn : nodes_)
    for (int v : cn.inputs)
      if (v >= 0) ++readers[static_cast<size_t>(v)];
  for (int v : outputs_) readers[static_cast<size_t>(v)] += 2;
  const Tensor nan = Tensor::from_values({std::numeric_limits<float>::quiet_NaN()}, Shape{});
  int packed = 0;
  for (CompiledNode& cn : nodes_) {
    if (!cn.kernel->flags().compact_weights || cn.inputs.size() < 2 || cn.inputs[1] < 0) continue;
    const auto v = static_cast<size_t>(cn.inputs[1]);
    const ir::Value& val = graph().values[v];
    Tensor& w = weights_[v];
    if (readers[v] != 1 || val.is_input || !val.initializer || w.empty() || w.dtype() != DType::F32 ||
        !w.is_contiguous() || w.numel() < kMinPackedValues)
      continue;
    // Only a weight in a buffer of its own goes (held by weights_, known_constants_ and its initializer): one of
    // many views of a file's bytes (a OneModel file, mapped or read from memory) frees nothing, and a packing kept
    // beside a form made from it only adds (ResNet-50's 7 x 7 layers run transposed: peak RSS +80 MB in Node
    // when its OneModel file's weights were "freed").
    if (w.storage().data.use_count() > 3) continue;
    cn.packed_weight = cn.kernel->pack_weight(w, isa_);
    if (!cn.packed_weight) continue;
    release_clean_pages(w.raw(), w.nbytes());  // a mapped file's pages: not read again
    w = nan.expand(w.shape());
    known_constants_[v] = w;
    val.initializer->data = Tensor();
    ++packed;
  }
  return packed;
}

}  // namespace onemodel::rt
