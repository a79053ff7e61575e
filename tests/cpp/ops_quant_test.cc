// The quantization family beyond the backend cases: round-half-to-even ties, saturation at both ends, NaN and
// infinities, per-axis parameters, 16-bit types, the integer products with per-row / per-column zero points,
// requantization ties, padding with the zero point, and errors. Expected values are worked by hand (the
// DynamicQuantizeLinear scale with numpy, as noted).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/isa.h"
#include "ops_test_util.h"

namespace onemodel::test {
namespace {

template <class T>
Tensor t_of(const std::vector<T>& v, std::vector<int64_t> s) {
  return Tensor::from_values(std::span<const T>(v), Shape(std::span<const int64_t>(s)));
}
Tensor f32(const std::vector<float>& v, std::vector<int64_t> s) { return t_of<float>(v, std::move(s)); }
Tensor u8(const std::vector<uint8_t>& v, std::vector<int64_t> s) { return t_of<uint8_t>(v, std::move(s)); }
Tensor s8(const std::vector<int8_t>& v, std::vector<int64_t> s) { return t_of<int8_t>(v, std::move(s)); }
Tensor scalar_f(float v) { return f32({v}, {}); }

OpResult run(const std::string& op, std::vector<Tensor> in, int64_t opset = 13, std::vector<ir::Attribute> attrs = {},
             size_t outs = 1, bool exact = false) {
  OpCase c;
  c.op_type = op;
  c.opset = opset;
  c.inputs = std::move(in);
  c.attrs = std::move(attrs);
  c.num_outputs = outs;
  c.exact = exact;
  OpResult first = run_op(c);
  // The integer products run on every target this machine offers (the int16 product per target, the byte
  // product of AVX-512 VNNI, the SDOT path): each must give the scalar target's bits.
  if (op == "ConvInteger" || op == "QLinearConv" || op == "MatMulInteger" || op == "QLinearMatMul")
    for (kern::Isa isa : kern::available_isas()) {
      if (isa == c.isa) continue;
      OpCase other = c;
      other.isa = isa;
      const OpResult r = run_op(other);
      for (size_t i = 0; i < first.outputs.size(); ++i) {
        const Tensor &a = first.outputs[i], &b = r.outputs[i];
        EXPECT_TRUE(a.shape() == b.shape() && a.dtype() == b.dtype() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0)
            << op << " output " << i << " on " << kern::isa_name(isa) << " differs from " << kern::isa_name(c.isa);
      }
    }
  return first;
}

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(OpsQuantTest, QuantizeTiesSaturationNaN) {
  for (bool exact : {false, true}) {
    auto r = run("QuantizeLinear",
                 {f32({0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 254.5f, 300.0f, -1.0f, kNaN, kInf, -kInf}, {11}), scalar_f(1.0f),
                  u8({0}, {})},
                 13, {}, 1, exact);
    EXPECT_EQ(values<uint8_t>(r.outputs[0]), (std::vector<uint8_t>{0, 2, 2, 0, 0, 254, 255, 0, 0, 255, 0}));
  }
  // int8 with zero point -3: 2.5 -> 2 - 3, -2.5 -> -2 - 3, then saturation; NaN is the smallest value.
  auto s = run("QuantizeLinear", {f32({2.5f, -2.5f, 200.0f, -200.0f, kNaN}, {5}), scalar_f(1.0f), s8({-3}, {})});
  EXPECT_EQ(values<int8_t>(s.outputs[0]), (std::vector<int8_t>{-1, -5, 127, -128, -128}));
  // The division is float32: 0.3f / 0.1f = 3.00000007... rounds to 3.0f.
  auto d = run("QuantizeLinear", {f32({0.3f}, {1}), scalar_f(0.1f)});
  EXPECT_EQ(values<uint8_t>(d.outputs[0]), (std::vector<uint8_t>{3}));
}

TEST(OpsQuantTest, QuantizePerAxisAnd16Bit) {
  // axis 1, scales [1, 2, 4], zero points [0, 1, 2]: 3/2 = 1.5 -> 2, 10/4 = 2.5 -> 2, 5/2 = 2.5 -> 2, 6/4 = 1.5 -> 2.
  auto r = run("QuantizeLinear", {f32({1, 3, 10, 5, 5, 6}, {2, 3}), f32({1, 2, 4}, {3}), u8({0, 1, 2}, {3})});
  EXPECT_EQ(values<uint8_t>(r.outputs[0]), (std::vector<uint8_t>{1, 3, 4, 5, 3, 4}));
  // axis 0 (negative form -2) over [2, 2]: scales [1, 10].
  auto a0 = run("QuantizeLinear", {f32({7, 8, 70, 85}, {2, 2}), f32({1, 10}, {2}), u8({0, 0}, {2})}, 13,
                {attr_i("axis", -2)});
  EXPECT_EQ(values<uint8_t>(a0.outputs[0]), (std::vector<uint8_t>{7, 8, 7, 8}));  // 8.5 -> 8
  auto u16 = run("QuantizeLinear", {f32({70000, -1, 32767.5f}, {3}), scalar_f(1), t_of<uint16_t>({0}, {})}, 21);
  EXPECT_EQ(values<uint16_t>(u16.outputs[0]), (std::vector<uint16_t>{65535, 0, 32768}));
  auto i16 = run("QuantizeLinear", {f32({-40000, 40000, -0.5f}, {3}), scalar_f(1), t_of<int16_t>({0}, {})}, 21);
  EXPECT_EQ(values<int16_t>(i16.outputs[0]), (std::vector<int16_t>{-32768, 32767, 0}));
  // output_dtype (opset 21) without a zero point: int8 (code 3).
  auto od = run("QuantizeLinear", {f32({-3.5f}, {1}), scalar_f(1)}, 21, {attr_i("output_dtype", 3)});
  EXPECT_EQ(values<int8_t>(od.outputs[0]), (std::vector<int8_t>{-4}));
}

TEST(OpsQuantTest, DequantizeTypesAndAxis) {
  auto r = run("DequantizeLinear", {s8({-128, 127, 0}, {3}), scalar_f(0.5f), s8({-1}, {})});
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{-63.5f, 64.0f, 0.5f}));
  auto ax = run("DequantizeLinear", {u8({10, 10, 10, 10}, {2, 2}), f32({2, 0.25f}, {2}), u8({0, 2}, {2})});
  EXPECT_EQ(values<float>(ax.outputs[0]), (std::vector<float>{20, 2, 20, 2}));
  auto i32v = run("DequantizeLinear", {t_of<int32_t>({-1000000, 3}, {2}), scalar_f(0.5f)});
  EXPECT_EQ(values<float>(i32v.outputs[0]), (std::vector<float>{-500000.0f, 1.5f}));
}

