// The graph builder (docs/model-building.md): symbolic dimensions, shapes stated by the operators' infer, errors by
// phase, export and compile. Expected values are computed here by plain loops, never by the engine.
#include <cmath>

#include "build/dim_expr.h"
#include "onemodel/builder.h"
#include "test_util.h"

namespace onemodel {
namespace {

using test::expect_error;

Tensor f32(std::vector<float> v, Shape s) { return Tensor::from_values(std::span<const float>(v), s); }

std::vector<float> values(const Tensor& t) {
  auto d = t.data<float>();
  return {d.begin(), d.end()};
}

TEST(BuildDims, EqualExpressionsAreOneIdAndProductsCancel) {
  build::DimTable d;
  auto b = d.symbol("batch"), s = d.symbol("seq");
  EXPECT_EQ(d.symbol("batch"), b);
  auto bs = d.mul(b, s);
  EXPECT_EQ(d.mul(s, b), bs);  // products are canonical
  EXPECT_EQ(d.div(d.mul(bs, d.constant(64)), d.constant(64)), bs);
  EXPECT_EQ(d.div(d.mul(bs, d.constant(64)), d.mul(s, d.constant(8))), d.mul(b, d.constant(8)));
  EXPECT_EQ(d.add(s, d.constant(0)), s);
  EXPECT_EQ(d.add(s, d.constant(2)), d.add(d.constant(2), s));
  EXPECT_EQ(d.sub(s, s), d.constant(0));
  EXPECT_EQ(d.to_string(d.mul(d.constant(3), bs)), "3*batch*seq");
  bool ok = true;
  auto e = d.div(d.add(s, d.constant(1)), d.constant(2));  // floor division: (7 + 1) / 2 and (8 + 1) / 2
  EXPECT_EQ(d.evaluate(e, {{"seq", 7}}, ok), 4);
  EXPECT_EQ(d.evaluate(e, {{"seq", 8}}, ok), 4);
  EXPECT_TRUE(ok);
  d.evaluate(e, {{"batch", 7}}, ok);
  EXPECT_FALSE(ok);  // seq unbound
}

TEST(BuildGraph, MlpAtASymbolicBatchMatchesLoops) {
  GraphBuilder g;
  Var x = g.input("x", DType::F32, {"batch", 3});
  std::vector<float> w = {0.5f, -1, 2, 0.25f, 1, -0.5f}, b = {0.1f, -0.2f};
  Var y = x.matmul(g.constant(f32(w, {3, 2}))).add(g.constant(f32(b, {2}))).relu();
  EXPECT_EQ(y.shape_string(), "[batch,2]");
  EXPECT_EQ(y.dim(0), "batch");
  EXPECT_FALSE(y.dim_value(0).has_value());
  EXPECT_EQ(y.dim_value(1), 2);
  BuiltModel m = g.compile({{"y", y}});
  for (int64_t batch : {1, 4}) {
    std::vector<float> xs;
    for (int i = 0; i < batch * 3; ++i) xs.push_back(static_cast<float>(i % 5) - 1.5f);
    std::vector<Tensor> out = m.run({{"x", f32(xs, Shape{batch, 3})}});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].shape(), (Shape{batch, 2}));
    std::vector<float> got = values(out[0]);
    for (int r = 0; r < batch; ++r)
      for (int c = 0; c < 2; ++c) {
        float acc = 0;
        for (int k = 0; k < 3; ++k) acc += xs[r * 3 + k] * w[k * 2 + c];
        EXPECT_NEAR(got[r * 2 + c], std::max(acc + b[c], 0.0f), 1e-6f);
      }
  }
}

