// Shared machinery of the reductions and the normalisations (ops-norms.md "Reductions", "The canonical
// sum"): the axes rules, the squeezed and merged geometry that decides between the column and the row
// layout, the walk over one output's sequence of reduced elements, a streaming 16-partial sum and
// wrap-around integer arithmetic. Header-only so each kernel file inlines the loops for its element type.
#pragma once
#include <array>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "ops/common.h"

namespace onemodel::rt {

// Which input dimensions are reduced and the output shape, from `axes` (empty: all, or none with `noop`).
struct ReduceAxes {
  std::array<bool, kMaxRank> reduced{};
  Shape out;
};

inline ReduceAxes reduce_axes(const NodeInfo& info, const Shape& in, const std::vector<int64_t>& axes, bool keepdims,
                              bool noop) {
  ReduceAxes p;
  const int r = in.rank();
  if (axes.empty()) {
    if (!noop)
      for (int d = 0; d < r; ++d) p.reduced[static_cast<size_t>(d)] = true;
  } else {
    for (int64_t a : axes) {
      const int d = normalize_axis(info, a, r);
      if (p.reduced[static_cast<size_t>(d)])
        info.fail(ErrorKind::InvalidModel, "axis " + std::to_string(a) + " appears twice");
      p.reduced[static_cast<size_t>(d)] = true;
    }
  }
  std::vector<int64_t> od;
  for (int d = 0; d < r; ++d) {
    if (!p.reduced[static_cast<size_t>(d)])
      od.push_back(in[d]);
    else if (keepdims)
      od.push_back(1);
  }
  p.out = Shape(std::span<const int64_t>(od));
  return p;
}

// The geometry after dropping extent-1 dimensions and merging neighbours of the same kind. Outputs are
// the kept tuples in row-major order; each output's sequence is its reduced tuples in row-major order.
// In the row layout (last run reduced) the innermost run is one contiguous segment of `seg` elements.
struct ReduceGeometry {
  std::vector<int64_t> kept_ext, kept_stride;  // merged kept runs, outer to inner; strides in elements
  std::vector<int64_t> red_ext, red_stride;    // merged reduced runs, without the contiguous segment
  int64_t seg = 1;                             // contiguous elements per step of the reduced odometer
  bool row_layout = false;                     // the last run is reduced: sums use the 16-partial order
  int64_t outputs = 1, count = 1;              // number of outputs; elements per output's sequence
};

inline ReduceGeometry reduce_geometry(const Shape& in, const std::array<bool, kMaxRank>& reduced) {
  ReduceGeometry g;
  const int r = in.rank();
  std::vector<int64_t> stride(static_cast<size_t>(r));
  int64_t step = 1;
  for (int d = r - 1; d >= 0; --d) {
    stride[static_cast<size_t>(d)] = step;
    step *= in[d];
  }
  int last_kind = -1;  // 0 kept, 1 reduced: kind of the run most recently appended
  for (int d = 0; d < r; ++d) {
    const int64_t e = in[d];
    if (e == 1) continue;
    const int kind = reduced[static_cast<size_t>(d)] ? 1 : 0;
    auto& ext = kind ? g.red_ext : g.kept_ext;
    auto& str = kind ? g.red_stride : g.kept_stride;
    if (kind == last_kind) {  // contiguous with the previous dimension: one longer run
      ext.back() *= e;
      str.back() = stride[static_cast<size_t>(d)];
    } else {
      ext.push_back(e);
      str.push_back(stride[static_cast<size_t>(d)]);
    }
    last_kind = kind;
  }
  for (int64_t e : g.kept_ext) g.outputs *= e;
  for (int64_t e : g.red_ext) g.count *= e;
  g.row_layout = last_kind == 1;
  if (g.row_layout) {  // the innermost reduced run has stride 1: walk it as one segment
    g.seg = g.red_ext.back();
    g.red_ext.pop_back();
    g.red_stride.pop_back();
  }
  return g;
}

// Input offset of output `o` (kept tuples in row-major order).
inline int64_t reduce_base(const ReduceGeometry& g, int64_t o) {
  int64_t off = 0;
  for (size_t k = g.kept_ext.size(); k-- > 0;) {
    off += (o % g.kept_ext[k]) * g.kept_stride[k];
    o /= g.kept_ext[k];
  }
  return off;
}

// Calls f(pointer, n) for the contiguous pieces of output `o`'s sequence, in sequence order.
template <class T, class F>
void walk_sequence(const ReduceGeometry& g, const T* x, int64_t o, F&& f) {
  if (g.count == 0) return;
  const T* base = x + reduce_base(g, o);
  const size_t nr = g.red_ext.size();
  std::array<int64_t, kMaxRank> idx{};
  int64_t off = 0;
  for (;;) {
    f(base + off, g.seg);
    size_t k = nr;
    while (k > 0) {  // odometer over the reduced runs, innermost first
      --k;
      off += g.red_stride[k];
      if (++idx[k] < g.red_ext[k]) break;
      off -= g.red_stride[k] * g.red_ext[k];
      idx[k] = 0;
      if (k == 0) return;
    }
    if (nr == 0) return;
  }
}

// Arithmetic with the integer wrap-around of ops-norms.md "Other types" (no signed-overflow UB); plain
// IEEE operations for floats.
template <class T>
using WrapT = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;
template <class T>
T add_wrap(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    return a + b;
  else
    return static_cast<T>(static_cast<WrapT<T>>(static_cast<WrapT<T>>(a) + static_cast<WrapT<T>>(b)));
}
template <class T>
T mul_wrap(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    return a * b;
  else
    return static_cast<T>(static_cast<WrapT<T>>(static_cast<WrapT<T>>(a) * static_cast<WrapT<T>>(b)));
}
template <class T>
T abs_wrap(T a) {
  if constexpr (std::is_floating_point_v<T>)
    return std::fabs(a);
  else if constexpr (std::is_unsigned_v<T>)
    return a;
  else
    return a < 0 ? static_cast<T>(static_cast<WrapT<T>>(0u - static_cast<WrapT<T>>(a))) : a;
}

// NaN -> 0x7FC00000 for floats; integers unchanged.
template <class T>
T canon_any(T v) {
  if constexpr (std::is_floating_point_v<T>)
    return kern::canon(v);
  else
    return v;
}

// RowReduce.Sum16 fed one term at a time: term q goes to partial q mod 16, then the fixed pairwise tree.
template <class T>
struct Sum16 {
  T p[16] = {};
  size_t q = 0;
  void add(T v) {
    p[q & 15] = add_wrap(p[q & 15], v);
    ++q;
  }
  T result() const {
    T a[8], b[4];
    for (int t = 0; t < 8; ++t) a[t] = add_wrap(p[t], p[t + 8]);
    for (int t = 0; t < 4; ++t) b[t] = add_wrap(a[t], a[t + 4]);
    return add_wrap(add_wrap(b[0], b[2]), add_wrap(b[1], b[3]));
  }
};

// Sum of term(x) over output `o`'s sequence: the 16-partial sum in the row layout, one sequential
// accumulator from +0 in the column layout (ops-norms.md "Geometry").
template <class T, class Term>
T reduce_sum(const ReduceGeometry& g, const T* x, int64_t o, Term term) {
  if (g.row_layout) {
    Sum16<T> s;
    walk_sequence(g, x, o, [&](const T* p, int64_t n) {
      for (int64_t j = 0; j < n; ++j) s.add(term(p[j]));
    });
    return s.result();
  }
  T acc = T(0);
  walk_sequence(g, x, o, [&](const T* p, int64_t n) {
    for (int64_t j = 0; j < n; ++j) acc = add_wrap(acc, term(p[j]));
  });
  return acc;
}

}  // namespace onemodel::rt
