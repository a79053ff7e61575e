// Softmax: both opset conventions, exact bits against a reference written here (max, the 16-partial sum
// built explicitly, division), closeness to a long double softmax, and the NaN / inf row rules.
#include <cmath>
#include <limits>
#include <random>

#include "kernels/exact_math.h"
#include "ops_test_util.h"

namespace onemodel::test {
namespace {

Tensor f32(std::vector<float> v, std::vector<int64_t> s) {
  return Tensor::from_values(std::span<const float>(v), Shape(std::span<const int64_t>(s)));
}

OpResult softmax(Tensor x, int64_t opset, std::optional<int64_t> axis, bool exact) {
  OpCase c;
  c.op_type = "Softmax";
  c.opset = opset;
  if (axis) c.attrs = {attr_i("axis", *axis)};
  c.inputs = {std::move(x)};
  c.exact = exact;
  return run_op(c);
}

// Exact reference for one row (the exponential itself is verified in exact_math_test).
std::vector<float> ref_row(const std::vector<float>& x) {
  float m = -std::numeric_limits<float>::infinity();
  for (float v : x)
    if (!std::isnan(v) && v > m) m = v;
  std::vector<float> e;
  for (float v : x) e.push_back(kern::exact_exp_nonpositive(v - m));
  std::vector<std::vector<float>> groups(16);
  for (size_t j = 0; j < e.size(); ++j) groups[j % 16].push_back(e[j]);
  float part[16];
  for (int t = 0; t < 16; ++t) {
    float acc = 0.0f;
    for (float v : groups[static_cast<size_t>(t)]) acc = acc + v;
    part[t] = acc;
  }
  float a[8], b[4];
  for (int t = 0; t < 8; ++t) a[t] = part[t] + part[t + 8];
  for (int t = 0; t < 4; ++t) b[t] = a[t] + a[t + 4];
  const float l = (b[0] + b[2]) + (b[1] + b[3]);
  std::vector<float> y;
  for (float v : e) {
    const float q = v / l;
    y.push_back(std::isnan(q) ? from_fbits(0x7FC00000u) : q);
  }
  return y;
}

std::vector<long double> ld_row(const std::vector<float>& x) {
  long double m = -INFINITY, s = 0;
  for (float v : x) m = std::max(m, static_cast<long double>(v));
  std::vector<long double> e;
  for (float v : x) {
    e.push_back(std::exp(static_cast<long double>(v) - m));
    s += e.back();
  }
  for (auto& v : e) v /= s;
  return e;
}

// Gathers the rows along `axis` (opset 13 meaning) of a row-major tensor.
std::vector<std::vector<size_t>> rows_of(const std::vector<int64_t>& s, int axis) {
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= s[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < s.size(); ++d) inner *= s[d];
  const int64_t n = s[static_cast<size_t>(axis)];
  std::vector<std::vector<size_t>> rows;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      std::vector<size_t> r;
      for (int64_t j = 0; j < n; ++j) r.push_back(static_cast<size_t>((o * n + j) * inner + i));
      rows.push_back(r);
    }
  return rows;
}

void check_rows(const std::vector<float>& x, const std::vector<float>& got_exact, const std::vector<float>& got_fast,
                const std::vector<std::vector<size_t>>& rows) {
  for (const auto& r : rows) {
    std::vector<float> xr;
    for (size_t i : r) xr.push_back(x[i]);
    const auto want = ref_row(xr);
    const auto approx = ld_row(xr);
    for (size_t j = 0; j < r.size(); ++j) {
      ASSERT_EQ(fbits(got_exact[r[j]]), fbits(want[j]));
      ASSERT_NEAR(static_cast<double>(got_exact[r[j]]), static_cast<double>(approx[j]), 2e-6);
      ASSERT_NEAR(static_cast<double>(got_fast[r[j]]), static_cast<double>(approx[j]), 3e-6);
    }
  }
}

TEST(OpsSoftmaxTest, HandValues) {
  // numpy: scipy-style softmax([1, 2, 3]) = [0.09003057, 0.24472847, 0.66524096]
  for (bool exact : {false, true}) {
    auto y = values<float>(softmax(f32({1, 2, 3}, {1, 3}), 13, std::nullopt, exact).outputs[0]);
    EXPECT_NEAR(y[0], 0.09003057f, 1e-7);
    EXPECT_NEAR(y[1], 0.24472847f, 1e-7);
    EXPECT_NEAR(y[2], 0.66524096f, 1e-7);
    auto h = values<float>(softmax(f32({1000, 1000}, {2}), 13, std::nullopt, exact).outputs[0]);
    EXPECT_EQ(h, (std::vector<float>{0.5f, 0.5f}));
  }
}

TEST(OpsSoftmaxTest, Opset13AlongEachAxis) {
  std::mt19937 rng(21);
  std::uniform_real_distribution<float> d(-6, 6);
  const std::vector<int64_t> shape = {3, 4, 37};
  std::vector<float> x(3 * 4 * 37);
  for (auto& v : x) v = d(rng);
  for (int axis = -3; axis < 3; ++axis) {
    auto e = values<float>(softmax(f32(x, shape), 13, axis, true).outputs[0]);
    auto f = values<float>(softmax(f32(x, shape), 13, axis, false).outputs[0]);
    check_rows(x, e, f, rows_of(shape, axis < 0 ? axis + 3 : axis));
  }
  // Default axis is -1.
  auto e = values<float>(softmax(f32(x, shape), 13, std::nullopt, true).outputs[0]);
  auto f = values<float>(softmax(f32(x, shape), 13, std::nullopt, false).outputs[0]);
  check_rows(x, e, f, rows_of(shape, 2));
}

TEST(OpsSoftmaxTest, Opset11CoercesTo2D) {
  std::mt19937 rng(22);
  std::uniform_real_distribution<float> d(-3, 3);
  const std::vector<int64_t> shape = {2, 3, 5};
  std::vector<float> x(30);
  for (auto& v : x) v = d(rng);
  // axis 1 (default): rows are the 15 trailing elements of each batch entry.
  for (int64_t opset : {1, 11}) {
    auto e = values<float>(softmax(f32(x, shape), opset, std::nullopt, true).outputs[0]);
    auto f = values<float>(softmax(f32(x, shape), opset, std::nullopt, false).outputs[0]);
    check_rows(x, e, f, rows_of({2, 15}, 1));
  }
  // axis 0: one row of 30; axis 3 (= rank): rows of one element, all 1.
  auto e0 = values<float>(softmax(f32(x, shape), 11, 0, true).outputs[0]);
  auto f0 = values<float>(softmax(f32(x, shape), 11, 0, false).outputs[0]);
  check_rows(x, e0, f0, rows_of({30}, 0));
  for (float v : values<float>(softmax(f32(x, shape), 11, 3, true).outputs[0])) EXPECT_EQ(v, 1.0f);
  auto neg = values<float>(softmax(f32(x, shape), 11, -1, true).outputs[0]);
  check_rows(x, neg, values<float>(softmax(f32(x, shape), 11, -1, false).outputs[0]), rows_of({6, 5}, 1));
}

TEST(OpsSoftmaxTest, NanAndInfinityRows) {
  const float inf = std::numeric_limits<float>::infinity(), nan = from_fbits(0xFFC12345u);
  // Rows: [1 NaN 2], [1 inf 2], [-inf -inf -inf], [-inf 0 -inf], [-inf -inf 3]
  Tensor x = f32({1, nan, 2, 1, inf, 2, -inf, -inf, -inf, -inf, 0, -inf, -inf, -inf, 3}, {5, 3});
  for (bool exact : {false, true}) {
    auto y = values<float>(softmax(x, 13, std::nullopt, exact).outputs[0]);
    for (int i = 0; i < 9; ++i) EXPECT_EQ(fbits(y[static_cast<size_t>(i)]), 0x7FC00000u) << i << " exact " << exact;
    EXPECT_EQ(fbits(y[9]), 0u);
    EXPECT_EQ(y[10], 1.0f);
    EXPECT_EQ(fbits(y[11]), 0u);
    EXPECT_EQ(y[14], 1.0f);
  }
}

TEST(OpsSoftmaxTest, EmptyAndErrors) {
  auto e = softmax(f32({}, {0, 3}), 13, std::nullopt, true);
  EXPECT_EQ(e.outputs[0].shape(), (Shape{0, 3}));
  expect_error([] { softmax(f32({1, 2}, {2}), 13, 1, true); }, ErrorKind::InvalidModel, "axis 1");
  expect_error([] { softmax(f32({1, 2}, {2}), 11, 2, true); }, ErrorKind::InvalidModel, "axis 2");
  expect_error(
      [] {
        softmax(Tensor::from_values<double>({1, 2}, Shape{2}), 13, std::nullopt, true);
      },
      ErrorKind::Unsupported, "float64");
}

}  // namespace
}  // namespace onemodel::test
