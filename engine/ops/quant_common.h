// Shared rules of the quantization family (int8.md): round half to even with saturation, the element types of
// quantized tensors, and per-tensor / per-axis parameter lookup.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "ops/common.h"

namespace onemodel::rt::quant {

// clamp(round_half_even(v) + zp) to [lo, hi]; NaN gives lo (int8.md "QuantizeLinear"). std::nearbyint rounds in
// the default mode, round-to-nearest-even, which the engine never changes. The sum is formed in double, exact
// for every value that is not clamped anyway.
inline int64_t saturate_round(float v, int64_t zp, int64_t lo, int64_t hi) noexcept {
  if (v != v) return lo;
  const double s = static_cast<double>(std::nearbyint(v)) + static_cast<double>(zp);
  if (s <= static_cast<double>(lo)) return lo;
  if (s >= static_cast<double>(hi)) return hi;
  return static_cast<int64_t>(s);
}

// Calls f(T{}) for the 8- and 16-bit quantized types; false for any other type.
template <class F>
bool visit_q(DType t, F&& f) {
  switch (t) {
    case DType::U8: f(uint8_t{}); return true;
    case DType::I8: f(int8_t{}); return true;
    case DType::U16: f(uint16_t{}); return true;
    case DType::I16: f(int16_t{}); return true;
    default: return false;
  }
}

// Calls f(T{}) for the 8-bit operand types of the integer products.
template <class F>
bool visit_q8(DType t, F&& f) {
  switch (t) {
    case DType::U8: f(uint8_t{}); return true;
    case DType::I8: f(int8_t{}); return true;
    default: return false;
  }
}

// The integer value of element i of a small integer tensor of any quantized type (zero points).
inline int64_t int_at(const Tensor& t, int64_t i) {
  int64_t v = 0;
  switch (t.dtype()) {
    case DType::U8: v = t.data<uint8_t>()[static_cast<size_t>(i)]; break;
    case DType::I8: v = t.data<int8_t>()[static_cast<size_t>(i)]; break;
    case DType::U16: v = t.data<uint16_t>()[static_cast<size_t>(i)]; break;
    case DType::I16: v = t.data<int16_t>()[static_cast<size_t>(i)]; break;
    case DType::I32: v = t.data<int32_t>()[static_cast<size_t>(i)]; break;
    default: break;
  }
  return v;
}

// Per-axis layout of a tensor: element e belongs to channel (e / inner) % channels. Per-tensor: channels = 1.
struct AxisLayout {
  int64_t channels = 1, inner = 1;
  int64_t channel(int64_t e) const { return channels == 1 ? 0 : (e / inner) % channels; }
};

// Checks a scale (and optional zero point) against x for per-tensor (one element, rank <= 1) or per-axis
// (1-D of length x.shape[axis]) quantization; returns false with a message on mismatch.
inline bool axis_layout(const Shape& x, const Shape& scale, const Shape* zp, int64_t axis_attr, bool allow_axis,
                        AxisLayout& out, std::string& why) {
  if (zp && *zp != scale) {
    why = "zero point " + zp->to_string() + " and scale " + scale.to_string() + " differ in shape";
    return false;
  }
  if (scale.rank() == 0 || (scale.rank() == 1 && scale[0] == 1 && (!allow_axis || x.rank() == 0))) {
    out = AxisLayout{};
    return true;
  }
  if (!allow_axis || scale.rank() != 1) {
    why = "scale must be a scalar" + std::string(allow_axis ? " or 1-D" : "") + ", got " + scale.to_string();
    return false;
  }
  if (axis_attr < -x.rank() || axis_attr >= x.rank()) {
    why = "axis " + std::to_string(axis_attr) + " is out of range for rank " + std::to_string(x.rank());
    return false;
  }
  const int axis = static_cast<int>(axis_attr < 0 ? axis_attr + x.rank() : axis_attr);
  if (scale[0] != x[axis]) {
    if (scale[0] == 1) {
      out = AxisLayout{};
      return true;
    }
    why = "scale " + scale.to_string() + " does not match dimension " + std::to_string(axis) + " of " + x.to_string();
    return false;
  }
  out.channels = x[axis];
  out.inner = 1;
  for (int d = axis + 1; d < x.rank(); ++d) out.inner *= x[d];
  return true;
}

}  // namespace onemodel::rt::quant
