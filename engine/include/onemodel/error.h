// One error type for everything the engine refuses: a kind, a message and, where known, the input's name,
// the byte offset, the protobuf field path, the node and the operators involved (onnx-import.md section 7,
// graph-runtime.md section 4). Kinds are a closed list so the CLI and the JS layer can map them 1:1.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace onemodel {

enum class ErrorKind {
  Malformed,             // bytes that are not valid protobuf (or not a valid .npy / file format)
  InvalidModel,          // valid protobuf that is not a valid model; bad attributes; shape errors at plan time
  Unsupported,           // a feature the engine does not implement (element type, segment, size)
  ExternalData,          // external data location / range refused
  Io,                    // file system failures
  UnsupportedOperator,   // operators without a kernel; operators() lists "Type (opset N)"
  ExactModeUnavailable,  // exact mode requested and operators() lack an exact kernel
  InvalidInput,          // wrong input name, type, shape, buffer size, out-of-range index at run time
  Disposed,              // use after release
  InvalidArgument,       // bad option values (threads, plan cache size, ONEMODEL_ISA)
  Internal,              // a bug: an invariant of the engine itself was broken
  GraphBuild,            // model building in code: a shape or type error found while building (model-building.md)
  Compile,               // model building in code: an error found when input specs fix the symbolic dimensions
  // Tracing (model-building.md section 8): raised at the offending call while a trace records.
  DataDependent,         // a traced tensor's values were read: the graph cannot depend on them
  InPlaceMutation,       // a traced tensor, or a constant the trace captured, was changed in place
  SymbolicShape,         // a symbolic axis reached something that cannot express it
  InvalidUsage,          // nested tracers, names used twice, outputs that depend on no input, bad symbol sizes
  UnsupportedOperation,  // an operation without an ONNX mapping for tracing
};

std::string_view error_kind_name(ErrorKind k) noexcept;

class Error : public std::exception {
 public:
  Error(ErrorKind kind, std::string message);

  ErrorKind kind() const noexcept { return kind_; }
  // Full text: "<Kind>: <message> [in <source>, offset N, field <path>, node '<name>']".
  const char* what() const noexcept override { return what_.c_str(); }
  const std::string& message() const noexcept { return message_; }
  const std::string& source() const noexcept { return source_; }
  int64_t offset() const noexcept { return offset_; }  // -1 when unknown
  const std::string& field_path() const noexcept { return field_path_; }
  const std::string& node() const noexcept { return node_; }
  const std::vector<std::string>& operators() const noexcept { return operators_; }

  Error& with_source(std::string s);
  Error& with_offset(int64_t o);
  Error& with_field_path(std::string p);
  Error& with_node(std::string n);
  Error& with_operators(std::vector<std::string> ops);

 private:
  void rebuild();
  ErrorKind kind_;
  std::string message_, source_, field_path_, node_;
  int64_t offset_ = -1;
  std::vector<std::string> operators_;
  std::string what_;
};

}  // namespace onemodel
