// MaxPool, AveragePool, GlobalAveragePool and GlobalMaxPool (ops-conv.md "Pooling"). Every loop visits a
// window's taps in depth, height, width order one scalar at a time, so the results depend on nothing but
// the input: fast and exact mode share one code path and give the same bits (NaN results are canonical).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/pool.h"
#include "ops/reduce_walk.h"
#include "ops/ops.h"
#include "ops/window.h"

namespace onemodel::rt {
namespace {

// Per-axis window tables of a geometry (the windows are the same in every plane).
struct Windows {
  std::array<std::vector<AxisWindow>, 3> ax;
  explicit Windows(const WindowGeom& g) {
    for (size_t j = 0; j < 3; ++j) ax[j] = axis_windows(g, j);
  }
};

// The outputs [lo, hi) of a row whose windows have every width tap inside the input, as one run (empty when
// they are not one run: every column then takes the edge path).
std::pair<int64_t, int64_t> inner_columns(const WindowGeom& g, const Windows& w) {
  const int64_t out_w = g.out[2], kw = g.k[2];
  int64_t lo = 0, hi = out_w;
  while (lo < out_w && w.ax[2][static_cast<size_t>(lo)].count != kw) ++lo;
  while (hi > lo && w.ax[2][static_cast<size_t>(hi - 1)].count != kw) --hi;
  for (int64_t o = lo; o < hi; ++o)
    if (w.ax[2][static_cast<size_t>(o)].count != kw) hi = lo;
  return {lo, hi};
}

// Folds the taps of window row `wh` of a plane into acc[0, out_w), tap row by tap row in order: the inner run
// [lo, hi) as one call inner(first tap of output lo, hi - lo) per tap row, the edge outputs one tap at a time
// as acc[q] = fold(tap, acc[q]).
template <class Fold, class Inner>
void fold_window_row(const WindowGeom& g, const Windows& w, std::pair<int64_t, int64_t> run, const float* xp,
                     const AxisWindow& wh, float* acc, Fold fold, Inner inner) {
  const int64_t lo = run.first, hi = run.second;
  const int64_t in_w = g.in[2], out_w = g.out[2];
  for (int64_t b = 0, ih = wh.first; b < wh.count; ++b, ih += wh.step) {
    const float* row = xp + ih * in_w;
    if (hi > lo) inner(row - g.pb[2] + lo * g.s[2], hi - lo);
    auto edge = [&](int64_t q) {
      const AxisWindow& ww = w.ax[2][static_cast<size_t>(q)];
      float a = acc[q];
      for (int64_t c = 0, iw = ww.first; c < ww.count; ++c, iw += ww.step) a = fold(row[iw], a);
      acc[q] = a;
    };
    for (int64_t q = 0; q < lo; ++q) edge(q);
    for (int64_t q = std::max(lo, hi); q < out_w; ++q) edge(q);
  }
}

// Every output row of every plane (one or two spatial axes): body(plane input, height window, buf, output row)
// with buf a per-thread row of out_w floats filled with `init`, in chunks of planes on the pool.
template <class F>
void for_output_rows(ThreadPool* pool, const WindowGeom& g, const Windows& w, const float* x, float* y, float init,
                     F&& body) {
  const int64_t plane = g.in_plane(), out_w = g.out[2];
  for_planes(pool, g, g.k[1] * g.k[2], [&](int64_t p, int64_t o) {
    thread_local std::vector<float> row;
    row.resize(static_cast<size_t>(out_w));
    for (const AxisWindow& wh : w.ax[1]) {
      std::fill(row.begin(), row.end(), init);
      body(x + p * plane, wh, row.data(), y + o);
      o += out_w;
    }
  });
}

// MaxPool: IEEE maxNum. The first tap inside the input that is not NaN starts the maximum, a later tap
// replaces it only when strictly greater (the first of equal taps decides the index); NaN only when every
// tap inside is NaN; the type's lowest value (index -1) when no tap is inside the input.
// Planes are independent: chunks of whole planes on the session's pool (the chunking depends on the shape
// only, and each output is computed the same way in any chunk).
template <class F>
void for_planes(ThreadPool* pool, const WindowGeom& g, int64_t taps_per_output, F&& f) {
  const int64_t planes = g.n * g.c, out_plane = g.out_plane();
  const int64_t per = std::max<int64_t>(1, 8192 / std::max<int64_t>(out_plane, 1));
  const double work = 0.5 * static_cast<double>(planes) * static_cast<double>(out_plane * taps_per_output);
  parallel_for(pool, (planes + per - 1) / per, work, [&](int64_t c) {
    for (int64_t p = c * per; p < std::min(planes, (c + 1) * per); ++p) f(p, p * out_plane);
  });
}

template <class T>
void max_pool(const WindowGeom& g, const T* x, T* y, int64_t* idx, bool col_major, ThreadPool* pool) {
  const Windows w(g);
  const int64_t plane = g.in_plane();
  for_planes(pool, g, g.k[0] * g.k[1] * g.k[2], [&](int64_t p, int64_t o) {
    const T* xp = x + p * plane;
    for (const AxisWindow& wd : w.ax[0])
      for (const AxisWindow& wh : w.ax[1])
        for (const AxisWindow& ww : w.ax[2]) {
          T best = std::numeric_limits<T>::lowest();
          int64_t at = -1;
          bool have = false, saw_nan = false;
          for (int64_t a = 0, id = wd.first; a < wd.count; ++a, id += wd.step)
            for (int64_t b = 0, ih = wh.first; b < wh.count; ++b, ih += wh.step)
              for (int64_t c = 0, iw = ww.first; c < ww.count; ++c, iw += ww.step) {
                const int64_t off = (id * g.in[1] + ih) * g.in[2] + iw;
                const T v = xp[off];
                if constexpr (std::is_floating_point_v<T>) {
                  if (v != v) {
                    if (!have && !saw_nan) at = off;
                    saw_nan = true;
                    continue;
                  }
                }
                if (!have || v > best) {
                  best = v;
                  at = off;
                  have = true;
                }
              }
          if constexpr (std::is_floating_point_v<T>) {
            if (!have && saw_nan) best = std::numeric_limits<T>::quiet_NaN();
          }
          y[o] = canon_any(best);
          if (idx) {
            int64_t flat = at;
            if (at >= 0 && col_major) {
              // Each plane flattened with the first spatial axis fastest.
              const int64_t iw = at % g.in[2], ih = (at / g.in[2]) % g.in[1], id = at / (g.in[1] * g.in[2]);
              flat = g.spatial == 3 ? id + g.in[0] * (ih + g.in[1] * iw) : g.spatial == 2 ? ih + g.in[1] * iw : iw;
            }
            idx[o] = at < 0 ? -1 : p * plane + flat;
          }
          ++o;
        }
  });
}

// The same rule for float32 planes of one or two spatial axes without the index output, a row of outputs at a
// time: `best` starts as NaN and a tap replaces it when strictly greater or when `best` is still NaN (so
// NaN taps before the first number leave NaN, and a later tap never replaces an equal one), which is the
// value max_pool keeps, tap by tap in the same (height, width) order. Columns whose windows lie inside the
// row run through kern::max_window_f32, vector lanes across outputs, every tap row and tap folded in
// registers (ResNet-50's 3x3 stride-2 pool over 64 x 112 x 112 took 6.5 ms one output at a time, 0.87 ms with
// a pass over the row per tap, 0.51 ms now against ONNX Runtime's 0.25-0.31; openWakeWord embedding's five 2x2 stride-2
// pools went from 0.28 to 0.23 ms a run: their rows are short, and the per-row overhead dominates).
void max_pool_rows_f32(kern::Isa isa, const WindowGeom& g, const float* x, float* y, ThreadPool* pool) {
  const Windows w(g);
  const int64_t plane = g.in_plane(), in_w = g.in[2], out_w = g.out[2];
  const int64_t kw = g.k[2], sw = g.s[2], dw = g.d[2], pw = g.pb[2];
  const std::pair<int64_t, int64_t> run = inner_columns(g, w);
  const int64_t lo = run.first;
  bool empty_column = false;  // a window of no input column (ceil_mode overhang past the padding)
  for (const AxisWindow& ww : w.ax[2]) empty_column = empty_column || ww.count == 0;
  auto update = &kern::max_tap_update;
  // Width kernel 2 = stride, no width padding or overhang: each output row is one pass over its input rows'
  // pairs (openWakeWord embedding's five pools have rows of 1-16 outputs, where the general path's per-row
  // work dominated: 0.23 ms a run against ORT's 0.04).
  const bool pairs = kw == 2 && sw == 2 && dw == 1 && pw == 0 && 2 * out_w <= in_w && g.k[1] <= 8;
  if (pairs) {
    for_planes(pool, g, g.k[1] * kw, [&](int64_t p, int64_t o) {
      const float* xp = x + p * plane;
      for (const AxisWindow& wh : w.ax[1]) {
        const float* rows[8];
        for (int64_t b = 0, ih = wh.first; b < wh.count; ++b, ih += wh.step) rows[b] = xp + ih * in_w;
        if (wh.count > 0)
          kern::max_pairs_f32(isa, rows, wh.count, y + o, out_w);
        else
          std::fill(y + o, y + o + out_w, std::numeric_limits<float>::lowest());
        o += out_w;
      }
    });
    return;
  }
  // Every output row with 1 to 16 tap rows and every column with a tap: the inner run goes straight into the
  // output row, finished (max_window_final_f32), and the edge outputs fold from NaN in place. ResNet-50's 3x3
  // stride-2 pool over 64 x 112 x 112 (one thread, AVX-512, alternated minima): 0.43 -> 0.40 ms without the row
  // buffer's fill, second fold and copy, 0.33 ms with stride-2 vectors reaching the row's last output
  // (kernels/pool-inl.h); ONNX Runtime's NCHWc pool takes 0.08 ms.
  bool direct = !empty_column;
  for (const AxisWindow& wh : w.ax[1]) direct = direct && wh.count > 0 && wh.count <= 16;
  if (direct) {
    const int64_t hi = run.second;
    for_planes(pool, g, g.k[1] * kw, [&](int64_t p, int64_t o) {
      const float* xp = x + p * plane;
      for (const AxisWindow& wh : w.ax[1]) {
        float* yr = y + o;
        o += out_w;
        if (hi > lo) {
          const float* rows[16];
          for (int64_t b = 0; b < wh.count; ++b) rows[b] = xp + (wh.first + b * wh.step) * in_w - pw + lo * sw;
          kern::max_window_final_f32(isa, rows, wh.count, sw, kw, dw, yr + lo, hi - lo);
        }
        const int64_t tail = std::max(lo, hi);
        std::fill(yr, yr + lo, std::numeric_limits<float>::quiet_NaN());
        std::fill(yr + tail, yr + out_w, std::numeric_limits<float>::quiet_NaN());
        fold_window_row(g, w, run, xp, wh, yr, update, [](const float*, int64_t) {});
        for (int64_t q = 0; q < lo; ++q) yr[q] = kern::canon(yr[q]);
        for (int64_t q = tail; q < out_w; ++q) yr[q] = kern::canon(yr[q]);
      }
    });
    return;
  }
  for_output_rows(pool, g, w, x, y, std::numeric_limits<float>::quiet_NaN(),
                  [&](const float* xp, const AxisWindow& wh, float* best, float* yr) {
                    // The inner run over up to 16 tap rows per call, then the edge outputs tap by tap (disjoint
                    // outputs, each in tap row then tap order).
                    if (run.second > lo)
                      for (int64_t b0 = 0; b0 < wh.count; b0 += 16) {
                        const float* rows[16];
                        const int64_t nr = std::min<int64_t>(16, wh.count - b0);
                        for (int64_t b = 0; b < nr; ++b)
                          rows[b] = xp + (wh.first + (b0 + b) * wh.step) * in_w - pw + lo * sw;
                        kern::max_window_f32(isa, rows, nr, sw, kw, dw, best + lo, run.second - lo);
                      }
                    fold_window_row(g, w, run, xp, wh, best, update, [](const float*, int64_t) {});
                    if (wh.count > 0 && !empty_column) {
                      kern::copy_canonical_f32(isa, best, yr, out_w);
                    } else {
                      for (int64_t q = 0; q < out_w; ++q)
                        yr[q] = (wh.count == 0 || w.ax[2][static_cast<size_t>(q)].count == 0)
                                    ? std::numeric_limits<float>::lowest()
                                    : kern::canon(best[q]);
                    }
                  });
}

// AveragePool: the taps inside the input summed from +0 in order and divided by their count, or with
// count_include_pad by the taps inside the declared padding (never the ceil_mode overhang).
template <class T>
void average_pool(const WindowGeom& g, const T* x, T* y, bool include_pad, ThreadPool* pool) {
  const Windows w(g);
  const int64_t plane = g.in_plane();
  for_planes(pool, g, g.k[0] * g.k[1] * g.k[2], [&](int64_t p, int64_t o) {
    const T* xp = x + p * plane;
    for (const AxisWindow& wd : w.ax[0])
      for (const AxisWindow& wh : w.ax[1])
        for (const AxisWindow& ww : w.ax[2]) {
          T acc = T(0);
          for (int64_t a = 0, id = wd.first; a < wd.count; ++a, id += wd.step)
            for (int64_t b = 0, ih = wh.first; b < wh.count; ++b, ih += wh.step)
              for (int64_t c = 0, iw = ww.first; c < ww.count; ++c, iw += ww.step)
                acc = acc + xp[(id * g.in[1] + ih) * g.in[2] + iw];
          const int64_t n = include_pad ? wd.padded * wh.padded * ww.padded : wd.count * wh.count * ww.count;
          y[o++] = canon_any(acc / static_cast<T>(n));
        }
  });
}

// The same sums for float32 planes of one or two spatial axes, a row of outputs at a time: for each tap row in
// order, every tap column's addition over the row (kern::sum_taps_f32 across the columns whose windows lie
// inside the row, one output at a time at the edges), so each output still adds its taps in (height, width)
// order from +0. PP-OCRv4 rec's 3x2 stride-(3, 2) pool over 480 x 3 x 80 took 0.25 ms one output at a time
// (ONNX Runtime: 0.02 ms).
void average_pool_rows_f32(kern::Isa isa, const WindowGeom& g, const float* x, float* y, bool include_pad,
                           ThreadPool* pool) {
  const Windows w(g);
  const int64_t out_w = g.out[2];
  const int64_t kw = g.k[2], sw = g.s[2], dw = g.d[2];
  const std::pair<int64_t, int64_t> run = inner_columns(g, w);
  const int64_t lo = run.first;
  for_output_rows(pool, g, w, x, y, 0.0f, [&](const float* xp, const AxisWindow& wh, float* acc, float* yr) {
    fold_window_row(
        g, w, run, xp, wh, acc, [](float v, float a) { return a + v; },
        [&](const float* row, int64_t count) { kern::sum_taps_f32(isa, row, sw, kw, dw, acc + lo, count); });
    for (int64_t q = 0; q < out_w; ++q) {
      const AxisWindow& ww = w.ax[2][static_cast<size_t>(q)];
      const int64_t n = include_pad ? wh.padded * ww.padded : wh.count * ww.count;
      yr[q] = kern::canon(acc[q] / static_cast<float>(n));
    }
  });
}

class PoolKernel final : public Kernel {
 public:
  PoolKernel(bool is_max, WindowAttrs a, bool include_pad, bool col_major)
      : Kernel(KernelFlags{.exact = true}),
        max_(is_max),
        a_(std::move(a)),
        include_pad_(include_pad),
        col_major_(col_major) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0)) ctx.fail(ErrorKind::InvalidModel, "expects an input X");
    check_type(ctx.info, ctx.input(0).dtype);
    if (!max_ && ctx.outputs.size() > 1) ctx.fail(ErrorKind::InvalidModel, "has one output");
    const WindowGeom g = pool_geometry(ctx.info, ctx.input(0).shape, a_);
    ctx.set_output(0, ctx.input(0).dtype, g.out_shape);
    if (ctx.outputs.size() > 1) ctx.set_output(1, DType::I64, g.out_shape);
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const WindowGeom g = pool_geometry(ctx.info, x.shape(), a_);
    Tensor& y = ctx.output(0);
    if (y.shape() != g.out_shape || y.dtype() != x.dtype())
      ctx.fail(ErrorKind::InvalidInput, "input does not match the planned output " + y.shape().to_string());
    if (y.numel() == 0) return;
    int64_t* idx =
        ctx.outputs.size() > 1 && !ctx.output(1).empty() ? ctx.output(1).mutable_data<int64_t>().data() : nullptr;
    visit(x.dtype(), [&](auto t) {
      using T = decltype(t);
      if constexpr (std::is_same_v<T, float>) {
        const bool rows = g.in[0] == 1 && g.k[0] == 1 && g.out[0] == 1 && g.pb[0] == 0;
        if (max_ && !idx && rows)
          return max_pool_rows_f32(ctx.isa, g, x.data<float>().data(), y.mutable_data<float>().data(), ctx.pool);
        if (!max_ && rows)
          return average_pool_rows_f32(ctx.isa, g, x.data<float>().data(), y.mutable_data<float>().data(), include_pad_,
                                       ctx.pool);
      }
      if (max_)
        max_pool<T>(g, x.data<T>().data(), y.mutable_data<T>().data(), idx, col_major_, ctx.pool);
      else if constexpr (std::is_floating_point_v<T>)
        average_pool<T>(g, x.data<T>().data(), y.mutable_data<T>().data(), include_pad_, ctx.pool);
    });
  }

 private:
  template <class F>
  static void visit(DType t, F&& f) {
    switch (t) {
      case DType::F32: f(float{}); break;
      case DType::F64: f(double{}); break;
      case DType::I8: f(int8_t{}); break;
      case DType::U8: f(uint8_t{}); break;
      default: break;
    }
  }
  void check_type(const NodeInfo& info, DType t) const {
    const bool ok = t == DType::F32 || t == DType::F64 || (max_ && (t == DType::I8 || t == DType::U8));
    if (!ok) info.fail(ErrorKind::Unsupported, "element type " + type_str(t) + " is not supported");
  }

  bool max_;
  WindowAttrs a_;
  bool include_pad_, col_major_;
};

