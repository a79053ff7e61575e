// Element types. The numeric value is the ONNX TensorProto.DataType code (tensors.md section 2),
// so no mapping table exists between the file format and the engine.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace onemodel {

enum class DType : int32_t {
  Undefined = 0,
  F32 = 1,
  U8 = 2,
  I8 = 3,
  U16 = 4,
  I16 = 5,
  I32 = 6,
  I64 = 7,
  String = 8,
  Bool = 9,
  F16 = 10,
  F64 = 11,
  U32 = 12,
  U64 = 13,
  Complex64 = 14,
  Complex128 = 15,
  BF16 = 16,
};

// True for the 13 element types the engine stores (tensors.md section 2).
bool dtype_is_stored(DType t) noexcept;
// Bytes per element for stored types; 0 for anything else.
size_t dtype_size(DType t) noexcept;
// ONNX name of any code 0..28 ("float32", "int64", "float8e4m3fn", ...); "unknown" otherwise.
std::string_view dtype_name(DType t) noexcept;
// Short engine name used in messages and metadata ("F32", "I64", ...).
std::string_view dtype_short_name(DType t) noexcept;
bool dtype_is_float(DType t) noexcept;    // F16, BF16, F32, F64
bool dtype_is_integer(DType t) noexcept;  // signed and unsigned ints (not Bool)
bool dtype_is_signed(DType t) noexcept;

template <class T>
struct DTypeOf;
template <>
struct DTypeOf<float> {
  static constexpr DType value = DType::F32;
};
template <>
struct DTypeOf<double> {
  static constexpr DType value = DType::F64;
};
template <>
struct DTypeOf<int8_t> {
  static constexpr DType value = DType::I8;
};
template <>
struct DTypeOf<int16_t> {
  static constexpr DType value = DType::I16;
};
template <>
struct DTypeOf<int32_t> {
  static constexpr DType value = DType::I32;
};
template <>
struct DTypeOf<int64_t> {
  static constexpr DType value = DType::I64;
};
template <>
struct DTypeOf<uint8_t> {
  static constexpr DType value = DType::U8;
};
template <>
struct DTypeOf<uint16_t> {
  static constexpr DType value = DType::U16;
};
template <>
struct DTypeOf<uint32_t> {
  static constexpr DType value = DType::U32;
};
template <>
struct DTypeOf<uint64_t> {
  static constexpr DType value = DType::U64;
};
template <>
struct DTypeOf<bool> {
  static constexpr DType value = DType::Bool;
};

}  // namespace onemodel
