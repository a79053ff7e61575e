// Spatial operators: the rules of ops-conv.md / ops-coverage.md that the backend cases do not pin down
// (MaxPool's NaN rule and indices, the ceil_mode size rule, AveragePool's divisor with the ceil overhang,
// Resize's antialias weights and aspect policy, MaxUnpool's re-basing) and the error paths (typed errors
// naming the node, never a crash). Expected values are hand calculations written next to each case.
#include <cmath>
#include <random>
#include <limits>

#include "ops_test_util.h"

namespace onemodel::test {
namespace {

Tensor f32(std::vector<float> v, std::vector<int64_t> s) {
  return Tensor::from_values(std::span<const float>(v), Shape(std::span<const int64_t>(s)));
}
Tensor i64(std::vector<int64_t> v, std::vector<int64_t> s) {
  return Tensor::from_values(std::span<const int64_t>(v), Shape(std::span<const int64_t>(s)));
}

OpCase pool(const std::string& op, Tensor x, std::vector<ir::Attribute> attrs, size_t outs = 1) {
  OpCase c;
  c.op_type = op;
  c.opset = 19;
  c.attrs = std::move(attrs);
  c.inputs = {std::move(x)};
  c.num_outputs = outs;
  return c;
}

// Runs a data-dependent kernel as the session does: no infer, run() allocates the outputs.
std::vector<Tensor> run_dynamic(const OpCase& c) {
  const rt::OpDef* def = rt::find_op("", c.op_type, c.opset);
  EXPECT_NE(def, nullptr);
  const ir::Node node = make_node(c);
  const rt::NodeInfo info(node, false);
  auto k = def->factory(info);
  EXPECT_TRUE(k->flags().outputs_data_dependent);
  std::vector<Tensor> outs(c.num_outputs);
  TestArena arena;
  rt::RunContext ctx{info, c.inputs, outs, false, nullptr, &arena, nullptr};
  k->run(ctx);
  return outs;
}

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

TEST(OpsSpatialTest, MaxPoolIndicesInBothStorageOrders) {
  // 1x1x2x3 input, kernel 1x2 stride 1: windows (0,1) (1,2) per row.
  const Tensor x = f32({1, 5, 2, 7, 3, 9}, {1, 1, 2, 3});
  for (int64_t order : {0, 1}) {
    auto r = run_op(pool("MaxPool", x, {attr_ints("kernel_shape", {1, 2}), attr_i("storage_order", order)}, 2));
    EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{5, 5, 7, 9}));
    // Chosen elements (h, w): (0,1) (0,1) (1,0) (1,2). Row-major: h*3+w; column-major: h + w*2.
    const std::vector<int64_t> want = order == 0 ? std::vector<int64_t>{1, 1, 3, 5} : std::vector<int64_t>{2, 2, 1, 5};
    EXPECT_EQ(values<int64_t>(r.outputs[1]), want) << "storage_order " << order;
    EXPECT_TRUE(r.flags.exact);
  }
}

TEST(OpsSpatialTest, MaxPoolIndicesAreFlatOverTheWholeTensor) {
  // Two channels: the second channel's index starts at the plane size 4.
  auto r = run_op(pool("MaxPool", f32({1, 2, 3, 4, 8, 7, 6, 5}, {1, 2, 2, 2}), {attr_ints("kernel_shape", {2, 2})}, 2));
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{4, 8}));
  EXPECT_EQ(values<int64_t>(r.outputs[1]), (std::vector<int64_t>{3, 4}));
}

TEST(OpsSpatialTest, MaxPoolNanRuleAndEmptyWindows) {
  // 1-D windows of 2, stride 2: [nan, 1] -> 1 (index 1); [nan, nan] -> canonical NaN; [2, 2] -> first wins.
  auto r = run_op(pool("MaxPool", f32({kNaN, 1, kNaN, -kNaN, 2, 2, -kInf, -kInf}, {1, 1, 8}),
                       {attr_ints("kernel_shape", {2}), attr_ints("strides", {2})}, 2));
  auto y = values<float>(r.outputs[0]);
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_EQ(fbits(y[1]), 0x7FC00000u);
  EXPECT_EQ(y[2], 2.0f);
  EXPECT_EQ(y[3], -kInf);
  EXPECT_EQ(values<int64_t>(r.outputs[1]), (std::vector<int64_t>{1, 2, 4, 6}));
  // Pads as large as the kernel: the first window lies wholly in the padding -> lowest value, index -1.
  auto e = run_op(pool("MaxPool", f32({3}, {1, 1, 1}), {attr_ints("kernel_shape", {1}), attr_ints("pads", {1, 0})}, 2));
  EXPECT_EQ(values<float>(e.outputs[0]), (std::vector<float>{std::numeric_limits<float>::lowest(), 3}));
  EXPECT_EQ(values<int64_t>(e.outputs[1]), (std::vector<int64_t>{-1, 0}));
}

