// Graph passes (passes/, graph-passes.md): each pattern of testdata/passes (tools/gen_pass_models.py) is
// rewritten at level All and left alone at None and Basic; a pass that changes bits runs in fast mode only and
// its results stay within float32 rounding of the imported graph's (the reference: its operators are checked by
// the conformance suite); fuse-elementwise runs in both modes and must give the imported graph's bits. Near
// misses (an intermediate read elsewhere) are not rewritten.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>

#include "ir/ew_program.h"
#include "isa_env.h"
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
  // Exact mode runs only the passes that keep bits (batchnorm-affine, attention and fuse-elementwise): here
  // fuse-elementwise takes the whole chain the gelu pass would have taken, Div and Erf included, as a program
  // of the operators' own steps (GeluBothExportForms below checks its bits).
  auto exact_all = rt::CompiledGraph::create(m, true, &rt::find_op, 1, OptimizationLevel::All);
  ASSERT_EQ(exact_all->pass_report().size(), 3u);
  EXPECT_EQ(rewrites(*exact_all, "batchnorm-affine"), 0);
  EXPECT_EQ(rewrites(*exact_all, "gelu"), -1);
  EXPECT_EQ(rewrites(*exact_all, "attention"), 0);
  EXPECT_EQ(rewrites(*exact_all, "fuse-elementwise"), 1);
  EXPECT_EQ(ops(*exact_all), (std::map<std::string, int>{{"FusedElementwise", 1}}));
}

Tensor specials(const Shape& s, uint32_t seed);  // below, with the fuse-elementwise tests

TEST(GraphPasses, GeluBothExportForms) {
  for (const char* name : {"gelu_torch", "gelu_bert"}) {
    auto g = rt::CompiledGraph::create(model(name), false);
    EXPECT_EQ(ops(*g), (std::map<std::string, int>{{"Gelu", 1}})) << name;
    std::vector<NamedTensor> in{{"x", random(Shape{3, 37}, 1, -6, 6)}};
    check_levels(name, in, 2e-6);
    // Exact mode fuses the chain, Erf included, into one program: the unfused bits, specials included.
    auto exact = rt::CompiledGraph::create(model(name), true);
    // (The BERT form's two branches from x start two groups: Mul(x, 0.5), and Div(x, sqrt 2) -> ... -> Mul.)
    EXPECT_EQ(ops(*exact),
              (std::map<std::string, int>{{"FusedElementwise", name == std::string("gelu_torch") ? 1 : 2}}))
        << name;
    const std::vector<NamedTensor> sp{{"x", specials(Shape{3, 37}, 5)}};
    const auto none = run(name, OptimizationLevel::None, Mode::Exact, sp, 1);
    EXPECT_TRUE(bit_equal(run(name, OptimizationLevel::All, Mode::Exact, sp, 1), none)) << name;
    EXPECT_TRUE(bit_equal(run(name, OptimizationLevel::All, Mode::Exact, sp, 2), none)) << name;
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
  // The Relu after the first folded Conv then joins it (fuse-elementwise).
  EXPECT_EQ(ops(*g), (std::map<std::string, int>{{"Conv", 1}, {"FusedConv", 1}}));
  std::vector<NamedTensor> in{{"x", random(Shape{2, 3, 11, 11}, 2)}};
  check_levels("conv_bn", in, 2e-6);
}

TEST(GraphPasses, ConvAffineFold) {
  auto g = rt::CompiledGraph::create(model("conv_affine"), false);
  // y1 (Mul, then Add with the constant first) and y2 (Mul by [6, 1, 1], Sub, Div, then Relu) fold; y3 (a row
  // along the plane), y4 (constant minus the Conv) and y5 (its Conv output is also a graph output) do not.
  EXPECT_EQ(rewrites(*g, "conv-affine-fold"), 2);
  // y1 is a plain Conv; y2's Relu, y3's and y4's element-wise steps join their Convs; y5's Mul stays alone.
  EXPECT_EQ(ops(*g), (std::map<std::string, int>{{"Conv", 2}, {"FusedConv", 3}, {"Mul", 1}}));
  std::vector<NamedTensor> in{{"x", random(Shape{2, 3, 9, 9}, 42)}};
  check_levels("conv_affine", in, 2e-6);
  // Not in exact mode (the fold changes bits): fuse-elementwise alone runs there.
  EXPECT_EQ(rewrites(*rt::CompiledGraph::create(model("conv_affine"), true), "conv-affine-fold"), -1);
}

// Exact mode fuses attention too (its kernel repeats the unfused operations), so check_levels' exact comparison
// of All against None compares the fused node with the imported graph.
void expect_fused_in_both_modes(const std::string& name) {
  for (bool exact : {false, true}) {
    auto g = rt::CompiledGraph::create(model(name), exact);
    EXPECT_EQ(ops(*g), (std::map<std::string, int>{{"FusedAttention", 1}})) << name << (exact ? " exact" : " fast");
  }
}

// Overwrites every `step`-th value with NaN, +-inf, huge and subnormal values, so the exact comparison covers the
// special cases of the scale, the mask and the softmax rows.
Tensor with_specials(Tensor t, size_t step) {
  static const float kSpecial[] = {NAN, INFINITY, -INFINITY, 3e38f, -3e38f, 1e-40f, -0.0f};
  auto v = t.mutable_data<float>();
  for (size_t i = 0, k = 0; i < v.size(); i += step, ++k) v[i] = kSpecial[k % std::size(kSpecial)];
  return t;
}

TEST(GraphPasses, AttentionAbsorbsTheHeadTransposes) {
  expect_fused_in_both_modes("attention_bert");
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
  // Special values in Q, K and the mask: exact bits still equal the imported graph's (Div by the constant).
  std::vector<NamedTensor> odd{{"q", with_specials(random(Shape{b, s, h, d}, 13), 97)},
                               {"k", with_specials(random(Shape{b, s, h, d}, 14), 89)},
                               {"v", with_specials(random(Shape{b, s, h, d}, 15), 211)},
                               {"mask", with_specials(random(Shape{b, 1, 1, s}, 16), 9)}};
  for (int threads : {1, 2})
    EXPECT_TRUE(bit_equal(run("attention_bert", OptimizationLevel::All, Mode::Exact, odd, threads),
                          run("attention_bert", OptimizationLevel::None, Mode::Exact, odd, threads)));
}

TEST(GraphPasses, AttentionHeadMajorOperandsAndValueWidth) {
  expect_fused_in_both_modes("attention_bhsd");
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
    // Mul by the constant, with special values: exact bits equal the imported graph's at 1 and 8 threads.
    std::vector<NamedTensor> odd{{"q", with_specials(random(Shape{2, 3, 70, 8}, 17), 101)},
                                 {"k", with_specials(random(Shape{2, 3, 65, 8}, 18), 67)},
                                 {"v", with_specials(random(Shape{2, 3, 65, dv}, 19), 151)}};
    const auto unfused = run("attention_bhsd", OptimizationLevel::None, Mode::Exact, odd, 1);
    for (int threads : {1, 8})
      EXPECT_TRUE(bit_equal(run("attention_bhsd", OptimizationLevel::All, Mode::Exact, odd, threads), unfused));
  }
}

