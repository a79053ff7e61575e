// Convolution kernels (kernels/conv.h) on every target this machine runs, against naive references written
// here from the spec's definitions: exact mode must give the reference's bits (exact-mode.md "Convolution":
// one accumulator from +0 over c, kd, kh, kw, padding taps are products with +0, canonical NaN), fast mode must
// lie within Higham's bound k*u*sum|w*x| of a double-precision sum (kernels-gemm.md "Accuracy"), and both must
// give the same bits at 1, 2 and 7 threads.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "kernels/bias.h"
#include "kernels/conv.h"
#include "kernels/gemm.h"
#include "kernels/isa.h"

namespace onemodel::kern {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }
float canon(float f) { return std::isnan(f) ? std::bit_cast<float>(0x7FC00000u) : f; }

// The bits two runs of one target must share. Fast mode in WebAssembly keeps a NaN only as a NaN: V8's
// baseline and optimising code give different NaN signs and payloads for the same instructions, and a worker
// thread may run the other one (docs/exact-mode.md "6. Checking it").
uint32_t run_bits(bool exact, float f) {
#if defined(__wasm__)
  if (!exact) return bits(canon(f));
#endif
  return bits(f);
}

std::string describe(const ConvGeometry& g) {
  std::string s = "N" + std::to_string(g.batch) + " C" + std::to_string(g.in_channels) + "->" +
                  std::to_string(g.out_channels) + " G" + std::to_string(g.groups);
  for (int a = 0; a < 3; ++a)
    s += " [in " + std::to_string(g.in[a]) + " out " + std::to_string(g.out[a]) + " k " + std::to_string(g.kernel[a]) +
         " s " + std::to_string(g.stride[a]) + " d " + std::to_string(g.dilation[a]) + " p " +
         std::to_string(g.pad_before[a]) + "]";
  return s;
}

// Conv output size per axis with pads (before, after).
int64_t conv_out(int64_t n, int64_t k, int64_t s, int64_t d, int64_t b, int64_t a) {
  return (n + b + a - (d * (k - 1) + 1)) / s + 1;
}

// Naive exact-mode convolution and, for fast mode, the double sum and the sum of |products|.
struct Reference {
  std::vector<float> exact;
  std::vector<double> sum, abs_sum;
};

Reference reference_conv(const ConvGeometry& g, const std::vector<float>& x, const std::vector<float>& w) {
  const int64_t cg = g.in_channels / g.groups, mg = g.out_channels / g.groups;
  Reference r;
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t oc = 0; oc < g.out_channels; ++oc)
      for (int64_t od = 0; od < g.out[0]; ++od)
        for (int64_t oh = 0; oh < g.out[1]; ++oh)
          for (int64_t ow = 0; ow < g.out[2]; ++ow) {
            float acc = 0.0f;
            double sum = 0, abs_sum = 0;
            for (int64_t c = 0; c < cg; ++c)
              for (int64_t kd = 0; kd < g.kernel[0]; ++kd)
                for (int64_t kh = 0; kh < g.kernel[1]; ++kh)
                  for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
                    const int64_t id = od * g.stride[0] - g.pad_before[0] + kd * g.dilation[0];
                    const int64_t ih = oh * g.stride[1] - g.pad_before[1] + kh * g.dilation[1];
                    const int64_t iw = ow * g.stride[2] - g.pad_before[2] + kw * g.dilation[2];
                    float v = 0.0f;
                    if (id >= 0 && id < g.in[0] && ih >= 0 && ih < g.in[1] && iw >= 0 && iw < g.in[2])
                      v = x[size_t(
                          (((n * g.in_channels + (oc / mg) * cg + c) * g.in[0] + id) * g.in[1] + ih) * g.in[2] + iw)];
                    const float wv =
                        w[size_t((((oc * cg + c) * g.kernel[0] + kd) * g.kernel[1] + kh) * g.kernel[2] + kw)];
                    const float prod = wv * v;
                    acc = acc + prod;
                    sum += double(wv) * double(v);
                    abs_sum += std::fabs(double(wv) * double(v));
                  }
            r.exact.push_back(canon(acc));
            r.sum.push_back(sum);
            r.abs_sum.push_back(abs_sum);
          }
  return r;
}

// Naive ConvTranspose by gathering (ops-conv.md): for every output and tap (kd, kh, kw) in increasing order,
// the input position that tap comes from (if any) contributes the float sum over the group's input channels
// (from +0, increasing channel), added to an accumulator that starts at +0.
Reference reference_conv_transpose(const ConvGeometry& g, const std::vector<float>& x, const std::vector<float>& w) {
  const int64_t cg = g.in_channels / g.groups, mg = g.out_channels / g.groups;
  Reference r;
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t oc = 0; oc < g.out_channels; ++oc)
      for (int64_t od = 0; od < g.out[0]; ++od)
        for (int64_t oh = 0; oh < g.out[1]; ++oh)
          for (int64_t ow = 0; ow < g.out[2]; ++ow) {
            const int64_t o[3] = {od, oh, ow};
            float acc = 0.0f;
            double sum = 0, abs_sum = 0;
            int64_t terms = 0;
            for (int64_t kd = 0; kd < g.kernel[0]; ++kd)
              for (int64_t kh = 0; kh < g.kernel[1]; ++kh)
                for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
                  const int64_t kk[3] = {kd, kh, kw};
                  int64_t i[3];
                  bool hit = true;
                  for (int a = 0; a < 3; ++a) {
                    const int64_t t = o[a] + g.pad_before[a] - kk[a] * g.dilation[a];
                    if (t < 0 || t % g.stride[a] != 0 || t / g.stride[a] >= g.in[a]) hit = false;
                    i[a] = hit ? t / g.stride[a] : 0;
                  }
                  if (!hit) continue;
                  float t = 0.0f;
                  for (int64_t c = 0; c < cg; ++c) {
                    const int64_t ic = (oc / mg) * cg + c;
                    const float xv =
                        x[size_t((((n * g.in_channels + ic) * g.in[0] + i[0]) * g.in[1] + i[1]) * g.in[2] + i[2])];
                    const float wv =
                        w[size_t((((ic * mg + oc % mg) * g.kernel[0] + kd) * g.kernel[1] + kh) * g.kernel[2] + kw)];
                    const float prod = wv * xv;
                    t = t + prod;
                    sum += double(wv) * double(xv);
                    abs_sum += std::fabs(double(wv) * double(xv));
                  }
                  acc = acc + t;
                  ++terms;
                }
            r.exact.push_back(canon(acc));
            r.sum.push_back(sum);
            // Two sequential sums (over channels, then taps): bound the error by their combined length.
            r.abs_sum.push_back(abs_sum * double(terms + 1));
          }
  return r;
}