// Without the Indices output, float32 pools of one or two spatial axes take a row-at-a-time path; its values
// must be the bits of the one-output-at-a-time path (taken when Indices is asked for), including the first of
// equal zeros in tap order, NaN only when every tap inside is NaN, and windows wholly in the padding.
TEST(OpsSpatialTest, MaxPoolRowPathMatchesTheIndexedPath) {
  const float specials[] = {kNaN, -0.0f, 0.0f, kInf, -kInf, 1e-40f, -1.0f};
  uint32_t seed = 1;
  auto next = [&seed] {
    seed = seed * 1664525u + 1013904223u;
    return seed >> 8;
  };
  struct Geo {
    std::vector<int64_t> in, k, s, d, pads;
    int64_t ceil = 0;
  };
  const Geo geos[] = {
      {{2, 3, 11, 13}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}},    // ResNet's stem pool
      {{1, 2, 9, 17}, {2, 2}, {2, 2}, {1, 1}, {0, 0, 0, 0}, 1},  // ceil_mode overhang
      {{1, 2, 8, 21}, {3, 2}, {1, 3}, {2, 1}, {2, 0, 1, 2}},     // dilation, uneven pads
      {{1, 1, 5, 6}, {2, 5}, {1, 1}, {1, 1}, {1, 4, 0, 4}},      // windows wholly in the padding
      {{1, 1, 3, 40}, {1, 4}, {1, 4}, {1, 1}, {0, 0, 0, 0}},     // no interior run needed
      {{2, 2, 37}, {5}, {2}, {1}, {2, 3}},                       // 1-D
      {{1, 2, 6, 40}, {2, 3}, {1, 1}, {1, 1}, {0, 1, 0, 1}},     // stride 1: vector lanes across outputs
      {{1, 2, 8, 70}, {2, 2}, {2, 2}, {1, 1}, {0, 0, 0, 0}},     // 2x2 stride 2, wide rows
      // Width kernel 2 = stride (the pairs path): rows of 16, 4 and 1 outputs, an unused last column, a
      // 1x2 window, height padding (a row window partly outside), ceil_mode's overhang (the general path).
      {{1, 3, 8, 32}, {2, 2}, {2, 2}, {1, 1}, {0, 0, 0, 0}},
      {{2, 2, 6, 9}, {2, 2}, {2, 2}, {1, 1}, {0, 0, 0, 0}},
      {{1, 2, 5, 16}, {1, 2}, {1, 2}, {1, 1}, {0, 0, 0, 0}},
      {{1, 1, 6, 2}, {2, 2}, {2, 2}, {1, 1}, {0, 0, 0, 0}},
      {{1, 2, 7, 20}, {3, 2}, {2, 2}, {1, 1}, {1, 0, 1, 0}},
      {{1, 2, 7, 19}, {2, 2}, {2, 2}, {1, 1}, {0, 0, 0, 0}, 1},
      // Stride 2 with rows of whole 16-lane vectors: the last tap's reads end at the row's last needed
      // element (the tensor's last element here, so ASan sees any read past it); dilation 2 with an odd and
      // an even number of taps; one tap (its vectors stop an output early).
      {{1, 2, 5, 75}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}},
      {{1, 1, 2, 67}, {1, 3}, {1, 2}, {1, 1}, {0, 0, 0, 0}},
      {{1, 2, 4, 80}, {1, 3}, {1, 2}, {1, 2}, {0, 0, 0, 0}},
      {{1, 1, 3, 70}, {2, 4}, {1, 2}, {1, 2}, {0, 1, 0, 0}},
      {{1, 1, 3, 71}, {1, 1}, {1, 2}, {1, 1}, {0, 0, 0, 0}},
  };
  for (const Geo& g : geos)
    for (int fill = 0; fill < 3; ++fill) {  // specials sparse, dense, all NaN but a few
      int64_t n = 1;
      for (int64_t v : g.in) n *= v;
      std::vector<float> x(static_cast<size_t>(n));
      for (float& v : x) {
        const uint32_t r = next();
        const bool special = fill == 0 ? r % 7 == 0 : fill == 1 ? r % 2 == 0 : r % 9 != 0;
        v = special ? (fill == 2 ? kNaN : specials[r % 7]) : static_cast<float>(static_cast<int>(r % 9) - 4);
      }
      const std::vector<ir::Attribute> attrs{attr_ints("kernel_shape", g.k), attr_ints("strides", g.s),
                                             attr_ints("dilations", g.d), attr_ints("pads", g.pads),
                                             attr_i("ceil_mode", g.ceil)};
      auto indexed = run_op(pool("MaxPool", f32(x, g.in), attrs, 2));
      const auto b = values<float>(indexed.outputs[0]);
      for (kern::Isa isa : kern::available_isas()) {  // the row path's inner loop is a per-target kernel
        auto c = pool("MaxPool", f32(x, g.in), attrs, 1);
        c.isa = isa;
        auto rows = run_op(c);
        const auto a = values<float>(rows.outputs[0]);
        ASSERT_EQ(a.size(), b.size());
        for (size_t i = 0; i < a.size(); ++i)
          ASSERT_EQ(fbits(a[i]), fbits(b[i])) << kern::isa_name(isa) << " fill " << fill << " output " << i;
      }
    }
  // By hand: [-0, +0] -> -0 and [+0, -0] -> +0 (a later equal tap never replaces); [NaN, NaN] -> NaN.
  auto r = run_op(pool("MaxPool", f32({-0.0f, 0.0f, 0.0f, -0.0f, kNaN, kNaN}, {1, 1, 1, 6}),
                       {attr_ints("kernel_shape", {1, 2}), attr_ints("strides", {1, 2})}));
  auto y = values<float>(r.outputs[0]);
  EXPECT_EQ(fbits(y[0]), 0x80000000u);
  EXPECT_EQ(fbits(y[1]), 0x00000000u);
  EXPECT_EQ(fbits(y[2]), 0x7FC00000u);
}

// Global pools advance several planes together; each plane's sum must still be the one chain of additions in
// index order from +0 (checked against that loop on values whose sums depend on the order), and the maximum
// skips NaN. Plane counts around the group of 8, odd plane sizes.
TEST(OpsSpatialTest, GlobalPoolsKeepEachPlanesOrder) {
  for (int64_t planes : {1, 7, 8, 9, 19})
    for (int64_t size : {1, 5, 37}) {
      std::vector<float> x(static_cast<size_t>(planes * size));
      for (size_t i = 0; i < x.size(); ++i)
        x[i] = (i % 5 == 0 ? 1e7f : 1.0f) * static_cast<float>(static_cast<int>((i * 7919) % 13) - 6) +
               0.1f * static_cast<float>(i % 3);
      if (x.size() > 3) x[3] = kNaN;
      const std::vector<int64_t> shape{1, planes, size, 1};
      OpCase avg_case = pool("GlobalAveragePool", f32(x, shape), {});
      avg_case.exact = true;  // the index order is exact mode's rule (fast mode: GlobalAverageFastMode)
      auto avg = values<float>(run_op(avg_case).outputs[0]);
      auto mx = values<float>(run_op(pool("GlobalMaxPool", f32(x, shape), {})).outputs[0]);
      for (int64_t p = 0; p < planes; ++p) {
        float acc = 0.0f, best = std::numeric_limits<float>::lowest();
        for (int64_t i = 0; i < size; ++i) {
          const float v = x[static_cast<size_t>(p * size + i)];
          acc = acc + v;
          if (v > best) best = v;
        }
        const float want = acc / static_cast<float>(size);
        EXPECT_EQ(fbits(avg[static_cast<size_t>(p)]), std::isnan(want) ? 0x7FC00000u : fbits(want))
            << planes << " " << size << " " << p;
        EXPECT_EQ(fbits(mx[static_cast<size_t>(p)]), fbits(best)) << planes << " " << size << " " << p;
      }
    }
}

