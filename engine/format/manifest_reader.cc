// The manifest schema (format.md sections 2 and 3.1): every field checked for its JSON kind, integers taken
// only from integer tokens, floats from their bit patterns, bytes from base64, graphs and types counted
// together against the nesting limit. What is read goes into the ONNX importer's Parsed* structures.
#include "format/manifest_reader.h"

#include "base/bits.h"
#include <limits>

namespace onemodel::format {
namespace {

using onnx::Descend;
using onnx::ParsedGraph;
using onnx::ParsedNode;
using onnx::ParsedSubgraph;
using std::to_string;

constexpr int kMaxNesting = 64;  // graphs and types open at once (section 3.1)
constexpr uint32_t kNone = Json::kNone;

const char* kind_name(JKind k) {
  switch (k) {
    case JKind::Null: return "null";
    case JKind::Bool: return "a boolean";
    case JKind::Int:
    case JKind::Uint: return "an integer";
    case JKind::Float: return "a number with a fraction or exponent";
    case JKind::String: return "a string";
    case JKind::Array: return "an array";
    case JKind::Object: return "an object";
  }
  return "a value";
}

class Reader {
 public:
  Reader(onnx::ImportState& st, const Json& j, const Header& h) : st_(st), c_(st.ctx), j_(j), h_(h) {}

  void model(ir::Model& m, std::unique_ptr<ParsedGraph>& graph);

 private:
  // One level of graph or type nesting for as long as it lives.
  class Level {
   public:
    Level(Reader& r, uint32_t n) : r_(r) {
      if (r_.depth_ >= kMaxNesting)
        r_.fail(ErrorKind::Unsupported, "graphs and types nested deeper than " + to_string(kMaxNesting) + " levels", n);
      ++r_.depth_;
    }
    ~Level() { --r_.depth_; }
    Level(const Level&) = delete;
    Level& operator=(const Level&) = delete;

   private:
    Reader& r_;
  };

  int64_t at(uint32_t n) const { return static_cast<int64_t>(kHeaderBytes + j_.node(n).offset); }
  [[noreturn]] void fail(ErrorKind kind, const std::string& message, uint32_t n) const {
    c_.fail(kind, message, at(n));
  }
  void expect(uint32_t n, JKind kind) const {
    if (j_.node(n).kind != kind)
      fail(ErrorKind::Malformed, std::string("expected ") + kind_name(kind) + ", found " + kind_name(j_.node(n).kind),
           n);
  }

  // The member `name` of object `obj` (kNone when absent and optional).
  uint32_t member(uint32_t obj, const char* name, bool required) const {
    bool duplicate = false;
    uint32_t m = j_.member(obj, name, duplicate);
    if (duplicate) {
      Descend d(c_, std::string(".") + name, false, -1);
      fail(ErrorKind::Malformed, std::string("field '") + name + "' appears more than once", m);
    }
    if (m == kNone && required) {
      Descend d(c_, std::string(".") + name, false, -1);
      fail(ErrorKind::Malformed, std::string("required field '") + name + "' is missing", obj);
    }
    return m;
  }

