// Window geometry shared by the pooling operators (MaxPool, AveragePool, LpPool, MaxUnpool): attribute
// validation and the output-size rules of ops-conv.md ("Output sizes"). One, two or three spatial axes are
// lifted to three (missing leading axes have size 1, kernel 1), so every kernel is a single triple loop.
// Attribute values are bounded before any arithmetic so hostile values (huge kernels, negative pads) give
// InvalidModel naming the node instead of overflow.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "ops/common.h"

namespace onemodel::rt {

// Largest kernel, stride, dilation or pad accepted: products of two such values stay far inside int64.
inline constexpr int64_t kMaxPoolAttr = int64_t{1} << 31;

enum class AutoPad { NotSet, SameUpper, SameLower, Valid };

struct PoolAttrs {
  std::vector<int64_t> kernel, strides, pads, dilations;  // strides/dilations filled with 1, pads with 0
  AutoPad auto_pad = AutoPad::NotSet;
  bool ceil_mode = false;
};

// Reads and checks kernel_shape, strides, pads, dilations, auto_pad and ceil_mode. `kernel` may be given
// (MaxUnpool's kernel_shape is also required; GlobalPool passes none).
inline PoolAttrs read_pool_attrs(const NodeInfo& info) {
  PoolAttrs a;
  if (!info.has("kernel_shape")) info.fail(ErrorKind::InvalidModel, "attribute kernel_shape is required");
  a.kernel = info.get_ints("kernel_shape");
  const size_t k = a.kernel.size();
  if (k < 1 || k > 3)
    info.fail(k == 0 ? ErrorKind::InvalidModel : ErrorKind::Unsupported,
              "kernel_shape must have 1 to 3 entries, got " + std::to_string(k));
  auto check = [&](std::vector<int64_t>& v, const char* name, size_t len, int64_t lo, int64_t dflt) {
    if (v.empty()) v.assign(len, dflt);
    if (v.size() != len)
      info.fail(ErrorKind::InvalidModel, std::string(name) + " has " + std::to_string(v.size()) + " entries, expected " +
                                             std::to_string(len));
    for (int64_t x : v)
      if (x < lo || x > kMaxPoolAttr)
        info.fail(ErrorKind::InvalidModel, std::string(name) + " value " + std::to_string(x) + " is out of range [" +
                                               std::to_string(lo) + ", 2^31]");
  };
  check(a.kernel, "kernel_shape", k, 1, 1);
  a.strides = info.get_ints("strides");
  check(a.strides, "strides", k, 1, 1);
  a.dilations = info.get_ints("dilations");
  check(a.dilations, "dilations", k, 1, 1);
  a.pads = info.get_ints("pads");
  check(a.pads, "pads", 2 * k, 0, 0);
  const std::string ap = info.get_string("auto_pad", "NOTSET");
  if (ap == "NOTSET" || ap.empty()) a.auto_pad = AutoPad::NotSet;
  else if (ap == "SAME_UPPER") a.auto_pad = AutoPad::SameUpper;
  else if (ap == "SAME_LOWER") a.auto_pad = AutoPad::SameLower;
  else if (ap == "VALID") a.auto_pad = AutoPad::Valid;
  else info.fail(ErrorKind::InvalidModel, "auto_pad '" + ap + "' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID");
  const int64_t cm = info.get_int("ceil_mode", 0);
  if (cm != 0 && cm != 1) info.fail(ErrorKind::InvalidModel, "ceil_mode must be 0 or 1, got " + std::to_string(cm));
  a.ceil_mode = cm == 1;
  return a;
}

// Geometry of one pooling node for one input shape, lifted to three spatial axes.
struct PoolGeom {
  int64_t n = 1, c = 1;
  std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, k{1, 1, 1}, s{1, 1, 1}, d{1, 1, 1}, pb{0, 0, 0}, pa{0, 0, 0};
  int spatial = 0;  // the node's own number of spatial axes
  Shape out_shape;  // [N, C, out...] with the node's spatial rank

