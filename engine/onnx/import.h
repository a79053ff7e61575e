// ONNX import (onnx-import.md): bytes -> ir::Model with our own bounds-checked protobuf reader.
// Files of 1 MiB or more are memory-mapped and initializers are views into the mapping.
#pragma once
#include <filesystem>
#include <string>

#include "ir/graph.h"

namespace onemodel::onnx {

struct ImportOptions {
  int max_nesting = 128;          // 8..250
  std::string external_data_dir;  // for byte input: where external data may live (empty: refused)
  // raw_data copied into a 64-byte-aligned buffer of each tensor's own instead of viewed, so nothing of the
  // result refers to the input bytes (onnx-import.md section 6: what sessions made from bytes do).
  bool copy_raw_data = false;
};

// Errors: onemodel::Error with kind Malformed / InvalidModel / Unsupported / ExternalData / Io, the source,
// the byte offset and the field path (ModelProto.graph.node[3].attribute[1].t).
ir::Model import_file(const std::filesystem::path& path, const ImportOptions& options = {});
// `bytes` is kept alive by the returned model's tensors where they are views (never with copy_raw_data: then
// the caller's buffer needs to live only for the call).
ir::Model import_bytes(Storage bytes, std::string source, const ImportOptions& options = {});

// One serialized TensorProto (the backend tests' input_N.pb / output_N.pb).
ir::TensorValue read_tensor_proto_file(const std::filesystem::path& path);
ir::TensorValue read_tensor_proto(Storage bytes, std::string source);

}  // namespace onemodel::onnx
