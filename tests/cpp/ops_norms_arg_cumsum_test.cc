// ArgMax/ArgMin (ties, select_last_index, NaN, keepdims, empty axis) and CumSum (exclusive, reverse, integer
// types and wrap-around, the run-time axis and its errors). Expected values are by hand.
#include <limits>

#include "ops_test_util.h"

namespace onemodel::test {
namespace {

OpResult arg(const std::string& op, Tensor x, int64_t axis, int64_t keepdims, int64_t last, int64_t opset = 13) {
  OpCase c;
  c.op_type = op;
  c.opset = opset;
  c.attrs = {attr_i("axis", axis), attr_i("keepdims", keepdims)};
  if (opset >= 12) c.attrs.push_back(attr_i("select_last_index", last));
  c.inputs = {std::move(x)};
  return run_op(c);
}

OpResult cumsum(Tensor x, Tensor axis, int64_t exclusive, int64_t reverse) {
  OpCase c;
  c.op_type = "CumSum";
  c.opset = 14;
  c.attrs = {attr_i("exclusive", exclusive), attr_i("reverse", reverse)};
  c.inputs = {std::move(x), std::move(axis)};
  return run_op(c);
}
Tensor axis64(int64_t a) { return Tensor::from_values<int64_t>({a}, Shape{}); }

TEST(OpsNormsArgTest, TiesAndSelectLastIndex) {
  // [[2, 5, 5], [7, 7, 1]]: ArgMax rows -> first {1, 0}, last {2, 1}; ArgMin rows -> first {0, 2}, last {0, 2}.
  Tensor x = Tensor::from_values<float>({2, 5, 5, 7, 7, 1}, Shape{2, 3});
  EXPECT_EQ(values<int64_t>(arg("ArgMax", x, 1, 0, 0).outputs[0]), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(values<int64_t>(arg("ArgMax", x, 1, 0, 1).outputs[0]), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(values<int64_t>(arg("ArgMin", x, -1, 0, 0).outputs[0]), (std::vector<int64_t>{0, 2}));
  // Columns: ArgMin of {2,7} {5,7} {5,1} -> {0, 0, 1}.
  auto c = arg("ArgMin", x, 0, 1, 1);
  EXPECT_EQ(c.outputs[0].shape(), (Shape{1, 3}));
  EXPECT_EQ(values<int64_t>(c.outputs[0]), (std::vector<int64_t>{0, 0, 1}));
  // Integers, with equal minima: last index 3 with select_last_index.
  Tensor i = Tensor::from_values<int8_t>({-4, 9, 0, -4}, Shape{4});
  EXPECT_EQ(values<int64_t>(arg("ArgMin", i, 0, 1, 0).outputs[0]), (std::vector<int64_t>{0}));
  EXPECT_EQ(values<int64_t>(arg("ArgMin", i, 0, 1, 1).outputs[0]), (std::vector<int64_t>{3}));
  // Before opset 12 there is no select_last_index: the first of equal values.
  EXPECT_EQ(values<int64_t>(arg("ArgMin", i, 0, 1, 0, 11).outputs[0]), (std::vector<int64_t>{0}));
  Tensor u = Tensor::from_values<uint64_t>({1, std::numeric_limits<uint64_t>::max(), 3}, Shape{3});
  EXPECT_EQ(values<int64_t>(arg("ArgMax", u, 0, 0, 0).outputs[0]), (std::vector<int64_t>{1}));
}

TEST(OpsNormsArgTest, NanWinsOnlyWhenFirstAndEmptyAxisGivesZero) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x = Tensor::from_values<float>({nan, 3, 9, 1, nan, 9}, Shape{2, 3});
  EXPECT_EQ(values<int64_t>(arg("ArgMax", x, 1, 0, 0).outputs[0]), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(values<int64_t>(arg("ArgMax", x, 1, 0, 1).outputs[0]), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(values<int64_t>(arg("ArgMin", x, 1, 0, 0).outputs[0]), (std::vector<int64_t>{0, 0}));
  auto e = arg("ArgMax", Tensor::zeros(DType::F32, Shape{2, 0}), 1, 1, 0);
  EXPECT_EQ(e.outputs[0].shape(), (Shape{2, 1}));
  EXPECT_EQ(values<int64_t>(e.outputs[0]), (std::vector<int64_t>{0, 0}));
  expect_error([&] { arg("ArgMax", x, 2, 1, 0); }, ErrorKind::InvalidModel, "axis 2");
}

TEST(OpsNormsCumSumTest, ExclusiveAndReverseOnIntegers) {
  Tensor x = Tensor::from_values<int32_t>({1, 2, 3, 4}, Shape{4});
  EXPECT_EQ(values<int32_t>(cumsum(x, axis64(0), 0, 0).outputs[0]), (std::vector<int32_t>{1, 3, 6, 10}));
  EXPECT_EQ(values<int32_t>(cumsum(x, axis64(0), 1, 0).outputs[0]), (std::vector<int32_t>{0, 1, 3, 6}));
  EXPECT_EQ(values<int32_t>(cumsum(x, axis64(0), 0, 1).outputs[0]), (std::vector<int32_t>{10, 9, 7, 4}));
  EXPECT_EQ(values<int32_t>(cumsum(x, axis64(-1), 1, 1).outputs[0]), (std::vector<int32_t>{9, 7, 4, 0}));
  // 2-D, axis 0 and (int32 axis tensor) axis 1.
  Tensor m = Tensor::from_values<int64_t>({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  EXPECT_EQ(values<int64_t>(cumsum(m, axis64(0), 0, 0).outputs[0]), (std::vector<int64_t>{1, 2, 3, 5, 7, 9}));
  EXPECT_EQ(values<int64_t>(cumsum(m, Tensor::from_values<int32_t>({1}, Shape{1}), 1, 1).outputs[0]),
            (std::vector<int64_t>{5, 3, 0, 11, 6, 0}));
  // Unsigned wrap-around.
  Tensor u = Tensor::from_values<uint32_t>({4294967295u, 2}, Shape{2});
  EXPECT_EQ(values<uint32_t>(cumsum(u, axis64(0), 0, 0).outputs[0]), (std::vector<uint32_t>{4294967295u, 1}));
  Tensor s = Tensor::from_values<int64_t>({std::numeric_limits<int64_t>::max(), 1}, Shape{2});
  EXPECT_EQ(values<int64_t>(cumsum(s, axis64(0), 0, 0).outputs[0])[1], std::numeric_limits<int64_t>::min());
}

TEST(OpsNormsCumSumTest, FloatsKeepTheOrderAndErrors) {
  // 2^24, 1, 1: forward each +1 is lost (2^24 + 1 rounds to even); backward the ones add up first.
  Tensor x = Tensor::from_values<float>({16777216.0f, 1, 1}, Shape{3});
  EXPECT_EQ(values<float>(cumsum(x, axis64(0), 0, 0).outputs[0]),
            (std::vector<float>{16777216.0f, 16777216.0f, 16777216.0f}));
  EXPECT_EQ(values<float>(cumsum(x, axis64(0), 0, 1).outputs[0]), (std::vector<float>{16777218.0f, 2, 1}));
  // Inclusive keeps y[0] = x[0] bit for bit (-0 stays -0).
  auto z = values<float>(cumsum(Tensor::from_values<float>({-0.0f}, Shape{1}), axis64(0), 0, 0).outputs[0]);
  EXPECT_EQ(fbits(z[0]), 0x80000000u);
  auto d = values<double>(cumsum(Tensor::from_values<double>({0.5, 0.25}, Shape{2}), axis64(0), 1, 0).outputs[0]);
  EXPECT_EQ(d, (std::vector<double>{0, 0.5}));
  expect_error([&] { cumsum(x, axis64(1), 0, 0); }, ErrorKind::InvalidInput, "axis 1");
  expect_error(
      [&] {
        cumsum(x, Tensor::from_values<int64_t>({0, 0}, Shape{2}), 0, 0);
      },
      ErrorKind::InvalidInput, "one value");
  expect_error([&] { cumsum(Tensor::zeros(DType::I8, Shape{2}), axis64(0), 0, 0); }, ErrorKind::Unsupported, "int8");
}

}  // namespace
}  // namespace onemodel::test
