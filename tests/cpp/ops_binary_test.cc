// Add/Sub/Mul/Div and Relu against hand-computed values and a naive broadcasting reference.
#include <cmath>
#include <limits>
#include <random>

#include "ops_test_util.h"

namespace onemodel::test {
namespace {

Tensor f32(std::vector<float> v, Shape s) { return Tensor::from_values(std::span<const float>(v), s); }

OpResult binop(const std::string& op, Tensor a, Tensor b, bool exact = false) {
  OpCase c;
  c.op_type = op;
  c.opset = 14;
  c.inputs = {std::move(a), std::move(b)};
  c.exact = exact;
  return run_op(c);
}

TEST(OpsBinaryTest, AddBroadcastsRowVector) {
  auto r = binop("Add", f32({1, 2, 3, 4, 5, 6}, Shape{2, 3}), f32({10, 20, 30}, Shape{3}));
  EXPECT_EQ(r.outputs[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{11, 22, 33, 14, 25, 36}));
  EXPECT_TRUE(r.flags.exact);
  EXPECT_EQ(r.flags.in_place_input, 0);
}

TEST(OpsBinaryTest, SubMulDivTwoSidedBroadcast) {
  // [2,1] op [1,3] -> [2,3]; expected values by hand.
  Tensor a = f32({1, 4}, Shape{2, 1});
  Tensor b = f32({1, 2, 8}, Shape{1, 3});
  EXPECT_EQ(values<float>(binop("Sub", a, b).outputs[0]), (std::vector<float>{0, -1, -7, 3, 2, -4}));
  EXPECT_EQ(values<float>(binop("Mul", a, b).outputs[0]), (std::vector<float>{1, 2, 8, 4, 8, 32}));
  EXPECT_EQ(values<float>(binop("Div", a, b).outputs[0]), (std::vector<float>{1, 0.5f, 0.125f, 4, 2, 0.5f}));
}

// Naive reference: for every output multi-index, pick the right-aligned input element (extent 1 -> 0).
template <class T, class Op>
std::vector<T> naive(const std::vector<int64_t>& sa, const std::vector<T>& a, const std::vector<int64_t>& sb,
                     const std::vector<T>& b, const std::vector<int64_t>& so, Op op) {
  int64_t n = 1;
  for (auto d : so) n *= d;
  std::vector<T> out;
  for (int64_t flat = 0; flat < n; ++flat) {
    std::vector<int64_t> idx(so.size());
    int64_t rem = flat;
    for (size_t d = so.size(); d-- > 0;) {
      idx[d] = rem % so[d];
      rem /= so[d];
    }
    auto at = [&](const std::vector<int64_t>& s, const std::vector<T>& v) {
      int64_t off = 0;
      const size_t shift = so.size() - s.size();
      for (size_t d = 0; d < s.size(); ++d) off = off * s[d] + (s[d] == 1 ? 0 : idx[d + shift]);
      return v[static_cast<size_t>(off)];
    };
    out.push_back(op(at(sa, a), at(sb, b)));
  }
  return out;
}

TEST(OpsBinaryTest, RandomBroadcastShapesMatchNaiveReference) {
  struct S {
    std::vector<int64_t> a, b, out;
  };
  const std::vector<S> shapes = {
      {{}, {}, {}},
      {{3}, {}, {3}},
      {{}, {2, 3}, {2, 3}},
      {{2, 1, 3}, {4, 1}, {2, 4, 3}},
      {{1, 5}, {5, 1}, {5, 5}},
      {{0, 3}, {1, 3}, {0, 3}},
      {{2, 3, 4, 5}, {3, 1, 5}, {2, 3, 4, 5}},
      {{7}, {7}, {7}},
      {{1, 1, 1}, {2, 2}, {1, 2, 2}},
      {{3, 1, 2, 1}, {1, 4, 1, 5}, {3, 4, 2, 5}},
  };
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-4, 4);
  for (const auto& s : shapes) {
    auto fill = [&](const std::vector<int64_t>& d) {
      int64_t n = 1;
      for (auto x : d) n *= x;
      std::vector<float> v(static_cast<size_t>(n));
      for (auto& x : v) x = dist(rng);
      return v;
    };
    auto av = fill(s.a), bv = fill(s.b);
    Tensor a = f32(av, Shape(std::span<const int64_t>(s.a))), b = f32(bv, Shape(std::span<const int64_t>(s.b)));
    const std::vector<std::pair<std::string, float (*)(float, float)>> ops = {
        {"Add", [](float x, float y) { return x + y; }},
        {"Sub", [](float x, float y) { return x - y; }},
        {"Mul", [](float x, float y) { return x * y; }},
        {"Div", [](float x, float y) { return x / y; }}};
    for (const auto& [name, fn] : ops) {
      for (bool exact : {false, true}) {
        auto r = binop(name, a, b, exact);
        ASSERT_EQ(r.outputs[0].shape(), Shape(std::span<const int64_t>(s.out))) << name;
        auto want = naive<float>(s.a, av, s.b, bv, s.out, fn);
        auto got = values<float>(r.outputs[0]);
        ASSERT_EQ(got.size(), want.size());
        for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(fbits(got[i]), fbits(want[i])) << name << " at " << i;
      }
    }
  }
}

TEST(OpsBinaryTest, IntegerWrapAndDivisionRules) {
  auto i8 = [](std::vector<int8_t> v) {
    return Tensor::from_values(std::span<const int8_t>(v), Shape{static_cast<int64_t>(v.size())});
  };
  EXPECT_EQ(values<int8_t>(binop("Add", i8({127, -128, 100}), i8({1, -1, 100})).outputs[0]),
            (std::vector<int8_t>{-128, 127, -56}));
  EXPECT_EQ(values<int8_t>(binop("Mul", i8({16, -128}), i8({16, -1})).outputs[0]), (std::vector<int8_t>{0, -128}));
  EXPECT_EQ(values<int8_t>(binop("Div", i8({-7, 7, -128, 5}), i8({2, 0, -1, -3})).outputs[0]),
            (std::vector<int8_t>{-3, 0, -128, -1}));

  auto u8 = [](std::vector<uint8_t> v) {
    return Tensor::from_values(std::span<const uint8_t>(v), Shape{static_cast<int64_t>(v.size())});
  };
  EXPECT_EQ(values<uint8_t>(binop("Sub", u8({0, 5}), u8({1, 10})).outputs[0]), (std::vector<uint8_t>{255, 251}));
  EXPECT_EQ(values<uint8_t>(binop("Mul", u8({16, 255}), u8({16, 255})).outputs[0]), (std::vector<uint8_t>{0, 1}));

  const int32_t imin = std::numeric_limits<int32_t>::min(), imax = std::numeric_limits<int32_t>::max();
  auto i32 = [](std::vector<int32_t> v) {
    return Tensor::from_values(std::span<const int32_t>(v), Shape{static_cast<int64_t>(v.size())});
  };
  EXPECT_EQ(values<int32_t>(binop("Add", i32({imax, imin}), i32({1, -1})).outputs[0]),
            (std::vector<int32_t>{imin, imax}));
  EXPECT_EQ(values<int32_t>(binop("Mul", i32({65536, 46341}), i32({65536, 46341})).outputs[0]),
            (std::vector<int32_t>{0, -2147479015}));  // 46341^2 = 2147488281 wraps (computed with Python)
  EXPECT_EQ(values<int32_t>(binop("Div", i32({imin, 9, -9, 1}), i32({-1, 0, 4, 2})).outputs[0]),
            (std::vector<int32_t>{imin, 0, -2, 0}));

  const int64_t lmin = std::numeric_limits<int64_t>::min(), lmax = std::numeric_limits<int64_t>::max();
  auto i64 = [](std::vector<int64_t> v) {
    return Tensor::from_values(std::span<const int64_t>(v), Shape{static_cast<int64_t>(v.size())});
  };
  EXPECT_EQ(values<int64_t>(binop("Sub", i64({lmin, 3}), i64({1, 5})).outputs[0]), (std::vector<int64_t>{lmax, -2}));
  EXPECT_EQ(values<int64_t>(binop("Mul", i64({lmax}), i64({2})).outputs[0]), (std::vector<int64_t>{-2}));
  EXPECT_EQ(values<int64_t>(binop("Div", i64({lmin, -1}), i64({-1, 0})).outputs[0]), (std::vector<int64_t>{lmin, 0}));

  auto u64 = [](std::vector<uint64_t> v) {
    return Tensor::from_values(std::span<const uint64_t>(v), Shape{static_cast<int64_t>(v.size())});
  };
  EXPECT_EQ(values<uint64_t>(binop("Div", u64({~0ull, 7}), u64({2, 0})).outputs[0]),
            (std::vector<uint64_t>{~0ull / 2, 0}));
}

TEST(OpsBinaryTest, SpecialFloatValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const float sub = from_fbits(1);  // smallest subnormal
  auto r = binop("Add", f32({-0.0f, -0.0f, sub, inf, -inf, 1e38f * 10}, Shape{6}),
                 f32({-0.0f, 0.0f, sub, 1, 5, 0}, Shape{6}));
  auto v = values<float>(r.outputs[0]);
  EXPECT_EQ(fbits(v[0]), 0x80000000u);  // -0 + -0 = -0
  EXPECT_EQ(fbits(v[1]), 0x00000000u);  // -0 + +0 = +0
  EXPECT_EQ(fbits(v[2]), 2u);           // subnormals are kept
  EXPECT_EQ(v[3], inf);
  EXPECT_EQ(v[4], -inf);
  EXPECT_EQ(v[5], inf);
  auto m = values<float>(binop("Mul", f32({-0.0f, sub, 2}, Shape{3}), f32({3, 0.5f, -0.0f}, Shape{3})).outputs[0]);
  EXPECT_EQ(fbits(m[0]), 0x80000000u);
  EXPECT_EQ(fbits(m[1]), 0u);  // 2^-150 ties to even: +0
  EXPECT_EQ(fbits(m[2]), 0x80000000u);
  auto d = values<float>(binop("Div", f32({1, -1, 0}, Shape{3}), f32({0, 0, 0}, Shape{3})).outputs[0]);
  EXPECT_EQ(d[0], inf);
  EXPECT_EQ(d[1], -inf);
  EXPECT_TRUE(std::isnan(d[2]));
}

TEST(OpsBinaryTest, ExactModeCanonicalNan) {
  const float inf = std::numeric_limits<float>::infinity();
  const float payload_nan = from_fbits(0xFFC12345u);
  Tensor a = f32({inf, payload_nan, 0, 1}, Shape{4});
  Tensor b = f32({inf, 1, inf, payload_nan}, Shape{4});
  for (const char* op : {"Sub", "Add", "Mul", "Div"}) {
    auto v = values<float>(binop(op, a, b, true).outputs[0]);
    EXPECT_EQ(fbits(v[1]), 0x7FC00000u) << op;
    EXPECT_EQ(fbits(v[3]), 0x7FC00000u) << op;
    auto fast = values<float>(binop(op, a, b, false).outputs[0]);
    EXPECT_TRUE(std::isnan(fast[1])) << op;
  }
  EXPECT_EQ(fbits(values<float>(binop("Sub", a, b, true).outputs[0])[0]), 0x7FC00000u);  // inf - inf
  EXPECT_EQ(fbits(values<float>(binop("Mul", a, b, true).outputs[0])[2]), 0x7FC00000u);  // 0 * inf

  std::vector<double> da = {std::numeric_limits<double>::infinity(), 1.5};
  std::vector<double> db = {std::numeric_limits<double>::infinity(), 0.25};
  Tensor ta = Tensor::from_values(std::span<const double>(da), Shape{2});
  Tensor tb = Tensor::from_values(std::span<const double>(db), Shape{2});
  auto dv = values<double>(binop("Sub", ta, tb, true).outputs[0]);
  EXPECT_EQ(dbits(dv[0]), 0x7FF8000000000000ull);
  EXPECT_EQ(dv[1], 1.25);
}

TEST(OpsBinaryTest, HalfPrecisionRoundsOnce) {
  auto h = [](std::vector<uint16_t> v) {
    return Tensor::copy_of(DType::F16, Shape{static_cast<int64_t>(v.size())}, v.data(), v.size() * 2);
  };
  // 1 + 1 = 2; 65504 + 65504 = inf; 1 + 2^-11 (a tie at 1) rounds to even 1; 1 + 3*2^-11 rounds up;
  // inf - inf = NaN (0x7E00 in exact mode).
  auto r = binop("Add", h({0x3C00, 0x7BFF, 0x3C00, 0x3C00, 0x7C00}), h({0x3C00, 0x7BFF, 0x1000, 0x1600, 0xFC00}), true);
  auto* p = static_cast<const uint16_t*>(r.outputs[0].raw());
  EXPECT_EQ(p[0], 0x4000);
  EXPECT_EQ(p[1], 0x7C00);
  EXPECT_EQ(p[2], 0x3C00);
  EXPECT_EQ(p[3], 0x3C02);
  EXPECT_EQ(p[4], 0x7E00);
}

TEST(OpsBinaryTest, Errors) {
  auto i32 = Tensor::from_values<int32_t>({1}, Shape{1});
  expect_error([&] { binop("Add", f32({1}, Shape{1}), i32); }, ErrorKind::InvalidModel, "Add node 'n0'");
  expect_error(
      [&] {
        binop("Mul", f32({1, 2}, Shape{2}), f32({1, 2, 3}, Shape{3}));
      },
      ErrorKind::InvalidModel, "do not broadcast");
  auto b = Tensor::from_values<bool>({true}, Shape{1});
  expect_error([&] { binop("Add", b, b); }, ErrorKind::Unsupported, "bool");
  auto bf = Tensor::zeros(DType::BF16, Shape{1});
  expect_error([&] { binop("Add", bf, bf); }, ErrorKind::Unsupported, "bfloat16");
  OpCase c;
  c.op_type = "Add";
  c.opset = 6;
  c.inputs = {f32({1}, Shape{1}), f32({1}, Shape{1})};
  expect_error([&] { run_op(c); }, ErrorKind::UnsupportedOperator, "Add");
}

TEST(OpsReluTest, CompareAndSelect) {
  const float inf = std::numeric_limits<float>::infinity();
  Tensor x =
      f32({-1, -0.0f, 0, 2.5f, -inf, inf, from_fbits(0x80000001u), from_fbits(1), from_fbits(0xFFC12345u)}, Shape{9});
  for (int64_t opset : {6, 13, 14}) {
    OpCase c;
    c.op_type = "Relu";
    c.opset = opset;
    c.inputs = {x};
    auto fast = values<float>(run_op(c).outputs[0]);
    c.exact = true;
    auto exact = values<float>(run_op(c).outputs[0]);
    const std::vector<uint32_t> want = {0, 0, 0, fbits(2.5f), 0, fbits(inf), 0, 1};
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(fbits(fast[i]), want[i]) << i;
      EXPECT_EQ(fbits(exact[i]), want[i]) << i;
    }
    EXPECT_EQ(fbits(fast[8]), 0xFFC12345u);  // NaN passes through unchanged in fast mode
    EXPECT_EQ(fbits(exact[8]), 0x7FC00000u);
  }
}