// Fast mode's GlobalAveragePool sums each plane in vectors (kern::row_means_fast_f32, ops-conv.md): within a few
// roundings of the double sum on every target, a NaN plane canonical NaN, planes of every length around the
// vector widths.
TEST(OpsSpatialTest, GlobalAverageFastMode) {
  std::mt19937 rng(41);
  std::normal_distribution<float> g(0.0f, 2.0f);
  for (int64_t planes : {1, 9, 17})
    for (int64_t size : {1, 3, 16, 31, 49, 196}) {
      std::vector<float> x(static_cast<size_t>(planes * size));
      for (float& v : x) v = g(rng);
      x[static_cast<size_t>(size / 2)] = kNaN;  // plane 0
      for (kern::Isa isa : kern::available_isas()) {
        OpCase c = pool("GlobalAveragePool", f32(x, {1, planes, size, 1}), {});
        c.isa = isa;
        auto avg = values<float>(run_op(c).outputs[0]);
        ASSERT_EQ(fbits(avg[0]), 0x7FC00000u) << kern::isa_name(isa) << " " << size;
        for (int64_t p = 1; p < planes; ++p) {
          double sum = 0, abs_sum = 0;
          for (int64_t i = 0; i < size; ++i) {
            sum += x[static_cast<size_t>(p * size + i)];
            abs_sum += std::fabs(x[static_cast<size_t>(p * size + i)]);
          }
          const double want = sum / static_cast<double>(size);
          EXPECT_NEAR(avg[static_cast<size_t>(p)], want, 4e-7 * (abs_sum / static_cast<double>(size)) + 1e-30)
              << kern::isa_name(isa) << " planes " << planes << " size " << size << " plane " << p;
        }
      }
    }
}

TEST(OpsSpatialTest, MaxPoolIntegerTypes) {
  const int8_t v[] = {-5, -7, 3, -128};
  auto r = run_op(pool("MaxPool", Tensor::from_values(std::span<const int8_t>(v), Shape{1, 1, 4}),
                       {attr_ints("kernel_shape", {2})}));
  EXPECT_EQ(values<int8_t>(r.outputs[0]), (std::vector<int8_t>{-5, 3, 3}));
}

TEST(OpsSpatialTest, CeilModeDropsAWindowStartingInTheEndPadding) {
  // n=2, k=1, s=2, pads (0,1): ceil((2+1-1)/2)+1 = 2, but window 1 starts at 2 >= n + 0 -> 1 output.
  auto r = run_op(pool(
      "MaxPool", f32({4, 6}, {1, 1, 2}),
      {attr_ints("kernel_shape", {1}), attr_ints("strides", {2}), attr_ints("pads", {0, 1}), attr_i("ceil_mode", 1)}));
  EXPECT_EQ(r.outputs[0].shape(), (Shape{1, 1, 1}));
  // n=5, k=2, s=2: floor mode 2 outputs, ceil mode 3 (the last window holds only element 4).
  auto f = run_op(
      pool("MaxPool", f32({1, 2, 3, 4, 5}, {1, 1, 5}), {attr_ints("kernel_shape", {2}), attr_ints("strides", {2})}));
  EXPECT_EQ(values<float>(f.outputs[0]), (std::vector<float>{2, 4}));
  auto c = run_op(pool("MaxPool", f32({1, 2, 3, 4, 5}, {1, 1, 5}),
                       {attr_ints("kernel_shape", {2}), attr_ints("strides", {2}), attr_i("ceil_mode", 1)}));
  EXPECT_EQ(values<float>(c.outputs[0]), (std::vector<float>{2, 4, 5}));
}

TEST(OpsSpatialTest, AveragePoolDivisorCountsDeclaredPaddingButNotTheOverhang) {
  // n=4, k=3, s=2, pads (1,1), ceil: 3 windows at -1..1, 1..3, 3..5; position 4 is declared padding,
  // 5 is ceil overhang. count_include_pad divisors 3, 3, 2; otherwise 2, 3, 1.
  const Tensor x = f32({1, 2, 3, 4}, {1, 1, 4});
  std::vector<ir::Attribute> a = {attr_ints("kernel_shape", {3}), attr_ints("strides", {2}), attr_ints("pads", {1, 1}),
                                  attr_i("ceil_mode", 1)};
  auto plain = run_op(pool("AveragePool", x, a));
  EXPECT_EQ(values<float>(plain.outputs[0]), (std::vector<float>{1.5f, 3.0f, 4.0f}));
  a.push_back(attr_i("count_include_pad", 1));
  auto incl = run_op(pool("AveragePool", x, a));
  EXPECT_EQ(values<float>(incl.outputs[0]), (std::vector<float>{1.0f, 3.0f, 2.0f}));
}

TEST(OpsSpatialTest, AveragePoolDilationsAndEmptyWindow) {
  auto r = run_op(pool("AveragePool", f32({1, 2, 3, 4, 5}, {1, 1, 5}),
                       {attr_ints("kernel_shape", {2}), attr_ints("dilations", {2})}));
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{2, 3, 4}));
  // A window wholly in the padding divides 0 by 0 taps: canonical NaN.
  auto e =
      run_op(pool("AveragePool", f32({3}, {1, 1, 1}), {attr_ints("kernel_shape", {1}), attr_ints("pads", {1, 0})}));
  EXPECT_EQ(fbits(values<float>(e.outputs[0])[0]), 0x7FC00000u);
}

