// .npy reading and writing; the accepted subset and the choices made are described in cli/npy.h.
// The header is a Python dict literal; we parse exactly the shapes numpy writes (strings, True/False,
// tuples of non-negative integers) with a tiny bounds-checked scanner instead of evaluating anything.
#include "cli/npy.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <optional>

namespace onemodel::cli {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

[[noreturn]] void malformed(const std::string& source, const std::string& what) {
  throw Error(ErrorKind::Malformed, "not a valid .npy file: " + what).with_source(source);
}

// Scanner over the header text. Every read is bounds-checked; errors name the character position.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& source) : s_(text), source_(source) {}

  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }
  bool at_end() {
    skip_space();
    return pos_ >= s_.size();
  }
  bool peek(char c) {
    skip_space();
    return pos_ < s_.size() && s_[pos_] == c;
  }
  void expect(char c) {
    if (!peek(c)) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  std::string string() {
    skip_space();
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) fail("expected a quoted string");
    char q = s_[pos_++];
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != q) {
      if (s_[pos_] == '\\') fail("escape sequences are not supported in header strings");
      out += s_[pos_++];
    }
    if (pos_ >= s_.size()) fail("unterminated string");
    ++pos_;
    return out;
  }
  bool boolean() {
    skip_space();
    if (s_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (s_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    fail("expected True or False");
  }
  // A tuple of non-negative integers: (), (3,), (2, 3), (2, 3,).
  std::vector<int64_t> int_tuple() {
    expect('(');
    std::vector<int64_t> dims;
    while (!peek(')')) {
      dims.push_back(integer());
      if (peek(',')) {
        ++pos_;
      } else if (!peek(')')) {
        fail("expected ',' or ')' in the shape");
      }
    }
    ++pos_;
    // "(3)" is the integer 3 in Python, not a tuple; numpy never writes it, so refuse it.
    return dims;
  }
  [[noreturn]] void fail(const std::string& what) const {
    malformed(source_, "header dict syntax: " + what + " at character " + std::to_string(pos_) + " of \"" +
                           std::string(s_.substr(0, 200)) + "\"");
  }

 private:
  int64_t integer() {
    skip_space();
    size_t start = pos_;
    uint64_t v = 0;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
      v = v * 10 + static_cast<uint64_t>(s_[pos_] - '0');
      // Anything past 2^62 is far beyond any file; stop before the arithmetic could wrap.
      if (v > (uint64_t{1} << 62)) malformed(source_, "shape extent overflows a 64-bit integer");
      ++pos_;
    }
    if (pos_ == start) fail("expected a non-negative integer");
    if (pos_ < s_.size() && s_[pos_] == 'L') ++pos_;  // Python 2 long suffix
    return static_cast<int64_t>(v);
  }

  std::string_view s_;
  size_t pos_ = 0;
  const std::string& source_;
};

struct Header {
  std::string descr;
  bool fortran = false;
  std::vector<int64_t> shape;
};

Header parse_header_dict(std::string_view text, const std::string& source) {
  HeaderParser p(text, source);
  std::optional<std::string> descr;
  std::optional<bool> fortran;
  std::optional<std::vector<int64_t>> shape;
  p.expect('{');
  while (!p.peek('}')) {
    std::string key = p.string();
    p.expect(':');
    if (key == "descr") {
      if (descr) malformed(source, "key 'descr' appears twice");
      if (p.peek('['))
        throw Error(ErrorKind::Unsupported, "structured .npy dtypes are not supported").with_source(source);
      descr = p.string();
    } else if (key == "fortran_order") {
      if (fortran) malformed(source, "key 'fortran_order' appears twice");
      fortran = p.boolean();
    } else if (key == "shape") {
      if (shape) malformed(source, "key 'shape' appears twice");
      shape = p.int_tuple();
    } else {
      malformed(source, "unexpected header key '" + key + "'");
    }
    if (p.peek(',')) {
      p.expect(',');
    } else if (!p.peek('}')) {
      p.fail("expected ',' or '}'");
    }
  }
  p.expect('}');
  if (!p.at_end()) p.fail("text after the closing '}'");
  if (!descr) malformed(source, "header lacks the key 'descr'");
  if (!fortran) malformed(source, "header lacks the key 'fortran_order'");
  if (!shape) malformed(source, "header lacks the key 'shape'");
  return {*descr, *fortran, *shape};
}

