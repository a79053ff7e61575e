// GridSample (opset 16: 2-D, modes bilinear/nearest/bicubic; opset 20: any number of spatial axes, modes
// linear/nearest/cubic) and AffineGrid (opset 20). GridSample follows the sampler the operator text points
// to (torch.nn.functional.grid_sample): grid values in [-1, 1] are mapped to input pixels, the padding mode
// decides what a tap outside the input reads, nearest rounds half to even, cubic uses Keys' a = -0.75 and
// passes every tap position through the padding rule. ops-coverage.md lists GridSample as not exact (its
// weight products have no spec'd order), so exact sessions refuse it; AffineGrid is a fixed-order affine
// map and is exact.
#include <cmath>

#include "ops/index_util.h"
#include "ops/reduce_walk.h"
#include "ops/ops.h"

namespace onemodel::rt {
namespace {

enum class GsMode { Linear, Nearest, Cubic };
enum class GsPad { Zeros, Border, Reflection };

// Reflects x into [lo2/2, hi2/2] (bounds given doubled so half-pixel bounds stay exact).
float reflect(float x, float lo2, float hi2) {
  if (lo2 == hi2) return 0.0f;
  const float mn = lo2 / 2.0f, span = (hi2 - lo2) / 2.0f;
  x = std::fabs(x - mn);
  const float extra = std::fmod(x, span);
  // The parity of the number of flips, kept in float: x / span may exceed every integer type.
  const bool even = std::fmod(std::floor(x / span), 2.0f) == 0.0f;
  return even ? extra + mn : span - extra + mn;
}

class GridSampleKernel final : public Kernel {
 public:
  GridSampleKernel(GsMode mode, GsPad pad, bool align, bool only_2d)
      : Kernel(KernelFlags{.exact = false}), mode_(mode), pad_(pad), align_(align), only_2d_(only_2d) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0) || !ctx.has_input(1)) ctx.fail(ErrorKind::InvalidModel, "expects inputs X and grid");
    if (ctx.input(0).dtype != DType::F32 || ctx.input(1).dtype != DType::F32)
      ctx.fail(ErrorKind::Unsupported, "element types other than float32 are not supported");
    ctx.set_output(0, DType::F32, out_shape(ctx.info, ctx.input(0).shape, ctx.input(1).shape));
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& grid = ctx.input(1);
    const Shape os = out_shape(ctx.info, x.shape(), grid.shape());
    if (ctx.output(0).shape() != os) ctx.fail(ErrorKind::InvalidInput, "inputs do not match the planned output");
    const int k = x.rank() - 2;
    const int64_t n = x.shape()[0], c = x.shape()[1];
    std::vector<int64_t> size(static_cast<size_t>(k));
    int64_t in_plane = 1, out_plane = 1;
    for (int a = 0; a < k; ++a) {
      size[static_cast<size_t>(a)] = x.shape()[a + 2];
      in_plane *= x.shape()[a + 2];
      out_plane *= os[a + 2];
    }
    const float* px = x.data<float>().data();
    const float* pg = grid.data<float>().data();
    float* py = ctx.output(0).mutable_data<float>().data();
    std::vector<std::array<int64_t, 4>> ti(static_cast<size_t>(k));
    std::vector<std::array<float, 4>> tw(static_cast<size_t>(k));
    std::vector<int> cnt(static_cast<size_t>(k)), at(static_cast<size_t>(k));
    for (int64_t b = 0; b < n; ++b)
      for (int64_t o = 0; o < out_plane; ++o) {
        const float* g = pg + (b * out_plane + o) * k;
        for (int a = 0; a < k; ++a) {
          // Grid component 0 addresses the last spatial axis.
          const auto u = static_cast<size_t>(a);
          axis_taps(g[k - 1 - a], size[u], ti[u], tw[u], cnt[u]);
        }
        for (int64_t ch = 0; ch < c; ++ch) {
          const float* plane = px + (b * c + ch) * in_plane;
          float acc = 0.0f;
          bool empty = false;
          for (int a = 0; a < k; ++a) empty = empty || cnt[static_cast<size_t>(a)] == 0;
          std::fill(at.begin(), at.end(), 0);
          while (!empty) {
            float w = 1.0f;
            int64_t off = 0;
            bool inside = true;
            for (int a = 0; a < k; ++a) {
              const auto u = static_cast<size_t>(a);
              const int64_t i = ti[u][static_cast<size_t>(at[u])];
              inside = inside && i >= 0;
              off = off * size[u] + i;
              w *= tw[u][static_cast<size_t>(at[u])];
            }
            if (inside) acc += w * plane[off];
            int a = k - 1;
            for (; a >= 0; --a) {
              const auto u = static_cast<size_t>(a);
              if (++at[u] < cnt[u]) break;
              at[u] = 0;
            }
            if (a < 0) break;
          }
          py[(b * c + ch) * out_plane + o] = acc;
        }
      }
  }

 private:
  // Taps of one axis for grid value g: index (-1 = reads zero) and weight.
  void axis_taps(float g, int64_t size, std::array<int64_t, 4>& idx, std::array<float, 4>& w, int& cnt) const {
    const float fs = static_cast<float>(size);
    float x = align_ ? (g + 1.0f) / 2.0f * (fs - 1.0f) : ((g + 1.0f) * fs - 1.0f) / 2.0f;
    cnt = 0;
    if (!std::isfinite(x) || size == 0) return;  // reads nothing: zero
    // With zeros padding, bounded far outside so integer casts stay defined (such taps all read zero);
    // border and reflection map every finite value into the input themselves.
    if (pad_ == GsPad::Zeros) x = std::clamp(x, -fs - 8.0f, 2.0f * fs + 8.0f);
    auto padded = [&](float v) {
      if (pad_ == GsPad::Border) return std::clamp(v, 0.0f, fs - 1.0f);
      if (pad_ == GsPad::Reflection) {
        v = align_ ? reflect(v, 0.0f, 2.0f * (fs - 1.0f)) : reflect(v, -1.0f, 2.0f * fs - 1.0f);
        return std::clamp(v, 0.0f, fs - 1.0f);
      }
      return v;
    };
    auto push = [&](int64_t i, float wt) {
      idx[static_cast<size_t>(cnt)] = i >= 0 && i < size ? i : -1;
      w[static_cast<size_t>(cnt)] = wt;
      ++cnt;
    };
    if (mode_ == GsMode::Cubic) {
      const float x0 = std::floor(x), t = x - x0;
      const float A = -0.75f, r0 = t + 1.0f, r2 = 1.0f - t, r3 = r2 + 1.0f;
      const float c[4] = {((A * r0 - 5.0f * A) * r0 + 8.0f * A) * r0 - 4.0f * A,
                          ((A + 2.0f) * t - (A + 3.0f)) * t * t + 1.0f, ((A + 2.0f) * r2 - (A + 3.0f)) * r2 * r2 + 1.0f,
                          ((A * r3 - 5.0f * A) * r3 + 8.0f * A) * r3 - 4.0f * A};
      for (int q = 0; q < 4; ++q) {
        const float p = padded(x0 - 1.0f + static_cast<float>(q));
        push(static_cast<int64_t>(p) == p ? static_cast<int64_t>(p) : static_cast<int64_t>(std::floor(p)), c[q]);
      }
      return;
    }
    x = padded(x);
    if (mode_ == GsMode::Nearest) {
      push(static_cast<int64_t>(std::nearbyint(x)), 1.0f);
      return;
    }
    const float x0 = std::floor(x), t = x - x0;
    const auto i0 = static_cast<int64_t>(x0);
    push(i0, 1.0f - t);
    push(i0 + 1, t);
  }

  Shape out_shape(const NodeInfo& info, const Shape& x, const Shape& g) const {
    const int k = x.rank() - 2;
    if (k < 1 || (only_2d_ && k != 2))
      info.fail(ErrorKind::InvalidModel,
                "input of shape " + x.to_string() + (only_2d_ ? " must be 4-D" : " needs a spatial axis"));
    if (g.rank() != k + 2 || g[0] != x[0] || g[k + 1] != k)
      info.fail(ErrorKind::InvalidModel, "grid of shape " + g.to_string() + " does not match input " + x.to_string());
    std::vector<int64_t> d{x[0], x[1]};
    for (int a = 0; a < k; ++a) d.push_back(g[a + 1]);
    if (!Shape::valid(d)) info.fail(ErrorKind::InvalidModel, "output would have more than 2^31-1 elements");
    return shape_of(d);
  }

  GsMode mode_;
  GsPad pad_;
  bool align_, only_2d_;
};