// Masks of other shapes than exporters' [b, 1, 1, sk], read through their strides: one value per query row ([..,
// sq, 1], key stride 0), a full [b, h, sq, sk] one and one row for all, with special values: exact bits equal the
// unfused graph's at 1 and 2 threads, fast mode within the level bound.
TEST(GraphPasses, AttentionMaskOfAnyShape) {
  expect_fused_in_both_modes("attention_anymask");
  for (const Shape& ms : {Shape{2, 1, 70, 1}, Shape{1, 3, 70, 65}, Shape{1, 1, 1, 65}}) {
    SCOPED_TRACE(ms.to_string());
    std::vector<NamedTensor> in{{"q", with_specials(random(Shape{2, 3, 70, 8}, 21), 101)},
                                {"k", with_specials(random(Shape{2, 3, 65, 8}, 22), 67)},
                                {"v", random(Shape{2, 3, 65, 8}, 23)},
                                {"mask", with_specials(random(ms, 24), 13)}};
    const auto unfused = run("attention_anymask", OptimizationLevel::None, Mode::Exact, in, 1);
    for (int threads : {1, 2})
      EXPECT_TRUE(bit_equal(run("attention_anymask", OptimizationLevel::All, Mode::Exact, in, threads), unfused));
    in[0].tensor = random(Shape{2, 3, 70, 8}, 25);
    in[1].tensor = random(Shape{2, 3, 65, 8}, 26);
    in[3].tensor = random(ms, 27);
    check_levels("attention_anymask", in, 1e-5);
  }
}

TEST(GraphPasses, AttentionLeavesSharedProbabilities) {
  auto g = rt::CompiledGraph::create(model("attention_shared"), false);
  EXPECT_EQ(rewrites(*g, "attention"), 0);
  EXPECT_EQ(ops(*g).count("FusedAttention"), 0u);
}

// ---- fuse-elementwise: bits equal to the unfused graph in both modes, at 1 and 2 threads ----

