// The exact fp32 transcendentals (exact-transcendentals.md): bits on a few values against an independent
// evaluation, special values, and ULP bounds against long double on sampled sweeps.
//
// The expected bits were produced by /usr/bin/python3 with numpy, evaluating the spec's formulas step by step
// in numpy.float32 scalars (one rounding per operation, no fused multiply-add), and pasted here.
#include <cmath>
#include <limits>

#include "kernels/exact_math.h"
#include "ops_test_util.h"

namespace onemodel::test {
namespace {

using namespace onemodel::kern;

struct Golden {
  const char* fn;
  float x;
  uint32_t bits;
};

float eval(const std::string& fn, float x) {
  if (fn == "log") return exact_log(x);
  if (fn == "tanh") return exact_tanh(x);
  if (fn == "sigmoid") return exact_sigmoid(x);
  if (fn == "erf") return exact_erf(x);
  if (fn == "gelu_erf") return exact_gelu_erf(x);
  return exact_gelu_tanh(x);
}

TEST(OpsElementwiseExactTest, BitsMatchAStepByStepFloat32Evaluation) {
  static const Golden kCases[] = {
      {"log", 0.45f, 0xBF4C6B00u},        {"log", 1.0f, 0x00000000u},        {"log", 2.5f, 0x3F6A9208u},
      {"log", 5e-39f, 0xC2B061FDu},       {"tanh", -3.7f, 0xBF7FAFEEu},      {"tanh", -0.3f, 0xBE9526EEu},
      {"tanh", 0.45f, 0x3ED80325u},       {"tanh", 1.0f, 0x3F42F7D6u},       {"tanh", 2.5f, 0x3F7C92C1u},
      {"tanh", 5e-39f, 0x003671F7u},      {"sigmoid", -3.7f, 0x3CC5A608u},   {"sigmoid", -0.3f, 0x3ED9E2ABu},
      {"sigmoid", 0.45f, 0x3F1C52DAu},    {"sigmoid", 1.0f, 0x3F3B26A8u},    {"sigmoid", 2.5f, 0x3F6C948Fu},
      {"sigmoid", 5e-39f, 0x3F000000u},   {"erf", -3.7f, 0xBF7FFFFDu},       {"erf", -0.3f, 0xBEA841C6u},
      {"erf", 0.45f, 0x3EF37257u},        {"erf", 1.0f, 0x3F57BB3Du},        {"erf", 2.5f, 0x3F7FE554u},
      {"erf", 5e-39f, 0x003D6F4Fu},       {"gelu_erf", -3.7f, 0xB9D11DF3u},  {"gelu_erf", -0.3f, 0xBDEAC157u},
      {"gelu_erf", 0.45f, 0x3E9B352Fu},   {"gelu_erf", 1.0f, 0x3F57625Eu},   {"gelu_erf", 2.5f, 0x401F01A7u},
      {"gelu_erf", 5e-39f, 0x001B38FCu},  {"gelu_tanh", -3.7f, 0xB98E812Eu}, {"gelu_tanh", -0.3f, 0xBDEAC2A8u},
      {"gelu_tanh", 0.45f, 0x3E9B33A7u},  {"gelu_tanh", 1.0f, 0x3F57585Cu},  {"gelu_tanh", 2.5f, 0x401F08DCu},
      {"gelu_tanh", 5e-39f, 0x001B38FCu},
  };
  for (const Golden& g : kCases) EXPECT_EQ(fbits(eval(g.fn, g.x)), g.bits) << g.fn << "(" << g.x << ")";
}

TEST(OpsElementwiseExactTest, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = from_fbits(0xFFC00123u);
  EXPECT_EQ(exact_log(0.0f), -inf);
  EXPECT_EQ(exact_log(-0.0f), -inf);
  EXPECT_EQ(exact_log(inf), inf);
  EXPECT_EQ(fbits(exact_log(-1.0f)), 0x7FC00000u);
  EXPECT_EQ(fbits(exact_tanh(-0.0f)), 0x80000000u);
  EXPECT_EQ(exact_tanh(inf), 1.0f);
  EXPECT_EQ(exact_tanh(-inf), -1.0f);
  EXPECT_EQ(exact_sigmoid(-inf), 0.0f);
  EXPECT_EQ(exact_sigmoid(inf), 1.0f);
  EXPECT_EQ(exact_erf(inf), 1.0f);
  EXPECT_EQ(exact_erf(-inf), -1.0f);
  EXPECT_EQ(fbits(exact_gelu_erf(-inf)), 0x80000000u);
  EXPECT_EQ(fbits(exact_gelu_tanh(-inf)), 0x80000000u);
  EXPECT_EQ(exact_gelu_erf(inf), inf);
  EXPECT_EQ(exact_gelu_tanh(inf), inf);
  for (float (*f)(float) : {exact_log, exact_tanh, exact_sigmoid, exact_erf, exact_gelu_erf, exact_gelu_tanh})
    EXPECT_EQ(fbits(f(nan)), 0x7FC00000u);
}

// |got - ref| in units of the float spacing at the correctly rounded reference.
double ulp_error(float got, long double ref) {
  const float r = static_cast<float>(ref);
  const float ar = std::fabs(r);
  const long double spacing = static_cast<long double>(std::nextafter(ar, std::numeric_limits<float>::infinity())) - ar;
  return static_cast<double>(std::fabs(static_cast<long double>(got) - ref) / spacing);
}

// Largest ULP error over `count` evenly spaced fp32 values in [lo, hi] (every step-th bit pattern, roughly).
template <class F, class R>
double max_ulp(F f, R ref, float lo, float hi, int count) {
  double worst = 0;
  for (int i = 0; i <= count; ++i) {
    const float x = lo + (hi - lo) * (static_cast<float>(i) / static_cast<float>(count));
    worst = std::max(worst, ulp_error(f(x), ref(static_cast<long double>(x))));
  }
  return worst;
}

TEST(OpsElementwiseExactTest, UlpBoundsAgainstLongDouble) {
  const int n = 40000;
  const long double sqrt_half = std::sqrt(0.5L);
  const long double k_tanh = std::sqrt(2.0L / 3.14159265358979323846264338327950288L);
  EXPECT_LE(max_ulp(
                exact_exp, [](long double x) { return std::exp(x); }, -16.0f, 16.0f, n),
            1.2);
  EXPECT_LE(max_ulp(
                exact_exp, [](long double x) { return std::exp(x); }, -87.0f, 88.0f, n),
            1.2);
  EXPECT_LE(max_ulp(
                exact_log, [](long double x) { return std::log(x); }, 0.0625f, 16.0f, n),
            2.1);
  EXPECT_LE(max_ulp(
                exact_log, [](long double x) { return std::log(x); }, 1e-30f, 1e30f, n),
            2.1);
  EXPECT_LE(max_ulp(
                exact_tanh, [](long double x) { return std::tanh(x); }, -10.0f, 10.0f, n),
            1.5);
  EXPECT_LE(max_ulp(
                exact_erf, [](long double x) { return std::erf(x); }, -6.0f, 6.0f, n),
            3.0);
  EXPECT_LE(max_ulp(
                exact_sigmoid, [](long double x) { return 1.0L / (1.0L + std::exp(-x)); }, -16.0f, 16.0f, n),
            2.5);
  EXPECT_LE(
      max_ulp(
          exact_gelu_erf, [&](long double x) { return 0.5L * x * (1.0L + std::erf(x * sqrt_half)); }, -3.0f, 10.0f, n),
      13.0);
  EXPECT_LE(max_ulp(
                exact_gelu_tanh,
                [&](long double x) { return 0.5L * x * (1.0L + std::tanh(k_tanh * (x + 0.044715L * x * x * x))); },
                -3.0f, 10.0f, n),
            18.0);
}

TEST(OpsElementwiseExactTest, OperatorsUseTheExactFunctions) {
  const std::vector<float> xs{-2.0f, -0.25f, 0.0f, 0.7f, 3.0f};
  auto run1 = [&](const std::string& op, std::vector<ir::Attribute> attrs, int64_t opset) {
    OpCase c;
    c.op_type = op;
    c.opset = opset;
    c.attrs = std::move(attrs);
    c.inputs = {Tensor::from_values(std::span<const float>(xs), Shape{5})};
    c.exact = true;
    auto r = run_op(c);
    EXPECT_TRUE(r.flags.exact) << op;
    return values<float>(r.outputs[0]);
  };
  ir::Attribute tanh_form;
  tanh_form.name = "approximate";
  tanh_form.type = ir::AttrType::String;
  tanh_form.s = "tanh";
  const auto gt = run1("Gelu", {tanh_form}, 20);
  const auto ge = run1("Gelu", {}, 20);
  const auto th = run1("Tanh", {}, 13);
  const auto sg = run1("Sigmoid", {}, 13);
  const auto ef = run1("Erf", {}, 13);
  for (size_t i = 0; i < xs.size(); ++i) {
    EXPECT_EQ(fbits(gt[i]), fbits(exact_gelu_tanh(xs[i])));
    EXPECT_EQ(fbits(ge[i]), fbits(exact_gelu_erf(xs[i])));
    EXPECT_EQ(fbits(th[i]), fbits(exact_tanh(xs[i])));
    EXPECT_EQ(fbits(sg[i]), fbits(exact_sigmoid(xs[i])));
    EXPECT_EQ(fbits(ef[i]), fbits(exact_erf(xs[i])));
  }
}

}  // namespace
}  // namespace onemodel::test
