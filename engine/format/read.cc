// Reading a .onemodel file (format.md sections 1 and 3): the header against the real length, the manifest
// (no byte-order mark, the size and depth limits, then the schema), then the ONNX importer's resolution.
#include <cstring>
#include <fstream>

#include "format/format.h"
#include "format/manifest_reader.h"
#include "onnx/mapped_file.h"

namespace onemodel::format {
namespace {

// copy_tensors: each tensor's bytes are copied into a buffer of its own (the file is only borrowed for this
// call), else tensors view the file.
ir::Model read(Storage file, std::string source, bool copy_tensors) {
  if (!file.data) file = allocate_storage(0);
  const Header h = read_header(file.data.get(), file.bytes, source);
  onnx::ImportState st(std::move(file), std::move(source), 250);
  st.copy_raw = copy_tensors;
  st.node_inputs_field = ".inputs";
  st.node_outputs_field = ".outputs";
  const char* text = reinterpret_cast<const char*>(st.file.data.get()) + kHeaderBytes;
  const auto n = static_cast<size_t>(h.manifest_length);
  onnx::Descend path(st.ctx, "manifest", false, -1);
  if (n >= 3 && text[0] == '\xef' && text[1] == '\xbb' && text[2] == '\xbf')
    st.ctx.fail(ErrorKind::Malformed, "the manifest starts with a byte-order mark", kHeaderBytes);
  // nlohmann's lexer takes a NUL byte for the end of the input; JSON allows none outside strings (and none
  // unescaped inside), so one would hide whatever follows it.
  if (const void* nul = std::memchr(text, 0, n))
    st.ctx.fail(ErrorKind::Malformed, "the manifest contains a NUL byte",
                static_cast<int64_t>(kHeaderBytes) + (static_cast<const char*>(nul) - text));
  Json json;
  std::string message;
  size_t at = 0;
  bool too_deep = false;
  if (!json.parse(text, n, message, at, too_deep))
    st.ctx.fail(too_deep ? ErrorKind::Unsupported : ErrorKind::Malformed, "manifest: " + message,
                static_cast<int64_t>(kHeaderBytes + at));
  ir::Model m;
  m.source = st.ctx.source();
  std::unique_ptr<onnx::ParsedGraph> pg;
  read_manifest(st, json, h, m, pg);
  m.graph = onnx::resolve_graph(st, m, *pg);
  return m;
}

// Only size_t can be mapped; the header's own limit (2^63-1) is checked against the real length anyway.
constexpr uint64_t kMaxFileBytes = static_cast<uint64_t>(static_cast<size_t>(-1) >> 1);

}  // namespace

bool file_has_magic(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  std::byte head[8] = {};
  if (!f.read(reinterpret_cast<char*>(head), 8)) return false;
  return has_magic(head, 8);
}

ir::Model read_file(const std::filesystem::path& path) {
  Storage s;
  try {
    s = onnx::load_file(path, kMaxFileBytes);
  } catch (Error& e) {
    if (e.source().empty()) e.with_source(path.string());
    throw;
  }
  return read(std::move(s), path.string(), false);
}

ir::Model read_bytes(Storage bytes, std::string source) { return read(std::move(bytes), std::move(source), false); }

ir::Model import_model_file(const std::filesystem::path& path, const onnx::ImportOptions& options) {
  if (file_has_magic(path)) return read_file(path);
  return onnx::import_file(path, options);
}

ir::Model import_model_span(std::span<const std::byte> bytes, std::string source, onnx::ImportOptions options) {
  // Not owned: the reader reads it during this call only and copies out what it keeps (each tensor into a
  // buffer of its own, which a session may free once it has packed it: graph-runtime.md section 4).
  Storage borrowed;
  borrowed.data = std::shared_ptr<std::byte>(const_cast<std::byte*>(bytes.data()), [](std::byte*) {});
  borrowed.bytes = bytes.size();
  if (has_magic(bytes.data(), bytes.size())) return read(std::move(borrowed), std::move(source), true);
  options.copy_raw_data = true;
  return onnx::import_bytes(std::move(borrowed), std::move(source), options);
}

}  // namespace onemodel::format