struct TypeCode {
  DType dtype;
  bool big_endian;
};

TypeCode parse_descr(const std::string& d, const std::string& source) {
  auto unsupported = [&]() -> TypeCode {
    throw Error(ErrorKind::Unsupported,
                "the .npy dtype '" + d + "' is not supported (f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1 are)")
        .with_source(source);
  };
  if (d.size() < 3) unsupported();
  char order = d[0];
  if (order != '<' && order != '>' && order != '|' && order != '=') unsupported();
  std::string code = d.substr(1);
  static const struct {
    const char* code;
    DType dtype;
  } kTable[] = {{"f2", DType::F16}, {"f4", DType::F32}, {"f8", DType::F64}, {"i1", DType::I8},
                {"i2", DType::I16}, {"i4", DType::I32}, {"i8", DType::I64}, {"u1", DType::U8},
                {"u2", DType::U16}, {"u4", DType::U32}, {"u8", DType::U64}, {"b1", DType::Bool}};
  for (const auto& e : kTable)
    if (code == e.code) return {e.dtype, order == '>'};
  return unsupported();
}

uint32_t read_le(const std::byte* p, int n) {
  uint32_t v = 0;
  for (int i = 0; i < n; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}

}  // namespace

Tensor parse_npy(std::span<const std::byte> bytes, const std::string& source) {
  if (bytes.size() < kMagicLen + 2)
    malformed(source, "file of " + std::to_string(bytes.size()) + " bytes is truncated");
  if (std::memcmp(bytes.data(), kMagic, kMagicLen) != 0) malformed(source, "bad magic (expected \\x93NUMPY)");
  int major = static_cast<int>(bytes[6]), minor = static_cast<int>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    throw Error(ErrorKind::Unsupported, ".npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                                            " is not supported (1.0, 2.0 and 3.0 are)")
        .with_source(source);
  size_t len_bytes = major == 1 ? 2 : 4;
  size_t prefix = kMagicLen + 2 + len_bytes;
  if (bytes.size() < prefix) malformed(source, "file is truncated inside the header length");
  uint64_t header_len = read_le(bytes.data() + 8, static_cast<int>(len_bytes));
  if (header_len > bytes.size() - prefix)
    malformed(source, "header length " + std::to_string(header_len) + " goes beyond the end of the file (" +
                          std::to_string(bytes.size()) + " bytes)");
  std::string_view text(reinterpret_cast<const char*>(bytes.data() + prefix), static_cast<size_t>(header_len));
  Header h = parse_header_dict(text, source);
  TypeCode tc = parse_descr(h.descr, source);
  const size_t es = dtype_size(tc.dtype);

  // Size checks before the engine's shape limits: a shape that needs more bytes than the file has is
  // malformed whatever its size, and the products are computed without overflow.
  const uint64_t data_off = prefix + header_len;
  const uint64_t avail = bytes.size() - data_off;
  uint64_t count = 1;
  bool zero = std::any_of(h.shape.begin(), h.shape.end(), [](int64_t d) { return d == 0; });
  if (!zero) {
    for (int64_t d : h.shape) {
      if (count > avail / static_cast<uint64_t>(d)) malformed(source, "data is shorter than the shape needs");
      count *= static_cast<uint64_t>(d);
    }
  } else {
    count = 0;
  }
  if (count > avail / es)
    malformed(source, "data is shorter than the shape needs (" + std::to_string(avail) + " bytes for " +
                          std::to_string(count) + " elements of " + std::to_string(es) + " bytes)");
  if (count * es < avail)
    malformed(source, std::to_string(avail - count * es) + " bytes follow the data the shape describes");
  if (h.shape.size() > static_cast<size_t>(kMaxRank))
    throw Error(ErrorKind::Unsupported, "rank " + std::to_string(h.shape.size()) + " exceeds the limit of 8")
        .with_source(source);
  if (!Shape::valid(h.shape))
    throw Error(ErrorKind::Unsupported,
                "shape exceeds the engine's limit of 2^31-1 elements (also for every prefix product)")
        .with_source(source);

  // Fortran order: the bytes are the C-order layout of the reversed shape.
  std::vector<int64_t> stored = h.shape;
  if (h.fortran) std::reverse(stored.begin(), stored.end());
  Tensor t = Tensor::zeros(tc.dtype, Shape(std::span<const int64_t>(stored)));
  auto* dst = static_cast<std::byte*>(t.raw_mut());
  const std::byte* src = bytes.data() + data_off;
  if (count) std::memcpy(dst, src, count * es);
  if (tc.big_endian && es > 1)
    for (uint64_t i = 0; i < count; ++i) std::reverse(dst + i * es, dst + (i + 1) * es);
  if (tc.dtype == DType::Bool)
    for (uint64_t i = 0; i < count; ++i)
      if (static_cast<uint8_t>(dst[i]) > 1)
        malformed(source, "bool element " + std::to_string(i) + " holds " + std::to_string(static_cast<int>(dst[i])) +
                              ", not 0 or 1");
  if (h.fortran && t.rank() > 1) {
    std::vector<int> perm(static_cast<size_t>(t.rank()));
    for (int i = 0; i < t.rank(); ++i) perm[static_cast<size_t>(i)] = t.rank() - 1 - i;
    t = t.permute(perm).contiguous();
  }
  return t;
}

Tensor read_npy(const std::filesystem::path& path) {
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (ec) throw Error(ErrorKind::Io, "cannot read " + path.string() + ": " + ec.message());
  // The largest acceptable file: a full 2^31-1 byte tensor plus a version 2 header of up to 4 GiB is absurd,
  // so allow a generous 16 MiB of header on top of the data limit.
  if (size > static_cast<uint64_t>(kMaxElements) + (16u << 20))
    throw Error(ErrorKind::Unsupported,
                "file of " + std::to_string(size) + " bytes exceeds the 2^31-1 byte tensor limit")
        .with_source(path.string());
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(ErrorKind::Io, "cannot open " + path.string());
  std::vector<std::byte> buf(static_cast<size_t>(size));
  if (size && !f.read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(size)))
    throw Error(ErrorKind::Io, "cannot read " + path.string());
  return parse_npy(buf, path.string());
}

