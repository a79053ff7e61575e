// External data (onnx-import.md section 5): a relative location checked lexically, joined to the
// external-data directory, resolved through every symbolic link and required to stay inside the resolved
// directory; offset and length are strict decimals checked against the file size in 64 bits. Each file
// is mapped once per import and shared by all its tensors.
#include <system_error>

#include "onnx/mapped_file.h"
#include "onnx/proto.h"

namespace onemodel::onnx {
namespace {

// Lexical checks on `location`; returns an explanation of the problem, or "" when acceptable.
std::string location_problem(const std::string& loc) {
  if (loc.empty()) return "is empty";
  if (loc.find('\0') != std::string::npos) return "contains a NUL character";
  if (loc[0] == '/' || loc[0] == '\\') return "is an absolute path";
  if (loc.size() >= 2 && loc[1] == ':' && ((loc[0] >= 'A' && loc[0] <= 'Z') || (loc[0] >= 'a' && loc[0] <= 'z')))
    return "starts with a drive letter";
  std::filesystem::path p(loc);
  if (p.is_absolute() || p.has_root_path()) return "is rooted";
  size_t start = 0;
  while (start <= loc.size()) {
    size_t stop = loc.find_first_of("/\\", start);
    if (stop == std::string::npos) stop = loc.size();
    if (loc.compare(start, stop - start, "..") == 0 && stop - start == 2) return "has a '..' segment";
    start = stop + 1;
  }
  return "";
}

// Strict non-negative decimal (digits only, fits in int64).
bool parse_decimal(const std::string& s, uint64_t& out) {
  if (s.empty()) return false;
  uint64_t v = 0;
  for (char ch : s) {
    if (ch < '0' || ch > '9') return false;
    auto digit = static_cast<uint64_t>(ch - '0');
    if (v > (static_cast<uint64_t>(INT64_MAX) - digit) / 10) return false;  // leading zeros are fine
    v = v * 10 + digit;
  }
  out = v;
  return true;
}

// True when `inner` equals `dir` or lies below it (both already canonical).
bool inside(const std::filesystem::path& dir, const std::filesystem::path& inner) {
  auto d = dir.begin(), i = inner.begin();
  for (; d != dir.end(); ++d, ++i) {
    if (d->empty() && std::next(d) == dir.end()) break;  // trailing separator
    if (i == inner.end() || *d != *i) return false;
  }
  return true;
}

}  // namespace

Storage external_bytes(ImportState& st, const std::vector<ExternalEntry>& entries, uint64_t expected, int64_t offset) {
  Context& c = st.ctx;
  auto fail = [&](const std::string& m) { c.fail(ErrorKind::ExternalData, m, offset); };
  std::string location, off_text, len_text;
  bool has_location = false, has_offset = false, has_length = false;
  for (const auto& e : entries) {  // repeated keys: the last one wins
    if (e.key == "location") {
      location = e.value;
      has_location = true;
    } else if (e.key == "offset") {
      off_text = e.value;
      has_offset = true;
    } else if (e.key == "length") {
      len_text = e.value;
      has_length = true;
    }
  }
  if (!has_location) fail("external data has no location");
  if (std::string why = location_problem(location); !why.empty())
    fail("external data location '" + location + "' " + why);
  uint64_t off = 0, len = expected;
  if (has_offset && !parse_decimal(off_text, off))
    fail("external data offset '" + off_text + "' is not a non-negative decimal integer");
  if (has_length) {
    if (!parse_decimal(len_text, len))
      fail("external data length '" + len_text + "' is not a non-negative decimal integer");
    if (len != expected)
      fail("external data length " + std::to_string(len) + " differs from the tensor's " + std::to_string(expected) +
           " bytes");
  }
  if (!st.external_dir) fail("external data '" + location + "' needs an external data directory, and none was given");

  std::error_code ec;
  std::filesystem::path dir = std::filesystem::canonical(*st.external_dir, ec);
  if (ec) fail("external data directory '" + st.external_dir->string() + "' cannot be resolved: " + ec.message());
  std::filesystem::path file = std::filesystem::weakly_canonical(dir / location, ec);
  if (ec) fail("external data '" + location + "' cannot be resolved: " + ec.message());
  if (!inside(dir, file)) fail("external data '" + location + "' resolves outside the external data directory");
  if (!std::filesystem::is_regular_file(file, ec))
    fail("external data '" + location + "' is not an existing regular file");
  uint64_t size = std::filesystem::file_size(file, ec);
  if (ec) fail("external data '" + location + "' size cannot be read: " + ec.message());
  if (off > size || len > size - off)
    fail("external data range " + std::to_string(off) + "+" + std::to_string(len) + " exceeds the " +
         std::to_string(size) + " bytes of '" + location + "'");

  Storage whole;
  if (mapping_available()) {
    auto it = st.mapped.find(file.string());
    if (it == st.mapped.end()) {
      try {
        it = st.mapped.emplace(file.string(), map_whole_file(file)).first;
      } catch (Error& e) {
        throw c.error(ErrorKind::Io, e.message(), offset);
      }
    }
    whole = it->second;
    if (whole.bytes < off + len) fail("external data file '" + location + "' changed size while importing");
    Storage s;
    s.data = std::shared_ptr<std::byte>(whole.data, whole.data.get() + off);
    s.bytes = static_cast<size_t>(len);
    return s;
  }
  try {
    return read_range(file, off, len);
  } catch (Error& e) {
    throw c.error(ErrorKind::Io, e.message(), offset);
  }
}

}  // namespace onemodel::onnx
