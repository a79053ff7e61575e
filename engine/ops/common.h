// Small helpers shared by the operator families: element-type dispatch, broadcast iteration, axis
// normalisation and reading small integer tensors (shapes, axes). Header-only so each family inlines them.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "base/fp16.h"
#include "kernels/exact_math.h"
#include "runtime/kernel.h"

namespace onemodel::rt {

// Contiguous row-major strides of `in`, right-aligned against `out`, with 0 where `in` broadcasts.
inline std::array<int64_t, kMaxRank> broadcast_strides(const Shape& in, const Shape& out) {
  std::array<int64_t, kMaxRank> s{};
  int64_t step = 1;
  const int off = out.rank() - in.rank();
  for (int d = in.rank() - 1; d >= 0; --d) {
    s[static_cast<size_t>(d + off)] = in[d] == 1 ? 0 : step;
    step *= in[d];
  }
  return s;
}

// Calls f(out_offset, a_offset, b_offset, n, a_step, b_step) once per run of the innermost output
// dimension. Outputs are visited in row-major order.
template <class F>
void broadcast_loop(const Shape& out, const Shape& a, const Shape& b, F&& f) {
  if (out.numel() == 0) return;
  // Common cases as one flat run: equal shapes, or one side a single element.
  const bool a_full = a == out, b_full = b == out;
  if ((a_full || a.numel() == 1) && (b_full || b.numel() == 1)) {
    f(int64_t{0}, int64_t{0}, int64_t{0}, out.numel(), int64_t{a_full ? 1 : 0}, int64_t{b_full ? 1 : 0});
    return;
  }
  const auto sa = broadcast_strides(a, out);
  const auto sb = broadcast_strides(b, out);
  const int r = out.rank();
  const int64_t inner = out[r - 1];
  std::array<int64_t, kMaxRank> idx{};
  int64_t ia = 0, ib = 0, o = 0;
  const int64_t outer = out.numel() / inner;
  for (int64_t it = 0; it < outer; ++it) {
    f(o, ia, ib, inner, sa[static_cast<size_t>(r - 1)], sb[static_cast<size_t>(r - 1)]);
    o += inner;
    // Advance the multi-index over the outer dimensions (odometer), keeping the input offsets in step.
    for (int d = r - 2; d >= 0; --d) {
      const auto du = static_cast<size_t>(d);
      ++idx[du];
      ia += sa[du];
      ib += sb[du];
      if (idx[du] < out[d]) break;
      ia -= sa[du] * out[d];
      ib -= sb[du] * out[d];
      idx[du] = 0;
    }
  }
}

// Calls f(T{}) with the C++ type of `t` for the stored numeric types (not Bool, F16, BF16); returns false
// when `t` is none of them.
template <class F>
bool visit_numeric(DType t, F&& f) {
  switch (t) {
    case DType::F32: f(float{}); return true;
    case DType::F64: f(double{}); return true;
    case DType::I8: f(int8_t{}); return true;
    case DType::I16: f(int16_t{}); return true;
    case DType::I32: f(int32_t{}); return true;
    case DType::I64: f(int64_t{}); return true;
    case DType::U8: f(uint8_t{}); return true;
    case DType::U16: f(uint16_t{}); return true;
    case DType::U32: f(uint32_t{}); return true;
    case DType::U64: f(uint64_t{}); return true;
    default: return false;
  }
}

// Normalises an axis in [-rank, rank) (or [-rank, rank] with extra = 1, where `rank` itself is allowed);
// negative axes count from the end. InvalidModel otherwise.
inline int normalize_axis(const NodeInfo& info, int64_t axis, int rank, int extra = 0) {
  if (axis < -rank || axis >= rank + extra)
    info.fail(ErrorKind::InvalidModel,
              "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

// The values of a small int64 (or int32) tensor, e.g. a shape or an axes input.
inline std::vector<int64_t> read_int_tensor(const NodeInfo& info, const Tensor& t, const char* what) {
  std::vector<int64_t> v;
  const Tensor& c = t;  // run inputs and constant values are contiguous (kernel contract)
  if (c.dtype() == DType::I64) {
    for (int64_t x : c.data<int64_t>()) v.push_back(x);
  } else if (c.dtype() == DType::I32) {
    for (int32_t x : c.data<int32_t>()) v.push_back(x);
  } else {
    info.fail(ErrorKind::InvalidModel, std::string(what) + " must be int64, got " +
                                           std::string(dtype_name(c.dtype())));
  }
  return v;
}

inline std::string type_str(DType t) { return std::string(dtype_name(t)); }

}  // namespace onemodel::rt
