// Session::start_profiling / end_profiling (docs/profiling.md), and two runtime paths the profiler made
// visible: bodies taking captured outer constants as weights, and dynamic steps keeping what they prepared.
// Models: tools/gen_ctrlflow_models.py (testdata/ctrlflow); expected values worked out by hand in comments.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "onemodel/onemodel.h"
#include "test_util.h"

namespace onemodel {
namespace {

Session load(const char* name, Mode mode = Mode::Fast, int threads = 1) {
  SessionOptions o;
  o.mode = mode;
  o.intra_op_threads = threads;
  return Session::load(test::testdata(std::string("ctrlflow/") + name), o);
}

Tensor flag(bool v) { return Tensor::from_values<bool>({v}, Shape()); }

std::vector<float> floats(const Tensor& t) {
  auto d = t.data<float>();
  return {d.begin(), d.end()};
}

std::vector<Tensor> run_if(const Session& s, bool cond) {
  std::vector<NamedTensor> in = {{"cond", flag(cond)}, {"x", Tensor::from_values<float>({1, 1}, Shape{1, 2})}};
  return s.run(in);
}

const NodeProfile* find_node(const Profile& p, const std::string& name) {
  for (const NodeProfile& n : p.nodes)
    if (n.node == name) return &n;
  return nullptr;
}

TEST(ProfileTest, CountsRunsNodesAndBodies) {
  Session s = load("if_captures_constants.onnx");
  run_if(s, true);  // before start: not recorded
  s.start_profiling();
  for (int i = 0; i < 3; ++i) run_if(s, true);
  run_if(s, false);
  const Profile p = s.end_profiling();
  EXPECT_EQ(p.runs, 4);
  EXPECT_GT(p.run_ms, 0.0);

  const NodeProfile* iff = find_node(p, "the_if");
  ASSERT_NE(iff, nullptr);
  EXPECT_EQ(iff->op_type, "If");
  EXPECT_EQ(iff->depth, 0);
  EXPECT_EQ(iff->calls, 4);
  const NodeProfile* mm = find_node(p, "the_if/then_branch/then_matmul");
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->op_type, "MatMul");
  EXPECT_EQ(mm->depth, 1);
  EXPECT_EQ(mm->calls, 3);
  const NodeProfile* sub = find_node(p, "the_if/else_branch/else_sub");
  ASSERT_NE(sub, nullptr);
  EXPECT_EQ(sub->calls, 1);
  // The Constant node is folded into the plan: it never runs, so it is not in the profile.
  EXPECT_EQ(find_node(p, "the_constant"), nullptr);

  // Self times: the If's own time excludes its bodies' nodes, and self times add up to at most the runs.
  const NodeProfile* add = find_node(p, "the_if/then_branch/then_add");
  ASSERT_NE(add, nullptr);
  EXPECT_LE(iff->self_ms, iff->total_ms - mm->total_ms - add->total_ms - sub->total_ms + 1e-9);
  double self_sum = 0, type_sum = 0, share_sum = 0;
  for (const NodeProfile& n : p.nodes) {
    EXPECT_GE(n.self_ms, 0.0) << n.node;
    EXPECT_LE(n.self_ms, n.total_ms + 1e-12) << n.node;
    self_sum += n.self_ms;
    share_sum += n.share;
  }
  for (const OpTypeProfile& t : p.op_types) type_sum += t.self_ms;
  EXPECT_NEAR(self_sum, p.nodes_ms, 1e-9);
  EXPECT_NEAR(type_sum, p.nodes_ms, 1e-9);
  EXPECT_LE(p.nodes_ms, p.run_ms + 1e-9);
  EXPECT_LE(share_sum, 1.0 + 1e-9);
  EXPECT_NEAR(p.overhead_ms, p.run_ms - p.nodes_ms, 1e-9);
  for (size_t i = 1; i < p.nodes.size(); ++i) EXPECT_GE(p.nodes[i - 1].self_ms, p.nodes[i].self_ms);
  for (size_t i = 1; i < p.op_types.size(); ++i) EXPECT_GE(p.op_types[i - 1].self_ms, p.op_types[i].self_ms);