TEST(OpsQuantTest, DynamicQuantize) {
  // numpy (float32): scale = (2.5 - -1) / 255 = 0.01372549 (bits 1012981985), zero point rint(72.857) = 73.
  for (bool exact : {false, true}) {
    auto r = run("DynamicQuantizeLinear", {f32({0, 2, -1, 2.5f}, {4})}, 11, {}, 3, exact);
    EXPECT_EQ(values<uint8_t>(r.outputs[0]), (std::vector<uint8_t>{73, 219, 0, 255}));
    EXPECT_EQ(fbits(values<float>(r.outputs[1])[0]), 1012981985u);
    EXPECT_EQ(values<uint8_t>(r.outputs[2])[0], 73);
  }
  auto z = run("DynamicQuantizeLinear", {f32({0, 0}, {2})}, 11, {}, 3);
  EXPECT_EQ(values<uint8_t>(z.outputs[0]), (std::vector<uint8_t>{0, 0}));
  EXPECT_EQ(values<float>(z.outputs[1])[0], 1.0f);
  EXPECT_EQ(values<uint8_t>(z.outputs[2])[0], 0);
}

TEST(OpsQuantTest, MatMulIntegerZeroPoints) {
  // (A - 1) = [[0,1],[2,3]] times B = [[-1,2],[3,-4]] -> [[3,-4],[7,-8]].
  auto r = run("MatMulInteger", {u8({1, 2, 3, 4}, {2, 2}), s8({-1, 2, 3, -4}, {2, 2}), u8({1}, {})}, 10);
  EXPECT_EQ(values<int32_t>(r.outputs[0]), (std::vector<int32_t>{3, -4, 7, -8}));
  // Per-column b zero points [1, -1]: B - zb = [[-2,3],[2,-3]] -> [[2,-3],[2,-3]].
  auto pc =
      run("MatMulInteger", {u8({1, 2, 3, 4}, {2, 2}), s8({-1, 2, 3, -4}, {2, 2}), u8({1}, {}), s8({1, -1}, {2})}, 10);
  EXPECT_EQ(values<int32_t>(pc.outputs[0]), (std::vector<int32_t>{2, -3, 2, -3}));
  // Per-row a zero points [1, 3] and a batch of B broadcast against A: row 1 becomes (0, 1).
  auto pr =
      run("MatMulInteger", {u8({1, 2, 3, 4}, {2, 2}), s8({1, 0, 0, 1, 2, 0, 0, 2}, {2, 2, 2}), u8({1, 3}, {2})}, 10);
  EXPECT_EQ(pr.outputs[0].shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(values<int32_t>(pr.outputs[0]), (std::vector<int32_t>{0, 1, 0, 1, 0, 2, 0, 2}));
  // Extremes: 255 * 255 * 3 and -128 * 127 * 3 without overflow.
  auto ex = run("MatMulInteger", {u8({255, 255, 255}, {1, 3}), u8({255, 255, 255}, {3, 1})}, 10);
  EXPECT_EQ(values<int32_t>(ex.outputs[0]), (std::vector<int32_t>{195075}));
  auto ex2 = run("MatMulInteger", {s8({-128, -128, -128}, {1, 3}), s8({127, 127, 127}, {3, 1})}, 10);
  EXPECT_EQ(values<int32_t>(ex2.outputs[0]), (std::vector<int32_t>{-48768}));
}

// Random MatMulInteger products (A of type TA, B of type TB, batch of 2 on A against one B, per-row a and
// per-column b zero points, sizes past one register tile) against the int64 sum of the definition; `run`
// also runs every target this machine offers against the scalar one.
template <class TA, class TB>
void check_random_matmul_integer(uint32_t seed) {
  uint32_t st = seed;
  auto next = [&](int64_t lo, int64_t hi) {
    st = st * 1664525u + 1013904223u;
    return lo + static_cast<int64_t>((st >> 8) % static_cast<uint32_t>(hi - lo + 1));
  };
  const int64_t m = next(1, 20), k = next(1, 70), n = next(1, 80);
  std::vector<TA> a(static_cast<size_t>(2 * m * k)), za(static_cast<size_t>(m));
  std::vector<TB> b(static_cast<size_t>(k * n)), zb(static_cast<size_t>(n));
  for (auto* v : {&a, &za})
    for (auto& x : *v) x = static_cast<TA>(next(std::numeric_limits<TA>::min(), std::numeric_limits<TA>::max()));
  for (auto* v : {&b, &zb})
    for (auto& x : *v) x = static_cast<TB>(next(std::numeric_limits<TB>::min(), std::numeric_limits<TB>::max()));
  auto r =
      run("MatMulInteger", {t_of<TA>(a, {2, m, k}), t_of<TB>(b, {k, n}), t_of<TA>(za, {m}), t_of<TB>(zb, {n})}, 10);
  ASSERT_EQ(r.outputs[0].shape(), (Shape{2, m, n}));
  const auto got = values<int32_t>(r.outputs[0]);
  for (int64_t o = 0; o < 2; ++o)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        int64_t sum = 0;
        for (int64_t p = 0; p < k; ++p)
          sum += (int64_t{a[static_cast<size_t>((o * m + i) * k + p)]} - za[static_cast<size_t>(i)]) *
                 (int64_t{b[static_cast<size_t>(p * n + j)]} - zb[static_cast<size_t>(j)]);
        ASSERT_EQ(got[static_cast<size_t>((o * m + i) * n + j)], static_cast<int32_t>(sum))
            << "seed " << seed << " at " << o << "," << i << "," << j;
      }
}

