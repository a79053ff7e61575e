// Conv and ConvTranspose operators (ops-conv.md): output shapes for every auto_pad mode, output_shape and
// output_padding, bias, and typed errors naming the node. Expected values are hand-computed.
#include <gtest/gtest.h>

#include <vector>

#include "ops_test_util.h"

namespace onemodel::test {
namespace {

Tensor iota(const Shape& s, float start = 0.0f) {
  std::vector<float> v(static_cast<size_t>(s.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + static_cast<float>(i);
  return Tensor::from_values<float>(std::span<const float>(v), s);
}

Tensor filled(const Shape& s, float value) {
  std::vector<float> v(static_cast<size_t>(s.numel()), value);
  return Tensor::from_values<float>(std::span<const float>(v), s);
}

OpCase conv(std::vector<Tensor> inputs, std::vector<ir::Attribute> attrs, bool exact = false) {
  OpCase c;
  c.op_type = "Conv";
  c.opset = 11;
  c.inputs = std::move(inputs);
  c.attrs = std::move(attrs);
  c.exact = exact;
  return c;
}

TEST(OpsConv, ThreeByThreeWithPaddingAndBias) {
  // 1x1x3x3 input 0..8, all-ones 3x3 kernel, pads 1, bias 10: each output is 10 + the sum of its 3x3
  // neighbourhood (hand-computed).
  for (bool exact : {false, true}) {
    auto r = run_op(
        conv({iota(Shape{1, 1, 3, 3}), filled(Shape{1, 1, 3, 3}, 1.0f), Tensor::from_values<float>({10.0f}, Shape{1})},
             {attr_ints("pads", {1, 1, 1, 1})}, exact));
    ASSERT_EQ(r.outputs[0].shape(), (Shape{1, 1, 3, 3}));
    EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{18, 25, 22, 31, 46, 37, 30, 43, 34}));
  }
}

TEST(OpsConv, AutoPadShapes) {
  const Tensor x = iota(Shape{1, 1, 5, 7});
  const Tensor w = filled(Shape{2, 1, 3, 2}, 1.0f);
  // SAME_UPPER, stride 2: out = ceil(5/2) x ceil(7/2) = 3 x 4.
  auto r = run_op(conv({x, w}, {attr_s("auto_pad", "SAME_UPPER"), attr_ints("strides", {2, 2})}));
  EXPECT_EQ(r.outputs[0].shape(), (Shape{1, 2, 3, 4}));
  // Width: total pad = (4-1)*2 + 2 - 7 = 1; UPPER puts it after: output (0,0) covers rows -1..1 (total pad
  // (3-1)*2+3-5 = 2, one before) and columns 0..1: 0+1+7+8 = 16.
  EXPECT_EQ(values<float>(r.outputs[0])[0], 16.0f);
  // SAME_LOWER: the odd width pad goes before: output (0,0) covers columns -1..0: 0 + 7 = 7.
  r = run_op(conv({x, w}, {attr_s("auto_pad", "SAME_LOWER"), attr_ints("strides", {2, 2})}));
  EXPECT_EQ(r.outputs[0].shape(), (Shape{1, 2, 3, 4}));
  EXPECT_EQ(values<float>(r.outputs[0])[0], 7.0f);
  // VALID ignores pads: (5-3)/1+1 x (7-2)/1+1.
  r = run_op(conv({x, w}, {attr_s("auto_pad", "VALID"), attr_ints("pads", {1, 1, 1, 1})}));
  EXPECT_EQ(r.outputs[0].shape(), (Shape{1, 2, 3, 6}));
  // Missing kernel_shape is read from W; dilation 2 makes the window 5 x 3.
  r = run_op(conv({x, w}, {attr_ints("dilations", {2, 2})}));
  EXPECT_EQ(r.outputs[0].shape(), (Shape{1, 2, 1, 5}));
}

TEST(OpsConv, OneAndThreeSpatialAxes) {
  // 1-D: [0..5] * [1, 2] with stride 2: 0*1+1*2, 2+6, 4+10.
  auto r = run_op(conv({iota(Shape{1, 1, 6}), Tensor::from_values<float>({1.0f, 2.0f}, Shape{1, 1, 2})},
                       {attr_ints("strides", {2})}));
  EXPECT_EQ(r.outputs[0].shape(), (Shape{1, 1, 3}));
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{2, 8, 14}));
  // 3-D 2x2x2 all-ones kernel over 0..7: the sum 28.
  r = run_op(conv({iota(Shape{1, 1, 2, 2, 2}), filled(Shape{1, 1, 2, 2, 2}, 1.0f)}, {}, true));
  EXPECT_EQ(r.outputs[0].shape(), (Shape{1, 1, 1, 1, 1}));
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{28}));
}

