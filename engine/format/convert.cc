// The public conversion API (onemodel/model_format.h): read with the loaders every session uses, write
// with the format writer.
#include <cstring>

#include "format/format.h"
#include "format/header.h"
#include "onemodel/model_format.h"

namespace onemodel::model_format {
namespace {

onnx::ImportOptions import_options(const ConvertOptions& o) {
  if (o.weight_storage != WeightStorage::Float32)
    throw Error(ErrorKind::Unsupported, std::string("weight_storage (--weight-storage, weightStorage) ") +
                                            (o.weight_storage == WeightStorage::Float16 ? "float16" : "bfloat16") +
                                            " is not implemented yet; only float32 is");
  onnx::ImportOptions io;
  io.max_nesting = o.max_nesting;
  io.external_data_dir = o.external_data_dir;
  return io;
}

}  // namespace

bool is_model_format_file(const std::filesystem::path& path) { return format::file_has_magic(path); }

bool is_model_format(std::span<const std::byte> bytes) noexcept {
  return format::has_magic(bytes.data(), bytes.size());
}

void convert(const std::filesystem::path& input, const std::filesystem::path& output, const ConvertOptions& options) {
  const onnx::ImportOptions io = import_options(options);
  format::write_file(format::import_model_file(input, io), output);
}

std::vector<std::byte> convert_bytes(std::span<const std::byte> input, const ConvertOptions& options,
                                     std::string_view source_name) {
  const onnx::ImportOptions io = import_options(options);
  Storage copy = allocate_storage(input.size());  // tensors view it until the writer has copied them out
  if (!input.empty()) std::memcpy(copy.data.get(), input.data(), input.size());
  return format::write_bytes(format::import_model_bytes(std::move(copy), std::string(source_name), io));
}

}  // namespace onemodel::model_format
