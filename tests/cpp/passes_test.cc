// Graph passes (passes/, graph-passes.md): each pattern of testdata/passes (tools/gen_pass_models.py) is
// rewritten at level All in fast mode and left alone at None, Basic and in exact mode; the rewritten graph's
// results stay within float32 rounding of the imported graph's (the reference: its operators are checked by
// the conformance suite), and near misses (an intermediate read elsewhere) are not rewritten.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>

#include "onemodel/session.h"
#include "onnx/import.h"
#include "runtime/compiled_graph.h"
#include "test_util.h"

namespace onemodel {
namespace {

std::shared_ptr<const ir::Model> model(const std::string& name) {
  return std::make_shared<ir::Model>(onnx::import_file(test::testdata("passes/" + name + ".onnx")));
}

// Op-type counts of the nodes a compiled graph runs.
std::map<std::string, int> ops(const rt::CompiledGraph& g) {
  std::map<std::string, int> m;
  for (const auto& n : g.nodes()) ++m[n.node->op_type];
  return m;
}

int rewrites(const rt::CompiledGraph& g, const std::string& pass) {
  for (const auto& [name, n] : g.pass_report())
    if (name == pass) return n;
  return -1;  // did not run
}

Tensor random(const Shape& s, uint32_t seed, float lo = -2, float hi = 2) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(static_cast<size_t>(s.numel()));
  for (float& x : v) x = u(gen);
  return Tensor::from_values<float>(std::span<const float>(v), s);
}

std::vector<Tensor> run(const std::string& name, OptimizationLevel level, Mode mode, const std::vector<NamedTensor>& in,
                        int threads = 2) {
  SessionOptions o;
  o.mode = mode;
  o.intra_op_threads = threads;
  o.optimization_level = level;
  return Session::load(test::testdata("passes/" + name + ".onnx"), o).run(in);
}

// max |a - b| / max |b| over every output, and the outputs' shapes equal.
double scaled_error(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  EXPECT_EQ(a.size(), b.size());
  double err = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    EXPECT_EQ(a[i].shape(), b[i].shape());
    if (a[i].shape() != b[i].shape()) return INFINITY;
    auto x = a[i].data<float>();
    auto y = b[i].data<float>();
    double d = 0, m = 0;
    for (size_t k = 0; k < y.size(); ++k) {
      d = std::max(d, std::fabs(static_cast<double>(x[k]) - y[k]));
      m = std::max(m, std::fabs(static_cast<double>(y[k])));
      if (std::isnan(x[k]) != std::isnan(y[k])) return INFINITY;
    }
    err = std::max(err, m > 0 ? d / m : d);
  }
  return err;
}

bool bit_equal(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].shape() != b[i].shape() || a[i].nbytes() != b[i].nbytes() ||
        std::memcmp(a[i].raw(), b[i].raw(), a[i].nbytes()) != 0)
      return false;
  return true;
}

// Compares level All against None in fast mode (within `bound`) and checks exact mode ignores the level.
void check_levels(const std::string& name, const std::vector<NamedTensor>& in, double bound) {
  SCOPED_TRACE(name);
  const auto none = run(name, OptimizationLevel::None, Mode::Fast, in);
  const auto all = run(name, OptimizationLevel::All, Mode::Fast, in);
  EXPECT_LE(scaled_error(all, none), bound);
  EXPECT_TRUE(bit_equal(run(name, OptimizationLevel::Basic, Mode::Fast, in), none));
  EXPECT_TRUE(bit_equal(run(name, OptimizationLevel::All, Mode::Exact, in),
                        run(name, OptimizationLevel::None, Mode::Exact, in)));
}

TEST(GraphPasses, LevelsAndModeSelectThePasses) {
  auto m = model("gelu_torch");
  auto fast_all = rt::CompiledGraph::create(m, false, &rt::find_op, 1, OptimizationLevel::All);
  EXPECT_EQ(rewrites(*fast_all, "gelu"), 1);
  EXPECT_EQ(rewrites(*fast_all, "attention"), 0);
  for (auto level : {OptimizationLevel::None, OptimizationLevel::Basic})
    EXPECT_TRUE(rt::CompiledGraph::create(m, false, &rt::find_op, 1, level)->pass_report().empty());
  // Exact mode: every pass here changes bits, so none runs (the golden pipeline is the imported graph).
  EXPECT_TRUE(rt::CompiledGraph::create(m, true, &rt::find_op, 1, OptimizationLevel::All)->pass_report().empty());
}