TEST(OpsConv, GroupsAndDepthwise) {
  // Two groups of one channel each, multiplier 2: channel 0 of [1..4] and channel 1 of [5..8], kernels of ones
  // and twos (1x1): outputs x, 2x per input channel.
  auto r = run_op(
      conv({iota(Shape{1, 2, 2, 2}, 1.0f), Tensor::from_values<float>({1.0f, 2.0f, 1.0f, 2.0f}, Shape{4, 1, 1, 1})},
           {attr_i("group", 2)}, true));
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{1, 2, 3, 4, 2, 4, 6, 8, 5, 6, 7, 8, 10, 12, 14, 16}));
}

TEST(OpsConv, Errors) {
  const Tensor x = iota(Shape{1, 2, 4, 4});
  const Tensor w = filled(Shape{2, 2, 3, 3}, 1.0f);
  expect_error(
      [&] {
        run_op(conv({x, filled(Shape{2, 1, 3, 3}, 1.0f)}, {}));
      },
      ErrorKind::InvalidModel, "input channels");
  expect_error([&] { run_op(conv({x, w}, {attr_i("group", 3)})); }, ErrorKind::InvalidModel, "group 3");
  expect_error([&] { run_op(conv({x, w}, {attr_i("group", 0)})); }, ErrorKind::InvalidModel, "group");
  expect_error([&] { run_op(conv({x, w}, {attr_ints("strides", {1})})); }, ErrorKind::InvalidModel, "strides");
  expect_error([&] { run_op(conv({x, w}, {attr_ints("strides", {0, 1})})); }, ErrorKind::InvalidModel, "strides");
  expect_error([&] { run_op(conv({x, w}, {attr_ints("pads", {1, 1})})); }, ErrorKind::InvalidModel, "pads");
  expect_error([&] { run_op(conv({x, w}, {attr_ints("pads", {-1, 0, 0, 0})})); }, ErrorKind::InvalidModel, "pads");
  expect_error(
      [&] {
        run_op(conv({x, w}, {attr_ints("kernel_shape", {2, 2})}));
      },
      ErrorKind::InvalidModel, "kernel_shape");
  expect_error([&] { run_op(conv({x, w}, {attr_s("auto_pad", "SAME")})); }, ErrorKind::InvalidModel, "auto_pad");
  expect_error(
      [&] {
        run_op(conv({x, w}, {attr_ints("dilations", {3, 3})}));
      },
      ErrorKind::InvalidModel, "does not fit");
  expect_error([&] { run_op(conv({x, w, filled(Shape{3}, 0.0f)}, {})); }, ErrorKind::InvalidModel, "B [3]");
  expect_error([&] { run_op(conv({iota(Shape{2, 4}), w}, {})); }, ErrorKind::InvalidModel, "rank 3");
  expect_error([&] { run_op(conv({x, filled(Shape{2, 2, 3}, 1.0f)}, {})); }, ErrorKind::InvalidModel, "rank of X");
  expect_error(
      [&] {
        run_op(conv({iota(Shape{1, 1, 2, 2, 2, 2}), filled(Shape{1, 1, 1, 1, 1, 1}, 1.0f)}, {}));
      },
      ErrorKind::Unsupported, "spatial axes");
  const Tensor xd = Tensor::from_values<double>({1.0, 2.0, 3.0, 4.0}, Shape{1, 1, 2, 2});
  expect_error(
      [&] {
        run_op(conv({xd, Tensor::from_values<double>({1.0}, Shape{1, 1, 1, 1})}, {}));
      },
      ErrorKind::Unsupported, "float64");
  // The node is named in the message.
  expect_error([&] { run_op(conv({x, w}, {attr_i("group", 3)})); }, ErrorKind::InvalidModel, "n0");
}

OpCase conv_t(std::vector<Tensor> inputs, std::vector<ir::Attribute> attrs, bool exact = false) {
  OpCase c = conv(std::move(inputs), std::move(attrs), exact);
  c.op_type = "ConvTranspose";
  return c;
}

