// ReduceMax: attribute and input forms, keepdims, noop_with_empty_axes, the sequential-scan NaN rule, and a
// naive reference over random shapes and axis subsets.
#include <cmath>
#include <limits>
#include <random>

#include "ops_test_util.h"

namespace onemodel::test {
namespace {

Tensor f32(std::vector<float> v, std::vector<int64_t> s) {
  return Tensor::from_values(std::span<const float>(v), Shape(std::span<const int64_t>(s)));
}
Tensor axes_tensor(std::vector<int64_t> a) {
  return Tensor::from_values(std::span<const int64_t>(a), Shape{static_cast<int64_t>(a.size())});
}

OpResult reduce_attr(Tensor x, std::optional<std::vector<int64_t>> axes, int64_t keepdims = 1, int64_t opset = 13) {
  OpCase c;
  c.op_type = "ReduceMax";
  c.opset = opset;
  if (axes) c.attrs.push_back(attr_ints("axes", *axes));
  c.attrs.push_back(attr_i("keepdims", keepdims));
  c.inputs = {std::move(x)};
  return run_op(c);
}

OpResult reduce_input(Tensor x, std::optional<std::vector<int64_t>> axes, int64_t keepdims, int64_t noop,
                      bool axes_constant = true) {
  OpCase c;
  c.op_type = "ReduceMax";
  c.opset = 18;
  c.attrs = {attr_i("keepdims", keepdims), attr_i("noop_with_empty_axes", noop)};
  c.inputs = {std::move(x)};
  if (axes) {
    c.inputs.push_back(axes_tensor(*axes));
    c.constant_inputs = {false, axes_constant};
  }
  return run_op(c);
}

TEST(OpsReduceMaxTest, HandValues) {
  // numpy: np.max([[1,5,3],[4,2,6]], axis=1, keepdims=True) = [[5],[6]]; axis 0 -> [4,5,6]; all -> 6
  Tensor x = f32({1, 5, 3, 4, 2, 6}, {2, 3});
  auto r1 = reduce_attr(x, std::vector<int64_t>{1});
  EXPECT_EQ(r1.outputs[0].shape(), (Shape{2, 1}));
  EXPECT_EQ(values<float>(r1.outputs[0]), (std::vector<float>{5, 6}));
  auto r0 = reduce_attr(x, std::vector<int64_t>{0}, 0);
  EXPECT_EQ(r0.outputs[0].shape(), Shape{3});
  EXPECT_EQ(values<float>(r0.outputs[0]), (std::vector<float>{4, 5, 6}));
  auto all = reduce_attr(x, std::nullopt, 0);
  EXPECT_EQ(all.outputs[0].shape(), Shape{});
  EXPECT_EQ(values<float>(all.outputs[0]), (std::vector<float>{6}));
  auto allk = reduce_attr(x, std::nullopt, 1);
  EXPECT_EQ(allk.outputs[0].shape(), (Shape{1, 1}));
  auto neg = reduce_attr(x, std::vector<int64_t>{-1}, 0, 1);
  EXPECT_EQ(values<float>(neg.outputs[0]), (std::vector<float>{5, 6}));
}

TEST(OpsReduceMaxTest, InputFormAndNoop) {
  Tensor x = f32({1, 5, 3, 4, 2, 6}, {2, 3});
  auto r = reduce_input(x, std::vector<int64_t>{0}, 1, 0);
  EXPECT_EQ(r.outputs[0].shape(), (Shape{1, 3}));
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{4, 5, 6}));
  EXPECT_FALSE(r.needed_runtime_values);
  // Axes computed at run time: shaped again with the value.
  auto rt = reduce_input(x, std::vector<int64_t>{1}, 0, 0, false);
  EXPECT_TRUE(rt.needed_runtime_values);
  EXPECT_EQ(values<float>(rt.outputs[0]), (std::vector<float>{5, 6}));
  // No axes input: reduce all; empty axes with noop: identity.
  EXPECT_EQ(values<float>(reduce_input(x, std::nullopt, 0, 0).outputs[0]), (std::vector<float>{6}));
  auto noop = reduce_input(x, std::vector<int64_t>{}, 1, 1);
  EXPECT_EQ(noop.outputs[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(values<float>(noop.outputs[0]), (std::vector<float>{1, 5, 3, 4, 2, 6}));
  auto empty_reduce_all = reduce_input(x, std::vector<int64_t>{}, 0, 0);
  EXPECT_EQ(values<float>(empty_reduce_all.outputs[0]), (std::vector<float>{6}));
  auto noop_absent = reduce_input(x, std::nullopt, 1, 1);
  EXPECT_EQ(noop_absent.outputs[0].shape(), (Shape{2, 3}));
}

TEST(OpsReduceMaxTest, NanRuleAndSignedZero) {
  const float nan = from_fbits(0xFFC12345u), inf = std::numeric_limits<float>::infinity();
  // Rows: NaN first -> NaN (canonical); NaN later -> ignored; -0 then +0 -> -0 (first of equals kept);
  // all -inf -> -inf.
  Tensor x = f32({nan, 1, 2, 1, nan, 2, -0.0f, 0.0f, -1, -inf, -inf, -inf}, {4, 3});
  auto y = values<float>(reduce_attr(x, std::vector<int64_t>{1}, 0).outputs[0]);
  EXPECT_EQ(fbits(y[0]), 0x7FC00000u);
  EXPECT_EQ(y[1], 2.0f);
  EXPECT_EQ(fbits(y[2]), 0x80000000u);
  EXPECT_EQ(y[3], -inf);
  // Along axis 0 the first element of column 0 is NaN; column 1 holds a NaN in the middle.
  auto c = values<float>(reduce_attr(x, std::vector<int64_t>{0}, 0).outputs[0]);
  EXPECT_EQ(fbits(c[0]), 0x7FC00000u);
  EXPECT_EQ(c[1], 1.0f);
  EXPECT_EQ(c[2], 2.0f);
}

TEST(OpsReduceMaxTest, EmptyReductionAndTypes) {
  auto e = reduce_attr(f32({}, {0, 2}), std::vector<int64_t>{0}, 0);
  EXPECT_EQ(values<float>(e.outputs[0]), (std::vector<float>(2, -std::numeric_limits<float>::infinity())));
  auto ei = reduce_attr(Tensor::zeros(DType::I32, Shape{2, 0}), std::vector<int64_t>{1}, 0);
  EXPECT_EQ(values<int32_t>(ei.outputs[0]), (std::vector<int32_t>(2, std::numeric_limits<int32_t>::min())));
  auto i64 = reduce_attr(Tensor::from_values<int64_t>({-5, -7, 3, -9}, Shape{2, 2}), std::vector<int64_t>{1}, 0);
  EXPECT_EQ(values<int64_t>(i64.outputs[0]), (std::vector<int64_t>{-5, 3}));
  auto u8 = reduce_attr(Tensor::from_values<uint8_t>({200, 7, 255, 0}, Shape{4}), std::nullopt, 0);
  EXPECT_EQ(values<uint8_t>(u8.outputs[0]), (std::vector<uint8_t>{255}));
  auto i8 = reduce_attr(Tensor::from_values<int8_t>({-128, -3}, Shape{2}), std::nullopt, 0);
  EXPECT_EQ(values<int8_t>(i8.outputs[0]), (std::vector<int8_t>{-3}));
  auto d = reduce_attr(Tensor::from_values<double>({0.5, 1.5, -2}, Shape{3}), std::nullopt, 0);
  EXPECT_EQ(values<double>(d.outputs[0]), (std::vector<double>{1.5}));
}

TEST(OpsReduceMaxTest, RandomShapesMatchNaive) {
  std::mt19937 rng(8);
  std::uniform_int_distribution<int> v(-50, 50);
  for (int trial = 0; trial < 60; ++trial) {
    const int rank = 1 + trial % 4;
    std::vector<int64_t> s;
    for (int d = 0; d < rank; ++d) s.push_back(1 + static_cast<int64_t>(rng() % 4));
    int64_t n = 1;
    for (auto d : s) n *= d;
    std::vector<int32_t> x(static_cast<size_t>(n));
    for (auto& e : x) e = v(rng);
    std::vector<int64_t> axes;
    std::vector<bool> red(static_cast<size_t>(rank));
    for (int d = 0; d < rank; ++d)
      if (rng() % 2) {
        axes.push_back(rng() % 2 ? d : d - rank);
        red[static_cast<size_t>(d)] = true;
      }
    if (axes.empty()) red.assign(static_cast<size_t>(rank), true);
    const int64_t keep = trial % 2;
    auto r = reduce_attr(Tensor::from_values(std::span<const int32_t>(x), Shape(std::span<const int64_t>(s))),
                         axes.empty() ? std::nullopt : std::optional(axes), keep);
    // Naive: output shape with reduced dims as 1, then max over matching input elements.
    std::vector<int64_t> os;
    for (int d = 0; d < rank; ++d) os.push_back(red[static_cast<size_t>(d)] ? 1 : s[static_cast<size_t>(d)]);
    int64_t on = 1;
    for (auto d : os) on *= d;
    std::vector<int32_t> want(static_cast<size_t>(on), std::numeric_limits<int32_t>::min());
    for (int64_t f = 0; f < n; ++f) {
      int64_t rem = f, o = 0, mul = 1;
      for (int d = rank - 1; d >= 0; --d) {
        const int64_t i = rem % s[static_cast<size_t>(d)];
        rem /= s[static_cast<size_t>(d)];
        o += (red[static_cast<size_t>(d)] ? 0 : i) * mul;
        mul *= os[static_cast<size_t>(d)];
      }
      want[static_cast<size_t>(o)] = std::max(want[static_cast<size_t>(o)], x[static_cast<size_t>(f)]);
    }
    std::vector<int64_t> expect_shape;
    for (int d = 0; d < rank; ++d)
      if (!red[static_cast<size_t>(d)] || keep) expect_shape.push_back(os[static_cast<size_t>(d)]);
    ASSERT_EQ(r.outputs[0].shape(), Shape(std::span<const int64_t>(expect_shape))) << trial;
    ASSERT_EQ(values<int32_t>(r.outputs[0]), want) << trial;
  }
}

TEST(OpsReduceMaxTest, Errors) {
  Tensor x = f32({1, 2}, {2});
  expect_error([&] { reduce_attr(x, std::vector<int64_t>{1}); }, ErrorKind::InvalidModel, "axis 1");
  expect_error([&] { reduce_attr(x, std::vector<int64_t>{0, -1}); }, ErrorKind::InvalidModel, "twice");
  expect_error([&] { reduce_attr(Tensor::zeros(DType::F16, Shape{2}), std::nullopt); }, ErrorKind::Unsupported,
               "float16");
  OpCase c;
  c.op_type = "ReduceMax";
  c.opset = 18;
  c.inputs = {x, Tensor::from_values<float>({0}, Shape{1})};
  c.constant_inputs = {false, true};
  expect_error([&] { run_op(c); }, ErrorKind::InvalidModel, "axes must be int64");
}

}  // namespace
}  // namespace onemodel::test
