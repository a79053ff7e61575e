// Control flow, sequences and optionals through the public API (graph-runtime.md section 8). Models come
// from tools/gen_ctrlflow_models.py (testdata/ctrlflow); expected values are worked out by hand in comments.
#include <cstdint>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "onemodel/onemodel.h"
#include "test_util.h"

namespace onemodel {
namespace {

using test::expect_error;

Session load(const char* name, Mode mode = Mode::Fast) {
  SessionOptions o;
  o.mode = mode;
  o.intra_op_threads = 1;
  return Session::load(test::testdata(std::string("ctrlflow/") + name), o);
}

Tensor i64(int64_t v) { return Tensor::from_values<int64_t>({v}, Shape()); }
Tensor flag(bool v) { return Tensor::from_values<bool>({v}, Shape()); }
Tensor f32(std::initializer_list<float> v) {
  return Tensor::from_values<float>(v, Shape{static_cast<int64_t>(v.size())});
}

std::vector<float> floats(const Tensor& t) {
  auto d = t.data<float>();
  return {d.begin(), d.end()};
}

TEST(ValueTest, KindsAndAccessors) {
  Value t(f32({1, 2}));
  EXPECT_EQ(t.kind(), ValueKind::Tensor);
  EXPECT_EQ(t.elem_type(), DType::F32);
  Value s = Value::sequence({f32({1}), f32({2, 3})});
  EXPECT_EQ(s.kind(), ValueKind::Sequence);
  EXPECT_EQ(s.items().size(), 2u);
  EXPECT_EQ(s.elem_type(), DType::F32);
  Value e = Value::sequence({}, DType::I64);
  EXPECT_TRUE(e.items().empty());
  EXPECT_EQ(e.elem_type(), DType::I64);
  Value o = Value::optional(s);
  EXPECT_TRUE(o.has_element());
  EXPECT_EQ(o.content_kind(), ValueKind::Sequence);
  EXPECT_EQ(o.element().items().size(), 2u);
  Value n = Value::none(ValueKind::Tensor, DType::F32);
  EXPECT_FALSE(n.has_element());
  EXPECT_TRUE(Value().empty());
}

TEST(ValueTest, RefusesInconsistentValues) {
  expect_error(ErrorKind::InvalidArgument, [] { Value::sequence({f32({1}), i64(2)}); });
  expect_error(ErrorKind::InvalidArgument, [] { Value::sequence({f32({1})}, DType::I64); });
  expect_error(ErrorKind::InvalidArgument, [] { Value::sequence({Tensor()}); });
  expect_error(ErrorKind::InvalidArgument, [] { Value::optional(Value::none()); });
  expect_error(ErrorKind::InvalidArgument, [] {
    Value v{Tensor()};
    (void)v;
  });
  expect_error(ErrorKind::InvalidArgument, [] { (void)Value(f32({1})).items(); });
  expect_error(ErrorKind::InvalidArgument, [] { (void)Value::none().element(); });
  expect_error(ErrorKind::InvalidArgument, [] { (void)Value::sequence({}).tensor(); });
}

// acc starts at [0, 1] and adds step [1, 2] (read by the body from the outer graph) M = 3 times:
// [1, 3], [2, 5], [3, 7]; the final acc is [3, 7].
TEST(ControlFlowTest, LoopCarriesValuesAndStacksScanOutputs) {
  for (Mode mode : {Mode::Fast, Mode::Exact}) {
    Session s = load("loop_accumulate.onnx", mode);
    std::vector<NamedValue> in{{"M", i64(3)}, {"cond", flag(true)}, {"acc0", f32({0, 1})}, {"step", f32({1, 2})}};
    std::vector<Value> out = s.run_values(in);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(floats(out[0].tensor()), (std::vector<float>{3, 7}));
    EXPECT_EQ(out[1].tensor().shape(), (Shape{3, 2}));
    EXPECT_EQ(floats(out[1].tensor()), (std::vector<float>{1, 3, 2, 5, 3, 7}));
    // The tensor form works too when every input and output is a tensor; a second trip count reuses the body.
    std::vector<NamedTensor> tin{{"M", i64(1)}, {"cond", flag(true)}, {"acc0", f32({0, 1})}, {"step", f32({1, 2})}};
    std::vector<Tensor> r = s.run(tin);
    EXPECT_EQ(floats(r[0]), (std::vector<float>{1, 3}));
    EXPECT_EQ(r[1].shape(), (Shape{1, 2}));
  }
}

// cond = false before the first iteration: no iterations, the carried value comes back unchanged and the
// scan output is an empty [0] tensor of the body's declared type.
TEST(ControlFlowTest, LoopWithFalseConditionRunsNoIteration) {
  Session s = load("loop_accumulate.onnx");
  std::vector<NamedValue> in{{"M", i64(5)}, {"cond", flag(false)}, {"acc0", f32({4, 5})}, {"step", f32({1, 2})}};
  std::vector<Value> out = s.run_values(in);
  EXPECT_EQ(floats(out[0].tensor()), (std::vector<float>{4, 5}));
  EXPECT_EQ(out[1].tensor().shape(), (Shape{0}));
  EXPECT_EQ(out[1].tensor().dtype(), DType::F32);
}

TEST(ControlFlowTest, HostileTripCounts) {
  Session s = load("loop_stop_after_two.onnx");
  // The largest trip count: the body's condition (i < 1) ends the loop after iterations 0 and 1.
  std::vector<NamedValue> in{{"M", i64(std::numeric_limits<int64_t>::max())}, {"cond", flag(true)}};
  std::vector<Value> out = s.run_values(in);
  EXPECT_EQ(out[0].tensor().shape(), (Shape{2}));
  EXPECT_EQ(out[0].tensor().data<int64_t>()[1], 1);
  // A negative trip count is refused, naming the node.
  std::vector<NamedValue> neg{{"M", i64(-1)}, {"cond", flag(true)}};
  Error e = expect_error(ErrorKind::InvalidInput, [&] { s.run_values(neg); });
  EXPECT_EQ(e.node(), "stopper");
  std::vector<NamedValue> low{{"M", i64(std::numeric_limits<int64_t>::min())}, {"cond", flag(true)}};
  expect_error(ErrorKind::InvalidInput, [&] { s.run_values(low); });
  // A trip count that is not one element.
  std::vector<NamedValue> wide{{"M", Tensor::from_values<int64_t>({1, 2}, Shape{2})}, {"cond", flag(true)}};
  expect_error(ErrorKind::InvalidInput, [&] { s.run_values(wide); });
  // Zero iterations.
  std::vector<NamedValue> zero{{"M", i64(0)}, {"cond", flag(true)}};
  EXPECT_EQ(s.run_values(zero)[0].tensor().shape(), (Shape{0}));
}

TEST(ControlFlowTest, LoopBodyWithChangingScanShapeIsATypedError) {
  Session s = load("loop_bad_shapes.onnx");
  std::vector<NamedValue> one{{"M", i64(1)}};
  EXPECT_EQ(s.run_values(one)[0].tensor().shape(), (Shape{1, 1}));  // one iteration: Range(0, 1) = [0]
  std::vector<NamedValue> three{{"M", i64(3)}};
  Error e = expect_error(ErrorKind::InvalidModel, [&] { s.run_values(three); });
  EXPECT_EQ(e.node(), "ragged_loop");
  EXPECT_NE(e.message().find("iteration 1"), std::string::npos) << e.message();
}

TEST(ControlFlowTest, ExactModeRefusesANonExactBody) {
  Error e = expect_error(ErrorKind::ExactModeUnavailable, [] { load("loop_with_sin.onnx", Mode::Exact); });
  ASSERT_EQ(e.operators().size(), 1u);
  EXPECT_EQ(e.operators()[0], "Sin");
  Session fast = load("loop_with_sin.onnx");
  std::vector<NamedValue> in{{"M", i64(0)}, {"x0", f32({0.5f})}};
  EXPECT_EQ(floats(fast.run_values(in)[0].tensor()), (std::vector<float>{0.5f}));
}

// Silero VAD legacy's shape (issue 13): an LSTM two If levels down reads x, h0 and c0 from the outer graph and
// its weights from outer initializers. Expected Y_h and Y_c: numpy in float64 (ONNX LSTM, gates i o f c, the
// generator's weights rounded to float32), on x for cond true and on -x for cond false; both modes.
TEST(ControlFlowTest, LstmInNestedIfReadsOuterValues) {
  const Tensor x = Tensor::from_values<float>({0.5f, -1, 2, 1.5f, 0.25f, -0.75f}, Shape{2, 1, 3});
  const Tensor h0 = Tensor::from_values<float>({0.3f, -0.2f}, Shape{1, 1, 2});
  const Tensor c0 = Tensor::from_values<float>({-0.5f, 0.8f}, Shape{1, 1, 2});
  const std::vector<double> want_h[2] = {{-0.016540087, -0.034992666}, {-0.12924484, 0.0204936348}};
  const std::vector<double> want_c[2] = {{-0.0701041261, -0.0957481177}, {-0.192233137, 0.0289699674}};
  for (Mode mode : {Mode::Fast, Mode::Exact}) {
    Session s = load("lstm_in_nested_if.onnx", mode);
    for (int cond = 0; cond < 2; ++cond) {
      const std::vector<NamedTensor> in{{"cond", flag(cond == 1)}, {"x", x}, {"h0", h0}, {"c0", c0}};
      std::vector<Tensor> out = s.run(in);
      ASSERT_EQ(out.size(), 2u);
      const std::vector<float> y_h = floats(out[0]), y_c = floats(out[1]);
      ASSERT_EQ(y_h.size(), 2u);
      ASSERT_EQ(y_c.size(), 2u);
      for (size_t i = 0; i < 2; ++i) {
        EXPECT_NEAR(y_h[i], want_h[cond][i], 1e-6) << "cond " << cond << " Y_h " << i;
        EXPECT_NEAR(y_c[i], want_c[cond][i], 1e-6) << "cond " << cond << " Y_c " << i;
      }
    }
  }
}

TEST(SequenceTest, InfoDescribesSequencesAndOptionals) {
  Session s = load("sequence_optional.onnx");
  ASSERT_EQ(s.inputs().size(), 3u);
  EXPECT_EQ(s.inputs()[0].kind, ValueKind::Sequence);
  EXPECT_EQ(s.inputs()[0].dtype, DType::F32);
  EXPECT_EQ(s.inputs()[2].kind, ValueKind::Optional);
  EXPECT_EQ(s.inputs()[2].element_kind, ValueKind::Tensor);
  EXPECT_EQ(s.inputs()[2].dtype, DType::F32);
  EXPECT_EQ(s.outputs()[0].kind, ValueKind::Sequence);
  EXPECT_EQ(s.outputs()[3].kind, ValueKind::Optional);
}

// seq [[1], [2, 3]] plus x [4, 5, 6]: three items, the last being x; the optional passes through.
TEST(SequenceTest, SequenceAndOptionalValuesRoundTrip) {
  for (Mode mode : {Mode::Fast, Mode::Exact}) {
    Session s = load("sequence_optional.onnx", mode);
    std::vector<NamedValue> in{
        {"seq", Value::sequence({f32({1}), f32({2, 3})})}, {"x", f32({4, 5, 6})}, {"opt", Value::optional(f32({7}))}};
    std::vector<Value> out = s.run_values(in);
    ASSERT_EQ(out.size(), 4u);
    ASSERT_EQ(out[0].kind(), ValueKind::Sequence);
    ASSERT_EQ(out[0].items().size(), 3u);
    EXPECT_EQ(floats(out[0].items()[0]), (std::vector<float>{1}));
    EXPECT_EQ(floats(out[0].items()[2]), (std::vector<float>{4, 5, 6}));
    EXPECT_EQ(out[1].tensor().data<int64_t>()[0], 3);
    EXPECT_EQ(out[2].tensor().data<bool>()[0], true);
    ASSERT_TRUE(out[3].has_element());
    EXPECT_EQ(floats(out[3].element().tensor()), (std::vector<float>{7}));

    // An empty optional, and a plain tensor given for the optional input (wrapped into one).
    in[2].value = Value::none(ValueKind::Tensor, DType::F32);
    out = s.run_values(in);
    EXPECT_EQ(out[2].tensor().data<bool>()[0], false);
    EXPECT_FALSE(out[3].has_element());
    in[2].value = f32({8});
    out = s.run_values(in);
    EXPECT_EQ(out[2].tensor().data<bool>()[0], true);
    EXPECT_EQ(floats(out[3].element().tensor()), (std::vector<float>{8}));
    // An empty input sequence.
    in[0].value = Value::sequence({}, DType::F32);
    out = s.run_values(in);
    EXPECT_EQ(out[0].items().size(), 1u);
  }
}

TEST(SequenceTest, WrongKindsOfInputValuesAreRefused) {
  Session s = load("sequence_optional.onnx");
  Value seq = Value::sequence({f32({1})});
  auto run = [&](Value a, Value b, Value c) {
    std::vector<NamedValue> in{{"seq", std::move(a)}, {"x", std::move(b)}, {"opt", std::move(c)}};
    s.run_values(in);
  };
  // A tensor where a sequence is declared, a sequence where a tensor is, an optional of the wrong content.
  Error e = expect_error(ErrorKind::InvalidInput, [&] { run(f32({1}), f32({2}), Value::none()); });
  EXPECT_NE(e.message().find("'seq'"), std::string::npos) << e.message();
  expect_error(ErrorKind::InvalidInput, [&] { run(seq, seq, Value::none()); });
  expect_error(ErrorKind::InvalidInput, [&] { run(seq, f32({2}), Value::optional(seq)); });
  expect_error(ErrorKind::InvalidInput, [&] { run(seq, f32({2}), seq); });
  // Element types: a sequence of int64, an optional holding int64.
  expect_error(ErrorKind::InvalidInput, [&] { run(Value::sequence({i64(1)}), f32({2}), Value::none()); });
  expect_error(ErrorKind::InvalidInput, [&] { run(seq, f32({2}), Value::optional(i64(1))); });
  // No value at all.
  expect_error(ErrorKind::InvalidInput, [&] { run(seq, f32({2}), Value()); });
  // The tensor form cannot pass or return sequences.
  std::vector<NamedTensor> tin{{"seq", f32({1})}, {"x", f32({2})}, {"opt", f32({3})}};
  expect_error(ErrorKind::InvalidInput, [&] { s.run(tin); });
  // An empty optional that does not say what it could hold is accepted.
  std::vector<NamedValue> bad{{"seq", seq}, {"x", f32({2})}, {"opt", Value::none()}};
  EXPECT_NO_THROW(s.run_values(bad));
}

}  // namespace
}  // namespace onemodel