  int64_t in_plane() const { return in[0] * in[1] * in[2]; }
  int64_t out_plane() const { return out[0] * out[1] * out[2]; }
};

// The output-size rules of ops-conv.md for input shape `x` ([N, C, spatial...]).
inline PoolGeom pool_geometry(const NodeInfo& info, const Shape& x, const PoolAttrs& a) {
  const int k = static_cast<int>(a.kernel.size());
  if (x.rank() != k + 2)
    info.fail(ErrorKind::InvalidModel, "input of shape " + x.to_string() + " does not have the " + std::to_string(k) +
                                           " spatial axes of kernel_shape");
  PoolGeom g;
  g.spatial = k;
  g.n = x[0];
  g.c = x[1];
  std::vector<int64_t> dims{x[0], x[1]};
  for (int i = 0; i < k; ++i) {
    const auto u = static_cast<size_t>(i);
    const auto j = static_cast<size_t>(3 - k + i);
    const int64_t n = x[i + 2], kk = a.kernel[u], s = a.strides[u], dl = a.dilations[u];
    const int64_t e = dl * (kk - 1) + 1;
    int64_t b = a.pads[u], af = a.pads[u + static_cast<size_t>(k)], out = 0;
    if (a.auto_pad == AutoPad::SameUpper || a.auto_pad == AutoPad::SameLower) {
      out = (n + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (out - 1) * s + e - n);
      b = a.auto_pad == AutoPad::SameUpper ? total / 2 : total - total / 2;
      af = total - b;
    } else {
      if (a.auto_pad == AutoPad::Valid) b = af = 0;
      const int64_t span = n + b + af - e;
      if (span < 0)
        info.fail(ErrorKind::InvalidModel, "window of extent " + std::to_string(e) + " does not fit spatial axis " +
                                               std::to_string(i) + " of size " + std::to_string(n) + " with its pads");
      if (a.ceil_mode && a.auto_pad == AutoPad::NotSet) {
        out = (span + s - 1) / s + 1;
        if ((out - 1) * s >= n + b) --out;  // the last window would start in the end padding
      } else {
        out = span / s + 1;
      }
    }
    g.in[j] = n;
    g.out[j] = out;
    g.k[j] = kk;
    g.s[j] = s;
    g.d[j] = dl;
    g.pb[j] = b;
    g.pa[j] = af;
    dims.push_back(out);
  }
  if (!Shape::valid(dims))
    info.fail(ErrorKind::InvalidModel, "output of input " + x.to_string() + " would have more than 2^31-1 elements");
  g.out_shape = Shape(std::span<const int64_t>(dims));
  return g;
}

// The taps of one window along one axis that fall inside the input: positions first, first + step, ...
// (count of them), and how many taps lie inside the declared padding region [-pb, n + pa).
struct AxisWindow {
  int64_t first = 0, count = 0, step = 1, padded = 0;
};

// Floor division for a positive divisor.
inline int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// Taps t in [0, k) at position p0 + t*d with lo <= position < hi, computed without visiting every tap.
inline int64_t taps_between(int64_t p0, int64_t k, int64_t d, int64_t lo, int64_t hi, int64_t* first_tap) {
  int64_t t0 = p0 >= lo ? 0 : (lo - p0 + d - 1) / d;
  int64_t t1 = floor_div(hi - 1 - p0, d);
  if (t1 > k - 1) t1 = k - 1;
  if (first_tap) *first_tap = t0;
  return t1 >= t0 ? t1 - t0 + 1 : 0;
}

// Window of output position o on axis j of the geometry.
inline AxisWindow axis_window(const PoolGeom& g, size_t j, int64_t o) {
  AxisWindow w;
  const int64_t p0 = o * g.s[j] - g.pb[j];
  int64_t t0 = 0;
  w.count = taps_between(p0, g.k[j], g.d[j], 0, g.in[j], &t0);
  w.first = p0 + t0 * g.d[j];
  w.step = g.d[j];
  w.padded = taps_between(p0, g.k[j], g.d[j], -g.pb[j], g.in[j] + g.pa[j], nullptr);
  return w;
}

// All windows of one axis (the same for every plane).
inline std::vector<AxisWindow> axis_windows(const PoolGeom& g, size_t j) {
  std::vector<AxisWindow> v(static_cast<size_t>(g.out[j]));
  for (int64_t o = 0; o < g.out[j]; ++o) v[static_cast<size_t>(o)] = axis_window(g, j, o);
  return v;
}

}  // namespace onemodel::rt
