// Resize (opsets 10 to 19+) and Upsample (7, 9), ops-conv.md "Resize" and ops-coverage.md (antialias).
// Axes are resampled one at a time through per-output tap tables (shrinking axes first, then the others,
// each in axis order). Coordinates and weights are float32 expressions in a fixed order and every tap is
// one separately rounded multiply and add from +0, so fast and exact mode share one path and one result.
// Nearest mode copies elements, so it serves every element type; linear and cubic are float32.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "ops/index_util.h"
#include "ops/resize_plan.h"
#include "ops/ops.h"

namespace onemodel::rt {
namespace {

// Rows of the outer axis in chunks on the pool (every output element is computed the same way in any chunk).
template <class F>
void for_outer(ThreadPool* pool, int64_t outer, int64_t work_per_outer, F&& body) {
  const int64_t per = std::max<int64_t>(1, 16384 / std::max<int64_t>(work_per_outer, 1));
  parallel_for(pool, (outer + per - 1) / per, 0.5 * static_cast<double>(outer) * static_cast<double>(work_per_outer),
               [&](int64_t c) {
                 for (int64_t o = c * per; o < std::min(outer, (c + 1) * per); ++o) body(o);
               });
}

// Whether every output position of the table has one or two taps (linear; one at the clamped borders).
bool two_taps(const AxisTable& t) {
  for (size_t j = 0; j + 1 < t.start.size(); ++j)
    if (t.start[j + 1] - t.start[j] != 2 && t.start[j + 1] - t.start[j] != 1) return false;
  return true;
}

// One axis pass over a [outer, n, inner] view producing [outer, m, inner]; `last`: the final pass, whose NaN
// results are made canonical as they are stored (a serial pass over the output afterwards was a third of
// ISNet's 1024 x 1024 upsampling at two threads).
// With inner > 1 each output row is built tap by tap over the whole row (dj = +0, then dj + w * row of the tap,
// in tap order): every element sees the same operations in the same order as one accumulator per element, and
// the row loops vectorise (ISNet's 64 x 256 x 256 -> 512 x 512 bilinear upsampling spent most of its 174 ms in
// the per-element tap loop and in faulting in a fresh intermediate).
void pass_float(const float* src, float* dst, int64_t outer, int64_t n, int64_t inner, const AxisTable& t, bool last,
                ThreadPool* pool) {
  const int64_t m = static_cast<int64_t>(t.start.size()) - 1;
  if (inner == 1 && two_taps(t)) {
    // Along the last axis with one or two taps per position (linear): the taps unpacked into flat arrays, so
    // each element is two loads, products and adds with no tap loop (the loop was 7-9% of ISNet at one thread).
    // The same operations in the same order as the loop below: acc = (+0 + w0 * s0) [+ w1 * s1].
    std::vector<int64_t> i0(static_cast<size_t>(m)), i1(static_cast<size_t>(m));
    std::vector<float> w0(static_cast<size_t>(m)), w1(static_cast<size_t>(m));
    std::vector<uint8_t> both(static_cast<size_t>(m));
    for (size_t j = 0; j < static_cast<size_t>(m); ++j) {
      const auto b = static_cast<size_t>(t.start[j]);
      both[j] = t.start[j + 1] - t.start[j] == 2;
      i0[j] = t.idx[b];
      w0[j] = t.w[b];
      i1[j] = both[j] ? t.idx[b + 1] : 0;
      w1[j] = both[j] ? t.w[b + 1] : 0.0f;
    }
    for_outer(pool, outer, m * 2, [&](int64_t o) {
      const float* __restrict__ s = src + o * n;
      float* __restrict__ d = dst + o * m;
      for (int64_t j = 0; j < m; ++j) {
        const auto u = static_cast<size_t>(j);
        float acc = 0.0f + w0[u] * s[i0[u]];
        if (both[u]) acc = acc + w1[u] * s[i1[u]];
        d[j] = last ? kern::canon(acc) : acc;
      }
    });
    return;
  }
  for_outer(pool, outer, m * inner * 2, [&](int64_t o) {
    const float* s = src + o * n * inner;
    float* d = dst + o * m * inner;
    for (int64_t j = 0; j < m; ++j) {
      const auto b = static_cast<size_t>(t.start[static_cast<size_t>(j)]);
      const auto e = static_cast<size_t>(t.start[static_cast<size_t>(j) + 1]);
      float* __restrict__ dj = d + j * inner;
      if (inner == 1) {
        float acc = 0.0f;
        for (size_t k = b; k < e; ++k) acc = acc + t.w[k] * s[t.idx[k]];
        dj[0] = last ? kern::canon(acc) : acc;
        continue;
      }
      std::fill(dj, dj + inner, 0.0f);
      for (size_t k = b; k < e; ++k) {
        const float w = t.w[k];
        const float* __restrict__ sk = s + t.idx[k] * inner;
        for (int64_t i = 0; i < inner; ++i) dj[i] = dj[i] + w * sk[i];
      }
      if (last)
        for (int64_t i = 0; i < inner; ++i) dj[i] = kern::canon(dj[i]);
    }
  });
}

// Nearest pass: every output position copies the element of its single tap. Along the last axis (inner 1)
// the copies are single elements: a typed gather, not a library call per element (PP-OCR det's six x2
// upsamplings: 23 ms of a 180 ms call before).
void pass_copy(const std::byte* src, std::byte* dst, size_t esz, int64_t outer, int64_t n, int64_t inner,
               const AxisTable& t, ThreadPool* pool) {
  const int64_t m = static_cast<int64_t>(t.start.size()) - 1;
  const auto row = static_cast<size_t>(inner) * esz;
  std::vector<int64_t> tap(static_cast<size_t>(m));
  for (int64_t j = 0; j < m; ++j)
    tap[static_cast<size_t>(j)] = t.idx[static_cast<size_t>(t.start[static_cast<size_t>(j)])];
  auto gather = [&](auto elem) {
    using E = decltype(elem);
    for_outer(pool, outer, m, [&](int64_t o) {
      const E* s = reinterpret_cast<const E*>(src) + o * n;
      E* d = reinterpret_cast<E*>(dst) + o * m;
      for (int64_t j = 0; j < m; ++j) d[j] = s[tap[static_cast<size_t>(j)]];
    });
  };
  if (inner == 1 && esz == 4) return gather(uint32_t{});
  if (inner == 1 && esz == 8) return gather(uint64_t{});
  if (inner == 1 && esz == 2) return gather(uint16_t{});
  if (inner == 1 && esz == 1) return gather(uint8_t{});
  if (row == 0) return;
  for_outer(pool, outer, m * inner, [&](int64_t o) {
    for (int64_t j = 0; j < m; ++j)
      std::memcpy(dst + static_cast<size_t>((o * m + j) * inner) * esz,
                  src + static_cast<size_t>((o * n + tap[static_cast<size_t>(j)]) * inner) * esz, row);
  });
}

// Nearest over the last two axes only (every axis before them kept): each output row gathers from its source
// row, and a row whose source is the previous output row's is a copy of that row. The two one-axis passes
// wrote and read an intermediate of the half-upsampled size, allocated per call (PP-OCR det's six x2
// upsamplings: 6.3 ms of a 103 ms call).
template <class E>
void nearest_2d(const E* src, E* dst, int64_t outer, int64_t ih_n, int64_t iw_n, const AxisTable& th,
                const AxisTable& tw, ThreadPool* pool) {
  const int64_t oh_n = static_cast<int64_t>(th.start.size()) - 1, ow_n = static_cast<int64_t>(tw.start.size()) - 1;
  std::vector<int64_t> col(static_cast<size_t>(ow_n)), row(static_cast<size_t>(oh_n));
  for (int64_t j = 0; j < ow_n; ++j)
    col[static_cast<size_t>(j)] = tw.idx[static_cast<size_t>(tw.start[static_cast<size_t>(j)])];
  for (int64_t j = 0; j < oh_n; ++j)
    row[static_cast<size_t>(j)] = th.idx[static_cast<size_t>(th.start[static_cast<size_t>(j)])];
  bool twice = ow_n % 2 == 0;  // every input column twice in a row: a x2 upsampling
  for (int64_t j = 0; j < ow_n && twice; ++j) twice = col[static_cast<size_t>(j)] == j / 2;
  for_outer(pool, outer, oh_n * ow_n, [&](int64_t o) {
    const E* s = src + o * ih_n * iw_n;
    E* d = dst + o * oh_n * ow_n;
    for (int64_t oy = 0; oy < oh_n; ++oy) {
      E* out = d + oy * ow_n;
      const int64_t sy = row[static_cast<size_t>(oy)];
      if (oy > 0 && sy == row[static_cast<size_t>(oy - 1)]) {
        std::memcpy(out, out - ow_n, sizeof(E) * static_cast<size_t>(ow_n));
        continue;
      }
      const E* in = s + sy * iw_n;
      if (twice) {
        for (int64_t j = 0; j < ow_n / 2; ++j) out[2 * j] = out[2 * j + 1] = in[j];
      } else {
        for (int64_t j = 0; j < ow_n; ++j) out[j] = in[col[static_cast<size_t>(j)]];
      }
    }
  });
}

class ResizeKernel final : public Kernel {
 public:
  explicit ResizeKernel(ResizeAttrs a) : Kernel(KernelFlags{.exact = true}), a_(std::move(a)) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0)) ctx.fail(ErrorKind::InvalidModel, "expects an input X");
    const DType t = ctx.input(0).dtype;
    if (a_.mode != ResizeMode::Nearest && t != DType::F32)
      ctx.fail(ErrorKind::Unsupported, "element type " + type_str(t) + " is not supported by linear and cubic modes");
    if (!visit_numeric(t, [](auto) {}))
      ctx.fail(ErrorKind::Unsupported, "element type " + type_str(t) + " is not supported");
    for (size_t i = 1; i < ctx.inputs.size(); ++i)
      if (ctx.has_input(i) && (i != a_.roi_input() || a_.coord == CoordMode::TfCropAndResize) && !ctx.input(i).value) {
        ctx.require_runtime_values();
        return;
      }
    const ResizePlan p = resize_plan(ctx.info, a_, ctx.input(0).shape, [&](size_t i) -> const Tensor* {
      return ctx.has_input(i) ? ctx.input(i).value : nullptr;
    });
    ctx.set_output(0, t, shape_of(p.out));
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const ResizePlan p = resize_plan(
        ctx.info, a_, x.shape(), [&](size_t i) -> const Tensor* { return ctx.has_input(i) ? &ctx.input(i) : nullptr; });
    Tensor& y = ctx.output(0);
    if (y.shape() != shape_of(p.out) || y.dtype() != x.dtype())
      ctx.fail(ErrorKind::InvalidInput, "input does not match the planned output " + y.shape().to_string());
    if (y.numel() == 0) return;
    const int r = x.rank();
    std::vector<int64_t> cur = x.shape().to_vector();
    // Which axes to resample, shrinking ones first.
    std::vector<int> order;
    for (int pass = 0; pass < 2; ++pass)
      for (int d = 0; d < r; ++d) {
        const auto u = static_cast<size_t>(d);
        const bool identity = p.out[u] == cur[u] && p.scale[u] == 1.0f && a_.coord != CoordMode::TfCropAndResize;
        if (identity) continue;
        if ((pass == 0) == (p.out[u] < cur[u])) order.push_back(d);
      }
    std::vector<AxisTable> tables(static_cast<size_t>(r));
    for (int d : order) tables[static_cast<size_t>(d)] = axis_table(a_, p, d, cur[static_cast<size_t>(d)]);
    const size_t esz = dtype_size(x.dtype());
    const bool last_two = !order.empty() && std::all_of(order.begin(), order.end(), [&](int d) { return d >= r - 2; });
    if (a_.mode == ResizeMode::Nearest && a_.coord != CoordMode::TfCropAndResize && r >= 2 && last_two && esz == 4) {
      const auto uh = static_cast<size_t>(r - 2), uw = static_cast<size_t>(r - 1);
      for (size_t u : {uh, uw})
        if (tables[u].start.empty()) tables[u] = axis_table(a_, p, static_cast<int>(u), cur[u]);  // identity axis
      int64_t outer = 1;
      for (int e = 0; e < r - 2; ++e) outer *= cur[static_cast<size_t>(e)];
      nearest_2d(static_cast<const uint32_t*>(x.raw()), static_cast<uint32_t*>(y.raw_mut()), outer, cur[uh], cur[uw],
                 tables[uh], tables[uw], ctx.pool);
      return;
    }
    // Ping-pong between two workspaces of the run's arena (kept across runs: a fresh 33 MB buffer per call was
    // faulted in page by page; not zero-filled: every pass writes all it reads next); the last pass writes the
    // output.
    Tensor buf[2];
    const std::byte* src = static_cast<const std::byte*>(x.raw());
    for (size_t k = 0; k < order.size(); ++k) {
      const int d = order[k];
      const auto u = static_cast<size_t>(d);
      int64_t outer = 1, inner = 1;
      for (int e = 0; e < d; ++e) outer *= cur[static_cast<size_t>(e)];
      for (int e = d + 1; e < r; ++e) inner *= cur[static_cast<size_t>(e)];
      const int64_t n = cur[u], m = p.out[u];
      std::byte* dst;
      if (k + 1 == order.size()) {
        dst = static_cast<std::byte*>(y.raw_mut());
      } else {
        buf[k % 2] = ctx.workspace(DType::U8, Shape{outer * m * inner * static_cast<int64_t>(esz)});
        dst = static_cast<std::byte*>(buf[k % 2].raw_mut());
      }
      if (a_.mode == ResizeMode::Nearest)
        pass_copy(src, dst, esz, outer, n, inner, tables[u], ctx.pool);
      else
        pass_float(reinterpret_cast<const float*>(src), reinterpret_cast<float*>(dst), outer, n, inner, tables[u],
                   k + 1 == order.size() && a_.coord != CoordMode::TfCropAndResize, ctx.pool);
      cur[u] = m;
      src = dst;
    }
    if (order.empty()) std::memcpy(y.raw_mut(), x.raw(), y.nbytes());
    if (a_.coord == CoordMode::TfCropAndResize) extrapolate(y, tables, order);
    // Interpolated NaNs are canonical (the last pass stored them so, except after an identity or extrapolation);
    // nearest copies elements and moves every value unchanged.
    if (a_.mode != ResizeMode::Nearest && (order.empty() || a_.coord == CoordMode::TfCropAndResize))
      for (float& v : y.mutable_data<float>()) v = kern::canon(v);
  }

 private:
  // tf_crop_and_resize: positions whose coordinate is outside the input on any axis get the value.
  void extrapolate(Tensor& y, const std::vector<AxisTable>& tables, const std::vector<int>& order) const {
    const Shape& s = y.shape();
    std::vector<std::vector<int64_t>> maps(static_cast<size_t>(s.rank()));
    bool any = false;
    for (int d = 0; d < s.rank(); ++d) {
      auto& m = maps[static_cast<size_t>(d)];
      m.assign(static_cast<size_t>(s[d]), 0);
      if (std::find(order.begin(), order.end(), d) == order.end()) continue;
      const AxisTable& t = tables[static_cast<size_t>(d)];
      for (int64_t j = 0; j < s[d]; ++j)
        if (t.outside[static_cast<size_t>(j)]) {
          m[static_cast<size_t>(j)] = 1;
          any = true;
        }
    }
    if (!any) return;
    const size_t esz = dtype_size(y.dtype());
    std::vector<std::byte> fill(esz);
    cast_fill(y.dtype(), a_.extrapolation, fill.data());
    auto* base = static_cast<std::byte*>(y.raw_mut());
    std::vector<int64_t> idx(static_cast<size_t>(s.rank()), 0);
    for (int64_t e = 0; e < s.numel(); ++e) {
      bool out = false;
      for (int d = 0; d < s.rank() && !out; ++d)
        out = maps[static_cast<size_t>(d)][static_cast<size_t>(idx[static_cast<size_t>(d)])] != 0;
      if (out) std::memcpy(base + static_cast<size_t>(e) * esz, fill.data(), esz);
      for (int d = s.rank() - 1; d >= 0; --d) {
        if (++idx[static_cast<size_t>(d)] < s[d]) break;
        idx[static_cast<size_t>(d)] = 0;
      }
    }
  }

  ResizeAttrs a_;
};

}  // namespace

std::unique_ptr<Kernel> make_resize(const NodeInfo& info) {
  return std::make_unique<ResizeKernel>(read_resize_attrs(info, false));
}
std::unique_ptr<Kernel> make_upsample(const NodeInfo& info) {
  return std::make_unique<ResizeKernel>(read_resize_attrs(info, true));
}

}  // namespace onemodel::rt