// Values with the special cases of every formula: NaN, infinities, signed zeros, subnormals, the Relu/Clip/
// HardSigmoid edges, spread over a random field.
Tensor specials(const Shape& s, uint32_t seed) {
  Tensor t = random(s, seed, -4, 4);
  const float special[] = {std::numeric_limits<float>::quiet_NaN(),
                           -std::numeric_limits<float>::infinity(),
                           std::numeric_limits<float>::infinity(),
                           -0.0f,
                           0.0f,
                           1e-40f,
                           -1e-40f,
                           -3.0f,
                           3.0f,
                           6.0f,
                           -0.5f,
                           0.75f};
  auto d = t.mutable_data<float>();
  for (size_t i = 0; i < d.size(); i += 7) d[i] = special[(i / 7) % (sizeof(special) / sizeof(special[0]))];
  return t;
}

void check_fused_bits(const std::string& name, const std::vector<NamedTensor>& in) {
  SCOPED_TRACE(name);
  for (Mode mode : {Mode::Fast, Mode::Exact}) {
    SCOPED_TRACE(mode == Mode::Fast ? "fast" : "exact");
    const auto none = run(name, OptimizationLevel::None, mode, in, 1);
    EXPECT_TRUE(bit_equal(run(name, OptimizationLevel::All, mode, in, 1), none));
    EXPECT_TRUE(bit_equal(run(name, OptimizationLevel::All, mode, in, 2), none));
  }
}

TEST(GraphPasses, FuseElementwiseConvHardSwish) {
  for (bool exact : {false, true}) {
    auto g = rt::CompiledGraph::create(model("ew_conv_hardswish"), exact);
    EXPECT_EQ(ops(*g), (std::map<std::string, int>{{"FusedConv", 1}}));
    EXPECT_EQ(rewrites(*g, "fuse-elementwise"), 1);
  }
  // 13 x 11 outputs per plane: ragged against the 16-column register tile and the vector width; batch 2 at
  // 40 x 37 makes several column tiles.
  // The per-channel scale s is an input (a constant would be folded into the weights in fast mode).
  const Tensor s = random(Shape{1, 6, 1, 1}, 41, 0.5f, 2.0f);
  check_fused_bits("ew_conv_hardswish", {{"x", specials(Shape{1, 4, 11, 13}, 11)}, {"s", s}});
  check_fused_bits("ew_conv_hardswish", {{"x", specials(Shape{2, 4, 40, 37}, 12)}, {"s", s}});
  // Planes of at most half a block: several planes per program block (kern::ConvEpilogue::apply_planes).
  check_fused_bits("ew_conv_hardswish", {{"x", specials(Shape{2, 4, 7, 7}, 31)}, {"s", s}});
  check_fused_bits("ew_conv_hardswish", {{"x", specials(Shape{1, 4, 4, 3}, 32)}, {"s", s}});
}

TEST(GraphPasses, FuseElementwiseResidualAndDepthwise) {
  auto g = rt::CompiledGraph::create(model("ew_conv_residual"), false);
  EXPECT_EQ(ops(*g), (std::map<std::string, int>{{"FusedConv", 2}}));
  check_fused_bits("ew_conv_residual", {{"x", specials(Shape{2, 5, 9, 21}, 13)}});
  // Small planes: the residual and the depthwise bias several planes to a block.
  check_fused_bits("ew_conv_residual", {{"x", specials(Shape{2, 5, 3, 4}, 33)}});
  check_fused_bits("ew_conv_residual", {{"x", specials(Shape{2, 5, 7, 7}, 34)}});
}

// Convolutions of 1x1 outputs run their epilogue once over all channels (kern::ConvEpilogue::apply_points):
// the bias as a channel run, program inputs that step one value per channel as runs, the same bits.
TEST(GraphPasses, FuseElementwiseSqueezeExcitation) {
  auto g = rt::CompiledGraph::create(model("ew_conv_se"), false);
  EXPECT_EQ(ops(*g), (std::map<std::string, int>{{"GlobalAveragePool", 1}, {"FusedConv", 2}, {"Mul", 1}}));
  // Finite inputs (a special value would make its whole plane's mean NaN or infinite), and one NaN plane.
  check_fused_bits("ew_conv_se", {{"x", random(Shape{1, 7, 3, 4}, 19, -4, 4)}});
  Tensor x = random(Shape{3, 7, 5, 2}, 20, -4, 4);
  x.mutable_data<float>()[10 * 9] = std::numeric_limits<float>::quiet_NaN();
  check_fused_bits("ew_conv_se", {{"x", x}});
}