// AffineGrid: output[n, ..., :] = theta[n] * (x, y[, z], 1) over the normalised base grid (x runs along
// the last axis). Each component is sum_j theta[i][j] * base[j] from +0 in j order, then + theta[i][k].
class AffineGridKernel final : public Kernel {
 public:
  explicit AffineGridKernel(bool align) : Kernel(KernelFlags{.exact = true}), align_(align) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0) || !ctx.has_input(1)) ctx.fail(ErrorKind::InvalidModel, "expects inputs theta and size");
    if (ctx.input(0).dtype != DType::F32)
      ctx.fail(ErrorKind::Unsupported, "element type " + type_str(ctx.input(0).dtype) + " is not supported");
    if (!have_values(ctx, {1})) return;
    ctx.set_output(0, DType::F32, out_shape(ctx.info, ctx.input(0).shape, *ctx.input(1).value));
  }

  void run(RunContext& ctx) const override {
    const Tensor& theta = ctx.input(0);
    const Shape os = out_shape(ctx.info, theta.shape(), ctx.input(1));
    if (ctx.output(0).shape() != os) ctx.fail(ErrorKind::InvalidInput, "inputs do not match the planned output");
    const int k = os.rank() - 2;
    const auto uk = static_cast<size_t>(k);
    std::vector<std::vector<float>> base(uk);  // base[a]: coordinates along spatial axis a
    for (size_t a = 0; a < uk; ++a) {
      const int64_t m = os[static_cast<int>(a) + 1];
      const float fm = static_cast<float>(m);
      for (int64_t i = 0; i < m; ++i) {
        const float fi = static_cast<float>(i);
        base[a].push_back(align_ ? (m > 1 ? -1.0f + 2.0f * fi / (fm - 1.0f) : 0.0f) : -1.0f + (2.0f * fi + 1.0f) / fm);
      }
    }
    const float* pt = theta.data<float>().data();
    float* py = ctx.output(0).mutable_data<float>().data();
    int64_t positions = 1;
    for (int a = 0; a < k; ++a) positions *= os[a + 1];
    std::vector<int64_t> idx(uk, 0);
    std::vector<float> v(uk);
    for (int64_t b = 0; b < os[0]; ++b) {
      std::fill(idx.begin(), idx.end(), 0);
      for (int64_t p = 0; p < positions; ++p) {
        // v = (x, y[, z]): x is the last spatial axis.
        for (size_t j = 0; j < uk; ++j) v[j] = base[uk - 1 - j][static_cast<size_t>(idx[uk - 1 - j])];
        const float* t = pt + b * k * (k + 1);
        for (int i = 0; i < k; ++i) {
          float acc = 0.0f;
          for (int j = 0; j < k; ++j) acc = acc + t[i * (k + 1) + j] * v[static_cast<size_t>(j)];
          *py++ = kern::canon(acc + t[i * (k + 1) + k]);
        }
        for (int a = k - 1; a >= 0; --a) {
          if (++idx[static_cast<size_t>(a)] < os[a + 1]) break;
          idx[static_cast<size_t>(a)] = 0;
        }
      }
    }
  }

 private:
  static Shape out_shape(const NodeInfo& info, const Shape& theta, const Tensor& size_t_) {
    const std::vector<int64_t> s = read_int_tensor(info, size_t_, "size");
    if (s.size() != 4 && s.size() != 5) info.fail(ErrorKind::InvalidModel, "size must have 4 or 5 entries");
    const int64_t k = static_cast<int64_t>(s.size()) - 2;
    if (theta.rank() != 3 || theta[0] != s[0] || theta[1] != k || theta[2] != k + 1)
      info.fail(ErrorKind::InvalidModel, "theta of shape " + theta.to_string() + " does not match size");
    std::vector<int64_t> d{s[0]};
    for (size_t a = 2; a < s.size(); ++a) d.push_back(s[a]);
    d.push_back(k);
    if (!Shape::valid(d)) info.fail(ErrorKind::InvalidModel, "size gives an invalid output shape");
    return shape_of(d);
  }
  bool align_;
};

}  // namespace

