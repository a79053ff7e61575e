// Session behaviour beyond the happy path: every InvalidInput case, option validation, Disposed, the plan
// cache (reuse and eviction) and concurrent runs. Expected values are hand-computed from scorer.onnx
// (score = features x [[1,0],[0,1],[1,1]] + bias, best = row max) and classifier.onnx single-row results.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <thread>

#include "onemodel/builder.h"
#include "onemodel/model.h"
#include "onemodel/session.h"
#include "runtime/session_impl.h"
#include "runtime_fake_ops.h"
#include "test_util.h"

namespace onemodel {
namespace {

using test::expect_error;

using test::testdata;

// Independent reference for scorer.onnx.
void scorer_reference(const std::vector<float>& f, const std::vector<float>& b, std::vector<float>& score,
                      std::vector<float>& best) {
  size_t rows = f.size() / 3;
  score.assign(rows * 2, 0);
  best.assign(rows, 0);
  for (size_t r = 0; r < rows; ++r) {
    score[r * 2] = f[r * 3] + f[r * 3 + 2] + b[0];
    score[r * 2 + 1] = f[r * 3 + 1] + f[r * 3 + 2] + b[1];
    best[r] = std::max(score[r * 2], score[r * 2 + 1]);
  }
}

struct Scorer {
  Session s = Session::load(testdata("scorer.onnx"));
  Tensor features = Tensor::from_values<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  Tensor bias = Tensor::from_values<float>({0.5f, 1.5f}, Shape{1, 2});
  std::vector<Tensor> run(std::vector<std::string> names, std::vector<Tensor> ins,
                          std::vector<std::string> outs = {"score", "best"}, size_t nout = 2) {
    std::vector<Tensor> o(nout);
    s.run(names, ins, outs, o);
    return o;
  }
};

TEST(RuntimeSession, InvalidInputNames) {
  Scorer sc;
  Error e = expect_error(ErrorKind::InvalidInput, [&] { sc.run({"features", "bais"}, {sc.features, sc.bias}); });
  EXPECT_EQ(e.message(), "unknown input 'bais'; the model's inputs are: features, bias");
  e = expect_error(ErrorKind::InvalidInput, [&] { sc.run({"features"}, {sc.features}); });
  EXPECT_EQ(e.message(), "missing input 'bias'");
  e = expect_error(ErrorKind::InvalidInput, [&] {
    sc.run({"features", "bias", "bias"}, {sc.features, sc.bias, sc.bias});
  });
  EXPECT_EQ(e.message(), "input 'bias' is given more than once");
  e = expect_error(ErrorKind::InvalidInput, [&] { sc.run({"features", "bias"}, {sc.features}); });
  e = expect_error(ErrorKind::InvalidInput, [&] { sc.run({"features", "bias"}, {sc.features, Tensor()}); });
  EXPECT_EQ(e.message(), "input 'bias' is an empty tensor (no storage)");
}

TEST(RuntimeSession, InvalidInputTypesAndShapes) {
  Scorer sc;
  Tensor f64 = Tensor::zeros(DType::F64, Shape{2, 3});
  Error e = expect_error(ErrorKind::InvalidInput, [&] { sc.run({"features", "bias"}, {f64, sc.bias}); });
  EXPECT_EQ(e.message(), "input 'features' must be F32, got F64");
  Tensor rank1 = Tensor::zeros(DType::F32, Shape{6});
  e = expect_error(ErrorKind::InvalidInput, [&] { sc.run({"features", "bias"}, {rank1, sc.bias}); });
  EXPECT_EQ(e.message(), "input 'features' must have rank 2 [batch, 3], got shape [6]");
  Tensor wide = Tensor::zeros(DType::F32, Shape{2, 4});
  e = expect_error(ErrorKind::InvalidInput, [&] { sc.run({"features", "bias"}, {wide, sc.bias}); });
  EXPECT_EQ(e.message(), "input 'features' dimension 1 must be 3 [batch, 3], got shape [2,4]");
  Tensor bias2 = Tensor::zeros(DType::F32, Shape{2, 2});
  e = expect_error(ErrorKind::InvalidInput, [&] { sc.run({"features", "bias"}, {sc.features, bias2}); });
  EXPECT_EQ(e.message(), "input 'bias' dimension 0 must be 1 [1, 2], got shape [2,2]");
}

// A declared scalar takes any shape, as in ONNX Runtime (docs/graph-runtime.md section 4, "Inputs"); the graph
// runs on the shape fed. A declared rank-1 input still refuses rank 2.
TEST(RuntimeSession, DeclaredScalarInputTakesAnyShape) {
  rt::fake::Builder b;
  b.input("s", DType::F32, {}).input("x", DType::F32, {3}).node("Add", {"x", "s"}, {"y"}).output("y");
  b.g().nodes.back().opset = 14;  // numpy broadcasting (Add-1 needed a broadcast attribute)
  auto model = std::make_shared<ir::Model>(*b.model());
  model->opset_imports = {{"", 14}};
  Session s = make_session(model, SessionOptions{});
  const Tensor x = Tensor::from_values<float>({1, 2, 3}, Shape{3});
  const std::vector<std::string> names = {"s", "x"}, outs = {"y"};
  for (const Shape& shape : {Shape{}, Shape{1}, Shape{1, 1}}) {
    std::vector<Tensor> out(1);
    std::vector<Tensor> ins = {Tensor::from_values<float>({10}, shape), x};
    s.run(names, ins, outs, out);
    std::vector<float> want = {11, 12, 13};
    ASSERT_EQ(out[0].numel(), 3) << shape.to_string();
    for (int i = 0; i < 3; ++i) EXPECT_EQ(out[0].data<float>()[i], want[static_cast<size_t>(i)]) << shape.to_string();
  }
  std::vector<Tensor> out(1);
  std::vector<Tensor> ins = {Tensor::from_values<float>({10}, Shape{1}), Tensor::zeros(DType::F32, Shape{1, 3})};
  Error e = expect_error(ErrorKind::InvalidInput, [&] { s.run(names, ins, outs, out); });
  EXPECT_EQ(e.message(), "input 'x' must have rank 1 [3], got shape [1,3]");
}

TEST(RuntimeSession, InvalidOutputs) {
  Scorer sc;
  Error e = expect_error(ErrorKind::InvalidInput, [&] {
    sc.run({"features", "bias"}, {sc.features, sc.bias}, {"scores"}, 1);
  });
  EXPECT_EQ(e.message(), "unknown output 'scores'; the model's outputs are: score, best");
  expect_error(ErrorKind::InvalidInput, [&] { sc.run({"features", "bias"}, {sc.features, sc.bias}, {"score"}, 2); });
  // A pre-allocated output of the wrong shape or type is refused before anything is written.
  std::vector<std::string> in_names = {"features", "bias"}, out_names = {"best", "score"};
  std::vector<Tensor> ins = {sc.features, sc.bias};
  std::vector<Tensor> outs = {Tensor::zeros(DType::F32, Shape{2}), Tensor::zeros(DType::F32, Shape{3, 2})};
  e = expect_error(ErrorKind::InvalidInput, [&] { sc.s.run(in_names, ins, out_names, outs); });
  EXPECT_EQ(e.message(), "output 'score' is F32 [2,2], but the tensor given for it is F32 [3,2]");
  EXPECT_EQ(outs[0].data<float>()[0], 0.0f);  // nothing written
  outs[1] = Tensor::zeros(DType::I32, Shape{2, 2});
  expect_error(ErrorKind::InvalidInput, [&] { sc.s.run(in_names, ins, out_names, outs); });
}

TEST(RuntimeSession, SpanFormChecks) {
  Session cls = Session::load(testdata("classifier.onnx"));
  std::vector<float> x = {5.1f, 3.5f, 1.4f, 0.2f}, y(3), small(2);
  std::vector<int64_t> shape = {1, 4};
  std::vector<int64_t> got = cls.run<float, float>(x, shape, y);
  EXPECT_EQ(got, (std::vector<int64_t>{1, 3}));
  EXPECT_NEAR(y[0], 0.23228599f, 2e-6);
  Error e = expect_error(ErrorKind::InvalidInput, [&] { cls.run<float, float>(x, shape, small); });
  EXPECT_EQ(e.message(), "the output buffer holds 8 bytes; output 'probs' [1,3] needs 12");
  std::vector<int64_t> wrong = {2, 4};
  expect_error(ErrorKind::InvalidInput, [&] { cls.run<float, float>(x, wrong, y); });  // 4 values for 8
  std::vector<int64_t> ids = {1, 2, 3, 4};
  expect_error(ErrorKind::InvalidInput, [&] { cls.run<int64_t, float>(ids, shape, y); });
  std::vector<double> yd(3);
  expect_error(ErrorKind::InvalidInput, [&] { cls.run<float, double>(x, shape, yd); });
  std::vector<int64_t> neg = {-1, 4};
  expect_error(ErrorKind::InvalidInput, [&] { cls.run<float, float>(x, neg, y); });
  Scorer sc;  // two inputs: the span form does not apply
  expect_error(ErrorKind::InvalidInput, [&] { sc.s.run<float, float>(x, shape, y); });
}

// The three run forms share one path (session.cc run_graph): one key per input types and shapes whichever
// form fed them, the same order of checks (Disposed, then inputs, then outputs), and nothing written to a
// caller's buffer that a check refused.
TEST(RuntimeSession, RunFormsShareOnePath) {
  Session cls = Session::load(testdata("classifier.onnx"));
  const std::vector<float> x = {5.1f, 3.5f, 1.4f, 0.2f};
  const std::vector<int64_t> shape = {1, 4};
  const Tensor xt = Tensor::from_values<float>(x, Shape{1, 4});
  std::vector<float> y(3);
  cls.run<float, float>(x, shape, y);
  std::vector<Tensor> by_tensor = cls.run(std::vector<NamedTensor>{{"x", xt}});
  std::vector<Value> by_value = cls.run_values(std::vector<NamedValue>{{"x", Value(xt)}});
  EXPECT_EQ(cls.impl()->core()->cache.plans_built(), 1u);  // one plan for all three forms
  ASSERT_EQ(by_value.size(), 1u);
  ASSERT_TRUE(by_value[0].is_tensor());
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(by_tensor[0].data<float>()[i], y[i]);
    EXPECT_EQ(by_value[0].tensor().data<float>()[i], y[i]);
  }

