#include "onnx/writer.h"

#include <cstring>

namespace onemodel::onnx {
namespace {

// A protobuf message being written: fields append to `out` in the order the caller writes them (callers write in
// field-number order; docs/model-building.md section 5).
class Out {
 public:
  void varint(uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<char>(v));
  }
  void key(uint32_t field, int wire) { varint((static_cast<uint64_t>(field) << 3) | static_cast<uint32_t>(wire)); }
  void int_field(uint32_t field, int64_t v) {
    key(field, 0);
    varint(static_cast<uint64_t>(v));
  }
  void bytes_field(uint32_t field, std::string_view s) {
    key(field, 2);
    varint(s.size());
    out_.append(s.data(), s.size());
  }
  void string_if(uint32_t field, const std::string& s) {
    if (!s.empty()) bytes_field(field, s);
  }
  void float_field(uint32_t field, float f) {
    key(field, 5);
    fixed32(f);
  }
  void packed_ints(uint32_t field, const std::vector<int64_t>& v) {
    if (v.empty()) return;
    Out body;
    for (int64_t x : v) body.varint(static_cast<uint64_t>(x));
    bytes_field(field, body.out_);
  }
  void packed_floats(uint32_t field, const std::vector<float>& v) {
    if (v.empty()) return;
    Out body;
    for (float x : v) body.fixed32(x);
    bytes_field(field, body.out_);
  }
  void message(uint32_t field, const Out& m) { bytes_field(field, m.out_); }
  std::string take() { return std::move(out_); }

 private:
  void fixed32(float f) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    for (int i = 0; i < 4; ++i) out_.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
  }
  std::string out_;
};

[[noreturn]] void refuse(const std::string& what) {
  throw Error(ErrorKind::Unsupported, "the ONNX writer cannot write " + what);
}

Out tensor(const ir::TensorValue& t) {  // TensorProto
  Out m;
  m.packed_ints(1, t.dims);
  m.int_field(2, static_cast<int32_t>(t.dtype));
  for (const std::string& s : t.strings) m.bytes_field(6, s);
  m.string_if(8, t.name);
  if (t.dtype != DType::String) {
    if (!t.data.empty()) {
      Tensor c = t.data.contiguous();
      m.bytes_field(9, std::string_view(static_cast<const char*>(c.raw()), c.nbytes()));
    } else if (t.raw.data) {
      m.bytes_field(9, std::string_view(reinterpret_cast<const char*>(t.raw.data.get()), t.raw.bytes));
    } else {
      m.bytes_field(9, {});
    }
  }
  m.string_if(12, t.doc_string);
  return m;
}

Out shape_proto(const ir::TypeInfo& t) {  // TensorShapeProto
  Out shape;
  for (const Dim& d : t.dims) {
    Out dim;
    if (d.is_fixed())
      dim.int_field(1, d.value);
    else
      dim.string_if(2, d.param);
    shape.message(1, dim);
  }
  return shape;
}

Out type_proto(const ir::TypeInfo& t, const std::string& where) {  // TypeProto
  Out m;
  Out body;
  switch (t.kind) {
    case ValueKind::Unknown: return m;
    case ValueKind::Tensor:
    case ValueKind::SparseTensor:
      body.int_field(1, static_cast<int32_t>(t.elem));
      if (t.has_shape) body.message(2, shape_proto(t));
      m.message(t.kind == ValueKind::Tensor ? 1 : 8, body);
      return m;
    case ValueKind::Sequence:
    case ValueKind::Optional:
      if (t.inner) body.message(1, type_proto(*t.inner, where));
      m.message(t.kind == ValueKind::Sequence ? 4 : 9, body);
      return m;
    case ValueKind::Map:
      body.int_field(1, static_cast<int32_t>(t.map_key));
      if (t.inner) body.message(2, type_proto(*t.inner, where));
      m.message(5, body);
      return m;
    default: refuse("the type of " + where);
  }
}

Out value_info(const ir::Value& v) {  // ValueInfoProto
  Out m;
  m.bytes_field(1, v.name);
  if (v.type.kind != ValueKind::Unknown) m.message(2, type_proto(v.type, "value '" + v.name + "'"));
  return m;
}

Out graph_attribute(const ir::Attribute& a, const ir::Node& n);