// The float32 row path (a row of outputs at a time, the inner run per target) against the definition written
// here one output at a time: taps inside the input summed in (height, width) order from +0, divided by their
// count or, with count_include_pad, by the taps inside the declared padding (not the ceil_mode overhang).
TEST(OpsSpatialTest, AveragePoolRowPathMatchesTheDefinitionOnEveryTarget) {
  struct Geo {
    std::vector<int64_t> in, k, s, d, pads;
    int64_t ceil = 0;
  };
  const Geo geos[] = {
      {{1, 4, 3, 80}, {3, 2}, {3, 2}, {1, 1}, {0, 0, 0, 0}},     // PP-OCRv4 rec's pool: stride-2 vector run
      {{2, 3, 11, 37}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},    // stride 1 with padded edges
      {{1, 2, 9, 17}, {2, 2}, {2, 2}, {1, 1}, {0, 0, 0, 0}, 1},  // ceil_mode overhang
      {{1, 2, 8, 41}, {3, 2}, {1, 3}, {2, 1}, {2, 0, 1, 2}},     // dilation, uneven pads, stride 3
      {{1, 1, 5, 6}, {2, 5}, {1, 1}, {1, 1}, {1, 4, 0, 4}},      // windows wholly in the padding
      {{2, 2, 37}, {5}, {2}, {1}, {2, 3}},                       // 1-D
      {{1, 2, 4, 70}, {2, 4}, {1, 2}, {1, 2}, {0, 0, 0, 0}},     // width dilation 2 under stride 2
  };
  uint32_t seed = 3;
  for (const Geo& g : geos)
    for (int64_t include_pad : {0, 1}) {
      int64_t n = 1;
      for (int64_t v : g.in) n *= v;
      std::vector<float> x(static_cast<size_t>(n));
      for (float& v : x) {
        seed = seed * 1664525u + 1013904223u;
        v = static_cast<float>(static_cast<int>(seed >> 9) % 2001 - 1000) / 37.0f;
      }
      x[5] = kNaN;
      const std::vector<ir::Attribute> attrs{attr_ints("kernel_shape", g.k), attr_ints("strides", g.s),
                                             attr_ints("dilations", g.d),    attr_ints("pads", g.pads),
                                             attr_i("ceil_mode", g.ceil),    attr_i("count_include_pad", include_pad)};
      // The definition, with the 1-D case as height 1.
      const bool one_d = g.in.size() == 3;
      const int64_t planes = g.in[0] * g.in[1], ih = one_d ? 1 : g.in[2], iw = g.in.back();
      const int64_t kh = one_d ? 1 : g.k[0], kw = g.k.back(), sh = one_d ? 1 : g.s[0], sw = g.s.back();
      const int64_t dh = one_d ? 1 : g.d[0], dw = g.d.back();
      const int64_t pt = one_d ? 0 : g.pads[0], pl = one_d ? g.pads[0] : g.pads[1];
      const int64_t pbot = one_d ? 0 : g.pads[2], pr = one_d ? g.pads[1] : g.pads[3];
      auto out_size = [&](int64_t in, int64_t k, int64_t s, int64_t d, int64_t p) {
        const int64_t span = in + p - (k - 1) * d - 1;
        return (g.ceil ? (span + s - 1) / s : span / s) + 1;
      };
      const int64_t oh = out_size(ih, kh, sh, dh, pt + pbot), ow = out_size(iw, kw, sw, dw, pl + pr);
      std::vector<float> want;
      for (int64_t p = 0; p < planes; ++p)
        for (int64_t y = 0; y < oh; ++y)
          for (int64_t xo = 0; xo < ow; ++xo) {
            float acc = 0.0f;
            int64_t inside = 0, declared = 0;
            for (int64_t a = 0; a < kh; ++a)
              for (int64_t b = 0; b < kw; ++b) {
                const int64_t r = y * sh - pt + a * dh, c = xo * sw - pl + b * dw;
                if (r >= -pt && r < ih + pbot && c >= -pl && c < iw + pr) ++declared;
                if (r < 0 || r >= ih || c < 0 || c >= iw) continue;
                acc = acc + x[static_cast<size_t>((p * ih + r) * iw + c)];
                ++inside;
              }
            want.push_back(acc / static_cast<float>(include_pad ? declared : inside));
          }
      for (kern::Isa isa : kern::available_isas()) {
        auto c = pool("AveragePool", f32(x, g.in), attrs, 1);
        c.isa = isa;
        const auto got = values<float>(run_op(c).outputs[0]);
        ASSERT_EQ(got.size(), want.size());
        for (size_t i = 0; i < got.size(); ++i) {
          const uint32_t w = std::isnan(want[i]) ? 0x7FC00000u : fbits(want[i]);
          ASSERT_EQ(fbits(got[i]), w) << kern::isa_name(isa) << " pad " << include_pad << " output " << i;
        }
      }
    }
}

TEST(OpsSpatialTest, GlobalPools) {
  const Tensor x = f32({1, 2, 3, 6, kNaN, kNaN}, {1, 3, 2});
  auto avg = run_op(pool("GlobalAveragePool", x, {}));
  EXPECT_EQ(avg.outputs[0].shape(), (Shape{1, 3, 1}));
  auto a = values<float>(avg.outputs[0]);
  EXPECT_EQ(a[0], 1.5f);
  EXPECT_EQ(a[1], 4.5f);
  EXPECT_EQ(fbits(a[2]), 0x7FC00000u);
  // A plane of NaN gives the lowest float (NaNs are never greater).
  auto mx = run_op(pool("GlobalMaxPool", x, {}));
  EXPECT_EQ(values<float>(mx.outputs[0]), (std::vector<float>{2, 6, std::numeric_limits<float>::lowest()}));
}

TEST(OpsSpatialTest, PoolingAttributeErrorsAreTypedAndNameTheNode) {
  const Tensor x = f32({1, 2, 3, 4}, {1, 1, 2, 2});
  auto bad = [&](std::vector<ir::Attribute> a, const std::string& frag, ErrorKind kind = ErrorKind::InvalidModel) {
    expect_error([&] { run_op(pool("MaxPool", x, a)); }, kind, frag);
  };
  bad({}, "MaxPool node 'n0': attribute kernel_shape is required");
  bad({attr_ints("kernel_shape", {0, 2})}, "kernel_shape value 0");
  bad({attr_ints("kernel_shape", {int64_t{1} << 40, 1})}, "kernel_shape value");
  bad({attr_ints("kernel_shape", {2, 2}), attr_ints("pads", {0, 0, 1})}, "pads has 3 entries");
  bad({attr_ints("kernel_shape", {2, 2}), attr_ints("pads", {-1, 0, 0, 0})}, "pads value -1");
  bad({attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {0, 1})}, "strides value 0");
  bad({attr_ints("kernel_shape", {3, 3})}, "does not fit");
  bad({attr_ints("kernel_shape", {2})}, "spatial axes");
  bad({attr_ints("kernel_shape", {1, 1, 1, 1})}, "1 to 3 entries", ErrorKind::Unsupported);
  bad({attr_ints("kernel_shape", {2, 2}), attr_s("auto_pad", "SAME_MIDDLE")}, "auto_pad");
  bad({attr_ints("kernel_shape", {2, 2}), attr_i("storage_order", 2)}, "storage_order");
  // Huge pads with a unit kernel: the output would exceed the element limit.
  bad({attr_ints("kernel_shape", {1, 1}), attr_ints("pads", {int64_t{1} << 30, int64_t{1} << 30, 0, 0})}, "2^31-1");
  expect_error(
      [&] {
        run_op(
            pool("AveragePool", f32({1}, {1, 1, 1}), {attr_ints("kernel_shape", {1}), attr_i("count_include_pad", 5)}));
      },
      ErrorKind::InvalidModel, "count_include_pad");
}