TEST(OpsQuantTest, MatMulIntegerAgainstThePlainLoop) {
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    check_random_matmul_integer<uint8_t, uint8_t>(seed);
    check_random_matmul_integer<uint8_t, int8_t>(seed + 10);
    check_random_matmul_integer<int8_t, uint8_t>(seed + 20);
    check_random_matmul_integer<int8_t, int8_t>(seed + 30);
  }
}

TEST(OpsQuantTest, QLinearMatMulRequantizeTiesAndSaturation) {
  // acc = [5, 7, 255]; y_scale 2: 2.5 -> 2, 3.5 -> 4, 127.5 -> 128, each + zero point 1.
  auto r = run("QLinearMatMul",
               {u8({5, 7, 255}, {3, 1}), scalar_f(1), u8({0}, {}), u8({1}, {1, 1}), scalar_f(1), u8({0}, {}),
                scalar_f(2), u8({1}, {})},
               10);
  EXPECT_EQ(values<uint8_t>(r.outputs[0]), (std::vector<uint8_t>{3, 5, 129}));
  // Saturation: 255 * 255 = 65025 at scale 1 -> 255; the int8 output clamps at -128.
  auto sat = run("QLinearMatMul",
                 {u8({255}, {1, 1}), scalar_f(1), u8({0}, {}), u8({255}, {1, 1}), scalar_f(1), u8({0}, {}), scalar_f(1),
                  u8({0}, {})},
                 10);
  EXPECT_EQ(values<uint8_t>(sat.outputs[0]), (std::vector<uint8_t>{255}));
  auto sat8 = run("QLinearMatMul",
                  {u8({255}, {1, 1}), scalar_f(1), u8({0}, {}), s8({-128}, {1, 1}), scalar_f(1), s8({0}, {}),
                   scalar_f(1), s8({0}, {})},
                  10);
  EXPECT_EQ(values<int8_t>(sat8.outputs[0]), (std::vector<int8_t>{-128}));
  // int8 output, per-column b scales [1, 0.5]: acc = [-6, -6] -> [-6/4, -3/4] = [-1.5, -0.75] -> [-2, -1] + zy 0.
  auto c = run("QLinearMatMul",
               {s8({-3}, {1, 1}), scalar_f(1), s8({0}, {}), s8({2, 2}, {1, 2}), f32({1, 0.5f}, {2}), s8({0, 0}, {2}),
                scalar_f(4), s8({0}, {})},
               10);
  EXPECT_EQ(values<int8_t>(c.outputs[0]), (std::vector<int8_t>{-2, -1}));
}

