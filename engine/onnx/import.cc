// The importer's entry points (import.h): get the bytes (mapped or read), parse, resolve.
#include "onnx/import.h"

#include "onnx/mapped_file.h"
#include "onnx/proto.h"

namespace onemodel::onnx {
namespace {

constexpr uint64_t kMaxModelBytes = 2147483647;  // protobuf's own message limit

void check_options(const ImportOptions& o) {
  if (o.max_nesting < 8 || o.max_nesting > 250)
    throw Error(ErrorKind::InvalidArgument,
                "max_nesting " + std::to_string(o.max_nesting) + " is outside the allowed range 8..250");
}

Storage load(const std::filesystem::path& path) {
  try {
    return load_file(path, kMaxModelBytes);
  } catch (Error& e) {
    if (e.source().empty()) e.with_source(path.string());
    throw;
  }
}

ir::Model import(ImportState& st) {
  ir::Model m;
  m.source = st.ctx.source();
  std::unique_ptr<ParsedGraph> pg;
  parse_model(st, m, pg);
  m.graph = resolve_graph(st, m, *pg);
  return m;
}

ir::TensorValue read_tensor(ImportState& st) {
  Descend root(st.ctx, "TensorProto", false, 0);
  return std::move(*parse_tensor(st, 0, st.file.bytes, 0));
}

}  // namespace

ir::Model import_file(const std::filesystem::path& path, const ImportOptions& options) {
  check_options(options);
  ImportState st(load(path), path.string(), options.max_nesting);
  std::filesystem::path dir = path.parent_path();
  st.external_dir = dir.empty() ? std::filesystem::path(".") : dir;
  st.copy_raw = options.copy_raw_data;
  return import(st);
}

ir::Model import_bytes(Storage bytes, std::string source, const ImportOptions& options) {
  check_options(options);
  if (bytes.bytes > kMaxModelBytes) {
    Error e(ErrorKind::Unsupported, "model of " + std::to_string(bytes.bytes) + " bytes exceeds 2^31-1 bytes");
    throw e.with_source(source);
  }
  if (!bytes.data) bytes = allocate_storage(0);
  ImportState st(std::move(bytes), std::move(source), options.max_nesting);
  if (!options.external_data_dir.empty()) st.external_dir = std::filesystem::path(options.external_data_dir);
  st.copy_raw = options.copy_raw_data;
  return import(st);
}

ir::TensorValue read_tensor_proto_file(const std::filesystem::path& path) {
  ImportState st(load(path), path.string(), ImportOptions{}.max_nesting);
  std::filesystem::path dir = path.parent_path();
  st.external_dir = dir.empty() ? std::filesystem::path(".") : dir;
  return read_tensor(st);
}

ir::TensorValue read_tensor_proto(Storage bytes, std::string source) {
  if (bytes.bytes > kMaxModelBytes) {
    Error e(ErrorKind::Unsupported, "tensor of " + std::to_string(bytes.bytes) + " bytes exceeds 2^31-1 bytes");
    throw e.with_source(source);
  }
  if (!bytes.data) bytes = allocate_storage(0);
  ImportState st(std::move(bytes), std::move(source), ImportOptions{}.max_nesting);
  return read_tensor(st);
}

}  // namespace onemodel::onnx