TEST(OpsSpatialTest, SameLowerPutsTheOddPadBefore) {
  // n=4, k=2, s=1, SAME_LOWER: out 4, one pad before. Windows (-1,0) (0,1) (1,2) (2,3).
  auto r = run_op(pool("MaxPool", f32({5, 1, 2, 3}, {1, 1, 4}),
                       {attr_ints("kernel_shape", {2}), attr_s("auto_pad", "SAME_LOWER")}));
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{5, 5, 2, 3}));
  auto u = run_op(pool("MaxPool", f32({5, 1, 2, 3}, {1, 1, 4}),
                       {attr_ints("kernel_shape", {2}), attr_s("auto_pad", "SAME_UPPER")}));
  EXPECT_EQ(values<float>(u.outputs[0]), (std::vector<float>{5, 2, 3, 3}));
}

TEST(OpsSpatialTest, LpPoolAndExactness) {
  // p = 2 over windows of 2: sqrt(3^2 + 4^2) = 5, sqrt(4^2 + 0) = 4 (stride 2, end pad 1).
  auto r = run_op(pool("LpPool", f32({3, 4, 4}, {1, 1, 3}),
                       {attr_ints("kernel_shape", {2}), attr_ints("strides", {2}), attr_ints("pads", {0, 1})}));
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{5, 4}));
  EXPECT_FALSE(r.flags.exact);
}

TEST(OpsSpatialTest, MaxUnpoolRebasesIntoOutputShapeAndRejectsBadIndices) {
  OpCase c;
  c.op_type = "MaxUnpool";
  c.opset = 11;
  c.attrs = {attr_ints("kernel_shape", {2}), attr_ints("strides", {2})};
  // Implied length (2-1)*2+2 = 4; index 3 re-based into length 5 stays 3.
  c.inputs = {f32({7, 8}, {1, 1, 2}), i64({0, 3}, {1, 1, 2}), i64({1, 1, 5}, {3})};
  c.constant_inputs = {false, false, true};
  auto r = run_op(c);
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{7, 0, 0, 8, 0}));
  c.inputs[1] = i64({0, 4}, {1, 1, 2});
  expect_error([&] { run_op(c); }, ErrorKind::InvalidInput, "index 4");
  c.inputs[1] = i64({0, -1}, {1, 1, 2});
  expect_error([&] { run_op(c); }, ErrorKind::InvalidInput, "index -1");
  // Output shape smaller than the implied one: index 3 does not fit length 3.
  c.inputs[1] = i64({0, 3}, {1, 1, 2});
  c.inputs[2] = i64({1, 1, 3}, {3});
  expect_error([&] { run_op(c); }, ErrorKind::InvalidInput, "outside output_shape");
}

OpCase bn(std::vector<ir::Attribute> attrs, int64_t opset = 15) {
  OpCase c;
  c.op_type = "BatchNormalization";
  c.opset = opset;
  c.attrs = std::move(attrs);
  // Channel 0: scale 2, bias 1, mean 1, var 3 -> a = 2/sqrt(4) = 1, b = 0; channel 1: scale 1, bias 0,
  // mean 0, var 0.25 -> a = 2, b = 0 (epsilon 0.75 makes the roots exact).
  c.inputs = {f32({1, 2, 3, 4}, {1, 2, 2}), f32({2, 1}, {2}), f32({1, 0}, {2}), f32({1, 0}, {2}),
              f32({3.25f, -0.5f}, {2})};
  return c;
}

TEST(OpsSpatialTest, BatchNormalization) {
  auto r = run_op(bn({attr_f("epsilon", 0.75f)}));
  // a0 = 2/sqrt(4) = 1, b0 = 1 - 1 = 0; a1 = 1/sqrt(0.25) = 2, b1 = 0.
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{1, 2, 6, 8}));
  EXPECT_TRUE(r.flags.exact);
  expect_error([&] { run_op(bn({attr_i("training_mode", 1)})); }, ErrorKind::Unsupported,
               "BatchNormalization node 'n0': training_mode");
  expect_error([&] { run_op(bn({attr_i("spatial", 0)}, 7)); }, ErrorKind::Unsupported, "spatial = 0");
  OpCase c = bn({});
  c.inputs[1] = f32({1, 2, 3}, {3});
  expect_error([&] { run_op(c); }, ErrorKind::InvalidModel, "expected [2]");
}

TEST(OpsSpatialTest, LrnHandValueAndNoExactFlavour) {
  // size 3 over 2 channels: square_sum at both channels = 1 + 4 = 5; y = x / (1 + 3/3 * 5)^1 = x / 6.
  OpCase c = pool("LRN", f32({1, 2}, {1, 2, 1, 1}), {attr_i("size", 3), attr_f("alpha", 3.0f), attr_f("beta", 1.0f)});
  auto r = run_op(c);
  auto y = values<float>(r.outputs[0]);
  EXPECT_FLOAT_EQ(y[0], 1.0f / 6.0f);
  EXPECT_FLOAT_EQ(y[1], 2.0f / 6.0f);
  EXPECT_FALSE(r.flags.exact);
  expect_error([&] { run_op(pool("LRN", f32({1}, {1, 1}), {attr_i("size", 0)})); }, ErrorKind::InvalidModel, "size");
}

