// The public conversion API (onemodel/model_format.h): read with the loaders every session uses, write
// with the format writer.
#include <memory>
#include <vector>

#include "format/format.h"
#include "format/header.h"
#include "passes/passes.h"
#include "onemodel/model_format.h"

namespace onemodel::model_format {
namespace {

onnx::ImportOptions import_options(const ConvertOptions& o) {
  if (o.weight_storage != WeightStorage::Float32 && o.weight_storage != WeightStorage::Float16 &&
      o.weight_storage != WeightStorage::BFloat16)
    throw Error(ErrorKind::InvalidArgument,
                "unknown weight storage " + std::to_string(static_cast<int>(o.weight_storage)));
  onnx::ImportOptions io;
  io.max_nesting = o.max_nesting;
  io.external_data_dir = o.external_data_dir;
  return io;
}

// float16 / bfloat16 storage (docs/format.md section 5): the weights a session would compact, rounded and
// stored in 16 bits, each behind a Cast to float32 (an ordinary ONNX graph; loading widens them back).
ir::Model stored(ir::Model m, WeightStorage storage) {
  if (storage == WeightStorage::Float32 || !m.graph) return m;
  passes::PassGraph g(*m.graph);
  if (passes::store_weights_compact(g, storage) == 0) return m;
  g.finish();  // drops the float32 originals nothing reads any more: they are not written (nor declared)
  m.graph = std::make_shared<ir::Graph>(std::move(g.graph()));
  return m;
}

}  // namespace

bool is_model_format_file(const std::filesystem::path& path) { return format::file_has_magic(path); }

bool is_model_format(std::span<const std::byte> bytes) noexcept {
  return format::has_magic(bytes.data(), bytes.size());
}

void convert(const std::filesystem::path& input, const std::filesystem::path& output, const ConvertOptions& options) {
  const onnx::ImportOptions io = import_options(options);
  format::write_file(stored(format::import_model_file(input, io), options.weight_storage), output);
}

std::vector<std::byte> convert_bytes(std::span<const std::byte> input, const ConvertOptions& options,
                                     std::string_view source_name) {
  const onnx::ImportOptions io = import_options(options);
  return format::write_bytes(
      stored(format::import_model_span(input, std::string(source_name), io), options.weight_storage));
}

}  // namespace onemodel::model_format
