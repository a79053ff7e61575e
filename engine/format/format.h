// The OneModel file format (format.md): reading, writing, and the loading entry points that choose
// between it and ONNX by the first eight bytes. Reading yields the ir::Model the ONNX importer yields for
// the file the model came from (the same parsed structures, resolved by the same code).
#pragma once
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "onnx/import.h"

namespace onemodel::format {

// True when the file starts with "ONEMODEL" (false when it cannot be read: loading then reports why).
bool file_has_magic(const std::filesystem::path& path);

// A .onemodel file or its bytes. Files of 1 MiB or more are memory-mapped and tensors view the mapping;
// `bytes` is kept alive by the tensors that view it. Errors: Malformed / InvalidModel / Unsupported / Io with
// the source, the file offset and the manifest path (manifest.graph.nodes[3].inputs[1]) or header field.
ir::Model read_file(const std::filesystem::path& path);
ir::Model read_bytes(Storage bytes, std::string source);

// Loading as Session::load and Model::load do it (format.md section 5): the OneModel format when the input
// starts with the magic, else ONNX with `options`.
ir::Model import_model_file(const std::filesystem::path& path, const onnx::ImportOptions& options = {});
// Bytes the caller keeps only for this call (Session::load_bytes, convert_bytes): both formats are read in
// place and each tensor's bytes are copied into an aligned buffer of its own (the OneModel format's data, ONNX's
// raw_data: ImportOptions::copy_raw_data), so no copy of the whole input is made and none stays alive
// (onnx-import.md section 6), and a session may free a weight it has packed (graph-runtime.md section 4).
ir::Model import_model_span(std::span<const std::byte> bytes, std::string source, onnx::ImportOptions options);

// The writer (format.md section 4): equal models give equal bytes. Tensors are written once each, in the
// order of section 1.3; external data the model viewed is copied in.
std::vector<std::byte> write_bytes(const ir::Model& model);
void write_file(const ir::Model& model, const std::filesystem::path& path);

}  // namespace onemodel::format