// GlobalAveragePool / GlobalMaxPool over every axis after the first two. The average sums each plane in
// index order from +0 and divides by the plane size; the maximum starts from the lowest value and takes
// strictly greater ones, so NaNs are ignored (a plane of NaN gives the lowest value).
class GlobalPoolKernel final : public Kernel {
 public:
  explicit GlobalPoolKernel(bool is_max) : Kernel(KernelFlags{.exact = true}), max_(is_max) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0)) ctx.fail(ErrorKind::InvalidModel, "expects an input X");
    const DType t = ctx.input(0).dtype;
    if (t != DType::F32 && t != DType::F64)
      ctx.fail(ErrorKind::Unsupported, "element type " + type_str(t) + " is not supported");
    ctx.set_output(0, t, out_shape(ctx.info, ctx.input(0).shape));
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (ctx.output(0).shape() != out_shape(ctx.info, x.shape()))
      ctx.fail(ErrorKind::InvalidInput, "input does not match the planned output");
    const int64_t planes = x.shape()[0] * x.shape()[1];
    const int64_t n = planes == 0 ? 0 : x.numel() / planes;
    auto go = [&](auto t) {
      using T = decltype(t);
      const T* px = x.data<T>().data();
      T* py = ctx.output(0).mutable_data<T>().data();
      // Each plane's sum is one chain of dependent additions (its order is the rule), so one plane at a time
      // runs at the adder's latency: kGroup planes advance together, one chain each, the sums unchanged.
      // PP-OCRv4 det's ten squeeze-excite averages took 4 ms one plane at a time. Fast mode's average sums in
      // vectors (kern::row_means_fast_f32): MobileNetV3's 672 planes of 14 x 14, one thread, 0.021 -> 0.015 ms
      // (a standalone squeeze-and-excitation block, profile minima; it reads at the caches' bandwidth).
      constexpr int64_t kGroup = 8;
      const bool mx = max_;
      if constexpr (std::is_same_v<T, float>) {
        if (!mx && !ctx.exact) {
          parallel_for(ctx.pool, (planes + kGroup - 1) / kGroup, 0.05 * static_cast<double>(planes * n),
                       [&](int64_t c) {
                         const int64_t p0 = c * kGroup;
                         kern::row_means_fast_f32(ctx.isa, px + p0 * n, std::min(kGroup, planes - p0), n, py + p0);
                       });
          return;
        }
      }
      parallel_for(ctx.pool, (planes + kGroup - 1) / kGroup, 0.3 * static_cast<double>(planes * n), [&](int64_t c) {
        const int64_t p0 = c * kGroup, m = std::min(kGroup, planes - p0);
        T acc[kGroup];
        for (int64_t j = 0; j < kGroup; ++j) acc[j] = mx ? std::numeric_limits<T>::lowest() : T(0);
        const T* q = px + p0 * n;
        if (m == kGroup && !mx) {
          for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < kGroup; ++j) acc[j] = acc[j] + q[j * n + i];
        } else {
          for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < m; ++j) {
              const T v = q[j * n + i];
              if (mx)
                acc[j] = v > acc[j] ? v : acc[j];
              else
                acc[j] = acc[j] + v;
            }
        }
        for (int64_t j = 0; j < m; ++j) py[p0 + j] = canon_any(mx ? acc[j] : acc[j] / static_cast<T>(n));
      });
    };
    if (x.dtype() == DType::F32)
      go(float{});
    else
      go(double{});
  }

 private:
  static Shape out_shape(const NodeInfo& info, const Shape& s) {
    if (s.rank() < 2) info.fail(ErrorKind::InvalidModel, "input must have rank 2 or more, got " + s.to_string());
    std::vector<int64_t> d = s.to_vector();
    for (size_t i = 2; i < d.size(); ++i) d[i] = 1;
    return Shape(std::span<const int64_t>(d));
  }
  bool max_;
};

}  // namespace

