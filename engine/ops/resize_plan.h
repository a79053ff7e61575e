// Resize's attributes, output sizes and per-axis tap tables (ops-conv.md "Resize", ops-coverage.md for
// antialias). Kept apart from the passes in resize.cc so the coordinate rules read as one unit. Every
// coordinate and weight is a float32 expression evaluated in the order written.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "ops/common.h"

namespace onemodel::rt {

enum class ResizeMode { Nearest, Linear, Cubic };
enum class CoordMode {
  HalfPixel,
  HalfPixelSymmetric,
  PytorchHalfPixel,
  AlignCorners,
  Asymmetric,
  TfCropAndResize,
  TfHalfPixelForNn
};
enum class NearestMode { RoundPreferFloor, RoundPreferCeil, Floor, Ceil };
enum class AspectPolicy { Stretch, NotLarger, NotSmaller };

struct ResizeAttrs {
  ResizeMode mode = ResizeMode::Nearest;
  CoordMode coord = CoordMode::HalfPixel;
  NearestMode nearest = NearestMode::RoundPreferFloor;
  AspectPolicy policy = AspectPolicy::Stretch;
  float cubic_a = -0.75f;
  bool exclude_outside = false;
  bool antialias = false;
  float extrapolation = 0.0f;
  std::vector<int64_t> axes;       // empty: every axis
  std::vector<float> attr_scales;  // Upsample 7: the scales attribute
  bool legacy = false;             // Resize 10 and Upsample: inputs X, scales
  size_t roi_input() const { return legacy ? 99 : 1; }
  size_t scales_input() const { return legacy ? 1 : 2; }
  size_t sizes_input() const { return legacy ? 99 : 3; }
};

inline ResizeAttrs read_resize_attrs(const NodeInfo& info, bool upsample) {
  ResizeAttrs a;
  a.legacy = upsample || info.opset() < 11;
  const std::string mode = info.get_string("mode", "nearest");
  if (mode == "nearest")
    a.mode = ResizeMode::Nearest;
  else if (mode == "linear" || (upsample && mode == "bilinear"))
    a.mode = ResizeMode::Linear;
  else if (mode == "cubic" && !a.legacy)
    a.mode = ResizeMode::Cubic;
  else
    info.fail(ErrorKind::InvalidModel, "mode '" + mode + "' is not supported");
  if (a.legacy) {
    a.coord = CoordMode::Asymmetric;
    a.nearest = NearestMode::Floor;
    if (upsample && info.opset() < 9) {
      if (!info.has("scales")) info.fail(ErrorKind::InvalidModel, "attribute scales is required");
      a.attr_scales = info.get_floats("scales");
    }
    return a;
  }
  const std::string c = info.get_string("coordinate_transformation_mode", "half_pixel");
  if (c == "half_pixel")
    a.coord = CoordMode::HalfPixel;
  else if (c == "half_pixel_symmetric" && info.opset() >= 19)
    a.coord = CoordMode::HalfPixelSymmetric;
  else if (c == "pytorch_half_pixel")
    a.coord = CoordMode::PytorchHalfPixel;
  else if (c == "align_corners")
    a.coord = CoordMode::AlignCorners;
  else if (c == "asymmetric")
    a.coord = CoordMode::Asymmetric;
  else if (c == "tf_crop_and_resize")
    a.coord = CoordMode::TfCropAndResize;
  else if (c == "tf_half_pixel_for_nn" && info.opset() < 13)
    a.coord = CoordMode::TfHalfPixelForNn;
  else
    info.fail(ErrorKind::InvalidModel, "coordinate_transformation_mode '" + c + "' is not supported");
  const std::string n = info.get_string("nearest_mode", "round_prefer_floor");
  if (n == "round_prefer_floor")
    a.nearest = NearestMode::RoundPreferFloor;
  else if (n == "round_prefer_ceil")
    a.nearest = NearestMode::RoundPreferCeil;
  else if (n == "floor")
    a.nearest = NearestMode::Floor;
  else if (n == "ceil")
    a.nearest = NearestMode::Ceil;
  else
    info.fail(ErrorKind::InvalidModel, "nearest_mode '" + n + "' is not supported");
  a.cubic_a = info.get_float("cubic_coeff_a", -0.75f);
  a.exclude_outside = info.get_int("exclude_outside", 0) != 0;
  a.extrapolation = info.get_float("extrapolation_value", 0.0f);
  if (info.opset() >= 18) {
    a.antialias = info.get_int("antialias", 0) != 0;
    a.axes = info.get_ints("axes");
    const std::string p = info.get_string("keep_aspect_ratio_policy", "stretch");
    if (p == "stretch")
      a.policy = AspectPolicy::Stretch;
    else if (p == "not_larger")
      a.policy = AspectPolicy::NotLarger;
    else if (p == "not_smaller")
      a.policy = AspectPolicy::NotSmaller;
    else
      info.fail(ErrorKind::InvalidModel, "keep_aspect_ratio_policy '" + p + "' is not supported");
  }
  if (!std::isfinite(a.cubic_a)) info.fail(ErrorKind::InvalidModel, "cubic_coeff_a must be finite");
  return a;
}

// Per axis of the input: output size, scale and (tf_crop_and_resize) the roi.
struct ResizePlan {
  std::vector<int64_t> out;
  std::vector<float> scale, roi_start, roi_end;
};

inline std::vector<float> read_float_tensor(const NodeInfo& info, const Tensor& t, const char* what) {
  std::vector<float> v;
  if (t.dtype() == DType::F32) {
    for (float x : t.data<float>()) v.push_back(x);
  } else if (t.dtype() == DType::F64) {
    for (double x : t.data<double>()) v.push_back(static_cast<float>(x));
  } else {
    info.fail(ErrorKind::InvalidModel, std::string(what) + " must be float, got " + type_str(t.dtype()));
  }
  return v;
}

// `get(i)` returns input i's value or null.
template <class Get>
ResizePlan resize_plan(const NodeInfo& info, const ResizeAttrs& a, const Shape& x, Get get) {
  const int r = x.rank();
  const auto ur = static_cast<size_t>(r);
  // The axes the scales / sizes / roi entries refer to.
  std::vector<int> axes;
  if (a.axes.empty()) {
    for (int d = 0; d < r; ++d) axes.push_back(d);
  } else {
    std::vector<bool> seen(ur, false);
    for (int64_t v : a.axes) {
      const int d = normalize_axis(info, v, r);
      if (seen[static_cast<size_t>(d)])
        info.fail(ErrorKind::InvalidModel, "axis " + std::to_string(v) + " is repeated");
      seen[static_cast<size_t>(d)] = true;
      axes.push_back(d);
    }
  }
  ResizePlan p;
  p.out = x.to_vector();
  p.scale.assign(ur, 1.0f);
  p.roi_start.assign(ur, 0.0f);
  p.roi_end.assign(ur, 1.0f);
  std::vector<float> scales = a.attr_scales;
  if (scales.empty() && get(a.scales_input())) scales = read_float_tensor(info, *get(a.scales_input()), "scales");
  std::vector<int64_t> sizes;
  if (get(a.sizes_input())) sizes = read_int_tensor(info, *get(a.sizes_input()), "sizes");
  if (!scales.empty() && !sizes.empty())
    info.fail(ErrorKind::InvalidModel, "only one of scales and sizes may be given");
  if (scales.empty() && sizes.empty()) info.fail(ErrorKind::InvalidModel, "one of scales and sizes must be given");
  const size_t k = axes.size();
  if ((!scales.empty() && scales.size() != k) || (!sizes.empty() && sizes.size() != k))
    info.fail(ErrorKind::InvalidModel, "scales or sizes has " + std::to_string(std::max(scales.size(), sizes.size())) +
                                           " entries for " + std::to_string(k) + " axes");
  auto set_size = [&](size_t u, float v) {
    if (!(v >= 0.0f) || v >= 2147483648.0f)
      info.fail(ErrorKind::InvalidModel, "output size of axis " + std::to_string(u) + " is out of range");
    p.out[u] = static_cast<int64_t>(v);
  };
  if (!scales.empty()) {
    for (size_t i = 0; i < k; ++i) {
      const float s = scales[i];
      if (!(s > 0.0f) || !std::isfinite(s))
        info.fail(ErrorKind::InvalidModel, "scale " + std::to_string(s) + " must be positive and finite");
      const auto u = static_cast<size_t>(axes[i]);
      p.scale[u] = s;
      set_size(u, std::floor(static_cast<float>(x[axes[i]]) * s));
    }
  } else {
    for (int64_t s : sizes)
      if (s < 0 || s > kMaxElements)
        info.fail(ErrorKind::InvalidModel, "size " + std::to_string(s) + " is out of range");
    if (a.policy == AspectPolicy::Stretch) {
      for (size_t i = 0; i < k; ++i) {
        const auto u = static_cast<size_t>(axes[i]);
        p.out[u] = sizes[i];
        p.scale[u] = x[axes[i]] == 0 ? 1.0f : static_cast<float>(sizes[i]) / static_cast<float>(x[axes[i]]);
      }
    } else {
      float s = a.policy == AspectPolicy::NotLarger ? INFINITY : 0.0f;
      for (size_t i = 0; i < k; ++i) {
        if (x[axes[i]] == 0) continue;
        const float q = static_cast<float>(sizes[i]) / static_cast<float>(x[axes[i]]);
        s = a.policy == AspectPolicy::NotLarger ? std::min(s, q) : std::max(s, q);
      }
      if (!std::isfinite(s) || !(s > 0.0f)) info.fail(ErrorKind::InvalidModel, "sizes give no usable scale");
      for (size_t i = 0; i < k; ++i) {
        const auto u = static_cast<size_t>(axes[i]);
        p.scale[u] = s;
        set_size(u, std::round(static_cast<float>(x[axes[i]]) * s));  // half away from zero
      }
    }
  }
  for (int d = 0; d < r; ++d)
    if (x[d] == 0 && p.out[static_cast<size_t>(d)] != 0)
      info.fail(ErrorKind::InvalidModel,
                "axis " + std::to_string(d) + " of size 0 cannot be resized to a non-empty size");
  if (!Shape::valid(p.out)) info.fail(ErrorKind::InvalidModel, "output would have more than 2^31-1 elements");
  if (a.coord == CoordMode::TfCropAndResize) {
    if (!get(a.roi_input())) info.fail(ErrorKind::InvalidModel, "tf_crop_and_resize needs the roi input");
    const std::vector<float> roi = read_float_tensor(info, *get(a.roi_input()), "roi");
    if (roi.size() != 2 * k) info.fail(ErrorKind::InvalidModel, "roi must have " + std::to_string(2 * k) + " entries");
    for (size_t i = 0; i < k; ++i) {
      p.roi_start[static_cast<size_t>(axes[i])] = roi[i];
      p.roi_end[static_cast<size_t>(axes[i])] = roi[i + k];
    }
  }
  return p;
}

// Taps of every output position j of one axis: entries start[j] .. start[j+1] of idx / w.
struct AxisTable {
  std::vector<int64_t> start, idx;
  std::vector<float> w;
  std::vector<uint8_t> outside;  // tf_crop_and_resize: coordinate outside [0, in - 1]
};

// Input coordinate of output position j.
inline float source_coord(const ResizeAttrs& a, const ResizePlan& p, size_t u, int64_t j, int64_t in) {
  const float s = p.scale[u];
  const float fj = static_cast<float>(j), fin = static_cast<float>(in), fout = static_cast<float>(p.out[u]);
  switch (a.coord) {
    case CoordMode::HalfPixel: return (fj + 0.5f) / s - 0.5f;
    case CoordMode::PytorchHalfPixel: return p.out[u] > 1 ? (fj + 0.5f) / s - 0.5f : 0.0f;
    case CoordMode::HalfPixelSymmetric: {
      const float offset = fin / 2.0f * (1.0f - fout / (s * fin));
      return offset + (fj + 0.5f) / s - 0.5f;
    }
    case CoordMode::AlignCorners: return p.out[u] > 1 ? fj * (fin - 1.0f) / (fout - 1.0f) : 0.0f;
    case CoordMode::Asymmetric: return fj / s;
    case CoordMode::TfHalfPixelForNn: return (fj + 0.5f) / s;  // opsets 11-12: no "- 0.5"
    case CoordMode::TfCropAndResize: {
      const float b = p.roi_start[u], e = p.roi_end[u];
      if (p.out[u] > 1) return b * (fin - 1.0f) + fj * (e - b) * (fin - 1.0f) / (fout - 1.0f);
      return 0.5f * (b + e) * (fin - 1.0f);
    }
  }
  return 0.0f;
}

// Keys (1981) cubic kernel with coefficient a at distance t (|t| < 2 has weight).
inline float keys_cubic(float t, float a) {
  t = std::fabs(t);
  if (t <= 1.0f) return ((a + 2.0f) * t - (a + 3.0f)) * t * t + 1.0f;
  if (t < 2.0f) return ((a * t - 5.0f * a) * t + 8.0f * a) * t - 4.0f * a;
  return 0.0f;
}

inline AxisTable axis_table(const ResizeAttrs& a, const ResizePlan& p, int d, int64_t in) {
  const auto u = static_cast<size_t>(d);
  const int64_t m = p.out[u];
  AxisTable t;
  t.start.reserve(static_cast<size_t>(m) + 1);
  t.outside.assign(static_cast<size_t>(m), 0);
  std::vector<int64_t> ti;
  std::vector<float> tw;
  auto clampi = [&](int64_t i) { return std::clamp<int64_t>(i, 0, in - 1); };
  // Appends the gathered taps, dropping zero weights; `norm` divides by the weights' sum first.
  auto emit = [&](bool norm) {
    float sum = 0.0f;
    for (float w : tw) sum = sum + w;
    if (norm && sum == 0.0f) return;  // no tap left: the position reads nothing and stays +0
    for (size_t k = 0; k < ti.size(); ++k) {
      const float w = norm ? tw[k] / sum : tw[k];
      if (w == 0.0f) continue;
      t.idx.push_back(ti[k]);
      t.w.push_back(w);
    }
  };
  for (int64_t j = 0; j < m; ++j) {
    t.start.push_back(static_cast<int64_t>(t.idx.size()));
    float x = source_coord(a, p, u, j, in);
    // A NaN coordinate (an overflowing roi) is not inside [0, in - 1] either.
    if (a.coord == CoordMode::TfCropAndResize && !(x >= 0.0f && x <= static_cast<float>(in - 1)))
      t.outside[static_cast<size_t>(j)] = 1;
    if (!std::isfinite(x)) x = 0.0f;  // only an outside (extrapolated) position can get here
    // Far outside the input every tap reads an edge sample; bounding x keeps the integer casts defined.
    const float s = p.scale[u];
    const float margin = a.antialias && s < 1.0f ? 4.0f / s + 4.0f : 4.0f;
    x = std::clamp(x, -margin, static_cast<float>(in) + margin);
    ti.clear();
    tw.clear();
    const float xf = std::floor(x);
    const float fr = x - xf;
    if (a.mode == ResizeMode::Nearest) {
      float r = xf;
      switch (a.nearest) {
        case NearestMode::RoundPreferFloor: r = fr > 0.5f ? xf + 1.0f : xf; break;
        case NearestMode::RoundPreferCeil: r = fr >= 0.5f ? xf + 1.0f : xf; break;
        case NearestMode::Floor: r = xf; break;
        case NearestMode::Ceil: r = std::ceil(x); break;
      }
      const float lim = static_cast<float>(in - 1);
      t.idx.push_back(static_cast<int64_t>(std::clamp(r, 0.0f, lim)));
      t.w.push_back(1.0f);
      continue;
    }
    if (a.antialias && s < 1.0f) {
      const float reach = (a.mode == ResizeMode::Linear ? 1.0f : 2.0f) / s;
      const auto lo = static_cast<int64_t>(std::ceil(x - reach)), hi = static_cast<int64_t>(std::floor(x + reach));
      for (int64_t i = lo; i <= hi; ++i) {
        const float dist = (static_cast<float>(i) - x) * s;
        const float w =
            a.mode == ResizeMode::Linear ? std::max(0.0f, 1.0f - std::fabs(dist)) : keys_cubic(dist, a.cubic_a);
        if (w == 0.0f) continue;
        if ((i < 0 || i >= in) && a.exclude_outside) continue;
        ti.push_back(clampi(i));
        tw.push_back(w);
      }
      emit(true);
      continue;
    }
    if (a.mode == ResizeMode::Linear) {
      const float xc = std::clamp(x, 0.0f, static_cast<float>(in - 1));
      const float lf = std::floor(xc);
      const float tt = xc - lf;
      const auto i0 = static_cast<int64_t>(lf);
      ti = {i0, clampi(i0 + 1)};
      tw = {1.0f - tt, tt};
      emit(false);
      continue;
    }
    // Cubic: taps floor(x) - 1 .. floor(x) + 2 with the Keys weights of the fraction.
    const float A = a.cubic_a, r0 = fr + 1.0f, r2 = 1.0f - fr, r3 = r2 + 1.0f;
    const float c[4] = {
        ((A * r0 - 5.0f * A) * r0 + 8.0f * A) * r0 - 4.0f * A, ((A + 2.0f) * fr - (A + 3.0f)) * fr * fr + 1.0f,
        ((A + 2.0f) * r2 - (A + 3.0f)) * r2 * r2 + 1.0f, ((A * r3 - 5.0f * A) * r3 + 8.0f * A) * r3 - 4.0f * A};
    const auto base = static_cast<int64_t>(xf) - 1;
    for (int q = 0; q < 4; ++q) {
      const int64_t i = base + q;
      if (a.exclude_outside && (i < 0 || i >= in)) continue;
      ti.push_back(clampi(i));
      tw.push_back(c[q]);
    }
    emit(a.exclude_outside);
  }
  t.start.push_back(static_cast<int64_t>(t.idx.size()));
  return t;
}

// The extrapolation value stored as element type `t`.
inline void cast_fill(DType t, float v, void* out) {
  visit_numeric(t, [&](auto z) {
    using T = decltype(z);
    T c{};
    if constexpr (std::is_floating_point_v<T>) {
      c = static_cast<T>(v);
    } else if (v == v) {  // NaN stores 0; other values saturate to the type's range
      const double lo = static_cast<double>(std::numeric_limits<T>::lowest());
      const double hi = static_cast<double>(std::numeric_limits<T>::max());
      const double dv = std::clamp(static_cast<double>(v), lo, hi);
      c = dv >= hi ? std::numeric_limits<T>::max() : static_cast<T>(dv);
    }
    std::memcpy(out, &c, sizeof(T));
  });
}

}  // namespace onemodel::rt
