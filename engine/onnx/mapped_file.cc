// File bytes for the importer: POSIX mmap for big files, plain reads otherwise (see mapped_file.h).
#include "onnx/mapped_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>

#ifndef __EMSCRIPTEN__
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

namespace onemodel::onnx {
namespace {

Error io_error(const std::filesystem::path& path, const std::string& what) {
  Error e(ErrorKind::Io, what + ": " + std::strerror(errno));
  e.with_source(path.string());
  return e;
}

// Reads `length` bytes at `offset` with stdio (portable, also the Emscripten path).
Storage read_with_stdio(const std::filesystem::path& path, uint64_t offset, uint64_t length) {
  if (offset > static_cast<uint64_t>(std::numeric_limits<long>::max()))
    throw io_error(path, "offset " + std::to_string(offset) + " is beyond what this platform can seek to");
  Storage s = allocate_storage(static_cast<size_t>(length));
  std::FILE* f = std::fopen(path.string().c_str(), "rb");
  if (!f) throw io_error(path, "cannot open file");
  bool ok = std::fseek(f, static_cast<long>(offset), SEEK_SET) == 0 &&
            std::fread(s.data.get(), 1, static_cast<size_t>(length), f) == static_cast<size_t>(length);
  std::fclose(f);
  if (!ok) throw io_error(path, "cannot read " + std::to_string(length) + " bytes at offset " + std::to_string(offset));
  return s;
}

uint64_t checked_size(const std::filesystem::path& path) {
  std::error_code ec;
  auto st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(st)) {
    Error e(ErrorKind::Io, "cannot open file: " + (ec ? ec.message() : std::string("no such file")));
    throw e.with_source(path.string());
  }
  if (!std::filesystem::is_regular_file(st)) {
    Error e(ErrorKind::Io, "not a regular file");
    throw e.with_source(path.string());
  }
  uint64_t n = std::filesystem::file_size(path, ec);
  if (ec) {
    Error e(ErrorKind::Io, "cannot get file size: " + ec.message());
    throw e.with_source(path.string());
  }
  return n;
}

#ifndef __EMSCRIPTEN__
// Read-only private mapping; the Storage deleter owns the munmap.
Storage map_file(const std::filesystem::path& path, uint64_t size) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw io_error(path, "cannot open file");
  void* p = ::mmap(nullptr, static_cast<size_t>(size), PROT_READ, MAP_PRIVATE, fd, 0);
  int saved = errno;
  ::close(fd);
  errno = saved;
  if (p == MAP_FAILED) throw io_error(path, "cannot map file");
  Storage s;
  auto n = static_cast<size_t>(size);
  s.data = std::shared_ptr<std::byte>(static_cast<std::byte*>(p), [n](std::byte* q) { ::munmap(q, n); });
  s.bytes = n;
  return s;
}
#endif

}  // namespace

bool mapping_available() {
#ifdef __EMSCRIPTEN__
  return false;
#else
  return true;
#endif
}

Storage load_file(const std::filesystem::path& path, uint64_t max_bytes) {
  uint64_t size = checked_size(path);
  if (size > max_bytes) {
    Error e(ErrorKind::Unsupported, "file of " + std::to_string(size) + " bytes exceeds the limit of " +
                                        std::to_string(max_bytes) + " bytes (keep weights in external data)");
    throw e.with_source(path.string());
  }
#ifndef __EMSCRIPTEN__
  if (size >= kMapThreshold) return map_file(path, size);
#endif
  return read_with_stdio(path, 0, size);
}

Storage map_whole_file(const std::filesystem::path& path) {
  uint64_t size = checked_size(path);
#ifndef __EMSCRIPTEN__
  if (size > 0) return map_file(path, size);
#endif
  return read_with_stdio(path, 0, size);
}

Storage read_range(const std::filesystem::path& path, uint64_t offset, uint64_t length) {
  return read_with_stdio(path, offset, length);
}

}  // namespace onemodel::onnx