// The excitation Mul fused into the second convolution: the program runs over the planes after it, rows of
// one value per channel (short rows several to a block, long ones one at a time, rows longer than a chunk in
// segments of ew::kChunk: 130 x 140 is 18200 values, the last plane's segment ends mid-row), the unfused bits.
TEST(GraphPasses, FuseElementwiseSqueezeExcitationScale) {
  auto g = rt::CompiledGraph::create(model("ew_conv_se_scale"), false);
  EXPECT_EQ(ops(*g), (std::map<std::string, int>{{"GlobalAveragePool", 1}, {"FusedConv", 2}}));
  for (const Shape& s : {Shape{2, 6, 3, 4}, Shape{1, 6, 7, 7}, Shape{3, 6, 1, 1}, Shape{1, 6, 9, 17},
                         Shape{2, 6, 2, 70}, Shape{1, 6, 130, 140}}) {
    Tensor x = random(s, 21, -4, 4);
    x.mutable_data<float>()[5] = std::numeric_limits<float>::infinity();
    check_fused_bits("ew_conv_se_scale", {{"x", x}});
  }
}

// A gate that is the convolution's result itself: the program is the Mul alone, its per-channel operand first
// (the factor) and the planes second, split for rows as the HardSigmoid gate above is (ops/ew_program.cc).
TEST(GraphPasses, FuseElementwiseSqueezeExcitationPlainGate) {
  auto g = rt::CompiledGraph::create(model("ew_conv_se_plain"), false);
  EXPECT_EQ(ops(*g), (std::map<std::string, int>{{"GlobalAveragePool", 1}, {"FusedConv", 1}}));
  // Special values in the last image only: through the average and the 6 x 6 weights they reach every gate of
  // their image.
  for (const Shape& s : {Shape{2, 6, 3, 4}, Shape{1, 6, 7, 7}, Shape{2, 6, 14, 14}, Shape{3, 6, 1, 1}}) {
    Tensor x = random(s, 22, -4, 4);
    if (s[0] > 1) {
      x.mutable_data<float>()[s.numel() - 3] = std::numeric_limits<float>::infinity();
      x.mutable_data<float>()[s.numel() - 1] = std::numeric_limits<float>::quiet_NaN();
    }
    check_fused_bits("ew_conv_se_plain", {{"x", x}});
  }
}

// MatMul by constant weights heads a group as Conv does (FusedMatMul): the bias and residual on the product's
// tiles, a bias varying down the rows after the product; a MatMul by a computed B is not a head.
TEST(GraphPasses, FuseElementwiseLinearLayers) {
  for (bool exact : {false, true}) {
    auto g = rt::CompiledGraph::create(model("linear_epilogue"), exact);
    EXPECT_EQ(ops(*g), (std::map<std::string, int>{{"FusedMatMul", 2}, {"MatMul", 1}, {"FusedElementwise", 1}}));
  }
  for (int64_t n : {1, 3}) {
    check_fused_bits("linear_epilogue", {{"x", specials(Shape{n, 5, 40}, 40 + static_cast<uint32_t>(n))},
                                         {"res", specials(Shape{n, 5, 150}, 50)},
                                         {"v", random(Shape{9, 150}, 51, -1, 1)}});
  }
}

// ONNX Gelu joins fused programs (both forms, after a MatMul with or without its bias, after computed values):
// the unfused operator's bits in both modes, specials included.
TEST(GraphPasses, FuseElementwiseGelu) {
  for (bool exact : {false, true}) {
    auto g = rt::CompiledGraph::create(model("linear_gelu"), exact);
    EXPECT_EQ(ops(*g), (std::map<std::string, int>{{"FusedMatMul", 2}, {"FusedElementwise", 1}}));
  }
  for (int64_t n : {1, 3})
    check_fused_bits("linear_gelu", {{"x", specials(Shape{n, 5, 40}, 60 + static_cast<uint32_t>(n))}});
}

// MatMul epilogues in registers too (ops/reg_form.h): the bias row, a residual, ONNX Gelu in both forms, steps
// after a Gelu (which must stay after it), on every target, both modes, 1 and 2 threads: the unfused graph's bits. 150
// columns leave a ragged tile for `apply`; 5 and 15 rows make strips of 5 and of 12 and 3.
TEST(GraphPasses, MatMulRegisterEpilogueOnEveryTarget) {
  for (const char* isa : {"scalar", "sse4", "avx2", "avx512"}) {
    SCOPED_TRACE(isa);
    IsaEnv env(isa);
    for (int64_t n : {1, 3}) {
      check_fused_bits("linear_epilogue", {{"x", specials(Shape{n, 5, 40}, 80 + static_cast<uint32_t>(n))},
                                           {"res", specials(Shape{n, 5, 150}, 82)},
                                           {"v", random(Shape{9, 150}, 83, -1, 1)}});
      check_fused_bits("linear_gelu", {{"x", specials(Shape{n, 5, 40}, 84 + static_cast<uint32_t>(n))}});
      check_fused_bits("linear_gelu_step", {{"x", specials(Shape{n, 5, 40}, 86 + static_cast<uint32_t>(n))}});
    }
  }
}

