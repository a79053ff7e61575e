// Fast-mode Winograd F(4x4, 3x3) and F(2x2, 3x3) (kernels/winograd.h, kernels-gemm.md section 11), through
// conv_f32 on every target: within the section's error bound of a double-precision reference, the same bits at 1, 2 and
// 7 threads, partial edge tiles and several tile blocks, infinities and NaN propagating as the direct sum's do (an
// image with one takes the panels), the epilogue run once per output, and exact mode never taking it.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "kernels/conv.h"
#include "kernels/isa.h"
#include "kernels/winograd.h"
#include "test_util.h"

namespace onemodel::kern {
namespace {

struct Case {
  int64_t batch, c, m, h, w, ph, pw, pad_after_h, pad_after_w;
};

ConvGeometry geometry(const Case& k) {
  ConvGeometry g;
  g.batch = k.batch, g.in_channels = k.c, g.out_channels = k.m;
  g.in = {1, k.h, k.w};
  g.kernel = {1, 3, 3};
  g.pad_before = {0, k.ph, k.pw};
  g.out = {1, k.h + k.ph + k.pad_after_h - 2, k.w + k.pw + k.pad_after_w - 2};
  return g;
}

std::string describe(const Case& k) {
  return "batch " + std::to_string(k.batch) + " " + std::to_string(k.c) + "->" + std::to_string(k.m) + " " +
         std::to_string(k.h) + "x" + std::to_string(k.w) + " pads " + std::to_string(k.ph) + "," +
         std::to_string(k.pw) + "," + std::to_string(k.pad_after_h) + "," + std::to_string(k.pad_after_w);
}

float at(const ConvGeometry& g, const std::vector<float>& x, int64_t n, int64_t c, int64_t ih, int64_t iw) {
  if (ih < 0 || iw < 0 || ih >= g.in[1] || iw >= g.in[2]) return 0.0f;
  return x[static_cast<size_t>(((n * g.in_channels + c) * g.in[1] + ih) * g.in[2] + iw)];
}

// Lavin and Gray's matrices of F(2x2, 3x3) and F(4x4, 3x3) (kernels-gemm.md section 11), as printed there.
struct Matrices {
  int tile, alpha;
  double bt[6][6], g[6][3], at[4][6];
};
const Matrices kF2{2,
                   4,
                   {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}},
                   {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}},
                   {{1, 1, 1, 0}, {0, 1, -1, -1}}};
