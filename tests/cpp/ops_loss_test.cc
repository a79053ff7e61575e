// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss on what the backend cases leave open: targets out of
// range, every element ignored, float16, and the exact flag. Expected values are hand-computed.
#include <gtest/gtest.h>

#include <cmath>

#include "ops/common.h"
#include "ops_test_util.h"

namespace onemodel::test {
namespace {

OpCase nll(std::vector<float> x, Shape xs, std::vector<int64_t> t, Shape ts, const std::string& reduction) {
  OpCase c;
  c.op_type = "NegativeLogLikelihoodLoss";
  c.opset = 13;
  c.attrs = {attr_s("reduction", reduction)};
  c.inputs = {Tensor::from_values(std::span<const float>(x), xs), Tensor::from_values(std::span<const int64_t>(t), ts)};
  return c;
}

TEST(OpsLossTest, NllMeanSumNoneByHand) {
  // x [2, 3]: rows (0.1, 0.2, 0.7) and (0.5, 0.25, 0.25); targets 2 and 0.
  const std::vector<float> x = {0.1f, 0.2f, 0.7f, 0.5f, 0.25f, 0.25f};
  auto none = run_op(nll(x, Shape{2, 3}, {2, 0}, Shape{2}, "none"));
  EXPECT_EQ(values<float>(none.outputs[0]), (std::vector<float>{-0.7f, -0.5f}));
  auto sum = run_op(nll(x, Shape{2, 3}, {2, 0}, Shape{2}, "sum"));
  EXPECT_EQ(values<float>(sum.outputs[0])[0], -0.7f + -0.5f);
  auto mean = run_op(nll(x, Shape{2, 3}, {2, 0}, Shape{2}, "mean"));
  EXPECT_EQ(values<float>(mean.outputs[0])[0], (-0.7f + -0.5f) / 2.0f);
  EXPECT_TRUE(mean.flags.exact);
}

TEST(OpsLossTest, NllTargetOutOfRangeIsInvalidInput) {
  const std::vector<float> x = {0.1f, 0.2f, 0.7f, 0.5f, 0.25f, 0.25f};
  expect_error(
      [&] {
        run_op(nll(x, Shape{2, 3}, {2, 3}, Shape{2}, "sum"));
      },
      ErrorKind::InvalidInput, "target 3 at position 1 is outside [0, 3)");
  expect_error([&] { run_op(nll(x, Shape{2, 3}, {-1, 0}, Shape{2}, "sum")); }, ErrorKind::InvalidInput, "target -1");
  // ignore_index takes precedence over the range check.
  OpCase c = nll(x, Shape{2, 3}, {-1, 0}, Shape{2}, "mean");
  c.attrs.push_back(attr_i("ignore_index", -1));
  auto r = run_op(c);
  EXPECT_EQ(values<float>(r.outputs[0])[0], -0.5f);  // one element of weight 1 left
}

TEST(OpsLossTest, NllEveryElementIgnoredMeanIsNaN) {
  OpCase c = nll({1, 2, 3, 4}, Shape{2, 2}, {5, 5}, Shape{2}, "mean");
  c.attrs.push_back(attr_i("ignore_index", 5));
  c.exact = true;
  auto r = run_op(c);
  EXPECT_EQ(fbits(values<float>(r.outputs[0])[0]), 0x7FC00000u);  // 0/0, canonical in exact mode
}

TEST(OpsLossTest, ShapeMismatchAndSoftmaxNotExact) {
  expect_error(
      [&] {
        run_op(nll({1, 2, 3, 4}, Shape{2, 2}, {0, 0, 0}, Shape{3}, "sum"));
      },
      ErrorKind::InvalidModel, "does not match input");
  OpCase c = nll({0.f, 0.f}, Shape{1, 2}, {1}, Shape{1}, "sum");
  c.op_type = "SoftmaxCrossEntropyLoss";
  auto r = run_op(c);
  EXPECT_FALSE(r.flags.exact);
  EXPECT_NEAR(values<float>(r.outputs[0])[0], std::log(2.0f), 1e-7f);  // -log(1/2)
}

TEST(OpsLossTest, Float16ComputesInFloat) {
  OpCase c;
  c.op_type = "NegativeLogLikelihoodLoss";
  c.opset = 13;
  c.attrs = {attr_s("reduction", "sum")};
  const std::vector<uint16_t> x = {float_to_half(0.5f), float_to_half(0.25f)};
  c.inputs = {Tensor::copy_of(DType::F16, Shape{2, 1}, x.data(), 4),
              Tensor::from_values(std::span<const int64_t>(std::vector<int64_t>{0, 0}), Shape{2})};
  auto r = run_op(c);
  ASSERT_EQ(r.outputs[0].dtype(), DType::F16);
  EXPECT_EQ(half_to_float(*static_cast<const uint16_t*>(r.outputs[0].raw())), -0.75f);
}

}  // namespace
}  // namespace onemodel::test