struct Case {
  ConvGeometry g;
  bool transpose = false;
};

// A Conv case from per-axis (in, kernel, stride, dilation, pad_before, pad_after), rank 1-3.
Case make_conv(int64_t n, int64_t cin, int64_t cout, int64_t groups, std::vector<std::array<int64_t, 6>> axes) {
  Case c;
  c.g.batch = n, c.g.in_channels = cin, c.g.out_channels = cout, c.g.groups = groups;
  const size_t lift = 3 - axes.size();
  for (size_t i = 0; i < axes.size(); ++i) {
    const auto& a = axes[i];
    const size_t ax = lift + i;
    c.g.in[ax] = a[0], c.g.kernel[ax] = a[1], c.g.stride[ax] = a[2], c.g.dilation[ax] = a[3];
    c.g.pad_before[ax] = a[4];
    c.g.out[ax] = conv_out(a[0], a[1], a[2], a[3], a[4], a[5]);
  }
  return c;
}

// A ConvTranspose case: per axis (in, kernel, stride, dilation, pad_before, out).
Case make_transpose(int64_t n, int64_t cin, int64_t cout, int64_t groups, std::vector<std::array<int64_t, 6>> axes) {
  Case c;
  c.transpose = true;
  c.g.batch = n, c.g.in_channels = cin, c.g.out_channels = cout, c.g.groups = groups;
  const size_t lift = 3 - axes.size();
  for (size_t i = 0; i < axes.size(); ++i) {
    const auto& a = axes[i];
    const size_t ax = lift + i;
    c.g.in[ax] = a[0], c.g.kernel[ax] = a[1], c.g.stride[ax] = a[2], c.g.dilation[ax] = a[3];
    c.g.pad_before[ax] = a[4], c.g.out[ax] = a[5];
  }
  return c;
}