// Convolution epilogues the matrix product applies in registers (kernels-gemm.md section 7): the bias, a
// residual in either operand order, each tail, on the in-place, packed-panel, padded-plane and im2col paths, on
// every target: the unfused graph's bits. 9 x 21 = 189 positions leave a ragged strip against every register
// tile and 40 rows a strip of 4; 40 x 37 makes several column tiles.
TEST(GraphPasses, ConvRegisterEpilogueOnEveryTarget) {
  auto g = rt::CompiledGraph::create(model("conv_register_epilogue"), false);
  EXPECT_EQ(ops(*g), (std::map<std::string, int>{{"Conv", 1}, {"FusedConv", 6}}));
  for (const char* isa : {"scalar", "sse4", "avx2", "avx512"}) {
    SCOPED_TRACE(isa);
    IsaEnv env(isa);
    check_fused_bits("conv_register_epilogue",
                     {{"x", specials(Shape{2, 8, 9, 21}, 60)}, {"res", specials(Shape{2, 40, 9, 21}, 61)}});
    check_fused_bits("conv_register_epilogue",
                     {{"x", specials(Shape{1, 8, 40, 37}, 62)}, {"res", specials(Shape{1, 40, 40, 37}, 63)}});
  }
}

// Hard-swish written as four steps and scalar steps after the tail (PP-OCRv4's blocks) in registers too: the
// unfused graph's bits on every target, both modes, 1 and 2 threads.
TEST(GraphPasses, ConvRegisterHardSwishStepsOnEveryTarget) {
  auto g = rt::CompiledGraph::create(model("conv_register_hardswish"), false);
  EXPECT_EQ(ops(*g), (std::map<std::string, int>{{"FusedConv", 3}}));
  for (const char* isa : {"scalar", "sse4", "avx2", "avx512"}) {
    SCOPED_TRACE(isa);
    IsaEnv env(isa);
    check_fused_bits("conv_register_hardswish", {{"x", specials(Shape{2, 8, 9, 21}, 64)}});
    check_fused_bits("conv_register_hardswish", {{"x", specials(Shape{1, 8, 40, 37}, 65)}});
  }
}

// Steps by one value before and after the tail in registers (kern::RegScalarStep: Mul, Add, Sub, Max and Min in
// either operand order; PP-LCNetV3's learnable affine in exact mode, openWakeWord's Max after LeakyRelu): the
// unfused graph's bits on every target, both modes, 1 and 2 threads.
TEST(GraphPasses, ConvRegisterScalarStepsOnEveryTarget) {
  for (bool exact : {false, true}) {
    auto g = rt::CompiledGraph::create(model("conv_register_scalar_steps"), exact);
    EXPECT_EQ(ops(*g), (std::map<std::string, int>{{"FusedConv", 7}}));
  }
  for (const char* isa : {"scalar", "sse4", "avx2", "avx512"}) {
    SCOPED_TRACE(isa);
    IsaEnv env(isa);
    const NamedTensor sv{"sv", random(Shape{1}, 68, 0.5f, 1.5f)}, kv{"kv", random(Shape{1}, 69, -0.5f, 0.5f)};
    check_fused_bits("conv_register_scalar_steps", {{"x", specials(Shape{2, 8, 9, 21}, 66)}, sv, kv});
    check_fused_bits("conv_register_scalar_steps", {{"x", specials(Shape{1, 8, 40, 37}, 67)}, sv, kv});
  }
}

