// The writer (format.md section 4): one pass places every distinct tensor in the data region in the order
// of section 1.3, a second writes the manifest (no insignificant whitespace, fields in the order of
// section 2's tables), then header, manifest, padding and tensors go out. Nothing depends on addresses,
// clocks or hash order, so equal models give equal bytes. Nodes are written in their file order
// (Node::file_index) so that reading resolves them exactly as the ONNX file did.
#include <algorithm>
#include "base/bits.h"
#include <cstring>
#include <fstream>
#include <functional>
#include <map>

#include "format/format.h"
#include "format/header.h"
#include "format/json.h"

namespace onemodel::format {
namespace {

// Compact JSON text: a separator is written before every value that is not the first in its container.
class JsonOut {
 public:
  std::string s;
  void open(char c) {
    sep();
    s += c;
    first_ = true;
  }
  void close(char c) {
    s += c;
    first_ = false;
  }
  void key(std::string_view k) {
    sep();
    append_json_string(s, k);
    s += ':';
    first_ = true;
  }
  void str(std::string_view v) {
    sep();
    append_json_string(s, v);
  }
  void num(int64_t v) {
    sep();
    s += std::to_string(v);
  }
  void null() {
    sep();
    s += "null";
  }
  void field(std::string_view k, std::string_view v) {
    key(k);
    str(v);
  }
  void field(std::string_view k, int64_t v) {
    key(k);
    num(v);
  }
  void field_if(std::string_view k, std::string_view v) {  // optional strings only when non-empty
    if (!v.empty()) field(k, v);
  }
  template <class C, class F>
  void array(std::string_view k, const C& items, F&& f) {
    key(k);
    open('[');
    for (const auto& x : items) f(x);
    close(']');
  }

 private:
  void sep() {
    if (!first_) s += ',';
    first_ = false;
  }
  bool first_ = true;
};

struct Placed {
  uint64_t offset = 0, length = 0;
  const std::byte* bytes = nullptr;
};

class Writer {
 public:
  explicit Writer(const ir::Model& m) : m_(m) {}

  // Places the tensors, writes the manifest; then emit() streams the file to `sink`.
  void layout();
  void emit(const std::function<void(const void*, size_t)>& sink) const;
  uint64_t file_length() const { return data_offset_ + data_length_; }

 private:
  static std::vector<size_t> file_order(const ir::Graph& g) {
    std::vector<size_t> order(g.nodes.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    // An index tiebreak rather than std::stable_sort: GCC 12's temporary buffer trips ASan's alloc-dealloc check.
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      const auto fa = g.nodes[a].file_index, fb = g.nodes[b].file_index;
      return fa != fb ? fa < fb : a < b;
    });
    return order;
  }

  void place(const ir::TensorValue& t);
  void place_attributes(const std::vector<ir::Attribute>& attrs);
  void place_graph(const ir::Graph& g);

  void type(const ir::TypeInfo& t);
  void tensor(const ir::TensorValue& t);
  void sparse(const ir::SparseTensorValue& s);
  void attribute(const ir::Attribute& a);
  void node(const ir::Node& n, const std::vector<std::string>& inputs, const std::vector<std::string>& outputs);
  void graph(const ir::Graph& g);
  void opsets(const std::vector<ir::OpsetImport>& ops);
  void function(const ir::Function& f);