std::vector<Case> conv_cases() {
  std::vector<Case> v;
  // Regular and grouped 2-D (im2col + matrix product).
  v.push_back(make_conv(2, 3, 4, 1, {{7, 3, 1, 1, 1, 1}, {9, 3, 1, 1, 1, 1}}));
  v.push_back(make_conv(1, 4, 6, 2, {{9, 2, 2, 2, 0, 2}, {13, 5, 3, 1, 1, 0}}));
  v.push_back(make_conv(1, 6, 3, 3, {{6, 4, 1, 1, 2, 1}, {5, 1, 2, 1, 0, 0}}));
  v.push_back(make_conv(1, 17, 5, 1, {{5, 3, 2, 1, 1, 1}, {5, 3, 2, 1, 1, 1}}));  // k = 153: several 16-row chunks
  // 1x1 (the input is B directly) and 1x1 strided / padded (im2col).
  v.push_back(make_conv(2, 5, 3, 1, {{4, 1, 1, 1, 0, 0}, {6, 1, 1, 1, 0, 0}}));
  v.push_back(make_conv(1, 4, 4, 2, {{5, 1, 1, 1, 0, 0}, {7, 1, 1, 1, 0, 0}}));
  v.push_back(make_conv(1, 3, 2, 1, {{7, 1, 2, 1, 0, 0}, {7, 1, 2, 1, 1, 0}}));
  // The implicit GEMM's three regimes (kernels/gemm.h PanelSource): many column tiles (more than 8 x 128
  // output positions; one with several k-blocks), few column tiles and many rows (B filled once and shared
  // by row blocks), and outputs narrower than half a register tile (run transposed: a 1-D filter bank).
  v.push_back(make_conv(1, 300, 7, 1, {{33, 1, 1, 1, 0, 0}, {31, 1, 1, 1, 0, 0}}));
  v.push_back(make_conv(1, 3, 5, 1, {{70, 3, 2, 1, 1, 1}, {66, 3, 2, 1, 1, 1}}));
  v.push_back(make_conv(1, 8, 64, 1, {{7, 3, 1, 1, 1, 1}, {9, 3, 1, 1, 1, 1}}));
  v.push_back(make_conv(2, 1, 40, 1, {{300, 64, 64, 1, 0, 0}}));
  // One channel per group in one row, every tap inside it: col^T read as a strided view of the input (with
  // groups, dilation, a 2-D shape of one row); and with a trailing pad a tap past the row (panels again).
  v.push_back(make_conv(2, 3, 6, 3, {{100, 16, 14, 1, 0, 0}}));
  v.push_back(make_conv(1, 1, 20, 1, {{120, 16, 14, 2, 0, 0}}));
  v.push_back(make_conv(1, 2, 10, 2, {{1, 1, 1, 1, 0, 0}, {100, 16, 14, 1, 0, 0}}));
  v.push_back(make_conv(1, 1, 20, 1, {{100, 16, 14, 1, 0, 14}}));
  v.push_back(make_conv(1, 6, 30, 2, {{3, 3, 1, 1, 0, 0}, {2, 1, 1, 1, 0, 0}}));
  // Stride 1 with output rows as wide as input rows (im2col rows are one shifted copy of the plane, then +0
  // over padding columns): narrow maps (a panel spans many output rows), one column, padding at least the
  // width or height, dilation, one-sided padding, several k-blocks with m cut (B filled first), 1-D.
  v.push_back(make_conv(1, 5, 7, 1, {{9, 3, 1, 1, 1, 1}, {4, 3, 1, 1, 1, 1}}));
  v.push_back(make_conv(1, 3, 9, 1, {{20, 1, 1, 1, 0, 0}, {1, 3, 1, 1, 1, 1}}));
  v.push_back(make_conv(1, 2, 8, 1, {{5, 7, 1, 1, 3, 3}, {6, 5, 1, 1, 2, 2}}));
  v.push_back(make_conv(2, 3, 8, 1, {{11, 3, 1, 2, 2, 2}, {6, 3, 1, 2, 2, 2}}));
  v.push_back(make_conv(1, 4, 8, 1, {{8, 3, 1, 1, 2, 0}, {5, 3, 1, 1, 0, 2}}));
  v.push_back(make_conv(1, 40, 64, 1, {{20, 3, 1, 1, 1, 1}, {20, 3, 1, 1, 1, 1}}));
  v.push_back(make_conv(1, 24, 24, 1, {{14, 3, 1, 1, 0, 0}, {4, 1, 1, 1, 0, 0}}));
  v.push_back(make_conv(2, 3, 6, 1, {{40, 5, 1, 1, 2, 2}}));
  // The same products read in place from zero-padded planes (at most 96 output channels per group): grouped,
  // padding past what any output needs, and more output channels than that (panels again).
  v.push_back(make_conv(2, 6, 8, 2, {{9, 3, 1, 1, 1, 1}, {7, 3, 1, 1, 1, 1}}));
  v.push_back(make_conv(1, 3, 5, 1, {{6, 3, 1, 1, 1, 3}, {5, 3, 1, 1, 0, 4}}));
  v.push_back(make_conv(1, 4, 100, 1, {{6, 3, 1, 1, 1, 1}, {7, 3, 1, 1, 1, 1}}));
  // An A too large to stay in L2 per column tile (200 x 300 packed): m is cut instead of narrowing the tiles.
  v.push_back(make_conv(1, 300, 200, 1, {{5, 1, 1, 1, 0, 0}, {5, 1, 1, 1, 0, 0}}));
  // Strided panels (rows of every other input column): even and odd sizes, a 7x7 stem, 1x1, strides (2, 1) and
  // (1, 2), dilation 2, asymmetric padding, grouped, and rows of A cut into blocks (B filled once and shared).
  v.push_back(make_conv(1, 5, 9, 1, {{30, 3, 2, 1, 1, 1}, {34, 3, 2, 1, 1, 1}}));
  v.push_back(make_conv(2, 3, 6, 1, {{29, 3, 2, 1, 1, 1}, {33, 3, 2, 1, 1, 1}}));
  v.push_back(make_conv(1, 3, 8, 1, {{40, 7, 2, 1, 3, 3}, {44, 7, 2, 1, 3, 3}}));
  v.push_back(make_conv(1, 6, 10, 1, {{28, 1, 2, 1, 0, 0}, {36, 1, 2, 1, 0, 0}}));
  // Kernels one tap high or wide at stride 2 build only the phase planes their taps read (1x3, 3x1).
  v.push_back(make_conv(1, 3, 5, 1, {{20, 1, 2, 1, 0, 0}, {21, 3, 2, 1, 1, 1}}));
  v.push_back(make_conv(1, 3, 5, 1, {{21, 3, 2, 1, 1, 0}, {20, 1, 2, 1, 0, 0}}));
  v.push_back(make_conv(1, 4, 7, 1, {{40, 3, 2, 1, 1, 1}, {20, 3, 1, 1, 1, 1}}));
  v.push_back(make_conv(1, 4, 7, 1, {{20, 3, 1, 1, 1, 1}, {40, 3, 2, 1, 1, 1}}));
  v.push_back(make_conv(1, 3, 5, 1, {{30, 3, 2, 2, 2, 2}, {30, 3, 2, 2, 2, 2}}));
  v.push_back(make_conv(1, 3, 5, 1, {{31, 4, 2, 1, 2, 1}, {33, 4, 2, 1, 1, 2}}));
  v.push_back(make_conv(1, 6, 8, 2, {{24, 3, 2, 1, 1, 1}, {26, 3, 2, 1, 1, 1}}));
  v.push_back(make_conv(1, 16, 200, 1, {{30, 3, 2, 1, 1, 1}, {30, 3, 2, 1, 1, 1}}));
  // Strided rows of more than two 16-lane vectors (whole de-interleaved windows, then one overlapping window),
  // and rows whose last tap reads the input row's last element (the rest one value at a time).
  v.push_back(make_conv(1, 3, 4, 1, {{6, 3, 2, 1, 1, 1}, {75, 3, 2, 1, 1, 1}}));
  v.push_back(make_conv(1, 2, 3, 1, {{67, 3, 2, 1, 0, 0}}));
  // Depthwise stride 2 over planes too large to run channel-blocked: the column phases of every plane after a
  // slot's first are de-interleaved from the input rows (whole windows, then one overlapping the last).
  v.push_back(make_conv(1, 4, 4, 4, {{40, 3, 2, 1, 1, 1}, {112, 3, 2, 1, 1, 1}}));
  v.push_back(make_conv(1, 3, 3, 3, {{40, 3, 2, 1, 1, 1}, {107, 3, 2, 1, 0, 1}}));
  // 1-D, 3-D. A 3-D convolution of depth 1 with depth taps and padding reads +0 there (the plane walks that
  // ignore depth must not take it; they did once), and one whose only depth tap falls in the padding.
  v.push_back(make_conv(1, 2, 4, 1, {{1, 3, 1, 1, 1, 1}, {6, 3, 1, 1, 1, 1}, {6, 3, 1, 1, 1, 1}}));
  v.push_back(make_conv(1, 2, 3, 1, {{1, 1, 2, 1, 1, 0}, {8, 3, 1, 1, 1, 1}, {8, 3, 1, 1, 1, 1}}));
  v.push_back(
      make_conv(1, 16, 16, 1, {{1, 1, 2, 1, 1, 0}, {8, 3, 1, 1, 1, 1}, {8, 3, 1, 1, 1, 1}}));  // Winograd's shape
  v.push_back(make_conv(2, 3, 2, 1, {{17, 5, 3, 2, 2, 1}}));
  v.push_back(make_conv(1, 2, 3, 1, {{4, 2, 1, 2, 1, 0}, {5, 3, 2, 1, 0, 1}, {6, 2, 1, 1, 1, 1}}));
  v.push_back(make_conv(1, 2, 2, 1, {{3, 1, 1, 1, 0, 0}, {4, 1, 1, 1, 0, 0}, {2, 1, 1, 1, 0, 0}}));
  // Depthwise, multiplier 1 and 2, wide and narrow planes, strides 1-3, dilations, asymmetric pads.
  v.push_back(make_conv(2, 3, 3, 3, {{12, 3, 1, 1, 1, 1}, {70, 3, 1, 1, 1, 1}}));
  v.push_back(make_conv(1, 2, 4, 2, {{11, 5, 2, 1, 2, 1}, {23, 5, 2, 1, 1, 2}}));
  v.push_back(make_conv(1, 3, 3, 3, {{9, 4, 3, 2, 0, 2}, {40, 3, 3, 2, 2, 0}}));
  v.push_back(make_conv(1, 2, 4, 2, {{8, 3, 1, 1, 0, 0}, {9, 3, 1, 1, 0, 0}}));    // unpadded stride 1: in place
  v.push_back(make_conv(1, 4, 4, 4, {{14, 3, 1, 1, 1, 1}, {14, 3, 1, 1, 1, 1}}));  // narrow: rows four at a time
  v.push_back(make_conv(1, 2, 2, 2, {{7, 5, 2, 1, 2, 2}, {7, 5, 2, 1, 2, 2}}));
  v.push_back(make_conv(1, 2, 2, 2, {{3, 2, 1, 1, 0, 0}, {3, 2, 1, 1, 1, 0}}));
  v.push_back(make_conv(1, 1, 4, 1, {{6, 3, 1, 1, 1, 1}, {19, 3, 1, 1, 1, 1}}));  // one channel, multiplier 4
  v.push_back(make_conv(2, 3, 6, 3, {{33, 3, 2, 1, 1, 1}}));                      // 1-D depthwise
  // Planes of over 2048 outputs: a chunk is one plane, and later chunks on a scratch slot reuse its padding.
  v.push_back(make_conv(1, 5, 5, 5, {{70, 3, 2, 1, 1, 1}, {130, 3, 2, 1, 1, 0}}));
  v.push_back(make_conv(2, 3, 3, 3, {{48, 3, 1, 1, 1, 1}, {50, 3, 1, 1, 2, 1}}));
  // Flat planes on AVX2 / AVX-512 (rows narrower than 8, or a height stride above 1 with rows narrower than two
  // vectors that the four-row walk does not take: one run over the phase planes, row phases for height
  // strides above 1, the columns past the output width computed and dropped): MobileNetV3's 7x7 5x5, 28 -> 14
  // 3x3 stride 2 (now the four-row walk), 14 -> 7 5x5 stride 2; height stride 3 with dilation; multiplier 2;
  // unpadded stride 1 read in place (rows of 7); a run of 2 (one lane at a time); 5x5 stride 2 with rows of
  // 12 (flat on AVX2, the four-row walk on AVX-512).
  v.push_back(make_conv(1, 3, 3, 3, {{7, 5, 1, 1, 2, 2}, {7, 5, 1, 1, 2, 2}}));
  v.push_back(make_conv(2, 2, 2, 2, {{28, 3, 2, 1, 1, 1}, {28, 3, 2, 1, 1, 1}}));
  v.push_back(make_conv(1, 2, 2, 2, {{14, 5, 2, 1, 2, 2}, {14, 5, 2, 1, 2, 2}}));
  v.push_back(make_conv(1, 2, 4, 2, {{20, 3, 3, 2, 1, 2}, {11, 3, 2, 1, 0, 1}}));
  v.push_back(make_conv(1, 3, 3, 3, {{9, 3, 1, 1, 0, 0}, {9, 3, 1, 1, 0, 0}}));
  v.push_back(make_conv(1, 2, 2, 2, {{2, 2, 1, 1, 0, 0}, {3, 3, 1, 1, 1, 0}}));
  v.push_back(make_conv(1, 2, 2, 2, {{30, 5, 2, 1, 2, 2}, {23, 5, 2, 1, 2, 2}}));
  // Narrow outputs run transposed; a 1x1 one reads its input as the product's A, and one output position
  // writes C^T straight into place (squeeze-and-excitation convolutions, batch 2; grouped).
  v.push_back(make_conv(2, 24, 40, 1, {{1, 1, 1, 1, 0, 0}, {1, 1, 1, 1, 0, 0}}));
  v.push_back(make_conv(1, 8, 12, 2, {{2, 1, 1, 1, 0, 0}, {3, 1, 1, 1, 0, 0}}));
  v.push_back(make_conv(1, 6, 9, 3, {{1, 1, 1, 1, 0, 0}, {1, 1, 1, 1, 0, 0}}));
  // Up to four tiles of positions, transposed where the channels fill the tiles better (AVX-512: 48 and 49
  // positions against 96 and 64 channels; 20 positions, batch 2).
  v.push_back(make_conv(1, 16, 96, 1, {{12, 1, 1, 1, 0, 0}, {4, 3, 1, 1, 1, 1}}));
  v.push_back(make_conv(1, 8, 64, 1, {{7, 1, 1, 1, 0, 0}, {7, 1, 1, 1, 0, 0}}));
  v.push_back(make_conv(2, 12, 40, 1, {{10, 3, 1, 1, 0, 0}, {2, 1, 1, 1, 0, 0}}));
  // col^T's packed strips filled from the input (gemm_f32_packed_at): two k-blocks (360 rows), 49 positions in
  // strips of MR with a ragged last one (AVX-512 and AVX2; SSE4's tiles take the positions), batch 2, groups.
  v.push_back(make_conv(2, 40, 64, 1, {{7, 3, 1, 1, 1, 1}, {7, 3, 1, 1, 1, 1}}));
  v.push_back(make_conv(1, 80, 128, 2, {{7, 3, 1, 1, 1, 1}, {7, 3, 1, 1, 1, 1}}));
  // 160 channels as the transposed product's columns with one block of rows: column tiles evened out (96 + 64
  // on AVX-512, gemm-inl.h ComputePanels).
  v.push_back(make_conv(1, 24, 160, 1, {{7, 1, 1, 1, 0, 0}, {7, 1, 1, 1, 0, 0}}));
  // Square 3x3 and 5x5 kernels with height stride 1 or 2 walk four output rows at a time (each input vector
  // serves every row it feeds): a leftover of 1-3 rows, rows of 16+ and of 8-15 outputs, read in place
  // (unpadded), width stride 2 through the column phases, multiplier 2, width dilation 2.
  v.push_back(make_conv(1, 2, 2, 2, {{17, 5, 1, 1, 2, 2}, {40, 5, 1, 1, 2, 2}}));
  v.push_back(make_conv(1, 2, 2, 2, {{15, 5, 1, 1, 0, 0}, {21, 5, 1, 1, 0, 0}}));
  v.push_back(make_conv(1, 2, 4, 2, {{22, 3, 2, 1, 1, 1}, {70, 3, 2, 1, 1, 1}}));
  v.push_back(make_conv(1, 2, 2, 2, {{23, 5, 2, 1, 2, 2}, {75, 5, 2, 1, 2, 2}}));
  v.push_back(make_conv(1, 3, 3, 3, {{10, 3, 1, 1, 1, 1}, {30, 3, 1, 2, 2, 2}}));
  // Strided planes of at most 4096 padded positions and planes of at most 64 outputs go channel-blocked on AVX2
  // and AVX-512 (one block of 8 or 16 channels, channels-last): channels not a multiple of the lanes, a last
  // block of fewer channels, multiplier 2, batch 2, dilation with stride, width stride 3, padding past what any
  // output reads, input columns past the last tap, a tiny plane at stride 1, and 25 taps at stride 1 (blocked on
  // AVX2, the four-row walk on AVX-512). The walks keep planes past the limit (flat: rows narrower than 8 over 303
  // padded rows; four rows at stride 2) and 3x3 at stride 1 (flat: rows of 7).
  v.push_back(make_conv(1, 20, 20, 20, {{14, 5, 2, 1, 2, 2}, {14, 5, 2, 1, 2, 2}}));
  v.push_back(make_conv(2, 5, 10, 5, {{9, 3, 2, 1, 1, 0}, {11, 3, 2, 1, 0, 2}}));
  v.push_back(make_conv(1, 33, 33, 33, {{7, 3, 1, 1, 1, 1}, {7, 3, 1, 1, 1, 1}}));
  v.push_back(make_conv(1, 17, 17, 17, {{13, 3, 2, 2, 2, 2}, {10, 3, 3, 1, 1, 1}}));
  v.push_back(make_conv(1, 9, 9, 9, {{3, 3, 2, 1, 3, 3}, {10, 3, 2, 1, 0, 0}}));
  v.push_back(make_conv(1, 2, 2, 2, {{300, 5, 2, 1, 2, 2}, {12, 5, 2, 1, 2, 2}}));
  v.push_back(make_conv(1, 2, 2, 2, {{40, 3, 2, 1, 1, 1}, {150, 3, 2, 1, 1, 1}}));
  v.push_back(make_conv(1, 2, 2, 2, {{20, 5, 1, 1, 2, 2}, {7, 5, 1, 1, 2, 2}}));
  v.push_back(make_conv(1, 2, 2, 2, {{20, 3, 1, 1, 1, 1}, {7, 3, 1, 1, 1, 1}}));
  // Depthwise through the direct loop: 3-D, more than 64 taps, width stride above 8.
  v.push_back(make_conv(1, 2, 4, 2, {{4, 2, 1, 1, 1, 0}, {5, 3, 2, 1, 1, 1}, {6, 3, 1, 2, 0, 2}}));
  v.push_back(make_conv(1, 2, 2, 2, {{10, 9, 1, 1, 4, 4}, {10, 9, 1, 1, 4, 4}}));
  v.push_back(make_conv(1, 2, 2, 2, {{5, 3, 1, 1, 1, 1}, {30, 3, 9, 1, 1, 1}}));
  // The B-strip-in-L1 order of exact mode and wasm (gemm-inl.h PanelTile): at least 8 A strips (48 rows on
  // AVX2, 96 on AVX-512) and k-blocks of at least 64 rows, B read in place (1x1, ragged last column strip; two
  // k-blocks, the second of 74 rows), filled panels (3x3 with more than 96 output channels), phase planes (stride 2).
  v.push_back(make_conv(1, 72, 100, 1, {{9, 1, 1, 1, 0, 0}, {13, 1, 1, 1, 0, 0}}));
  v.push_back(make_conv(2, 330, 120, 1, {{10, 1, 1, 1, 0, 0}, {10, 1, 1, 1, 0, 0}}));
  v.push_back(make_conv(1, 12, 100, 1, {{11, 3, 1, 1, 1, 1}, {12, 3, 1, 1, 1, 1}}));
  v.push_back(make_conv(1, 8, 98, 1, {{17, 3, 2, 1, 1, 1}, {18, 3, 2, 1, 1, 1}}));
  // Random shapes.
  std::mt19937 rng(12345);
  auto pick = [&](int lo, int hi) { return int64_t(std::uniform_int_distribution<int>(lo, hi)(rng)); };
  for (int i = 0; i < 40; ++i) {
    const int rank = int(pick(1, 3));
    const int64_t groups = pick(1, 3);
    const bool dw = pick(0, 2) == 0;
    const int64_t cin = dw ? groups : groups * pick(1, 3);
    const int64_t cout = groups * pick(1, 2);
    std::vector<std::array<int64_t, 6>> axes;
    for (int a = 0; a < rank; ++a) {
      const int64_t k = pick(1, rank == 3 ? 3 : 5), d = pick(1, 2), s = pick(1, 3);
      const int64_t b = pick(0, 2), e = pick(0, 2);
      const int64_t n = std::max<int64_t>(pick(1, rank == 3 ? 6 : 24), d * (k - 1) + 1 - b - e);
      axes.push_back({n, k, s, d, b, e});
    }
    v.push_back(make_conv(pick(1, 2), cin, cout, groups, axes));
  }
  return v;
}