  int64_t as_int(uint32_t n) const {
    const JNode& v = j_.node(n);
    if (v.kind == JKind::Int) return v.v.i;
    if (v.kind == JKind::Uint) {
      if (v.v.u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        fail(ErrorKind::Malformed, "integer " + to_string(v.v.u) + " does not fit in 64 signed bits", n);
      return static_cast<int64_t>(v.v.u);
    }
    fail(ErrorKind::Malformed, std::string("expected an integer, found ") + kind_name(v.kind), n);
  }
  int32_t as_code(uint32_t n) const {  // an element type or attribute type code
    int64_t v = as_int(n);
    if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
      fail(ErrorKind::Unsupported, "type code " + to_string(v) + " is unknown", n);
    return static_cast<int32_t>(v);
  }
  float as_float_bits(uint32_t n) const {
    int64_t v = as_int(n);
    if (v < 0 || v > 0xffffffffll)
      fail(ErrorKind::Malformed, "a float's bit pattern must lie in 0..2^32-1, not " + to_string(v), n);
    return float_from_bits(static_cast<uint32_t>(v));
  }
  std::string as_string(uint32_t n) const {
    expect(n, JKind::String);
    return std::string(j_.str(n));
  }
  std::string as_bytes(uint32_t n) const {
    expect(n, JKind::String);
    std::string out;
    if (!base64_decode(j_.str(n), out)) fail(ErrorKind::Malformed, "invalid base64", n);
    return out;
  }

  // Optional fields default to "" and 0 (section 1.2).
  std::string string_field(uint32_t obj, const char* name, bool required = false) const {
    uint32_t m = member(obj, name, required);
    if (m == kNone) return {};
    Descend d(c_, std::string(".") + name, false, -1);
    return as_string(m);
  }
  int64_t int_field(uint32_t obj, const char* name, bool required = false) const {
    uint32_t m = member(obj, name, required);
    if (m == kNone) return 0;
    Descend d(c_, std::string(".") + name, false, -1);
    return as_int(m);
  }
  // Calls f(item, index) for each element of the array `name` (absent: no calls), with the path set.
  template <class F>
  void each(uint32_t obj, const char* name, bool required, F&& f) {
    uint32_t a = member(obj, name, required);
    if (a == kNone) return;
    Descend d(c_, std::string(".") + name, false, -1);
    expect(a, JKind::Array);
    size_t k = 0;
    for (uint32_t i = j_.first(a); i != j_.end(a); i = j_.next(i), ++k) {
      Descend e(c_, "[" + to_string(k) + "]", false, -1);
      f(i, k);
    }
  }
  template <class F>
  void object_field(uint32_t obj, const char* name, bool required, F&& f) {
    uint32_t m = member(obj, name, required);
    if (m == kNone) return;
    Descend d(c_, std::string(".") + name, false, -1);
    f(m);
  }

  void type(uint32_t n, ir::TypeInfo& t);
  std::shared_ptr<ir::TypeInfo> type_ptr(uint32_t n) {
    auto t = std::make_shared<ir::TypeInfo>();
    type(n, *t);
    return t;
  }
  std::shared_ptr<ir::TensorValue> tensor(uint32_t n);
  std::shared_ptr<ir::SparseTensorValue> sparse(uint32_t n);
  ir::Attribute attribute(uint32_t n, std::vector<ParsedSubgraph>& subs, size_t attr_index);
  ParsedNode node(uint32_t n);
  std::unique_ptr<ParsedGraph> graph(uint32_t n);
  onnx::ParsedValueInfo typed_name(uint32_t n);
  std::vector<ir::OpsetImport> opsets(uint32_t obj);
  ir::Function function(uint32_t n, const ir::Model& m);
  std::vector<int64_t> ints(uint32_t obj, const char* name, bool required) {
    std::vector<int64_t> out;
    each(obj, name, required, [&](uint32_t i, size_t) { out.push_back(as_int(i)); });
    return out;
  }
  std::vector<std::string> strings(uint32_t obj, const char* name) {
    std::vector<std::string> out;
    each(obj, name, false, [&](uint32_t i, size_t) { out.push_back(as_string(i)); });
    return out;
  }

  onnx::ImportState& st_;
  onnx::Context& c_;
  const Json& j_;
  Header h_;
  int depth_ = 0;
};

// Section 2.7. An object without `kind` is "no type" (how the writer keeps an empty TypeProto).
void Reader::type(uint32_t n, ir::TypeInfo& t) {
  Level level(*this, n);
  expect(n, JKind::Object);
  if (member(n, "kind", false) == kNone) return;
  const std::string kind = string_field(n, "kind", true);
  if (kind == "tensor" || kind == "sparse_tensor") {
    t.kind = kind == "tensor" ? ValueKind::Tensor : ValueKind::SparseTensor;
    object_field(n, "elem", true, [&](uint32_t e) { t.elem = static_cast<DType>(as_code(e)); });
    if (member(n, "shape", false) != kNone) t.has_shape = true;
    each(n, "shape", false, [&](uint32_t d, size_t) {
      Dim dim;
      const JNode& v = j_.node(d);
      if (v.kind == JKind::String) {
        dim.param = std::string(j_.str(d));
      } else if (v.kind != JKind::Null) {
        dim.value = as_int(d);
        if (dim.value < 0) fail(ErrorKind::InvalidModel, "negative dimension " + to_string(dim.value), d);
      }
      t.dims.push_back(std::move(dim));
    });
  } else if (kind == "sequence" || kind == "optional" || kind == "map") {
    t.kind = kind == "sequence" ? ValueKind::Sequence : kind == "optional" ? ValueKind::Optional : ValueKind::Map;
    if (t.kind == ValueKind::Map)
      object_field(n, "key", false, [&](uint32_t k) { t.map_key = static_cast<DType>(as_code(k)); });
    object_field(n, "inner", false, [&](uint32_t i) { t.inner = type_ptr(i); });
  } else if (kind == "opaque") {
    t.kind = ValueKind::Opaque;  // domain and name are checked, not kept (as the ONNX importer does)
    (void)string_field(n, "domain");
    (void)string_field(n, "name");
  } else {
    Descend d(c_, ".kind", false, -1);
    fail(ErrorKind::Unsupported, "type kind '" + kind + "' is not supported", member(n, "kind", true));
  }
}

// Section 2.5: dims and dtype decide the byte length before the range is looked at.
std::shared_ptr<ir::TensorValue> Reader::tensor(uint32_t n) {
  expect(n, JKind::Object);
  auto tv = std::make_shared<ir::TensorValue>();
  tv->name = string_field(n, "name");
  tv->doc_string = string_field(n, "doc");
  int32_t code = 0;
  object_field(n, "dtype", true, [&](uint32_t d) { code = as_code(d); });
  tv->dtype = static_cast<DType>(code);
  tv->dims = ints(n, "dims", true);
  const std::string who = tv->name.empty() ? std::string("tensor") : "tensor '" + tv->name + "'";
  const onnx::TensorSize size = onnx::tensor_size(c_, who, tv->dims, code, at(n));
  if (code == 8) {
    each(n, "strings", false, [&](uint32_t s, size_t) { tv->strings.push_back(as_bytes(s)); });
    if (tv->strings.size() != size.count)
      fail(ErrorKind::InvalidModel,
           who + " has " + to_string(tv->strings.size()) + " strings for " + to_string(size.count) + " elements", n);
    return tv;
  }
  uint64_t offset = 0;
  uint32_t d = member(n, "data", false);
  if (d == kNone) {
    if (size.bytes > 0)
      fail(ErrorKind::InvalidModel, who + " has " + to_string(size.count) + " elements and no data", n);
  } else {
    Descend dd(c_, ".data", false, -1);
    expect(d, JKind::Object);
    const int64_t off = int_field(d, "offset", true), len = int_field(d, "length", true);
    const uint32_t off_node = member(d, "offset", true), len_node = member(d, "length", true);
    if (off < 0 || len < 0 || static_cast<uint64_t>(off) > h_.data_length ||
        static_cast<uint64_t>(len) > h_.data_length - static_cast<uint64_t>(off)) {
      Descend e(c_, off < 0 || static_cast<uint64_t>(off) > h_.data_length ? ".offset" : ".length", false, -1);
      fail(ErrorKind::Malformed,
           who + ": bytes [" + to_string(off) + ", " + to_string(off) + "+" + to_string(len) +
               ") are outside the data region of " + to_string(h_.data_length) + " bytes",
           off < 0 ? off_node : len_node);
    }
    if (static_cast<uint64_t>(len) != size.bytes) {
      Descend e(c_, ".length", false, -1);
      fail(ErrorKind::InvalidModel, who + " has " + to_string(len) + " bytes, expected " + to_string(size.bytes),
           len_node);
    }
    if (len > 0 && off % static_cast<int64_t>(kAlign) != 0) {
      Descend e(c_, ".offset", false, -1);
      fail(ErrorKind::Malformed, who + ": offset " + to_string(off) + " is not a multiple of 64", off_node);
    }
    offset = static_cast<uint64_t>(off);
  }
  // A view into the file: mapped (or read) once, used in place (format.md section 5); bytes the caller keeps
  // only for the load are copied out (ImportState::copy_raw).
  onnx::attach_tensor_bytes(st_, *tv, onnx::input_bytes(st_, h_.data_offset + offset, size.bytes), at(n));
  return tv;
}

std::shared_ptr<ir::SparseTensorValue> Reader::sparse(uint32_t n) {
  expect(n, JKind::Object);
  auto sv = std::make_shared<ir::SparseTensorValue>();
  object_field(n, "values", true, [&](uint32_t v) { sv->values = std::move(*tensor(v)); });
  object_field(n, "indices", true, [&](uint32_t v) { sv->indices = std::move(*tensor(v)); });
  sv->dims = ints(n, "dims", false);
  return sv;
}

// Section 2.4: `type` decides the JSON form of `value`.
ir::Attribute Reader::attribute(uint32_t n, std::vector<ParsedSubgraph>& subs, size_t attr_index) {
  using T = ir::AttrType;
  expect(n, JKind::Object);
  ir::Attribute a;
  a.name = string_field(n, "name", true);
  (void)string_field(n, "doc");
  a.ref_attr_name = string_field(n, "ref");
  int32_t code = 0;
  object_field(n, "type", true, [&](uint32_t t) {
    code = as_code(t);
    if (code < 0 || code > 14)
      fail(ErrorKind::Unsupported, "attribute '" + a.name + "' has unknown type " + to_string(code), t);
    if (code == 0 && a.ref_attr_name.empty())
      fail(ErrorKind::InvalidModel, "attribute '" + a.name + "' has type 0 (undefined)", t);
  });
  a.type = static_cast<T>(code);
  if (!a.ref_attr_name.empty()) return a;  // a reference to a function attribute carries no value
  const uint32_t v = member(n, "value", true);
  Descend d(c_, ".value", false, -1);
  auto array = [&](auto&& f) {
    expect(v, JKind::Array);
    size_t k = 0;
    for (uint32_t i = j_.first(v); i != j_.end(v); i = j_.next(i), ++k) {
      Descend e(c_, "[" + to_string(k) + "]", false, -1);
      f(i, k);
    }
  };
  switch (a.type) {
    case T::Float: a.f = as_float_bits(v); break;
    case T::Int: a.i = as_int(v); break;
    case T::String: a.s = as_bytes(v); break;
    case T::Tensor: a.t = tensor(v); break;
    case T::Graph: subs.push_back({attr_index, -1, graph(v)}); break;
    case T::Floats: array([&](uint32_t i, size_t) { a.floats.push_back(as_float_bits(i)); }); break;
    case T::Ints: array([&](uint32_t i, size_t) { a.ints.push_back(as_int(i)); }); break;
    case T::Strings: array([&](uint32_t i, size_t) { a.strings.push_back(as_bytes(i)); }); break;
    case T::Tensors: array([&](uint32_t i, size_t) { a.tensors.push_back(tensor(i)); }); break;
    case T::Graphs:
      array([&](uint32_t i, size_t k) { subs.push_back({attr_index, static_cast<int>(k), graph(i)}); });
      a.graphs.resize(j_.count(v));
      break;
    case T::SparseTensor: a.sparse_tensor = sparse(v); break;
    case T::SparseTensors: array([&](uint32_t i, size_t) { a.sparse_tensors.push_back(sparse(i)); }); break;
    case T::TypeProto: a.tp = type_ptr(v); break;
    case T::TypeProtos: array([&](uint32_t i, size_t) { a.type_protos.push_back(type_ptr(i)); }); break;
    case T::Undefined: break;
  }
  return a;
}

// Section 2.3. Attribute errors name the node, as the ONNX importer's do.
ParsedNode Reader::node(uint32_t n) {
  expect(n, JKind::Object);
  ParsedNode pn;
  pn.path = c_.path();
  pn.offset = at(n);
  pn.node.name = string_field(n, "name");
  pn.node.op_type = string_field(n, "op", true);
  pn.node.domain = string_field(n, "domain");
  pn.node.overload = string_field(n, "overload");
  pn.node.doc_string = string_field(n, "doc");
  pn.inputs = strings(n, "inputs");
  pn.outputs = strings(n, "outputs");
  try {
    each(n, "attributes", false,
         [&](uint32_t a, size_t k) { pn.node.attributes.push_back(attribute(a, pn.subgraphs, k)); });
  } catch (Error& e) {
    if (e.node().empty()) e.with_node(pn.node.name.empty() ? pn.node.op_type : pn.node.name);
    throw;
  }
  return pn;
}

onnx::ParsedValueInfo Reader::typed_name(uint32_t n) {
  expect(n, JKind::Object);
  onnx::ParsedValueInfo v;
  v.path = c_.path();
  v.offset = at(n);
  v.name = string_field(n, "name", true);
  object_field(n, "type", false, [&](uint32_t t) { type(t, v.type); });
  return v;
}

// Section 2.2; a graph costs one nesting level.
std::unique_ptr<ParsedGraph> Reader::graph(uint32_t n) {
  Level level(*this, n);
  expect(n, JKind::Object);
  auto g = std::make_unique<ParsedGraph>();
  g->path = c_.path();
  g->offset = at(n);
  g->name = string_field(n, "name");
  g->doc_string = string_field(n, "doc");
  each(n, "inputs", false, [&](uint32_t i, size_t) { g->inputs.push_back(typed_name(i)); });
  each(n, "outputs", false, [&](uint32_t i, size_t) { g->outputs.push_back(typed_name(i)); });
  each(n, "value_info", false, [&](uint32_t i, size_t) { g->value_info.push_back(typed_name(i)); });
  each(n, "initializers", false, [&](uint32_t i, size_t) { g->initializers.push_back({tensor(i), c_.path(), at(i)}); });
  each(n, "sparse_initializers", false, [&](uint32_t i, size_t) {
    g->sparse_initializers.push_back({sparse(i), c_.path(), at(i)});
  });
  each(n, "nodes", false, [&](uint32_t i, size_t) { g->nodes.push_back(node(i)); });
  return g;
}

std::vector<ir::OpsetImport> Reader::opsets(uint32_t obj) {
  std::vector<ir::OpsetImport> out;
  each(obj, "opsets", false, [&](uint32_t o, size_t) {
    expect(o, JKind::Object);
    ir::OpsetImport op;
    op.domain = string_field(o, "domain");
    op.version = int_field(o, "version");
    if (op.domain == "ai.onnx") op.domain.clear();
    out.push_back(std::move(op));
  });
  return out;
}

// Section 2.8: carried as written, finished by the ONNX importer's own function step.
ir::Function Reader::function(uint32_t n, const ir::Model& m) {
  expect(n, JKind::Object);
  ir::Function fn;
  fn.name = string_field(n, "name");
  fn.domain = string_field(n, "domain");
  fn.overload = string_field(n, "overload");
  fn.doc_string = string_field(n, "doc");
  fn.inputs = strings(n, "inputs");
  fn.outputs = strings(n, "outputs");
  fn.attributes = strings(n, "attribute_names");
  std::vector<ParsedSubgraph> default_subs;
  each(n, "attribute_defaults", false,
       [&](uint32_t a, size_t k) { fn.attribute_defaults.push_back(attribute(a, default_subs, k)); });
  std::vector<ParsedNode> nodes;
  each(n, "nodes", false, [&](uint32_t i, size_t) { nodes.push_back(node(i)); });
  fn.opset_imports = opsets(n);
  onnx::finish_function(st_, m, fn, nodes, default_subs);
  return fn;
}

void Reader::model(ir::Model& m, std::unique_ptr<ParsedGraph>& g) {
  const uint32_t root = 0;
  expect(root, JKind::Object);
  if (string_field(root, "format", true) != "onemodel") {
    Descend d(c_, ".format", false, -1);
    fail(ErrorKind::Malformed, "field 'format' is not \"onemodel\"", member(root, "format", true));
  }
  if (int64_t v = int_field(root, "version", true); v != h_.version) {
    Descend d(c_, ".version", false, -1);
    fail(ErrorKind::Malformed,
         "manifest version " + to_string(v) + " differs from the header's " + to_string(h_.version),
         member(root, "version", true));
  }
  m.ir_version = int_field(root, "ir_version", true);
  if (m.ir_version < 3) {
    Descend d(c_, ".ir_version", false, -1);
    fail(ErrorKind::InvalidModel, "ir_version " + to_string(m.ir_version) + " is older than 3",
         member(root, "ir_version", true));
  }
  m.producer_name = string_field(root, "producer_name");
  m.producer_version = string_field(root, "producer_version");
  m.domain = string_field(root, "domain");
  m.doc_string = string_field(root, "doc");
  m.model_version = int_field(root, "model_version");
  m.opset_imports = opsets(root);
  each(root, "metadata", false, [&](uint32_t e, size_t) {
    expect(e, JKind::Object);
    m.metadata_props.emplace_back(string_field(e, "key"), string_field(e, "value"));
  });
  object_field(root, "graph", true, [&](uint32_t n) { g = graph(n); });
  each(root, "functions", false, [&](uint32_t f, size_t) { m.functions.push_back(function(f, m)); });
}

}  // namespace

void read_manifest(onnx::ImportState& st, const Json& json, const Header& header, ir::Model& model,
                   std::unique_ptr<onnx::ParsedGraph>& graph) {
  Reader(st, json, header).model(model, graph);
}

}  // namespace onemodel::format
