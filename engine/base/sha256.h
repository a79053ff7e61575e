// SHA-256 (FIPS 180-4), our own small implementation. Used for output hashes (golden-hashes.md): the hash
// must be identical on every platform, so it depends on nothing but this file.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace onemodel {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t len);
  void update(std::string_view s) { update(s.data(), s.size()); }
  // Finishes the message; the object must not be updated afterwards.
  std::array<uint8_t, 32> digest();
  // Lower-case hex of digest().
  std::string hex_digest();

 private:
  void block(const uint8_t* p);
  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buf_{};
  size_t buf_len_ = 0;
  uint64_t total_ = 0;  // bytes hashed so far
  bool finished_ = false;
};

// One-shot helper: lower-case hex SHA-256 of `len` bytes.
std::string sha256_hex(const void* data, size_t len);

}  // namespace onemodel
