// The manifest as parsed JSON (format.md section 1.2): a flat, read-only tree built by nlohmann's SAX
// parser. Flat (one array of 24-byte nodes, strings in one pool) because a DOM of nested containers would
// cost many times the manifest's size; every node remembers its byte offset in the manifest so errors can
// point at it. Numbers keep what they were: integers as integers (never through a double), anything with a
// fraction or exponent as Float, so a reader can refuse it where an integer is required.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace onemodel::format {

inline constexpr int kMaxJsonDepth = 1024;  // nesting of arrays and objects

enum class JKind : uint8_t { Null, Bool, Int, Uint, Float, String, Array, Object };

struct JNode {
  JKind kind = JKind::Null;
  uint32_t offset = 0;                // of the value's first byte within the manifest
  uint32_t end = 0;                   // index just past this node's subtree (children are the nodes in between)
  uint32_t key_pos = 0, key_len = 0;  // the member name, in an object
  union {
    bool b;
    int64_t i;
    uint64_t u;
    struct {
      uint32_t pos, len;
    } s;
  } v{};
};

class Json {
 public:
  static constexpr uint32_t kNone = 0xffffffffu;

  // Parses `n` bytes. On failure returns false and sets `error` (message), `error_offset` (within the
  // manifest) and `too_deep` (the nesting limit, not invalid JSON). Node 0 is the root.
  bool parse(const char* p, size_t n, std::string& error, size_t& error_offset, bool& too_deep);

  const JNode& node(uint32_t k) const { return nodes_[k]; }
  std::string_view str(uint32_t k) const { return {pool_.data() + nodes_[k].v.s.pos, nodes_[k].v.s.len}; }
  std::string_view key(uint32_t k) const { return {pool_.data() + nodes_[k].key_pos, nodes_[k].key_len}; }
  // Children of an array or object: for (uint32_t c = first(k); c != end; c = next(c)).
  uint32_t first(uint32_t k) const { return k + 1; }
  uint32_t next(uint32_t c) const { return nodes_[c].end; }
  uint32_t end(uint32_t k) const { return nodes_[k].end; }
  uint32_t count(uint32_t k) const;
  // The member named `name` of object `k`, or kNone; `duplicate` is set when it occurs more than once.
  uint32_t member(uint32_t k, std::string_view name, bool& duplicate) const;

 private:
  friend struct JsonBuilder;
  std::vector<JNode> nodes_;
  std::string pool_;
};

// JSON text of `s` with quotes: '"', '\\' and control characters escaped, other bytes as they are.
void append_json_string(std::string& out, std::string_view s);

// RFC 4648 base64, standard alphabet, padded.
std::string base64_encode(std::string_view bytes);
// False on any character outside the alphabet, bad padding or a length not a multiple of 4.
bool base64_decode(std::string_view text, std::string& out);

}  // namespace onemodel::format
