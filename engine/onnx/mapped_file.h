// Getting file bytes into memory (onnx-import.md section 6): files of 1 MiB or more are memory-mapped
// read-only (the Storage deleter unmaps), smaller ones are read. Under Emscripten there is no mmap; files
// are always read, and external data reads only the range a tensor needs.
#pragma once
#include <cstdint>
#include <filesystem>

#include "onemodel/tensor.h"

namespace onemodel::onnx {

inline constexpr uint64_t kMapThreshold = 1u << 20;

// The whole file; throws Io when it cannot be opened or read and Unsupported when it exceeds `max_bytes`.
Storage load_file(const std::filesystem::path& path, uint64_t max_bytes);
// Whole-file mapping for external data (read into memory when mapping is unavailable).
Storage map_whole_file(const std::filesystem::path& path);
// `length` bytes at `offset` read into a new buffer (the no-mmap external data path).
Storage read_range(const std::filesystem::path& path, uint64_t offset, uint64_t length);
// True when this build memory-maps files.
bool mapping_available();

}  // namespace onemodel::onnx