TEST(OpsReluTest, IntegersAndDouble) {
  OpCase c;
  c.op_type = "Relu";
  c.opset = 14;
  c.inputs = {Tensor::from_values<int32_t>({-5, 0, 7, std::numeric_limits<int32_t>::min()}, Shape{2, 2})};
  EXPECT_EQ(values<int32_t>(run_op(c).outputs[0]), (std::vector<int32_t>{0, 0, 7, 0}));
  c.inputs = {Tensor::from_values<double>({-0.0, 3.25}, Shape{2})};
  auto d = values<double>(run_op(c).outputs[0]);
  EXPECT_EQ(dbits(d[0]), 0u);
  EXPECT_EQ(d[1], 3.25);
  c.inputs = {Tensor::from_values<bool>({true}, Shape{1})};
  expect_error([&] { run_op(c); }, ErrorKind::Unsupported, "bool");
}

}  // namespace
}  // namespace onemodel::test

namespace onemodel::test {
namespace {

// in_place_input = 0: the plan may hand the kernel output 0 over input 0's storage.
TEST(OpsBinaryTest, InPlaceOverInputZero) {
  const rt::OpDef* def = rt::find_op("", "Sub", 14);
  ASSERT_NE(def, nullptr);
  OpCase c;
  c.op_type = "Sub";
  c.opset = 14;
  const ir::Node node = make_node(c);
  const rt::NodeInfo info(node, true);
  auto k = def->factory(info);
  ASSERT_EQ(k->flags().in_place_input, 0);
  std::vector<Tensor> in = {Tensor::from_values<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3}),
                            Tensor::from_values<float>({1, 10, 100}, Shape{3})};
  std::vector<Tensor> out = {in[0]};  // same storage
  TestArena arena;
  rt::RunContext ctx{info, in, out, true, nullptr, &arena, nullptr};
  k->run(ctx);
  EXPECT_EQ(values<float>(in[0]), (std::vector<float>{0, -8, -97, 3, -5, -94}));

  const rt::OpDef* relu = rt::find_op("", "Relu", 14);
  auto rk = relu->factory(info);
  ASSERT_EQ(rk->flags().in_place_input, 0);
  std::vector<Tensor> rin = {in[0]};
  std::vector<Tensor> rout = {in[0]};
  rt::RunContext rctx{info, rin, rout, true, nullptr, &arena, nullptr};
  rk->run(rctx);
  EXPECT_EQ(values<float>(in[0]), (std::vector<float>{0, 0, 0, 3, 0, 0}));
}

}  // namespace
}  // namespace onemodel::test
