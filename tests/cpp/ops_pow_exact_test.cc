// Pow in exact mode: a plan-time exponent of 2 is x * x (one rounding, canonical NaN); anything else, or an
// exponent only known at run time, is refused with ExactModeUnavailable naming the node.
#include <gtest/gtest.h>

#include <cmath>

#include "ops_test_util.h"

namespace onemodel::test {
namespace {

OpCase pow_case(std::vector<float> x, float e, bool constant) {
  OpCase c;
  c.op_type = "Pow";
  c.opset = 15;
  c.inputs = {Tensor::from_values(std::span<const float>(x), Shape{static_cast<int64_t>(x.size())}),
              Tensor::from_values(std::span<const float>(std::vector<float>{e}), Shape{})};
  c.constant_inputs = {false, constant};
  c.exact = true;
  return c;
}

TEST(OpsPowExactTest, ConstantTwoIsTheProduct) {
  const float x = 1.1f;
  auto r = run_op(pow_case({x, -3.0f, std::nanf(""), 1e20f}, 2.0f, true));
  const auto v = values<float>(r.outputs[0]);
  EXPECT_EQ(fbits(v[0]), fbits(x * x));
  EXPECT_EQ(v[1], 9.0f);
  EXPECT_EQ(fbits(v[2]), 0x7FC00000u);
  EXPECT_TRUE(std::isinf(v[3]));
}

TEST(OpsPowExactTest, OtherOrRuntimeExponentRefused) {
  expect_error([] { run_op(pow_case({1.0f}, 3.0f, true)); }, ErrorKind::ExactModeUnavailable, "exponent of 2");
  expect_error([] { run_op(pow_case({1.0f}, 2.0f, false)); }, ErrorKind::ExactModeUnavailable, "exponent of 2");
}

}  // namespace
}  // namespace onemodel::test