namespace onemodel {
namespace {

// x = [[0,1,2,3,4],[5,6,7,8,9]]; expected values worked out by hand:
//   chunks  = SplitToSequence(x, 2, axis=-1): [[0,1],[5,6]], [[2,3],[7,8]], [[4],[9]]
//   stacked = ConcatFromSequence(rows of x, axis=1, new_axis=1): x transposed, [5,2]
//   joined  = ConcatFromSequence(SplitToSequence(x, [2,3], axis=1), axis=1) = x
//   last    = SequenceAt(parts, -1) = [[2,3,4],[7,8,9]]
//   lengths: after erasing item 0 of parts 1, SequenceConstruct(x, x) 2, SequenceEmpty 0
TEST(SequenceTest, SplitConcatAtEraseConstructEmpty) {
  for (Mode mode : {Mode::Fast, Mode::Exact}) {
    Session s = load("sequence_ops.onnx", mode);
    std::vector<float> xs(10);
    for (int i = 0; i < 10; ++i) xs[static_cast<size_t>(i)] = static_cast<float>(i);
    std::vector<NamedValue> in{{"x", Tensor::from_values<float>(std::span<const float>(xs), Shape{2, 5})}};
    std::vector<Value> out = s.run_values(in);
    ASSERT_EQ(out.size(), 7u);
    const std::vector<Tensor>& chunks = out[0].items();
    ASSERT_EQ(chunks.size(), 3u);
    EXPECT_EQ(chunks[0].shape(), (Shape{2, 2}));
    EXPECT_EQ(floats(chunks[1]), (std::vector<float>{2, 3, 7, 8}));
    EXPECT_EQ(chunks[2].shape(), (Shape{2, 1}));
    EXPECT_EQ(floats(chunks[2]), (std::vector<float>{4, 9}));
    EXPECT_EQ(out[1].tensor().shape(), (Shape{5, 2}));
    EXPECT_EQ(floats(out[1].tensor()), (std::vector<float>{0, 5, 1, 6, 2, 7, 3, 8, 4, 9}));
    EXPECT_EQ(floats(out[2].tensor()), xs);
    EXPECT_EQ(floats(out[3].tensor()), (std::vector<float>{2, 3, 4, 7, 8, 9}));
    EXPECT_EQ(out[4].tensor().data<int64_t>()[0], 1);
    EXPECT_EQ(out[5].tensor().data<int64_t>()[0], 2);
    EXPECT_EQ(out[6].tensor().data<int64_t>()[0], 0);
  }
}

}  // namespace
}  // namespace onemodel

