// TensorProto and SparseTensorProto (onnx-import.md section 3): element counts and byte lengths decided
// from the dims alone, then the values from exactly one source (external data, raw_data or the typed
// field), converted to the little-endian raw layout. Stored element types become Tensors that view the
// input bytes (or a small converted array); the others keep their bytes in TensorValue::raw.
#include <cstring>

#include "onnx/proto.h"

namespace onemodel::onnx {
namespace {

constexpr uint64_t kMaxCount = uint64_t{1} << 60;
constexpr uint64_t kMaxBytes = 2147483647;

// Bits per element by TensorProto.DataType code; 0 for undefined/string/unknown codes.
int element_bits(int32_t code) {
  switch (code) {
    case 1:
    case 6:
    case 12: return 32;
    case 2:
    case 3:
    case 9:
    case 17:
    case 18:
    case 19:
    case 20:
    case 24: return 8;
    case 4:
    case 5:
    case 10:
    case 16: return 16;
    case 7:
    case 11:
    case 13:
    case 14: return 64;
    case 15: return 128;
    case 21:
    case 22:
    case 23: return 4;
    case 25:
    case 26: return 2;
    case 27:
    case 28: return 6;
    default: return 0;
  }
}

// Which typed field serves a code (section 3).
enum class Typed { Float, Double, Int64, Uint64, Int32, String };
Typed typed_field_for(int32_t code) {
  switch (code) {
    case 1:
    case 14: return Typed::Float;
    case 11:
    case 15: return Typed::Double;
    case 7: return Typed::Int64;
    case 12:
    case 13: return Typed::Uint64;
    case 8: return Typed::String;
    default: return Typed::Int32;
  }
}

const char* typed_name(Typed t) {
  switch (t) {
    case Typed::Float: return "float_data";
    case Typed::Double: return "double_data";
    case Typed::Int64: return "int64_data";
    case Typed::Uint64: return "uint64_data";
    case Typed::String: return "string_data";
    default: return "int32_data";
  }
}

struct RawTensor {
  std::vector<int64_t> dims;
  int32_t data_type = 0;
  bool has_segment = false;
  std::vector<float> float_data;
  std::vector<int32_t> int32_data;
  std::vector<std::string> string_data;
  std::vector<int64_t> int64_data;
  std::vector<double> double_data;
  std::vector<uint64_t> uint64_data;
  bool has_raw = false;
  size_t raw_begin = 0, raw_end = 0;
  int64_t raw_offset = -1;
  std::vector<ExternalEntry> external;
  int32_t data_location = 0;
};

void parse_entry(ImportState& st, size_t begin, size_t end, ExternalEntry& e) {
  Reader r(st.ctx, begin, end);
  Field f;
  while (r.next(f)) {
    if (f.wire != WireType::Len) continue;
    if (f.number == 1)
      e.key = r.string(f);
    else if (f.number == 2)
      e.value = r.string(f);
  }
}

// Converts the typed field into the raw little-endian layout.
std::vector<uint8_t> convert_typed(const RawTensor& t, Typed which, int bits, uint64_t count) {
  std::vector<uint8_t> out;
  auto put = [&out](const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    out.insert(out.end(), b, b + n);
  };
  switch (which) {
    case Typed::Float:
      for (float v : t.float_data) put(&v, 4);
      break;
    case Typed::Double:
      for (double v : t.double_data) put(&v, 8);
      break;
    case Typed::Int64:
      for (int64_t v : t.int64_data) put(&v, 8);
      break;
    case Typed::Uint64:
      for (uint64_t v : t.uint64_data) {
        if (t.data_type == 12) {
          auto low = static_cast<uint32_t>(v);
          put(&low, 4);
        } else {
          put(&v, 8);
        }
      }
      break;
    case Typed::Int32:
      if (bits == 6) {
        // One 6-bit element per entry, packed LSB-first into a bit stream (4 elements in 3 bytes).
        out.assign(static_cast<size_t>((t.int32_data.size() * 6 + 7) / 8), 0);
        for (size_t k = 0; k < t.int32_data.size(); ++k) {
          uint32_t v = static_cast<uint32_t>(t.int32_data[k]) & 0x3fu;
          size_t bit = k * 6;
          out[bit / 8] = static_cast<uint8_t>(out[bit / 8] | (v << (bit % 8)));
          if (bit % 8 > 2) out[bit / 8 + 1] = static_cast<uint8_t>(out[bit / 8 + 1] | (v >> (8 - bit % 8)));
        }
        (void)count;
        break;
      }
      for (int32_t v : t.int32_data) {
        if (bits == 32) {
          put(&v, 4);
        } else if (bits == 16) {
          auto low = static_cast<uint16_t>(v);
          put(&low, 2);
        } else if (t.data_type == 9) {
          out.push_back(v != 0 ? 1 : 0);
        } else {  // 8-bit types; 4-bit and 2-bit entries are one packed byte each
          out.push_back(static_cast<uint8_t>(v));
        }
      }
      break;
    case Typed::String: break;
  }
  return out;
}

bool typed_present(const RawTensor& t, Typed which) {
  switch (which) {
    case Typed::Float: return !t.float_data.empty();
    case Typed::Double: return !t.double_data.empty();
    case Typed::Int64: return !t.int64_data.empty();
    case Typed::Uint64: return !t.uint64_data.empty();
    case Typed::Int32: return !t.int32_data.empty();
    case Typed::String: return !t.string_data.empty();
  }
  return false;
}

}  // namespace

Storage input_bytes(const ImportState& st, uint64_t begin, uint64_t n) {
  Storage out;
  if (st.copy_raw) {
    out = allocate_storage(static_cast<size_t>(n));
    if (n) std::memcpy(out.data.get(), st.file.data.get() + begin, static_cast<size_t>(n));
  } else {
    out.data = std::shared_ptr<std::byte>(st.file.data, st.file.data.get() + begin);
    out.bytes = static_cast<size_t>(n);
  }
  return out;
}

// Stored types become a Tensor over `bytes`; Shape() refuses rank > 8 and > 2^31-1 elements.
void attach_tensor_bytes(ImportState& st, ir::TensorValue& tv, const Storage& bytes, int64_t offset) {
  if (dtype_is_stored(tv.dtype)) {
    if (!Shape::valid(tv.dims))
      st.ctx.fail(ErrorKind::Unsupported,
                  "tensor '" + tv.name + "' has rank " + std::to_string(tv.dims.size()) +
                      " or more than 2^31-1 elements, beyond the engine's tensor limits",
                  offset);
    tv.data = Tensor::view_of(bytes, 0, tv.dtype, Shape(std::span<const int64_t>(tv.dims)));
  } else {
    tv.raw = bytes;
  }
}

TensorSize tensor_size(const Context& c, const std::string& who, const std::vector<int64_t>& dims, int32_t code,
                       int64_t offset) {
  uint64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0) c.fail(ErrorKind::InvalidModel, who + " has negative dimension " + std::to_string(d), offset);
    auto ud = static_cast<uint64_t>(d);
    if (ud != 0 && count > kMaxCount / ud)
      c.fail(ErrorKind::InvalidModel, who + " has more than 2^60 elements", offset);
    count *= ud;
  }
  if (count > kMaxCount) c.fail(ErrorKind::InvalidModel, who + " has more than 2^60 elements", offset);
  if (code == 0) c.fail(ErrorKind::InvalidModel, who + " has no element type", offset);
  const int bits = element_bits(code);
  if (code != 8 && bits == 0)
    c.fail(ErrorKind::Unsupported, who + " has unknown element type code " + std::to_string(code), offset);
  uint64_t expected = 0;
  if (code != 8) {
    // ceil(count * bits / 8) without overflowing 64 bits (count <= 2^60, bits <= 128).
    expected = (count / 8) * static_cast<uint64_t>(bits) + ((count % 8) * static_cast<uint64_t>(bits) + 7) / 8;
    if (expected > kMaxBytes)
      c.fail(ErrorKind::Unsupported, who + " needs " + std::to_string(expected) + " bytes, more than 2^31-1", offset);
  }
  return {count, expected};
}

