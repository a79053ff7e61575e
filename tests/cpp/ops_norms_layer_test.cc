// LayerNormalization, RMSNormalization, InstanceNormalization, GroupNormalization (18 and 21),
// LpNormalization and MeanVarianceNormalization: exact bits against a reference for one row written here
// (its own 16-partial sum, the four separately rounded steps), the optional outputs, parameter broadcasting,
// and closeness to double-precision formulas.
#include <cmath>
#include <random>

#include "ops_norms_ref.h"
#include "ops_test_util.h"

namespace onemodel::test {
namespace {

Tensor f32(std::vector<float> v, std::vector<int64_t> s) {
  return Tensor::from_values(std::span<const float>(v), Shape(std::span<const int64_t>(s)));
}

struct RefRow {
  float mean, inv;
  std::vector<float> y;
};
// One row with per-element scale and bias (empty bias: none).
RefRow ref_row(const std::vector<float>& x, const std::vector<float>& sc, const std::vector<float>& b, float eps,
               bool rms) {
  const float n = static_cast<float>(x.size());
  const float mean = rms ? 0.0f : ref_sum16(x) / n;
  std::vector<float> sq;
  for (float v : x) sq.push_back((v - mean) * (v - mean));
  const float inv = 1.0f / std::sqrt(ref_sum16(sq) / n + eps);
  RefRow r{mean, inv, {}};
  for (size_t j = 0; j < x.size(); ++j) {
    const float t = ((x[j] - mean) * inv) * sc[j];
    r.y.push_back(b.empty() ? t : t + b[j]);
  }
  return r;
}

std::vector<float> randoms(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.5f, 2.0f);
  std::vector<float> v(n);
  for (auto& e : v) e = d(rng);
  return v;
}

TEST(OpsNormsLayerTest, LayerNormalizationMatchesTheReferenceBitForBit) {
  const int64_t rows = 3, cols = 37;  // odd width: partials of different lengths
  auto x = randoms(static_cast<size_t>(rows * cols), 1), sc = randoms(static_cast<size_t>(cols), 2),
       b = randoms(static_cast<size_t>(cols), 3);
  OpCase c;
  c.op_type = "LayerNormalization";
  c.attrs = {attr_i("axis", -1), attr_f("epsilon", 1e-3f)};
  c.inputs = {f32(x, {rows, cols}), f32(sc, {cols}), f32(b, {cols})};
  c.num_outputs = 3;
  auto r = run_op(c);
  EXPECT_TRUE(r.flags.exact);
  EXPECT_EQ(r.outputs[1].shape(), (Shape{rows, 1}));
  auto y = values<float>(r.outputs[0]), m = values<float>(r.outputs[1]), inv = values<float>(r.outputs[2]);
  for (int64_t i = 0; i < rows; ++i) {
    std::vector<float> row(x.begin() + i * cols, x.begin() + (i + 1) * cols);
    const RefRow ref = ref_row(row, sc, b, 1e-3f, false);
    EXPECT_EQ(fbits(m[static_cast<size_t>(i)]), fbits(ref.mean));
    EXPECT_EQ(fbits(inv[static_cast<size_t>(i)]), fbits(ref.inv));
    for (int64_t j = 0; j < cols; ++j)
      ASSERT_EQ(fbits(y[static_cast<size_t>(i * cols + j)]), fbits(ref.y[static_cast<size_t>(j)]));
    // And close to the double-precision formula.
    double mu = 0, var = 0;
    for (float v : row) mu += v;
    mu /= cols;
    for (float v : row) var += (v - mu) * (v - mu);
    var /= cols;
    EXPECT_NEAR(y[static_cast<size_t>(i * cols)], (row[0] - mu) / std::sqrt(var + 1e-3) * sc[0] + b[0], 1e-4);
  }
}

TEST(OpsNormsLayerTest, ScaleBroadcastsOverTheNormalizedDimensions) {
  // X [2, 2, 3] normalized over the last two dims; Scale [3] broadcasts over them; no bias.
  auto x = randoms(12, 4);
  OpCase c;
  c.op_type = "LayerNormalization";
  c.attrs = {attr_i("axis", 1)};
  c.inputs = {f32(x, {2, 2, 3}), f32({2, -1, 0.5f}, {3})};
  auto y = values<float>(run_op(c).outputs[0]);
  const std::vector<float> sc = {2, -1, 0.5f, 2, -1, 0.5f};
  for (int i = 0; i < 2; ++i) {
    const RefRow ref = ref_row(std::vector<float>(x.begin() + i * 6, x.begin() + (i + 1) * 6), sc, {}, 1e-5f, false);
    for (int j = 0; j < 6; ++j)
      EXPECT_EQ(fbits(y[static_cast<size_t>(i * 6 + j)]), fbits(ref.y[static_cast<size_t>(j)]));
  }
  c.inputs[1] = f32({1, 1, 1, 1}, {4});
  expect_error([&] { run_op(c); }, ErrorKind::InvalidModel, "does not broadcast");
}

TEST(OpsNormsLayerTest, RmsNormalization) {
  auto x = randoms(20, 5), sc = randoms(20, 6);
  OpCase c;
  c.op_type = "RMSNormalization";
  c.opset = 23;
  c.inputs = {f32(x, {1, 20}), f32(sc, {20})};
  auto y = values<float>(run_op(c).outputs[0]);
  const RefRow ref = ref_row(x, sc, {}, 1e-5f, true);
  for (size_t j = 0; j < 20; ++j) EXPECT_EQ(fbits(y[j]), fbits(ref.y[j]));
}

TEST(OpsNormsLayerTest, InstanceAndGroupNormalization) {
  // X [2, 4, 5]: instance rows are (n, c) planes of 5; groups of 2 channels make rows of 10.
  auto x = randoms(40, 7);
  const std::vector<float> s4 = {1, 2, 3, 4}, b4 = {0.5f, -0.5f, 1, -1}, s2 = {3, -2}, b2 = {0.25f, 4};
  OpCase in;
  in.op_type = "InstanceNormalization";
  in.attrs = {attr_f("epsilon", 1e-2f)};
  in.inputs = {f32(x, {2, 4, 5}), f32(s4, {4}), f32(b4, {4})};
  auto yi = values<float>(run_op(in).outputs[0]);
  for (int r = 0; r < 8; ++r) {
    const size_t ch = static_cast<size_t>(r % 4);
    const RefRow ref = ref_row(std::vector<float>(x.begin() + r * 5, x.begin() + (r + 1) * 5),
                               std::vector<float>(5, s4[ch]), std::vector<float>(5, b4[ch]), 1e-2f, false);
    for (int j = 0; j < 5; ++j)
      EXPECT_EQ(fbits(yi[static_cast<size_t>(r * 5 + j)]), fbits(ref.y[static_cast<size_t>(j)]));
  }
  OpCase g18;
  g18.op_type = "GroupNormalization";
  g18.opset = 18;
  g18.attrs = {attr_i("num_groups", 2)};
  g18.inputs = {f32(x, {2, 4, 5}), f32(s2, {2}), f32(b2, {2})};
  auto y18 = values<float>(run_op(g18).outputs[0]);
  OpCase g21 = g18;
  g21.opset = 21;
  g21.inputs = {f32(x, {2, 4, 5}), f32(s4, {4}), f32(b4, {4})};
  auto y21 = values<float>(run_op(g21).outputs[0]);
  for (int r = 0; r < 4; ++r) {
    const std::vector<float> row(x.begin() + r * 10, x.begin() + (r + 1) * 10);
    const size_t g = static_cast<size_t>(r % 2);
    const RefRow a = ref_row(row, std::vector<float>(10, s2[g]), std::vector<float>(10, b2[g]), 1e-5f, false);
    std::vector<float> sc, bi;  // opset 21: channel 2g for the first 5 elements, 2g + 1 for the rest
    for (int j = 0; j < 10; ++j) {
      sc.push_back(s4[2 * g + static_cast<size_t>(j / 5)]);
      bi.push_back(b4[2 * g + static_cast<size_t>(j / 5)]);
    }
    const RefRow b = ref_row(row, sc, bi, 1e-5f, false);
    for (int j = 0; j < 10; ++j) {
      EXPECT_EQ(fbits(y18[static_cast<size_t>(r * 10 + j)]), fbits(a.y[static_cast<size_t>(j)]));
      EXPECT_EQ(fbits(y21[static_cast<size_t>(r * 10 + j)]), fbits(b.y[static_cast<size_t>(j)]));
    }
  }
  g18.inputs[1] = f32(s4, {4});
  expect_error([&] { run_op(g18); }, ErrorKind::InvalidModel, "shape [2]");
  g21.attrs = {attr_i("num_groups", 3)};
  expect_error([&] { run_op(g21); }, ErrorKind::InvalidModel, "does not divide");
}

TEST(OpsNormsLayerTest, LpNormalization) {
  // Rows [3, 4] and [0, 0]: L2 -> [0.6, 0.8], zero norm -> zeros; L1 of [1, -3] -> [0.25, -0.75].
  OpCase c;
  c.op_type = "LpNormalization";
  c.opset = 1;
  c.inputs = {f32({3, 4, 0, 0}, {2, 2})};
  EXPECT_EQ(values<float>(run_op(c).outputs[0]), (std::vector<float>{3.0f / 5.0f, 4.0f / 5.0f, 0, 0}));
  c.attrs = {attr_i("p", 1), attr_i("axis", 0)};
  c.inputs = {f32({1, 2, -3, 2}, {2, 2})};
  EXPECT_EQ(values<float>(run_op(c).outputs[0]), (std::vector<float>{0.25f, 0.5f, -0.75f, 0.5f}));
  c.attrs = {attr_i("p", 3)};
  expect_error([&] { run_op(c); }, ErrorKind::InvalidModel, "p must be 1 or 2");
}

TEST(OpsNormsLayerTest, MeanVarianceNormalizationIsCloseToTheFormula) {
  auto x = randoms(2 * 3 * 2 * 2, 9);
  OpCase c;
  c.op_type = "MeanVarianceNormalization";
  c.opset = 13;
  c.inputs = {f32(x, {2, 3, 2, 2})};
  auto y = values<float>(run_op(c).outputs[0]);
  for (int ch = 0; ch < 3; ++ch) {  // default axes {0, 2, 3}: one group per channel
    double s = 0, s2 = 0;
    std::vector<size_t> at;
    for (int n = 0; n < 2; ++n)
      for (int k = 0; k < 4; ++k) at.push_back(static_cast<size_t>((n * 3 + ch) * 4 + k));
    for (size_t i : at) s += x[i];
    const double mu = s / 8;
    for (size_t i : at) s2 += (x[i] - mu) * (x[i] - mu);
    const double sd = std::sqrt(s2 / 8);
    for (size_t i : at) EXPECT_NEAR(y[i], (x[i] - mu) / (sd + 1e-9), 2e-5);
  }
}

}  // namespace
}  // namespace onemodel::test