std::vector<Case> transpose_cases() {
  std::vector<Case> v;
  v.push_back(make_transpose(1, 1, 2, 1, {{3, 3, 1, 1, 0, 5}, {3, 3, 1, 1, 0, 5}}));
  v.push_back(make_transpose(2, 4, 6, 2, {{4, 3, 2, 1, 1, 8}, {5, 2, 3, 2, 0, 15}}));
  v.push_back(make_transpose(1, 3, 2, 1, {{3, 3, 3, 1, 0, 10}, {3, 3, 2, 1, 0, 8}}));  // surplus: zeros at the end
  v.push_back(make_transpose(1, 2, 2, 1, {{6, 4, 1, 1, 0, 9}}));
  v.push_back(make_transpose(1, 2, 3, 1, {{2, 2, 2, 1, 1, 3}, {3, 3, 1, 2, 2, 4}, {3, 2, 2, 1, 0, 6}}));
  v.push_back(make_transpose(1, 2, 2, 1, {{4, 3, 2, 1, -1, 11}, {4, 1, 1, 1, 0, 4}}));  // negative pad_before
  // Taps tiling the output (kernel == stride, no padding: col scattered block by block): grouped with batch 2
  // and a ragged column strip; k over several k-blocks with several column tiles; 3-D with a 1-tap axis.
  v.push_back(make_transpose(2, 4, 6, 2, {{5, 2, 2, 1, 0, 10}, {7, 2, 2, 1, 0, 14}}));
  v.push_back(make_transpose(1, 300, 5, 1, {{9, 2, 2, 1, 0, 18}, {40, 3, 3, 1, 0, 120}}));
  v.push_back(make_transpose(1, 3, 2, 1, {{2, 2, 2, 1, 0, 4}, {3, 3, 3, 1, 0, 9}, {4, 1, 1, 1, 0, 4}}));
  return v;
}

