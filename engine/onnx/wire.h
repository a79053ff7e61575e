// A bounds-checked protobuf wire reader (onnx-import.md section 1). It works on one byte range of the
// input and never reads outside it; every length is compared with what remains before anything is sliced,
// and nothing is allocated from a length. Message parsers call next() in a loop and pick the fields they
// know; unknown fields and known fields with the wrong wire type are simply not picked (skipped).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "onemodel/error.h"

namespace onemodel::onnx {

// Shared state of one import: where errors point (source, field path) and how deep messages nest.
class Context {
 public:
  Context(const std::byte* base, size_t size, std::string source, int max_nesting)
      : base_(reinterpret_cast<const uint8_t*>(base)),
        size_(size),
        source_(std::move(source)),
        max_nesting_(max_nesting) {}

  const uint8_t* base() const { return base_; }
  size_t size() const { return size_; }
  const std::string& source() const { return source_; }
  const std::string& path() const { return path_; }

  // An Error carrying the source, the current field path and `offset` (-1: unknown).
  Error error(ErrorKind kind, const std::string& message, int64_t offset) const;
  [[noreturn]] void fail(ErrorKind kind, const std::string& message, int64_t offset) const {
    throw error(kind, message, offset);
  }

  // Path segments are pushed when a parser descends into a field and popped on the way back.
  size_t push(std::string_view segment) {
    size_t old = path_.size();
    path_ += segment;
    return old;
  }
  void pop(size_t old) { path_.resize(old); }

  // One nesting level per nested message; throws Malformed beyond the limit. Bounds the parsers'
  // recursion, so hostile inputs nested 100000 deep stop here instead of exhausting the stack.
  void enter(int64_t offset);
  void leave() { --depth_; }

 private:
  const uint8_t* base_;
  size_t size_;
  std::string source_;
  int max_nesting_;
  int depth_ = 0;
  std::string path_;
};

// RAII: a path segment plus optionally one nesting level.
class Descend {
 public:
  Descend(Context& c, std::string_view segment, bool nested, int64_t offset) : c_(c), nested_(nested) {
    if (nested_) c_.enter(offset);
    old_ = c_.push(segment);
  }
  ~Descend() {
    c_.pop(old_);
    if (nested_) c_.leave();
  }
  Descend(const Descend&) = delete;
  Descend& operator=(const Descend&) = delete;

 private:
  Context& c_;
  bool nested_;
  size_t old_ = 0;
};

enum class WireType : uint8_t { Varint = 0, Fixed64 = 1, Len = 2, Fixed32 = 5 };

// One field as read from the wire. For Len fields, [begin, end) are offsets from the start of the input.
struct Field {
  uint32_t number = 0;
  WireType wire = WireType::Varint;
  size_t key_offset = 0;
  uint64_t value = 0;  // varint value, or the fixed32/fixed64 bits
  size_t begin = 0, end = 0;
};

class Reader {
 public:
  Reader(Context& c, size_t begin, size_t end) : c_(c), pos_(begin), end_(end) {}
  // Reads the next field; false at the end of the range. Throws Malformed on bad keys, varints,
  // lengths and group/reserved wire types.
  bool next(Field& f);

  // Typed views of a field; each checks the wire type the caller expects (returns false = skip).
  static bool is(const Field& f, WireType w) { return f.wire == w; }
  static int32_t as_int32(const Field& f) { return static_cast<int32_t>(static_cast<uint32_t>(f.value)); }
  static int64_t as_int64(const Field& f) { return static_cast<int64_t>(f.value); }
  static float as_float(const Field& f);
  static double as_double(const Field& f);

  // Packed or unpacked repeated scalars, appended to `out`. Wrong wire types are skipped.
  void varints(const Field& f, std::vector<int64_t>& out);
  void varints32(const Field& f, std::vector<int32_t>& out);
  void uvarints(const Field& f, std::vector<uint64_t>& out);
  void floats(const Field& f, std::vector<float>& out);
  void doubles(const Field& f, std::vector<double>& out);

  // A UTF-8 checked string field (Malformed if invalid), or raw bytes.
  std::string string(const Field& f) const;
  std::string bytes(const Field& f) const;

 private:
  uint64_t varint(size_t& pos, size_t end, size_t field_offset) const;
  Context& c_;
  size_t pos_, end_;
};

bool valid_utf8(const uint8_t* p, size_t n);

}  // namespace onemodel::onnx
