// Narrow element types (base/narrow_types.h). The formats, from the ONNX IR's description of the types:
//   float8e4m3fn   1-4-3, bias 7, no infinities, NaN = exponent and mantissa all ones (0x7F, 0xFF)
//   float8e4m3fnuz 1-4-3, bias 8, no infinities, no -0, NaN = 0x80 only
//   float8e5m2     1-5-2, bias 15, IEEE-like: exponent all ones is infinity (mantissa 0) or NaN
//   float8e5m2fnuz 1-5-2, bias 16, no infinities, no -0, NaN = 0x80 only
//   float8e8m0     exponent only: 2^(e - 127), 0xFF is NaN
//   float4e2m1     1-2-1, bias 1, no infinities or NaN (values 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives)
// An exponent field of 0 is subnormal: mantissa / 2^mbits * 2^(1 - bias).
#include "base/narrow_types.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace onemodel {
namespace {

struct Format {
  int ebits, mbits, bias;
  bool ieee_inf;  // exponent all ones: infinity or NaN (e5m2)
  bool fnuz;      // 0x80 is the only NaN, no -0
  bool fn;        // all ones (besides the sign) is NaN (e4m3fn)
};

bool format_of(DType t, Format& f) {
  switch (static_cast<int>(t)) {
    case 17: f = {4, 3, 7, false, false, true}; return true;
    case 18: f = {4, 3, 8, false, true, false}; return true;
    case 19: f = {5, 2, 15, true, false, false}; return true;
    case 20: f = {5, 2, 16, false, true, false}; return true;
    case 23: f = {2, 1, 1, false, false, false}; return true;
    default: return false;
  }
}

float decode(const Format& f, uint8_t code) {
  const int bits = 1 + f.ebits + f.mbits;
  const bool neg = (code >> (bits - 1)) & 1u;
  const int e = (code >> f.mbits) & ((1 << f.ebits) - 1);
  const int m = code & ((1 << f.mbits) - 1);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  if (f.fnuz && code == 0x80) return nan;
  if (f.fn && e == (1 << f.ebits) - 1 && m == (1 << f.mbits) - 1) return neg ? -nan : nan;
  if (f.ieee_inf && e == (1 << f.ebits) - 1) {
    if (m != 0) return neg ? -nan : nan;
    return neg ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
  }
  // Every value is a small integer times a power of two: ldexp is exact.
  const float v = e == 0 ? std::ldexp(static_cast<float>(m), 1 - f.bias - f.mbits)
                         : std::ldexp(static_cast<float>(m + (1 << f.mbits)), e - f.bias - f.mbits);
  return neg ? -v : v;
}

}  // namespace

DType narrow_widened_type(DType t) noexcept {
  switch (static_cast<int>(t)) {
    case 17:
    case 18:
    case 19:
    case 20:
    case 23:
    case 24: return DType::F32;
    case 21: return DType::U8;
    case 22: return DType::I8;
    default: return DType::Undefined;
  }
}

float narrow_float_value(DType t, uint8_t code) noexcept {
  if (static_cast<int>(t) == 24)
    return code == 0xFF ? std::numeric_limits<float>::quiet_NaN() : std::ldexp(1.0f, static_cast<int>(code) - 127);
  Format f{};
  if (!format_of(t, f)) return std::numeric_limits<float>::quiet_NaN();
  return decode(f, code);
}

bool decode_narrow(DType t, std::span<const std::byte> packed, int64_t count, void* out) noexcept {
  const DType wide = narrow_widened_type(t);
  const int code = static_cast<int>(t);
  const bool nibbles = code == 21 || code == 22 || code == 23;
  if (wide == DType::Undefined || count < 0) return false;
  const auto need = static_cast<uint64_t>(nibbles ? (count + 1) / 2 : count);
  if (packed.size() < need) return false;
  for (int64_t i = 0; i < count; ++i) {
    const auto byte = static_cast<uint8_t>(packed[static_cast<size_t>(nibbles ? i / 2 : i)]);
    const uint8_t c = nibbles ? static_cast<uint8_t>((i % 2 == 0 ? byte : byte >> 4) & 0x0F) : byte;
    if (code == 21) {
      static_cast<uint8_t*>(out)[i] = c;
    } else if (code == 22) {
      static_cast<int8_t*>(out)[i] = static_cast<int8_t>(c >= 8 ? c - 16 : c);
    } else {
      const float v = narrow_float_value(t, c);
      std::memcpy(static_cast<std::byte*>(out) + i * 4, &v, 4);
    }
  }
  return true;
}

}  // namespace onemodel