OpCase resize(Tensor x, std::vector<float> scales, std::vector<ir::Attribute> attrs, int64_t opset = 19) {
  OpCase c;
  c.op_type = "Resize";
  c.opset = opset;
  c.attrs = std::move(attrs);
  c.inputs = {std::move(x), Tensor(), f32(scales, {static_cast<int64_t>(scales.size())})};
  c.constant_inputs = {false, false, true};
  return c;
}

TEST(OpsSpatialTest, ResizeNearestModesAndLinear) {
  const Tensor x = f32({1, 2, 3, 4}, {4});
  // Scale 0.5, asymmetric: x = 2j -> nearest picks 0, 2 in every mode.
  auto n = run_op(resize(x, {0.5f}, {attr_s("coordinate_transformation_mode", "asymmetric")}));
  EXPECT_EQ(values<float>(n.outputs[0]), (std::vector<float>{1, 3}));
  // Scale 2, half_pixel: x = (j + 0.5)/2 - 0.5 = -0.25, 0.25, 0.75, 1.25, ... ; round_prefer_ceil rounds
  // 0.75 up, floor keeps it.
  auto c = run_op(resize(f32({1, 2}, {2}), {2.0f}, {attr_s("nearest_mode", "ceil")}));
  EXPECT_EQ(values<float>(c.outputs[0]), (std::vector<float>{1, 2, 2, 2}));
  auto f = run_op(resize(f32({1, 2}, {2}), {2.0f}, {attr_s("nearest_mode", "floor")}));
  EXPECT_EQ(values<float>(f.outputs[0]), (std::vector<float>{1, 1, 1, 2}));
  // Linear, half_pixel: clamped -0.25 -> 0 gives 1; 0.25 -> 1.25; 0.75 -> 1.75; 1.25 clamped to 1 -> 2.
  auto l = run_op(resize(f32({1, 2}, {2}), {2.0f}, {attr_s("mode", "linear")}));
  EXPECT_EQ(values<float>(l.outputs[0]), (std::vector<float>{1, 1.25f, 1.75f, 2}));
  // tf_half_pixel_for_nn (opsets 11-12): x = (j + 0.5) / scale, no "- 0.5". Scale 0.5: x = 1, 3 -> {2, 4}
  // (half_pixel's 0.5, 2.5 would give {1, 3}); scale 2: x = 0.25, 0.75, 1.25, 1.75 -> round_prefer_floor
  // 0, 1, 1, 2 (clamped to 1) -> {1, 2, 2, 2} (half_pixel's -0.25, 0.25, 0.75, 1.25 would give {1, 1, 2, 2}).
  const auto tf = attr_s("coordinate_transformation_mode", "tf_half_pixel_for_nn");
  EXPECT_EQ(values<float>(run_op(resize(x, {0.5f}, {tf}, 11)).outputs[0]), (std::vector<float>{2, 4}));
  EXPECT_EQ(values<float>(run_op(resize(f32({1, 2}, {2}), {2.0f}, {tf}, 11)).outputs[0]),
            (std::vector<float>{1, 2, 2, 2}));
  expect_error([&] { run_op(resize(x, {0.5f}, {tf}, 13)); }, ErrorKind::InvalidModel, "tf_half_pixel_for_nn");
}

// Nearest over the last two axes (one pass: a gather per distinct source row, copies of repeated rows) against
// the definition with asymmetric coordinates and floor rounding: output (oy, ox) takes input
// (floor(oy / sh), floor(ox / sw)). x2 (the pairs loop), x3 by 1.5, down by 0.5, one axis only, and an axis
// before them resized too (the per-axis passes).
TEST(OpsSpatialTest, ResizeNearestLastTwoAxesMatchesTheDefinition) {
  const std::vector<ir::Attribute> attrs{attr_s("coordinate_transformation_mode", "asymmetric"),
                                         attr_s("nearest_mode", "floor")};
  struct Case {
    std::vector<float> scales;
  };
  const Case cases[] = {{{1, 1, 2, 2}}, {{1, 1, 3, 1.5f}}, {{1, 1, 0.5f, 0.5f}}, {{1, 1, 1, 2}}, {{1, 2, 2, 1}}};
  const std::vector<int64_t> in = {2, 3, 5, 6};
  std::vector<float> xv(2 * 3 * 5 * 6);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>(i) * 0.5f - 7.0f;
  for (const Case& k : cases) {
    auto r = run_op(resize(f32(xv, in), k.scales, attrs));
    const Shape& os = r.outputs[0].shape();
    std::vector<int64_t> out(4);
    for (int d = 0; d < 4; ++d) {
      out[static_cast<size_t>(d)] = static_cast<int64_t>(
          std::floor(static_cast<float>(in[static_cast<size_t>(d)]) * k.scales[static_cast<size_t>(d)]));
      ASSERT_EQ(os[d], out[static_cast<size_t>(d)]);
    }
    const auto y = values<float>(r.outputs[0]);
    size_t i = 0;
    for (int64_t a = 0; a < out[0]; ++a)
      for (int64_t b = 0; b < out[1]; ++b)
        for (int64_t c = 0; c < out[2]; ++c)
          for (int64_t d = 0; d < out[3]; ++d, ++i) {
            int64_t src[4] = {a, b, c, d};
            for (int e = 0; e < 4; ++e)
              src[e] = std::min<int64_t>(
                  in[static_cast<size_t>(e)] - 1,
                  static_cast<int64_t>(std::floor(static_cast<float>(src[e]) / k.scales[static_cast<size_t>(e)])));
            const float want = xv[static_cast<size_t>(((src[0] * in[1] + src[1]) * in[2] + src[2]) * in[3] + src[3])];
            ASSERT_EQ(y[i], want) << "scales " << k.scales[1] << "," << k.scales[2] << "," << k.scales[3] << " at "
                                  << i;
          }
  }
}