#include "runtime/kernel.h"
#include "runtime/session_impl.h"
#include "runtime_fake_ops.h"

namespace onemodel {
namespace {

// Sequence and optional operators whose node lacks inputs it needs (a hostile file): a typed error naming the
// operator, never a read past the node's inputs. Found by fuzz_load_run in session 21 (a SplitToSequence with
// no inputs: UBSan, a reference bound to the null data of an empty span; docs/fuzzing.md section 4).
TEST(SequenceTest, NodesMissingTheirInputsAreTypedErrors) {
  struct Case {
    const char* op;
    std::vector<std::string> ins;
  };
  const Case cases[] = {{"SplitToSequence", {}},   {"SequenceInsert", {"s"}}, {"SequenceAt", {"s"}},
                        {"SequenceErase", {}},     {"SequenceLength", {}},    {"ConcatFromSequence", {}},
                        {"OptionalGetElement", {}}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    rt::fake::Builder b;
    b.input("x", DType::F32, {2});
    b.node("SequenceConstruct", {"x"}, {"s"});
    b.node(c.op, c.ins, {"y"},
           c.op == std::string("ConcatFromSequence") ? std::vector<ir::Attribute>{test::attr_i("axis", 0)}
                                                     : std::vector<ir::Attribute>{});
    b.output("y");
    for (ir::Node& n : b.g().nodes) n.opset = 17;
    std::vector<NamedValue> in{{"x", f32({1, 2})}};
    try {
      Session s = make_session(b.model(), SessionOptions{}, &rt::find_op);
      s.run_values(in);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_TRUE(e.kind() == ErrorKind::InvalidModel || e.kind() == ErrorKind::InvalidInput) << e.what();
      EXPECT_NE(e.message().find(c.op), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace onemodel
