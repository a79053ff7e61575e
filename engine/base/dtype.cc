#include "onemodel/dtype.h"

#include <array>

namespace onemodel {
namespace {
// ONNX TensorProto.DataType names, indexed by code (0..28).
constexpr std::array<std::string_view, 29> kOnnxNames = {
    "undefined",  "float32",      "uint8",          "int8",       "uint16",         "int16",  "int32",     "int64",
    "string",     "bool",         "float16",        "float64",    "uint32",         "uint64", "complex64", "complex128",
    "bfloat16",   "float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz", "uint4",  "int4",      "float4e2m1",
    "float8e8m0", "uint2",        "int2",           "float6e2m3", "float6e3m2"};
}  // namespace

bool dtype_is_stored(DType t) noexcept { return dtype_size(t) != 0; }

size_t dtype_size(DType t) noexcept {
  switch (t) {
    case DType::F32:
    case DType::I32:
    case DType::U32: return 4;
    case DType::U8:
    case DType::I8:
    case DType::Bool: return 1;
    case DType::U16:
    case DType::I16:
    case DType::F16:
    case DType::BF16: return 2;
    case DType::I64:
    case DType::U64:
    case DType::F64: return 8;
    default: return 0;
  }
}

std::string_view dtype_name(DType t) noexcept {
  auto c = static_cast<int32_t>(t);
  if (c >= 0 && c < static_cast<int32_t>(kOnnxNames.size())) return kOnnxNames[static_cast<size_t>(c)];
  return "unknown";
}

std::string_view dtype_short_name(DType t) noexcept {
  switch (t) {
    case DType::F32: return "F32";
    case DType::U8: return "U8";
    case DType::I8: return "I8";
    case DType::U16: return "U16";
    case DType::I16: return "I16";
    case DType::I32: return "I32";
    case DType::I64: return "I64";
    case DType::Bool: return "Bool";
    case DType::F16: return "F16";
    case DType::F64: return "F64";
    case DType::U32: return "U32";
    case DType::U64: return "U64";
    case DType::BF16: return "BF16";
    default: return dtype_name(t);
  }
}

bool dtype_is_float(DType t) noexcept {
  return t == DType::F32 || t == DType::F64 || t == DType::F16 || t == DType::BF16;
}
bool dtype_is_integer(DType t) noexcept {
  switch (t) {
    case DType::U8:
    case DType::I8:
    case DType::U16:
    case DType::I16:
    case DType::I32:
    case DType::I64:
    case DType::U32:
    case DType::U64: return true;
    default: return false;
  }
}
bool dtype_is_signed(DType t) noexcept {
  return t == DType::I8 || t == DType::I16 || t == DType::I32 || t == DType::I64 || dtype_is_float(t);
}

}  // namespace onemodel