// batchnorm-affine (graph-passes.md section 3b): each BatchNormalization with constant statistics becomes a Mul
// and an Add that fuse-elementwise joins to the producer, the register epilogue taking the per-channel scale and
// shift after a Conv (with Relu, with hard-swish steps, and in exact mode with a residual); exact mode gives the
// kernel's bits on every target at 1 and 2 threads, specials included. In fast mode conv-batchnorm-fold takes the batch
// normalisations of Conv outputs read once first.
TEST(GraphPasses, BatchNormAffineKeepsTheKernelsBits) {
  auto exact = rt::CompiledGraph::create(model("bn_affine"), true);
  EXPECT_EQ(rewrites(*exact, "batchnorm-affine"), 6);
  // Four Conv heads take theirs; the shared Conv's and the ConvTranspose's run as programs of their own.
  EXPECT_EQ(ops(*exact), (std::map<std::string, int>{{"BatchNormalization", 1},
                                                     {"Conv", 2},
                                                     {"ConvTranspose", 1},
                                                     {"FusedConv", 4},
                                                     {"FusedElementwise", 2},
                                                     {"Sigmoid", 1}}));
  auto fast = rt::CompiledGraph::create(model("bn_affine"), false);
  EXPECT_EQ(rewrites(*fast, "conv-batchnorm-fold"), 3);
  EXPECT_EQ(rewrites(*fast, "batchnorm-affine"), 3);  // after the Add, after the ConvTranspose, the shared Conv
  const Tensor mean = random(Shape{40}, 72, -0.5f, 0.5f);
  for (const char* isa : {"scalar", "sse4", "avx2", "avx512"}) {
    SCOPED_TRACE(isa);
    IsaEnv env(isa);
    for (const Shape& s : {Shape{2, 8, 9, 21}, Shape{1, 8, 40, 37}}) {
      const Shape r{s[0], 40, s[2], s[3]};
      const std::vector<NamedTensor> in{{"x", specials(s, 70)}, {"res", specials(r, 71)}, {"mean", mean}};
      const auto none = run("bn_affine", OptimizationLevel::None, Mode::Exact, in, 1);
      EXPECT_TRUE(bit_equal(run("bn_affine", OptimizationLevel::All, Mode::Exact, in, 1), none));
      EXPECT_TRUE(bit_equal(run("bn_affine", OptimizationLevel::All, Mode::Exact, in, 2), none));
    }
  }
  check_levels("bn_affine",
               {{"x", random(Shape{2, 8, 9, 21}, 73)}, {"res", random(Shape{2, 40, 9, 21}, 74)}, {"mean", mean}}, 2e-6);
}

TEST(GraphPasses, FuseElementwiseOperandsAConvCannotWalk) {
  auto g = rt::CompiledGraph::create(model("ew_conv_fallback"), false);
  EXPECT_EQ(ops(*g), (std::map<std::string, int>{{"FusedConv", 2}}));
  std::vector<NamedTensor> in{{"x", specials(Shape{1, 2, 5, 9}, 14)}, {"big", specials(Shape{3, 3, 5, 9}, 15)}};
  check_fused_bits("ew_conv_fallback", in);
  EXPECT_EQ(run("ew_conv_fallback", OptimizationLevel::All, Mode::Fast, in)[1].shape(), (Shape{3, 3, 5, 9}));
}

TEST(GraphPasses, FuseElementwiseChainsEndWhereAValueEscapes) {
  auto g = rt::CompiledGraph::create(model("ew_chain"), false);
  EXPECT_EQ(ops(*g),
            (std::map<std::string, int>{{"FusedElementwise", 3}, {"Neg", 1}, {"ReduceSum", 1}, {"Sigmoid", 1}}));
  check_fused_bits("ew_chain", {{"x", specials(Shape{3, 5, 17}, 16)}, {"v", specials(Shape{5, 1}, 17)}});
  // A larger input: rows of the broadcast walk cut into several blocks and chunks.
  auto big = rt::CompiledGraph::create(model("ew_clip6"), true);
  EXPECT_EQ(ops(*big), (std::map<std::string, int>{{"FusedElementwise", 1}}));
  check_fused_bits("ew_clip6", {{"x", specials(Shape{4, 33}, 18)}});
}

// Pow(x, 2) by a rank-0 constant (float or integer) joins a program as x * x, with the Pow kernel's bits in both
// modes, squares that overflow or fall to subnormals included; a rank-1 exponent stays Pow.
TEST(GraphPasses, FuseElementwiseSquaresByPow) {
  for (bool exact : {false, true}) {
    auto g = rt::CompiledGraph::create(model("ew_pow_square"), exact);
    // x^2 alone (a lone square is rewritten too), y^2 with the Add after it, z^2 alone; z^[2] stays.
    EXPECT_EQ(ops(*g), (std::map<std::string, int>{{"FusedElementwise", 3}, {"Pow", 1}}));
  }
  Tensor x = specials(Shape{3, 5, 17}, 21), y = specials(Shape{3, 5, 17}, 22);
  auto xd = x.mutable_data<float>();
  xd[1] = 3e20f;     // squares to infinity
  xd[2] = -1e-20f;   // to a subnormal
  xd[3] = 1.5e-23f;  // to zero
  xd[4] = -1.8446743e19f;
  check_fused_bits("ew_pow_square", {{"x", x}, {"y", y}, {"z", specials(Shape{4}, 23)}});
  // The program's square is the kernel's: x * x rounded once.
  const auto out =
      run("ew_pow_square", OptimizationLevel::All, Mode::Exact, {{"x", x}, {"y", y}, {"z", specials(Shape{4}, 23)}});
  const auto yd = y.data<float>();
  const auto sd = out[0].data<float>();
  for (size_t i = 0; i < sd.size(); ++i) {
    volatile float sx = xd[i] * xd[i], sy = yd[i] * yd[i];  // two roundings, no contraction into a fused add
    const float want = sx + sy;
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(sd[i])) << i;
    } else {
      EXPECT_EQ(std::bit_cast<uint32_t>(sd[i]), std::bit_cast<uint32_t>(want)) << i;
    }
  }
}