void fill(std::mt19937& rng, std::vector<float>& v, bool specials) {
  std::uniform_real_distribution<float> u(-2.f, 2.f);
  const float sp[] = {kNaN, kInf, -kInf, 0.f, -0.f, 1e-40f, -3e-39f, std::bit_cast<float>(0xFFC12345u)};
  for (size_t i = 0; i < v.size(); ++i) v[i] = (specials && i % 7 == 3) ? sp[(i / 7) % 8] : u(rng);
}

void run_case(Isa isa, bool exact, const Case& c, const std::vector<float>& x, const std::vector<float>& w,
              std::vector<float>& y, ThreadPool* pool, const ConvPackedWeights* packed = nullptr) {
  const ConvGeometry& g = c.g;
  y.assign(size_t(g.batch * g.out_channels * g.out_size()), 12345.f);
  const int threads = pool ? pool->threads() : 1;
  const int64_t need = c.transpose ? conv_transpose_scratch_floats(g) : conv_scratch_floats(g, exact, threads);
  std::vector<float> scratch(size_t(need) + 1, -777.f);
  if (c.transpose)
    conv_transpose_f32(isa, exact, g, x.data(), w.data(), y.data(), scratch.data(), pool);
  else
    conv_f32(isa, exact, g, x.data(), w.data(), y.data(), scratch.data(), pool, packed);
  ASSERT_EQ(scratch.back(), -777.f) << "scratch overrun " << describe(g);
}

