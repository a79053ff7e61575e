// The OneModel file header (format.md section 1.1; header.h).
#include "format/header.h"

#include <cstring>

namespace onemodel::format {
namespace {

constexpr uint64_t kMaxU64Field = (uint64_t{1} << 63) - 1;

uint64_t u64_at(const std::byte* p, size_t at) {
  uint64_t v = 0;
  for (int k = 7; k >= 0; --k) v = v << 8 | static_cast<uint64_t>(p[at + static_cast<size_t>(k)]);
  return v;
}
uint32_t u32_at(const std::byte* p, size_t at) { return static_cast<uint32_t>(u64_at(p, at) & 0xffffffffu); }

void put_u64(std::byte* p, size_t at, uint64_t v) {
  for (size_t k = 0; k < 8; ++k) p[at + k] = static_cast<std::byte>(v >> (8 * k) & 0xff);
}

[[noreturn]] void fail(ErrorKind kind, const std::string& message, const std::string& source, const char* field,
                       int64_t offset) {
  Error e(kind, message);
  e.with_source(source).with_field_path(field).with_offset(offset);
  throw e;
}

}  // namespace

bool has_magic(const std::byte* p, size_t n) noexcept { return n >= 8 && std::memcmp(p, kMagic, 8) == 0; }

Header read_header(const std::byte* p, size_t size, const std::string& source) {
  using std::to_string;
  const ErrorKind M = ErrorKind::Malformed;
  if (size < kHeaderBytes)
    fail(M, "the file has " + to_string(size) + " bytes, fewer than the 64-byte header (truncated)", source, "header",
         0);
  if (!has_magic(p, size)) fail(M, "the file does not start with the magic bytes ONEMODEL", source, "magic", 0);
  Header h;
  h.version = u32_at(p, 8);
  if (h.version != kVersion)
    fail(ErrorKind::Unsupported, "format version " + to_string(h.version) + " is not supported (this reader reads 1)",
         source, "version", 8);
  if (uint32_t flags = u32_at(p, 12); flags != 0)
    fail(ErrorKind::Unsupported, "flags " + to_string(flags) + " are not supported (must be 0)", source, "flags", 12);
  const char* names[] = {"manifest_offset", "manifest_length", "data_offset", "data_length", "file_length", "reserved"};
  for (size_t k = 0; k < 6; ++k)
    if (u64_at(p, 16 + 8 * k) > kMaxU64Field)
      fail(M, std::string(names[k]) + " is above 2^63-1", source, names[k], static_cast<int64_t>(16 + 8 * k));
  // file_length first: a truncated or extended file is noticed before any other field is trusted.
  h.file_length = u64_at(p, 48);
  if (h.file_length != size)
    fail(M,
         "the header says the file is " + to_string(h.file_length) + " bytes; it is " + to_string(size) +
             " (truncated or extended)",
         source, "file_length", 48);
  if (uint64_t mo = u64_at(p, 16); mo != kHeaderBytes)
    fail(M, "manifest_offset is " + to_string(mo) + ", not 64", source, "manifest_offset", 16);
  h.manifest_length = u64_at(p, 24);
  if (h.manifest_length > size - kHeaderBytes)
    fail(M, "manifest_length " + to_string(h.manifest_length) + " runs past the end of the file", source,
         "manifest_length", 24);
  if (h.manifest_length > kMaxManifestBytes)
    fail(ErrorKind::Unsupported,
         "manifest of " + to_string(h.manifest_length) + " bytes exceeds this reader's limit of " +
             to_string(kMaxManifestBytes),
         source, "manifest_length", 24);
  h.data_offset = u64_at(p, 32);
  if (h.data_offset % kAlign != 0 || h.data_offset < kHeaderBytes + h.manifest_length || h.data_offset > size)
    fail(M,
         "data_offset " + to_string(h.data_offset) + " is not a multiple of 64 between the end of the manifest (" +
             to_string(kHeaderBytes + h.manifest_length) + ") and the end of the file",
         source, "data_offset", 32);
  h.data_length = u64_at(p, 40);
  if (h.data_length != size - h.data_offset)
    fail(M,
         "data_length " + to_string(h.data_length) + " is not the file length minus data_offset (" +
             to_string(size - h.data_offset) + ")",
         source, "data_length", 40);
  if (u64_at(p, 56) != 0) fail(M, "the reserved header field is not zero", source, "reserved", 56);
  for (uint64_t k = kHeaderBytes + h.manifest_length; k < h.data_offset; ++k)
    if (p[k] != std::byte{0})
      fail(M, "the padding after the manifest is not zero", source, "padding", static_cast<int64_t>(k));
  return h;
}

void write_header(std::byte* out, uint64_t manifest_length, uint64_t data_offset, uint64_t data_length) {
  std::memset(out, 0, kHeaderBytes);
  std::memcpy(out, kMagic, 8);
  put_u64(out, 8, kVersion);  // version (u32) and flags (u32, zero) as one little-endian u64
  put_u64(out, 16, kHeaderBytes);
  put_u64(out, 24, manifest_length);
  put_u64(out, 32, data_offset);
  put_u64(out, 40, data_length);
  put_u64(out, 48, data_offset + data_length);
}

}  // namespace onemodel::format
