// MatMul and Gemm against hand values (numpy-checked) and a naive reference that sums in increasing p
// from +0 with separate roundings (exact-mode.md), compared bit for bit in both modes.
#include <cmath>
#include <limits>
#include <random>

#include "ops_test_util.h"

namespace onemodel::test {
namespace {

Tensor f32(std::vector<float> v, std::vector<int64_t> s) {
  return Tensor::from_values(std::span<const float>(v), Shape(std::span<const int64_t>(s)));
}
std::vector<float> random_vec(std::mt19937& rng, int64_t n) {
  std::uniform_real_distribution<float> d(-3, 3);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = d(rng);
  return v;
}
int64_t prod(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

OpResult matmul(Tensor a, Tensor b, bool exact = false) {
  OpCase c;
  c.op_type = "MatMul";
  c.opset = 13;
  c.inputs = {std::move(a), std::move(b)};
  c.exact = exact;
  return run_op(c);
}

TEST(OpsMatMulTest, HandComputed) {
  // numpy: np.array([[1,2],[3,4]]) @ np.array([[5,6],[7,8]]) == [[19,22],[43,50]]
  auto r = matmul(f32({1, 2, 3, 4}, {2, 2}), f32({5, 6, 7, 8}, {2, 2}));
  EXPECT_EQ(r.outputs[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{19, 22, 43, 50}));
}

TEST(OpsMatMulTest, OneDimensionalPromotion) {
  auto dot = matmul(f32({1, 2, 3}, {3}), f32({4, 5, 6}, {3}));
  EXPECT_EQ(dot.outputs[0].shape(), Shape{});
  EXPECT_EQ(values<float>(dot.outputs[0]), (std::vector<float>{32}));
  auto vm = matmul(f32({1, 2, 3}, {3}), f32({1, 2, 3, 4, 5, 6}, {3, 2}));
  EXPECT_EQ(vm.outputs[0].shape(), Shape{2});
  EXPECT_EQ(values<float>(vm.outputs[0]), (std::vector<float>{22, 28}));
  auto mv = matmul(f32({1, 2, 3, 4, 5, 6}, {2, 3}), f32({1, 0, -1}, {3}));
  EXPECT_EQ(mv.outputs[0].shape(), Shape{2});
  EXPECT_EQ(values<float>(mv.outputs[0]), (std::vector<float>{-2, -2}));
  // 1-D against a batched matrix: [3] @ [2,3,2] -> [2,2]
  auto bv = matmul(f32({1, 1, 1}, {3}), f32({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {2, 3, 2}));
  EXPECT_EQ(bv.outputs[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(values<float>(bv.outputs[0]), (std::vector<float>{9, 12, 27, 30}));
}

// Naive reference over the numpy matmul semantics with explicit index arithmetic.
std::vector<float> naive_matmul(const std::vector<int64_t>& sa, const std::vector<float>& a,
                                const std::vector<int64_t>& sb, const std::vector<float>& b,
                                const std::vector<int64_t>& batch, int64_t m, int64_t k, int64_t n) {
  std::vector<float> out;
  const int64_t nb = prod(batch);
  auto batch_offset = [&](const std::vector<int64_t>& s, int64_t flat) {
    // s's batch dims right-aligned to `batch`; broadcast dims (extent 1) use index 0.
    const size_t br = s.size() - 2;
    std::vector<int64_t> idx(batch.size());
    for (size_t d = batch.size(); d-- > 0;) {
      idx[d] = flat % batch[d];
      flat /= batch[d];
    }
    int64_t off = 0;
    for (size_t d = 0; d < br; ++d) off = off * s[d] + (s[d] == 1 ? 0 : idx[d + batch.size() - br]);
    return off;
  };
  for (int64_t t = 0; t < nb; ++t) {
    const int64_t oa = batch_offset(sa, t) * m * k, ob = batch_offset(sb, t) * k * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float acc = 0.0f;
        for (int64_t p = 0; p < k; ++p) {
          const float prod_ = a[static_cast<size_t>(oa + i * k + p)] * b[static_cast<size_t>(ob + p * n + j)];
          acc = acc + prod_;
        }
        out.push_back(acc);
      }
  }
  return out;
}

TEST(OpsMatMulTest, BatchedBroadcastMatchesNaive) {
  struct C {
    std::vector<int64_t> a, b, batch;
  };
  const std::vector<C> cases = {
      {{2, 3}, {3, 4}, {}},        {{2, 1, 2, 3}, {3, 3, 4}, {2, 3}}, {{5, 2, 7}, {7, 1}, {5}},
      {{1, 4, 5}, {3, 5, 2}, {3}}, {{2, 0, 3}, {3, 4}, {2}},          {{2, 3, 0}, {1, 0, 4}, {2}},
      {{1, 1, 17}, {17, 33}, {1}}, {{3, 1, 1, 6}, {2, 6, 5}, {3, 2}},
  };
  std::mt19937 rng(11);
  for (const auto& c : cases) {
    auto av = random_vec(rng, prod(c.a)), bv = random_vec(rng, prod(c.b));
    const int64_t m = c.a[c.a.size() - 2], k = c.a.back(), n = c.b.back();
    auto want = naive_matmul(c.a, av, c.b, bv, c.batch, m, k, n);
    std::vector<int64_t> os = c.batch;
    os.push_back(m);
    os.push_back(n);
    for (bool exact : {false, true}) {
      auto r = matmul(f32(av, c.a), f32(bv, c.b), exact);
      ASSERT_EQ(r.outputs[0].shape(), Shape(std::span<const int64_t>(os)));
      auto got = values<float>(r.outputs[0]);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(fbits(got[i]), fbits(want[i])) << i;
    }
  }
}

TEST(OpsMatMulTest, SumsInIncreasingOrderFromPositiveZero) {
  // ((+0 + 1e8) + 1) + -1e8 = 0 in float32; any other order could give 1.
  auto r = matmul(f32({1e8f, 1, -1e8f}, {1, 3}), f32({1, 1, 1}, {3, 1}), true);
  EXPECT_EQ(values<float>(r.outputs[0])[0], 0.0f);
  // +0 + (-0 * 1) = +0: an accumulator never ends at -0.
  auto z = matmul(f32({-0.0f}, {1, 1}), f32({1}, {1, 1}), true);
  EXPECT_EQ(fbits(values<float>(z.outputs[0])[0]), 0u);
  // k = 0 gives +0.
  auto e = matmul(f32({}, {2, 0}), f32({}, {0, 3}), true);
  EXPECT_EQ(e.outputs[0].shape(), (Shape{2, 3}));
  for (float v : values<float>(e.outputs[0])) EXPECT_EQ(fbits(v), 0u);
}

TEST(OpsMatMulTest, NanAndIntegers) {
  const float inf = std::numeric_limits<float>::infinity();
  auto r = matmul(f32({inf, 0, from_fbits(0xFFC00001u), 1}, {2, 2}), f32({0, 1, 1, 0}, {2, 2}), true);
  // [[inf*0 + 0*1, inf*1 + 0*0], [NaN..., NaN...]]
  const std::vector<float> got = values<float>(r.outputs[0]);
  EXPECT_EQ(fbits(got[0]), 0x7FC00000u);
  EXPECT_EQ(got[1], inf);
  EXPECT_EQ(fbits(got[2]), 0x7FC00000u);
  EXPECT_EQ(fbits(got[3]), 0x7FC00000u);
  auto i = matmul(Tensor::from_values<int32_t>({65536, 2, 3, 4}, Shape{2, 2}),
                  Tensor::from_values<int32_t>({65536, 0, 0, 1}, Shape{2, 2}));
  EXPECT_EQ(values<int32_t>(i.outputs[0]), (std::vector<int32_t>{0, 2, 196608, 4}));
  auto l = matmul(Tensor::from_values<int64_t>({std::numeric_limits<int64_t>::max(), 1}, Shape{1, 2}),
                  Tensor::from_values<int64_t>({1, 1}, Shape{2, 1}));
  EXPECT_EQ(values<int64_t>(l.outputs[0])[0], std::numeric_limits<int64_t>::min());
  auto d = matmul(Tensor::from_values<double>({0.5, 0.25}, Shape{1, 2}), Tensor::from_values<double>({2, 4}, Shape{2}));
  EXPECT_EQ(values<double>(d.outputs[0]), (std::vector<double>{2.0}));
}

TEST(OpsMatMulTest, Errors) {
  expect_error(
      [] {
        matmul(f32({1, 2}, {1, 2}), f32({1, 2, 3}, {3, 1}));
      },
      ErrorKind::InvalidModel, "inner dimensions");
  expect_error([] { matmul(f32({1}, {}), f32({1}, {1})); }, ErrorKind::InvalidModel, "rank");
  expect_error(
      [] {
        matmul(f32({1, 2, 3, 4}, {2, 1, 2}), f32({1, 2, 3, 4, 5, 6}, {3, 2, 1}));
      },
      ErrorKind::InvalidModel, "batch");
  expect_error(
      [] {
        matmul(Tensor::from_values<int8_t>({1}, Shape{1, 1}), Tensor::from_values<int8_t>({1}, Shape{1, 1}));
      },
      ErrorKind::Unsupported, "int8");
}

// Gemm: Y = alpha * (op(A) op(B)) + beta * C with the two roundings of the epilogue kept separate.
struct GemmCase {
  bool ta, tb;
  float alpha, beta;
  std::vector<int64_t> c_shape;  // empty vector with has_c=false: no C
  bool has_c;
};

TEST(OpsGemmTest, AllTransposeAlphaBetaAndCShapes) {
  std::mt19937 rng(3);
  const int64_t M = 3, K = 5, N = 4;
  const std::vector<std::vector<int64_t>> c_shapes = {{}, {1}, {N}, {1, N}, {M, 1}, {M, N}, {1, 1}};
  int checked = 0;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb)
      for (float alpha : {1.0f, 0.3f, -2.0f})
        for (float beta : {1.0f, 0.0f, 0.7f})
          for (int ci = -1; ci < static_cast<int>(c_shapes.size()); ++ci) {
            std::vector<int64_t> sa = ta ? std::vector<int64_t>{K, M} : std::vector<int64_t>{M, K};
            std::vector<int64_t> sb = tb ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N};
            auto av = random_vec(rng, M * K), bv = random_vec(rng, K * N);
            OpCase c;
            c.op_type = "Gemm";
            c.opset = 13;
            c.attrs = {attr_i("transA", ta), attr_i("transB", tb), attr_f("alpha", alpha), attr_f("beta", beta)};
            c.inputs = {f32(av, sa), f32(bv, sb)};
            std::vector<float> cv;
            std::vector<int64_t> cs;
            if (ci >= 0) {
              cs = c_shapes[static_cast<size_t>(ci)];
              cv = random_vec(rng, prod(cs));
              c.inputs.push_back(f32(cv, cs));
            }
            // Reference.
            std::vector<float> want;
            for (int64_t i = 0; i < M; ++i)
              for (int64_t j = 0; j < N; ++j) {
                float acc = 0.0f;
                for (int64_t p = 0; p < K; ++p) {
                  const float x = ta ? av[static_cast<size_t>(p * M + i)] : av[static_cast<size_t>(i * K + p)];
                  const float y = tb ? bv[static_cast<size_t>(j * K + p)] : bv[static_cast<size_t>(p * N + j)];
                  const float pr = x * y;
                  acc = acc + pr;
                }
                float out = alpha * acc;
                if (ci >= 0) {
                  const size_t r = cs.size() == 2 && cs[0] != 1 ? static_cast<size_t>(i) : 0;
                  const size_t col = !cs.empty() && cs.back() != 1 ? static_cast<size_t>(j) : 0;
                  const size_t width = cs.empty() ? 1 : static_cast<size_t>(cs.back());
                  const float bc = beta * cv[r * width + col];
                  out = out + bc;
                }
                want.push_back(out);
              }
            for (bool exact : {false, true}) {
              c.exact = exact;
              auto r = run_op(c);
              ASSERT_EQ(r.outputs[0].shape(), (Shape{M, N}));
              auto got = values<float>(r.outputs[0]);
              for (size_t q = 0; q < got.size(); ++q)
                ASSERT_EQ(fbits(got[q]), fbits(want[q]))
                    << ta << tb << " " << alpha << " " << beta << " c" << ci << " at " << q;
              ++checked;
            }
          }
  EXPECT_EQ(checked, 2 * 2 * 3 * 3 * 8 * 2);
}

TEST(OpsGemmTest, EpilogueIsNotFused) {
  // alpha*acc = 1/3 rounded; with beta*C = -(1/3 rounded)... pick values where fma would differ:
  // acc = 1 + 2^-12 (exact), alpha = 1 + 2^-12: the exact product 1 + 2^-11 + 2^-24 rounds to 1 + 2^-11;
  // adding C = -(1 + 2^-11) gives 0 unfused, 2^-24 if fused.
  const float a = 1.0f + std::ldexp(1.0f, -12);
  OpCase c;
  c.op_type = "Gemm";
  c.opset = 13;
  c.attrs = {attr_f("alpha", a), attr_f("beta", 1.0f)};
  c.inputs = {f32({a}, {1, 1}), f32({1}, {1, 1}), f32({-(1.0f + std::ldexp(1.0f, -11))}, {1})};
  for (bool exact : {false, true}) {
    c.exact = exact;
    EXPECT_EQ(fbits(values<float>(run_op(c).outputs[0])[0]), 0u);
  }
}

TEST(OpsGemmTest, SpecialValuesAndErrors) {
  const float inf = std::numeric_limits<float>::infinity();
  OpCase c;
  c.op_type = "Gemm";
  c.opset = 13;
  c.attrs = {attr_f("beta", 0.0f)};
  // beta * C is formed even when beta is 0 (the literal epilogue): 0 * inf is NaN, canonical in exact mode.
  c.inputs = {f32({1, 2}, {1, 2}), f32({3, 4}, {2, 1}), f32({inf}, {1, 1})};
  c.exact = true;
  EXPECT_EQ(fbits(values<float>(run_op(c).outputs[0])[0]), 0x7FC00000u);
  // Optional C from opset 11; required before.
  c.attrs = {};
  c.inputs = {f32({1, 2}, {1, 2}), f32({3, 4}, {2, 1})};
  EXPECT_EQ(values<float>(run_op(c).outputs[0]), (std::vector<float>{11}));
  c.opset = 9;
  expect_error([&] { run_op(c); }, ErrorKind::InvalidModel, "C is required");
  c.opset = 13;
  c.inputs = {f32({1, 2}, {1, 2}), f32({3, 4}, {2, 1}), f32({1, 2, 3}, {3})};
  expect_error([&] { run_op(c); }, ErrorKind::InvalidModel, "does not broadcast");
  c.inputs = {f32({1, 2}, {1, 1, 2}), f32({3, 4}, {2, 1})};
  expect_error([&] { run_op(c); }, ErrorKind::InvalidModel, "2-D");
  c.inputs = {f32({1, 2}, {1, 2}), f32({3, 4, 5}, {3, 1})};
  expect_error([&] { run_op(c); }, ErrorKind::InvalidModel, "inner dimensions");
  // float64 Gemm.
  c.attrs = {attr_f("alpha", 0.5f), attr_i("transA", 1)};
  c.inputs = {Tensor::from_values<double>({1, 2}, Shape{2, 1}), Tensor::from_values<double>({3, 4}, Shape{2, 1}),
              Tensor::from_values<double>({0.25}, Shape{})};
  EXPECT_EQ(values<double>(run_op(c).outputs[0]), (std::vector<double>{5.75}));
}

// float32 MatMul and Gemm run on kernels/gemm.h for the session's target; a constant B is packed once in
// prepare(). On every target: exact gives the naive reference's bits, and a constant B gives the same bits as
// the same B supplied at run time, in both modes.
TEST(OpsMatMulTest, EveryTargetAndConstantWeights) {
  struct C {
    std::vector<int64_t> a, b, batch;
  };
  const std::vector<C> cases = {
      {{2, 5, 37}, {37, 70}, {2}},     {{3, 4, 9}, {3, 9, 20}, {3}}, {{2, 1, 6, 9}, {3, 9, 33}, {2, 3}},
      {{1, 100, 300}, {300, 20}, {1}}, {{2, 0, 3}, {3, 4}, {2}},     {{4, 3, 0}, {0, 5}, {4}},
  };
  std::mt19937 rng(21);
  for (const auto& c : cases) {
    auto av = random_vec(rng, prod(c.a)), bv = random_vec(rng, prod(c.b));
    const int64_t m = c.a[c.a.size() - 2], k = c.a.back(), n = c.b.back();
    const auto want = naive_matmul(c.a, av, c.b, bv, c.batch, m, k, n);
    for (kern::Isa isa : kern::available_isas())
      for (bool exact : {false, true}) {
        std::vector<uint32_t> first;
        for (bool constant_b : {false, true}) {
          OpCase oc;
          oc.op_type = "MatMul";
          oc.opset = 13;
          oc.inputs = {f32(av, c.a), f32(bv, c.b)};
          oc.constant_inputs = {false, constant_b};
          oc.exact = exact;
          oc.isa = isa;
          const auto got = values<float>(run_op(oc).outputs[0]);
          ASSERT_EQ(got.size(), want.size());
          std::vector<uint32_t> bits;
          for (float g : got) bits.push_back(fbits(g));
          if (exact) {
            for (size_t i = 0; i < got.size(); ++i)
              ASSERT_EQ(bits[i], fbits(want[i])) << kern::isa_name(isa) << " " << i;
          }
          if (!constant_b) {
            first = bits;
          } else {
            ASSERT_EQ(bits, first) << kern::isa_name(isa) << " exact=" << exact;
          }
        }
      }
  }
  // A constant 1-D B (matrix-vector) and a constant batched B broadcast against a 2-D A.
  const auto av = random_vec(rng, 6 * 9), bv = random_vec(rng, 9), b3 = random_vec(rng, 2 * 9 * 5);
  for (kern::Isa isa : kern::available_isas()) {
    OpCase oc;
    oc.op_type = "MatMul";
    oc.opset = 13;
    oc.inputs = {f32(av, {6, 9}), f32(bv, {9})};
    oc.constant_inputs = {false, true};
    oc.exact = true;
    oc.isa = isa;
    const auto mv = values<float>(run_op(oc).outputs[0]);
    const auto mv_want = naive_matmul({6, 9}, av, {9, 1}, bv, {}, 6, 9, 1);
    for (size_t i = 0; i < mv.size(); ++i) ASSERT_EQ(fbits(mv[i]), fbits(mv_want[i])) << i;
    oc.inputs = {f32(av, {6, 9}), f32(b3, {2, 9, 5})};
    const auto bm = values<float>(run_op(oc).outputs[0]);
    const auto bm_want = naive_matmul({1, 6, 9}, av, {2, 9, 5}, b3, {2}, 6, 9, 5);
    ASSERT_EQ(bm.size(), bm_want.size());
    for (size_t i = 0; i < bm.size(); ++i) ASSERT_EQ(fbits(bm[i]), fbits(bm_want[i])) << i;
  }
}

// Gemm's op(A) and op(B) are strided views of the stored data; a constant B is packed transposed or not.
TEST(OpsGemmTest, EveryTargetAndConstantWeights) {
  std::mt19937 rng(8);
  const int64_t M = 29, K = 70, N = 45;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      const std::vector<int64_t> sa = ta ? std::vector<int64_t>{K, M} : std::vector<int64_t>{M, K};
      const std::vector<int64_t> sb = tb ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N};
      const auto av = random_vec(rng, M * K), bv = random_vec(rng, K * N), cv = random_vec(rng, N);
      std::vector<uint32_t> want;
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          float acc = 0.0f;
          for (int64_t p = 0; p < K; ++p) {
            const float x = ta ? av[static_cast<size_t>(p * M + i)] : av[static_cast<size_t>(i * K + p)];
            const float y = tb ? bv[static_cast<size_t>(j * K + p)] : bv[static_cast<size_t>(p * N + j)];
            const float pr = x * y;
            acc = acc + pr;
          }
          const float scaled = 0.5f * acc, bc = 2.0f * cv[static_cast<size_t>(j)];
          want.push_back(fbits(scaled + bc));
        }
      for (kern::Isa isa : kern::available_isas())
        for (bool exact : {false, true}) {
          std::vector<uint32_t> first;
          for (bool constant_b : {false, true}) {
            OpCase c;
            c.op_type = "Gemm";
            c.opset = 13;
            c.attrs = {attr_i("transA", ta), attr_i("transB", tb), attr_f("alpha", 0.5f), attr_f("beta", 2.0f)};
            c.inputs = {f32(av, sa), f32(bv, sb), f32(cv, {N})};
            c.constant_inputs = {false, constant_b, false};
            c.exact = exact;
            c.isa = isa;
            std::vector<uint32_t> bits;
            for (float g : values<float>(run_op(c).outputs[0])) bits.push_back(fbits(g));
            if (exact) {
              ASSERT_EQ(bits, want) << kern::isa_name(isa) << " ta=" << ta << " tb=" << tb;
            }
            if (!constant_b) {
              first = bits;
            } else {
              ASSERT_EQ(bits, first) << kern::isa_name(isa) << " exact=" << exact;
            }
          }
        }
    }
}

}  // namespace
}  // namespace onemodel::test