const Matrices kF4{4,
                   6,
                   {{4, 0, -5, 0, 1, 0},
                    {0, -4, -4, 1, 1, 0},
                    {0, 4, -4, -1, 1, 0},
                    {0, -2, -1, 2, 1, 0},
                    {0, 2, -1, -2, 1, 0},
                    {0, 4, 0, -5, 0, 1}},
                   {{1.0 / 4, 0, 0},
                    {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                    {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                    {1.0 / 24, 1.0 / 12, 1.0 / 6},
                    {1.0 / 24, -1.0 / 12, 1.0 / 6},
                    {0, 0, 1}},
                   {{1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}}};

// The double-precision sum, the exact-mode float sum (for special values) and kernels-gemm.md section 11's
// bound for the tile size the kernel picks: (C + 20) 2^-24 sum_xi |A|(r, s; xi) sum_c (|G| |g_mc| |G|^T)[xi]
// (|B^T| |d_c| |B|)[xi], d_c the output's input tile of channel c.
struct Reference {
  std::vector<double> sum, bound;
  std::vector<float> exact;
};

Reference reference(const ConvGeometry& g, const std::vector<float>& x, const std::vector<float>& w) {
  Reference r;
  const Matrices& mt = winograd_tile(g) == 4 ? kF4 : kF2;
  const int T = mt.tile, A = mt.alpha;
  const int64_t oh = g.out[1], ow = g.out[2], c_n = g.in_channels;
  const int64_t th = (oh + T - 1) / T, tw = (ow + T - 1) / T;
  // |G| |g| |G|^T per (m, c) and |B^T| |d| |B| per (n, c, tile), alpha x alpha each.
  auto abs_sandwich = [A](const double(*left)[6], const double(*lt)[3], const double* mid, int k, int mid_cols,
                          bool weights, double* out) {
    double t[6][6] = {};
    for (int i = 0; i < A; ++i)
      for (int j = 0; j < mid_cols; ++j)
        for (int q = 0; q < k; ++q)
          t[i][j] += (weights ? std::fabs(lt[i][q]) : std::fabs(left[i][q])) * std::fabs(mid[q * mid_cols + j]);
    for (int i = 0; i < A; ++i)
      for (int j = 0; j < A; ++j) {
        double v = 0;
        for (int q = 0; q < mid_cols; ++q) v += t[i][q] * (weights ? std::fabs(lt[j][q]) : std::fabs(left[j][q]));
        out[i * A + j] = v;
      }
  };
  std::vector<double> ubar(static_cast<size_t>(g.out_channels * c_n * A * A));
  for (int64_t m = 0; m < g.out_channels; ++m)
    for (int64_t c = 0; c < c_n; ++c) {
      double k9[9];
      for (int q = 0; q < 9; ++q) k9[q] = w[static_cast<size_t>((m * c_n + c) * 9 + q)];
      abs_sandwich(nullptr, mt.g, k9, 3, 3, true, &ubar[static_cast<size_t>((m * c_n + c) * A * A)]);
    }
  std::vector<double> vbar(static_cast<size_t>(g.batch * c_n * th * tw * A * A));
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t c = 0; c < c_n; ++c)
      for (int64_t ty = 0; ty < th; ++ty)
        for (int64_t tx = 0; tx < tw; ++tx) {
          double d[36];
          for (int i = 0; i < A; ++i)
            for (int j = 0; j < A; ++j)
              d[i * A + j] = at(g, x, n, c, T * ty + i - g.pad_before[1], T * tx + j - g.pad_before[2]);
          abs_sandwich(mt.bt, nullptr, d, A, A, false,
                       &vbar[static_cast<size_t>((((n * c_n + c) * th + ty) * tw + tx) * A * A)]);
        }
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t m = 0; m < g.out_channels; ++m)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xo = 0; xo < ow; ++xo) {
          double s = 0, b = 0;
          float acc = 0.0f;
          const int64_t ty = y / T, tx = xo / T, ry = y % T, rx = xo % T;
          for (int64_t c = 0; c < c_n; ++c) {
            for (int64_t kh = 0; kh < 3; ++kh)
              for (int64_t kw = 0; kw < 3; ++kw) {
                const float wv = w[static_cast<size_t>(((m * c_n + c) * 3 + kh) * 3 + kw)];
                const float xv = at(g, x, n, c, y - g.pad_before[1] + kh, xo - g.pad_before[2] + kw);
                s += double(wv) * double(xv);
                acc = acc + wv * xv;
              }
            const double* ub = &ubar[static_cast<size_t>((m * c_n + c) * A * A)];
            const double* vb = &vbar[static_cast<size_t>((((n * c_n + c) * th + ty) * tw + tx) * A * A)];
            for (int a = 0; a < A; ++a)
              for (int bb = 0; bb < A; ++bb)
                b += std::fabs(mt.at[ry][a]) * std::fabs(mt.at[rx][bb]) * ub[a * A + bb] * vb[a * A + bb];
          }
          r.sum.push_back(s);
          r.exact.push_back(acc);
          r.bound.push_back(double(c_n + 20) * 0x1p-24 * b + 1e-30);
        }
  return r;
}

std::vector<float> random(size_t n, uint32_t seed) { return onemodel::test::uniform_floats(n, seed, 2.f); }

std::vector<float> run(Isa isa, bool exact, const ConvGeometry& g, const std::vector<float>& x,
                       const std::vector<float>& w, ThreadPool* pool, const ConvEpilogue* ep = nullptr) {
  std::vector<float> y(static_cast<size_t>(g.batch * g.out_channels * g.out_size()), 12345.f);
  const int threads = pool ? pool->threads() : 1;
  std::vector<float> scratch(static_cast<size_t>(conv_scratch_floats(g, exact, threads)) + 1, -777.f);
  conv_f32(isa, exact, g, x.data(), w.data(), y.data(), scratch.data(), pool, nullptr, ep);
  EXPECT_EQ(scratch.back(), -777.f) << "scratch overrun";
  return y;
}