TEST(OpsConvTranspose, ShapesAndValues) {
  // 1x1x2x2 input [1 2; 3 4], 1x1x2x2 kernel of ones, stride 1: every output sums the inputs that reach it.
  auto r = run_op(conv_t({iota(Shape{1, 1, 2, 2}, 1.0f), filled(Shape{1, 1, 2, 2}, 1.0f)}, {}, true));
  ASSERT_EQ(r.outputs[0].shape(), (Shape{1, 1, 3, 3}));
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{1, 3, 2, 4, 10, 6, 3, 7, 4}));
  // Stride 2 with pads 1: natural size 2*(2-1)+2 = 4, minus 2 = 2; the kept middle has one tap each.
  r = run_op(conv_t({iota(Shape{1, 1, 2, 2}, 1.0f), filled(Shape{1, 1, 2, 2}, 1.0f)},
                    {attr_ints("strides", {2, 2}), attr_ints("pads", {1, 1, 1, 1})}));
  ASSERT_EQ(r.outputs[0].shape(), (Shape{1, 1, 2, 2}));
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{1, 2, 3, 4}));
  // output_padding adds one row/column at the end (zeros here, nothing lands there with kernel 1).
  r = run_op(conv_t({iota(Shape{1, 1, 2, 2}, 1.0f), filled(Shape{1, 1, 1, 1}, 1.0f)},
                    {attr_ints("strides", {2, 2}), attr_ints("output_padding", {1, 1})}));
  ASSERT_EQ(r.outputs[0].shape(), (Shape{1, 1, 4, 4}));
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4, 0, 0, 0, 0, 0}));
  // SAME_UPPER: output n * s = 4 (natural 2*(2-1)+3 = 5, one extra element cut at the end).
  r = run_op(conv_t({iota(Shape{1, 1, 2}, 1.0f), filled(Shape{1, 1, 3}, 1.0f)},
                    {attr_ints("strides", {2}), attr_s("auto_pad", "SAME_UPPER")}));
  ASSERT_EQ(r.outputs[0].shape(), (Shape{1, 1, 4}));
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{1, 1, 3, 2}));
  // SAME_LOWER cuts the extra element at the start.
  r = run_op(conv_t({iota(Shape{1, 1, 2}, 1.0f), filled(Shape{1, 1, 3}, 1.0f)},
                    {attr_ints("strides", {2}), attr_s("auto_pad", "SAME_LOWER")}));
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{1, 3, 2, 2}));
  // output_shape larger than the kernel reaches: the surplus is zeros at the end; groups 2 and a bias.
  r = run_op(conv_t(
      {iota(Shape{1, 2, 2}, 1.0f), filled(Shape{2, 1, 1}, 1.0f), Tensor::from_values<float>({0.5f, -1.0f}, Shape{2})},
      {attr_i("group", 2), attr_ints("output_shape", {3})}));
  ASSERT_EQ(r.outputs[0].shape(), (Shape{1, 2, 3}));
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{1.5f, 2.5f, 0.5f, 2.0f, 3.0f, -1.0f}));
}

TEST(OpsConvTranspose, Errors) {
  const Tensor x = iota(Shape{1, 2, 3, 3});
  expect_error(
      [&] {
        run_op(conv_t({x, filled(Shape{3, 1, 2, 2}, 1.0f)}, {}));
      },
      ErrorKind::InvalidModel, "input channels");
  expect_error(
      [&] {
        run_op(conv_t({x, filled(Shape{2, 1, 2, 2}, 1.0f)}, {attr_ints("output_padding", {2, 0})}));
      },
      ErrorKind::InvalidModel, "output_padding");
  expect_error(
      [&] {
        run_op(conv_t({x, filled(Shape{2, 1, 2, 2}, 1.0f)}, {attr_ints("output_shape", {5})}));
      },
      ErrorKind::InvalidModel, "output_shape");
  expect_error(
      [&] {
        run_op(conv_t({x, filled(Shape{2, 1, 2, 2}, 1.0f)}, {attr_ints("pads", {3, 3, 3, 3})}));
      },
      ErrorKind::InvalidModel, "pads");
  expect_error(
      [&] {
        run_op(conv_t({x, filled(Shape{2, 1, 2, 2}, 1.0f), filled(Shape{3}, 1.0f)}, {attr_i("group", 2)}));
      },
      ErrorKind::InvalidModel, "B [3]");
}

}  // namespace
}  // namespace onemodel::test
