// Index helpers shared by the shape and indexing operators (ops-shape-indexing.md). These operators move
// elements without computing on them, so the helpers work on raw bytes by element size: one code path
// serves every stored element type and the result is bit-identical in fast and exact mode.
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "ops/common.h"

namespace onemodel::rt {

// Row-major strides in elements.
inline std::vector<int64_t> row_strides(const Shape& s) {
  std::vector<int64_t> st(static_cast<size_t>(s.rank()));
  int64_t step = 1;
  for (int d = s.rank() - 1; d >= 0; --d) {
    st[static_cast<size_t>(d)] = step;
    step *= s[d];
  }
  return st;
}

inline Shape shape_of(const std::vector<int64_t>& dims) { return Shape(std::span<const int64_t>(dims)); }

// True when every present input in `which` has a plan-time value; otherwise asks for run-time values (the
// node is then shaped again in every run with all values known) and returns false.
inline bool have_values(InferContext& ctx, std::initializer_list<size_t> which) {
  for (size_t i : which)
    if (ctx.has_input(i) && !ctx.input(i).value) {
      ctx.require_runtime_values();
      return false;
    }
  return true;
}

// Copies one element of `esz` bytes; the switch lets the compiler use one load and store.
inline void copy_elem(void* dst, const void* src, size_t esz) {
  switch (esz) {
    case 1: std::memcpy(dst, src, 1); break;
    case 2: std::memcpy(dst, src, 2); break;
    case 4: std::memcpy(dst, src, 4); break;
    default: std::memcpy(dst, src, 8); break;
  }
}

// Per output axis, the input element offset each output position reads (a negative entry means "write the
// fill element"). The output element at (i0..ik) reads input offset sum(map[d][i_d]), or the fill if any
// entry is negative. Slice, Pad, Tile, Expand and Transpose are all maps of this kind, so they share this
// single loop instead of five nested-index copies.
inline void map_copy(void* dst, const void* src, size_t esz, const Shape& out,
                     const std::vector<std::vector<int64_t>>& maps, const void* fill) {
  const int64_t n = out.numel();
  if (n == 0) return;
  auto* o = static_cast<std::byte*>(dst);
  const auto* in = static_cast<const std::byte*>(src);
  const int r = out.rank();
  if (r == 0) {
    copy_elem(o, in, esz);
    return;
  }
  const std::vector<int64_t>& last = maps[static_cast<size_t>(r - 1)];
  const int64_t inner = out[r - 1];
  // A last axis that reads consecutive input elements (Transpose keeping the innermost axis, Slice with step 1,
  // Expand and Tile of whole rows) copies each row with one memcpy: per element, the loop below costs about
  // 2 ns, which made MiniLM's exact-mode head transposes 10% of its run (4 x 128 x 384 floats per layer).
  bool contiguous = inner * static_cast<int64_t>(esz) >= 32 && last[0] >= 0;
  for (int64_t i = 1; i < inner && contiguous; ++i) contiguous = last[static_cast<size_t>(i)] == last[0] + i;
  std::vector<int64_t> idx(static_cast<size_t>(r), 0);
  int64_t base = 0;
  bool base_fill = false;
  auto recompute = [&] {
    base = 0;
    base_fill = false;
    for (int d = 0; d < r - 1; ++d) {
      const int64_t m = maps[static_cast<size_t>(d)][static_cast<size_t>(idx[static_cast<size_t>(d)])];
      if (m < 0) base_fill = true;
      base += m;
    }
  };
  recompute();
  for (int64_t done = 0; done < n; done += inner) {
    if (contiguous && !base_fill) {
      std::memcpy(o, in + static_cast<size_t>(base + last[0]) * esz, static_cast<size_t>(inner) * esz);
      o += static_cast<size_t>(inner) * esz;
    } else {
      for (int64_t i = 0; i < inner; ++i, o += esz) {
        const int64_t m = last[static_cast<size_t>(i)];
        if (base_fill || m < 0)
          copy_elem(o, fill, esz);
        else
          copy_elem(o, in + static_cast<size_t>(base + m) * esz, esz);
      }
    }
    for (int d = r - 2; d >= 0; --d) {
      if (++idx[static_cast<size_t>(d)] < out[d]) break;
      idx[static_cast<size_t>(d)] = 0;
    }
    recompute();
  }
}

// Reads entry k of an int32 or int64 index tensor (the caller checked the type).
inline int64_t index_at(const Tensor& t, int64_t k) {
  if (t.dtype() == DType::I32) return static_cast<const int32_t*>(t.raw())[k];
  return static_cast<const int64_t*>(t.raw())[k];
}

inline void check_index_type(const InferContext& ctx, size_t i, const char* what) {
  const DType t = ctx.input(i).dtype;
  if (t != DType::I32 && t != DType::I64)
    ctx.fail(ErrorKind::InvalidModel, std::string(what) + " must be int32 or int64, got " + type_str(t));
}

// An index counted from the end when negative; InvalidInput when outside [-n, n).
inline int64_t fix_index(const RunContext& ctx, int64_t i, int64_t n, const char* what) {
  if (i < -n || i >= n)
    ctx.fail(ErrorKind::InvalidInput,
             std::string(what) + " " + std::to_string(i) + " is out of range for extent " + std::to_string(n));
  return i < 0 ? i + n : i;
}

// Byte pointers of a run's output / input i (contiguous by the kernel contract), for the by-size copies.
inline std::byte* out_bytes(const RunContext& ctx, size_t i) {
  return static_cast<std::byte*>(ctx.output(i).raw_mut());
}
inline const std::byte* in_bytes(const RunContext& ctx, size_t i) {
  return static_cast<const std::byte*>(ctx.input(i).raw());
}

// The value of required input i (after have_values): InvalidModel naming `what` when the node lacks it.
inline const Tensor& value_of(const InferContext& ctx, size_t i, const char* what) {
  if (!ctx.has_input(i) || !ctx.input(i).value)
    ctx.fail(ErrorKind::InvalidModel, std::string("the ") + what + " input (" + std::to_string(i) + ") is missing");
  return *ctx.input(i).value;
}

// An int64 list from required input i's value (int32 or int64).
inline std::vector<int64_t> ints_of(const InferContext& ctx, size_t i, const char* what) {
  return read_int_tensor(ctx.info, value_of(ctx, i, what), what);
}

// Shape from dims with the engine's limits checked as InvalidModel naming the node (Shape throws
// Unsupported for extents beyond the element limit, which is kept).
inline Shape checked_shape(const InferContext& ctx, const std::vector<int64_t>& dims) {
  if (dims.size() > static_cast<size_t>(kMaxRank))
    ctx.fail(ErrorKind::Unsupported,
             "output rank " + std::to_string(dims.size()) + " exceeds " + std::to_string(kMaxRank));
  for (int64_t d : dims)
    if (d < 0) ctx.fail(ErrorKind::InvalidModel, "negative output extent " + std::to_string(d));
  return shape_of(dims);
}

// One element of type t holding v (converted as a static_cast would; float16/bfloat16 round to nearest even),
// as raw bytes: fill values of Pad, EyeLike's one and similar constants of any element type.
struct ElemBytes {
  alignas(8) std::byte b[8] = {};
};
inline ElemBytes elem_from_double(const NodeInfo& info, DType t, double v) {
  ElemBytes e;
  if (t == DType::Bool) {
    e.b[0] = std::byte{v != 0.0 ? uint8_t{1} : uint8_t{0}};
  } else if (t == DType::F16 || t == DType::BF16) {
    const uint16_t h = t == DType::F16 ? float_to_half(static_cast<float>(v)) : float_to_bf16(static_cast<float>(v));
    std::memcpy(e.b, &h, 2);
  } else if (!visit_numeric(t, [&](auto z) {
               using T = decltype(z);
               T x{};
               if constexpr (std::is_integral_v<T>) {  // out-of-range conversions would be undefined: saturate
                 if (v != v)
                   x = 0;
                 else if (v >= static_cast<double>(std::numeric_limits<T>::max()))
                   x = std::numeric_limits<T>::max();
                 else if (v <= static_cast<double>(std::numeric_limits<T>::lowest()))
                   x = std::numeric_limits<T>::lowest();
                 else
                   x = static_cast<T>(v);
               } else {
                 x = static_cast<T>(v);
               }
               std::memcpy(e.b, &x, sizeof x);
             })) {
    info.fail(ErrorKind::Unsupported, "element type " + type_str(t) + " is not supported");
  }
  return e;
}

// Index layout of GatherND / ScatterND (gather.cc).
struct NdLayout {
  int64_t m = 0, batch = 1, tuples = 1, slice = 1, batch_stride = 1;
  std::vector<int64_t> out_dims, coord_stride, coord_extent;
};
NdLayout nd_layout(const NodeInfo& info, const Shape& data, const Shape& ind, int64_t batch_dims);
int64_t nd_offset(const RunContext& ctx, const NdLayout& l, const Tensor& ind, int64_t bi, int64_t t);
void walk_element_indices(const RunContext& ctx, const Shape& s, const Tensor& ind, int axis,
                          const std::function<void(int64_t, int64_t)>& f);

}  // namespace onemodel::rt