const Case kCases[] = {
    {1, 16, 16, 8, 8, 1, 1, 1, 1},     // one block of whole tiles
    {2, 17, 20, 9, 11, 1, 1, 1, 1},    // odd outputs: edge tiles cut
    {1, 16, 24, 12, 10, 0, 0, 0, 0},   // unpadded
    {1, 20, 16, 10, 9, 2, 0, 0, 2},    // one-sided padding
    {1, 16, 16, 100, 16, 1, 1, 1, 1},  // several blocks of tile rows
    {1, 16, 18, 8, 601, 1, 1, 1, 1},   // rows of more tiles than a block
    {1, 64, 32, 19, 23, 1, 1, 1, 1},   // more channels, lanes' tails
    {1, 96, 80, 12, 13, 1, 1, 1, 1},   // few tiles, large weights: F(2x2, 3x3)
    {2, 20, 16, 30, 9, 1, 1, 1, 1},    // rows of fewer tiles than lanes, several per vector
};

TEST(KernelWinograd, AppliesOnlyToItsShapes) {
  for (const Case& k : kCases) EXPECT_TRUE(winograd_applies(geometry(k))) << describe(k);
  // Both tile sizes are among the cases: F(4x4) with many tiles or small weights, F(2x2) otherwise.
  EXPECT_EQ(winograd_tile(geometry(kCases[6])), 4);
  EXPECT_EQ(winograd_tile(geometry(kCases[7])), 2);
  EXPECT_EQ(winograd_tile(geometry(Case{1, 256, 256, 14, 14, 1, 1, 1, 1})), 2);
  EXPECT_EQ(winograd_tile(geometry(Case{1, 128, 128, 28, 28, 1, 1, 1, 1})), 4);
  ConvGeometry g = geometry(kCases[0]);
  auto refuses = [&](auto change) {
    ConvGeometry h = g;
    change(h);
    return !winograd_applies(h);
  };
  EXPECT_TRUE(refuses([](ConvGeometry& h) { h.stride = {1, 2, 2}; }));
  EXPECT_TRUE(refuses([](ConvGeometry& h) { h.dilation = {1, 2, 2}; }));
  EXPECT_TRUE(refuses([](ConvGeometry& h) { h.groups = 2; }));
  EXPECT_TRUE(refuses([](ConvGeometry& h) { h.kernel = {1, 5, 5}; }));
  EXPECT_TRUE(refuses([](ConvGeometry& h) { h.in_channels = 15; }));
  EXPECT_TRUE(refuses([](ConvGeometry& h) { h.out_channels = 8; }));
  EXPECT_TRUE(refuses([](ConvGeometry& h) { h.out = {1, 7, 8}; }));
}

TEST(KernelWinograd, WithinTheBoundAndTheSameBitsAtAnyThreadCount) {
  ThreadPool pool2(2), pool7(7);
  for (const Case& k : kCases) {
    const ConvGeometry g = geometry(k);
    const auto x = random(static_cast<size_t>(g.batch * g.in_channels * g.in_size()), 3);
    const auto w = random(static_cast<size_t>(g.out_channels * g.in_channels * 9), 4);
    const Reference ref = reference(g, x, w);
    for (Isa isa : available_isas()) {
      const std::string where = std::string(isa_name(isa)) + " " + describe(k);
      const auto y1 = run(isa, false, g, x, w, nullptr);
      const auto y2 = run(isa, false, g, x, w, &pool2);
      const auto y7 = run(isa, false, g, x, w, &pool7);
      double worst = 0;
      for (size_t i = 0; i < y1.size(); ++i) {
        ASSERT_EQ(std::bit_cast<uint32_t>(y1[i]), std::bit_cast<uint32_t>(y2[i])) << "2 threads " << i << " " << where;
        ASSERT_EQ(std::bit_cast<uint32_t>(y1[i]), std::bit_cast<uint32_t>(y7[i])) << "7 threads " << i << " " << where;
        const double err = std::fabs(double(y1[i]) - ref.sum[i]);
        ASSERT_LE(err, ref.bound[i]) << "output " << i << " got " << y1[i] << " want " << ref.sum[i] << " " << where;
        worst = std::max(worst, err / ref.bound[i]);
      }
      // The bound is a worst case; real errors sit far inside it (and a transform that dropped a term would
      // miss by the term, far outside it).
      EXPECT_LT(worst, 0.05) << where;
      // Exact mode is the panels' order whatever the shape: its bits are the sequential float sum.
      const auto ye = run(isa, true, g, x, w, nullptr);
      for (size_t i = 0; i < ye.size(); ++i)
        ASSERT_EQ(std::bit_cast<uint32_t>(ye[i]), std::bit_cast<uint32_t>(ref.exact[i] + 0.0f))
            << "exact " << i << " " << where;
    }
  }
}

