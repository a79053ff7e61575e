// Weights the packing keeps (docs/graph-runtime.md section 4): a session packs each float32 weight of 1024 values
// or more that only one MatMul or Gemm reads, once, and frees it. What these tests hold the runtime to: the packed
// weights are the ones reported ("pack-weights"), and the results are those of the same graph reading the weights
// as graph inputs (never packed: the plain product), bit for bit in exact mode (exact-mode.md: packed or not, the
// same bits), and within float32 rounding of products computed here in double in both modes; at a second input
// shape (a new plan, which has only the packing to work from), in a step shaped at run time (after a Compress),
// and where every input of the product is a constant (which a plan would otherwise fold, reading the freed weight).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "onemodel/builder.h"
#include "onemodel/session.h"
#include "onnx_test_util.h"
#include "test_util.h"

namespace onemodel {
namespace {

std::vector<float> random_values(size_t n, uint32_t seed) { return test::uniform_floats(n, seed, 1.0f); }

Tensor tensor(const std::vector<float>& v, Shape s) { return Tensor::from_values(std::span<const float>(v), s); }

constexpr int64_t kIn = 64, kMid = 48, kOut = 40, kSide = 24;

struct Weights {
  std::vector<float> w1 = random_values(kIn * kMid, 1);       // MatMul [64, 48]: packed
  std::vector<float> w2 = random_values(kOut * kMid, 2);      // Gemm transB [40, 48]: packed
  std::vector<float> small = random_values(kOut * 8, 3);      // MatMul [40, 8], 320 values: kept
  std::vector<float> shared = random_values(kOut * kOut, 4);  // read by two MatMuls: kept
  std::vector<float> a4 = random_values(2 * kIn, 6);          // constant A of a product with w4
  std::vector<float> w4 = random_values(kIn * kSide, 7);      // MatMul of two constants [64, 24]: packed
};

// x [n, 64]: h = Gemm(x @ w1, w2, transB) [n, 40]; y = (h @ shared) @ shared @ small [n, 8]; c = a4 @ w4 [2, 24].
// `as_inputs`: w1, w2 and w4 are graph inputs fed by the caller instead of constants.
Outputs outputs(GraphBuilder& g, const Weights& w, bool as_inputs) {
  Var x = g.input("x", DType::F32, {"n", kIn});
  auto weight = [&](const char* name, const std::vector<float>& v, Shape s) {
    return as_inputs ? g.input(name, DType::F32, std::vector<DimArg>(s.dims().begin(), s.dims().end()))
                     : g.constant(tensor(v, s));
  };
  Var h = x.matmul(weight("w1", w.w1, {kIn, kMid}));
  h = g.op("Gemm", {h, weight("w2", w.w2, {kOut, kMid})}, {Attr("transB", int64_t{1})})[0];
  Var shared = g.constant(tensor(w.shared, {kOut, kOut}));
  Var y = h.matmul(shared).matmul(shared).matmul(g.constant(tensor(w.small, {kOut, 8})));
  Var c = g.constant(tensor(w.a4, {2, kIn})).matmul(weight("w4", w.w4, {kIn, kSide}));
  return {{"y", y}, {"c", c}};
}

BuiltModel model(const Weights& w, bool as_inputs, const SessionOptions& o) {
  GraphBuilder g;
  return g.compile(outputs(g, w, as_inputs), o);
}

int packed_count(const Session& s) {
  for (const auto& [name, n] : s.graph_passes())
    if (name == "pack-weights") return n;
  return 0;
}

// C = A [m, k] @ B [k, n] in double, op(B) = B^T [n, k] when `tb`.
std::vector<double> product(const std::vector<double>& a, const std::vector<float>& b, int64_t m, int64_t k, int64_t n,
                            bool tb = false) {
  std::vector<double> c(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p)
        s += a[static_cast<size_t>(i * k + p)] * b[static_cast<size_t>(tb ? j * k + p : p * n + j)];
      c[static_cast<size_t>(i * n + j)] = s;
    }
  return c;
}

void expect_close(const Tensor& got, const std::vector<double>& want, const std::string& where) {
  ASSERT_EQ(static_cast<size_t>(got.numel()), want.size()) << where;
  const float* g = static_cast<const float*>(got.raw());
  double scale = 1.0;  // the chained products cancel in places: bound the error by the output's largest value
  for (double v : want) scale = std::max(scale, std::fabs(v));
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(g[i], want[i], 1e-5 * scale) << where << " at " << i;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

std::vector<double> wide(const std::vector<float>& v) { return {v.begin(), v.end()}; }

// Calls f(options, label) for exact and fast mode at 1 and 2 threads.
template <class F>
void each_setting(F&& f) {
  for (Mode mode : {Mode::Exact, Mode::Fast})
    for (int threads : {1, 2}) {
      SessionOptions o;
      o.mode = mode;
      o.intra_op_threads = threads;
      f(o, std::string(mode == Mode::Exact ? "exact " : "fast ") + std::to_string(threads));
    }
}

TEST(PackedWeights, FreedWeightsGiveTheUnpackedResults) {
  const Weights w;
  each_setting([&](const SessionOptions& o, const std::string& where) {
    const Mode mode = o.mode;
    const BuiltModel packed = model(w, false, o);
    const BuiltModel plain = model(w, true, o);
    EXPECT_EQ(packed_count(packed.session()), 3) << where;  // w1, w2, w4; not small or shared
    EXPECT_EQ(packed_count(plain.session()), 0) << where;
    for (int64_t n : {3, 5, 3}) {  // 5: a new plan, made from the packings alone
      const std::vector<float> xv = random_values(static_cast<size_t>(n * kIn), 10 + static_cast<uint32_t>(n));
      const Tensor x = tensor(xv, {n, kIn});
      const std::vector<Tensor> got = packed.run({{"x", x}});
      const std::string at = where + " n=" + std::to_string(n);
      ASSERT_EQ(got.size(), 2u) << at;
      const std::vector<double> h = product(product(wide(xv), w.w1, n, kIn, kMid), w.w2, n, kMid, kOut, true);
      const std::vector<double> hs = product(product(h, w.shared, n, kOut, kOut), w.shared, n, kOut, kOut);
      expect_close(got[0], product(hs, w.small, n, kOut, 8), at + " y");
      expect_close(got[1], product(wide(w.a4), w.w4, 2, kIn, kSide), at + " c");
      if (mode != Mode::Exact) continue;  // fast mode: the packed path may block k unlike the plain one
      const std::vector<Tensor> want = plain.run({{"x", x},
                                                  {"w1", tensor(w.w1, {kIn, kMid})},
                                                  {"w2", tensor(w.w2, {kOut, kMid})},
                                                  {"w4", tensor(w.w4, {kIn, kSide})}});
      for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(same_bits(got[i], want[i])) << at << " output " << i;
    }
  });
}

// OneModel-format bytes (docs/format.md section 5): read in place for the call, each tensor copied into a buffer of
// its own, so the session packs and frees the same weights as from ONNX bytes, and the caller may overwrite its bytes
// once the session exists (the kept weights, `small` and `shared`, are read at every run).
TEST(PackedWeights, OneModelBytesAreCopiedPerTensor) {
  const Weights w;
  GraphBuilder g;
  const Outputs out = outputs(g, w, false);
  const std::vector<std::byte> file = g.to_onemodel(out);
  each_setting([&](const SessionOptions& o, const std::string& where) {
    std::vector<std::byte> bytes = file;
    const Session loaded = Session::load_bytes(bytes, o);
    std::fill(bytes.begin(), bytes.end(), std::byte{0xff});  // NaN wherever a view of these bytes was read
    EXPECT_EQ(packed_count(loaded), 3) << where;
    const BuiltModel built = model(w, false, o);
    for (int64_t n : {3, 5}) {
      const Tensor x = tensor(random_values(static_cast<size_t>(n * kIn), 40 + static_cast<uint32_t>(n)), {n, kIn});
      const std::vector<Tensor> got = loaded.run(std::vector<NamedTensor>{{"x", x}});
      const std::vector<Tensor> want = built.run({{"x", x}});
      ASSERT_EQ(got.size(), want.size()) << where;
      for (size_t i = 0; i < got.size(); ++i)
        EXPECT_TRUE(same_bits(got[i], want[i])) << where << " n=" << n << " output " << i;
    }
  });
}

// Convolutions: the session keeps each matrix-product convolution's weights as panels and makes every other form
// from them (docs/graph-runtime.md section 4). x [2, 16, s, s] -> Conv 3x3 pad 1 16 -> 16 (Winograd in fast mode at
// 12 x 12; image 1 holds an infinity, which takes the panels) -> Relu -> Conv 1x1 16 -> 96 (the transposed form at
// 2 x 2) -> depthwise Conv 5x5 pad 2 (kept: 2400 values, read as they are) -> Conv 3x3 pad 1 in 2 groups 96 -> 32.
// The same graph with the weights as graph inputs packs them at every call, in the same forms: the same bits in
// both modes.
TEST(PackedWeights, ConvolutionsWorkFromTheirPanels) {
  const std::vector<float> w1 = random_values(16 * 16 * 9, 31), w2 = random_values(96 * 16, 32),
                           wd = random_values(96 * 25, 33), w3 = random_values(32 * 48 * 9, 34);
  auto build = [&](bool as_inputs, const SessionOptions& o) {
    GraphBuilder g;
    Var x = g.input("x", DType::F32, {2, 16, "s", "s"});
    auto weight = [&](const char* name, const std::vector<float>& v, Shape s) {
      return as_inputs ? g.input(name, DType::F32, std::vector<DimArg>(s.dims().begin(), s.dims().end()))
                       : g.constant(tensor(v, s));
    };
    const Attr pad1("pads", std::vector<int64_t>{1, 1, 1, 1});
    Var c = g.op("Conv", {x, weight("w1", w1, {16, 16, 3, 3})}, {pad1})[0].relu();
    c = g.op("Conv", {c, weight("w2", w2, {96, 16, 1, 1})})[0];
    c = g.op("Conv", {c, weight("wd", wd, {96, 1, 5, 5})},
             {Attr("pads", std::vector<int64_t>{2, 2, 2, 2}), Attr("group", int64_t{96})})[0];
    c = g.op("Conv", {c, weight("w3", w3, {32, 48, 3, 3})}, {pad1, Attr("group", int64_t{2})})[0];
    return g.compile({{"y", c}}, o);
  };
  each_setting([&](const SessionOptions& o, const std::string& where) {
    const BuiltModel packed = build(false, o);
    const BuiltModel plain = build(true, o);
    EXPECT_EQ(packed_count(packed.session()), 3) << where;  // w1, w2, w3; not the depthwise wd
    for (int64_t side : {12, 2, 12}) {
      std::vector<float> xv =
          random_values(static_cast<size_t>(2 * 16 * side * side), 40 + static_cast<uint32_t>(side));
      xv[static_cast<size_t>(16 * side * side + 3 * side * side + side + 1)] = std::numeric_limits<float>::infinity();
      const Tensor x = tensor(xv, {2, 16, side, side});
      const Tensor got = packed.run({{"x", x}})[0];
      const Tensor want = plain.run({{"x", x},
                                     {"w1", tensor(w1, {16, 16, 3, 3})},
                                     {"w2", tensor(w2, {96, 16, 1, 1})},
                                     {"wd", tensor(wd, {96, 1, 5, 5})},
                                     {"w3", tensor(w3, {32, 48, 3, 3})}})[0];
      const std::string at = where + " side " + std::to_string(side);
      EXPECT_TRUE(same_bits(got, want)) << at;
      const float* y = static_cast<const float*>(got.raw());
      EXPECT_TRUE(std::isfinite(y[0])) << at;  // image 0 is finite throughout
    }
  });
}

// A product after Compress is shaped at run time (a dynamic step, whose prepare() runs in the run): x [4, 64] ->
// Compress(x, keep, axis 0) -> MatMul w3 [64, 24]. Built as ONNX bytes (the builder does not express
// data-dependent shapes); `as_input`: w3 is a graph input instead of an initializer.
std::string compress_model(const std::vector<float>& w3, bool as_input) {
  using test::Msg;
  Msg g;
  g.msg(1, test::node("Compress", {"x", "keep"}, {"p"}).msg(5, Msg().bytes(1, "axis").varint(3, 0).varint(20, 2)));
  g.msg(1, test::node("MatMul", {"p", "w3"}, {"z"}));
  g.bytes(2, "compress_matmul");
  if (!as_input) g.msg(5, test::float_tensor_raw("w3", {kIn, kSide}, w3));
  g.msg(11, test::value_info("x", 1, {4, kIn}));
  g.msg(11, test::value_info("keep", 9, {4}));
  if (as_input) g.msg(11, test::value_info("w3", 1, {kIn, kSide}));
  g.msg(12, Msg().bytes(1, "z").msg(2, Msg().msg(1, Msg().varint(1, 1))));  // float, shape unknown
  return test::model(g).b;
}

TEST(PackedWeights, DynamicStepUsesThePacking) {
  const std::vector<float> w3 = random_values(kIn * kSide, 5);
  const std::vector<float> xv = random_values(4 * kIn, 20);
  const Tensor x = tensor(xv, {4, kIn});
  const uint8_t keep_v[4] = {1, 0, 1, 1};
  const Tensor keep = Tensor::copy_of(DType::Bool, Shape{4}, keep_v, 4);
  std::vector<double> picked;
  for (int i : {0, 2, 3}) picked.insert(picked.end(), xv.begin() + i * kIn, xv.begin() + (i + 1) * kIn);
  const std::vector<double> want = product(picked, w3, 3, kIn, kSide);
  const std::string with = compress_model(w3, false), without = compress_model(w3, true);
  auto bytes = [](const std::string& s) {
    return std::span<const std::byte>(reinterpret_cast<const std::byte*>(s.data()), s.size());
  };
  for (Mode mode : {Mode::Exact, Mode::Fast}) {
    SessionOptions o;
    o.mode = mode;
    const Session packed = Session::load_bytes(bytes(with), o);
    const Session plain = Session::load_bytes(bytes(without), o);
    const std::string where = mode == Mode::Exact ? "exact" : "fast";
    EXPECT_EQ(packed_count(packed), 1) << where;
    for (int repeat = 0; repeat < 2; ++repeat) {
      const Tensor got = packed.run(std::vector<NamedTensor>{{"x", x}, {"keep", keep}})[0];
      expect_close(got, want, where);
      if (mode != Mode::Exact) continue;
      const Tensor w3t = tensor(w3, {kIn, kSide});
      EXPECT_TRUE(same_bits(got, plain.run(std::vector<NamedTensor>{{"x", x}, {"keep", keep}, {"w3", w3t}})[0]));
    }
  }
}

}  // namespace
}  // namespace onemodel
