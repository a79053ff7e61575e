// Helpers of the OneModel format tests (docs/format.md): a structural dump of an ir::Model written here,
// independently of the format's reader and writer, so that "the .onemodel file yields the graph its ONNX
// file yields" is checked by comparing two dumps; and a builder of files from the format's text alone
// (header fields by hand, a manifest string, a data region).
#pragma once
#include "base/bits.h"
#include <cstring>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "base/sha256.h"
#include "ir/graph.h"
#include "onemodel/session.h"
#include "onnx_test_util.h"
#include "test_util.h"

namespace onemodel::test {

inline std::string dump_type(const ir::TypeInfo* t) {
  if (!t) return "null";
  std::string s =
      "kind" + std::to_string(static_cast<int>(t->kind)) + " elem" + std::to_string(static_cast<int>(t->elem));
  if (t->has_shape) {
    s += " [";
    for (const Dim& d : t->dims) s += std::to_string(d.value) + ":" + d.param + ",";
    s += "]";
  }
  s += " key" + std::to_string(static_cast<int>(t->map_key)) + " inner(" +
       (t->inner ? dump_type(t->inner.get()) : "-") + ")";
  return s;
}

inline std::string dump_tensor(const ir::TensorValue* t) {
  if (!t) return "null";
  std::string s = "'" + t->name + "' dtype" + std::to_string(static_cast<int>(t->dtype)) + " dims";
  for (int64_t d : t->dims) s += " " + std::to_string(d);
  s += " doc'" + t->doc_string + "'";
  if (!t->data.empty()) {
    Tensor c = t->data.contiguous();
    s += " data " + sha256_hex(c.raw(), c.nbytes());
  }
  if (t->raw.data) s += " raw " + sha256_hex(t->raw.data.get(), t->raw.bytes);
  for (const auto& x : t->strings) s += " str'" + x + "'";
  return s;
}

inline std::string dump_graph(const ir::Graph& g, const std::string& indent);

inline std::string dump_attrs(const std::vector<ir::Attribute>& attrs, const std::string& indent) {
  std::string s;
  for (const ir::Attribute& a : attrs) {
    s += indent + "attr '" + a.name + "' type" + std::to_string(static_cast<int>(a.type)) + " ref'" + a.ref_attr_name +
         "'";
    switch (a.type) {
      case ir::AttrType::Float: s += " f" + std::to_string(float_bits(a.f)); break;
      case ir::AttrType::Int: s += " i" + std::to_string(a.i); break;
      case ir::AttrType::String: s += " s'" + a.s + "'"; break;
      case ir::AttrType::Floats:
        for (float f : a.floats) s += " " + std::to_string(float_bits(f));
        break;
      case ir::AttrType::Ints:
        for (int64_t v : a.ints) s += " " + std::to_string(v);
        break;
      case ir::AttrType::Strings:
        for (const auto& v : a.strings) s += " '" + v + "'";
        break;
      default: break;
    }
    s += "\n";
    if (a.t) s += indent + " t " + dump_tensor(a.t.get()) + "\n";
    for (const auto& t : a.tensors) s += indent + " ts " + dump_tensor(t.get()) + "\n";
    if (a.sparse_tensor)
      s += indent + " sp " + dump_tensor(&a.sparse_tensor->values) + " / " + dump_tensor(&a.sparse_tensor->indices) +
           "\n";
    for (const auto& sp : a.sparse_tensors)
      s += indent + " sps " + dump_tensor(&sp->values) + " / " + dump_tensor(&sp->indices) + "\n";
    if (a.tp) s += indent + " tp " + dump_type(a.tp.get()) + "\n";
    for (const auto& t : a.type_protos) s += indent + " tps " + dump_type(t.get()) + "\n";
    if (a.g) s += dump_graph(*a.g, indent + "  ");
    for (const auto& g : a.graphs) s += g ? dump_graph(*g, indent + "  ") : indent + "  null graph\n";
  }
  return s;
}

inline std::string ids(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += " " + std::to_string(x);
  return s;
}

inline std::string dump_node(const ir::Node& n, const std::string& indent) {
  return indent + "node '" + n.name + "' " + n.domain + "::" + n.op_type + " overload'" + n.overload + "' doc'" +
         n.doc_string + "' opset" + std::to_string(n.opset) + " file" + std::to_string(n.file_index) + " in" +
         ids(n.inputs) + " out" + ids(n.outputs) + " reads" + ids(n.subgraph_reads) + "\n" +
         dump_attrs(n.attributes, indent + " ");
}

inline std::string dump_graph(const ir::Graph& g, const std::string& indent) {
  std::string s = indent + "graph '" + g.name + "' doc'" + g.doc_string + "' reordered" +
                  std::to_string(g.nodes_were_reordered) + " inputs" + ids(g.inputs) + " outputs" + ids(g.outputs) +
                  " inits" + ids(g.initializers) + " captures" + ids(g.captures) + "\n";
  for (size_t k = 0; k < g.values.size(); ++k) {
    const ir::Value& v = g.values[k];
    s += indent + " value " + std::to_string(k) + " '" + v.name + "' " + dump_type(&v.type) + " producer" +
         std::to_string(v.producer) + ":" + std::to_string(v.producer_output) + " input" + std::to_string(v.is_input) +
         " capture" + std::to_string(v.is_capture) + " consumers" + ids(v.consumers) + "\n";
    if (v.initializer) s += indent + "  init " + dump_tensor(v.initializer.get()) + "\n";
    if (v.sparse_initializer)
      s += indent + "  sparse " + dump_tensor(&v.sparse_initializer->values) + " / " +
           dump_tensor(&v.sparse_initializer->indices) + " dims" +
           ids(std::vector<int>(v.sparse_initializer->dims.begin(), v.sparse_initializer->dims.end())) + "\n";
  }
  for (const ir::Node& n : g.nodes) s += dump_node(n, indent + " ");
  return s;
}

// Everything of the model except `source` (the input's name).
inline std::string dump_model(const ir::Model& m) {
  std::string s = "ir" + std::to_string(m.ir_version) + " producer'" + m.producer_name + "' '" + m.producer_version +
                  "' domain'" + m.domain + "' doc'" + m.doc_string + "' version" + std::to_string(m.model_version) +
                  "\n";
  for (const auto& o : m.opset_imports) s += "opset '" + o.domain + "' " + std::to_string(o.version) + "\n";
  for (const auto& kv : m.metadata_props) s += "meta '" + kv.first + "'='" + kv.second + "'\n";
  s += dump_graph(*m.graph, "");
  for (const ir::Function& f : m.functions) {
    s += "function '" + f.name + "' '" + f.domain + "' '" + f.overload + "' doc'" + f.doc_string + "'\n";
    for (const auto& x : f.inputs) s += " in '" + x + "'";
    for (const auto& x : f.outputs) s += " out '" + x + "'";
    for (const auto& x : f.attributes) s += " attr '" + x + "'";
    s += "\n" + dump_attrs(f.attribute_defaults, " default ");
    for (size_t k = 0; k < f.nodes.size(); ++k) {
      s += dump_node(f.nodes[k], " ");
      for (const auto& x : f.node_inputs[k]) s += "  in '" + x + "'";
      for (const auto& x : f.node_outputs[k]) s += "  out '" + x + "'";
      s += "\n";
    }
    for (const auto& o : f.opset_imports) s += " opset '" + o.domain + "' " + std::to_string(o.version) + "\n";
  }
  return s;
}

inline std::string read_all(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

inline std::string bytes_string(const std::vector<std::byte>& b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

// A file assembled from format.md section 1 alone: header fields written here, the manifest as given,
// zero padding to 64, then `data`.
inline std::string assemble(const std::string& manifest, const std::string& data) {
  auto u64 = [](std::string& s, uint64_t v) {
    for (int k = 0; k < 8; ++k) s.push_back(static_cast<char>(v >> (8 * k) & 0xff));
  };
  uint64_t data_offset = (64 + manifest.size() + 63) / 64 * 64;
  std::string f = "ONEMODEL";
  u64(f, 1);  // version 1, flags 0
  u64(f, 64);
  u64(f, manifest.size());
  u64(f, data_offset);
  u64(f, data.size());
  u64(f, data_offset + data.size());
  u64(f, 0);
  f += manifest;
  f.resize(data_offset, '\0');
  return f + data;
}

// Every committed model, sorted (the round-trip tests of the .onemodel and ONNX writers).
inline std::vector<std::filesystem::path> testdata_models() {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(source_dir() / "testdata"))
    if (e.is_regular_file() && e.path().extension() == ".onnx") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// Deterministic inputs for a declared tensor input: unknown and symbolic extents are 1.
inline Tensor input_for(const ValueInfo& info, uint64_t seed) {
  std::vector<int64_t> dims;
  for (const Dim& d : info.dims) dims.push_back(d.is_fixed() ? d.value : 1);
  Tensor t = Tensor::zeros(info.dtype, Shape(std::span<const int64_t>(dims)));
  auto* b = static_cast<uint8_t*>(t.raw_mut());
  uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
  for (size_t k = 0; k < t.nbytes(); ++k) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    b[k] = static_cast<uint8_t>(s);
  }
  if (info.dtype == DType::F32) {  // finite values in [-1, 1): the sign and a small exponent
    auto* f = static_cast<float*>(t.raw_mut());
    for (int64_t k = 0; k < t.numel(); ++k) f[k] = static_cast<float>(static_cast<int>(b[4 * k] % 200) - 100) / 100.f;
  } else if (info.dtype == DType::I64 || info.dtype == DType::I32 || info.dtype == DType::Bool) {
    std::memset(t.raw_mut(), 0, t.nbytes());  // indices and counts: zero is valid for every operator here
  }
  return t;
}

inline std::string run_bits(const Session& s) {
  std::vector<NamedTensor> feeds;
  uint64_t seed = 1;
  for (const ValueInfo& v : s.inputs()) {
    if (v.kind != ValueKind::Tensor || !dtype_is_stored(v.dtype) || !v.has_shape) return "skipped";
    feeds.push_back({v.name, input_for(v, seed++)});
  }
  try {
    std::string out;
    for (const Tensor& t : s.run(feeds)) {
      Tensor c = t.contiguous();
      out += sha256_hex(c.raw(), c.nbytes()) + " " + std::string(dtype_name(t.dtype())) + "\n";
    }
    return out;
  } catch (const Error& e) {
    return std::string("error ") + std::string(error_kind_name(e.kind())) + ": " + e.message();
  }
}

}  // namespace onemodel::test
