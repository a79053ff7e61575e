// libFuzzer target: any bytes through the ONNX reader (onnx::import_bytes: protobuf wire reading, the model
// structures, name resolution). A typed onemodel::Error is the only acceptable failure; anything else -- a
// crash, a sanitizer report, another exception, an allocation past libFuzzer's limit -- is a finding
// (docs/fuzzing.md).
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "onemodel/error.h"
#include "onnx/import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  onemodel::Storage bytes = onemodel::allocate_storage(size);
  if (size) std::memcpy(bytes.data.get(), data, size);
  try {
    onemodel::onnx::import_bytes(std::move(bytes), "fuzz");
  } catch (const onemodel::Error&) {
  }
  return 0;
}
