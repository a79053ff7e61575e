// The Reduce* family beyond ReduceMax: the summation order of each layout (hand values where the order shows,
// and bit equality with an independent brute-force reference over random shapes), noop_with_empty_axes per
// operator, empty reductions, the NaN rules, integer wrap-around and truncating integer means.
#include <cmath>
#include <limits>
#include <random>

#include "kernels/exact_math.h"
#include "ops_norms_ref.h"
#include "ops_test_util.h"

namespace onemodel::test {
namespace {

Tensor f32(std::vector<float> v, std::vector<int64_t> s) {
  return Tensor::from_values(std::span<const float>(v), Shape(std::span<const int64_t>(s)));
}

// Attribute form (opset 17, or 12 for ReduceSum) when axes is set or absent.
OpResult reduce(const std::string& op, Tensor x, std::optional<std::vector<int64_t>> axes, int64_t keepdims = 0) {
  OpCase c;
  c.op_type = op;
  c.opset = op == "ReduceSum" ? 12 : 17;
  if (axes) c.attrs.push_back(attr_ints("axes", *axes));
  c.attrs.push_back(attr_i("keepdims", keepdims));
  c.inputs = {std::move(x)};
  return run_op(c);
}

// Input form (opset 18) with an axes tensor and noop_with_empty_axes.
OpResult reduce18(const std::string& op, Tensor x, std::vector<int64_t> axes, int64_t noop) {
  OpCase c;
  c.op_type = op;
  c.opset = 18;
  c.attrs = {attr_i("keepdims", 1), attr_i("noop_with_empty_axes", noop)};
  c.inputs = {std::move(x),
              Tensor::from_values(std::span<const int64_t>(axes), Shape{static_cast<int64_t>(axes.size())})};
  c.constant_inputs = {false, true};
  return run_op(c);
}

TEST(OpsNormsReduceTest, RowLayoutUsesSixteenPartialsColumnLayoutIsSequential) {
  // 2^24 followed by sixteen ones. Sequentially every +1 is lost (2^24 + 1 rounds to even): 16777216.
  // With 16 partials: P0 = 2^24 + 1 = 2^24, P1..P15 = 1; a0 = 2^24, a1..a7 = 2; b = {2^24 + 2, 4, 4, 4};
  // c = {2^24 + 6, 8}; result 16777230 (hand calculation).
  std::vector<float> row(17, 1.0f);
  row[0] = 16777216.0f;
  EXPECT_EQ(values<float>(reduce("ReduceSum", f32(row, {17}), std::nullopt).outputs[0])[0], 16777230.0f);
  // Extent-1 dimensions are dropped, so [1, 17, 1] reduced on axis 1 is still the row layout.
  EXPECT_EQ(values<float>(reduce("ReduceSum", f32(row, {1, 17, 1}), std::vector<int64_t>{1}).outputs[0])[0],
            16777230.0f);
  // Column layout: the same values down axis 0 of [17, 2] (the last run is kept).
  std::vector<float> col;
  for (float v : row) col.insert(col.end(), {v, v});
  auto c = values<float>(reduce("ReduceSum", f32(col, {17, 2}), std::vector<int64_t>{0}).outputs[0]);
  EXPECT_EQ(c, (std::vector<float>{16777216.0f, 16777216.0f}));
  // Mean divides the same sums by the count as float32.
  EXPECT_EQ(values<float>(reduce("ReduceMean", f32(row, {17}), std::nullopt).outputs[0])[0], 16777230.0f / 17.0f);
  EXPECT_EQ(values<float>(reduce("ReduceMean", f32(col, {17, 2}), std::vector<int64_t>{0}).outputs[0])[0],
            16777216.0f / 17.0f);
}

// Independent reference: for every output, the brute-force list of its elements in row-major order of the
// reduced indices; the layout from the last dimension of extent > 1; then the stated summation order.
struct RefReduce {
  std::vector<std::vector<float>> seqs;
  bool row_layout = false;
};
RefReduce ref_sequences(const std::vector<float>& x, const std::vector<int64_t>& s, const std::vector<bool>& red) {
  RefReduce r;
  const size_t rank = s.size();
  for (size_t d = rank; d-- > 0;)
    if (s[d] != 1) {
      r.row_layout = red[d];
      break;
    }
  int64_t outs = 1;
  for (size_t d = 0; d < rank; ++d)
    if (!red[d]) outs *= s[d];
  r.seqs.resize(static_cast<size_t>(outs));
  for (size_t f = 0; f < x.size(); ++f) {  // row-major over the input: each output's elements in order
    int64_t rem = static_cast<int64_t>(f), o = 0, mul = 1;
    for (size_t d = rank; d-- > 0;) {
      const int64_t i = rem % s[d];
      rem /= s[d];
      if (!red[d]) {
        o += i * mul;
        mul *= s[d];
      }
    }
    r.seqs[static_cast<size_t>(o)].push_back(x[f]);
  }
  return r;
}
float ref_sum(const std::vector<float>& t, bool row_layout) {
  if (!row_layout) {
    float acc = 0.0f;
    for (float v : t) acc = acc + v;
    return acc;
  }
  return ref_sum16(t);
}

TEST(OpsNormsReduceTest, RandomShapesMatchTheReferenceBitForBit) {
  std::mt19937 rng(21);
  std::uniform_real_distribution<float> v(-1.0f, 1.0f);
  for (int trial = 0; trial < 80; ++trial) {
    const int rank = 1 + trial % 4;
    std::vector<int64_t> s;
    for (int d = 0; d < rank; ++d) s.push_back(1 + static_cast<int64_t>(rng() % 21));
    int64_t n = 1;
    for (auto d : s) n *= d;
    std::vector<float> x(static_cast<size_t>(n));
    for (auto& e : x) e = v(rng) * std::ldexp(1.0f, static_cast<int>(rng() % 30) - 10);  // mixed magnitudes
    std::vector<int64_t> axes;
    std::vector<bool> red(static_cast<size_t>(rank));
    for (int d = 0; d < rank; ++d)
      if (rng() % 2) {
        axes.push_back(d);
        red[static_cast<size_t>(d)] = true;
      }
    if (axes.empty()) red.assign(static_cast<size_t>(rank), true);
    const RefReduce ref = ref_sequences(x, s, red);
    const Tensor tx = f32(x, s);
    const auto ax = axes.empty() ? std::nullopt : std::optional(axes);
    auto sum = values<float>(reduce("ReduceSum", tx, ax).outputs[0]);
    auto mean = values<float>(reduce("ReduceMean", tx, ax).outputs[0]);
    auto l1 = values<float>(reduce("ReduceL1", tx, ax).outputs[0]);
    auto l2 = values<float>(reduce("ReduceL2", tx, ax).outputs[0]);
    auto ss = values<float>(reduce("ReduceSumSquare", tx, ax).outputs[0]);
    auto prod = values<float>(reduce("ReduceProd", tx, ax).outputs[0]);
    auto mn = values<float>(reduce("ReduceMin", tx, ax).outputs[0]);
    ASSERT_EQ(sum.size(), ref.seqs.size());
    for (size_t o = 0; o < ref.seqs.size(); ++o) {
      const auto& q = ref.seqs[o];
      std::vector<float> absq, sq;
      float p = 1.0f, m = q[0];
      for (float e : q) {
        absq.push_back(std::fabs(e));
        sq.push_back(e * e);
        p = p * e;
        if (e < m) m = e;
      }
      EXPECT_EQ(fbits(sum[o]), fbits(ref_sum(q, ref.row_layout))) << trial << " " << o;
      EXPECT_EQ(fbits(mean[o]), fbits(ref_sum(q, ref.row_layout) / static_cast<float>(q.size()))) << trial;
      EXPECT_EQ(fbits(l1[o]), fbits(ref_sum(absq, ref.row_layout))) << trial;
      EXPECT_EQ(fbits(ss[o]), fbits(ref_sum(sq, ref.row_layout))) << trial;
      EXPECT_EQ(fbits(l2[o]), fbits(std::sqrt(ref_sum(sq, ref.row_layout)))) << trial;
      EXPECT_EQ(fbits(prod[o]), fbits(p)) << trial;
      EXPECT_EQ(mn[o], m) << trial;
    }
  }
}

TEST(OpsNormsReduceTest, LogSumAndLogSumExp) {
  // numpy: np.log(np.sum([[1,2],[3,4]], axis=1)) = log([3, 7]); the exact log is within 2.1 ulp of std::log.
  Tensor x = f32({1, 2, 3, 4}, {2, 2});
  auto ls = values<float>(reduce("ReduceLogSum", x, std::vector<int64_t>{1}).outputs[0]);
  EXPECT_EQ(ls[0], kern::exact_log(3.0f));
  EXPECT_EQ(ls[1], kern::exact_log(7.0f));
  EXPECT_NEAR(ls[1], std::log(7.0f), 1e-6);
  // LogSumExp: m + log(exp(x0 - m) + exp(x1 - m)), sequential, with the library's exp and log.
  auto lse = values<float>(reduce("ReduceLogSumExp", x, std::vector<int64_t>{1}).outputs[0]);
  EXPECT_EQ(lse[0], 2.0f + kern::exact_log((0.0f + kern::exact_exp(-1.0f)) + kern::exact_exp(0.0f)));
  EXPECT_NEAR(lse[1], std::log(std::exp(3.0) + std::exp(4.0)), 1e-6);
  // Large values do not overflow: log(e^1000 + e^1000) = 1000 + log 2.
  auto big = values<float>(reduce("ReduceLogSumExp", f32({1000, 1000}, {2}), std::nullopt).outputs[0]);
  EXPECT_NEAR(big[0], 1000.0f + std::log(2.0f), 1e-3);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  // NaN anywhere gives NaN; an infinite maximum is returned as is.
  auto sp = values<float>(
      reduce("ReduceLogSumExp", f32({1, nan, inf, 1, -inf, -inf}, {3, 2}), std::vector<int64_t>{1}).outputs[0]);
  EXPECT_EQ(fbits(sp[0]), 0x7FC00000u);
  EXPECT_EQ(sp[1], inf);
  EXPECT_EQ(sp[2], -inf);
  // LogSum of a negative sum is NaN (canonical); of zero, -inf.
  auto ln = values<float>(reduce("ReduceLogSum", f32({-1, -2, 0, 0}, {2, 2}), std::vector<int64_t>{1}).outputs[0]);
  EXPECT_EQ(fbits(ln[0]), 0x7FC00000u);
  EXPECT_EQ(ln[1], -inf);
}

// float64 ReduceLogSum / ReduceLogSumExp run in fast mode on the platform's double log and exp (values from
// numpy 1.24 in float64: np.log(np.sum([[1,2],[3,4]], 1)) = [1.0986122886681096, 1.9459101490553132] and
// np.log(np.sum(np.exp([[1,2],[3,4]]), 1)) = [2.3132616875182226, 4.313261687518223]); exact mode refuses them
// at plan time with ExactModeUnavailable naming the operator.
TEST(OpsNormsReduceTest, LogReductionsOnFloat64AreFastOnly) {
  const std::vector<double> v = {1, 2, 3, 4};
  Tensor x = Tensor::from_values(std::span<const double>(v), Shape{2, 2});
  auto ls = values<double>(reduce("ReduceLogSum", x, std::vector<int64_t>{1}).outputs[0]);
  EXPECT_NEAR(ls[0], 1.0986122886681096, 1e-15);
  EXPECT_NEAR(ls[1], 1.9459101490553132, 1e-15);
  auto lse = values<double>(reduce("ReduceLogSumExp", x, std::vector<int64_t>{1}).outputs[0]);
  EXPECT_NEAR(lse[0], 2.3132616875182226, 1e-14);
  EXPECT_NEAR(lse[1], 4.313261687518223, 1e-14);
  for (const char* op : {"ReduceLogSum", "ReduceLogSumExp"}) {
    OpCase c;
    c.op_type = op;
    c.opset = 17;
    c.attrs = {attr_ints("axes", {1})};
    c.inputs = {x};
    c.exact = true;
    try {
      run_op(c);
      ADD_FAILURE() << op << ": exact mode accepted float64";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::ExactModeUnavailable) << e.what();
      EXPECT_EQ(e.operators(), (std::vector<std::string>{op}));
    }
  }
}

TEST(OpsNormsReduceTest, NoopWithEmptyAxesAppliesTheOperationPerElement) {
  Tensor x = f32({-2, 3, -0.5f, 4}, {2, 2});
  EXPECT_EQ(values<float>(reduce18("ReduceSum", x, {}, 1).outputs[0]), (std::vector<float>{-2, 3, -0.5f, 4}));
  EXPECT_EQ(values<float>(reduce18("ReduceSumSquare", x, {}, 1).outputs[0]), (std::vector<float>{4, 9, 0.25f, 16}));
  EXPECT_EQ(values<float>(reduce18("ReduceL1", x, {}, 1).outputs[0]), (std::vector<float>{2, 3, 0.5f, 4}));
  EXPECT_EQ(values<float>(reduce18("ReduceL2", x, {}, 1).outputs[0]), (std::vector<float>{2, 3, 0.5f, 4}));
  auto lg = values<float>(reduce18("ReduceLogSum", f32({1, 4}, {2}), {}, 1).outputs[0]);
  EXPECT_EQ(lg, (std::vector<float>{0.0f, kern::exact_log(4.0f)}));
  auto r = reduce18("ReduceProd", x, {}, 1);
  EXPECT_EQ(r.outputs[0].shape(), (Shape{2, 2}));
  // Without noop an empty axes tensor reduces everything.
  EXPECT_EQ(values<float>(reduce18("ReduceSum", x, {}, 0).outputs[0]), (std::vector<float>{4.5f}));
}

TEST(OpsNormsReduceTest, EmptyReductionsGiveIdentities) {
  Tensor e = f32({}, {0, 3});
  const float inf = std::numeric_limits<float>::infinity();
  auto one = [&](const std::string& op) { return values<float>(reduce(op, e, std::vector<int64_t>{0}).outputs[0]); };
  EXPECT_EQ(one("ReduceSum"), (std::vector<float>(3, 0.0f)));
  EXPECT_EQ(one("ReduceMean"), (std::vector<float>(3, 0.0f)));
  EXPECT_EQ(one("ReduceProd"), (std::vector<float>(3, 1.0f)));
  EXPECT_EQ(one("ReduceL1"), (std::vector<float>(3, 0.0f)));
  EXPECT_EQ(one("ReduceL2"), (std::vector<float>(3, 0.0f)));
  EXPECT_EQ(one("ReduceSumSquare"), (std::vector<float>(3, 0.0f)));
  EXPECT_EQ(one("ReduceMin"), (std::vector<float>(3, inf)));
  EXPECT_EQ(one("ReduceMax"), (std::vector<float>(3, -inf)));
  EXPECT_EQ(one("ReduceLogSum"), (std::vector<float>(3, -inf)));
  EXPECT_EQ(one("ReduceLogSumExp"), (std::vector<float>(3, -inf)));
  auto imin = reduce("ReduceMin", Tensor::zeros(DType::U8, Shape{2, 0}), std::vector<int64_t>{1});
  EXPECT_EQ(values<uint8_t>(imin.outputs[0]), (std::vector<uint8_t>{255, 255}));
  // Reducing a kept zero-size axis yields an empty output.
  EXPECT_EQ(reduce("ReduceSum", e, std::vector<int64_t>{1}).outputs[0].shape(), Shape{0});
}

TEST(OpsNormsReduceTest, MinNanRule) {
  const float nan = from_fbits(0x7FA00001u);
  auto y = values<float>(reduce("ReduceMin", f32({nan, -1, 2, nan, -3}, {5}), std::nullopt).outputs[0]);
  EXPECT_EQ(fbits(y[0]), 0x7FC00000u);  // first element NaN: NaN, canonical
  auto z = values<float>(reduce("ReduceMin", f32({2, nan, -3}, {3}), std::nullopt).outputs[0]);
  EXPECT_EQ(z[0], -3.0f);
  // Sums propagate NaN as canonical NaN.
  auto s = values<float>(reduce("ReduceSum", f32({1, nan}, {2}), std::nullopt).outputs[0]);
  EXPECT_EQ(fbits(s[0]), 0x7FC00000u);
}

TEST(OpsNormsReduceTest, IntegersWrapAndMeansTruncate) {
  auto s8 = reduce("ReduceSum", Tensor::from_values<int8_t>({100, 100, -1}, Shape{3}), std::nullopt);
  EXPECT_EQ(values<int8_t>(s8.outputs[0]), (std::vector<int8_t>{-57}));  // 199 mod 256 = -57
  auto p32 = reduce("ReduceProd", Tensor::from_values<int32_t>({65536, 65536, 3}, Shape{3}), std::nullopt);
  EXPECT_EQ(values<int32_t>(p32.outputs[0]), (std::vector<int32_t>{0}));  // 2^32 * 3 wraps to 0
  auto l1 =
      reduce("ReduceL1", Tensor::from_values<int32_t>({std::numeric_limits<int32_t>::min()}, Shape{1}), std::nullopt);
  EXPECT_EQ(values<int32_t>(l1.outputs[0]), (std::vector<int32_t>{std::numeric_limits<int32_t>::min()}));
  auto sq = reduce("ReduceSumSquare", Tensor::from_values<uint8_t>({16, 1}, Shape{2}), std::nullopt);
  EXPECT_EQ(values<uint8_t>(sq.outputs[0]), (std::vector<uint8_t>{1}));  // 256 + 1 wraps to 1
  auto mean = reduce("ReduceMean", Tensor::from_values<int64_t>({-7, 0, 5, 4}, Shape{2, 2}), std::vector<int64_t>{1});
  EXPECT_EQ(values<int64_t>(mean.outputs[0]), (std::vector<int64_t>{-3, 4}));  // -7/2 -> -3, 9/2 -> 4
  auto um = reduce("ReduceMean", Tensor::from_values<uint64_t>({7, 2}, Shape{2}), std::nullopt);
  EXPECT_EQ(values<uint64_t>(um.outputs[0]), (std::vector<uint64_t>{4}));
  auto d = reduce("ReduceSum", Tensor::from_values<double>({0.1, 0.2, 0.3}, Shape{3}), std::nullopt);
  EXPECT_EQ(values<double>(d.outputs[0])[0], (0.1 + 0.2) + 0.3);
}

TEST(OpsNormsReduceTest, TypesNotServedAreUnsupported) {
  expect_error([&] { reduce("ReduceL2", Tensor::zeros(DType::I32, Shape{2}), std::nullopt); }, ErrorKind::Unsupported,
               "int32");
  expect_error([&] { reduce("ReduceLogSumExp", Tensor::zeros(DType::F16, Shape{2}), std::nullopt); },
               ErrorKind::Unsupported, "float16");
  expect_error([&] { reduce("ReduceSum", Tensor::zeros(DType::I16, Shape{2}), std::nullopt); }, ErrorKind::Unsupported,
               "int16");
  expect_error([&] { reduce("ReduceMean", Tensor::zeros(DType::F16, Shape{2}), std::nullopt); }, ErrorKind::Unsupported,
               "float16");
}

}  // namespace
}  // namespace onemodel::test
