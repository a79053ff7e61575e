// The manifest's JSON (json.h): nlohmann's SAX parser feeding a flat tree, with a depth limit that stops
// the parse before anything deeper is built, and the small text helpers the writer uses.
#include "format/json.h"

#include <iterator>
#include <nlohmann/json.hpp>

namespace onemodel::format {

// An input iterator over the manifest that publishes how many bytes the parser has consumed, so each SAX
// event can be given the offset of its value (nlohmann's events carry none).
class CountingIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;
  CountingIterator(const char* p, const char** consumed) : p_(p), consumed_(consumed) {}
  reference operator*() const { return *p_; }
  CountingIterator& operator++() {
    *consumed_ = ++p_;
    return *this;
  }
  CountingIterator operator++(int) {
    CountingIterator old = *this;
    ++*this;
    return old;
  }
  bool operator==(const CountingIterator& o) const { return p_ == o.p_; }
  bool operator!=(const CountingIterator& o) const { return p_ != o.p_; }

 private:
  const char* p_;
  const char** consumed_;
};

struct JsonBuilder {
  using json = nlohmann::json;
  Json& out;
  const char* begin;
  const char* consumed;  // one past the last byte the lexer has read
  const char* last_end;  // `consumed` at the previous event
  std::vector<uint32_t> open;
  bool have_key = false;
  uint32_t key_pos = 0, key_len = 0;
  std::string error;
  size_t error_offset = 0;
  bool too_deep = false;

  uint32_t pooled(const std::string& s) {
    auto pos = static_cast<uint32_t>(out.pool_.size());
    out.pool_ += s;
    return pos;
  }
  // A scalar starts at the first byte after the previous event that is not whitespace or a separator (the
  // lexer may have read one byte past a number, which is then a separator or whitespace).
  uint32_t scalar_start() {
    const char* p = last_end;
    while (p < consumed && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == ',' || *p == ':')) ++p;
    return static_cast<uint32_t>(p - begin);
  }
  JNode& add(JKind kind, uint32_t offset) {
    JNode n;
    n.kind = kind;
    n.offset = offset;
    if (have_key) {
      n.key_pos = key_pos;
      n.key_len = key_len;
      have_key = false;
    }
    out.nodes_.push_back(n);
    out.nodes_.back().end = static_cast<uint32_t>(out.nodes_.size());
    last_end = consumed;
    return out.nodes_.back();
  }
  bool scalar(JKind kind) {
    add(kind, scalar_start());
    return true;
  }
  bool null() { return scalar(JKind::Null); }
  bool boolean(bool v) {
    add(JKind::Bool, scalar_start()).v.b = v;
    return true;
  }
  bool number_integer(json::number_integer_t v) {
    add(JKind::Int, scalar_start()).v.i = v;
    return true;
  }
  bool number_unsigned(json::number_unsigned_t v) {
    add(JKind::Uint, scalar_start()).v.u = v;
    return true;
  }
  bool number_float(json::number_float_t, const json::string_t&) { return scalar(JKind::Float); }
  bool string(json::string_t& s) {
    uint32_t start = scalar_start();
    uint32_t pos = pooled(s);
    JNode& n = add(JKind::String, start);
    n.v.s.pos = pos;
    n.v.s.len = static_cast<uint32_t>(s.size());
    return true;
  }
  bool binary(json::binary_t&) { return false; }  // never produced by the JSON lexer
  bool start(JKind kind) {
    if (open.size() >= static_cast<size_t>(kMaxJsonDepth)) {
      too_deep = true;
      error = "the manifest nests arrays and objects deeper than " + std::to_string(kMaxJsonDepth) + " levels";
      error_offset = static_cast<size_t>(consumed - begin) - 1;
      return false;
    }
    add(kind, static_cast<uint32_t>(consumed - begin) - 1);
    open.push_back(static_cast<uint32_t>(out.nodes_.size() - 1));
    return true;
  }
  bool finish() {
    out.nodes_[open.back()].end = static_cast<uint32_t>(out.nodes_.size());
    open.pop_back();
    last_end = consumed;
    return true;
  }
  bool start_object(std::size_t) { return start(JKind::Object); }
  bool end_object() { return finish(); }
  bool start_array(std::size_t) { return start(JKind::Array); }
  bool end_array() { return finish(); }
  bool key(json::string_t& k) {
    key_pos = pooled(k);
    key_len = static_cast<uint32_t>(k.size());
    have_key = true;
    last_end = consumed;
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) {
    error = ex.what();
    error_offset = position > 0 ? position - 1 : 0;  // nlohmann counts characters read, from 1
    return false;
  }
};