void check_cases(const std::vector<Case>& cases) {
  ThreadPool pool2(2), pool7(7);
  std::mt19937 rng(99);
  for (const Case& c : cases) {
    const ConvGeometry& g = c.g;
    const int64_t wsize = c.transpose ? g.in_channels * (g.out_channels / g.groups) * g.taps()
                                      : g.out_channels * (g.in_channels / g.groups) * g.taps();
    for (bool specials : {false, true}) {
      std::vector<float> x(static_cast<size_t>(g.batch * g.in_channels * g.in_size()));
      std::vector<float> w(static_cast<size_t>(wsize));
      fill(rng, x, specials);
      fill(rng, w, specials);
      const Reference ref = c.transpose ? reference_conv_transpose(g, x, w) : reference_conv(g, x, w);
      const int64_t k = c.transpose ? (g.in_channels / g.groups) : (g.in_channels / g.groups) * g.taps();
      for (Isa isa : available_isas()) {
        for (bool exact : {true, false}) {
          std::vector<float> y1, y2, y7, yp;
          run_case(isa, exact, c, x, w, y1, nullptr);
          run_case(isa, exact, c, x, w, y2, &pool2);
          run_case(isa, exact, c, x, w, y7, &pool7);
          // With the weights packed beforehand, as a session's plan has them (for the channel-blocked
          // depthwise path: its taps, transposed once).
          std::shared_ptr<const ConvPackedWeights> packed;
          if (!c.transpose) packed = conv_pack_weights(isa, exact, g, w.data());
          if (packed) run_case(isa, exact, c, x, w, yp, &pool2, packed.get());
          ASSERT_EQ(y1.size(), ref.exact.size());
          const std::string where =
              std::string(isa_name(isa)) + (exact ? " exact " : " fast ") + (specials ? "specials " : "") + describe(g);
          for (size_t i = 0; i < y1.size(); ++i) {
            ASSERT_EQ(run_bits(exact, y1[i]), run_bits(exact, y2[i])) << "2 threads, output " << i << " " << where;
            ASSERT_EQ(run_bits(exact, y1[i]), run_bits(exact, y7[i])) << "7 threads, output " << i << " " << where;
            if (packed) {
              ASSERT_EQ(run_bits(exact, y1[i]), run_bits(exact, yp[i]))
                  << "packed weights, output " << i << " " << where;
            }
            const float want = ref.exact[i];
            if (exact) {
              ASSERT_EQ(bits(y1[i]), bits(want))
                  << "output " << i << " got " << y1[i] << " want " << want << " " << where;
            } else if (std::isnan(want) || std::isinf(want)) {
              // Fast mode: same special class (NaN payloads are whatever the hardware gave).
              ASSERT_EQ(std::isnan(y1[i]), std::isnan(want)) << "output " << i << " " << where;
              if (!std::isnan(want)) {
                ASSERT_EQ(y1[i], want) << "output " << i << " " << where;
              }
            } else {
              const double bound = double(k + g.taps()) * 0x1p-24 * ref.abs_sum[i] + 1e-30;
              ASSERT_LE(std::fabs(double(y1[i]) - ref.sum[i]), bound)
                  << "output " << i << " got " << y1[i] << " want " << ref.sum[i] << " " << where;
            }
          }
        }
      }
    }
  }
}

