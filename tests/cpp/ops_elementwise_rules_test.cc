// Element-wise rules the ONNX backend cases do not pin down (ops-elementwise.md): integer division and
// modulus by zero and their sign rules, Pow, Round half to even, Clip, Max/Min NaN and signed-zero order,
// BitShift/Bitwise on unsigned types, exact-mode NaN canonicalisation, Where and CastLike. Expected values
// are worked out by hand from the spec's rules (each test says which).
#include <cmath>
#include <limits>

#include "ops_test_util.h"

namespace onemodel::test {
namespace {

template <class T>
Tensor vec(std::vector<T> v) {
  const auto n = static_cast<int64_t>(v.size());
  return Tensor::from_values(std::span<const T>(v), Shape{n});
}
template <class T>
Tensor scalar(T v) {
  return Tensor::from_values(std::span<const T>(&v, 1), Shape{});
}

OpResult run(const std::string& op, std::vector<Tensor> in, std::vector<ir::Attribute> attrs = {}, int64_t opset = 18,
             bool exact = false) {
  OpCase c;
  c.op_type = op;
  c.opset = opset;
  c.inputs = std::move(in);
  c.attrs = std::move(attrs);
  c.exact = exact;
  return run_op(c);
}

const float kNan = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

TEST(OpsElementwiseRulesTest, IntegerDivTruncatesAndDefinesTheTrappingCases) {
  // 7/-2 = -3 (toward zero), -7/2 = -3, x/0 = 0, MIN/-1 wraps to MIN.
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
  auto r = run("Div", {vec<int32_t>({7, -7, 5, -5, kMin}), vec<int32_t>({-2, 2, 0, 0, -1})});
  EXPECT_EQ(values<int32_t>(r.outputs[0]), (std::vector<int32_t>{-3, -3, 0, 0, kMin}));
  auto u = run("Div", {vec<uint8_t>({200, 7}), vec<uint8_t>({0, 2})});
  EXPECT_EQ(values<uint8_t>(u.outputs[0]), (std::vector<uint8_t>{0, 3}));
}

TEST(OpsElementwiseRulesTest, ModFloorTakesTheDivisorSignFmodTheDividendSign) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  const auto a = vec<int64_t>({7, -7, 7, -7, 5, kMin, 6});
  const auto b = vec<int64_t>({3, 3, -3, -3, 0, -1, 3});
  // fmod = 0: 7 mod 3 = 1, -7 mod 3 = 2, 7 mod -3 = -2, -7 mod -3 = -1, x mod 0 = 0, MIN mod -1 = 0, 6 mod 3 = 0.
  EXPECT_EQ(values<int64_t>(run("Mod", {a, b}).outputs[0]), (std::vector<int64_t>{1, 2, -2, -1, 0, 0, 0}));
  // fmod = 1: 7 % 3 = 1, -7 % 3 = -1, 7 % -3 = 1, -7 % -3 = -1.
  EXPECT_EQ(values<int64_t>(run("Mod", {a, b}, {attr_i("fmod", 1)}).outputs[0]),
            (std::vector<int64_t>{1, -1, 1, -1, 0, 0, 0}));
  auto f = run("Mod", {vec<float>({5.5f, -5.5f}), vec<float>({2.0f, 2.0f})}, {attr_i("fmod", 1)});
  EXPECT_EQ(values<float>(f.outputs[0]), (std::vector<float>{1.5f, -1.5f}));
  // fmod = 0 is for integers only.
  expect_error([] { run("Mod", {vec<float>({1.0f}), vec<float>({1.0f})}); }, ErrorKind::Unsupported, "float32");
  // Unsigned: plain remainder.
  EXPECT_EQ(values<uint16_t>(run("Mod", {vec<uint16_t>({65535}), vec<uint16_t>({10})}).outputs[0]),
            (std::vector<uint16_t>{5}));
}

TEST(OpsElementwiseRulesTest, IntegerArithmeticWraps) {
  auto r = run("Sub", {vec<int8_t>({-128, 127}), vec<int8_t>({1, -1})});
  EXPECT_EQ(values<int8_t>(r.outputs[0]), (std::vector<int8_t>{127, -128}));
  auto n = run("Neg", {vec<int16_t>({-32768, 5})});
  EXPECT_EQ(values<int16_t>(n.outputs[0]), (std::vector<int16_t>{-32768, -5}));
  auto a = run("Abs", {vec<int8_t>({-128, -3, 4})});
  EXPECT_EQ(values<int8_t>(a.outputs[0]), (std::vector<int8_t>{-128, 3, 4}));
}

TEST(OpsElementwiseRulesTest, PowRules) {
  // x^0 = 1 even for NaN; exponent 2 is x*x; integer bases compute in double and saturate.
  auto f = run("Pow", {vec<float>({kNan, 3.0f, -2.0f, 4.0f}), vec<float>({0.0f, 2.0f, 3.0f, 0.5f})});
  EXPECT_EQ(values<float>(f.outputs[0]), (std::vector<float>{1.0f, 9.0f, -8.0f, 2.0f}));
  // The kernel declares an exact flavour, but only a plan-time exponent of 2 is allowed in exact mode
  // (ops_pow_exact_test.cc).
  EXPECT_TRUE(f.flags.exact);
  auto i = run("Pow", {vec<int32_t>({2, -3, 10, 2}), vec<int64_t>({10, 3, 10, -1})});
  // 10^10 saturates to INT32_MAX; 2^-1 = 0.5 truncates to 0.
  EXPECT_EQ(values<int32_t>(i.outputs[0]), (std::vector<int32_t>{1024, -27, 2147483647, 0}));
  auto m = run("Pow", {vec<int64_t>({3}), vec<uint32_t>({4})});
  EXPECT_EQ(values<int64_t>(m.outputs[0]), (std::vector<int64_t>{81}));
  auto d = run("Pow", {vec<double>({2.0}), vec<float>({0.5f})});
  EXPECT_EQ(values<double>(d.outputs[0])[0], std::sqrt(2.0));
  expect_error([] { run("Pow", {vec<int8_t>({2}), vec<int8_t>({2})}); }, ErrorKind::Unsupported, "base type");
}

TEST(OpsElementwiseRulesTest, RoundHalfToEvenKeepsSignOfZero) {
  auto r = run("Round", {vec<float>({0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -0.4f, 2.6f, -2.6f})});
  const auto v = values<float>(r.outputs[0]);
  EXPECT_EQ(v, (std::vector<float>{0.0f, 2.0f, 2.0f, -0.0f, -2.0f, -0.0f, 3.0f, -3.0f}));
  EXPECT_EQ(fbits(v[0]), 0x00000000u);
  EXPECT_EQ(fbits(v[3]), 0x80000000u);  // Round(-0.5) = -0
  EXPECT_EQ(fbits(v[5]), 0x80000000u);  // Round(-0.4) = -0
  auto d = run("Round", {vec<double>({3.5, 4.5})});
  EXPECT_EQ(values<double>(d.outputs[0]), (std::vector<double>{4.0, 4.0}));
}

TEST(OpsElementwiseRulesTest, ClipBoundsNanAndOrder) {
  // No bounds: the finite extremes, so +inf becomes FLT_MAX; NaN passes.
  auto r = run("Clip", {vec<float>({kInf, -kInf, kNan, 1.0f}), Tensor(), Tensor()}, {}, 13);
  const auto v = values<float>(r.outputs[0]);
  EXPECT_EQ(v[0], std::numeric_limits<float>::max());
  EXPECT_EQ(v[1], std::numeric_limits<float>::lowest());
  EXPECT_TRUE(std::isnan(v[2]));
  EXPECT_EQ(v[3], 1.0f);
  // lo > hi: the upper bound wins for every x.
  auto w = run("Clip", {vec<float>({-5.0f, 0.5f, 5.0f}), scalar(2.0f), scalar(1.0f)}, {}, 13);
  EXPECT_EQ(values<float>(w.outputs[0]), (std::vector<float>{1.0f, 1.0f, 1.0f}));
  // Integers with only a max; opset 6 attributes.
  auto i = run("Clip", {vec<int32_t>({-7, 3, 9}), Tensor(), scalar<int32_t>(4)}, {}, 13);
  EXPECT_EQ(values<int32_t>(i.outputs[0]), (std::vector<int32_t>{-7, 3, 4}));
  auto old = run("Clip", {vec<float>({-3.0f, 0.25f, 3.0f})}, {attr_f("min", -1.0f), attr_f("max", 1.0f)}, 6);
  EXPECT_EQ(values<float>(old.outputs[0]), (std::vector<float>{-1.0f, 0.25f, 1.0f}));
}

TEST(OpsElementwiseRulesTest, MaxMinNanAndSignedZeroOrder) {
  const float nan_a = from_fbits(0x7FC00001u), nan_b = from_fbits(0x7FC00002u);
  auto mx = run("Max", {vec<float>({nan_a, 1.0f, nan_a, -0.0f, 0.0f}), vec<float>({1.0f, nan_b, nan_b, 0.0f, -0.0f})});
  const auto v = values<float>(mx.outputs[0]);
  EXPECT_EQ(fbits(v[0]), 0x7FC00001u);  // the NaN operand (fast mode keeps its bits)
  EXPECT_EQ(fbits(v[1]), 0x7FC00002u);
  EXPECT_EQ(fbits(v[2]), 0x7FC00001u);  // both NaN: the first operand's
  EXPECT_EQ(fbits(v[3]), 0x00000000u);  // Max(-0, +0) = +0 (equal: the second)
  EXPECT_EQ(fbits(v[4]), 0x80000000u);  // Max(+0, -0) = -0
  auto mn = run("Min", {vec<float>({-0.0f, 2.0f}), vec<float>({0.0f, 1.0f}), vec<float>({5.0f, kNan})});
  const auto m = values<float>(mn.outputs[0]);
  EXPECT_EQ(fbits(m[0]), 0x00000000u);  // Min(-0, +0) = +0, then Min(+0, 5) = +0
  EXPECT_TRUE(std::isnan(m[1]));
  // Three inputs broadcast and fold left to right; Mean divides once.
  auto mean = run("Mean", {vec<float>({1.0f, 2.0f}), scalar(4.0f), vec<float>({1.0f, 0.0f})});
  EXPECT_EQ(values<float>(mean.outputs[0]), (std::vector<float>{2.0f, 2.0f}));
  auto imax = run("Max", {vec<uint64_t>({1, ~uint64_t{0}}), vec<uint64_t>({2, 3})});
  EXPECT_EQ(values<uint64_t>(imax.outputs[0]), (std::vector<uint64_t>{2, ~uint64_t{0}}));
}

TEST(OpsElementwiseRulesTest, SignAndSignedZeros) {
  auto s = run("Sign", {vec<float>({-0.0f, 0.0f, -3.0f, 7.0f, kNan})});
  const auto v = values<float>(s.outputs[0]);
  EXPECT_EQ(fbits(v[0]), 0x00000000u);  // both zeros give +0
  EXPECT_EQ(fbits(v[1]), 0x00000000u);
  EXPECT_EQ(v[2], -1.0f);
  EXPECT_EQ(v[3], 1.0f);
  EXPECT_TRUE(std::isnan(v[4]));
  auto relu = run("Relu", {vec<float>({-0.0f})}, {}, 14);
  EXPECT_EQ(fbits(values<float>(relu.outputs[0])[0]), 0x00000000u);
  auto neg = run("Neg", {vec<float>({0.0f})});
  EXPECT_EQ(fbits(values<float>(neg.outputs[0])[0]), 0x80000000u);
  auto lt = run("LessOrEqual", {vec<float>({-0.0f, kNan, kNan}), vec<float>({0.0f, kNan, 1.0f})});
  EXPECT_EQ(values<bool>(lt.outputs[0]), (std::vector<bool>{true, false, false}));
  auto eq = run("Equal", {vec<float>({kNan, -0.0f}), vec<float>({kNan, 0.0f})});
  EXPECT_EQ(values<bool>(eq.outputs[0]), (std::vector<bool>{false, true}));
}

TEST(OpsElementwiseRulesTest, BitShiftAndBitwiseOnUnsigned) {
  auto l =
      run("BitShift", {vec<uint8_t>({1, 0x81, 1, 1}), vec<uint8_t>({7, 1, 8, 200})}, {attr_s("direction", "LEFT")});
  EXPECT_EQ(values<uint8_t>(l.outputs[0]), (std::vector<uint8_t>{0x80, 0x02, 0, 0}));  // width or more: 0
  auto r =
      run("BitShift", {vec<uint64_t>({~uint64_t{0}, 16}), vec<uint64_t>({63, 64})}, {attr_s("direction", "RIGHT")});
  EXPECT_EQ(values<uint64_t>(r.outputs[0]), (std::vector<uint64_t>{1, 0}));
  expect_error(
      [] {
        run("BitShift", {vec<uint8_t>({1}), vec<uint8_t>({1})}, {attr_s("direction", "UP")});
      },
      ErrorKind::InvalidModel, "direction");
  auto a = run("BitwiseAnd", {vec<uint16_t>({0xF0F0}), vec<uint16_t>({0xFF00})});
  EXPECT_EQ(values<uint16_t>(a.outputs[0]), (std::vector<uint16_t>{0xF000}));
  auto o = run("BitwiseOr", {vec<uint32_t>({0xF0000000u}), vec<uint32_t>({0x0000000Fu})});
  EXPECT_EQ(values<uint32_t>(o.outputs[0]), (std::vector<uint32_t>{0xF000000Fu}));
  auto x = run("BitwiseXor", {vec<int8_t>({-1}), vec<int8_t>({0x0F})});
  EXPECT_EQ(values<int8_t>(x.outputs[0]), (std::vector<int8_t>{-16}));
  auto n = run("BitwiseNot", {vec<uint8_t>({0x00, 0xA5})});
  EXPECT_EQ(values<uint8_t>(n.outputs[0]), (std::vector<uint8_t>{0xFF, 0x5A}));
}

TEST(OpsElementwiseRulesTest, ExactModeCanonicalisesNaN) {
  const float payload = from_fbits(0xFFC12345u);  // negative NaN with a payload
  for (const char* op : {"Abs", "Neg", "Sqrt", "Floor", "Exp", "Tanh", "Sigmoid", "Erf", "Log"}) {
    auto e = run(op, {vec<float>({payload})}, {}, 18, true);
    EXPECT_EQ(fbits(values<float>(e.outputs[0])[0]), 0x7FC00000u) << op;
  }
  auto add = run("Add", {vec<float>({payload}), vec<float>({1.0f})}, {}, 18, true);
  EXPECT_EQ(fbits(values<float>(add.outputs[0])[0]), 0x7FC00000u);
  auto mx = run("Max", {vec<float>({payload}), vec<float>({1.0f})}, {}, 18, true);
  EXPECT_EQ(fbits(values<float>(mx.outputs[0])[0]), 0x7FC00000u);
  auto inf_minus_inf = run("Sub", {vec<double>({kInf}), vec<double>({kInf})}, {}, 18, true);
  EXPECT_EQ(dbits(values<double>(inf_minus_inf.outputs[0])[0]), 0x7FF8000000000000ull);
  const uint16_t h = 0xFE01;  // f16 NaN, negative, with a payload -> 0x7E00
  auto half = run("Abs", {Tensor::copy_of(DType::F16, Shape{1}, &h, 2)}, {}, 18, true);
  uint16_t got = 0;
  std::memcpy(&got, half.outputs[0].raw(), 2);
  EXPECT_EQ(got, 0x7E00u);
}

TEST(OpsElementwiseRulesTest, WhereBroadcastsThreeWaysAndCastLikeTakesTheType) {
  const std::vector<uint8_t> c{1, 0};
  auto w = run("Where",
               {Tensor::copy_of(DType::Bool, Shape{2, 1}, c.data(), 2), vec<int64_t>({1, 2, 3}), scalar<int64_t>(-1)});
  EXPECT_EQ(w.outputs[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(values<int64_t>(w.outputs[0]), (std::vector<int64_t>{1, 2, 3, -1, -1, -1}));
  expect_error(
      [] {
        run("Where", {vec<float>({1.0f}), vec<float>({1.0f}), vec<float>({1.0f})});
      },
      ErrorKind::InvalidModel, "condition must be bool");
  // CastLike: float -> uint8 by the Cast rules (truncate, saturate, NaN 0); the 'like' values are not read.
  auto cl = run("CastLike", {vec<float>({-3.7f, 300.0f, kNan, 2.9f}), vec<uint8_t>({})});
  EXPECT_EQ(cl.outputs[0].dtype(), DType::U8);
  EXPECT_EQ(values<uint8_t>(cl.outputs[0]), (std::vector<uint8_t>{0, 255, 0, 2}));
}

// Elu, Selu, Celu and Softplus run on the exact exponential and logarithm: flagged exact, float32 only, within
// a few ulp of a long double evaluation of the ONNX formulas (independent of the kernels), with the special
// values worked out by hand: softplus(-inf) = 0, softplus(+inf) = +inf, elu(-inf) = -alpha, NaN canonical.
TEST(OpsElementwiseRulesTest, ExpBasedActivationsAreExactFloat32) {
  std::vector<float> xs;
  for (float x = -30.0f; x <= 30.0f; x += 0.37f) xs.push_back(x);
  for (float x : {-1e-30f, 1e-30f, -0.0f, 0.0f, 88.0f, -104.0f, 1e-3f, -1e-3f}) xs.push_back(x);
  const Tensor in = vec<float>(xs);
  auto ulps = [](float got, long double want) {
    const float w = static_cast<float>(want);
    if (w == got) return 0.0L;
    const float step = std::nextafter(w, std::numeric_limits<float>::infinity()) - w;
    return std::fabs(static_cast<long double>(got) - want) / static_cast<long double>(step);
  };
  struct Fn {
    const char* op;
    std::vector<ir::Attribute> attrs;
    long double (*ref)(long double);
  };
  const std::vector<Fn> fns = {
      {"Elu", {attr_f("alpha", 0.5f)}, [](long double x) { return x < 0 ? 0.5L * std::expm1(x) : x; }},
      {"Selu",
       {},
       [](long double x) {
         const long double a = 1.67326319217681884765625L, g = 1.05070102214813232421875L;
         return x > 0 ? g * x : g * a * std::expm1(x);
       }},
      {"Celu", {attr_f("alpha", 2.0f)}, [](long double x) { return x > 0 ? x : 2.0L * std::expm1(x / 2.0L); }},
      {"Softplus", {}, [](long double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }},
  };
  for (const Fn& f : fns) {
    OpResult r = run(f.op, {in}, f.attrs, 22, true);
    EXPECT_TRUE(r.flags.exact) << f.op;
    const auto got = values<float>(r.outputs[0]);
    for (size_t i = 0; i < xs.size(); ++i) {
      const long double want = f.ref(xs[i]);
      // ONNX defines Elu, Selu and Celu as scale * (exp(x) - 1), which cancels near 0: there the bound is a few
      // ulp of the terms (scale <= 2, so 8 * 2^-24 absolute), elsewhere 6 ulp of the result.
      const long double abs_err = std::fabs(static_cast<long double>(got[i]) - want);
      EXPECT_TRUE(ulps(got[i], want) <= 6.0L || abs_err <= 8.0L * 0x1p-24L)
          << f.op << "(" << xs[i] << ") = " << got[i] << ", want " << static_cast<double>(want);
    }
    // Bits do not depend on the mode: the fast flavour runs the same code.
    EXPECT_EQ(values<float>(run(f.op, {in}, f.attrs, 22, false).outputs[0]), got) << f.op;
    // float64 is not served (as for Exp): refused naming the type.
    expect_error([&] { run(f.op, {vec<double>({1.0})}, f.attrs, 22, true); }, ErrorKind::Unsupported, "float64");
  }
  const auto sp = values<float>(run("Softplus", {vec<float>({-kInf, kInf})}, {}, 22, true).outputs[0]);
  EXPECT_EQ(sp, (std::vector<float>{0.0f, kInf}));
  const auto elu = values<float>(run("Elu", {vec<float>({-kInf})}, {attr_f("alpha", 0.5f)}, 22, true).outputs[0]);
  EXPECT_EQ(elu, (std::vector<float>{-0.5f}));
  const auto nan = run("Celu", {vec<float>({from_fbits(0xFFC00123u)})}, {}, 22, true);
  EXPECT_EQ(fbits(values<float>(nan.outputs[0])[0]), 0x7FC00000u);
}

}  // namespace
}  // namespace onemodel::test
