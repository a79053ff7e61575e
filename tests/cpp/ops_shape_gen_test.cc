// Generators and layout operators: Range's double-precision count, ConstantOfShape / Tile / Expand edge
// cases, ReverseSequence and EyeLike bounds, Einsum forms. Expected values by hand (numpy calls quoted).
#include <limits>

#include "ops/ops.h"
#include "ops_test_util.h"

namespace onemodel::test {
namespace {

Tensor f32(std::vector<float> v, std::vector<int64_t> s) {
  return Tensor::from_values(std::span<const float>(v), Shape(std::span<const int64_t>(s)));
}
Tensor i64(std::vector<int64_t> v) {
  return Tensor::from_values(std::span<const int64_t>(v), Shape{static_cast<int64_t>(v.size())});
}

OpCase op(std::string type, std::vector<Tensor> inputs, std::vector<bool> constant,
          std::vector<ir::Attribute> attrs = {}) {
  OpCase c;
  c.op_type = std::move(type);
  c.opset = 17;
  c.inputs = std::move(inputs);
  c.constant_inputs = std::move(constant);
  c.attrs = std::move(attrs);
  return c;
}

TEST(OpsShapeRangeTest, CountIsTakenInDoublePrecision) {
  // Range(0, 0.3, 0.1) in float32: (double)0.3f / (double)0.1f = 3.000000074505805 (numpy), ceil = 4 elements
  // (ONNX Runtime agrees, ops-shape-indexing.md); element i is 0 + i*0.1f in float32.
  OpResult r = run_op(op("Range", {f32({0}, {}), f32({0.3f}, {}), f32({0.1f}, {})}, {true, true, true}));
  ASSERT_EQ(r.outputs[0].numel(), 4);
  EXPECT_EQ(values<float>(r.outputs[0])[3], 3.0f * 0.1f);
  // Negative delta and an empty range.
  std::vector<int32_t> s{10}, l{4}, d{-3};
  auto i32 = [](std::vector<int32_t>& v) { return Tensor::from_values(std::span<const int32_t>(v), Shape{}); };
  r = run_op(op("Range", {i32(s), i32(l), i32(d)}, {true, true, true}));
  EXPECT_EQ(values<int32_t>(r.outputs[0]), (std::vector<int32_t>{10, 7}));
  r = run_op(op("Range", {i32(l), i32(s), i32(d)}, {true, true, true}));
  EXPECT_EQ(r.outputs[0].numel(), 0);
  std::vector<int32_t> z{0};
  expect_error(
      [&] {
        run_op(op("Range", {i32(s), i32(l), i32(z)}, {true, true, true}));
      },
      ErrorKind::InvalidModel, "delta is zero");
}

TEST(OpsShapeFillTest, ConstantOfShapeTileExpand) {
  OpResult r = run_op(op("ConstantOfShape", {i64({2, 0})}, {true}));
  EXPECT_EQ(r.outputs[0].shape(), (Shape{2, 0}));
  EXPECT_EQ(r.outputs[0].dtype(), DType::F32);
  expect_error([] { run_op(op("ConstantOfShape", {i64({-1})}, {true})); }, ErrorKind::InvalidModel, "negative");
  // np.tile([[1,2]], (2, 0)) has shape (2, 0); np.tile([1,2], 2) = [1,2,1,2]
  r = run_op(op("Tile", {f32({1, 2}, {1, 2}), i64({2, 0})}, {false, true}));
  EXPECT_EQ(r.outputs[0].shape(), (Shape{2, 0}));
  r = run_op(op("Tile", {f32({1, 2}, {2}), i64({2})}, {false, true}));
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{1, 2, 1, 2}));
  // Expand is bidirectional: [3,1] with shape [1] stays [3,1]; with [2,1,4] becomes [2,3,4].
  r = run_op(op("Expand", {f32({1, 2, 3}, {3, 1}), i64({1})}, {false, true}));
  EXPECT_EQ(r.outputs[0].shape(), (Shape{3, 1}));
  r = run_op(op("Expand", {f32({1, 2, 3}, {3, 1}), i64({2, 1, 2})}, {false, true}));
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
  expect_error(
      [] {
        run_op(op("Expand", {f32({1, 2, 3}, {3}), i64({2})}, {false, true}));
      },
      ErrorKind::InvalidModel, "cannot expand");
}

TEST(OpsShapeLayoutTest, ReverseSequenceChecksLengths) {
  // time-major [T=3, B=2]: batch 0 reverses 3, batch 1 reverses 2 -> [[4,3],[2,1],[0,5]]
  OpResult r = run_op(op("ReverseSequence", {f32({0, 1, 2, 3, 4, 5}, {3, 2}), i64({3, 2})}, {false, false}));
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{4, 3, 2, 1, 0, 5}));
  expect_error(
      [] {
        run_op(op("ReverseSequence", {f32({0, 1, 2, 3, 4, 5}, {3, 2}), i64({4, 1})}, {false, false}));
      },
      ErrorKind::InvalidInput, "sequence length 4");
}

TEST(OpsShapeLayoutTest, EyeLikeFarDiagonals) {
  OpResult r = run_op(op("EyeLike", {f32({0, 0, 0, 0, 0, 0}, {2, 3})}, {false}, {attr_i("k", 2)}));
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{0, 0, 1, 0, 0, 0}));
  r = run_op(
      op("EyeLike", {f32({0, 0, 0, 0, 0, 0}, {2, 3})}, {false}, {attr_i("k", std::numeric_limits<int64_t>::max())}));
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>(6, 0.0f)));
}

ir::Attribute equation(const std::string& e) {
  ir::Attribute a;
  a.name = "equation";
  a.type = ir::AttrType::String;
  a.s = e;
  return a;
}

TEST(OpsShapeEinsumTest, ExplicitImplicitDiagonalEllipsis) {
  const Tensor a = f32({1, 2, 3, 4}, {2, 2}), b = f32({5, 6, 7, 8}, {2, 2});
  // [[1,2],[3,4]] @ [[5,6],[7,8]] = [[19,22],[43,50]]
  EXPECT_EQ(values<float>(run_op(op("Einsum", {a, b}, {false, false}, {equation("ij,jk->ik")})).outputs[0]),
            (std::vector<float>{19, 22, 43, 50}));
  // Implicit "ij,jk" is the same; "ji" (implicit) is the transpose: output labels sorted -> "ij".
  EXPECT_EQ(values<float>(run_op(op("Einsum", {a, b}, {false, false}, {equation("ij,jk")})).outputs[0]),
            (std::vector<float>{19, 22, 43, 50}));
  EXPECT_EQ(values<float>(run_op(op("Einsum", {a}, {false}, {equation("ji")})).outputs[0]),
            (std::vector<float>{1, 3, 2, 4}));
  // Trace via a repeated label: 1 + 4.
  EXPECT_EQ(values<float>(run_op(op("Einsum", {a}, {false}, {equation("ii->")})).outputs[0]), (std::vector<float>{5}));
  // Ellipsis broadcasting: [2,2] ... with [1,2]: "...j,...j->..." row dot [5,6]: [17, 39]
  EXPECT_EQ(
      values<float>(
          run_op(op("Einsum", {a, f32({5, 6}, {1, 2})}, {false, false}, {equation("...j,...j->...")})).outputs[0]),
      (std::vector<float>{17, 39}));
  expect_error(
      [&] {
        run_op(op("Einsum", {a, b}, {false, false}, {equation("ij->i")}));
      },
      ErrorKind::InvalidModel, "terms");
}

}  // namespace
}  // namespace onemodel::test