TEST(BuildGraph, ConcreteShapeErrorsAreRaisedByTheOperation) {
  GraphBuilder g;
  Var a = g.input("a", DType::F32, {3}), b = g.input("b", DType::F32, {4});
  Error e = expect_error(ErrorKind::GraphBuild, [&] { a.add(b); });
  std::string m = e.message();
  EXPECT_EQ(m.rfind("Add of [3], [4]: ", 0), 0u) << m;
  EXPECT_EQ(std::string(e.what()).rfind("GraphBuild: Add of [3], [4]", 0), 0u) << e.what();
  Var w = g.input("w", DType::F32, {5, 2});
  e = expect_error(ErrorKind::GraphBuild, [&] { g.input("m", DType::F32, {2, 3}).matmul(w); });
  EXPECT_NE(e.message().find("MatMul of [2,3], [5,2]"), std::string::npos) << e.message();
  // A symbolic axis against a fixed one that cannot broadcast is refused too: the probes are primes, never 4.
  Var s = g.input("s", DType::F32, {"n"});
  expect_error(ErrorKind::GraphBuild, [&] { s.add(b); });
  expect_error(ErrorKind::InvalidArgument, [&] { g.input("a", DType::F32, {1}); });  // name used twice
  GraphBuilder other;
  expect_error(ErrorKind::InvalidArgument, [&] { a.add(other.input("z", DType::F32, {3})); });
}

TEST(BuildGraph, SymbolicShapesOfShapeOperators) {
  GraphBuilder g;
  Var x = g.input("x", DType::F32, {"B", "S", 8});
  EXPECT_EQ(x.reshape({0, -1}).shape_string(), "[B,8*S]");
  EXPECT_EQ(x.reshape({-1, 8}).shape_string(), "[B*S,8]");
  EXPECT_EQ(x.reshape({-1, 8}).reshape({0, 2, 4}).shape_string(), "[B*S,2,4]");
  EXPECT_EQ(x.transpose({1, 0, 2}).shape_string(), "[S,B,8]");
  EXPECT_EQ(x.unsqueeze({1}).squeeze({1}).shape_string(), "[B,S,8]");
  EXPECT_EQ(x.reduce_mean({1}, false).shape_string(), "[B,8]");
  EXPECT_EQ(x.slice({1}, {INT64_MAX}, {1}).shape_string(), "[B,(S - 1),8]");
  Var y = g.input("y", DType::F32, {"B", "T", 8});
  EXPECT_EQ(g.concat({x, y}, 1).shape_string(), "[B,(S + T),8]");
  Var q = x.matmul(y.transpose({0, 2, 1}));
  EXPECT_EQ(q.shape_string(), "[B,S,T]");
  EXPECT_EQ(q.softmax().shape_string(), "[B,S,T]");
  Var ids = g.input("ids", DType::I64, {"B", "S"});
  EXPECT_EQ(g.constant(f32(std::vector<float>(40, 1.0f), {10, 4})).gather(ids).shape_string(), "[B,S,4]");
}

TEST(BuildGraph, ShapeOperandsComputedFromShapeChains) {
  GraphBuilder g;
  Var x = g.input("x", DType::F32, {"B", "S", 8});
  auto i64 = [&](std::vector<int64_t> v) {
    return g.constant(Tensor::from_values(std::span<const int64_t>(v), Shape{static_cast<int64_t>(v.size())}));
  };
  Var shape = x.shape();
  EXPECT_EQ(shape.shape_string(), "[3]");
  // [B, S, 2, 4]: the first two extents of x's shape and two constants.
  Var split = g.op("Reshape", {x, g.concat({shape.slice({0}, {2}, {0}), i64({2, 4})}, 0)})[0];
  EXPECT_EQ(split.shape_string(), "[B,S,2,4]");
  // [B*S, 8]: the product of two gathered extents.
  Var rows = g.op("Mul", {shape.slice({0}, {1}, {0}), shape.slice({1}, {2}, {0})})[0];
  Var flat = g.op("Reshape", {x, g.concat({rows, i64({8})}, 0)})[0];
  EXPECT_EQ(flat.shape_string(), "[B*S,8]");
  // Expand to another value's extents.
  Var y = g.input("y", DType::F32, {"B", 1, 8});
  Var e = g.op("Expand", {y, shape})[0];
  EXPECT_EQ(e.shape_string(), "[B,S,8]");
  BuiltModel m = g.compile({{"split", split}, {"flat", flat}, {"e", e}});
  for (int64_t s : {3, 5}) {
    std::vector<float> xs(static_cast<size_t>(2 * s * 8));
    for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i);
    std::vector<Tensor> out =
        m.run({{"x", f32(xs, Shape{2, s, 8})}, {"y", f32(std::vector<float>(16, 1.0f), {2, 1, 8})}});
    EXPECT_EQ(out[0].shape(), (Shape{2, s, 2, 4}));
    EXPECT_EQ(out[1].shape(), (Shape{2 * s, 8}));
    EXPECT_EQ(out[2].shape(), (Shape{2, s, 8}));
    EXPECT_EQ(values(out[1]), xs);  // a reshape keeps the row-major order
  }
  // Specs that fix the symbols evaluate the chain again at those sizes.
  BuiltModel fixed = g.compile({{"flat", flat}}, {}, {{"x", {4, 3, 8}}});
  EXPECT_EQ(fixed.session().inputs()[0].dims[1].value, 3);
}