TEST(OpsQuantTest, ConvIntegerPaddingUsesZeroPoint) {
  // x - 1 = [[0,1,2],[3,4,5],[6,7,8]], 2x2 ones kernel: window sums [[8,12],[20,24]].
  std::vector<uint8_t> x{1, 2, 3, 4, 5, 6, 7, 8, 9};
  auto r = run("ConvInteger", {u8(x, {1, 1, 3, 3}), u8({1, 1, 1, 1}, {1, 1, 2, 2}), u8({1}, {})}, 10);
  EXPECT_EQ(values<int32_t>(r.outputs[0]), (std::vector<int32_t>{8, 12, 20, 24}));
  // pads 1: padded taps contribute 0 (the zero point), so the corners see one element: 0, 2, 6, 8.
  auto p = run("ConvInteger", {u8(x, {1, 1, 3, 3}), u8({1, 1, 1, 1}, {1, 1, 2, 2}), u8({1}, {})}, 10,
               {attr_ints("pads", {1, 1, 1, 1})});
  ASSERT_EQ(p.outputs[0].shape(), (Shape{1, 1, 4, 4}));
  const auto v = values<int32_t>(p.outputs[0]);
  EXPECT_EQ(v[0], 0);
  EXPECT_EQ(v[3], 2);
  EXPECT_EQ(v[12], 6);
  EXPECT_EQ(v[15], 8);
  EXPECT_EQ(v[5], 8);  // the first full window
  // 1-D, int8 weights with a zero point, stride 2: x - 0 = [1..5], w - (-1) = [1, -1] -> [1-2, 3-4] = [-1, -1].
  auto one = run("ConvInteger", {u8({1, 2, 3, 4, 5}, {1, 1, 5}), s8({0, -2}, {1, 1, 2}), Tensor(), s8({-1}, {})}, 10,
                 {attr_ints("strides", {2})});
  EXPECT_EQ(values<int32_t>(one.outputs[0]), (std::vector<int32_t>{-1, -1}));
}