// Op-type counts of every subgraph of g's nodes, nested ones included, as the compiled graph holds them.
void body_ops(const ir::Graph& g, std::map<std::string, int>& m) {
  for (const ir::Node& n : g.nodes)
    for (const ir::Attribute& a : n.attributes) {
      std::vector<std::shared_ptr<ir::Graph>> bodies = a.graphs;
      if (a.g) bodies.push_back(a.g);
      for (const auto& b : bodies) {
        for (const ir::Node& bn : b->nodes) ++m[bn.op_type];
        body_ops(*b, m);
      }
    }
}

// Subgraphs go through the same passes (Silero VAD v5 runs its whole network in an If branch): a Conv + Relu
// on a branch's own Constant weights, and in a nested If a square and add and a SiLU, each one fused node; the
// same bits as the unfused model in both modes, whichever branch runs.
TEST(GraphPasses, SubgraphsAreRewrittenToo) {
  for (bool exact : {false, true}) {
    auto g = rt::CompiledGraph::create(model("body_passes"), exact);
    EXPECT_EQ(rewrites(*g, "fuse-elementwise"), 3);
    EXPECT_EQ(ops(*g), (std::map<std::string, int>{{"If", 1}}));
    std::map<std::string, int> inner;
    body_ops(g->graph(), inner);
    EXPECT_EQ(inner,
              (std::map<std::string, int>{{"Constant", 2}, {"FusedConv", 1}, {"FusedElementwise", 2}, {"If", 1}}));
    // The imported model is left as it was (the rewrite is a copy).
    auto none = rt::CompiledGraph::create(model("body_passes"), exact, &rt::find_op, 1, OptimizationLevel::None);
    std::map<std::string, int> plain;
    body_ops(none->graph(), plain);
    EXPECT_EQ(
        plain,
        (std::map<std::string, int>{
            {"Add", 1}, {"Constant", 4}, {"Conv", 1}, {"If", 1}, {"Mul", 1}, {"Pow", 1}, {"Relu", 1}, {"Sigmoid", 1}}));
  }
  auto flag = [](bool v) {
    Tensor t = Tensor::zeros(DType::Bool, Shape{});
    *static_cast<uint8_t*>(t.raw_mut()) = v ? 1 : 0;
    return t;
  };
  const Tensor x = specials(Shape{1, 4, 11, 13}, 31);
  for (bool c : {true, false})
    for (bool e : {true, false}) check_fused_bits("body_passes", {{"x", x}, {"c", flag(c)}, {"e", flag(e)}});
}

// A Loop body's declared inputs prove nothing (nothing checks them when it runs): the chain on the carried value
// stays as written, while the same chain on a capture of the graph's float input is one program.
TEST(GraphPasses, SubgraphInputsProveNothing) {
  for (bool exact : {false, true}) {
    auto g = rt::CompiledGraph::create(model("body_loop_inputs"), exact);
    EXPECT_EQ(rewrites(*g, "fuse-elementwise"), 1);
    std::map<std::string, int> inner;
    body_ops(g->graph(), inner);
    EXPECT_EQ(inner, (std::map<std::string, int>{{"FusedElementwise", 1}, {"Identity", 1}, {"Mul", 1}, {"Relu", 1}}));
  }
  Tensor n = Tensor::zeros(DType::I64, Shape{});
  *static_cast<int64_t*>(n.raw_mut()) = 3;
  check_fused_bits("body_loop_inputs", {{"n", n}, {"v0", specials(Shape{2, 3}, 32)}, {"x", specials(Shape{2, 3}, 33)}});
}

// A Cast to float32 proves its output float32: the square of the cast and the Add after it are one program.
TEST(GraphPasses, FuseElementwiseAfterACastToFloat) {
  for (bool exact : {false, true}) {
    auto g = rt::CompiledGraph::create(model("ew_cast_square"), exact);
    EXPECT_EQ(ops(*g), (std::map<std::string, int>{{"Cast", 1}, {"FusedElementwise", 1}}));
  }
  std::vector<int32_t> x(21);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int32_t>(i * 977) - 9000;
  x[3] = std::numeric_limits<int32_t>::max();  // the extremes: casts that round, squares near 2^62
  x[4] = std::numeric_limits<int32_t>::min();
  x[5] = 16777217;  // rounds when cast
  check_fused_bits("ew_cast_square", {{"x", Tensor::from_values<int32_t>(std::span<const int32_t>(x), Shape{3, 7})}});
}

