// ModelProto, GraphProto, NodeProto, AttributeProto, ValueInfoProto, TypeProto and FunctionProto
// (onnx-import.md section 2). Each parser reads the fields it knows, skips the rest, and lets the last
// occurrence of a singular field win. Every nested message costs one nesting level (Descend).
#include "onnx/proto.h"

namespace onemodel::onnx {
namespace {

using std::to_string;
int64_t at(const Field& f) { return static_cast<int64_t>(f.key_offset); }
std::string idx(const char* name, size_t i) { return std::string(".") + name + "[" + to_string(i) + "]"; }

void parse_type(ImportState& st, size_t begin, size_t end, ir::TypeInfo& out);

void parse_shape(ImportState& st, size_t begin, size_t end, std::vector<Dim>& dims) {
  Reader r(st.ctx, begin, end);
  Field f;
  while (r.next(f)) {
    if (f.number != 1 || f.wire != WireType::Len) continue;
    Descend d(st.ctx, idx("dim", dims.size()), true, at(f));
    Dim dim;
    Reader rd(st.ctx, f.begin, f.end);
    Field g;
    while (rd.next(g)) {  // dim_value / dim_param are a oneof: the last one set wins
      if (g.number == 1 && g.wire == WireType::Varint) {
        dim.value = Reader::as_int64(g);
        dim.param.clear();
        if (dim.value < 0) dim.value = -1;  // a negative extent carries no information
      } else if (g.number == 2 && g.wire == WireType::Len) {
        dim.param = rd.string(g);
        dim.value = -1;
      }
    }
    dims.push_back(std::move(dim));
  }
}

// TypeProto.Tensor / SparseTensor: elem_type 1, shape 2.
void parse_tensor_type(ImportState& st, size_t begin, size_t end, ir::TypeInfo& out) {
  Reader r(st.ctx, begin, end);
  Field f;
  while (r.next(f)) {
    if (f.number == 1 && f.wire == WireType::Varint) {
      out.elem = static_cast<DType>(Reader::as_int32(f));
    } else if (f.number == 2 && f.wire == WireType::Len) {
      Descend d(st.ctx, ".shape", true, at(f));
      out.has_shape = true;
      out.dims.clear();
      parse_shape(st, f.begin, f.end, out.dims);
    }
  }
}

// Sequence / Optional: elem_type 1. Map: key_type 1, value_type 2.
void parse_inner(ImportState& st, size_t begin, size_t end, ir::TypeInfo& out, bool is_map) {
  Reader r(st.ctx, begin, end);
  Field f;
  while (r.next(f)) {
    if (is_map && f.number == 1 && f.wire == WireType::Varint) {
      out.map_key = static_cast<DType>(Reader::as_int32(f));
    } else if (f.number == (is_map ? 2u : 1u) && f.wire == WireType::Len) {
      Descend d(st.ctx, is_map ? ".value_type" : ".elem_type", true, at(f));
      auto inner = std::make_shared<ir::TypeInfo>();
      parse_type(st, f.begin, f.end, *inner);
      out.inner = inner;
    }
  }
}

void parse_type(ImportState& st, size_t begin, size_t end, ir::TypeInfo& out) {
  Reader r(st.ctx, begin, end);
  Field f;
  while (r.next(f)) {
    if (f.wire != WireType::Len) continue;
    ir::TypeInfo t;  // the value oneof: the last member set wins
    switch (f.number) {
      case 1: {
        Descend d(st.ctx, ".tensor_type", true, at(f));
        t.kind = ValueKind::Tensor;
        parse_tensor_type(st, f.begin, f.end, t);
        break;
      }
      case 8: {
        Descend d(st.ctx, ".sparse_tensor_type", true, at(f));
        t.kind = ValueKind::SparseTensor;
        parse_tensor_type(st, f.begin, f.end, t);
        break;
      }
      case 4: {
        Descend d(st.ctx, ".sequence_type", true, at(f));
        t.kind = ValueKind::Sequence;
        parse_inner(st, f.begin, f.end, t, false);
        break;
      }
      case 9: {
        Descend d(st.ctx, ".optional_type", true, at(f));
        t.kind = ValueKind::Optional;
        parse_inner(st, f.begin, f.end, t, false);
        break;
      }
      case 5: {
        Descend d(st.ctx, ".map_type", true, at(f));
        t.kind = ValueKind::Map;
        parse_inner(st, f.begin, f.end, t, true);
        break;
      }
      case 7: {
        Descend d(st.ctx, ".opaque_type", true, at(f));
        t.kind = ValueKind::Opaque;
        Reader o(st.ctx, f.begin, f.end);
        Field g;
        while (o.next(g))
          if (g.wire == WireType::Len) (void)o.string(g);
        break;
      }
      default: continue;
    }
    out = std::move(t);
  }
}

ParsedValueInfo parse_value_info(ImportState& st, size_t begin, size_t end, int64_t offset) {
  ParsedValueInfo v;
  v.path = st.ctx.path();
  v.offset = offset;
  Reader r(st.ctx, begin, end);
  Field f;
  while (r.next(f)) {
    if (f.wire != WireType::Len) continue;
    if (f.number == 1) {
      v.name = r.string(f);
    } else if (f.number == 2) {
      Descend d(st.ctx, ".type", true, at(f));
      v.type = ir::TypeInfo{};
      parse_type(st, f.begin, f.end, v.type);
    }
  }
  return v;
}

std::unique_ptr<ParsedGraph> parse_graph(ImportState& st, size_t begin, size_t end, int64_t offset);

struct AttrFields {  // which fields were seen, for type inference
  bool f = false, i = false, s = false, t = false, g = false, sp = false, tp = false;
};

ir::Attribute parse_attribute(ImportState& st, size_t begin, size_t end, int64_t offset,
                              std::vector<ParsedSubgraph>& subs, size_t attr_index) {
  Context& c = st.ctx;
  ir::Attribute a;
  AttrFields seen;
  bool has_type = false;
  std::unique_ptr<ParsedGraph> g;
  std::vector<std::unique_ptr<ParsedGraph>> graphs;
  Reader r(c, begin, end);
  Field f;
  while (r.next(f)) {
    const bool len = f.wire == WireType::Len;
    switch (f.number) {
      case 1:
        if (len) a.name = r.string(f);
        break;
      case 2:
        if (f.wire == WireType::Fixed32) {
          a.f = Reader::as_float(f);
          seen.f = true;
        }
        break;
      case 3:
        if (f.wire == WireType::Varint) {
          a.i = Reader::as_int64(f);
          seen.i = true;
        }
        break;
      case 4:
        if (len) {
          a.s = r.bytes(f);
          seen.s = true;
        }
        break;
      case 5:
        if (len) {
          Descend d(c, ".t", true, at(f));
          a.t = parse_tensor(st, f.begin, f.end, at(f));
          seen.t = true;
        }
        break;
      case 6:
        if (len) {
          Descend d(c, ".g", true, at(f));
          g = parse_graph(st, f.begin, f.end, at(f));
          seen.g = true;
        }
        break;
      case 7: r.floats(f, a.floats); break;
      case 8: r.varints(f, a.ints); break;
      case 9:
        if (len) a.strings.push_back(r.bytes(f));
        break;
      case 10:
        if (len) {
          Descend d(c, idx("tensors", a.tensors.size()), true, at(f));
          a.tensors.push_back(parse_tensor(st, f.begin, f.end, at(f)));
        }
        break;
      case 11:
        if (len) {
          Descend d(c, idx("graphs", graphs.size()), true, at(f));
          graphs.push_back(parse_graph(st, f.begin, f.end, at(f)));
        }
        break;
      case 13: break;  // doc_string: a string field, still checked as UTF-8 by protobuf; not kept
      case 14:
        if (len) {
          Descend d(c, ".tp", true, at(f));
          a.tp = std::make_shared<ir::TypeInfo>();
          parse_type(st, f.begin, f.end, *a.tp);
          seen.tp = true;
        }
        break;
      case 15:
        if (len) {
          Descend d(c, idx("type_protos", a.type_protos.size()), true, at(f));
          auto t = std::make_shared<ir::TypeInfo>();
          parse_type(st, f.begin, f.end, *t);
          a.type_protos.push_back(t);
        }
        break;
      case 20:
        if (f.wire == WireType::Varint) {
          a.type = static_cast<ir::AttrType>(Reader::as_int32(f));
          has_type = true;
        }
        break;
      case 21:
        if (len) a.ref_attr_name = r.string(f);
        break;
      case 22:
        if (len) {
          Descend d(c, ".sparse_tensor", true, at(f));
          a.sparse_tensor = parse_sparse_tensor(st, f.begin, f.end, at(f));
          seen.sp = true;
        }
        break;
      case 23:
        if (len) {
          Descend d(c, idx("sparse_tensors", a.sparse_tensors.size()), true, at(f));
          a.sparse_tensors.push_back(parse_sparse_tensor(st, f.begin, f.end, at(f)));
        }
        break;
      default: break;
    }
    if (f.number == 13 && len) (void)r.string(f);
  }
  using T = ir::AttrType;
  const std::string who = "attribute '" + a.name + "'";
  if (!has_type || a.type == T::Undefined) {
    if (seen.f)
      a.type = T::Float;
    else if (seen.i)
      a.type = T::Int;
    else if (seen.s)
      a.type = T::String;
    else if (seen.t)
      a.type = T::Tensor;
    else if (seen.g)
      a.type = T::Graph;
    else if (seen.sp)
      a.type = T::SparseTensor;
    else if (seen.tp)
      a.type = T::TypeProto;
    else if (!a.floats.empty())
      a.type = T::Floats;
    else if (!a.ints.empty())
      a.type = T::Ints;
    else if (!a.strings.empty())
      a.type = T::Strings;
    else if (!a.tensors.empty())
      a.type = T::Tensors;
    else if (!graphs.empty())
      a.type = T::Graphs;
    else if (!a.sparse_tensors.empty())
      a.type = T::SparseTensors;
    else if (!a.type_protos.empty())
      a.type = T::TypeProtos;
    else if (a.ref_attr_name.empty())
      c.fail(ErrorKind::InvalidModel, who + " has neither a type nor a value", offset);
  } else if (static_cast<int>(a.type) < 0 || static_cast<int>(a.type) > 14) {
    c.fail(ErrorKind::InvalidModel, who + " has unknown type " + to_string(static_cast<int>(a.type)), offset);
  }
  if (a.ref_attr_name.empty()) {
    if ((a.type == T::Tensor && !seen.t) || (a.type == T::Graph && !seen.g) ||
        (a.type == T::SparseTensor && !seen.sp) || (a.type == T::TypeProto && !seen.tp))
      c.fail(ErrorKind::InvalidModel, who + " is declared with a type whose field is absent", offset);
  }
  if (g) subs.push_back({attr_index, -1, std::move(g)});
  for (size_t k = 0; k < graphs.size(); ++k) subs.push_back({attr_index, static_cast<int>(k), std::move(graphs[k])});
  a.graphs.resize(graphs.size());
  return a;
}

ParsedNode parse_node(ImportState& st, size_t begin, size_t end, int64_t offset) {
  ParsedNode n;
  n.path = st.ctx.path();
  n.offset = offset;
  std::vector<Field> attrs;  // parsed once the node's name is known, so their errors can name the node
  Reader r(st.ctx, begin, end);
  Field f;
  while (r.next(f)) {
    if (f.wire != WireType::Len) continue;
    switch (f.number) {
      case 1: n.inputs.push_back(r.string(f)); break;
      case 2: n.outputs.push_back(r.string(f)); break;
      case 3: n.node.name = r.string(f); break;
      case 4: n.node.op_type = r.string(f); break;
      case 5: attrs.push_back(f); break;
      case 6: n.node.doc_string = r.string(f); break;
      case 7: n.node.domain = r.string(f); break;
      case 8: n.node.overload = r.string(f); break;
      default: break;
    }
  }
  for (const Field& af : attrs) {
    size_t k = n.node.attributes.size();
    Descend d(st.ctx, idx("attribute", k), true, at(af));
    try {
      n.node.attributes.push_back(parse_attribute(st, af.begin, af.end, at(af), n.subgraphs, k));
    } catch (Error& e) {
      if (e.node().empty()) e.with_node(n.node.name.empty() ? n.node.op_type : n.node.name);
      throw;
    }
  }
  return n;
}

std::unique_ptr<ParsedGraph> parse_graph(ImportState& st, size_t begin, size_t end, int64_t offset) {
  auto g = std::make_unique<ParsedGraph>();
  g->path = st.ctx.path();
  g->offset = offset;
  Context& c = st.ctx;
  Reader r(c, begin, end);
  Field f;
  while (r.next(f)) {
    if (f.wire != WireType::Len) continue;
    switch (f.number) {
      case 1: {
        Descend d(c, idx("node", g->nodes.size()), true, at(f));
        g->nodes.push_back(parse_node(st, f.begin, f.end, at(f)));
        break;
      }
      case 2: g->name = r.string(f); break;
      case 5: {
        Descend d(c, idx("initializer", g->initializers.size()), true, at(f));
        g->initializers.push_back({parse_tensor(st, f.begin, f.end, at(f)), c.path(), at(f)});
        break;
      }
      case 10: g->doc_string = r.string(f); break;
      case 11: {
        Descend d(c, idx("input", g->inputs.size()), true, at(f));
        g->inputs.push_back(parse_value_info(st, f.begin, f.end, at(f)));
        break;
      }
      case 12: {
        Descend d(c, idx("output", g->outputs.size()), true, at(f));
        g->outputs.push_back(parse_value_info(st, f.begin, f.end, at(f)));
        break;
      }
      case 13: {
        Descend d(c, idx("value_info", g->value_info.size()), true, at(f));
        g->value_info.push_back(parse_value_info(st, f.begin, f.end, at(f)));
        break;
      }
      case 15: {
        Descend d(c, idx("sparse_initializer", g->sparse_initializers.size()), true, at(f));
        g->sparse_initializers.push_back({parse_sparse_tensor(st, f.begin, f.end, at(f)), c.path(), at(f)});
        break;
      }
      default: break;
    }
  }
  return g;
}

ir::OpsetImport parse_opset(ImportState& st, size_t begin, size_t end) {
  ir::OpsetImport o;
  Reader r(st.ctx, begin, end);
  Field f;
  while (r.next(f)) {
    if (f.number == 1 && f.wire == WireType::Len)
      o.domain = r.string(f);
    else if (f.number == 2 && f.wire == WireType::Varint)
      o.version = Reader::as_int64(f);
  }
  if (o.domain == "ai.onnx") o.domain.clear();
  return o;
}

ir::Function parse_function(ImportState& st, const ir::Model& model, size_t begin, size_t end) {
  Context& c = st.ctx;
  ir::Function fn;
  std::vector<ParsedNode> nodes;
  std::vector<ParsedSubgraph> default_subs;  // graphs of attribute defaults, kept resolved on their own
  Reader r(c, begin, end);
  Field f;
  while (r.next(f)) {
    if (f.wire != WireType::Len) continue;
    switch (f.number) {
      case 1: fn.name = r.string(f); break;
      case 4: fn.inputs.push_back(r.string(f)); break;
      case 5: fn.outputs.push_back(r.string(f)); break;
      case 6: fn.attributes.push_back(r.string(f)); break;
      case 7: {
        Descend d(c, idx("node", nodes.size()), true, at(f));
        nodes.push_back(parse_node(st, f.begin, f.end, at(f)));
        break;
      }
      case 8: fn.doc_string = r.string(f); break;
      case 9: {
        Descend d(c, idx("opset_import", fn.opset_imports.size()), true, at(f));
        fn.opset_imports.push_back(parse_opset(st, f.begin, f.end));
        break;
      }
      case 10: fn.domain = r.string(f); break;
      case 11: {
        Descend d(c, idx("attribute_proto", fn.attribute_defaults.size()), true, at(f));
        fn.attribute_defaults.push_back(
            parse_attribute(st, f.begin, f.end, at(f), default_subs, fn.attribute_defaults.size()));
        break;
      }
      case 13: fn.overload = r.string(f); break;
      default: break;
    }
  }
  finish_function(st, model, fn, nodes, default_subs);
  return fn;
}

}  // namespace

void finish_function(ImportState& st, const ir::Model& model, ir::Function& fn, std::vector<ParsedNode>& nodes,
                     std::vector<ParsedSubgraph>& default_subs) {
  for (auto& s : default_subs) {
    auto rg = resolve_function_subgraph(st, model, *s.graph);
    auto& a = fn.attribute_defaults[s.attr];
    if (s.index < 0)
      a.g = rg;
    else
      a.graphs[static_cast<size_t>(s.index)] = rg;
  }
  for (auto& pn : nodes) {
    for (auto& s : pn.subgraphs) {
      auto rg = resolve_function_subgraph(st, model, *s.graph);
      auto& a = pn.node.attributes[s.attr];
      if (s.index < 0)
        a.g = rg;
      else
        a.graphs[static_cast<size_t>(s.index)] = rg;
    }
    if (pn.node.domain == "ai.onnx") pn.node.domain.clear();
    for (const auto& o : fn.opset_imports)
      if (o.domain == pn.node.domain) pn.node.opset = o.version;
    fn.node_inputs.push_back(pn.inputs);
    fn.node_outputs.push_back(pn.outputs);
    pn.node.inputs.assign(pn.inputs.size(), -1);
    pn.node.outputs.assign(pn.outputs.size(), -1);
    pn.node.file_index = static_cast<int>(fn.nodes.size());
    fn.nodes.push_back(std::move(pn.node));
  }
}

void parse_model(ImportState& st, ir::Model& m, std::unique_ptr<ParsedGraph>& graph) {
  Context& c = st.ctx;
  Descend root(c, "ModelProto", false, 0);
  bool has_ir = false;
  std::vector<std::pair<size_t, size_t>> functions;  // parsed after the opsets are known
  std::vector<int64_t> function_offsets;
  Reader r(c, 0, st.file.bytes);
  Field f;
  while (r.next(f)) {
    const bool len = f.wire == WireType::Len;
    switch (f.number) {
      case 1:
        if (f.wire == WireType::Varint) {
          m.ir_version = Reader::as_int64(f);
          has_ir = true;
        }
        break;
      case 2:
        if (len) m.producer_name = r.string(f);
        break;
      case 3:
        if (len) m.producer_version = r.string(f);
        break;
      case 4:
        if (len) m.domain = r.string(f);
        break;
      case 5:
        if (f.wire == WireType::Varint) m.model_version = Reader::as_int64(f);
        break;
      case 6:
        if (len) m.doc_string = r.string(f);
        break;
      case 7:
        if (len) {
          Descend d(c, ".graph", true, at(f));
          graph = parse_graph(st, f.begin, f.end, at(f));
        }
        break;
      case 8:
        if (len) {
          Descend d(c, idx("opset_import", m.opset_imports.size()), true, at(f));
          m.opset_imports.push_back(parse_opset(st, f.begin, f.end));
        }
        break;
      case 14:
        if (len) {
          Descend d(c, idx("metadata_props", m.metadata_props.size()), true, at(f));
          std::pair<std::string, std::string> kv;
          Reader e(c, f.begin, f.end);
          Field g;
          while (e.next(g)) {
            if (g.number == 1 && g.wire == WireType::Len)
              kv.first = e.string(g);
            else if (g.number == 2 && g.wire == WireType::Len)
              kv.second = e.string(g);
          }
          m.metadata_props.push_back(std::move(kv));
        }
        break;
      case 25:
        if (len) {
          functions.emplace_back(f.begin, f.end);
          function_offsets.push_back(at(f));
        }
        break;
      default: break;
    }
  }
  if (!has_ir) c.fail(ErrorKind::InvalidModel, "model has no ir_version", -1);
  if (m.ir_version < 3)
    c.fail(ErrorKind::InvalidModel, "ir_version " + to_string(m.ir_version) + " is older than 3", -1);
  if (!graph) c.fail(ErrorKind::InvalidModel, "model has no graph", -1);
  for (size_t k = 0; k < functions.size(); ++k) {
    Descend d(c, idx("functions", k), true, function_offsets[k]);
    m.functions.push_back(parse_function(st, m, functions[k].first, functions[k].second));
  }
}

}  // namespace onemodel::onnx
