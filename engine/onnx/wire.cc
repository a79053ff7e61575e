// The protobuf wire reader (onnx-import.md section 1). See wire.h for the rules it enforces.
#include "onnx/wire.h"

#include <cstring>

#include "base/bits.h"

namespace onemodel::onnx {

Error Context::error(ErrorKind kind, const std::string& message, int64_t offset) const {
  Error e(kind, message);
  e.with_source(source_);
  if (offset >= 0) e.with_offset(offset);
  if (!path_.empty()) e.with_field_path(path_);
  return e;
}

void Context::enter(int64_t offset) {
  if (depth_ >= max_nesting_)
    fail(ErrorKind::Malformed, "messages nested deeper than " + std::to_string(max_nesting_) + " levels", offset);
  ++depth_;
}

// Reads one varint at `pos` (advancing it). At most 10 bytes; the tenth may only carry the top bit
// of a 64-bit value (0 or 1). Overlong encodings are accepted, as protobuf allows.
uint64_t Reader::varint(size_t& pos, size_t end, size_t field_offset) const {
  const uint8_t* b = c_.base();
  uint64_t v = 0;
  for (int i = 0; i < 10; ++i) {
    if (pos >= end)
      c_.fail(ErrorKind::Malformed, "varint cut off by the end of the data", static_cast<int64_t>(field_offset));
    uint8_t byte = b[pos++];
    if (i == 9) {
      if (byte > 1) c_.fail(ErrorKind::Malformed, "varint overflows 64 bits", static_cast<int64_t>(field_offset));
      return v | (static_cast<uint64_t>(byte) << 63);
    }
    v |= static_cast<uint64_t>(byte & 0x7f) << (7 * i);
    if ((byte & 0x80) == 0) return v;
  }
  return v;  // unreachable: the loop returns on the tenth byte
}

bool Reader::next(Field& f) {
  if (pos_ >= end_) return false;
  f.key_offset = pos_;
  const auto at = static_cast<int64_t>(pos_);
  uint64_t key = varint(pos_, end_, f.key_offset);
  if (key > 0xffffffffull) c_.fail(ErrorKind::Malformed, "field key wider than 32 bits", at);
  f.number = static_cast<uint32_t>(key >> 3);
  unsigned wire = static_cast<unsigned>(key & 7);
  if (f.number == 0) c_.fail(ErrorKind::Malformed, "field number 0", at);
  const uint8_t* b = c_.base();
  switch (wire) {
    case 0:
      f.wire = WireType::Varint;
      f.value = varint(pos_, end_, f.key_offset);
      return true;
    case 1:
      if (end_ - pos_ < 8) c_.fail(ErrorKind::Malformed, "64-bit field cut off by the end of the data", at);
      f.wire = WireType::Fixed64;
      f.value = 0;
      for (int i = 0; i < 8; ++i) f.value |= static_cast<uint64_t>(b[pos_ + static_cast<size_t>(i)]) << (8 * i);
      pos_ += 8;
      return true;
    case 5:
      if (end_ - pos_ < 4) c_.fail(ErrorKind::Malformed, "32-bit field cut off by the end of the data", at);
      f.wire = WireType::Fixed32;
      f.value = 0;
      for (int i = 0; i < 4; ++i) f.value |= static_cast<uint64_t>(b[pos_ + static_cast<size_t>(i)]) << (8 * i);
      pos_ += 4;
      return true;
    case 2: {
      f.wire = WireType::Len;
      uint64_t len = varint(pos_, end_, f.key_offset);
      if (len > static_cast<uint64_t>(end_ - pos_))
        c_.fail(ErrorKind::Malformed,
                "length " + std::to_string(len) + " exceeds the " + std::to_string(end_ - pos_) + " bytes that remain",
                at);
      f.begin = pos_;
      f.end = pos_ + static_cast<size_t>(len);
      pos_ = f.end;
      return true;
    }
    case 3:
    case 4: c_.fail(ErrorKind::Malformed, "group wire type " + std::to_string(wire) + " is not supported", at);
    default: c_.fail(ErrorKind::Malformed, "invalid wire type " + std::to_string(wire), at);
  }
}

float Reader::as_float(const Field& f) { return float_from_bits(static_cast<uint32_t>(f.value)); }

double Reader::as_double(const Field& f) { return double_from_bits(f.value); }

void Reader::uvarints(const Field& f, std::vector<uint64_t>& out) {
  if (f.wire == WireType::Varint) {
    out.push_back(f.value);
  } else if (f.wire == WireType::Len) {
    size_t p = f.begin;
    while (p < f.end) out.push_back(varint(p, f.end, p));
  }
}

void Reader::varints(const Field& f, std::vector<int64_t>& out) {
  if (f.wire == WireType::Varint) {
    out.push_back(static_cast<int64_t>(f.value));
  } else if (f.wire == WireType::Len) {
    size_t p = f.begin;
    while (p < f.end) out.push_back(static_cast<int64_t>(varint(p, f.end, p)));
  }
}

void Reader::varints32(const Field& f, std::vector<int32_t>& out) {
  if (f.wire == WireType::Varint) {
    out.push_back(as_int32(f));
  } else if (f.wire == WireType::Len) {
    size_t p = f.begin;
    while (p < f.end) out.push_back(static_cast<int32_t>(static_cast<uint32_t>(varint(p, f.end, p))));
  }
}

void Reader::floats(const Field& f, std::vector<float>& out) {
  if (f.wire == WireType::Fixed32) {
    out.push_back(as_float(f));
  } else if (f.wire == WireType::Len) {
    if ((f.end - f.begin) % 4 != 0)
      c_.fail(ErrorKind::Malformed, "packed 32-bit field length is not a multiple of 4",
              static_cast<int64_t>(f.key_offset));
    for (size_t p = f.begin; p < f.end; p += 4) {
      float x;
      std::memcpy(&x, c_.base() + p, 4);  // little-endian hosts only (x86-64, arm64, wasm)
      out.push_back(x);
    }
  }
}

void Reader::doubles(const Field& f, std::vector<double>& out) {
  if (f.wire == WireType::Fixed64) {
    out.push_back(as_double(f));
  } else if (f.wire == WireType::Len) {
    if ((f.end - f.begin) % 8 != 0)
      c_.fail(ErrorKind::Malformed, "packed 64-bit field length is not a multiple of 8",
              static_cast<int64_t>(f.key_offset));
    for (size_t p = f.begin; p < f.end; p += 8) {
      double x;
      std::memcpy(&x, c_.base() + p, 8);
      out.push_back(x);
    }
  }
}

std::string Reader::string(const Field& f) const {
  const uint8_t* p = c_.base() + f.begin;
  size_t n = f.end - f.begin;
  if (!valid_utf8(p, n))
    c_.fail(ErrorKind::Malformed, "string field is not valid UTF-8", static_cast<int64_t>(f.key_offset));
  return std::string(reinterpret_cast<const char*>(p), n);
}

std::string Reader::bytes(const Field& f) const {
  return std::string(reinterpret_cast<const char*>(c_.base() + f.begin), f.end - f.begin);
}

// Strict UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF.
bool valid_utf8(const uint8_t* p, size_t n) {
  size_t i = 0;
  while (i < n) {
    uint8_t c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint32_t cp;
    if (c >= 0xc2 && c <= 0xdf) {
      len = 2;
      cp = c & 0x1fu;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      cp = c & 0x0fu;
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      cp = c & 0x07u;
    } else
      return false;
    if (n - i < len) return false;
    for (size_t k = 1; k < len; ++k) {
      uint8_t t = p[i + k];
      if ((t & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (t & 0x3fu);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
      return false;
    i += len;
  }
  return true;
}

}  // namespace onemodel::onnx