  const ir::Model& m_;
  std::map<const ir::TensorValue*, Placed> placed_;
  std::vector<const Placed*> order_;
  std::vector<Tensor> keep_;  // contiguous copies of any non-contiguous tensor data
  uint64_t data_length_ = 0, data_offset_ = 0;
  JsonOut j_;
};

// Each distinct tensor gets its own 64-byte-aligned bytes (section 1.3); strings live in the manifest.
void Writer::place(const ir::TensorValue& t) {
  if (t.dtype == DType::String || placed_.count(&t)) return;
  Placed p;
  if (!t.data.empty()) {
    Tensor c = t.data.contiguous();
    if (c.storage().data != t.data.storage().data) keep_.push_back(c);
    p.bytes = static_cast<const std::byte*>(c.raw());
    p.length = c.nbytes();
  } else if (t.raw.data) {
    p.bytes = t.raw.data.get();
    p.length = t.raw.bytes;
  }
  if (p.length > 0) {
    p.offset = align_up(data_length_);
    data_length_ = p.offset + p.length;
  }
  order_.push_back(&placed_.emplace(&t, p).first->second);
}

void Writer::place_attributes(const std::vector<ir::Attribute>& attrs) {
  for (const ir::Attribute& a : attrs) {
    if (a.t) place(*a.t);
    for (const auto& t : a.tensors) place(*t);
    if (a.sparse_tensor) place(a.sparse_tensor->values), place(a.sparse_tensor->indices);
    for (const auto& s : a.sparse_tensors) place(s->values), place(s->indices);
    if (a.g) place_graph(*a.g);
    for (const auto& g : a.graphs)
      if (g) place_graph(*g);
  }
}

void Writer::place_graph(const ir::Graph& g) {
  for (int id : g.initializers) place(*g.values[static_cast<size_t>(id)].initializer);
  for (const ir::Value& v : g.values)
    if (v.sparse_initializer) place(v.sparse_initializer->values), place(v.sparse_initializer->indices);
  for (size_t k : file_order(g)) place_attributes(g.nodes[k].attributes);
}

// Section 2.7; "no type" is an object without `kind`.
void Writer::type(const ir::TypeInfo& t) {
  j_.open('{');
  switch (t.kind) {
    case ValueKind::Tensor:
    case ValueKind::SparseTensor:
      j_.field("kind", t.kind == ValueKind::Tensor ? "tensor" : "sparse_tensor");
      j_.field("elem", static_cast<int64_t>(t.elem));
      if (t.has_shape)
        j_.array("shape", t.dims, [&](const Dim& d) {
          if (d.value >= 0)
            j_.num(d.value);
          else if (!d.param.empty())
            j_.str(d.param);
          else
            j_.null();
        });
      break;
    case ValueKind::Sequence:
    case ValueKind::Optional:
    case ValueKind::Map:
      j_.field("kind", t.kind == ValueKind::Sequence ? "sequence" : t.kind == ValueKind::Optional ? "optional" : "map");
      if (t.kind == ValueKind::Map) j_.field("key", static_cast<int64_t>(t.map_key));
      if (t.inner) {
        j_.key("inner");
        type(*t.inner);
      }
      break;
    case ValueKind::Opaque: j_.field("kind", "opaque"); break;
    case ValueKind::Unknown: break;
  }
  j_.close('}');
}

void Writer::tensor(const ir::TensorValue& t) {
  j_.open('{');
  j_.field("name", t.name);
  j_.field("dtype", static_cast<int64_t>(t.dtype));
  j_.array("dims", t.dims, [&](int64_t d) { j_.num(d); });
  j_.field_if("doc", t.doc_string);
  if (t.dtype == DType::String) {
    j_.array("strings", t.strings, [&](const std::string& s) { j_.str(base64_encode(s)); });
  } else {
    const Placed& p = placed_.at(&t);
    j_.key("data");
    j_.open('{');
    j_.field("offset", static_cast<int64_t>(p.offset));
    j_.field("length", static_cast<int64_t>(p.length));
    j_.close('}');
  }
  j_.close('}');
}

void Writer::sparse(const ir::SparseTensorValue& s) {
  j_.open('{');
  j_.key("values");
  tensor(s.values);
  j_.key("indices");
  tensor(s.indices);
  j_.array("dims", s.dims, [&](int64_t d) { j_.num(d); });
  j_.close('}');
}

// Section 2.4: floats as their bit patterns, bytes as base64.
void Writer::attribute(const ir::Attribute& a) {
  using T = ir::AttrType;
  auto bits = [](float f) { return static_cast<int64_t>(float_bits(f)); };
  j_.open('{');
  j_.field("name", a.name);
  j_.field("type", static_cast<int64_t>(a.type));
  if (!a.ref_attr_name.empty()) {
    j_.field("ref", a.ref_attr_name);
    j_.close('}');
    return;
  }
  j_.key("value");
  switch (a.type) {
    case T::Float: j_.num(bits(a.f)); break;
    case T::Int: j_.num(a.i); break;
    case T::String: j_.str(base64_encode(a.s)); break;
    case T::Tensor: tensor(*a.t); break;
    case T::Graph: graph(*a.g); break;
    case T::Floats:
      j_.open('[');
      for (float f : a.floats) j_.num(bits(f));
      j_.close(']');
      break;
    case T::Ints:
      j_.open('[');
      for (int64_t v : a.ints) j_.num(v);
      j_.close(']');
      break;
    case T::Strings:
      j_.open('[');
      for (const auto& s : a.strings) j_.str(base64_encode(s));
      j_.close(']');
      break;
    case T::Tensors:
      j_.open('[');
      for (const auto& t : a.tensors) tensor(*t);
      j_.close(']');
      break;
    case T::Graphs:
      j_.open('[');
      for (const auto& g : a.graphs) graph(*g);
      j_.close(']');
      break;
    case T::SparseTensor: sparse(*a.sparse_tensor); break;
    case T::SparseTensors:
      j_.open('[');
      for (const auto& s : a.sparse_tensors) sparse(*s);
      j_.close(']');
      break;
    case T::TypeProto: type(*a.tp); break;
    case T::TypeProtos:
      j_.open('[');
      for (const auto& t : a.type_protos) type(*t);
      j_.close(']');
      break;
    case T::Undefined: j_.null(); break;  // never imported: the importer refuses it
  }
  j_.close('}');
}

void Writer::node(const ir::Node& n, const std::vector<std::string>& inputs, const std::vector<std::string>& outputs) {
  j_.open('{');
  j_.field("name", n.name);
  j_.field("op", n.op_type);
  j_.field("domain", n.domain);
  j_.field("overload", n.overload);
  j_.field_if("doc", n.doc_string);
  j_.array("inputs", inputs, [&](const std::string& s) { j_.str(s); });
  j_.array("outputs", outputs, [&](const std::string& s) { j_.str(s); });
  j_.array("attributes", n.attributes, [&](const ir::Attribute& a) { attribute(a); });
  j_.close('}');
}

// A resolved graph back to names. Every value's final type is declared where resolution reads it first:
// inputs and outputs on their entries, every other defined value in value_info; captures take theirs from
// the enclosing graph, as before.
void Writer::graph(const ir::Graph& g) {
  auto name_of = [&](int id) { return id == ir::kNoValue ? std::string() : g.values[static_cast<size_t>(id)].name; };
  auto typed_name = [&](int id) {
    const ir::Value& v = g.values[static_cast<size_t>(id)];
    j_.open('{');
    j_.field("name", v.name);
    if (v.type.kind != ValueKind::Unknown) {
      j_.key("type");
      type(v.type);
    }
    j_.close('}');
  };
  std::vector<bool> is_output(g.values.size(), false);
  for (int id : g.outputs) is_output[static_cast<size_t>(id)] = true;
  std::vector<int> value_info, sparse_ids;
  for (size_t k = 0; k < g.values.size(); ++k) {
    const ir::Value& v = g.values[k];
    if (!v.is_input && !v.is_capture && !is_output[k] && v.type.kind != ValueKind::Unknown)
      value_info.push_back(static_cast<int>(k));
    if (v.sparse_initializer) sparse_ids.push_back(static_cast<int>(k));
  }
  j_.open('{');
  j_.field_if("name", g.name);
  j_.field_if("doc", g.doc_string);
  j_.array("inputs", g.inputs, typed_name);
  j_.array("outputs", g.outputs, typed_name);
  j_.array("value_info", value_info, typed_name);
  j_.array("initializers", g.initializers, [&](int id) { tensor(*g.values[static_cast<size_t>(id)].initializer); });
  j_.array("sparse_initializers", sparse_ids,
           [&](int id) { sparse(*g.values[static_cast<size_t>(id)].sparse_initializer); });
  j_.array("nodes", file_order(g), [&](size_t k) {
    const ir::Node& n = g.nodes[k];
    std::vector<std::string> ins, outs;
    for (int id : n.inputs) ins.push_back(name_of(id));
    for (int id : n.outputs) outs.push_back(name_of(id));
    node(n, ins, outs);
  });
  j_.close('}');
}

void Writer::opsets(const std::vector<ir::OpsetImport>& ops) {
  j_.array("opsets", ops, [&](const ir::OpsetImport& o) {
    j_.open('{');
    j_.field("domain", o.domain);
    j_.field("version", o.version);
    j_.close('}');
  });
}

void Writer::function(const ir::Function& f) {
  j_.open('{');
  j_.field("name", f.name);
  j_.field("domain", f.domain);
  j_.field("overload", f.overload);
  j_.field_if("doc", f.doc_string);
  j_.array("inputs", f.inputs, [&](const std::string& s) { j_.str(s); });
  j_.array("outputs", f.outputs, [&](const std::string& s) { j_.str(s); });
  j_.array("attribute_names", f.attributes, [&](const std::string& s) { j_.str(s); });
  j_.array("attribute_defaults", f.attribute_defaults, [&](const ir::Attribute& a) { attribute(a); });
  j_.key("nodes");
  j_.open('[');
  for (size_t k = 0; k < f.nodes.size(); ++k) node(f.nodes[k], f.node_inputs[k], f.node_outputs[k]);
  j_.close(']');
  opsets(f.opset_imports);
  j_.close('}');
}

void Writer::layout() {
  place_graph(*m_.graph);
  for (const ir::Function& f : m_.functions) {
    for (const ir::Node& n : f.nodes) place_attributes(n.attributes);
    place_attributes(f.attribute_defaults);
  }
  j_.open('{');
  j_.field("format", "onemodel");
  j_.field("version", static_cast<int64_t>(kVersion));
  j_.field("ir_version", m_.ir_version);
  j_.field_if("producer_name", m_.producer_name);
  j_.field_if("producer_version", m_.producer_version);
  j_.field_if("domain", m_.domain);
  j_.field_if("doc", m_.doc_string);
  j_.field("model_version", m_.model_version);
  opsets(m_.opset_imports);
  if (!m_.metadata_props.empty())
    j_.array("metadata", m_.metadata_props, [&](const std::pair<std::string, std::string>& kv) {
      j_.open('{');
      j_.field("key", kv.first);
      j_.field("value", kv.second);
      j_.close('}');
    });
  j_.key("graph");
  graph(*m_.graph);
  if (!m_.functions.empty()) j_.array("functions", m_.functions, [&](const ir::Function& f) { function(f); });
  j_.close('}');
  data_offset_ = align_up(kHeaderBytes + j_.s.size());
}

void Writer::emit(const std::function<void(const void*, size_t)>& sink) const {
  static const std::byte zeros[kAlign] = {};
  std::byte header[kHeaderBytes];
  write_header(header, j_.s.size(), data_offset_, data_length_);
  sink(header, kHeaderBytes);
  sink(j_.s.data(), j_.s.size());
  sink(zeros, static_cast<size_t>(data_offset_ - kHeaderBytes - j_.s.size()));
  uint64_t at = 0;
  for (const Placed* p : order_) {
    if (p->length == 0) continue;
    sink(zeros, static_cast<size_t>(p->offset - at));
    sink(p->bytes, static_cast<size_t>(p->length));
    at = p->offset + p->length;
  }
}

}  // namespace

std::vector<std::byte> write_bytes(const ir::Model& model) {
  Writer w(model);
  w.layout();
  std::vector<std::byte> out;
  out.reserve(static_cast<size_t>(w.file_length()));
  w.emit([&](const void* p, size_t n) {
    const auto* b = static_cast<const std::byte*>(p);
    out.insert(out.end(), b, b + n);
  });
  return out;
}

void write_file(const ir::Model& model, const std::filesystem::path& path) {
  Writer w(model);
  w.layout();
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw Error(ErrorKind::Io, "cannot open '" + path.string() + "' for writing");
  w.emit([&](const void* p, size_t n) { f.write(static_cast<const char*>(p), static_cast<std::streamsize>(n)); });
  f.close();
  if (!f) throw Error(ErrorKind::Io, "writing '" + path.string() + "' failed");
}

}  // namespace onemodel::format