// A convolution wide enough in k (4500 channels, 1x1 and 3x3) that its im2col matrix is built in several
// blocks of output positions, strided and padded, groups of 2, against plain loops written here.
// ConvInteger of a random 3x3 shape against the int64 sum of its definition (taps outside the input skipped).
void check_conv_integer_3x3(int64_t c, int64_t h, int64_t w, int64_t m, int64_t g, int64_t stride, int64_t pad = 1) {
  const int64_t cg = c / g, oh = (h + 2 * pad - 3) / stride + 1, ow = (w + 2 * pad - 3) / stride + 1;
  std::vector<uint8_t> x(static_cast<size_t>(c * h * w));
  std::vector<int8_t> wt(static_cast<size_t>(m * cg * 9));
  uint32_t st = 5;
  auto next = [&] {
    st = st * 1664525u + 1013904223u;
    return st >> 24;
  };
  for (auto& v : x) v = static_cast<uint8_t>(next());
  for (auto& v : wt) v = static_cast<int8_t>(static_cast<int>(next()) - 128);
  const int zx = 131, zw = -3;
  auto r =
      run("ConvInteger", {u8(x, {1, c, h, w}), s8(wt, {m, cg, 3, 3}), u8({static_cast<uint8_t>(zx)}, {}), s8({zw}, {})},
          10, {attr_ints("pads", {pad, pad, pad, pad}), attr_ints("strides", {stride, stride}), attr_i("group", g)});
  ASSERT_EQ(r.outputs[0].shape(), (Shape{1, m, oh, ow}));
  const auto got = values<int32_t>(r.outputs[0]);
  for (int64_t oc = 0; oc < m; ++oc)
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox) {
        int64_t sum = 0;
        const int64_t c0 = (oc / (m / g)) * cg;
        for (int64_t ci = 0; ci < cg; ++ci)
          for (int64_t ky = 0; ky < 3; ++ky)
            for (int64_t kx = 0; kx < 3; ++kx) {
              const int64_t iy = oy * stride - pad + ky, ix = ox * stride - pad + kx;
              if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
              sum += (int64_t{x[static_cast<size_t>(((c0 + ci) * h + iy) * w + ix)]} - zx) *
                     (int64_t{wt[static_cast<size_t>(((oc * cg + ci) * 3 + ky) * 3 + kx)]} - zw);
            }
        ASSERT_EQ(got[static_cast<size_t>((oc * oh + oy) * ow + ox)], static_cast<int32_t>(sum))
            << oc << "," << oy << "," << ox;
      }
}

TEST(OpsQuantTest, ConvIntegerBlocksOfOutputPositions) {
  // 3x3, stride 2, pads 1: out 15 x 12 = 180 positions, more than one block of k = 20250.
  check_conv_integer_3x3(4500, 29, 23, 4, 2, 2);
}

TEST(OpsQuantTest, ConvIntegerStrideOneRowsInsideAndAtTheEdges) {
  // Stride 1 and rows of 45 outputs: strips whose every tap lies inside the input (the vector copy), strips
  // at the left and right edges, and strips that wrap to the next output row.
  check_conv_integer_3x3(6, 7, 45, 3, 1, 1);
  check_conv_integer_3x3(4, 9, 64, 4, 2, 1);
}

