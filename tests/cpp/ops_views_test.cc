// Reshape / Identity (views), Constant / Shape (constant outputs) and the operator table.
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

OpResult reshape(std::vector<int64_t> in_shape, std::vector<int64_t> spec, int64_t opset = 14, int64_t allowzero = 0,
                 bool constant = true) {
  int64_t n = 1;
  for (auto d : in_shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  OpCase c;
  c.op_type = "Reshape";
  c.opset = opset;
  if (allowzero) c.attrs = {attr_i("allowzero", allowzero)};
  c.inputs = {f32(v, in_shape), i64(spec)};
  c.constant_inputs = {false, constant};
  return run_op(c);
}

TEST(OpsReshapeTest, ZeroAndMinusOneRules) {
  // Shapes as onnx/backend/test/case/node/reshape.py produces them (numpy reshape with 0 copied).
  EXPECT_EQ(reshape({2, 3, 4}, {4, 2, 3}).outputs[0].shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(reshape({2, 3, 4}, {2, -1}).outputs[0].shape(), (Shape{2, 12}));
  EXPECT_EQ(reshape({2, 3, 4}, {-1, 2, 3}).outputs[0].shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(reshape({2, 3, 4}, {0, 4, 3}).outputs[0].shape(), (Shape{2, 4, 3}));
  EXPECT_EQ(reshape({2, 3, 4}, {2, 0, 4, 1}).outputs[0].shape(), (Shape{2, 3, 4, 1}));
  EXPECT_EQ(reshape({2, 3, 4}, {0, -1}).outputs[0].shape(), (Shape{2, 12}));
  EXPECT_EQ(reshape({2, 3, 4}, {24}).outputs[0].shape(), Shape{24});
  EXPECT_EQ(reshape({1}, {}).outputs[0].shape(), Shape{});
  EXPECT_EQ(reshape({}, {1, 1}).outputs[0].shape(), (Shape{1, 1}));
  // allowzero: 0 is a real extent.
  EXPECT_EQ(reshape({0, 3, 4}, {3, 4, 0}, 14, 1).outputs[0].shape(), (Shape{3, 4, 0}));
  // Without allowzero the 0 copies: [0,3,4] -> [0,3,4] via {0, 3, -1}? -1 with product 0 is ambiguous.
  EXPECT_EQ(reshape({0, 3, 4}, {0, 12}).outputs[0].shape(), (Shape{0, 12}));
  // Opset 5 ignores allowzero (not defined there).
  EXPECT_EQ(reshape({2, 3}, {0, 3}, 5).outputs[0].shape(), (Shape{2, 3}));
}

TEST(OpsReshapeTest, ViewFlagsRuntimeShapeAndCopyFallback) {
  auto r = reshape({2, 3}, {3, 2});
  EXPECT_TRUE(r.flags.view_of_input);
  EXPECT_TRUE(r.flags.exact);
  EXPECT_FALSE(r.needed_runtime_values);
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{0, 1, 2, 3, 4, 5}));  // row-major order kept
  auto d = reshape({2, 3}, {-1}, 14, 0, false);
  EXPECT_TRUE(d.needed_runtime_values);
  EXPECT_EQ(d.outputs[0].shape(), Shape{6});
}

TEST(OpsReshapeTest, Errors) {
  expect_error([] { reshape({2, 3}, {4, -1}); }, ErrorKind::InvalidModel, "cannot reshape");
  expect_error([] { reshape({2, 3}, {-1, -1}); }, ErrorKind::InvalidModel, "more than one -1");
  expect_error([] { reshape({2, 3}, {5}); }, ErrorKind::InvalidModel, "cannot reshape [2,3] to [5]");
  expect_error([] { reshape({2, 3}, {-2, 3}); }, ErrorKind::InvalidModel, "negative");
  expect_error([] { reshape({6}, {1, 0}); }, ErrorKind::InvalidModel, "no input extent");
  expect_error([] { reshape({0, 3}, {0, -1}, 14, 1); }, ErrorKind::InvalidModel, "both 0 and -1");
  expect_error([] { reshape({0, 3}, {0, -1}); }, ErrorKind::InvalidModel, "cannot infer -1");  // numpy refuses too
  EXPECT_EQ(reshape({0, 3}, {-1, 0}).outputs[0].shape(), (Shape{0, 3}));
  OpCase c;
  c.op_type = "Reshape";
  c.opset = 14;
  c.inputs = {f32({1}, {1}), Tensor::from_values<float>({1}, Shape{1})};
  c.constant_inputs = {false, true};
  expect_error([&] { run_op(c); }, ErrorKind::InvalidModel, "Reshape node 'n0': shape input must be int64");
}

TEST(OpsIdentityTest, StatesTheShape) {
  for (int64_t opset : {1, 13, 14, 16}) {
    OpCase c;
    c.op_type = "Identity";
    c.opset = opset;
    c.inputs = {Tensor::from_values<int32_t>({4, 5, 6}, Shape{3, 1})};
    auto r = run_op(c);
    EXPECT_TRUE(r.flags.view_of_input);
    EXPECT_EQ(r.outputs[0].shape(), (Shape{3, 1}));
    EXPECT_EQ(values<int32_t>(r.outputs[0]), (std::vector<int32_t>{4, 5, 6}));
  }
}

OpResult constant(std::vector<ir::Attribute> attrs) {
  OpCase c;
  c.op_type = "Constant";
  c.opset = 13;
  c.attrs = std::move(attrs);
  return run_op(c);
}

TEST(OpsConstantTest, AllValueForms) {
  auto t = std::make_shared<ir::TensorValue>();
  t->dtype = DType::I32;
  t->dims = {2};
  t->data = Tensor::from_values<int32_t>({7, -8}, Shape{2});
  ir::Attribute a;
  a.name = "value";
  a.type = ir::AttrType::Tensor;
  a.t = t;
  auto r = constant({a});
  EXPECT_TRUE(r.was_constant);
  EXPECT_EQ(values<int32_t>(r.outputs[0]), (std::vector<int32_t>{7, -8}));

  auto f = constant({attr_f("value_float", 2.5f)});
  EXPECT_EQ(f.outputs[0].shape(), Shape{});
  EXPECT_EQ(values<float>(f.outputs[0]), (std::vector<float>{2.5f}));
  auto i = constant({attr_i("value_int", -3)});
  EXPECT_EQ(i.outputs[0].dtype(), DType::I64);
  EXPECT_EQ(values<int64_t>(i.outputs[0]), (std::vector<int64_t>{-3}));
  auto is = constant({attr_ints("value_ints", {1, 2, 3})});
  EXPECT_EQ(is.outputs[0].shape(), Shape{3});
  ir::Attribute fs;
  fs.name = "value_floats";
  fs.type = ir::AttrType::Floats;
  fs.floats = {0.5f, -1};
  EXPECT_EQ(values<float>(constant({fs}).outputs[0]), (std::vector<float>{0.5f, -1}));

  // An empty tensor of a stored type.
  auto e = std::make_shared<ir::TensorValue>();
  e->dtype = DType::F32;
  e->dims = {0, 3};
  a.t = e;
  EXPECT_EQ(constant({a}).outputs[0].shape(), (Shape{0, 3}));
}

TEST(OpsConstantTest, Errors) {
  ir::Attribute s;
  s.name = "value_string";
  s.type = ir::AttrType::String;
  s.s = "x";
  expect_error([&] { constant({s}); }, ErrorKind::Unsupported, "string");
  ir::Attribute sp;
  sp.name = "sparse_value";
  sp.type = ir::AttrType::SparseTensor;
  expect_error([&] { constant({sp}); }, ErrorKind::Unsupported, "sparse_value");
  expect_error([] { constant({}); }, ErrorKind::InvalidModel, "exactly one");
  expect_error(
      [] {
        constant({attr_i("value_int", 1), attr_f("value_float", 1)});
      },
      ErrorKind::InvalidModel, "exactly one");
  expect_error([] { constant({attr_f("value_int", 1)}); }, ErrorKind::InvalidModel, "value_int");
  auto t = std::make_shared<ir::TensorValue>();
  t->dtype = DType::Complex64;
  t->dims = {1};
  ir::Attribute a;
  a.name = "value";
  a.type = ir::AttrType::Tensor;
  a.t = t;
  expect_error([&] { constant({a}); }, ErrorKind::Unsupported, "complex64");
}

OpResult shape_op(std::vector<int64_t> s, int64_t opset, std::vector<ir::Attribute> attrs = {}) {
  OpCase c;
  c.op_type = "Shape";
  c.opset = opset;
  c.attrs = std::move(attrs);
  c.inputs = {Tensor::zeros(DType::F32, Shape(std::span<const int64_t>(s)))};
  return run_op(c);
}

TEST(OpsShapeTest, StartEndClamping) {
  auto r = shape_op({2, 3, 4}, 13);
  EXPECT_TRUE(r.was_constant);
  EXPECT_EQ(values<int64_t>(r.outputs[0]), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(values<int64_t>(shape_op({}, 1).outputs[0]), (std::vector<int64_t>{}));
  // onnx shape.py cases: start=1 -> [3,4]; end=1 -> [2]; start=-1 -> [4]; end=-1 -> [2,3];
  // start=-10 clamps to 0; end=10 clamps to 3; start > end -> [].
  EXPECT_EQ(values<int64_t>(shape_op({2, 3, 4}, 15, {attr_i("start", 1)}).outputs[0]), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(values<int64_t>(shape_op({2, 3, 4}, 15, {attr_i("end", 1)}).outputs[0]), (std::vector<int64_t>{2}));
  EXPECT_EQ(values<int64_t>(shape_op({2, 3, 4}, 15, {attr_i("start", -1)}).outputs[0]), (std::vector<int64_t>{4}));
  EXPECT_EQ(values<int64_t>(shape_op({2, 3, 4}, 15, {attr_i("end", -1)}).outputs[0]), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values<int64_t>(shape_op({2, 3, 4}, 15, {attr_i("start", -10)}).outputs[0]),
            (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(values<int64_t>(shape_op({2, 3, 4}, 15, {attr_i("end", 10)}).outputs[0]), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(values<int64_t>(shape_op({2, 3, 4}, 15, {attr_i("start", 2), attr_i("end", 1)}).outputs[0]),
            (std::vector<int64_t>{}));
  // Before opset 15 start/end are not attributes of Shape and are ignored.
  EXPECT_EQ(values<int64_t>(shape_op({2, 3}, 14, {attr_i("start", 1)}).outputs[0]), (std::vector<int64_t>{2, 3}));
}

TEST(OpsTableTest, LookupAndRangesDoNotOverlap) {
  EXPECT_NE(rt::find_op("", "Add", 7), nullptr);
  EXPECT_NE(rt::find_op("ai.onnx", "Add", 14), nullptr);
  EXPECT_EQ(rt::find_op("", "Add", 6), nullptr);
  EXPECT_EQ(rt::find_op("com.microsoft", "Add", 14), nullptr);
  // One line per operator: the factory handles every opset of its range (Softmax's axis rule changes at 13).
  EXPECT_EQ(rt::find_op("", "Softmax", 12), rt::find_op("", "Softmax", 13));
  EXPECT_EQ(rt::find_op("", "GatherElements", 10), nullptr);
  EXPECT_EQ(rt::find_op("", "Upsample", 11), nullptr);
  EXPECT_EQ(rt::find_op("", "Frobnicate", 13), nullptr);
  const auto table = rt::op_table();
  for (size_t i = 0; i < table.size(); ++i) {
    EXPECT_LE(table[i].min_opset, table[i].max_opset);
    for (size_t j = i + 1; j < table.size(); ++j)
      if (table[i].op_type == table[j].op_type && table[i].domain == table[j].domain) {
        EXPECT_TRUE(table[i].max_opset < table[j].min_opset || table[j].max_opset < table[i].min_opset)
            << table[i].op_type;
        // Two lines of one operator exist only for different factories or a gap between their ranges.
        EXPECT_FALSE(table[i].factory == table[j].factory &&
                     (table[i].max_opset + 1 == table[j].min_opset || table[j].max_opset + 1 == table[i].min_opset))
            << table[i].op_type << " has adjacent lines with one factory";
      }
  }
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Relu", "MatMul", "Gemm", "Softmax", "ReduceMax", "Reshape",
                         "Identity", "Constant", "Shape", "Cast"})
    EXPECT_NE(rt::find_op("", op, 17), nullptr) << op;
}

}  // namespace
}  // namespace onemodel::test
