// Shape and indexing operators: what the ONNX backend cases do not cover (bad indices, negative indices,
// Slice's end sentinels, empty tensors, Pad reflect beyond one period, Split forms). Expected values are
// hand-computed (numpy one-liners quoted where used).
#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>

#include "ops/ops.h"
#include "ops_test_util.h"

namespace onemodel::test {
namespace {

Tensor f32(std::vector<float> v, std::vector<int64_t> s) {
  return Tensor::from_values(std::span<const float>(v), Shape(std::span<const int64_t>(s)));
}
Tensor i64v(std::vector<int64_t> v, std::vector<int64_t> s) {
  return Tensor::from_values(std::span<const int64_t>(v), Shape(std::span<const int64_t>(s)));
}
Tensor i64(std::vector<int64_t> v) { return i64v(v, {static_cast<int64_t>(v.size())}); }
Tensor iota(int64_t n, std::vector<int64_t> s) {
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  return f32(v, s);
}

OpCase op(std::string type, std::vector<Tensor> inputs, std::vector<ir::Attribute> attrs = {}, int64_t opset = 18) {
  OpCase c;
  c.op_type = std::move(type);
  c.opset = opset;
  c.inputs = std::move(inputs);
  c.attrs = std::move(attrs);
  c.constant_inputs.assign(c.inputs.size(), true);
  c.constant_inputs[0] = false;
  return c;
}

TEST(OpsShapeGatherTest, NegativeIndicesCountFromTheEnd) {
  // np.take(np.arange(6).reshape(2,3), [-1, 0], axis=1) = [[2,0],[5,3]]
  OpResult r = run_op(op("Gather", {iota(6, {2, 3}), i64({-1, 0})}, {attr_i("axis", 1)}));
  EXPECT_EQ(r.outputs[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{2, 0, 5, 3}));
}

TEST(OpsShapeGatherTest, OutOfRangeIndexIsInvalidInput) {
  expect_error(
      [] {
        run_op(op("Gather", {iota(6, {2, 3}), i64({3})}, {attr_i("axis", 1)}));
      },
      ErrorKind::InvalidInput, "index 3");
  expect_error(
      [] {
        run_op(op("Gather", {iota(6, {2, 3}), i64({-4})}, {attr_i("axis", 1)}));
      },
      ErrorKind::InvalidInput, "n0");
}

TEST(OpsShapeGatherTest, EmptyIndicesGiveAnEmptyOutput) {
  OpResult r = run_op(op("Gather", {iota(6, {2, 3}), i64v({}, {0})}, {attr_i("axis", 0)}));
  EXPECT_EQ(r.outputs[0].shape(), (Shape{0, 3}));
}

TEST(OpsShapeGatherTest, GatherElementsChecksIndices) {
  // np.take_along_axis([[0,1],[2,3]], [[-1,0],[0,0]], 1) with -1 -> 1: [[1,0],[2,2]]
  OpResult r = run_op(op("GatherElements", {iota(4, {2, 2}), i64v({-1, 0, 0, 0}, {2, 2})}, {attr_i("axis", 1)}));
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{1, 0, 2, 2}));
  expect_error(
      [] {
        run_op(op("GatherElements", {iota(4, {2, 2}), i64v({0, 2}, {1, 2})}, {attr_i("axis", 1)}));
      },
      ErrorKind::InvalidInput, "index 2");
}

TEST(OpsShapeGatherTest, GatherNDOutOfRange) {
  expect_error(
      [] {
        run_op(op("GatherND", {iota(4, {2, 2}), i64v({0, 5}, {1, 2})}));
      },
      ErrorKind::InvalidInput, "index 5");
  // data[[1,-1]] = data[1][1] = 3
  OpResult r = run_op(op("GatherND", {iota(4, {2, 2}), i64v({1, -1}, {1, 2})}));
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{3}));
}

TEST(OpsShapeScatterTest, ScatterNDOutOfRangeAndReductions) {
  expect_error(
      [] {
        run_op(op("ScatterND", {iota(4, {4}), i64v({4}, {1, 1}), f32({9}, {1})}));
      },
      ErrorKind::InvalidInput, "index 4");
  // Duplicates fold in order: [0,1,2,3] add at 1 twice (10, 20) -> [0,31,2,3]
  OpResult r =
      run_op(op("ScatterND", {iota(4, {4}), i64v({1, -3}, {2, 1}), f32({10, 20}, {2})}, {attr_s("reduction", "add")}));
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{0, 31, 2, 3}));
  // max: u < o ? o : u, so a NaN update wins.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  r = run_op(op("ScatterND", {iota(4, {4}), i64v({2}, {1, 1}), f32({nan}, {1})}, {attr_s("reduction", "max")}));
  EXPECT_TRUE(std::isnan(values<float>(r.outputs[0])[2]));
  r = run_op(op("ScatterND", {iota(4, {4}), i64v({3, 0}, {2, 1}), f32({1, 5}, {2})}, {attr_s("reduction", "min")}));
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{0, 1, 2, 1}));
}