Out attribute(const ir::Attribute& a, const ir::Node& n) {  // AttributeProto
  const std::string& node = n.name;
  Out m;
  m.bytes_field(1, a.name);
  switch (a.type) {
    case ir::AttrType::Float: m.float_field(2, a.f); break;
    case ir::AttrType::Int: m.int_field(3, a.i); break;
    case ir::AttrType::String: m.bytes_field(4, a.s); break;
    case ir::AttrType::Tensor:
      if (!a.t) refuse("attribute '" + a.name + "' of node '" + node + "' without its tensor");
      m.message(5, tensor(*a.t));
      break;
    case ir::AttrType::Graph: m.message(6, graph_attribute(a, n)); break;
    case ir::AttrType::Floats: m.packed_floats(7, a.floats); break;
    case ir::AttrType::Ints: m.packed_ints(8, a.ints); break;
    case ir::AttrType::Strings:
      for (const std::string& s : a.strings) m.bytes_field(9, s);
      break;
    case ir::AttrType::Tensors:
      for (const auto& t : a.tensors) m.message(10, tensor(*t));
      break;
    case ir::AttrType::Graphs:
      for (const auto& sub : a.graphs) {
        ir::Attribute one = a;
        one.g = sub;
        m.message(11, graph_attribute(one, n));
      }
      break;
    default: refuse("attribute '" + a.name + "' of node '" + node + "' (graphs, sparse tensors and types)");
  }
  m.int_field(20, static_cast<int>(a.type));
  return m;
}

std::string value_name(const ir::Graph& g, int id) { return id == ir::kNoValue ? std::string() : g.values[id].name; }

Out graph(const ir::Graph& g);

Out graph_attribute(const ir::Attribute& a, const ir::Node& n) {
  if (!a.g) refuse("attribute '" + a.name + "' of node '" + n.name + "' without its graph");
  return graph(*a.g);
}

Out graph(const ir::Graph& g) {  // GraphProto; captured outer values are read by name and declared nowhere
  Out m;
  for (const ir::Node& n : g.nodes) {
    Out node;
    for (int v : n.inputs) node.bytes_field(1, value_name(g, v));
    for (int v : n.outputs) node.bytes_field(2, value_name(g, v));
    node.string_if(3, n.name);
    node.bytes_field(4, n.op_type);
    for (const ir::Attribute& a : n.attributes) node.message(5, attribute(a, n));
    node.string_if(6, n.doc_string);
    node.string_if(7, n.domain);
    m.message(1, node);
  }
  m.bytes_field(2, g.name);
  for (int v : g.initializers) {
    const ir::Value& val = g.values[v];
    if (!val.initializer) refuse("initializer '" + val.name + "' without its tensor");
    ir::TensorValue t = *val.initializer;
    t.name = val.name;
    m.message(5, tensor(t));
  }
  m.string_if(10, g.doc_string);
  for (int v : g.inputs) m.message(11, value_info(g.values[v]));
  for (int v : g.outputs) m.message(12, value_info(g.values[v]));
  // value_info: the declared types of every other value (intermediates), in value order.
  std::vector<bool> listed(g.values.size(), false);
  for (int v : g.inputs) listed[v] = true;
  for (int v : g.outputs) listed[v] = true;
  for (size_t v = 0; v < g.values.size(); ++v) {
    const ir::Value& val = g.values[v];
    if (val.sparse_initializer) refuse("sparse initializer '" + val.name + "'");
    if (!listed[v] && !val.is_capture && !val.initializer && val.type.kind != ValueKind::Unknown)
      m.message(13, value_info(val));
  }
  return m;
}

}  // namespace

std::string write_model(const ir::Model& model) {
  if (!model.graph) refuse("a model without a graph");
  if (!model.functions.empty()) refuse("model-local functions");
  Out m;  // ModelProto
  m.int_field(1, model.ir_version);
  m.string_if(2, model.producer_name);
  m.string_if(3, model.producer_version);
  m.string_if(4, model.domain);
  if (model.model_version != 0) m.int_field(5, model.model_version);
  m.string_if(6, model.doc_string);
  m.message(7, graph(*model.graph));
  for (const ir::OpsetImport& o : model.opset_imports) {
    Out op;
    op.string_if(1, o.domain);
    op.int_field(2, o.version);
    m.message(8, op);
  }
  for (const auto& [k, v] : model.metadata_props) {
    Out e;
    e.bytes_field(1, k);
    e.bytes_field(2, v);
    m.message(14, e);
  }
  return m.take();
}

}  // namespace onemodel::onnx