TEST(OpsSpatialTest, ResizeAntialiasLinearWeights) {
  // in 4 -> out 2 (scale 0.5), half_pixel: x = 0.5, 2.5; reach 2; filter weights 0.25 0.75 0.75 0.25 over
  // taps x-1.5 .. x+1.5; tap -1 reads element 0 and tap 4 element 3; divided by their sum 2:
  //   j=0: 0.125*1 + 0.375*1 + 0.375*2 + 0.125*3 = 1.625;  j=1: 0.125*2 + 0.375*3 + 0.375*4 + 0.125*4 = 3.375
  const Tensor x = f32({1, 2, 3, 4}, {4});
  auto r = run_op(resize(x, {0.5f}, {attr_s("mode", "linear"), attr_i("antialias", 1)}));
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{1.625f, 3.375f}));
  // exclude_outside drops the outside taps: j=0 -> (0.75*1 + 0.75*2 + 0.25*3) / 1.75 = 3/1.75.
  auto e = run_op(resize(x, {0.5f}, {attr_s("mode", "linear"), attr_i("antialias", 1), attr_i("exclude_outside", 1)}));
  EXPECT_NEAR(values<float>(e.outputs[0])[0], 3.0 / 1.75, 1e-6);
}

TEST(OpsSpatialTest, ResizeKeepAspectRatioPolicyAndAxes) {
  OpCase c;
  c.op_type = "Resize";
  c.opset = 18;
  c.inputs = {f32(std::vector<float>(8, 1.0f), {2, 4}), Tensor(), Tensor(), i64({4, 4}, {2})};
  c.constant_inputs = {false, false, false, true};
  c.attrs = {attr_s("keep_aspect_ratio_policy", "not_larger")};
  EXPECT_EQ(run_op(c).outputs[0].shape(), (Shape{2, 4}));  // scale min(2, 1) = 1
  c.attrs = {attr_s("keep_aspect_ratio_policy", "not_smaller")};
  EXPECT_EQ(run_op(c).outputs[0].shape(), (Shape{4, 8}));  // scale max(2, 1) = 2
  c.attrs = {attr_ints("axes", {1})};
  c.inputs[3] = i64({6}, {1});
  EXPECT_EQ(run_op(c).outputs[0].shape(), (Shape{2, 6}));
}

TEST(OpsSpatialTest, ResizeTfCropExtrapolatesOutsidePositions) {
  OpCase c;
  c.op_type = "Resize";
  c.opset = 13;
  c.attrs = {attr_s("mode", "linear"), attr_s("coordinate_transformation_mode", "tf_crop_and_resize"),
             attr_f("extrapolation_value", -9.0f)};
  // roi [0.5, 1.5] on 3 elements: x = 0.5*2 + j*1*2/2 = 1, 2, 3 -> 2, 3, outside.
  c.inputs = {f32({1, 2, 3}, {3}), f32({0.5f, 1.5f}, {2}), Tensor(), i64({3}, {1})};
  c.constant_inputs = {false, true, false, true};
  EXPECT_EQ(values<float>(run_op(c).outputs[0]), (std::vector<float>{2, 3, -9}));
}

TEST(OpsSpatialTest, ResizeErrors) {
  const Tensor x = f32({1, 2}, {2});
  expect_error([&] { run_op(resize(x, {-1.0f}, {})); }, ErrorKind::InvalidModel, "Resize node 'n0': scale");
  expect_error([&] { run_op(resize(x, {1.0f, 2.0f}, {})); }, ErrorKind::InvalidModel, "2 entries for 1 axes");
  expect_error([&] { run_op(resize(x, {1e30f}, {})); }, ErrorKind::InvalidModel, "out of range");
  expect_error([&] { run_op(resize(x, {2.0f}, {attr_s("mode", "area")})); }, ErrorKind::InvalidModel, "mode 'area'");
  OpCase both = resize(x, {2.0f}, {});
  both.inputs.push_back(i64({4}, {1}));
  both.constant_inputs.push_back(true);
  expect_error([&] { run_op(both); }, ErrorKind::InvalidModel, "only one of scales and sizes");
  OpCase crop = resize(x, {2.0f}, {attr_s("coordinate_transformation_mode", "tf_crop_and_resize")});
  expect_error([&] { run_op(crop); }, ErrorKind::InvalidModel, "roi");
}

TEST(OpsSpatialTest, UpsampleSevenReadsTheScalesAttribute) {
  OpCase c;
  c.op_type = "Upsample";
  c.opset = 7;
  c.attrs = {attr_floats("scales", {1.0f, 3.0f})};
  c.inputs = {f32({1, 2}, {1, 2})};
  EXPECT_EQ(values<float>(run_op(c).outputs[0]), (std::vector<float>{1, 1, 1, 2, 2, 2}));
}

TEST(OpsSpatialTest, GridSampleAndAffineGrid) {
  // Identity theta over a 2x2 grid without align_corners: base coordinates -0.5, 0.5.
  OpCase a;
  a.op_type = "AffineGrid";
  a.opset = 20;
  a.inputs = {f32({1, 0, 0, 0, 1, 0}, {1, 2, 3}), i64({1, 1, 2, 2}, {4})};
  a.constant_inputs = {false, true};
  auto g = run_op(a);
  EXPECT_EQ(g.outputs[0].shape(), (Shape{1, 2, 2, 2}));
  EXPECT_EQ(values<float>(g.outputs[0]), (std::vector<float>{-0.5f, -0.5f, 0.5f, -0.5f, -0.5f, 0.5f, 0.5f, 0.5f}));
  // Sampling a 2x2 image at those pixel centres returns the image; at (0, 0) the bilinear mean.
  OpCase s;
  s.op_type = "GridSample";
  s.opset = 16;
  s.inputs = {f32({1, 2, 3, 4}, {1, 1, 2, 2}), g.outputs[0]};
  auto r = run_op(s);
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_FALSE(r.flags.exact);
  s.inputs[1] = f32({0, 0}, {1, 1, 1, 2});
  EXPECT_EQ(values<float>(run_op(s).outputs[0]), (std::vector<float>{2.5f}));
  // Far outside with zeros padding reads 0; NaN grid values read 0 instead of crashing.
  s.inputs[1] = f32({1e30f, kNaN}, {1, 1, 1, 2});
  EXPECT_EQ(values<float>(run_op(s).outputs[0]), (std::vector<float>{0}));
  s.inputs[1] = f32({0, 0, 0}, {1, 1, 1, 3});
  expect_error([&] { run_op(s); }, ErrorKind::InvalidModel, "GridSample node 'n0': grid");
}

