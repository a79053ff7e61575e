// Internal interfaces of the ONNX importer: the parsed (not yet resolved) graph, the state of one import
// and the functions of the reader stages. Parsing (proto_model.cc, proto_tensor.cc) turns bytes into
// Parsed* structures with names; resolution (resolve.cc) turns names into value ids (section 4).
#pragma once
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "onnx/wire.h"

namespace onemodel::onnx {

// Everything one import shares: the input bytes, the error context, and where external data may live.
struct ImportState {
  ImportState(Storage f, std::string source, int max_nesting)
      : file(std::move(f)), ctx(file.data.get(), file.bytes, std::move(source), max_nesting) {}
  Storage file;
  Context ctx;
  std::optional<std::filesystem::path> external_dir;  // nullopt: external data refused
  std::map<std::string, Storage> mapped;              // external files by resolved path, mapped once
  bool copy_raw = false;                              // ImportOptions::copy_raw_data
  // Names of a node's input and output lists in error paths: ONNX's repeated fields, or the OneModel
  // format's manifest arrays (format.md section 2.3), so resolution reports either in its reader's terms.
  const char* node_inputs_field = ".input";
  const char* node_outputs_field = ".output";
};

struct ParsedValueInfo {
  std::string name;
  ir::TypeInfo type;
  std::string path;
  int64_t offset = -1;
};

struct ParsedGraph;

// A graph-valued attribute: attributes[attr].g (index -1) or attributes[attr].graphs[index].
struct ParsedSubgraph {
  size_t attr = 0;
  int index = -1;
  std::unique_ptr<ParsedGraph> graph;
};

struct ParsedNode {
  ir::Node node;  // everything but value ids and subgraphs
  std::vector<std::string> inputs, outputs;
  std::vector<ParsedSubgraph> subgraphs;
  std::string path;
  int64_t offset = -1;
};

struct ParsedTensorRef {
  std::shared_ptr<ir::TensorValue> tensor;
  std::string path;
  int64_t offset = -1;
};

struct ParsedSparseRef {
  std::shared_ptr<ir::SparseTensorValue> tensor;
  std::string path;
  int64_t offset = -1;
};

struct ParsedGraph {
  std::string name, doc_string;
  std::vector<ParsedNode> nodes;
  std::vector<ParsedTensorRef> initializers;
  std::vector<ParsedSparseRef> sparse_initializers;
  std::vector<ParsedValueInfo> inputs, outputs, value_info;
  std::string path;
  int64_t offset = -1;
};

// Section 3: one TensorProto / SparseTensorProto in [begin, end). The caller has descended into the field.
std::shared_ptr<ir::TensorValue> parse_tensor(ImportState& st, size_t begin, size_t end, int64_t offset);
std::shared_ptr<ir::SparseTensorValue> parse_sparse_tensor(ImportState& st, size_t begin, size_t end, int64_t offset);

// Section 3, shared with the OneModel format reader (format.md section 2.5): the element count and byte
// length of a tensor of element type `code` and `dims`, decided from them alone. InvalidModel for a
// negative dimension, more than 2^60 elements or code 0; Unsupported for an unknown code or more than
// 2^31-1 bytes. Strings (code 8) have no byte length.
struct TensorSize {
  uint64_t count = 0, bytes = 0;
};
TensorSize tensor_size(const Context& c, const std::string& who, const std::vector<int64_t>& dims, int32_t code,
                       int64_t offset);
// The input's bytes [begin, begin + n) (checked by the caller) for a tensor: a view sharing the input's lifetime,
// or, when the caller keeps the input only for the load (ImportState::copy_raw), a 64-byte-aligned copy of their own.
Storage input_bytes(const ImportState& st, uint64_t begin, uint64_t n);
// Puts `bytes` (exactly the tensor's byte length) into `tv`: a Tensor viewing them for stored element types
// (Unsupported beyond the engine's shape limits), else `raw`.
void attach_tensor_bytes(ImportState& st, ir::TensorValue& tv, const Storage& bytes, int64_t offset);

// Section 5: the bytes of an external tensor. `expected` is the tensor's byte length from its dims.
struct ExternalEntry {
  std::string key, value;
};
// Returns storage whose first byte is the tensor's first byte and whose length is `expected`; it aliases
// the mapping of the file (or, without mmap, a buffer holding just that range).
Storage external_bytes(ImportState& st, const std::vector<ExternalEntry>& entries, uint64_t expected, int64_t offset);

// Section 2: the model. Throws on everything sections 1-3 refuse.
void parse_model(ImportState& st, ir::Model& model, std::unique_ptr<ParsedGraph>& graph);

// Section 4: names to ids, captures, opsets, types, order, consumers.
std::shared_ptr<ir::Graph> resolve_graph(ImportState& st, const ir::Model& model, ParsedGraph& graph);
// Function bodies are imported as written: their nodes' subgraphs are resolved with an open outer scope.
// finish_function does that for parsed body nodes and for the graphs of attribute defaults (`default_subs`,
// whose `attr` indexes fn.attribute_defaults), and moves the nodes into `fn` with their names.
void finish_function(ImportState& st, const ir::Model& model, ir::Function& fn, std::vector<ParsedNode>& nodes,
                     std::vector<ParsedSubgraph>& default_subs);
std::shared_ptr<ir::Graph> resolve_function_subgraph(ImportState& st, const ir::Model& model, ParsedGraph& graph);

}  // namespace onemodel::onnx