std::shared_ptr<ir::TensorValue> parse_tensor(ImportState& st, size_t begin, size_t end, int64_t offset) {
  Context& c = st.ctx;
  RawTensor t;
  auto tv = std::make_shared<ir::TensorValue>();
  Reader r(c, begin, end);
  Field f;
  while (r.next(f)) {
    switch (f.number) {
      case 1: r.varints(f, t.dims); break;
      case 2:
        if (f.wire == WireType::Varint) t.data_type = Reader::as_int32(f);
        break;
      case 3:
        if (f.wire == WireType::Len) t.has_segment = true;
        break;
      case 4: r.floats(f, t.float_data); break;
      case 5: r.varints32(f, t.int32_data); break;
      case 6:
        if (f.wire == WireType::Len) t.string_data.push_back(r.bytes(f));
        break;
      case 7: r.varints(f, t.int64_data); break;
      case 8:
        if (f.wire == WireType::Len) tv->name = r.string(f);
        break;
      case 9:
        if (f.wire == WireType::Len) {
          t.has_raw = true;
          t.raw_begin = f.begin;
          t.raw_end = f.end;
          t.raw_offset = static_cast<int64_t>(f.key_offset);
        }
        break;
      case 10: r.doubles(f, t.double_data); break;
      case 11: r.uvarints(f, t.uint64_data); break;
      case 12:
        if (f.wire == WireType::Len) tv->doc_string = r.string(f);
        break;
      case 13:
        if (f.wire == WireType::Len) {
          Descend d(c, ".external_data[" + std::to_string(t.external.size()) + "]", true,
                    static_cast<int64_t>(f.key_offset));
          t.external.emplace_back();
          parse_entry(st, f.begin, f.end, t.external.back());
        }
        break;
      case 14:
        if (f.wire == WireType::Varint) t.data_location = Reader::as_int32(f);
        break;
      default: break;
    }
  }
  tv->dims = t.dims;
  tv->dtype = static_cast<DType>(t.data_type);
  const std::string who = tv->name.empty() ? std::string("tensor") : "tensor '" + tv->name + "'";

  const TensorSize size = tensor_size(c, who, t.dims, t.data_type, offset);
  const uint64_t count = size.count, expected = size.bytes;
  const bool is_string = t.data_type == 8;
  const int bits = element_bits(t.data_type);
  if (t.has_segment) c.fail(ErrorKind::Unsupported, who + " uses segments, which are not supported", offset);

  const Typed which = typed_field_for(t.data_type);
  const Typed all[] = {Typed::Float, Typed::Double, Typed::Int64, Typed::Uint64, Typed::Int32, Typed::String};
  bool any_typed = false;
  for (Typed k : all) {
    if (!typed_present(t, k)) continue;
    any_typed = true;
    if (k != which)
      c.fail(ErrorKind::InvalidModel,
             who + " of type " + std::string(dtype_name(tv->dtype)) + " has " + typed_name(k) +
                 ", which does not belong to it",
             offset);
  }

  if (t.data_location == 1) {
    if (t.has_raw || any_typed)
      c.fail(ErrorKind::InvalidModel, who + " mixes external data with inline values", offset);
    if (is_string) c.fail(ErrorKind::InvalidModel, who + " of strings cannot use external data", offset);
    Descend d(c, ".external_data", false, offset);
    attach_tensor_bytes(st, *tv, external_bytes(st, t.external, expected, offset), offset);
    return tv;
  }
  if (t.data_location != 0)
    c.fail(ErrorKind::InvalidModel, who + " has unknown data_location " + std::to_string(t.data_location), offset);

  if (t.has_raw) {
    if (any_typed) c.fail(ErrorKind::InvalidModel, who + " mixes raw_data with a typed data field", offset);
    if (is_string) c.fail(ErrorKind::InvalidModel, who + " of strings has raw_data", t.raw_offset);
    uint64_t n = t.raw_end - t.raw_begin;
    if (n != expected) {
      Descend d(c, ".raw_data", false, -1);
      c.fail(ErrorKind::InvalidModel,
             who + " has " + std::to_string(n) + " bytes of raw_data, expected " + std::to_string(expected),
             t.raw_offset);
    }
    attach_tensor_bytes(st, *tv, input_bytes(st, t.raw_begin, n), offset);
    return tv;
  }

  if (is_string) {
    if (t.string_data.size() != count)
      c.fail(
          ErrorKind::InvalidModel,
          who + " has " + std::to_string(t.string_data.size()) + " strings for " + std::to_string(count) + " elements",
          offset);
    tv->strings = std::move(t.string_data);
    return tv;
  }

  std::vector<uint8_t> bytes = convert_typed(t, which, bits, count);
  if (bytes.size() != expected) {
    if (!any_typed && count > 0)
      c.fail(ErrorKind::InvalidModel, who + " has " + std::to_string(count) + " elements and no data", offset);
    c.fail(ErrorKind::InvalidModel,
           who + " has " + std::to_string(bytes.size()) + " bytes of " + typed_name(which) + " data, expected " +
               std::to_string(expected),
           offset);
  }
  Storage s = allocate_storage(bytes.size());
  if (!bytes.empty()) std::memcpy(s.data.get(), bytes.data(), bytes.size());
  attach_tensor_bytes(st, *tv, s, offset);
  return tv;
}

std::shared_ptr<ir::SparseTensorValue> parse_sparse_tensor(ImportState& st, size_t begin, size_t end, int64_t offset) {
  (void)offset;
  auto sv = std::make_shared<ir::SparseTensorValue>();
  Reader r(st.ctx, begin, end);
  Field f;
  while (r.next(f)) {
    if (f.number == 3) {
      r.varints(f, sv->dims);
    } else if ((f.number == 1 || f.number == 2) && f.wire == WireType::Len) {
      Descend d(st.ctx, f.number == 1 ? ".values" : ".indices", true, static_cast<int64_t>(f.key_offset));
      auto t = parse_tensor(st, f.begin, f.end, static_cast<int64_t>(f.key_offset));
      (f.number == 1 ? sv->values : sv->indices) = std::move(*t);
    }
  }
  return sv;
}

}  // namespace onemodel::onnx