TEST(OpsQuantTest, ConvIntegerPaddingFarBeyondTheInput) {
  // Pads of 40 around a 6 x 6 input: a padded copy (ops/int_im2col.h) would be 86 x 86, more than it allows,
  // so the int16 product builds its strips row by row with bounds instead; pads 2 take the padded copy.
  check_conv_integer_3x3(5, 6, 6, 3, 1, 1, 40);
  check_conv_integer_3x3(5, 6, 6, 3, 1, 2, 40);
  check_conv_integer_3x3(5, 6, 6, 3, 1, 1, 2);
}

// One random ConvInteger and QLinearConv node of `sp` spatial axes (x of type TX, w of type TW) against the plain
// definition: acc = sum over (c, kz, ky, kx) of (x - zx) * (w - zw[m]), taps outside the input skipped, then
// QLinearConv's bias and requantization y = clamp(round_half_even(float(acc) * mult[m]) + zy). `wide` makes
// the width up to 40 more, so whole strips of a row (the vector copy) occur as well as strips across rows.
template <class TX, class TW>
void check_random_conv(int sp, uint32_t seed, bool wide) {
  uint32_t st = seed;
  auto next = [&](int64_t lo, int64_t hi) {
    st = st * 1664525u + 1013904223u;
    return lo + static_cast<int64_t>((st >> 8) % static_cast<uint32_t>(hi - lo + 1));
  };
  const int64_t n = next(1, 2), group = next(1, 3), cg = next(1, 3), mg = next(1, 3), c = cg * group, m = mg * group;
  const int64_t mode = next(0, 4);  // 0-2 NOTSET with pads, 3 SAME_UPPER, 4 SAME_LOWER
  std::array<int64_t, 3> in{1, 1, 1}, k{1, 1, 1}, s{1, 1, 1}, d{1, 1, 1}, pb{0, 0, 0}, out{1, 1, 1};
  std::vector<int64_t> pads(static_cast<size_t>(2 * sp)), xs{n, c}, ws{m, cg}, ys{n, m};
  for (int i = 0; i < sp; ++i) {
    const size_t j = static_cast<size_t>(3 - sp + i), u = static_cast<size_t>(i);
    k[j] = next(1, 3);
    d[j] = next(1, 2);
    s[j] = next(1, 3);
    const int64_t e = d[j] * (k[j] - 1) + 1, b = next(0, 2), a = next(0, 2);
    in[j] = next(std::max<int64_t>(1, e - b - a), e + 6 + (wide && j == 2 ? 40 : 0));
    if (wide && j == 2) s[j] = 1;
    if (mode < 3) {
      pads[u] = b;
      pads[u + static_cast<size_t>(sp)] = a;
      pb[j] = b;
      out[j] = (in[j] + b + a - e) / s[j] + 1;
    } else {
      out[j] = (in[j] + s[j] - 1) / s[j];
      const int64_t total = std::max<int64_t>(0, (out[j] - 1) * s[j] + e - in[j]);
      pb[j] = mode == 3 ? total / 2 : total - total / 2;
    }
    xs.push_back(in[j]);
    ws.push_back(k[j]);
    ys.push_back(out[j]);
  }
  std::vector<TX> x(static_cast<size_t>(n * c * in[0] * in[1] * in[2]));
  std::vector<TW> w(static_cast<size_t>(m * cg * k[0] * k[1] * k[2]));
  for (auto& v : x) v = static_cast<TX>(next(std::numeric_limits<TX>::min(), std::numeric_limits<TX>::max()));
  for (auto& v : w) v = static_cast<TW>(next(std::numeric_limits<TW>::min(), std::numeric_limits<TW>::max()));
  const auto zx = static_cast<TX>(next(std::numeric_limits<TX>::min(), std::numeric_limits<TX>::max()));
  std::vector<TW> zw(static_cast<size_t>(m));
  for (auto& v : zw) v = static_cast<TW>(next(-20, 20) + (std::is_signed_v<TW> ? 0 : 100));
  std::vector<int32_t> bias(static_cast<size_t>(m));
  for (auto& v : bias) v = static_cast<int32_t>(next(-5000, 5000));
  std::vector<float> sw(static_cast<size_t>(m));
  for (int64_t o = 0; o < m; ++o) sw[static_cast<size_t>(o)] = 0.01f * static_cast<float>(o + 1);
  std::vector<ir::Attribute> attrs{attr_ints("strides", std::vector<int64_t>(s.end() - sp, s.end())),
                                   attr_ints("dilations", std::vector<int64_t>(d.end() - sp, d.end())),
                                   attr_i("group", group)};
  if (mode < 3) attrs.push_back(attr_ints("pads", pads));
  ir::Attribute ap = attr_i("auto_pad", 0);
  ap.type = ir::AttrType::String;
  ap.s = mode == 3 ? "SAME_UPPER" : mode == 4 ? "SAME_LOWER" : "NOTSET";
  attrs.push_back(ap);
  const std::string what = std::to_string(sp) + "-D seed " + std::to_string(seed);

  // The definition, one output at a time, with weight zero points `z` (one per output channel).
  const int64_t os = out[0] * out[1] * out[2];
  auto reference = [&](const std::vector<TW>& z) {
    std::vector<int64_t> acc(static_cast<size_t>(n * m * os));
    for (int64_t b = 0; b < n; ++b)
      for (int64_t oc = 0; oc < m; ++oc)
        for (int64_t p = 0; p < os; ++p) {
          const int64_t oz = p / (out[1] * out[2]), oy = p / out[2] % out[1], ox = p % out[2], c0 = oc / mg * cg;
          int64_t sum = 0;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t kz = 0; kz < k[0]; ++kz)
              for (int64_t ky = 0; ky < k[1]; ++ky)
                for (int64_t kx = 0; kx < k[2]; ++kx) {
                  const int64_t iz = oz * s[0] - pb[0] + kz * d[0], iy = oy * s[1] - pb[1] + ky * d[1];
                  const int64_t ix = ox * s[2] - pb[2] + kx * d[2];
                  if (iz < 0 || iz >= in[0] || iy < 0 || iy >= in[1] || ix < 0 || ix >= in[2]) continue;
                  const int64_t xv =
                      x[static_cast<size_t>((((b * c + c0 + ci) * in[0] + iz) * in[1] + iy) * in[2] + ix)];
                  const int64_t wv = w[static_cast<size_t>((((oc * cg + ci) * k[0] + kz) * k[1] + ky) * k[2] + kx)];
                  sum += (xv - zx) * (wv - z[static_cast<size_t>(oc)]);
                }
          acc[static_cast<size_t>((b * m + oc) * os + p)] = sum;
        }
    return acc;
  };

  const Tensor tx = t_of<TX>(x, xs), tw = t_of<TW>(w, ws), tzx = t_of<TX>({zx}, {});
  const float sx = 0.05f, sy = 0.5f;
  const auto want_i = reference(std::vector<TW>(static_cast<size_t>(m), zw[0]));
  const auto acc = reference(zw);
  for (kern::Isa isa : kern::available_isas()) {
    const std::string at = what + " " + std::string(kern::isa_name(isa));
    OpCase c;
    c.op_type = "ConvInteger";
    c.opset = 10;
    c.attrs = attrs;
    c.isa = isa;
    // ConvInteger: one weight zero point (the first channel's) for every channel.
    c.inputs = {tx, tw, tzx, t_of<TW>({zw[0]}, {})};
    auto ci = run_op(c);
    ASSERT_EQ(ci.outputs[0].shape(), Shape(std::span<const int64_t>(ys))) << at;
    const auto got = values<int32_t>(ci.outputs[0]);
    for (size_t e = 0; e < got.size(); ++e)
      ASSERT_EQ(got[e], static_cast<int32_t>(want_i[e])) << at << " element " << e;

    // QLinearConv: per-channel weight zero points and scales, an int32 bias, uint8 output with zero point 128.
    c.op_type = "QLinearConv";
    c.inputs = {tx,
                f32({sx}, {}),
                tzx,
                tw,
                f32(sw, {m}),
                t_of<TW>(zw, {m}),
                f32({sy}, {}),
                u8({128}, {}),
                t_of<int32_t>(bias, {m})};
    auto q = run_op(c);
    ASSERT_EQ(q.outputs[0].shape(), Shape(std::span<const int64_t>(ys))) << at;
    const auto qy = values<uint8_t>(q.outputs[0]);
    for (size_t e = 0; e < qy.size(); ++e) {
      const size_t oc = static_cast<size_t>(static_cast<int64_t>(e) / os % m);
      const float mult = (sx * sw[oc]) / sy;
      const float v = static_cast<float>(acc[e] + bias[oc]) * mult;
      const double r = std::clamp(static_cast<double>(std::nearbyint(v)) + 128.0, 0.0, 255.0);
      ASSERT_EQ(qy[e], static_cast<uint8_t>(r)) << at << " element " << e;
    }
  }
}

