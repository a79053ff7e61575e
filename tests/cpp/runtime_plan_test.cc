// Plans and compiled graphs with the test-only operators of runtime_fake_ops.h: operator resolution
// errors, exact mode, constant evaluation, dynamic nodes, views, in-place aliasing, pooled run states and
// weight handling. Expected values are hand-computed (each fake op is one line of arithmetic).
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <future>
#include <thread>

#include "runtime/compiled_graph.h"
#include "runtime/plan.h"
#include "runtime/run_state.h"
#include "runtime/session_impl.h"
#include "runtime_fake_ops.h"
#include "test_util.h"

namespace onemodel::rt {
namespace {

using test::expect_error;

using fake::Builder;
using test::attr_f;
using test::attr_i;

Session session_of(const Builder& b, Mode mode = Mode::Fast) {
  SessionOptions o;
  o.mode = mode;
  return make_session(b.model(), o, &fake::lookup);
}

std::vector<float> run1(const Session& s, std::vector<NamedTensor> in, size_t out = 0) {
  std::vector<Tensor> r = s.run(in);
  auto d = r.at(out).data<float>();
  return {d.begin(), d.end()};
}

Tensor f32(std::initializer_list<float> v) {
  return Tensor::from_values<float>(v, Shape{static_cast<int64_t>(v.size())});
}
Tensor i64(std::initializer_list<int64_t> v) {
  return Tensor::from_values<int64_t>(v, Shape{static_cast<int64_t>(v.size())});
}

TEST(RuntimePlan, MissingOperatorsListedOnceInOrderDeadNodesIgnored) {
  Builder b;
  b.input("x", DType::F32, {2});
  b.node("Nope", {"x"}, {"a"}).node("Gone", {"x"}, {"dead"}).node("Nope", {"a"}, {"c"});
  b.node("Op", {"c"}, {"y"}, {}, "com.example").output("y");
  Error e = expect_error(ErrorKind::UnsupportedOperator, [&] { session_of(b); });
  EXPECT_EQ(e.operators(), (std::vector<std::string>{"Nope (opset 1)", "com.example.Op (opset 1)"}));
  EXPECT_EQ(e.message(),
            "The model uses operators this library does not implement: Nope (opset 1), "
            "com.example.Op (opset 1).");
}

TEST(RuntimePlan, ExactModeUnavailableNamesEveryOperator) {
  Builder b;
  b.input("x", DType::F32, {2});
  b.node("FakeCos", {"x"}, {"a"}).node("AddK", {"a"}, {"b"}).node("FakeSin", {"b"}, {"c"});
  b.node("FakeCos", {"c"}, {"y"}).output("y");
  Error e = expect_error(ErrorKind::ExactModeUnavailable, [&] { session_of(b, Mode::Exact); });
  EXPECT_EQ(e.operators(), (std::vector<std::string>{"FakeCos", "FakeSin"}));
  EXPECT_EQ(e.message(),
            "Exact mode is not available: no exact kernel exists for FakeCos, FakeSin. Use fast "
            "mode or remove these operators.");
  Session fast = session_of(b);  // the same model runs in fast mode
  std::vector<float> y = run1(fast, {{"x", f32({0.0f, 0.0f})}});
  EXPECT_NEAR(y[0], std::cos(std::cos(std::cos(0.0f)) + 0.0f), 1e-6);  // cos(sin-as-cos(cos(0)))
}

TEST(RuntimePlan, FactoryErrorsNameTheNode) {
  Builder b;
  b.input("x", DType::F32, {2});
  b.node("AddK", {"x"}, {"y"}, {attr_i("k", 3)}).output("y");
  Error e = expect_error(ErrorKind::InvalidModel, [&] { session_of(b); });
  EXPECT_EQ(e.node(), "n0_AddK");
  EXPECT_EQ(e.message(), "AddK node 'n0_AddK': attribute 'k' must be FLOAT, not INT");
}

TEST(RuntimePlan, ConstantNodesRunOnceAtPlanTime) {
  Builder b;
  b.input("x", DType::F32, {2}).init("c", f32({1.0f, 2.0f}));
  b.node("AddK", {"c"}, {"c1"}, {attr_f("k", 10.0f)}).node("Sum2", {"x", "c1"}, {"y"}).output("y");
  Session s = session_of(b);
  int before = fake::add_runs;
  EXPECT_EQ(run1(s, {{"x", f32({0.5f, 0.25f})}}), (std::vector<float>{11.5f, 12.25f}));
  EXPECT_EQ(fake::add_runs - before, 1);  // once, while planning
  EXPECT_EQ(run1(s, {{"x", f32({1.0f, 1.0f})}}), (std::vector<float>{12.0f, 13.0f}));
  EXPECT_EQ(fake::add_runs - before, 1);
}

TEST(RuntimePlan, LargeConstantResultsAreComputedEachRun) {
  Builder b;
  b.input("x", DType::F32, {1}).init("c", f32({3.0f}));
  b.node("Grow", {"c"}, {"big"}).node("Grow", {"x"}, {"y"}).output("big").output("y");
  Session s = session_of(b);
  int before = fake::grow_runs;
  std::vector<Tensor> r = s.run(std::vector<NamedTensor>{{"x", f32({2.0f})}});
  EXPECT_EQ(r[0].shape(), Shape({20000}));  // 80000 bytes: larger than its 4-byte input and 64 KiB
  EXPECT_EQ(r[0].data<float>()[19999], 3.0f);
  EXPECT_EQ(r[1].data<float>()[123], 2.0f);
  s.run(std::vector<NamedTensor>{{"x", f32({2.0f})}});
  EXPECT_EQ(fake::grow_runs - before, 4);  // both nodes, both runs
}

TEST(RuntimePlan, RuntimeValuesMakeDynamicNodes) {
  Builder b;
  b.input("x", DType::F32, {6}).input("s", DType::I64, {2});
  b.node("ReshapeTo", {"x", "s"}, {"r"}).node("AddK", {"r"}, {"y"}, {attr_f("k", 1.0f)}).output("y");
  Session s = session_of(b);
  Tensor x = f32({0, 1, 2, 3, 4, 5});
  for (auto [d0, d1] : {std::pair<int64_t, int64_t>{2, 3}, {3, 2}, {2, 3}}) {
    std::vector<Tensor> r = s.run(std::vector<NamedTensor>{{"x", x}, {"s", i64({d0, d1})}});
    EXPECT_EQ(r[0].shape(), Shape({d0, d1}));
    auto y = r[0].data<float>();
    EXPECT_EQ(std::vector<float>(y.begin(), y.end()), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  }
  auto plan = s.impl()->core()->cache.get(s.impl()->core()->graph,
                                          std::vector<InputSignature>{{DType::F32, Shape{6}}, {DType::I64, Shape{2}}});
  EXPECT_TRUE(plan->steps()[0].dynamic);
  EXPECT_TRUE(plan->steps()[1].dynamic);  // its input is shaped at run time
  Error e = expect_error(ErrorKind::InvalidInput, [&] {
    s.run(std::vector<NamedTensor>{{"x", x}, {"s", i64({4, 2})}});
  });
  EXPECT_EQ(e.node(), "n0_ReshapeTo");
  // A run that failed inside a kernel leaves the session (and its pooled state) usable.
  std::vector<Tensor> r = s.run(std::vector<NamedTensor>{{"x", x}, {"s", i64({1, 6})}});
  EXPECT_EQ(r[0].shape(), Shape({1, 6}));
  EXPECT_EQ(r[0].data<float>()[5], 6.0f);
}

TEST(RuntimePlan, ViewsOfSlabInputAndConstantValues) {
  Builder b;
  b.input("x", DType::F32, {6}).init("shape", i64({3, 2})).init("c", f32({1, 2, 3, 4, 5, 6}));
  b.node("AddK", {"x"}, {"a"}, {attr_f("k", 1.0f)});
  b.node("ReshapeTo", {"a", "shape"}, {"ra"});  // view of a slab value
  b.node("ReshapeTo", {"x", "shape"}, {"rx"});  // view of the caller's input
  b.node("ReshapeTo", {"c", "shape"}, {"rc"});  // view of a constant: a constant
  b.node("Sum2", {"ra", "rx"}, {"s1"}).node("Sum2", {"s1", "rc"}, {"y"}).output("y").output("rx");
  Session s = session_of(b);
  Tensor x = f32({0, 10, 20, 30, 40, 50});
  std::vector<Tensor> r = s.run(std::vector<NamedTensor>{{"x", x}});
  auto y = r[0].data<float>();
  EXPECT_EQ(std::vector<float>(y.begin(), y.end()), (std::vector<float>{2, 23, 44, 65, 86, 107}));
  EXPECT_EQ(r[1].shape(), Shape({3, 2}));
  EXPECT_NE(r[1].raw(), x.raw());  // an output viewing the caller's input is returned as a copy
  EXPECT_EQ(r[1].data<float>()[5], 50.0f);

  const CompiledGraph& g = *s.impl()->core()->graph;
  auto plan = s.impl()->core()->cache.get(s.impl()->core()->graph, std::vector<InputSignature>{{DType::F32, Shape{6}}});
  auto id = [&](const char* n) { return g.graph().find_value(n); };
  EXPECT_EQ(plan->source(id("ra")), ValueSource::Slab);
  EXPECT_EQ(plan->slab_offset(id("ra")), plan->slab_offset(id("a")));
  EXPECT_EQ(plan->source(id("rx")), ValueSource::Derived);
  EXPECT_EQ(plan->source(id("rc")), ValueSource::Constant);
  EXPECT_EQ(plan->constant(id("rc")).raw(), g.weights()[static_cast<size_t>(id("c"))].raw());
  // s1 is written while ra (and so a) is read: it must not overlap a's block, except in place of ra.
  EXPECT_EQ(plan->steps().size(), 5u);  // AddK, two views, two Sum2: the constant view is not scheduled
}

TEST(RuntimePlan, DataDependentOutputs) {
  Builder b;
  b.input("x", DType::F32, {-1});
  b.node("Positives", {"x"}, {"p"}).node("AddK", {"p"}, {"y"}, {attr_f("k", 0.5f)}).output("y");
  Session s = session_of(b);
  EXPECT_EQ(run1(s, {{"x", f32({1, -2, 3, -4, 5})}}), (std::vector<float>{1.5f, 3.5f, 5.5f}));
  EXPECT_EQ(run1(s, {{"x", f32({-1, -2, -3, -4, 7})}}), (std::vector<float>{7.5f}));
  EXPECT_EQ(run1(s, {{"x", f32({-1, -2, -3, -4, -7})}}), (std::vector<float>{}));
  // Output buffers of the wrong size are caught after the run, before anything is written.
  std::vector<float> xv = {1, 2, 3}, small(2);
  std::vector<int64_t> shape = {3};
  expect_error(ErrorKind::InvalidInput, [&] { s.run<float, float>(xv, shape, small); });
  std::vector<float> fits(3);
  std::vector<int64_t> got = s.run<float, float>(xv, shape, fits);
  EXPECT_EQ(got, (std::vector<int64_t>{3}));
  EXPECT_EQ(fits, (std::vector<float>{1.5f, 2.5f, 3.5f}));
}

TEST(RuntimePlan, DataDependentNodeOnConstantsIsEvaluatedOnce) {
  Builder b;
  b.input("x", DType::F32, {2}).init("c", f32({-1, 4, -2, 6}));
  b.node("Positives", {"c"}, {"p"}).node("Sum2", {"x", "p"}, {"y"}).output("y");
  Session s = session_of(b);
  EXPECT_EQ(run1(s, {{"x", f32({1, 2})}}), (std::vector<float>{5, 8}));
  auto plan = s.impl()->core()->cache.get(s.impl()->core()->graph, std::vector<InputSignature>{{DType::F32, Shape{2}}});
  EXPECT_EQ(plan->steps().size(), 1u);  // only Sum2 is scheduled
  EXPECT_EQ(plan->source(s.impl()->core()->graph->graph().find_value("p")), ValueSource::Constant);
}

TEST(RuntimePlan, InPlaceChainSharesOneBlock) {
  Builder b;
  b.input("x", DType::F32, {4});
  std::vector<ir::Attribute> attrs = {attr_f("k", 1.0f), attr_i("inplace", 1)};
  b.node("AddK", {"x"}, {"a"}, attrs).node("AddK", {"a"}, {"b"}, attrs).node("AddK", {"b"}, {"y"}, attrs);
  b.output("y");
  Session s = session_of(b);
  Tensor x = f32({1, 2, 3, 4});
  EXPECT_EQ(run1(s, {{"x", x}}), (std::vector<float>{4, 5, 6, 7}));
  EXPECT_TRUE(fake::last_add_in_place);
  EXPECT_EQ(x.data<float>()[0], 1.0f);  // the caller's input is never written
  const CompiledGraph& g = *s.impl()->core()->graph;
  auto plan = s.impl()->core()->cache.get(s.impl()->core()->graph, std::vector<InputSignature>{{DType::F32, Shape{4}}});
  int a = g.graph().find_value("a"), bb = g.graph().find_value("b"), y = g.graph().find_value("y");
  EXPECT_EQ(plan->slab_offset(a), plan->slab_offset(bb));
  EXPECT_EQ(plan->slab_offset(bb), plan->slab_offset(y));
  EXPECT_EQ(plan->slab_bytes(), 64u);
}

TEST(RuntimePlan, WarmRunsAllocateNoArenaChunks) {
  Builder b;
  b.input("x", DType::F32, {-1});
  b.node("Positives", {"x"}, {"p"}).node("AddK", {"p"}, {"y"}, {attr_f("k", 0.5f)}).output("y");
  Session s = session_of(b);
  std::vector<float> x(1000, 1.0f), y(1000);
  std::vector<int64_t> shape = {1000};
  auto plan =
      s.impl()->core()->cache.get(s.impl()->core()->graph, std::vector<InputSignature>{{DType::F32, Shape{1000}}});
  s.run<float, float>(x, shape, y);
  auto state = plan->acquire();
  size_t chunks = state->arena.system_allocations();
  EXPECT_GE(chunks, 1u);
  plan->give_back(std::move(state));
  for (int i = 0; i < 5; ++i) s.run<float, float>(x, shape, y);
  state = plan->acquire();
  EXPECT_EQ(state->arena.system_allocations(), chunks);
  plan->give_back(std::move(state));
  EXPECT_EQ(y[999], 1.5f);
}

TEST(RuntimePlan, OutputsThatAreInputsOrConstantsAreCopies) {
  Builder b;
  b.input("x", DType::F32, {2}).init("c", f32({7, 8}));
  b.output("x").output("c");
  Session s = session_of(b);
  Tensor x = f32({1, 2});
  std::vector<Tensor> r = s.run(std::vector<NamedTensor>{{"x", x}});
  EXPECT_NE(r[0].raw(), x.raw());
  EXPECT_EQ(r[0].data<float>()[1], 2.0f);
  r[1].mutable_data<float>()[0] = -1.0f;  // the caller owns it; the model's constant is unaffected
  std::vector<Tensor> r2 = s.run(std::vector<NamedTensor>{{"x", x}});
  EXPECT_EQ(r2[1].data<float>()[0], 7.0f);
}

TEST(RuntimePlan, UnalignedWeightsAreCopied) {
  Storage raw = allocate_storage(64);
  float vals[3] = {1.5f, -2.0f, 4.0f};
  std::memcpy(raw.data.get() + 2, vals, sizeof vals);
  Tensor odd = Tensor::view_of(raw, 2, DType::F32, Shape{3});
  ASSERT_NE(reinterpret_cast<uintptr_t>(odd.raw()) % 4, 0u);
  Builder b;
  b.input("x", DType::F32, {3}).init("w", odd);
  b.node("Sum2", {"x", "w"}, {"y"}).output("y");
  auto g = CompiledGraph::create(b.model(), false, &fake::lookup);
  const Tensor& w = g->weights()[static_cast<size_t>(g->graph().find_value("w"))];
  EXPECT_EQ(reinterpret_cast<uintptr_t>(w.raw()) % 4, 0u);
  float got[3];
  std::memcpy(got, w.raw(), sizeof got);
  EXPECT_EQ(std::memcmp(got, vals, sizeof got), 0);
  // Aligned weights are used in place.
  Builder b2;
  Tensor aligned = f32({1, 2, 3});
  b2.input("x", DType::F32, {3}).init("w", aligned);
  b2.node("Sum2", {"x", "w"}, {"y"}).output("y");
  auto g2 = CompiledGraph::create(b2.model(), false, &fake::lookup);
  EXPECT_EQ(g2->weights()[static_cast<size_t>(g2->graph().find_value("w"))].raw(), aligned.raw());
}

TEST(RuntimePlan, UnsupportedGraphTypesRefused) {
  {
    Builder b;
    b.input("z", DType::Complex64, {2}).output("z");
    Error e = expect_error(ErrorKind::Unsupported, [&] { session_of(b); });
    EXPECT_EQ(e.message(), "graph input 'z' has element type complex64, which is not supported");
  }
  {
    Builder b;
    b.input("q", DType::F32, {2});
    b.g().values[0].type.kind = ValueKind::Map;  // sequences and optionals are values now (section 8); maps are not
    b.output("q");
    expect_error(ErrorKind::Unsupported, [&] { session_of(b); });
  }
  {
    Builder b;
    b.input("x", DType::F32, {1});
    int v = b.value("s");
    auto tv = std::make_shared<ir::TensorValue>();
    tv->name = "s";
    tv->dtype = DType::String;
    tv->dims = {1};
    tv->strings = {"hello"};
    b.g().values[static_cast<size_t>(v)].initializer = tv;
    b.node("Sum2", {"x", "s"}, {"y"}).output("y");
    Error e = expect_error(ErrorKind::Unsupported, [&] { session_of(b); });
    EXPECT_EQ(e.message(), "initializer 's' has element type string, which is not supported");
  }
}

TEST(RuntimePlan, PlanTimeShapeErrorsNameTheNode) {
  Builder b;
  b.input("x", DType::F32, {-1}).input("z", DType::F32, {-1});
  b.node("Sum2", {"x", "z"}, {"y"}).output("y");
  Session s = session_of(b);
  Error e = expect_error(ErrorKind::InvalidInput, [&] {
    s.run(std::vector<NamedTensor>{{"x", f32({1, 2})}, {"z", f32({1, 2, 3})}});
  });
  EXPECT_EQ(e.message(), "Sum2 node 'n0_Sum2': shapes differ");
  EXPECT_EQ(run1(s, {{"x", f32({1, 2})}, {"z", f32({3, 4})}}), (std::vector<float>{4, 6}));
}

// A new shape is planned outside the plan-cache lock: a run at a shape already planned finishes while another
// thread's plan build is stalled, a second thread needing the stalled shape waits for that build instead of
// building it again, and a build that fails fails its waiters and is not cached.
TEST(RuntimePlan, NewShapesArePlannedOutsideTheCacheLock) {
  Builder b;
  b.input("x", DType::F32, {-1});
  b.node("Gate", {"x"}, {"y"}).output("y");
  Session s = make_session(b.model(), SessionOptions{}, &fake::lookup);
  auto run = [&](int64_t n) {
    std::vector<float> x(static_cast<size_t>(n), 2.0f), y(static_cast<size_t>(n));
    std::vector<int64_t> shape = {n};
    s.run<float, float>(x, shape, y);
    return y;
  };
  run(3);
  const rt::PlanCache& cache = s.impl()->core()->cache;
  fake::gate_prepares = 0;
  fake::gate_extent = 7;
  fake::gate_closed = true;
  std::thread first([&] { run(7); });
  while (fake::gate_waiting == 0) std::this_thread::yield();
  std::thread second([&] { run(7); });
  // The planned shape runs now; with the build under the lock it would wait for the gate (and hang).
  auto quick = std::async(std::launch::async, [&] { return run(3); });
  const bool finished = quick.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
  fake::gate_closed = false;
  first.join();
  second.join();
  ASSERT_TRUE(finished) << "a run at a planned shape waited for another shape's plan build";
  EXPECT_EQ(quick.get(), std::vector<float>(3, 2.0f));
  EXPECT_EQ(fake::gate_prepares, 1);  // the second thread took the first one's plan
  EXPECT_EQ(cache.plans_built(), 2u);

  fake::fail_extent = 5;
  for (int i = 0; i < 2; ++i) {
    try {
      run(5);
      ADD_FAILURE() << "the build should fail";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidInput);
    }
  }
  EXPECT_EQ(cache.plans_built(), 2u);  // failed builds are not cached: each call tries again and fails again
  fake::fail_extent = -1;
  fake::gate_extent = -1;
  EXPECT_EQ(run(5), std::vector<float>(5, 2.0f));
}

// Weights are packed once per session: two plans (two input shapes) of a MatMul and a Conv hold the same packed
// state, and the results at both shapes are the products (hand-computed).
TEST(RuntimePlan, PlansOfNewShapesSharePackedWeights) {
  Builder b;
  b.input("x", DType::F32, {-1, 2}).init("w", Tensor::from_values<float>({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, Shape{2, 3}));
  b.node("MatMul", {"x", "w"}, {"y"}).output("y");
  b.input("img", DType::F32, {1, 1, 2, -1}).init("k", Tensor::from_values<float>({1.f, -1.f}, Shape{1, 1, 2, 1}));
  b.node("Conv", {"img", "k"}, {"z"}).output("z");
  Session s = make_session(b.model(), SessionOptions{}, &rt::find_op);
  const auto& graph = s.impl()->core()->graph;
  auto plan = [&](int64_t rows, int64_t width) {
    return ExecutionPlan::create(
        graph, {InputSignature{DType::F32, Shape{rows, 2}}, InputSignature{DType::F32, Shape{1, 1, 2, width}}});
  };
  auto p1 = plan(1, 3), p2 = plan(5, 4);
  ASSERT_EQ(p1->steps().size(), 2u);
  ASSERT_EQ(p2->steps().size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_NE(p1->steps()[i].state, nullptr);
    EXPECT_EQ(p1->steps()[i].state, p2->steps()[i].state) << "step " << i;
  }
  std::vector<NamedTensor> in = {
      {"x", Tensor::from_values<float>({1.f, 1.f, 0.f, 2.f}, Shape{2, 2})},
      {"img", Tensor::from_values<float>({1.f, 2.f, 3.f, 4.f, 5.f, 7.f}, Shape{1, 1, 2, 3})}};
  std::vector<Tensor> out = s.run(in);
  EXPECT_EQ(std::vector<float>(out[0].data<float>().begin(), out[0].data<float>().end()),
            (std::vector<float>{5.f, 7.f, 9.f, 8.f, 10.f, 12.f}));
  EXPECT_EQ(std::vector<float>(out[1].data<float>().begin(), out[1].data<float>().end()),
            (std::vector<float>{-3.f, -3.f, -4.f}));
}

// A Concat of several megabytes is copied in pieces on the pool: every element lands where the axis says, at 1
// and 2 threads, with inputs cut into pieces mid-row (720 KB each, 256 KiB pieces).
TEST(RuntimePlan, LargeConcatCopiesInPiecesOnThePool) {
  Builder b;
  b.input("a", DType::F32, {2, 2, 300, 300})
      .input("b", DType::F32, {2, 1, 300, 300})
      .input("c", DType::F32, {2, 3, 300, 300});
  b.node("Concat", {"a", "b", "c"}, {"y"}, {attr_i("axis", 1)}).output("y");
  const int64_t plane = 300 * 300;
  auto make = [&](int64_t ch, float base) {
    std::vector<float> v(static_cast<size_t>(2 * ch * plane));
    for (size_t i = 0; i < v.size(); ++i) v[i] = base + static_cast<float>(i % 100003);
    return Tensor::from_values<float>(v, Shape{2, ch, 300, 300});
  };
  const Tensor a = make(2, 0.f), bb = make(1, 1e6f), c = make(3, 2e6f);
  for (int threads : {1, 2}) {
    SessionOptions o;
    o.intra_op_threads = threads;
    Session s = make_session(b.model(), o, &rt::find_op);
    std::vector<Tensor> out = s.run(std::vector<NamedTensor>{{"a", a}, {"b", bb}, {"c", c}});
    const auto y = out[0].data<float>();
    ASSERT_EQ(y.size(), static_cast<size_t>(2 * 6 * plane));
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t ch = 0; ch < 6; ++ch) {
        const Tensor& src = ch < 2 ? a : ch < 3 ? bb : c;
        const int64_t sc = ch < 2 ? ch : ch < 3 ? ch - 2 : ch - 3, cs = ch < 2 ? 2 : ch < 3 ? 1 : 3;
        const float* from = src.data<float>().data() + (n * cs + sc) * plane;
        const float* to = y.data() + (n * 6 + ch) * plane;
        ASSERT_EQ(std::memcmp(from, to, sizeof(float) * static_cast<size_t>(plane)), 0)
            << threads << " " << n << " " << ch;
      }
  }
}

}  // namespace
}  // namespace onemodel::rt