TEST(OpsSpatialTest, GridSampleTwentyHandlesThreeSpatialAxes) {
  // The centre of a 2x2x2 volume weighs each corner 1/8: (1 + ... + 8) / 8 = 4.5. Opset 16 is 4-D only.
  OpCase s;
  s.op_type = "GridSample";
  s.opset = 20;
  s.inputs = {f32({1, 2, 3, 4, 5, 6, 7, 8}, {1, 1, 2, 2, 2}), f32({0, 0, 0}, {1, 1, 1, 1, 3})};
  EXPECT_EQ(values<float>(run_op(s).outputs[0]), (std::vector<float>{4.5f}));
  // Grid x = +1 with align_corners reaches the last element along W only: corner (0, 0, 1) = 2.
  s.attrs = {attr_i("align_corners", 1), attr_s("mode", "nearest")};
  s.inputs[1] = f32({1, -1, -1}, {1, 1, 1, 1, 3});
  EXPECT_EQ(values<float>(run_op(s).outputs[0]), (std::vector<float>{2}));
  s.opset = 16;
  s.attrs = {};
  expect_error([&] { run_op(s); }, ErrorKind::InvalidModel, "must be 4-D");
}

TEST(OpsSpatialTest, RoiAlignAndNonMaxSuppression) {
  OpCase r;
  r.op_type = "RoiAlign";
  r.opset = 16;
  r.attrs = {attr_i("output_height", 2), attr_i("output_width", 2)};
  // A constant image averages to the constant wherever the samples fall inside.
  r.inputs = {f32(std::vector<float>(16, 3.0f), {1, 1, 4, 4}), f32({0.5f, 0.5f, 3.0f, 3.0f}, {1, 4}), i64({0}, {1})};
  auto y = run_op(r);
  for (float v : values<float>(y.outputs[0])) EXPECT_NEAR(v, 3.0f, 1e-6f);
  EXPECT_FALSE(y.flags.exact);
  r.inputs[2] = i64({1}, {1});
  expect_error([&] { run_op(r); }, ErrorKind::InvalidInput, "batch index 1");

  OpCase n;
  n.op_type = "NonMaxSuppression";
  n.opset = 11;
  // Boxes 0 and 1 overlap with IoU 81/119 > 0.5; box 2 is apart. Scores 0.9, 0.8, 0.7.
  n.inputs = {f32({0, 0, 10, 10, 1, 1, 11, 11, 20, 20, 30, 30}, {1, 3, 4}), f32({0.9f, 0.8f, 0.7f}, {1, 1, 3}),
              i64({10}, {1}), f32({0.5f}, {1})};
  EXPECT_EQ(values<int64_t>(run_dynamic(n)[0]), (std::vector<int64_t>{0, 0, 0, 0, 0, 2}));
  n.inputs[3] = f32({0.9f}, {1});
  EXPECT_EQ(run_dynamic(n)[0].shape(), (Shape{3, 3}));
  // max_output_boxes_per_class 1 keeps only the best box; a score threshold of 0.75 drops box 2.
  n.inputs[2] = i64({1}, {1});
  EXPECT_EQ(values<int64_t>(run_dynamic(n)[0]), (std::vector<int64_t>{0, 0, 0}));
  n.inputs[2] = i64({10}, {1});
  n.inputs.push_back(f32({0.75f}, {1}));
  EXPECT_EQ(values<int64_t>(run_dynamic(n)[0]), (std::vector<int64_t>{0, 0, 0, 0, 0, 1}));
  n.inputs[0] = f32({0, 0, 10, 10}, {1, 1, 4});
  expect_error([&] { run_dynamic(n); }, ErrorKind::InvalidInput, "do not match");
}

TEST(OpsSpatialTest, HostileValuesGiveResultsNotCrashes) {
  const float big = 3e38f;
  // GridSample: huge and NaN grid values under every padding mode and interpolation mode.
  for (const char* pad : {"zeros", "border", "reflection"})
    for (const char* mode : {"bilinear", "nearest", "bicubic"}) {
      OpCase s;
      s.op_type = "GridSample";
      s.opset = 16;
      s.attrs = {attr_s("padding_mode", pad), attr_s("mode", mode)};
      s.inputs = {f32({1, 2, 3, 4}, {1, 1, 2, 2}), f32({big, -big, kNaN, kInf, -kInf, 0.5f}, {1, 1, 3, 2})};
      auto r = run_op(s);
      for (float v : values<float>(r.outputs[0]))
        EXPECT_TRUE(std::isnan(v) || (v >= 0.0f && v <= 4.0f)) << pad << " " << mode << " " << v;
    }
  // Resize: a crop box far outside gives the extrapolation value in every mode.
  for (const char* mode : {"nearest", "linear", "cubic"}) {
    OpCase c;
    c.op_type = "Resize";
    c.opset = 13;
    c.attrs = {attr_s("mode", mode), attr_s("coordinate_transformation_mode", "tf_crop_and_resize"),
               attr_f("extrapolation_value", 7.0f)};
    c.inputs = {f32({1, 2, 3}, {3}), f32({-big, big}, {2}), Tensor(), i64({4}, {1})};
    c.constant_inputs = {false, true, false, true};
    EXPECT_EQ(values<float>(run_op(c).outputs[0]), (std::vector<float>{7, 7, 7, 7})) << mode;
  }
  // RoiAlign: NaN and huge boxes read nothing; NonMaxSuppression: NaN scores rank last.
  OpCase r;
  r.op_type = "RoiAlign";
  r.opset = 16;
  r.attrs = {attr_i("sampling_ratio", 2)};
  r.inputs = {f32({1, 2, 3, 4}, {1, 1, 2, 2}), f32({kNaN, 0, 1, 1, -big, -big, -big, -big}, {2, 4}), i64({0, 0}, {2})};
  EXPECT_EQ(values<float>(run_op(r).outputs[0]), (std::vector<float>{0, 0}));
  OpCase n;
  n.op_type = "NonMaxSuppression";
  n.opset = 11;
  n.inputs = {f32({0, 0, 1, 1, 5, 5, 6, 6, 9, 9, 10, 10}, {1, 3, 4}), f32({kNaN, 0.5f, kNaN}, {1, 1, 3}),
              i64({5}, {1})};
  EXPECT_EQ(values<int64_t>(run_dynamic(n)[0]), (std::vector<int64_t>{0, 0, 1, 0, 0, 0, 0, 0, 2}));
}

}  // namespace
}  // namespace onemodel::test