TEST(OpsQuantTest, ConvIntegerAndQLinearConvAgainstThePlainLoop) {
  // Three spatial axes most often (the depth axis folded into the im2col rows), one and two as well, on every
  // target (their strips differ in width).
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    const int sp = seed % 4 == 0 ? 1 : seed % 4 == 1 ? 2 : 3;
    const bool wide = seed % 3 == 0;
    if (seed % 2 == 0)
      check_random_conv<uint8_t, int8_t>(sp, seed, wide);
    else
      check_random_conv<int8_t, uint8_t>(sp, seed, wide);
    if (testing::Test::HasFatalFailure()) return;
  }
}

TEST(OpsQuantTest, QLinearConvBiasPerChannel) {
  // x scale 0.5, w [1, -2] with scales [1, 0.25], y scale 1, bias [1, 0]: channel 0 acc = x + 1, mult 0.5;
  // channel 1 acc = -2x, mult 0.125; y zero point 10.
  auto r = run("QLinearConv",
               {u8({1, 2, 3, 4}, {1, 1, 2, 2}), scalar_f(0.5f), u8({0}, {}), s8({1, -2}, {2, 1, 1, 1}),
                f32({1, 0.25f}, {2}), s8({0}, {}), scalar_f(1), u8({10}, {}), t_of<int32_t>({1, 0}, {2})},
               10);
  // ch0: [2,3,4,5] * 0.5 = [1, 1.5, 2, 2.5] -> [1, 2, 2, 2]; ch1: [-2,-4,-6,-8] * 0.125 -> [-0.25,-0.5,-0.75,-1] -> [0,
  // 0, -1, -1].
  EXPECT_EQ(values<uint8_t>(r.outputs[0]), (std::vector<uint8_t>{11, 12, 12, 12, 10, 10, 9, 9}));
}