std::vector<std::byte> npy_bytes(const Tensor& t) {
  if (t.empty()) throw Error(ErrorKind::InvalidArgument, "cannot write an unset tensor as .npy");
  const char* descr = nullptr;
  switch (t.dtype()) {
    case DType::F16: descr = "<f2"; break;
    case DType::F32: descr = "<f4"; break;
    case DType::F64: descr = "<f8"; break;
    case DType::I8: descr = "|i1"; break;
    case DType::I16: descr = "<i2"; break;
    case DType::I32: descr = "<i4"; break;
    case DType::I64: descr = "<i8"; break;
    case DType::U8: descr = "|u1"; break;
    case DType::U16: descr = "<u2"; break;
    case DType::U32: descr = "<u4"; break;
    case DType::U64: descr = "<u8"; break;
    case DType::Bool: descr = "|b1"; break;
    default:
      throw Error(ErrorKind::Unsupported,
                  "element type " + std::string(dtype_name(t.dtype())) + " has no .npy equivalent");
  }
  std::string shape = "(";
  for (int i = 0; i < t.rank(); ++i)
    shape += std::to_string(t.shape()[i]) + (t.rank() == 1 ? "," : i + 1 < t.rank() ? ", " : "");
  shape += ")";
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad with spaces so magic + version + length + header (ending in '\n') is a multiple of 64.
  size_t total = kMagicLen + 2 + 2 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::vector<std::byte> out;
  out.reserve(kMagicLen + 4 + header.size() + t.nbytes());
  for (size_t i = 0; i < kMagicLen; ++i) out.push_back(static_cast<std::byte>(kMagic[i]));
  out.push_back(std::byte{1});
  out.push_back(std::byte{0});
  out.push_back(static_cast<std::byte>(header.size() & 0xff));
  out.push_back(static_cast<std::byte>(header.size() >> 8));
  for (char c : header) out.push_back(static_cast<std::byte>(c));
  Tensor c = t.contiguous();
  const auto* p = static_cast<const std::byte*>(c.raw());
  out.insert(out.end(), p, p + c.nbytes());
  return out;
}

void write_npy(const std::filesystem::path& path, const Tensor& t) {
  std::vector<std::byte> bytes = npy_bytes(t);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw Error(ErrorKind::Io, "cannot create " + path.string());
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  f.close();
  if (!f) throw Error(ErrorKind::Io, "cannot write " + path.string());
}

}  // namespace onemodel::cli