  // The text tables name every operator type and the nested node.
  const std::string text = p.to_text(0);
  EXPECT_NE(text.find("profile: 4 runs"), std::string::npos) << text;
  for (const char* type : {"If", "MatMul", "Add", "Sub"}) EXPECT_NE(text.find(type), std::string::npos) << type;
  EXPECT_NE(text.find("the_if/then_branch/then_matmul"), std::string::npos) << text;
  EXPECT_NE(p.to_text(1).find("more nodes"), std::string::npos);
}

TEST(ProfileTest, EndWithoutStartAndRestartClear) {
  Session s = load("if_captures_constants.onnx");
  run_if(s, true);
  Profile none = s.end_profiling();
  EXPECT_EQ(none.runs, 0);
  EXPECT_TRUE(none.nodes.empty());
  s.start_profiling();
  run_if(s, true);
  s.start_profiling();  // starts over
  run_if(s, false);
  Profile p = s.end_profiling();
  EXPECT_EQ(p.runs, 1);
  EXPECT_EQ(find_node(p, "the_if/then_branch/then_matmul"), nullptr);
  EXPECT_NE(find_node(p, "the_if/else_branch/else_sub"), nullptr);
  // After end, runs are not recorded any more.
  run_if(s, true);
  EXPECT_EQ(s.end_profiling().runs, 0);
}

// Profiling changes no result: the same bits with and without it, in both modes and at 1 and 2 threads.
TEST(ProfileTest, ResultsUnchanged) {
  for (Mode mode : {Mode::Fast, Mode::Exact})
    for (int threads : {1, 2}) {
      Session s = load("lstm_after_if.onnx", mode, threads);
      std::vector<float> xs(4 * 3);
      for (size_t i = 0; i < xs.size(); ++i) xs[i] = 0.25f * static_cast<float>(i % 5) - 0.5f;
      std::vector<NamedTensor> in = {{"cond", flag(true)}, {"x", Tensor::from_values<float>(xs, Shape{4, 1, 3})}};
      const std::vector<Tensor> a = s.run(in);
      s.start_profiling();
      const std::vector<Tensor> b = s.run(in);
      const Profile p = s.end_profiling();
      EXPECT_EQ(p.runs, 1);
      ASSERT_EQ(a.size(), b.size());
      for (size_t k = 0; k < a.size(); ++k)
        EXPECT_EQ(0, std::memcmp(a[k].raw(), b[k].raw(), a[k].nbytes())) << "output " << k;
    }
}

// A body capturing an outer initializer (W) and an outer Constant node's value (C): then = x . W + C,
// else = x - C, x = [1, 1]: [1 + 3, 2 + 4] + [10, 20] = [14, 26]; [1 - 10, 1 - 20] = [-9, -19].
TEST(SubgraphConstantsTest, CapturedWeightsAndConstants) {
  for (Mode mode : {Mode::Fast, Mode::Exact}) {
    Session s = load("if_captures_constants.onnx", mode);
    for (int rep = 0; rep < 2; ++rep) {
      EXPECT_EQ(floats(run_if(s, true)[0]), (std::vector<float>{14, 26}));
      EXPECT_EQ(floats(run_if(s, false)[0]), (std::vector<float>{-9, -19}));
    }
  }
}

// The LSTM after an If is a dynamic step (the If's output is only known at run time): it keeps its packed
// weights between runs while its input shape stays, and prepares again when the sequence length changes.
// Its results must equal the same LSTM run as a static step, bit for bit, in both modes, across runs and
// shape changes, and for the If's other branch (x negated).
TEST(SubgraphConstantsTest, DynamicStepReusesPreparedWeights) {
  for (Mode mode : {Mode::Fast, Mode::Exact}) {
    Session plain = load("lstm_plain.onnx", mode);
    Session after_if = load("lstm_after_if.onnx", mode);
    for (int64_t seq : {4, 4, 2, 4, 7}) {
      std::vector<float> xs(static_cast<size_t>(seq) * 3), neg(xs.size());
      for (size_t i = 0; i < xs.size(); ++i) {
        xs[i] = 0.3f * std::sin(0.7f * static_cast<float>(i)) + 0.01f * static_cast<float>(seq);
        neg[i] = -xs[i];
      }
      for (bool cond : {true, false}) {
        const std::vector<float>& direct = cond ? xs : neg;
        std::vector<NamedTensor> a = {{"x", Tensor::from_values<float>(direct, Shape{seq, 1, 3})}};
        std::vector<NamedTensor> b = {{"cond", flag(cond)}, {"x", Tensor::from_values<float>(xs, Shape{seq, 1, 3})}};
        const std::vector<Tensor> ya = plain.run(a), yb = after_if.run(b);
        ASSERT_EQ(ya.size(), 2u);
        ASSERT_EQ(yb.size(), 2u);
        for (size_t k = 0; k < 2; ++k) {
          ASSERT_EQ(ya[k].shape(), yb[k].shape());
          EXPECT_EQ(0, std::memcmp(ya[k].raw(), yb[k].raw(), ya[k].nbytes())) << "seq " << seq << " output " << k;
        }
        // The state is a real LSTM output: bounded by 1 (h = o * tanh(c)) and not all zero.
        const std::vector<float> h = floats(ya[1]);
        EXPECT_TRUE(std::any_of(h.begin(), h.end(), [](float v) { return v != 0.0f; }));
        for (float v : h) EXPECT_LT(std::fabs(v), 1.0f);
      }
    }
  }
}

}  // namespace
}  // namespace onemodel