  // Input errors come before output errors in every form.
  const Tensor wrong = Tensor::zeros(DType::F64, Shape{1, 4});
  const std::vector<std::string> bad_out = {"nope"};
  Error e = expect_error(ErrorKind::InvalidInput, [&] { cls.run(std::vector<NamedTensor>{{"x", wrong}}, bad_out); });
  EXPECT_EQ(e.message(), "input 'x' must be F32, got F64");
  e = expect_error(ErrorKind::InvalidInput, [&] {
    cls.run_values(std::vector<NamedValue>{{"x", Value(wrong)}}, bad_out);
  });
  EXPECT_EQ(e.message(), "input 'x' must be F32, got F64");
  e = expect_error(ErrorKind::InvalidInput, [&] { cls.run(std::vector<NamedTensor>{{"x", xt}}, bad_out); });
  EXPECT_EQ(e.message(), "unknown output 'nope'; the model's outputs are: probs");

  // Hostile span calls: null buffers, a short output, a wrong output type; the buffer is left as it was.
  std::vector<float> guard(3, -7.0f);
  e = expect_error(ErrorKind::InvalidInput,
                   [&] { cls.run_into(DType::F32, nullptr, 16, shape, DType::F32, guard.data(), 12); });
  EXPECT_EQ(e.message(), "input 'x' has no data");
  e = expect_error(ErrorKind::InvalidInput,
                   [&] { cls.run_into(DType::F32, x.data(), 16, shape, DType::F32, nullptr, 12); });
  EXPECT_EQ(e.message(), "the output buffer is null");
  e = expect_error(ErrorKind::InvalidInput,
                   [&] { cls.run_into(DType::F32, x.data(), 16, shape, DType::F64, guard.data(), 12); });
  EXPECT_EQ(e.message(), "output 'probs' is F32, the buffer holds F64");
  e = expect_error(ErrorKind::InvalidInput,
                   [&] { cls.run_into(DType::F32, x.data(), 15, shape, DType::F32, guard.data(), 12); });
  EXPECT_EQ(e.message(), "input 'x' of shape [1,4] needs 16 bytes, got 15");
  const int64_t huge[] = {int64_t{1} << 40, 4};
  e = expect_error(ErrorKind::InvalidInput,
                   [&] { cls.run_into(DType::F32, x.data(), 16, huge, DType::F32, guard.data(), 12); });
  EXPECT_EQ(e.message(), "input 'x' has an invalid shape [1099511627776,4]");
  for (float g : guard) EXPECT_EQ(g, -7.0f);
  EXPECT_EQ(cls.impl()->core()->cache.plans_built(), 1u);  // refused calls made no plan