TEST(OpsShapeScatterTest, ScatterElementsOutOfRange) {
  expect_error(
      [] {
        run_op(op("ScatterElements", {iota(4, {2, 2}), i64v({-3}, {1, 1}), f32({7}, {1, 1})}, {attr_i("axis", 1)}));
      },
      ErrorKind::InvalidInput, "index -3");
}

OpResult slice(int64_t n, std::vector<int64_t> starts, std::vector<int64_t> ends, std::vector<int64_t> steps) {
  return run_op(op("Slice", {iota(n, {n}), i64(starts), i64(ends), i64({0}), i64(steps)}, {}, 13));
}

TEST(OpsShapeSliceTest, EndSentinels) {
  // ONNX Runtime: x[INT64_MAX : INT32_MAX : -1] of five elements is all five reversed.
  EXPECT_EQ(values<float>(slice(5, {INT64_MAX}, {INT32_MAX}, {-1}).outputs[0]), (std::vector<float>{4, 3, 2, 1, 0}));
  EXPECT_EQ(values<float>(slice(5, {-1}, {INT64_MAX}, {-1}).outputs[0]), (std::vector<float>{4, 3, 2, 1, 0}));
  EXPECT_EQ(values<float>(slice(5, {-1}, {INT64_MIN}, {-2}).outputs[0]), (std::vector<float>{4, 2, 0}));
  // An end of 100 with a negative step clamps to n-1: nothing.
  EXPECT_EQ(slice(5, {4}, {100}, {-1}).outputs[0].numel(), 0);
  // np.arange(5)[1:INT64_MAX:2] = [1,3]; huge steps select one element.
  EXPECT_EQ(values<float>(slice(5, {1}, {INT64_MAX}, {2}).outputs[0]), (std::vector<float>{1, 3}));
  EXPECT_EQ(values<float>(slice(5, {0}, {5}, {INT64_MAX}).outputs[0]), (std::vector<float>{0}));
  EXPECT_EQ(values<float>(slice(5, {-100}, {-2}, {1}).outputs[0]), (std::vector<float>{0, 1, 2}));
  EXPECT_EQ(values<float>(slice(5, {3}, {-4}, {-1}).outputs[0]), (std::vector<float>{3, 2}));
}

TEST(OpsShapeSliceTest, StepZeroAndRepeatedAxesAreInvalidModel) {
  expect_error([] { slice(5, {0}, {5}, {0}); }, ErrorKind::InvalidModel, "step 0");
  expect_error(
      [] {
        run_op(op("Slice", {iota(4, {2, 2}), i64({0, 0}), i64({1, 1}), i64({1, -1})}, {}, 13));
      },
      ErrorKind::InvalidModel, "repeated");
}

TEST(OpsShapeSliceTest, EmptyAxis) {
  OpResult r = run_op(op("Slice", {iota(0, {0, 3}), i64({0}), i64({2}), i64({1})}, {}, 13));
  EXPECT_EQ(r.outputs[0].shape(), (Shape{0, 2}));
}

OpResult pad(std::string mode, int64_t n, int64_t before, int64_t after) {
  return run_op(op("Pad", {iota(n, {n}), i64({before, after})}, {attr_s("mode", mode)}, 19));
}

TEST(OpsShapePadTest, ReflectBeyondOnePeriod) {
  // np.pad([0,1,2], 5, "reflect"): period 4 continues past one reflection
  EXPECT_EQ(values<float>(pad("reflect", 3, 5, 5).outputs[0]),
            (std::vector<float>{1, 0, 1, 2, 1, 0, 1, 2, 1, 0, 1, 2, 1}));
  // An extent of 1 repeats its only element.
  EXPECT_EQ(values<float>(pad("reflect", 1, 2, 1).outputs[0]), (std::vector<float>{0, 0, 0, 0}));
  // np.pad([0,1,2], (2,1), 'edge') and 'wrap'
  EXPECT_EQ(values<float>(pad("edge", 3, 2, 1).outputs[0]), (std::vector<float>{0, 0, 0, 1, 2, 2}));
  EXPECT_EQ(values<float>(pad("wrap", 3, 4, 1).outputs[0]), (std::vector<float>{2, 0, 1, 2, 0, 1, 2, 0}));
  // A negative pad crops.
  EXPECT_EQ(values<float>(pad("constant", 4, -1, 1).outputs[0]), (std::vector<float>{1, 2, 3, 0}));
}