TEST(GraphPasses, FuseElementwiseLeavesIntegerChains) {
  auto g = rt::CompiledGraph::create(model("ew_int"), false);
  EXPECT_EQ(rewrites(*g, "fuse-elementwise"), 0);
  EXPECT_EQ(ops(*g), (std::map<std::string, int>{{"Add", 1}, {"Mul", 1}, {"Relu", 1}}));
}

// A model may carry FusedElementwise / FusedConv nodes itself: hostile programs are refused when the kernel is
// made, with InvalidModel naming the node, never run.
TEST(GraphPasses, FusedProgramsFromAFileAreChecked) {
  auto node = [](const char* op, std::vector<int64_t> code, std::vector<float> params, size_t inputs) {
    ir::Node n;
    n.name = "hostile";
    n.op_type = op;
    n.domain = "onemodel";
    n.opset = 1;
    for (size_t i = 0; i < inputs; ++i) n.inputs.push_back(static_cast<int>(i));
    n.outputs = {50};
    ir::Attribute c;
    c.name = "ew_code";
    c.type = ir::AttrType::Ints;
    c.ints = std::move(code);
    ir::Attribute p;
    p.name = "ew_params";
    p.type = ir::AttrType::Floats;
    p.floats = std::move(params);
    ir::Attribute k;
    k.name = "ew_consts";
    k.type = ir::AttrType::Floats;
    k.floats = {1.0f};
    n.attributes = {c, p, k};
    return n;
  };
  auto expect_refused = [](const ir::Node& n, const std::string& fragment) {
    const rt::OpDef* def = rt::find_op("onemodel", n.op_type, 1);
    ASSERT_NE(def, nullptr);
    try {
      def->factory(rt::NodeInfo(n, false));
      ADD_FAILURE() << "accepted: " << fragment;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidModel) << e.what();
      EXPECT_NE(e.message().find(fragment), std::string::npos) << e.what();
      EXPECT_NE(e.message().find("hostile"), std::string::npos) << e.what();
    }
  };
  // opcode, dst, a kind, a index, b kind, b index (kinds: 0 register, 1 input, 2 constant)
  const std::vector<int64_t> ok{0, 0, 1, 0, 2, 0};
  expect_refused(node("FusedElementwise", {}, {}, 1), "at least one");
  expect_refused(node("FusedMatMul", ok, {0, 0}, 1), "expects A, B");
  expect_refused(node("FusedMatMul", {99, 0, 1, 0, 2, 0}, {0, 0}, 3), "unknown operation 99");
  expect_refused(node("FusedElementwise", {0, 0, 1, 0, 2}, {0, 0}, 1), "6 ints");
  expect_refused(node("FusedElementwise", ok, {0}, 1), "2 floats");
  expect_refused(node("FusedElementwise", {99, 0, 1, 0, 2, 0}, {0, 0}, 1), "unknown operation 99");
  expect_refused(node("FusedElementwise", {static_cast<int64_t>(ir::EwOp::Gelu), 0, 1, 0, 0, 0}, {0.5f, 0}, 1),
                 "Gelu's form must be 0 (erf) or 1 (tanh)");
  expect_refused(node("FusedElementwise", {0, 0, 0, 3, 2, 0}, {0, 0}, 1), "before it is written");
  expect_refused(node("FusedElementwise", {0, 1000, 1, 0, 2, 0}, {0, 0}, 1), "register 1000");
  expect_refused(node("FusedElementwise", {0, 0, 1, -1, 2, 0}, {0, 0}, 1), "input -1");
  expect_refused(node("FusedElementwise", {0, 0, 1, 0, 2, 5}, {0, 0}, 1), "constant 5");
  expect_refused(node("FusedElementwise", {0, 0, 7, 0, 2, 0}, {0, 0}, 1), "operand kind 7");
  expect_refused(node("FusedElementwise", {0, 0, 1, 1, 2, 0}, {0, 0}, 1), "reads input 1 of 1");
  std::vector<int64_t> long_code;
  for (int i = 0; i < 33; ++i) long_code.insert(long_code.end(), ok.begin(), ok.end());
  expect_refused(node("FusedElementwise", long_code, std::vector<float>(66), 1), "more than 32");
  expect_refused(node("FusedElementwise", ok, {0, 0}, 17), "more than 16 inputs");
  expect_refused(node("FusedConv", ok, {0, 0}, 1), "expects X, W, B");
  // FusedConv: program input 1 is node input 3.
  expect_refused(node("FusedConv", {0, 0, 1, 0, 1, 1}, {0, 0}, 3), "reads input 1 of 1");
  EXPECT_NO_THROW(rt::find_op("onemodel", "FusedConv", 1)
                      ->factory(rt::NodeInfo(node("FusedConv", {0, 0, 1, 0, 1, 1}, {0, 0}, 4), false)));
}

}  // namespace
}  // namespace onemodel