TEST(OpsQuantTest, Errors) {
  expect_error(
      [] {
        run("QuantizeLinear", {f32({1, 2}, {1, 2}), f32({1, 2}, {2})}, 10);
      },
      ErrorKind::InvalidModel, "node 'n0'");
  expect_error(
      [] {
        run("QuantizeLinear", {f32({1, 2}, {1, 2}), f32({1, 2, 3}, {3})}, 13);
      },
      ErrorKind::InvalidModel, "does not match dimension 1");
  expect_error(
      [] {
        run("QuantizeLinear", {f32({1}, {1}), scalar_f(1)}, 21, {attr_i("block_size", 2)});
      },
      ErrorKind::Unsupported, "block_size");
  expect_error(
      [] {
        run("ConvInteger", {u8({1, 2, 3, 4}, {1, 1, 2, 2}), u8({1, 1}, {2, 1, 1, 1}), Tensor(), u8({0, 1}, {2})}, 10);
      },
      ErrorKind::InvalidInput, "per-tensor");
  // Three spatial axes are served (ConvIntegerAndQLinearConvAgainstThePlainLoop); four are not.
  expect_error(
      [] {
        run("ConvInteger", {u8({1}, {1, 1, 1, 1, 1, 1}), u8({1}, {1, 1, 1, 1, 1, 1})}, 10);
      },
      ErrorKind::Unsupported, "more than 3 spatial axes");
  expect_error(
      [] {
        run("MatMulInteger", {u8({1, 2}, {1, 2}), u8({1, 2, 3}, {3, 1})}, 10);
      },
      ErrorKind::InvalidModel, "inner dimensions differ");
}

}  // namespace
}  // namespace onemodel::test