TEST(GraphPasses, GeluBothExportForms) {
  for (const char* name : {"gelu_torch", "gelu_bert"}) {
    auto g = rt::CompiledGraph::create(model(name), false);
    EXPECT_EQ(ops(*g), (std::map<std::string, int>{{"Gelu", 1}})) << name;
    std::vector<NamedTensor> in{{"x", random(Shape{3, 37}, 1, -6, 6)}};
    check_levels(name, in, 2e-6);
  }
}

TEST(GraphPasses, GeluLeavesASharedIntermediate) {
  auto g = rt::CompiledGraph::create(model("gelu_shared"), false);
  EXPECT_EQ(rewrites(*g, "gelu"), 0);
  EXPECT_EQ(ops(*g).count("Gelu"), 0u);
}

TEST(GraphPasses, ConvBatchNormFold) {
  auto g = rt::CompiledGraph::create(model("conv_bn"), false);
  EXPECT_EQ(rewrites(*g, "conv-batchnorm-fold"), 2);
  EXPECT_EQ(ops(*g), (std::map<std::string, int>{{"Conv", 2}, {"Relu", 1}}));
  std::vector<NamedTensor> in{{"x", random(Shape{2, 3, 11, 11}, 2)}};
  check_levels("conv_bn", in, 2e-6);
}

TEST(GraphPasses, AttentionAbsorbsTheHeadTransposes) {
  auto g = rt::CompiledGraph::create(model("attention_bert"), false);
  EXPECT_EQ(ops(*g), (std::map<std::string, int>{{"FusedAttention", 1}}));
  // Batch 2, sequence 37 (ragged against the kernel's 32-row and 64-key blocks), 3 heads of 8; the second
  // sequence has its last 11 keys masked with float32's lowest value, as exporters write the mask.
  const int64_t b = 2, s = 37, h = 3, d = 8;
  std::vector<float> mask(static_cast<size_t>(b * s), 0.0f);
  for (int64_t j = s - 11; j < s; ++j) mask[static_cast<size_t>(s + j)] = std::numeric_limits<float>::lowest();
  std::vector<NamedTensor> in{{"q", random(Shape{b, s, h, d}, 3)},
                              {"k", random(Shape{b, s, h, d}, 4)},
                              {"v", random(Shape{b, s, h, d}, 5)},
                              {"mask", Tensor::from_values<float>(std::span<const float>(mask), Shape{b, 1, 1, s})}};
  check_levels("attention_bert", in, 1e-5);
}

TEST(GraphPasses, AttentionHeadMajorOperandsAndValueWidth) {
  auto g = rt::CompiledGraph::create(model("attention_bhsd"), false);
  EXPECT_EQ(ops(*g), (std::map<std::string, int>{{"FusedAttention", 1}}));
  for (int64_t dv : {8, 5}) {  // 5: the value head differs from the query's (the plain loop)
    SCOPED_TRACE(dv);
    std::vector<NamedTensor> in{{"q", random(Shape{2, 3, 70, 8}, 7)},
                                {"k", random(Shape{2, 3, 65, 8}, 8)},
                                {"v", random(Shape{2, 3, 65, dv}, 9)}};
    check_levels("attention_bhsd", in, 1e-5);
    // 8 threads for 6 heads: the operator splits work by query blocks instead of heads; same bits.
    const auto two = run("attention_bhsd", OptimizationLevel::All, Mode::Fast, in, 2);
    EXPECT_TRUE(bit_equal(run("attention_bhsd", OptimizationLevel::All, Mode::Fast, in, 8), two));
    EXPECT_TRUE(bit_equal(run("attention_bhsd", OptimizationLevel::All, Mode::Fast, in, 1), two));
  }
}

TEST(GraphPasses, AttentionLeavesSharedProbabilities) {
  auto g = rt::CompiledGraph::create(model("attention_shared"), false);
  EXPECT_EQ(rewrites(*g, "attention"), 0);
  EXPECT_EQ(ops(*g).count("FusedAttention"), 0u);
}

}  // namespace
}  // namespace onemodel
