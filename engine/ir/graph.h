// The in-memory model the importers produce and the runtime consumes (onnx-import.md sections 2 and 4).
// Plain data: values are indexed by id within their graph; nodes refer to values by id. A subgraph has its
// own value table; outer values it reads appear in it as `is_capture` values named like the outer value.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "onemodel/session.h"
#include "onemodel/tensor.h"

namespace onemodel::ir {

struct Graph;

// A declared value type (TypeProto). kind Unknown = "no type".
struct TypeInfo {
  ValueKind kind = ValueKind::Unknown;
  DType elem = DType::Undefined;  // tensor / sparse tensor element type (code as in the file)
  bool has_shape = false;         // tensor: false = unknown rank
  std::vector<Dim> dims;
  std::shared_ptr<TypeInfo> inner;  // sequence / optional element type; map value type
  DType map_key = DType::Undefined;
};

// A tensor as stored in the model. Stored element types carry `data` (a view into the mapped file, the
// caller's bytes or a small converted array); strings carry `strings`. Unsupported element types keep
// their raw bytes in `raw` only so the importer can report them; the runtime refuses them.
struct TensorValue {
  std::string name;
  DType dtype = DType::Undefined;
  std::vector<int64_t> dims;
  Tensor data;                       // stored dtypes only; shape = dims
  Storage raw;                       // raw little-endian bytes for other element types
  std::vector<std::string> strings;  // dtype String
  std::string doc_string;
};

struct SparseTensorValue {
  TensorValue values, indices;
  std::vector<int64_t> dims;
};

enum class AttrType {
  Undefined = 0,
  Float = 1,
  Int = 2,
  String = 3,
  Tensor = 4,
  Graph = 5,
  Floats = 6,
  Ints = 7,
  Strings = 8,
  Tensors = 9,
  Graphs = 10,
  SparseTensor = 11,
  SparseTensors = 12,
  TypeProto = 13,
  TypeProtos = 14,
};

struct Attribute {
  std::string name;
  AttrType type = AttrType::Undefined;
  std::string ref_attr_name;  // non-empty in function bodies: carries no value
  float f = 0;
  int64_t i = 0;
  std::string s;  // bytes, not necessarily UTF-8
  std::shared_ptr<TensorValue> t;
  std::shared_ptr<Graph> g;
  std::shared_ptr<SparseTensorValue> sparse_tensor;
  std::shared_ptr<TypeInfo> tp;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<std::shared_ptr<TensorValue>> tensors;
  std::vector<std::shared_ptr<Graph>> graphs;
  std::vector<std::shared_ptr<SparseTensorValue>> sparse_tensors;
  std::vector<std::shared_ptr<TypeInfo>> type_protos;
};

inline constexpr int kNoValue = -1;  // an omitted optional input/output

struct Node {
  std::string name;
  std::string op_type;
  std::string domain;  // "" for ai.onnx (normalised)
  std::string overload;
  std::string doc_string;
  int64_t opset = 0;         // version imported for the node's domain
  int file_index = 0;        // position in the file, before any reordering
  std::vector<int> inputs;   // value ids, kNoValue for omitted
  std::vector<int> outputs;  // value ids, kNoValue for omitted
  std::vector<Attribute> attributes;
  // Values of the enclosing graph read by this node's subgraphs (ids in *this* graph), first-use order.
  std::vector<int> subgraph_reads;

  const Attribute* find_attribute(std::string_view n) const {
    for (const auto& a : attributes)
      if (a.name == n) return &a;
    return nullptr;
  }
};

struct Value {
  std::string name;
  TypeInfo type;
  int producer = -1;  // node index, or -1 for inputs, initializers and captures
  int producer_output = -1;
  bool is_input = false;                     // a graph input (may also have an initializer as default)
  bool is_capture = false;                   // defined by an enclosing graph
  std::shared_ptr<TensorValue> initializer;  // constant value (or input default)
  std::shared_ptr<SparseTensorValue> sparse_initializer;
  std::vector<int> consumers;  // node indices in sorted order, each once
};

struct Graph {
  std::string name;
  std::string doc_string;
  std::vector<Value> values;
  std::vector<Node> nodes;        // topologically sorted
  std::vector<int> inputs;        // value ids, in declaration order
  std::vector<int> outputs;       // value ids, in declaration order
  std::vector<int> initializers;  // value ids of initializers, in file order
  std::vector<int> captures;      // value ids (is_capture) read from enclosing graphs
  bool nodes_were_reordered = false;

  int find_value(std::string_view n) const {
    for (size_t i = 0; i < values.size(); ++i)
      if (values[i].name == n) return static_cast<int>(i);
    return -1;
  }
};

struct OpsetImport {
  std::string domain;  // "" for ai.onnx
  int64_t version = 0;
};

struct Function {
  std::string name, domain, overload, doc_string;
  std::vector<std::string> inputs, outputs, attributes;
  std::vector<Attribute> attribute_defaults;
  std::vector<Node> nodes;  // as written; value ids unused (-1), names kept in the vectors below
  std::vector<std::vector<std::string>> node_inputs, node_outputs;
  std::vector<OpsetImport> opset_imports;
};

struct Model {
  int64_t ir_version = 0;
  std::string producer_name, producer_version, domain, doc_string;
  int64_t model_version = 0;
  std::vector<OpsetImport> opset_imports;
  std::vector<std::pair<std::string, std::string>> metadata_props;
  std::shared_ptr<Graph> graph;
  std::vector<Function> functions;
  std::string source;  // the input's name (path or "<bytes>"), for errors

  int64_t opset_for(std::string_view domain) const;  // 0 if not imported; "" and "ai.onnx" are one domain
};

}  // namespace onemodel::ir
