// LogSoftmax and Hardmax (Softmax itself is in ops_softmax_test.cc): exact bits of LogSoftmax against a
// reference written here (the exact log itself is tested with the other transcendentals), the NaN and -inf
// rules, both opset conventions, Hardmax's first maximum and NaN rows.
#include <cmath>
#include <limits>
#include <random>

#include "kernels/exact_math.h"
#include "ops_norms_ref.h"
#include "ops_test_util.h"

namespace onemodel::test {
namespace {

Tensor f32(std::vector<float> v, std::vector<int64_t> s) {
  return Tensor::from_values(std::span<const float>(v), Shape(std::span<const int64_t>(s)));
}

OpResult row_op(const std::string& op, Tensor x, int64_t opset, std::optional<int64_t> axis, bool exact) {
  OpCase c;
  c.op_type = op;
  c.opset = opset;
  if (axis) c.attrs = {attr_i("axis", *axis)};
  c.inputs = {std::move(x)};
  c.exact = exact;
  return run_op(c);
}

std::vector<float> ref_log_softmax(const std::vector<float>& x, bool exact) {
  float m = -std::numeric_limits<float>::infinity();
  for (float v : x)
    if (v > m) m = v;
  std::vector<float> d, e;
  for (float v : x) {
    d.push_back(v - m);
    e.push_back(exact ? kern::exact_exp_nonpositive(v - m) : kern::fast_exp(v - m));
  }
  const float l = kern::exact_log(ref_sum16(e));
  std::vector<float> y;
  for (float v : d) y.push_back(v - l);
  return y;
}

TEST(OpsNormsSoftmaxTest, LogSoftmaxBitsAndCloseness) {
  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0.0f, 3.0f);
  std::vector<float> x(3 * 33);
  for (auto& v : x) v = dist(rng);
  for (bool exact : {true, false}) {
    auto y = values<float>(row_op("LogSoftmax", f32(x, {3, 33}), 13, std::nullopt, exact).outputs[0]);
    for (int r = 0; r < 3; ++r) {
      std::vector<float> row(x.begin() + r * 33, x.begin() + (r + 1) * 33);
      auto want = ref_log_softmax(row, exact);
      double mx = -1e300, s = 0;
      for (float v : row) mx = std::max(mx, static_cast<double>(v));
      for (float v : row) s += std::exp(v - mx);
      for (int j = 0; j < 33; ++j) {
        ASSERT_EQ(fbits(y[static_cast<size_t>(r * 33 + j)]), fbits(want[static_cast<size_t>(j)])) << exact;
        EXPECT_NEAR(y[static_cast<size_t>(r * 33 + j)], row[static_cast<size_t>(j)] - mx - std::log(s), 1e-5);
      }
    }
  }
  // Axis 0 of [3, 2] (opset 13) equals the rows of the transpose; opset 11 axis 0 is one row of 6.
  Tensor t = f32({1, 4, 2, 5, 3, 6}, {3, 2});
  auto a0 = values<float>(row_op("LogSoftmax", t, 13, 0, true).outputs[0]);
  auto col = ref_log_softmax({1, 2, 3}, true);
  EXPECT_EQ(a0[0], col[0]);
  EXPECT_EQ(a0[4], col[2]);
  auto flat = values<float>(row_op("LogSoftmax", t, 11, 0, true).outputs[0]);
  EXPECT_EQ(flat, ref_log_softmax({1, 4, 2, 5, 3, 6}, true));
}

TEST(OpsNormsSoftmaxTest, LogSoftmaxSpecialRows) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  // Row 0: NaN -> all NaN; row 1: +inf -> all NaN; row 2: all -inf -> all NaN; row 3: a -inf stays -inf.
  auto y = values<float>(
      row_op("LogSoftmax", f32({1, nan, 2, inf, -inf, -inf, 0, -inf}, {4, 2}), 13, std::nullopt, true).outputs[0]);
  for (int j = 0; j < 6; ++j) EXPECT_EQ(fbits(y[static_cast<size_t>(j)]), 0x7FC00000u) << j;
  EXPECT_EQ(y[6], 0.0f);
  EXPECT_EQ(y[7], -inf);
}

TEST(OpsNormsSoftmaxTest, Hardmax) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto y =
      values<float>(row_op("Hardmax", f32({3, 7, 7, 1, 2, 0, 5, nan, 9}, {3, 3}), 13, std::nullopt, false).outputs[0]);
  EXPECT_EQ(y, (std::vector<float>{0, 1, 0, 0, 1, 0, 0, 0, 0}));
  // Opset 11, axis 0 coerces [2, 2] into one row of 4: the maximum is element 2.
  auto c = values<float>(row_op("Hardmax", f32({1, 2, 8, 3}, {2, 2}), 11, 0, true).outputs[0]);
  EXPECT_EQ(c, (std::vector<float>{0, 0, 1, 0}));
  // Opset 13, axis 0: per column.
  auto a = values<float>(row_op("Hardmax", f32({1, 9, 8, 3}, {2, 2}), 13, 0, true).outputs[0]);
  EXPECT_EQ(a, (std::vector<float>{0, 1, 1, 0}));
}

}  // namespace
}  // namespace onemodel::test