TEST(KernelWinograd, SpecialValuesPropagateAsTheDirectSumDoes) {
  const Case k{2, 16, 16, 10, 10, 1, 1, 1, 1};
  const ConvGeometry g = geometry(k);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  auto x = random(static_cast<size_t>(g.batch * g.in_channels * g.in_size()), 5);
  const auto w = random(static_cast<size_t>(g.out_channels * g.in_channels * 9), 6);
  // Image 1 only: an infinity (which the transforms would turn into inf - inf = NaN) and a NaN.
  const int64_t img = g.in_channels * g.in_size();
  x[static_cast<size_t>(img + 3 * g.in_size() + 4 * 10 + 5)] = inf;
  x[static_cast<size_t>(img + 7 * g.in_size() + 8 * 10 + 1)] = nan;
  const Reference ref = reference(g, x, w);
  for (Isa isa : available_isas()) {
    const auto y = run(isa, false, g, x, w, nullptr);
    const int64_t per_image = g.out_channels * g.out_size();
    // Image 0 is Winograd's: the same bits as image 0 run alone.
    ConvGeometry one = g;
    one.batch = 1;
    const auto alone = run(isa, false, one, std::vector<float>(x.begin(), x.begin() + img), w, nullptr);
    for (int64_t i = 0; i < per_image; ++i)
      ASSERT_EQ(std::bit_cast<uint32_t>(y[size_t(i)]), std::bit_cast<uint32_t>(alone[size_t(i)])) << isa_name(isa);
    int64_t infinite = 0;
    for (int64_t i = per_image; i < 2 * per_image; ++i) {
      const float want = ref.exact[size_t(i)], got = y[size_t(i)];
      ASSERT_EQ(std::isnan(got), std::isnan(want)) << "output " << i << " " << isa_name(isa);
      if (std::isinf(want)) {
        ASSERT_EQ(got, want) << "output " << i << " " << isa_name(isa);
        ++infinite;
      }
      if (std::isfinite(want) && std::isfinite(ref.bound[size_t(i)])) {  // tiles without the special values
        ASSERT_LE(std::fabs(double(got) - ref.sum[size_t(i)]), ref.bound[size_t(i)]) << "output " << i;
      }
    }
    EXPECT_GT(infinite, 0) << "the case must reach infinite outputs";
  }
  // A NaN weight: no Winograd weights at all; every output as the direct sum's class.
  auto wn = w;
  wn[17] = nan;
  const Reference rn = reference(g, x, wn);
  for (Isa isa : available_isas()) {
    const auto y = run(isa, false, g, x, wn, nullptr);
    for (size_t i = 0; i < y.size(); ++i) ASSERT_EQ(std::isnan(y[i]), std::isnan(rn.exact[i])) << "output " << i;
  }
}

TEST(KernelWinograd, EpilogueRunsOncePerOutput) {
  const Case k{2, 16, 16, 13, 40, 1, 1, 1, 1};
  const ConvGeometry g = geometry(k);
  const auto x = random(static_cast<size_t>(g.batch * g.in_channels * g.in_size()), 7);
  const auto w = random(static_cast<size_t>(g.out_channels * g.in_channels * 9), 8);
  struct Ctx {
    const ConvGeometry* g;
    std::vector<int>* seen;
  };
  std::vector<int> seen(static_cast<size_t>(g.batch * g.out_channels * g.out_size()), 0);
  Ctx ctx{&g, &seen};
  const ConvEpilogue ep{[](const void* c, int64_t n, int64_t oc, int64_t j0, int64_t count, float* y) {
                          const Ctx& e = *static_cast<const Ctx*>(c);
                          const int64_t base = (n * e.g->out_channels + oc) * e.g->out_size();
                          for (int64_t j = 0; j < count; ++j) {
                            ++(*e.seen)[size_t(base + j0 + j)];
                            y[j] = y[j] + 1.0f;
                          }
                        },
                        &ctx};
  ThreadPool pool2(2);
  const auto plain = run(Isa::Scalar, false, g, x, w, &pool2);
  const auto with = run(Isa::Scalar, false, g, x, w, &pool2, &ep);
  for (size_t i = 0; i < seen.size(); ++i) {
    ASSERT_EQ(seen[i], 1) << "output " << i;
    ASSERT_EQ(std::bit_cast<uint32_t>(with[i]), std::bit_cast<uint32_t>(plain[i] + 1.0f)) << "output " << i;
  }
}

}  // namespace
}  // namespace onemodel::kern
