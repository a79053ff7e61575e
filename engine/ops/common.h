// Small helpers shared by the operator families: element-type dispatch, broadcast iteration, axis
// normalisation and reading small integer tensors (shapes, axes). Header-only so each family inlines them.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "base/fp16.h"
#include "kernels/exact_math.h"
#include "kernels/gemm.h"
#include "runtime/kernel.h"

namespace onemodel::rt {

// How a product keeps its packing of input 1 (kernels/gemm.h PackStorage): in the 16 bits of compact weights
// offered to prepare() (InputMeta::compact), else float32.
inline kern::PackStorage pack_storage(const Tensor* compact) {
  if (!compact) return kern::PackStorage::F32;
  return compact->dtype() == DType::F16 ? kern::PackStorage::F16 : kern::PackStorage::BF16;
}

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

// Calls f(out_offset, offsets, n, steps) once per run of the innermost output dimension, where offsets[i]
// and steps[i] locate input i (NumPy broadcasting, right-aligned, extent 1 repeats). Row-major order; only
// the rows (runs of the innermost dimension) [row_begin, row_end) are visited.
template <size_t N, class F>
void broadcast_rows(const Shape& out, const std::array<const Shape*, N>& in, int64_t row_begin, int64_t row_end,
                    F&& f) {
  if (out.numel() == 0 || row_begin >= row_end) return;
  std::array<int64_t, N> off{}, step{};
  if (out.rank() == 0) {
    f(int64_t{0}, off, int64_t{1}, step);
    return;
  }
  std::array<std::array<int64_t, kMaxRank>, N> st;
  for (size_t i = 0; i < N; ++i) st[i] = broadcast_strides(*in[i], out);
  const int r = out.rank();
  const auto last = static_cast<size_t>(r - 1);
  for (size_t i = 0; i < N; ++i) step[i] = st[i][last];
  const int64_t inner = out[r - 1];
  std::array<int64_t, kMaxRank> idx{};
  for (int64_t rem = row_begin, d = r - 2; d >= 0; --d) {  // the odometer's position at row_begin
    const auto du = static_cast<size_t>(d);
    idx[du] = rem % out[static_cast<int>(d)];
    rem /= out[static_cast<int>(d)];
    for (size_t i = 0; i < N; ++i) off[i] += st[i][du] * idx[du];
  }
  int64_t o = row_begin * inner;
  for (int64_t it = row_begin; it < row_end; ++it) {
    f(o, off, inner, step);
    o += inner;
    for (int d = r - 2; d >= 0; --d) {  // odometer over the outer dimensions
      const auto du = static_cast<size_t>(d);
      ++idx[du];
      for (size_t i = 0; i < N; ++i) off[i] += st[i][du];
      if (idx[du] < out[d]) break;
      for (size_t i = 0; i < N; ++i) off[i] -= st[i][du] * out[d];
      idx[du] = 0;
    }
  }
}

// broadcast_rows over every row of `out`. When each input is either the whole output or a single element,
// the output is one flat run (step 1 for a whole input, 0 for a single element): one call, so the caller's
// contiguous loop covers everything.
template <size_t N, class F>
void broadcast_n(const Shape& out, const std::array<const Shape*, N>& in, F&& f) {
  if (out.numel() == 0) return;
  bool flat = true;
  std::array<int64_t, N> off{}, step{};
  for (size_t i = 0; i < N && flat; ++i) {
    const bool full = *in[i] == out;
    flat = full || in[i]->numel() == 1;
    step[i] = full ? 1 : 0;
  }
  if (flat) {
    f(int64_t{0}, off, out.numel(), step);
    return;
  }
  const int64_t rows = out.rank() == 0 ? 1 : out.numel() / out[out.rank() - 1];
  broadcast_rows<N>(out, in, 0, rows, f);
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
    info.fail(ErrorKind::InvalidModel, std::string(what) + " must be int64, got " + std::string(dtype_name(c.dtype())));
  }
  return v;
}

inline std::string type_str(DType t) { return std::string(dtype_name(t)); }

}  // namespace onemodel::rt
