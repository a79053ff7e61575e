// The OneModel file format (docs/format.md): a 64-byte header, a JSON manifest of the imported graph and
// the weights, each aligned to 64 bytes so they are used straight from a memory map. Session::load,
// Session::load_bytes and Model::load take either format and tell them apart by the first eight bytes
// ("ONEMODEL"); a converted model gives the same outputs, bit for bit, as the ONNX file it came from.
#pragma once
#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "onemodel/session.h"  // WeightStorage

namespace onemodel {

struct ConvertOptions {
  WeightStorage weight_storage = WeightStorage::Float32;
  // For convert_bytes: where external data may live (empty: refused). A path input uses its own directory.
  std::string external_data_dir;
  int max_nesting = 128;  // the ONNX reader's protobuf nesting limit, 8..250
};

namespace model_format {

// True when the file or bytes start with the magic "ONEMODEL".
bool is_model_format_file(const std::filesystem::path& path);
bool is_model_format(std::span<const std::byte> bytes) noexcept;

// Reads a model (ONNX, or already the OneModel format), copies any external data in, and writes the
// OneModel format. Deterministic: the same model gives the same bytes. Errors are the readers' (Malformed,
// InvalidModel, Unsupported, ExternalData, Io) and Io when the output cannot be written.
void convert(const std::filesystem::path& input, const std::filesystem::path& output,
             const ConvertOptions& options = {});
std::vector<std::byte> convert_bytes(std::span<const std::byte> input, const ConvertOptions& options = {},
                                     std::string_view source_name = "<bytes>");

}  // namespace model_format
}  // namespace onemodel