TEST(KernelConv, ConvEveryTargetAgainstNaive) {
  const auto cases = conv_cases();
  std::set<ConvPath> paths;
  for (const Case& c : cases) paths.insert(conv_path(c.g));
  EXPECT_EQ(paths.size(), 4u) << "the cases must cover every path";
  check_cases(cases);
}

TEST(KernelConv, ConvTransposeEveryTargetAgainstNaive) { check_cases(transpose_cases()); }

// A packing serves output sizes near the bound between the two matrix-product forms in either form
// (kernels-gemm.md section 6, "Narrow outputs"): a new input shape then reuses the packing it has. Given one
// of the other form, conv_f32 must still give the reference's bits in exact mode (and stay within the bound in
// fast mode) and keep to its scratch; far from the bound (few positions, or more than the transposed path's
// room) the other form must not serve. A 1-D convolution of 3 taps over every width up to past that room,
// with 24 and 60 output channels, against a transposed and a normal packing of the same weights.
TEST(KernelConv, PackingOfTheOtherFormServesNearTheBound) {
  std::mt19937 rng(31);
  int reused = 0;
  for (int64_t cout : {24, 60}) {
    auto at = [&](int64_t width) { return make_conv(1, 8, cout, 1, {{width, 3, 1, 1, 1, 1}}); };
    std::vector<float> w(size_t(cout * 8 * 3));
    fill(rng, w, false);
    for (Isa isa : available_isas()) {
      const int64_t nr = gemm_nr(isa);
      for (bool exact : {true, false}) {
        const auto transposed = conv_pack_weights(isa, exact, at(1).g, w.data());  // 1 position: transposed
        const auto normal = conv_pack_weights(isa, exact, at(4 * 32 + 8).g, w.data());
        ASSERT_TRUE(transposed && normal);
        for (int64_t width = 1; width <= 4 * 32 + 8; ++width) {
          const Case c = at(width);
          const std::string where = std::string(isa_name(isa)) + (exact ? " exact " : " fast ") + describe(c.g);
          if (width > 4 * nr) {
            EXPECT_FALSE(conv_packed_matches(*transposed, isa, exact, c.g)) << where;
          }
          if (width * 2 <= nr) {
            EXPECT_FALSE(conv_packed_matches(*normal, isa, exact, c.g)) << where;
          }
          for (const auto* p : {transposed.get(), normal.get()}) {
            if (!conv_packed_matches(*p, isa, exact, c.g) || conv_packed_preferred(*p, isa, exact, c.g)) continue;
            ++reused;
            std::vector<float> x(size_t(8 * width)), y(size_t(cout * width), 12345.f);
            fill(rng, x, true);
            std::vector<float> scratch(size_t(conv_scratch_floats(c.g, exact, 1)) + 1, -777.f);
            conv_f32(isa, exact, c.g, x.data(), w.data(), y.data(), scratch.data(), nullptr, p);
            ASSERT_EQ(scratch.back(), -777.f) << "scratch overrun " << where;
            const Reference ref = reference_conv(c.g, x, w);
            for (size_t i = 0; i < y.size(); ++i) {
              const float want = ref.exact[i];
              if (exact || std::isnan(want) || std::isinf(want)) {
                ASSERT_EQ(bits(canon(y[i])), bits(want)) << "output " << i << " " << where;
              } else {
                ASSERT_LE(std::fabs(double(y[i]) - ref.sum[i]), 27 * 0x1p-24 * ref.abs_sum[i] + 1e-30)
                    << "output " << i << " " << where;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(reused, 0) << "no width took a packing of the other form";
}

// The bias given to conv_transpose_f32 (added per channel inside col2im's chunks) gives the bits of the taps
// followed by add_channel_bias, special values included, at any thread count.
TEST(KernelConv, ConvTransposeBiasIsAddChannelBiasAfterTheTaps) {
  ThreadPool pool2(2);
  std::mt19937 rng(7);
  for (const Case& c : transpose_cases()) {
    const ConvGeometry& g = c.g;
    std::vector<float> x(static_cast<size_t>(g.batch * g.in_channels * g.in_size()));
    std::vector<float> w(static_cast<size_t>(g.in_channels * (g.out_channels / g.groups) * g.taps()));
    std::vector<float> b(static_cast<size_t>(g.out_channels));
    fill(rng, x, true);
    fill(rng, w, false);
    fill(rng, b, true);
    std::vector<float> scratch(static_cast<size_t>(conv_transpose_scratch_floats(g)) + 1);
    const size_t ysize = static_cast<size_t>(g.batch * g.out_channels * g.out_size());
    for (Isa isa : available_isas())
      for (bool exact : {true, false}) {
        std::vector<float> want(ysize);
        conv_transpose_f32(isa, exact, g, x.data(), w.data(), want.data(), scratch.data(), nullptr);
        for (int64_t n = 0; n < g.batch; ++n)
          add_channel_bias(isa, exact, want.data() + n * g.out_channels * g.out_size(), b.data(), g.out_channels,
                           g.out_size());
        for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
          std::vector<float> got(ysize, 12345.f);
          conv_transpose_f32(isa, exact, g, x.data(), w.data(), got.data(), scratch.data(), pool, b.data());
          for (size_t i = 0; i < ysize; ++i)
            ASSERT_EQ(run_bits(exact, got[i]), run_bits(exact, want[i]))
                << "output " << i << " " << isa_name(isa) << (exact ? " exact " : " fast ") << describe(g);
        }
      }
  }
}

// An infinite or NaN weight meeting padding gives NaN (padding taps are real products with +0), on every path.
TEST(KernelConv, PaddingTapsAreProductsWithZero) {
  for (int64_t groups : {1, 2}) {
    Case c = make_conv(1, 2, 2, groups, {{3, 3, 1, 1, 1, 1}, {3, 3, 1, 1, 1, 1}});
    std::vector<float> x(18, 1.0f), w(size_t(2 * (2 / groups) * 9), 0.5f);
    w[0] = kInf;  // tap (0, 0) of output channel 0: padding for every output in row 0 or column 0
    for (Isa isa : available_isas())
      for (bool exact : {true, false}) {
        std::vector<float> y;
        run_case(isa, exact, c, x, w, y, nullptr);
        for (int64_t oy = 0; oy < 3; ++oy)
          for (int64_t ox = 0; ox < 3; ++ox) {
            const float v = y[size_t(oy * 3 + ox)];
            if (oy == 0 || ox == 0) {
              EXPECT_TRUE(std::isnan(v)) << isa_name(isa) << " groups " << groups << " at " << oy << "," << ox;
              if (exact) {
                EXPECT_EQ(bits(v), 0x7FC00000u);
              }
            } else {
              EXPECT_EQ(v, kInf);
            }
          }
      }
  }
}

// -0 inputs and weights: the accumulator starts at +0, so a sum of -0 products is +0.
TEST(KernelConv, NegativeZeroSumsToPositiveZero) {
  for (int64_t groups : {1, 3}) {
    Case c = make_conv(1, 3, 3, groups, {{4, 2, 1, 1, 0, 0}, {20, 2, 1, 1, 0, 0}});
    std::vector<float> x(size_t(3 * 4 * 20), -0.0f), w(size_t(3 * (3 / groups) * 4), 1.0f);
    for (Isa isa : available_isas())
      for (bool exact : {true, false}) {
        std::vector<float> y;
        run_case(isa, exact, c, x, w, y, nullptr);
        for (float v : y) ASSERT_EQ(bits(v), 0u) << isa_name(isa);
      }
  }
}

}  // namespace
}  // namespace onemodel::kern
