// Window attributes and geometry (window.h): the attribute reader with its bounds, the output sizes of
// ops-conv.md "Output sizes" for forward windows (Conv, the integer convolutions, pools) and for
// ConvTranspose, the convolutions' channel and weight checks, and the pools' per-axis tap tables.
#include "ops/window.h"

#include <algorithm>
#include <string>

#include "base/int_div.h"

namespace onemodel::rt {

std::string list_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

namespace {

// Every value of attribute `name` lies in [lo, kMaxWindowAttr].
void check_range(const NodeInfo& info, const std::vector<int64_t>& v, const char* name, int64_t lo) {
  for (int64_t x : v)
    if (x < lo || x > kMaxWindowAttr)
      info.fail(ErrorKind::InvalidModel, std::string(name) + " value " + std::to_string(x) + " is out of range [" +
                                             std::to_string(lo) + ", 2^31]");
}

// Attribute `name` has `per_axis` values per spatial axis, or none.
void check_count(const NodeInfo& info, const std::vector<int64_t>& v, const char* name, size_t per_axis, size_t k,
                 ErrorKind kind) {
  if (!v.empty() && v.size() != per_axis * k)
    info.fail(kind, std::string(name) + " has " + std::to_string(v.size()) + " entries, expected " +
                        std::to_string(per_axis * k) + " (" + std::to_string(k) + " spatial axes)");
}

// An empty string is NOTSET too (ONNX Runtime reads it so).
AutoPad read_auto_pad(const NodeInfo& info) {
  const std::string ap = info.get_string("auto_pad", "NOTSET");
  if (ap == "NOTSET" || ap.empty()) return AutoPad::NotSet;
  if (ap == "SAME_UPPER") return AutoPad::SameUpper;
  if (ap == "SAME_LOWER") return AutoPad::SameLower;
  if (ap == "VALID") return AutoPad::Valid;
  info.fail(ErrorKind::InvalidModel, "auto_pad '" + ap + "' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID");
}

int64_t value_or(const std::vector<int64_t>& v, size_t i, int64_t dflt) { return v.empty() ? dflt : v[i]; }

// Output size `out` and pads `b` (before), `a` (after) of one axis of a forward window: input n, kernel k,
// stride s, dilation d, pads as given in b and a.
void forward_axis(const NodeInfo& info, const WindowAttrs& at, size_t axis, int64_t n, int64_t k, int64_t s, int64_t d,
                  int64_t& b, int64_t& a, int64_t& out, ErrorKind kind) {
  const int64_t e = d * (k - 1) + 1;
  if (at.auto_pad == AutoPad::SameUpper || at.auto_pad == AutoPad::SameLower) {
    out = (n + s - 1) / s;
    const int64_t total = std::max<int64_t>(0, (out - 1) * s + e - n);
    b = at.auto_pad == AutoPad::SameUpper ? total / 2 : total - total / 2;
    a = total - b;
    return;
  }
  if (at.auto_pad == AutoPad::Valid) b = a = 0;
  const int64_t span = n + b + a - e;
  if (span < 0)
    info.fail(kind, "the window of extent " + std::to_string(e) + " (dilation included) does not fit spatial axis " +
                        std::to_string(axis) + " of size " + std::to_string(n) + " with pads " + std::to_string(b) +
                        " and " + std::to_string(a));
  if (at.ceil_mode && at.auto_pad == AutoPad::NotSet) {
    out = (span + s - 1) / s + 1;
    if ((out - 1) * s >= n + b) --out;  // the last window would start in the end padding
  } else {
    out = span / s + 1;
  }
}

// The same for ConvTranspose: natural size L = s * (n - 1) + output_padding + e, then output_shape (`shape`,
// -1 when not given), SAME_* or the pads decide the output and its leading crop b.
void transpose_axis(const NodeInfo& info, const WindowAttrs& at, size_t axis, int64_t n, int64_t k, int64_t s,
                    int64_t d, int64_t out_pad, int64_t shape, int64_t& b, int64_t& a, int64_t& out, ErrorKind kind) {
  if (out_pad >= std::max(s, d))
    info.fail(kind, "output_padding " + list_str(at.output_padding) + " must be smaller than the stride or dilation");
  const int64_t natural = s * (n - 1) + out_pad + d * (k - 1) + 1;
  if (shape >= 0) {
    out = shape;
    // The operator text's "otherwise" split: the extra element before; a surplus (negative total) is zero
    // output at the end.
    const int64_t total = natural - out;
    b = total - floor_div(total, 2);
  } else if (at.auto_pad == AutoPad::SameUpper || at.auto_pad == AutoPad::SameLower) {
    const int64_t target = n * s;
    if (natural >= target) {
      const int64_t total = natural - target;
      b = at.auto_pad == AutoPad::SameUpper ? total / 2 : total - total / 2;
      out = target;
    } else {
      b = 0;
      out = natural;
    }
  } else {
    if (at.auto_pad == AutoPad::Valid) b = a = 0;
    out = natural - b - a;
    if (out < 0)
      info.fail(kind, "pads " + list_str(at.pads) + " remove more than the output of spatial axis " +
                          std::to_string(axis) + " (" + std::to_string(natural) + ")");
  }
  a = natural - out - b;
}

// The geometry of input shape x ([N, C, spatial...]) with the per-axis `kernel` (one entry per spatial axis,
// 1 to 3), `out_channels` output channels; forward windows or ConvTranspose.
WindowGeom window_geometry(const NodeInfo& info, const WindowAttrs& at, const Shape& x, std::span<const int64_t> kernel,
                           int64_t out_channels, bool transpose, ErrorKind kind) {
  const size_t k = kernel.size();
  check_count(info, at.strides, "strides", 1, k, kind);
  check_count(info, at.dilations, "dilations", 1, k, kind);
  check_count(info, at.pads, "pads", 2, k, kind);
  check_count(info, at.output_padding, "output_padding", 1, k, kind);
  std::vector<int64_t> shape_attr = at.output_shape;  // a leading N, C dropped
  if (shape_attr.size() == k + 2) shape_attr.erase(shape_attr.begin(), shape_attr.begin() + 2);
  if (!shape_attr.empty() && shape_attr.size() != k)
    info.fail(kind,
              "output_shape " + list_str(at.output_shape) + " does not match " + std::to_string(k) + " spatial axes");
  for (int64_t v : shape_attr)
    if (v < 0 || v > kMaxWindowAttr)
      info.fail(kind, "output_shape " + list_str(at.output_shape) + " must lie in [0, 2^31]");

  WindowGeom g;
  g.spatial = static_cast<int>(k);
  g.n = x[0];
  g.c = x[1];
  std::vector<int64_t> dims{x[0], out_channels};
  for (size_t i = 0; i < k; ++i) {
    const int64_t n = x[static_cast<int>(i) + 2], s = value_or(at.strides, i, 1), d = value_or(at.dilations, i, 1);
    int64_t b = value_or(at.pads, i, 0), a = value_or(at.pads, i + k, 0), out = 0;
    if (transpose)
      transpose_axis(info, at, i, n, kernel[i], s, d, value_or(at.output_padding, i, 0),
                     shape_attr.empty() ? -1 : shape_attr[i], b, a, out, kind);
    else
      forward_axis(info, at, i, n, kernel[i], s, d, b, a, out, kind);
    const size_t j = 3 - k + i;  // leading axes of the lifted geometry stay 1
    g.in[j] = n;
    g.out[j] = out;
    g.k[j] = kernel[i];
    g.s[j] = s;
    g.d[j] = d;
    g.pb[j] = b;
    g.pa[j] = a;
    dims.push_back(out);
  }
  if (!Shape::valid(dims))
    info.fail(kind, "output of input " + x.to_string() + " would have more than 2^31-1 elements");
  g.out_shape = Shape(std::span<const int64_t>(dims));
  return g;
}

// Taps t in [0, k) at position p0 + t*d with lo <= position < hi, computed without visiting every tap.
int64_t taps_between(int64_t p0, int64_t k, int64_t d, int64_t lo, int64_t hi, int64_t* first_tap) {
  int64_t t0 = p0 >= lo ? 0 : (lo - p0 + d - 1) / d;
  int64_t t1 = floor_div(hi - 1 - p0, d);
  if (t1 > k - 1) t1 = k - 1;
  if (first_tap) *first_tap = t0;
  return t1 >= t0 ? t1 - t0 + 1 : 0;
}

}  // namespace

WindowAttrs read_window_attrs(const NodeInfo& info, WindowOp op) {
  const bool pool = op == WindowOp::Pool;
  WindowAttrs a;
  if (pool && !info.has("kernel_shape")) info.fail(ErrorKind::InvalidModel, "attribute kernel_shape is required");
  a.kernel = info.get_ints("kernel_shape");
  const size_t k = a.kernel.size();
  if (pool && (k < 1 || k > 3))
    info.fail(k == 0 ? ErrorKind::InvalidModel : ErrorKind::Unsupported,
              "kernel_shape must have 1 to 3 entries, got " + std::to_string(k));
  check_range(info, a.kernel, "kernel_shape", 1);
  // A pool's kernel_shape fixes the number of spatial axes, so its other attributes are checked and filled
  // here; a convolution's are checked against its input's rank (window_geometry).
  auto per_axis = [&](const char* name, size_t count, int64_t lo, int64_t dflt) {
    std::vector<int64_t> v = info.get_ints(name);
    if (pool) {
      check_count(info, v, name, count, k, ErrorKind::InvalidModel);
      if (v.empty()) v.assign(count * k, dflt);
    }
    check_range(info, v, name, lo);
    return v;
  };
  a.strides = per_axis("strides", 1, 1, 1);
  a.dilations = per_axis("dilations", 1, 1, 1);
  a.pads = per_axis("pads", 2, 0, 0);
  a.auto_pad = read_auto_pad(info);
  if (pool) {
    const int64_t cm = info.get_int("ceil_mode", 0);
    if (cm != 0 && cm != 1) info.fail(ErrorKind::InvalidModel, "ceil_mode must be 0 or 1, got " + std::to_string(cm));
    a.ceil_mode = cm == 1;
    return a;
  }
  a.group = info.get_int("group", 1);
  check_range(info, {a.group}, "group", 1);
  if (op == WindowOp::ConvTranspose) {
    a.output_padding = per_axis("output_padding", 1, 0, 0);
    a.output_shape = info.get_ints("output_shape");
  }
  return a;
}

WindowGeom pool_geometry(const NodeInfo& info, const Shape& x, const WindowAttrs& a) {
  const int k = static_cast<int>(a.kernel.size());
  if (x.rank() != k + 2)
    info.fail(ErrorKind::InvalidModel, "input of shape " + x.to_string() + " does not have the " + std::to_string(k) +
                                           " spatial axes of kernel_shape");
  return window_geometry(info, a, x, a.kernel, x[1], false, ErrorKind::InvalidModel);
}

ConvWindow conv_window(const NodeInfo& info, const WindowAttrs& a, bool transpose, const Shape& x, const Shape& w,
                       ErrorKind kind) {
  const int r = x.rank();
  if (r < 3) info.fail(kind, "X must have rank 3 or more (N, C, spatial axes), got " + x.to_string());
  if (r > 5) info.fail(ErrorKind::Unsupported, "more than 3 spatial axes are not supported, got X " + x.to_string());
  if (w.rank() != r) info.fail(kind, "W " + w.to_string() + " must have the rank of X " + x.to_string());
  const int64_t c = x[1], group = a.group;
  ConvWindow cw;
  cw.groups = group;
  if (c % group != 0)
    info.fail(kind, "input channels " + std::to_string(c) + " are not divisible by group " + std::to_string(group));
  if (!transpose) {
    if (w[1] * group != c)
      info.fail(kind, "W " + w.to_string() + " expects " + std::to_string(w[1] * group) + " input channels (group " +
                          std::to_string(group) + "), X " + x.to_string() + " has " + std::to_string(c));
    if (w[0] % group != 0)
      info.fail(kind,
                "output channels " + std::to_string(w[0]) + " are not divisible by group " + std::to_string(group));
    cw.out_channels = w[0];
  } else {
    if (w[0] != c)
      info.fail(kind, "W " + w.to_string() + " expects " + std::to_string(w[0]) + " input channels, X " +
                          x.to_string() + " has " + std::to_string(c));
    cw.out_channels = w[1] * group;
  }
  const std::vector<int64_t> kernel(w.dims().begin() + 2, w.dims().end());
  if (!a.kernel.empty() && a.kernel != kernel)
    info.fail(kind, "kernel_shape " + list_str(a.kernel) + " differs from W " + w.to_string());
  for (int64_t kv : kernel)
    if (kv < 1) info.fail(kind, "kernel sizes must be positive, got W " + w.to_string());
  cw.g = window_geometry(info, a, x, kernel, cw.out_channels, transpose, kind);
  return cw;
}

std::vector<AxisWindow> axis_windows(const WindowGeom& g, size_t j) {
  std::vector<AxisWindow> v(static_cast<size_t>(g.out[j]));
  for (int64_t o = 0; o < g.out[j]; ++o) {
    AxisWindow& w = v[static_cast<size_t>(o)];
    const int64_t p0 = o * g.s[j] - g.pb[j];
    int64_t t0 = 0;
    w.count = taps_between(p0, g.k[j], g.d[j], 0, g.in[j], &t0);
    w.first = p0 + t0 * g.d[j];
    w.step = g.d[j];
    w.padded = taps_between(p0, g.k[j], g.d[j], -g.pb[j], g.in[j] + g.pa[j], nullptr);
  }
  return v;
}

}  // namespace onemodel::rt