TEST(BuildGraph, OperatorsSeeHowManyOutputsAreWanted) {
  GraphBuilder g;
  Var x = g.input("x", DType::F32, {"n", 6});
  std::vector<Var> parts = g.op("Split", {x}, {{"axis", int64_t{1}}, {"num_outputs", int64_t{3}}}, 3);
  ASSERT_EQ(parts.size(), 3u);
  for (const Var& p : parts) EXPECT_EQ(p.shape_string(), "[n,2]");
  std::vector<Var> two = g.op("Split", {x}, {{"axis", int64_t{1}}, {"num_outputs", int64_t{2}}}, 2);
  EXPECT_EQ(two[1].shape_string(), "[n,3]");
  // BatchNormalization's factory refuses the training-mode outputs: it must see that three are asked for.
  Var img = g.input("img", DType::F32, {1, 2, 3, 3});
  Var c2 = g.constant(Tensor::from_values({1.0f, 1.0f}, Shape{2}));
  Error e = expect_error(ErrorKind::GraphBuild, [&] { g.op("BatchNormalization", {img, c2, c2, c2, c2}, {}, 3); });
  EXPECT_NE(e.message().find("running-statistics"), std::string::npos) << e.message();
}

TEST(BuildGraph, ConvolutionAndPoolShapesFollowTheirFormulas) {
  GraphBuilder g;
  Var x = g.input("x", DType::F32, {"N", 2, "H", "W"});
  Var w = g.constant(f32(std::vector<float>(4 * 2 * 3 * 3, 1.0f), {4, 2, 3, 3}));
  ConvAttrs a;
  a.strides = {2, 2};
  a.pads = {1, 1, 1, 1};
  Var y = x.conv(w, {}, a);
  EXPECT_EQ(y.dim(2), "(((H - 1) / 2) + 1)");  // floor((H + 2 - 3) / 2) + 1
  ConvAttrs p;
  p.kernel_shape = {2, 2};
  p.strides = {2, 2};
  Var z = y.max_pool(p);
  ConvAttrs t;
  t.strides = {2, 2};
  Var u = x.conv_transpose(g.constant(f32(std::vector<float>(2 * 3 * 2 * 2, 1.0f), {2, 3, 2, 2})), {}, t);
  BuiltModel m = g.compile({{"y", y}, {"z", z}, {"u", u}});
  for (int64_t h : {7, 8, 13}) {
    int64_t wd = h + 3;
    std::vector<float> xs(static_cast<size_t>(2 * h * wd), 1.0f);
    std::vector<Tensor> out = m.run({{"x", f32(xs, Shape{1, 2, h, wd})}});
    int64_t oh = (h + 2 - 3) / 2 + 1, ow = (wd + 2 - 3) / 2 + 1;
    EXPECT_EQ(out[0].shape(), (Shape{1, 4, oh, ow}));
    EXPECT_EQ(out[1].shape(), (Shape{1, 4, oh / 2, ow / 2}));
    EXPECT_EQ(out[2].shape(), (Shape{1, 3, 2 * h, 2 * wd}));
    // All-ones input and weights: an interior output sums 2 channels x 9 taps, the corner 2 x 4.
    EXPECT_EQ(values(out[0])[0], 8.0f);
    EXPECT_EQ(values(out[0])[static_cast<size_t>(ow + 1)], 18.0f);
    EXPECT_EQ(values(out[2])[0], 2.0f);  // stride 2, 2x2 kernel: every output gets one tap per input channel
  }
}