  // After release every form reports Disposed first, even with arguments it would refuse.
  Scorer sc;  // two inputs: the span form would be refused
  Session copy = sc.s;
  sc.s.release();
  expect_error(ErrorKind::Disposed, [&] { copy.run_into(DType::F32, nullptr, 1, shape, DType::F32, nullptr, 0); });
  expect_error(ErrorKind::Disposed, [&] { copy.run_values(std::vector<NamedValue>{{"nope", Value()}}); });
  expect_error(ErrorKind::Disposed, [&] { copy.run(std::vector<NamedTensor>{}, bad_out); });
}

TEST(RuntimeSession, OptionsValidated) {
  auto load = [](SessionOptions o) { return Session::load(testdata("classifier.onnx"), o); };
  SessionOptions o;
  o.intra_op_threads = -1;
  expect_error(ErrorKind::InvalidArgument, [&] { load(o); });
  o.intra_op_threads = 257;
  expect_error(ErrorKind::InvalidArgument, [&] { load(o); });
  o.intra_op_threads = 256;
  EXPECT_NO_THROW(load(o));
  o = {};
  o.max_cached_plans = 0;
  expect_error(ErrorKind::InvalidArgument, [&] { load(o); });
  o = {};
  o.max_nesting = 7;
  expect_error(ErrorKind::InvalidArgument, [&] { load(o); });
  o.max_nesting = 251;
  expect_error(ErrorKind::InvalidArgument, [&] { load(o); });
  o.max_nesting = 8;
  EXPECT_NO_THROW(load(o));
}

TEST(RuntimeSession, DisposedAfterRelease) {
  Scorer sc;
  Session copy = sc.s;                       // copies share one model
  const auto& passes = sc.s.graph_passes();  // the session's own copy: it outlives the released graph
  const auto passes_before = passes;
  sc.s.release();
  EXPECT_EQ(passes, passes_before);
  expect_error(ErrorKind::Disposed, [&] { copy.graph_passes(); });
  Error e = expect_error(ErrorKind::Disposed, [&] { sc.run({"features", "bias"}, {sc.features, sc.bias}); });
  expect_error(ErrorKind::Disposed, [&] { copy.inputs(); });
  expect_error(ErrorKind::Disposed, [&] { copy.outputs(); });
  std::vector<float> x(3), y(2);
  std::vector<int64_t> shape = {1, 3};
  expect_error(ErrorKind::Disposed, [&] { copy.run<float, float>(x, shape, y); });
  EXPECT_NO_THROW(copy.release());  // releasing twice is harmless
}

TEST(RuntimeSession, ReleaseDuringRunsIsSafe) {
  Session s = Session::load(testdata("classifier.onnx"));
  std::vector<std::thread> threads;
  std::atomic<int> ok{0}, disposed{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      std::vector<float> x = {5.1f, 3.5f, 1.4f, 0.2f}, y(3);
      std::vector<int64_t> shape = {1, 4};
      for (int i = 0; i < 100; ++i) {
        try {
          s.run<float, float>(x, shape, y);
          if (std::fabs(y[0] - 0.23228599f) < 2e-6f) ++ok;
        } catch (const Error& e) {
          if (e.kind() == ErrorKind::Disposed) ++disposed;
        }
      }
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  s.release();
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok + disposed, 400);
}

TEST(RuntimeSession, PlanCacheReuseAndEviction) {
  for (int capacity : {1, 16}) {
    SessionOptions o;
    o.max_cached_plans = capacity;
    Session s = Session::load(testdata("scorer.onnx"), o);
    Tensor bias = Tensor::from_values<float>({0.5f, 1.5f}, Shape{1, 2});
    for (int round = 0; round < 3; ++round)
      for (int64_t rows : {1, 2, 3, 2}) {
        std::vector<float> f(static_cast<size_t>(rows) * 3);
        for (size_t i = 0; i < f.size(); ++i) f[i] = static_cast<float>(i) * 0.5f - static_cast<float>(round);
        std::vector<NamedTensor> in = {{"features", Tensor::from_values<float>(f, Shape{rows, 3})}, {"bias", bias}};
        std::vector<Tensor> out = s.run(in);
        std::vector<float> score, best;
        scorer_reference(f, {0.5f, 1.5f}, score, best);
        ASSERT_EQ(out[0].shape(), Shape({rows, 2}));
        EXPECT_EQ(std::vector<float>(out[0].data<float>().begin(), out[0].data<float>().end()), score);
        EXPECT_EQ(std::vector<float>(out[1].data<float>().begin(), out[1].data<float>().end()), best);
      }
    const rt::PlanCache& cache = s.impl()->core()->cache;
    if (capacity == 1) {
      EXPECT_EQ(cache.size(), 1u);
      EXPECT_EQ(cache.plans_built(), 12u);  // every shape change evicts the other plan
    } else {
      EXPECT_EQ(cache.size(), 3u);
      EXPECT_EQ(cache.plans_built(), 3u);  // one plan per batch size, reused afterwards
    }
  }
}

// graph-runtime.md section 5, "Reuse": a new shape's run state takes the memory that the other plans' idle
// run states give back, and results never depend on what that memory held before. Outputs of 1.2-1.4 million
// floats put the slab above 2 MiB (huge-page mappings, the ones kept for reuse).
TEST(RuntimeSession, NewShapeReusesRunMemoryWithTheSameResults) {
  GraphBuilder g;
  Var x = g.input("x", DType::F32, {"rows", 512});
  Var y = x.relu().add(x).mul(x);
  BuiltModel m = g.compile({{"y", y}});
  auto check = [&](int64_t rows, float shift) {
    std::vector<float> xs(static_cast<size_t>(rows) * 512);
    for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(static_cast<int>(i % 13) - 6) * 0.25f + shift;
    std::vector<Tensor> out = m.run({{"x", Tensor::from_values(std::span<const float>(xs), Shape{rows, 512})}});
    ASSERT_EQ(out[0].shape(), (Shape{rows, 512}));
    auto got = out[0].data<float>();
    for (size_t i = 0; i < xs.size(); ++i) {
      const float v = xs[i];
      ASSERT_EQ(got[i], ((v > 0 ? v : 0.0f) + v) * v) << "rows " << rows << " at " << i;
    }
  };
  check(2400, 0.0f);
  check(2600, 0.5f);   // a new plan: the first one's idle state gives its memory back
  check(2500, -0.5f);  // another: takes the second one's, which holds that run's values
  check(2400, 1.0f);   // the first shape again: its plan is kept, its run state made anew
  const rt::PlanCache& cache = m.session().impl()->core()->cache;
  EXPECT_EQ(cache.plans_built(), 3u);
  if (rt::run_storage_uses_huge_pages()) {
    EXPECT_GE(cache.run_memory().reused(), 2u);
  }
}

TEST(RuntimeSession, ConcurrentRunsMatchSingleThreaded) {
  Session s = Session::load(testdata("scorer.onnx"));
  auto make = [](int k) {
    int64_t rows = 1 + k % 4;
    std::vector<float> f(static_cast<size_t>(rows) * 3);
    for (size_t i = 0; i < f.size(); ++i) f[i] = static_cast<float>((k * 7 + static_cast<int>(i) * 3) % 17) - 8.0f;
    std::vector<float> b = {static_cast<float>(k % 5) * 0.25f, -static_cast<float>(k % 3)};
    return std::make_pair(Tensor::from_values<float>(f, Shape{rows, 3}), Tensor::from_values<float>(b, Shape{1, 2}));
  };
  auto run_one = [&](int k) {
    auto [f, b] = make(k);
    std::vector<NamedTensor> in = {{"bias", b}, {"features", f}};
    std::vector<Tensor> out = s.run(in);
    std::vector<float> r(out[0].data<float>().begin(), out[0].data<float>().end());
    r.insert(r.end(), out[1].data<float>().begin(), out[1].data<float>().end());
    return r;
  };
  constexpr int kThreads = 8, kRuns = 200;
  std::vector<std::vector<float>> expected;
  for (int k = 0; k < kThreads * kRuns; ++k) expected.push_back(run_one(k));
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRuns; ++i) {
        int k = (i * kThreads + t * 37) % (kThreads * kRuns);
        if (run_one(k) != expected[static_cast<size_t>(k)]) ++mismatches[static_cast<size_t>(t)];
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatches[static_cast<size_t>(t)], 0) << "thread " << t;
  // Spot-check the single-threaded results against the reference.
  auto [f, b] = make(5);
  std::vector<float> score, best;
  scorer_reference(std::vector<float>(f.data<float>().begin(), f.data<float>().end()),
                   std::vector<float>(b.data<float>().begin(), b.data<float>().end()), score, best);
  score.insert(score.end(), best.begin(), best.end());
  EXPECT_EQ(expected[5], score);
}

TEST(RuntimeSession, ModelShapeInferenceFromDeclaredDims) {
  Model m = Model::load(testdata("wide.onnx"));  // [1, 256]: all dims fixed
  std::vector<float> x(256, 0.0f);
  EXPECT_EQ(m.run(std::span<const float>(x)).size(), 64u);
  std::vector<float> short_x(255, 0.0f);
  Error e = expect_error(ErrorKind::InvalidInput, [&] { m.run(std::span<const float>(short_x)); });
  EXPECT_EQ(e.message(), "input 'x' [1, 256] needs 256 values, got 255");
  std::vector<int64_t> ids(256, 1);
  expect_error(ErrorKind::InvalidInput, [&] { m.run(std::span<const int64_t>(ids)); });
  Model sc = Model::load(testdata("scorer.onnx"));  // two inputs: not for the happy path
  expect_error(ErrorKind::InvalidInput, [&] { sc.run(std::span<const float>(x)); });
}

}  // namespace
}  // namespace onemodel
