// libFuzzer target: any bytes through the OneModel-format reader (format::read_bytes: header, JSON manifest,
// data ranges, then the same resolution as ONNX). A typed onemodel::Error is the only acceptable failure
// (docs/fuzzing.md).
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "format/format.h"
#include "onemodel/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  onemodel::Storage bytes = onemodel::allocate_storage(size);
  if (size) std::memcpy(bytes.data.get(), data, size);
  try {
    onemodel::format::read_bytes(std::move(bytes), "fuzz");
  } catch (const onemodel::Error&) {
  }
  return 0;
}