std::unique_ptr<Kernel> make_max_pool(const NodeInfo& info) {
  WindowAttrs a = read_window_attrs(info, WindowOp::Pool);
  const int64_t so = info.get_int("storage_order", 0);
  if (so != 0 && so != 1) info.fail(ErrorKind::InvalidModel, "storage_order must be 0 or 1, got " + std::to_string(so));
  if (info.num_outputs() > 2) info.fail(ErrorKind::InvalidModel, "has at most two outputs");
  return std::make_unique<PoolKernel>(true, std::move(a), false, so == 1);
}

std::unique_ptr<Kernel> make_average_pool(const NodeInfo& info) {
  WindowAttrs a = read_window_attrs(info, WindowOp::Pool);
  const int64_t cip = info.get_int("count_include_pad", 0);
  if (cip != 0 && cip != 1)
    info.fail(ErrorKind::InvalidModel, "count_include_pad must be 0 or 1, got " + std::to_string(cip));
  return std::make_unique<PoolKernel>(false, std::move(a), cip == 1, false);
}

std::unique_ptr<Kernel> make_global_average_pool(const NodeInfo&) { return std::make_unique<GlobalPoolKernel>(false); }
std::unique_ptr<Kernel> make_global_max_pool(const NodeInfo&) { return std::make_unique<GlobalPoolKernel>(true); }

}  // namespace onemodel::rt
