// TopK ties, Unique orders, NonZero and Compress (data-dependent outputs, run as the session runs them:
// run() allocates from the arena). Expected values by hand, numpy calls quoted.
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

// Runs a data-dependent kernel: no infer, outputs allocated by run().
std::vector<Tensor> run_dynamic(const std::string& type, std::vector<Tensor> inputs, std::vector<ir::Attribute> attrs,
                                size_t nout) {
  OpCase c;
  c.op_type = type;
  c.opset = 13;
  c.inputs = std::move(inputs);
  c.attrs = std::move(attrs);
  c.num_outputs = nout;
  const rt::OpDef* def = rt::find_op("", type, c.opset);
  EXPECT_NE(def, nullptr);
  const ir::Node node = make_node(c);
  const rt::NodeInfo info(node, false);
  auto k = def->factory(info);
  EXPECT_TRUE(k->flags().outputs_data_dependent);
  std::vector<Tensor> outs(nout);
  TestArena arena;
  rt::RunContext ctx{info, c.inputs, outs, false, nullptr, &arena, nullptr};
  k->run(ctx);
  return outs;
}

OpResult topk(std::vector<float> x, int64_t k, int64_t largest) {
  OpCase c;
  c.op_type = "TopK";
  c.opset = 11;
  c.inputs = {f32(x, {static_cast<int64_t>(x.size())}), i64({k})};
  c.constant_inputs = {false, true};
  c.attrs = {attr_i("largest", largest)};
  c.num_outputs = 2;
  return run_op(c);
}

TEST(OpsShapeTopKTest, TiesKeepInputOrder) {
  OpResult r = topk({1, 3, 3, 2, 3, 1}, 4, 1);
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{3, 3, 3, 2}));
  EXPECT_EQ(values<int64_t>(r.outputs[1]), (std::vector<int64_t>{1, 2, 4, 3}));
  r = topk({1, 3, 3, 2, 3, 1}, 3, 0);
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{1, 1, 2}));
  EXPECT_EQ(values<int64_t>(r.outputs[1]), (std::vector<int64_t>{0, 5, 3}));
}

TEST(OpsShapeTopKTest, NaNIsGreatestAndKOutOfRangeIsAnError) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  OpResult r = topk({1, nan, 2}, 2, 1);
  EXPECT_EQ(values<int64_t>(r.outputs[1]), (std::vector<int64_t>{1, 2}));
  r = topk({1, nan, 2}, 3, 0);
  EXPECT_EQ(values<int64_t>(r.outputs[1]), (std::vector<int64_t>{0, 2, 1}));
  expect_error([] { topk({1, 2}, 3, 1); }, ErrorKind::InvalidModel, "k 3");
  EXPECT_EQ(topk({1, 2}, 0, 1).outputs[0].numel(), 0);
}

TEST(OpsShapeUniqueTest, SortedAndUnsorted) {
  // np.unique([2,1,1,3,4,3], return_index, return_inverse, return_counts)
  auto o = run_dynamic("Unique", {f32({2, 1, 1, 3, 4, 3}, {6})}, {}, 4);
  EXPECT_EQ(values<float>(o[0]), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(values<int64_t>(o[1]), (std::vector<int64_t>{1, 0, 3, 4}));
  EXPECT_EQ(values<int64_t>(o[2]), (std::vector<int64_t>{1, 0, 0, 2, 3, 2}));
  EXPECT_EQ(values<int64_t>(o[3]), (std::vector<int64_t>{2, 1, 2, 1}));
  o = run_dynamic("Unique", {f32({2, 1, 1, 3, 4, 3}, {6})}, {attr_i("sorted", 0)}, 4);
  EXPECT_EQ(values<float>(o[0]), (std::vector<float>{2, 1, 3, 4}));
  EXPECT_EQ(values<int64_t>(o[1]), (std::vector<int64_t>{0, 1, 3, 4}));
  EXPECT_EQ(values<int64_t>(o[2]), (std::vector<int64_t>{0, 1, 1, 2, 3, 2}));
  EXPECT_EQ(values<int64_t>(o[3]), (std::vector<int64_t>{1, 2, 2, 1}));
}

TEST(OpsShapeUniqueTest, EmptyInput) {
  auto o = run_dynamic("Unique", {f32({}, {0})}, {}, 4);
  EXPECT_EQ(o[0].shape(), Shape{0});
  EXPECT_EQ(o[2].shape(), Shape{0});
}

TEST(OpsShapeNonZeroTest, NegativeZeroIsZeroNaNIsNot) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto o = run_dynamic("NonZero", {f32({-0.0f, nan, 0, 2}, {2, 2})}, {}, 1);
  EXPECT_EQ(o[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(values<int64_t>(o[0]), (std::vector<int64_t>{0, 1, 1, 1}));
  o = run_dynamic("NonZero", {f32({5}, {})}, {}, 1);
  EXPECT_EQ(o[0].shape(), (Shape{1, 1}));
}

TEST(OpsShapeCompressTest, ShortConditionAndTooLongCondition) {
  std::vector<uint8_t> c{0, 1};
  Tensor cond = Tensor::copy_of(DType::Bool, Shape{2}, c.data(), 2);
  auto o = run_dynamic("Compress", {f32({1, 2, 3, 4, 5, 6}, {3, 2}), cond}, {attr_i("axis", 0)}, 1);
  EXPECT_EQ(values<float>(o[0]), (std::vector<float>{3, 4}));
  std::vector<uint8_t> c3{1, 0, 1};
  Tensor cond3 = Tensor::copy_of(DType::Bool, Shape{3}, c3.data(), 3);
  expect_error(
      [&] {
        run_dynamic("Compress", {f32({1, 2, 3, 4, 5, 6}, {3, 2}), cond3}, {attr_i("axis", 1)}, 1);
      },
      ErrorKind::InvalidInput, "condition");
}

}  // namespace
}  // namespace onemodel::test