TEST(BuildGraph, CompileSpecsBindSymbolsAndCheckAgain) {
  GraphBuilder g;
  Var x = g.input("x", DType::F32, {"N", 2, "H", "H"});
  ConvAttrs a;
  a.kernel_shape = {5, 5};
  Var y = x.average_pool(a);
  Error e = expect_error(ErrorKind::Compile, [&] { g.compile({{"y", y}}, {}, {{"x", {1, 2, 3, 3}}}); });
  EXPECT_NE(e.message().find("AveragePool"), std::string::npos) << e.message();
  e = expect_error(ErrorKind::Compile, [&] { g.compile({{"y", y}}, {}, {{"x", {1, 2, 6, 7}}}); });
  EXPECT_NE(e.message().find("symbol H"), std::string::npos) << e.message();
  expect_error(ErrorKind::Compile, [&] { g.compile({{"y", y}}, {}, {{"x", {1, 3, 6, 6}}}); });
  expect_error(ErrorKind::Compile, [&] { g.compile({{"y", y}}, {}, {{"nope", {1}}}); });
  BuiltModel m = g.compile({{"y", y}}, {}, {{"x", {1, 2, 6, 6}}});
  EXPECT_EQ(m.session().inputs()[0].dims[2].value, 6);
  std::vector<Tensor> out = m.run({{"x", f32(std::vector<float>(72, 2.0f), Shape{1, 2, 6, 6})}});
  EXPECT_EQ(out[0].shape(), (Shape{1, 2, 2, 2}));
  EXPECT_EQ(values(out[0])[0], 2.0f);
  e = expect_error(ErrorKind::InvalidInput, [&] {
    m.run({{"x", f32(std::vector<float>(98, 2.0f), Shape{1, 2, 7, 7})}});
  });
  EXPECT_EQ(e.message().rfind("Execution: ", 0), 0u) << e.message();
}

TEST(BuildGraph, LeavesCarryDefaultsAndTakeOtherExtents) {
  GraphBuilder g;
  Var v = g.leaf("v", f32({1, 2, 3, 4}, {4}), {"n"});
  Var y = v.mul(v).add(v);
  EXPECT_EQ(y.shape_string(), "[n]");
  BuiltModel m = g.compile({{"y", y}});
  EXPECT_EQ(values(m.run({})[0]), (std::vector<float>{2, 6, 12, 20}));
  EXPECT_EQ(values(m.run({{"v", f32({-1, 5}, {2})}})[0]), (std::vector<float>{0, 30}));
}

TEST(BuildGraph, ExportIsDeterministicPrunedAndNamesOutputs) {
  auto build = [](bool extra) {
    GraphBuilder g;
    Var x = g.input("x", DType::F32, {"n", 4});
    Var unused = x.exp();                     // pruned: no output needs it
    if (extra) unused = unused.neg().sqrt();  // pruned too, and shifts the builder's ids of what follows
    Var h = x.mul(g.constant(f32({1, 2, 3, 4}, {4}), "scale")).tanh();
    return g.to_onnx({{"h", h}, {"x_again", x}, {"h2", h}});
  };
  std::string a = build(false), b = build(true);
  EXPECT_EQ(a, b);  // equal graphs (after pruning) give equal bytes
  EXPECT_EQ(a.find("Exp"), std::string::npos);
  Session s = Session::load_bytes(std::as_bytes(std::span<const char>(a.data(), a.size())));
  ASSERT_EQ(s.outputs().size(), 3u);
  EXPECT_EQ(s.outputs()[0].name, "h");
  EXPECT_EQ(s.outputs()[1].name, "x_again");
  EXPECT_EQ(s.outputs()[2].name, "h2");
  EXPECT_EQ(s.inputs()[0].dims[0].param, "n");
  std::vector<Tensor> out = s.run(std::vector<NamedTensor>{{"x", f32({1, 1, 1, 1}, {1, 4})}});
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(values(out[0])[i], std::tanh(static_cast<float>(i + 1)));
  EXPECT_EQ(values(out[1]), (std::vector<float>{1, 1, 1, 1}));
  EXPECT_EQ(values(out[2]), values(out[0]));
}

}  // namespace
}  // namespace onemodel