TEST(OpsShapePadTest, EmptyAxisNonConstantIsAnError) {
  expect_error([] { pad("edge", 0, 1, 0); }, ErrorKind::InvalidModel, "empty axis");
}

TEST(OpsShapeOneHotTest, OutOfRangeGivesAllOffRow) {
  // depth 3, indices [0, -1, 3, -4]: rows [1,0,0], [0,0,1], [0,0,0], [0,0,0]
  OpCase c = op("OneHot", {i64({0, -1, 3, -4}), i64v({3}, {}), f32({0, 1}, {2})}, {}, 11);
  OpResult r = run_op(c);
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0}));
}

TEST(OpsShapeSplitTest, Opset18UnevenParts) {
  OpCase c = op("Split", {iota(5, {5})}, {attr_i("num_outputs", 3)}, 18);
  c.num_outputs = 3;
  OpResult r = run_op(c);
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{0, 1}));
  EXPECT_EQ(values<float>(r.outputs[1]), (std::vector<float>{2, 3}));
  EXPECT_EQ(values<float>(r.outputs[2]), (std::vector<float>{4}));
  OpCase d = op("Split", {iota(5, {5})}, {}, 13);
  d.num_outputs = 2;
  expect_error([&] { run_op(d); }, ErrorKind::InvalidModel, "equal parts");
}

TEST(OpsShapeViewsTest, SqueezeUnsqueezeFlattenAreViews) {
  OpResult r = run_op(op("Unsqueeze", {iota(6, {2, 3}), i64({-1, 0})}, {}, 13));
  EXPECT_TRUE(r.flags.view_of_input);
  EXPECT_EQ(r.outputs[0].shape(), (Shape{1, 2, 3, 1}));
  r = run_op(op("Squeeze", {iota(3, {1, 3, 1})}, {}, 13));
  EXPECT_EQ(r.outputs[0].shape(), (Shape{3}));
  expect_error([] { run_op(op("Squeeze", {iota(3, {1, 3}), i64({1})}, {}, 13)); }, ErrorKind::InvalidModel, "extent 3");
  r = run_op(op("Flatten", {iota(24, {2, 3, 4})}, {attr_i("axis", 0)}, 13));
  EXPECT_EQ(r.outputs[0].shape(), (Shape{1, 24}));
}

TEST(OpsShapeTransposeTest, AnyElementSizeMovesBits) {
  // int8 and int64 through the same byte path: transpose of [[1,2,3],[4,5,6]].
  std::vector<int8_t> a{1, 2, 3, 4, 5, 6};
  OpResult r = run_op(op("Transpose", {Tensor::from_values(std::span<const int8_t>(a), Shape{2, 3})}));
  EXPECT_EQ(values<int8_t>(r.outputs[0]), (std::vector<int8_t>{1, 4, 2, 5, 3, 6}));
  r = run_op(op("Transpose", {i64v({1, 2, 3, 4, 5, 6}, {2, 3})}));
  EXPECT_EQ(values<int64_t>(r.outputs[0]), (std::vector<int64_t>{1, 4, 2, 5, 3, 6}));
}

TEST(OpsShapeTransposeTest, AllRank4PermutationsMatchANaiveReference) {
  // Extents with a 1 (dropped), and 33/35 > 32 so the tiled path has partial tiles.
  const std::vector<int64_t> dims{2, 1, 33, 35};
  std::vector<int32_t> v(2 * 33 * 35);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int32_t>(i);
  const Tensor x = Tensor::from_values(std::span<const int32_t>(v), Shape{2, 1, 33, 35});
  std::vector<int64_t> perm{0, 1, 2, 3};
  do {
    OpResult r = run_op(op("Transpose", {x}, {attr_ints("perm", perm)}));
    const std::vector<int32_t> got = values<int32_t>(r.outputs[0]);
    const int64_t in_st[4] = {35 * 33, 35 * 33, 35, 1};
    int64_t od[4];
    for (int d = 0; d < 4; ++d) od[d] = dims[static_cast<size_t>(perm[static_cast<size_t>(d)])];
    size_t k = 0;
    bool ok = true;
    for (int64_t a = 0; a < od[0]; ++a)
      for (int64_t b = 0; b < od[1]; ++b)
        for (int64_t c = 0; c < od[2]; ++c)
          for (int64_t e = 0; e < od[3]; ++e, ++k) {
            const int64_t idx[4] = {a, b, c, e};
            int64_t src = 0;
            for (int d = 0; d < 4; ++d) src += idx[d] * in_st[perm[static_cast<size_t>(d)]];
            ok = ok && got[k] == v[static_cast<size_t>(src)];
          }
    EXPECT_TRUE(ok) << perm[0] << perm[1] << perm[2] << perm[3];
  } while (std::next_permutation(perm.begin(), perm.end()));
}

}  // namespace
}  // namespace onemodel::test
