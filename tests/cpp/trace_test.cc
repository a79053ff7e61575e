// Eager tensors and tracing (docs/model-building.md section 8): eager values against loops, traced graphs against
// the eager values at the traced and at other sizes (fast: 1e-5 scaled; exact: the same bits), symbolic Reshape
// and Expand operands, constants, parameters, aliases, and every failure kind at its call.
#include <cmath>

#include "build/trace_state.h"
#include "onemodel/trace.h"
#include "onnx/import.h"
#include "onnx_test_util.h"
#include "test_util.h"

namespace onemodel {
namespace {

using test::expect_error;

Tensor f32(std::vector<float> v, Shape s) { return Tensor::from_values(std::span<const float>(v), s); }

Tensor ramp(Shape s, float scale = 0.1f) {
  std::vector<float> v(static_cast<size_t>(s.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * static_cast<float>(static_cast<int>(i % 7) - 3);
  return f32(v, s);
}

std::vector<float> floats(const Tensor& t) {
  auto d = t.contiguous().data<float>();
  return {d.begin(), d.end()};
}

Session load(const TracedModel& m, Mode mode) {
  SessionOptions o;
  o.mode = mode;
  o.intra_op_threads = 1;
  return Session::load_bytes(std::as_bytes(std::span<const char>(m.onnx.data(), m.onnx.size())), o);
}

struct ModeGuard {
  explicit ModeGuard(Mode m) : old(eager_mode()) { set_eager_mode(m); }
  ~ModeGuard() { set_eager_mode(old); }
  Mode old;
};

// A two-layer MLP whose hidden layer goes through a Reshape of plain sizes (as eager code writes it).
EagerTensor mlp(const EagerTensor& x, const EagerTensor& w1, const EagerTensor& b1, const EagerTensor& w2) {
  EagerTensor h = x.matmul(w1).add(b1).relu();
  const Shape& s = h.sizes();
  EagerTensor split = h.reshape({s[0], s[1], 2, s[2] / 2});  // [B, S, 2, 4]
  EagerTensor merged = split.reshape({s[0] * s[1], s[2]});   // [B*S, 8]
  return merged.matmul(w2).softmax();
}

TEST(Eager, ValuesAreTheKernelsAndMatchLoops) {
  EagerTensor a(f32({1, -2, 3, -4, 5, -6}, {2, 3})), b(f32({0.5f, 1, -1, 2, 0, 1}, {3, 2}));
  std::vector<float> av = a.to_vector<float>(), bv = b.to_vector<float>(), want;
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 2; ++c) {
      float acc = 0;
      for (int k = 0; k < 3; ++k) acc += av[r * 3 + k] * bv[k * 2 + c];
      want.push_back(std::max(acc, 0.0f));
    }
  EXPECT_EQ(a.matmul(b).relu().to_vector<float>(), want);
  EXPECT_EQ((a + a).to_vector<float>(), (std::vector<float>{2, -4, 6, -8, 10, -12}));
  EXPECT_EQ(a.sizes(), (Shape{2, 3}));
  EagerTensor r = a.reshape({3, 2});  // Reshape's kernel is a view: the eager result is still its own tensor
  r.assign(Tensor::zeros(DType::F32, {3, 2}));
  EXPECT_EQ(a.to_vector<float>()[0], 1.0f);
  Error e = expect_error(ErrorKind::InvalidModel, [&] { a.add(EagerTensor(f32({1, 2}, {2}))); });
  EXPECT_EQ(e.message().rfind("Add of [2,3], [2]: ", 0), 0u) << e.message();
}

TEST(Trace, MlpAtOtherBatchAndSequenceSizesMatchesTheEagerRun) {
  EagerTensor w1(ramp({4, 8})), b1(ramp({8}, 0.05f)), w2(ramp({8, 3}, 0.2f));
  for (Mode mode : {Mode::Fast, Mode::Exact}) {
    ModeGuard guard(mode);
    TracedModel m;
    {
      Tracer tr = Tracer::begin();
      tr.parameter("fc1.weight", w1);
      EagerTensor x = tr.input("x", ramp({2, 3, 4}), {"batch", "seq"});
      EagerTensor y = mlp(x, w1, b1, w2);
      EXPECT_EQ(y.sizes(), (Shape{6, 3}));
      m = tr.finish({{"probs", y}});
    }
    ir::Model model = onnx::import_bytes(test::storage_of(m.onnx), "<traced>");
    EXPECT_NE(model.graph->find_value("fc1.weight"), -1);
    EXPECT_EQ(model.graph->inputs.size(), 1u);
    EXPECT_EQ(model.graph->values[model.graph->inputs[0]].type.dims[1].param, "seq");
    Session s = load(m, mode);
    const std::vector<std::byte> format = m.to_onemodel();  // the OneModel format gives the same bits
    SessionOptions fo;
    fo.mode = mode;
    fo.intra_op_threads = 1;
    Session from_format = Session::load_bytes(format, fo);
    for (auto [b, q] : {std::pair<int64_t, int64_t>{2, 3}, {4, 5}, {1, 7}}) {
      Tensor x = ramp({b, q, 4}, 0.3f);
      std::vector<float> eager = mlp(EagerTensor(x), w1, b1, w2).to_vector<float>();
      std::vector<Tensor> out = s.run(std::vector<NamedTensor>{{"x", x}});
      ASSERT_EQ(out[0].shape(), (Shape{b * q, 3}));
      std::vector<float> graph = floats(out[0]);
      EXPECT_EQ(floats(from_format.run(std::vector<NamedTensor>{{"x", x}})[0]), graph);
      if (mode == Mode::Exact) {
        EXPECT_EQ(graph, eager) << "batch " << b << " seq " << q;  // the same kernels: the same bits
      } else {
        for (size_t i = 0; i < eager.size(); ++i) EXPECT_NEAR(graph[i], eager[i], 1e-5f);
      }
    }
  }
}

TEST(Trace, ExpandToASymbolicSizeAndConstantsCapturedOnce) {
  EagerTensor bias(ramp({1, 1, 4}));
  TracedModel m;
  {
    Tracer tr = Tracer::begin();
    EagerTensor x = tr.input("x", ramp({2, 3, 4}), {"B", "S"});
    EagerTensor y = x.mul(bias).add(bias);  // bias captured once
    // An untraced Expand to the example's size is a constant of fixed size: the graph cannot follow S.
    expect_error(ErrorKind::SymbolicShape, [&] { bias.expand({1, 3, 4}).add(x); });
    EagerTensor mask = tr.input("mask", ramp({2, 1, 1}), {"B"}).expand({2, 3, 4});  // to the traced sizes
    m = tr.finish({{"y", y.add(mask)}});
  }
  ir::Model model = onnx::import_bytes(test::storage_of(m.onnx), "<traced>");
  int biases = 0;
  for (int v : model.graph->initializers)
    biases += model.graph->values[v].initializer->dims == std::vector<int64_t>{1, 1, 4};
  EXPECT_EQ(biases, 1);
  Session s = load(m, Mode::Fast);
  Tensor x = ramp({3, 5, 4}), mask = ramp({3, 1, 1}, 0.5f);
  std::vector<Tensor> out = s.run(std::vector<NamedTensor>{{"x", x}, {"mask", mask}});
  ASSERT_EQ(out[0].shape(), (Shape{3, 5, 4}));
  EagerTensor ex(x), eb = bias;
  std::vector<float> want = ex.mul(eb).add(eb).add(EagerTensor(mask).expand({3, 5, 4})).to_vector<float>();
  std::vector<float> got = floats(out[0]);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6f);
}

TEST(Trace, AliasesWriteNoNodeAndUnusedWorkIsPruned) {
  TracedModel m;
  {
    Tracer tr = Tracer::begin();
    EagerTensor x = tr.input("x", ramp({2, 3}), {"n"});
    EagerTensor same = x.reshape({2, 3}).clone().slice({0}, {2}, {0});  // three aliases
    x.exp();                                                            // unused
    m = tr.finish({{"y", same.relu()}, {"x_out", x}});
  }
  ir::Model model = onnx::import_bytes(test::storage_of(m.onnx), "<traced>");
  ASSERT_EQ(model.graph->nodes.size(), 2u);  // Relu, and the Identity of an output that is an input
  EXPECT_EQ(model.graph->nodes[0].op_type, "Relu");
  EXPECT_EQ(model.graph->nodes[1].op_type, "Identity");
}

TEST(Trace, FailuresAreRaisedAtTheOffendingCall) {
  EagerTensor w(ramp({3, 3}));
  {
    Tracer tr = Tracer::begin();
    expect_error(ErrorKind::InvalidUsage, [] { Tracer::begin(); });
    EagerTensor x = tr.input("x", ramp({2, 3}), {"n"});
    EagerTensor y = x.matmul(w);
    expect_error(ErrorKind::DataDependent, [&] { y.value(); });
    expect_error(ErrorKind::DataDependent, [&] { y.to_vector<float>(); });
    expect_error(ErrorKind::InPlaceMutation, [&] { y.assign(ramp({2, 3})); });
    expect_error(ErrorKind::DataDependent, [&] { EagerTensor::op("NonZero", {y}); });
    expect_error(ErrorKind::InvalidUsage, [&] { tr.input("x", ramp({2, 3})); });           // name used twice
    expect_error(ErrorKind::InvalidUsage, [&] { tr.input("one", ramp({1, 3}), {"m"}); });  // example size 1
    expect_error(ErrorKind::InvalidUsage, [&] { tr.input("two", ramp({2, 3}), {"m"}); });  // equals n's size
    expect_error(ErrorKind::SymbolicShape, [&] { y.reshape({6}).resize({12}); });
    expect_error(ErrorKind::UnsupportedOperation, [&] { EagerTensor::op("SequenceConstruct", {y}); });
    expect_error(ErrorKind::InvalidUsage, [&] { tr.finish({{"w", w.relu()}}); });  // depends on no input
    w.assign(ramp({3, 3}, 0.5f));                                                  // a captured constant changes
    expect_error(ErrorKind::InPlaceMutation, [&] { tr.finish({{"y", y}}); });
  }
  // After the trace: reading is allowed again, and a new trace may begin.
  Tracer again = Tracer::begin();
  EagerTensor x = again.input("x", ramp({2, 3}));
  EagerTensor y = x.relu();
  TracedModel m = again.finish({{"y", y}});
  EXPECT_EQ(y.to_vector<float>().size(), 6u);
  EXPECT_FALSE(m.onnx.empty());
}

}  // namespace
}  // namespace onemodel
