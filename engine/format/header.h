// The 64-byte header of a OneModel file (format.md section 1.1): reading it checks every field against the
// real length of the file before anything else is read or allocated; writing it fills the fields from the
// layout the writer chose.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "onemodel/error.h"

namespace onemodel::format {

inline constexpr size_t kHeaderBytes = 64;
inline constexpr char kMagic[8] = {'O', 'N', 'E', 'M', 'O', 'D', 'E', 'L'};
inline constexpr uint32_t kVersion = 1;
inline constexpr uint64_t kAlign = 64;  // the data region and every tensor in it
// Our reader's manifest limit (the founding notes' C# reader uses the same).
inline constexpr uint64_t kMaxManifestBytes = uint64_t{512} << 20;

struct Header {
  uint32_t version = kVersion;
  uint64_t manifest_length = 0;
  uint64_t data_offset = 0;
  uint64_t data_length = 0;
  uint64_t file_length = 0;
};

// True when `n` bytes at `p` start with the magic (n >= 8).
bool has_magic(const std::byte* p, size_t n) noexcept;

// Checks the header of a file of `size` bytes at `p` (section 1.1, in the order: length, magic, version,
// flags, the 2^63-1 bound, file_length, manifest_offset and _length, data_offset, data_length, reserved).
// Errors carry `source`, the header field's name as the field path and its byte offset.
Header read_header(const std::byte* p, size_t size, const std::string& source);

// The 64 header bytes for a file whose manifest has `manifest_length` bytes and whose data region starts at
// `data_offset` and has `data_length` bytes.
void write_header(std::byte* out, uint64_t manifest_length, uint64_t data_offset, uint64_t data_length);

// `n` rounded up to a multiple of kAlign.
inline uint64_t align_up(uint64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

}  // namespace onemodel::format