bool Json::parse(const char* p, size_t n, std::string& error, size_t& error_offset, bool& too_deep) {
  nodes_.clear();
  pool_.clear();
  JsonBuilder b{*this, p, p, p, {}, false, 0, 0, {}, 0, false};
  CountingIterator first(p, &b.consumed), last(p + n, &b.consumed);
  bool ok = nlohmann::json::sax_parse(first, last, &b);
  if (!ok) {
    error = b.error.empty() ? std::string("invalid JSON") : b.error;
    error_offset = b.error.empty() ? static_cast<size_t>(b.consumed - p) : b.error_offset;
    too_deep = b.too_deep;
    return false;
  }
  return true;
}

uint32_t Json::count(uint32_t k) const {
  uint32_t c = 0;
  for (uint32_t i = first(k); i != end(k); i = next(i)) ++c;
  return c;
}

uint32_t Json::member(uint32_t k, std::string_view name, bool& duplicate) const {
  uint32_t found = kNone;
  duplicate = false;
  for (uint32_t i = first(k); i != end(k); i = next(i)) {
    if (key(i) != name) continue;
    if (found != kNone) duplicate = true;
    found = i;
  }
  return found;
}

void append_json_string(std::string& out, std::string_view s) {
  static const char* hex = "0123456789abcdef";
  out += '"';
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      out += "\\u00";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += ch;
    }
  }
  out += '"';
}

namespace {
constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
int b64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}
}  // namespace

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t k = 0;
  for (; k + 3 <= bytes.size(); k += 3) {
    uint32_t v = static_cast<uint32_t>(static_cast<unsigned char>(bytes[k])) << 16 |
                 static_cast<uint32_t>(static_cast<unsigned char>(bytes[k + 1])) << 8 |
                 static_cast<uint32_t>(static_cast<unsigned char>(bytes[k + 2]));
    for (int s = 18; s >= 0; s -= 6) out += kB64[v >> s & 63];
  }
  if (size_t rest = bytes.size() - k; rest > 0) {
    uint32_t v = static_cast<uint32_t>(static_cast<unsigned char>(bytes[k])) << 16;
    if (rest == 2) v |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[k + 1])) << 8;
    out += kB64[v >> 18 & 63];
    out += kB64[v >> 12 & 63];
    out += rest == 2 ? kB64[v >> 6 & 63] : '=';
    out += '=';
  }
  return out;
}

bool base64_decode(std::string_view text, std::string& out) {
  out.clear();
  if (text.size() % 4 != 0) return false;
  out.reserve(text.size() / 4 * 3);
  for (size_t k = 0; k < text.size(); k += 4) {
    const bool last = k + 4 == text.size();
    int pad = 0;
    if (last && text[k + 3] == '=') pad = text[k + 2] == '=' ? 2 : 1;
    uint32_t v = 0;
    for (int j = 0; j < 4; ++j) {
      int d = j >= 4 - pad ? 0 : b64_value(text[k + static_cast<size_t>(j)]);
      if (d < 0) return false;
      v = v << 6 | static_cast<uint32_t>(d);
    }
    // Padding bits must be zero (RFC 4648 section 3.5), so every byte string has one encoding.
    if ((pad == 1 && (v & 0xff) != 0) || (pad == 2 && (v & 0xffff) != 0)) return false;
    out += static_cast<char>(v >> 16 & 0xff);
    if (pad < 2) out += static_cast<char>(v >> 8 & 0xff);
    if (pad < 1) out += static_cast<char>(v & 0xff);
  }
  return true;
}

}  // namespace onemodel::format