std::unique_ptr<Kernel> make_grid_sample(const NodeInfo& info) {
  const bool v20 = info.opset() >= 20;
  const std::string m = info.get_string("mode", v20 ? "linear" : "bilinear");
  GsMode mode;
  if (m == (v20 ? "linear" : "bilinear"))
    mode = GsMode::Linear;
  else if (m == "nearest")
    mode = GsMode::Nearest;
  else if (m == (v20 ? "cubic" : "bicubic"))
    mode = GsMode::Cubic;
  else
    info.fail(ErrorKind::InvalidModel, "mode '" + m + "' is not supported");
  const std::string p = info.get_string("padding_mode", "zeros");
  GsPad pad;
  if (p == "zeros")
    pad = GsPad::Zeros;
  else if (p == "border")
    pad = GsPad::Border;
  else if (p == "reflection")
    pad = GsPad::Reflection;
  else
    info.fail(ErrorKind::InvalidModel, "padding_mode '" + p + "' is not supported");
  return std::make_unique<GridSampleKernel>(mode, pad, info.get_int("align_corners", 0) != 0, !v20);
}

std::unique_ptr<Kernel> make_affine_grid(const NodeInfo& info) {
  return std::make_unique<AffineGridKernel>(info.get_int("align_corners", 0) != 0);
}

}  // namespace onemodel::rt
