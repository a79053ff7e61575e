// Compact weights (SessionOptions::weight_storage, docs/fp16.md section 6): a session keeping the large weights of
// MatMul, Gemm and Conv as binary16 or bfloat16 gives, bit for bit, the outputs of a float32 model whose weights
// were rounded beforehand. The rounding of the reference is done here (the compiler's _Float16 where it has one,
// else plain integer code), never by the engine; weights the rule leaves alone (fewer than 1024 values, read twice,
// beyond binary16's range) keep their float32 values in the reference too.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "onemodel/builder.h"
#include "onemodel/model_format.h"
#include "onemodel/session.h"
#include "test_util.h"

namespace onemodel {
namespace {

// Round to nearest, ties to even, on the float32 bit pattern (finite inputs in range).
float round_bf16(float x) {
  uint32_t b = std::bit_cast<uint32_t>(x);
  b += 0x7FFFu + ((b >> 16) & 1u);
  return std::bit_cast<float>(b & 0xFFFF0000u);
}

float round_f16(float x) {
#if defined(__x86_64__) && defined(__FLT16_MAX__)
  return static_cast<float>(static_cast<_Float16>(x));
#elif defined(__aarch64__)
  return static_cast<float>(static_cast<__fp16>(x));  // GCC 12 C++ has no _Float16 on Arm64
#else
  // Binary16 keeps 11 significant bits down to 2^-14, then steps of 2^-24: adding and subtracting a power of two
  // that leaves exactly those bits rounds to nearest even in float32 arithmetic.
  const float a = std::fabs(x);
  int e = 0;
  std::frexp(a, &e);  // a = m * 2^e, 0.5 <= m < 1
  const float step = std::ldexp(1.0f, std::max(e - 11, -24));
  const float big = step * 8388608.0f;  // 2^23 steps: the sum's last bit is one step
  const float r = (a + big) - big;
  return std::copysign(r, x);
#endif
}

std::vector<float> random_values(size_t n, uint32_t seed, float scale) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> u(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = u(gen);
  return v;
}

Tensor tensor(const std::vector<float>& v, Shape s) { return Tensor::from_values(std::span<const float>(v), s); }

struct Weights {
  std::vector<float> conv, conv_bias, small, dense, dense_bias, gemm, shared, big;
};

Weights make_weights() {
  Weights w;
  w.conv = random_values(16 * 8 * 3 * 3, 1, 0.2f);  // 1152 values: compacted
  w.conv_bias = random_values(16, 2, 0.1f);
  w.small = random_values(16 * 16, 3, 0.2f);     // 256 values: too small
  w.dense = random_values(1600 * 40, 4, 0.03f);  // MatMul input 1
  w.dense_bias = random_values(40, 5, 0.1f);
  w.gemm = random_values(40 * 32, 6, 0.2f);     // Gemm input 1
  w.shared = random_values(32 * 32, 7, 0.15f);  // read by two MatMuls
  w.big = random_values(32 * 32, 8, 0.15f);
  w.big[17] = 70000.0f;  // beyond binary16: left in float32 there, rounded in bfloat16
  return w;
}

Weights rounded(Weights w, WeightStorage s) {
  auto r = [s](std::vector<float>& v) {
    for (float& x : v) x = s == WeightStorage::Float16 ? round_f16(x) : round_bf16(x);
  };
  r(w.conv);
  r(w.dense);
  r(w.gemm);
  if (s == WeightStorage::BFloat16) r(w.big);
  return w;
}

// x [2, 8, 10, 10] -> Conv 3x3 pad 1 + bias -> Relu -> Conv 1x1 (small weight) -> Flatten -> MatMul + bias
// -> Gemm -> MatMul (shared) -> MatMul (shared) -> MatMul (big): [2, 32].
struct Graph {
  GraphBuilder g;
  Var y;
};

Graph graph(const Weights& w) {
  Graph r;
  GraphBuilder& g = r.g;
  Var x = g.input("x", DType::F32, {2, 8, 10, 10});
  Var c = g.op("Conv", {x, g.constant(tensor(w.conv, {16, 8, 3, 3})), g.constant(tensor(w.conv_bias, {16}))},
               {Attr("pads", std::vector<int64_t>{1, 1, 1, 1})})[0]
              .relu();
  c = g.op("Conv", {c, g.constant(tensor(w.small, {16, 16, 1, 1}))})[0];
  Var f = g.op("Flatten", {c}, {Attr("axis", int64_t{1})})[0];
  Var d = f.matmul(g.constant(tensor(w.dense, {1600, 40}))).add(g.constant(tensor(w.dense_bias, {40})));
  Var e = g.op("Gemm", {d, g.constant(tensor(w.gemm, {40, 32}))})[0];
  Var shared = g.constant(tensor(w.shared, {32, 32}));
  r.y = e.matmul(shared).matmul(shared).matmul(g.constant(tensor(w.big, {32, 32})));
  return r;
}

BuiltModel build(const Weights& w, const SessionOptions& o) {
  const Graph r = graph(w);
  return r.g.compile({{"y", r.y}}, o);
}

std::string onnx_bytes(const Weights& w) {
  const Graph r = graph(w);
  return r.g.to_onnx({{"y", r.y}});
}

int compacted(const Session& s) {
  for (const auto& [name, n] : s.graph_passes())
    if (name == "compact-weights") return n;
  return -1;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

TEST(CompactWeights, BitsOfTheModelWithRoundedWeights) {
  const Weights w = make_weights();
  const Tensor x = tensor(random_values(2 * 8 * 10 * 10, 9, 1.0f), {2, 8, 10, 10});
  for (WeightStorage s : {WeightStorage::Float16, WeightStorage::BFloat16})
    for (Mode mode : {Mode::Exact, Mode::Fast})
      for (OptimizationLevel level : {OptimizationLevel::All, OptimizationLevel::None})
        for (int threads : {1, 4}) {
          SessionOptions o;
          o.mode = mode;
          o.optimization_level = level;
          o.intra_op_threads = threads;
          const BuiltModel plain = build(w, o);
          const BuiltModel reference = build(rounded(w, s), o);
          o.weight_storage = s;
          const BuiltModel compact = build(w, o);
          const std::string where = std::string(s == WeightStorage::Float16 ? "float16" : "bfloat16") +
                                    (mode == Mode::Exact ? " exact" : " fast") +
                                    (level == OptimizationLevel::All ? " all " : " none ") + std::to_string(threads);
          EXPECT_EQ(compacted(compact.session()), s == WeightStorage::Float16 ? 3 : 4) << where;
          EXPECT_EQ(compacted(plain.session()), -1) << where;  // float32 storage: the step does not run
          const Tensor got = compact.run({{"x", x}})[0];
          EXPECT_TRUE(same_bits(got, reference.run({{"x", x}})[0])) << where;
          EXPECT_FALSE(same_bits(got, plain.run({{"x", x}})[0])) << where;  // the rounding did happen
          // A second run: the packings are widened again (and the depthwise-free graph has no widening step).
          EXPECT_TRUE(same_bits(compact.run({{"x", x}})[0], got)) << where;
        }
}

// The products keep their packing of compact weights in 16 bits (runtime/plan.cc, kernels/gemm.h PackStorage):
// no widening step runs for them, only for a reader that reads weights as they are (a depthwise convolution).
// A 3x3 convolution that fast mode runs by Winograd keeps its transformed weights in float32 and the panels'
// packing in 16 bits for images with an infinity or NaN (image 1 here): the same bits as the float32 model with
// rounded weights on both paths.
TEST(CompactWeights, ProductsPackTheSixteenBitsOnce) {
  // x [2, 32, 12, 12] -> Conv 3x3 32->32 pad 1 (Winograd in fast mode) -> Relu -> Conv 1x1 32->128 ->
  // depthwise Conv 3x3 (128 channels, 1152 values) -> Flatten -> MatMul [18432, 16] -> [2, 16].
  const std::vector<float> w3 = random_values(32 * 32 * 9, 11, 0.1f), w1 = random_values(128 * 32, 12, 0.2f),
                           wd = random_values(128 * 9, 13, 0.3f), wm = random_values(18432 * 16, 14, 0.01f);
  auto model = [&](WeightStorage rounding, const SessionOptions& o) {
    auto r = [rounding](std::vector<float> v) {
      if (rounding != WeightStorage::Float32)
        for (float& x : v) x = rounding == WeightStorage::Float16 ? round_f16(x) : round_bf16(x);
      return v;
    };
    GraphBuilder g;
    Var x = g.input("x", DType::F32, {2, 32, 12, 12});
    Var c = g.op("Conv", {x, g.constant(tensor(r(w3), {32, 32, 3, 3}))},
                 {Attr("pads", std::vector<int64_t>{1, 1, 1, 1})})[0]
                .relu();
    c = g.op("Conv", {c, g.constant(tensor(r(w1), {128, 32, 1, 1}))})[0];
    c = g.op("Conv", {c, g.constant(tensor(r(wd), {128, 1, 3, 3}))},
             {Attr("pads", std::vector<int64_t>{1, 1, 1, 1}), Attr("group", int64_t{128})})[0];
    Var f = g.op("Flatten", {c}, {Attr("axis", int64_t{1})})[0];
    return g.compile({{"y", f.matmul(g.constant(tensor(r(wm), {18432, 16})))}, {"c", c}}, o);
  };
  std::vector<float> xv = random_values(2 * 32 * 12 * 12, 15, 1.0f);
  xv[32 * 144 + 5 * 144 + 40] = std::numeric_limits<float>::infinity();  // image 1 takes the panels
  const Tensor x = tensor(xv, {2, 32, 12, 12});
  for (WeightStorage s : {WeightStorage::Float16, WeightStorage::BFloat16})
    for (Mode mode : {Mode::Exact, Mode::Fast})
      for (int threads : {1, 2}) {
        SessionOptions o;
        o.mode = mode;
        o.intra_op_threads = threads;
        const BuiltModel reference = model(s, o);
        o.weight_storage = s;
        const BuiltModel compact = model(WeightStorage::Float32, o);
        const std::string where = std::string(s == WeightStorage::Float16 ? "float16" : "bfloat16") +
                                  (mode == Mode::Exact ? " exact " : " fast ") + std::to_string(threads);
        EXPECT_EQ(compacted(compact.session()), 4) << where;
        compact.session().start_profiling();
        const std::vector<Tensor> got = compact.run({{"x", x}});
        const Profile p = compact.session().end_profiling();
        int widenings = 0;
        for (const NodeProfile& n : p.nodes) widenings += n.op_type == "WidenWeight" ? 1 : 0;
        EXPECT_EQ(widenings, 1) << where;  // the depthwise convolution's only
        const std::vector<Tensor> want = reference.run({{"x", x}});
        // The infinity reaches a few outputs of the convolutions only; the product mixes it into all of image 1.
        const float* cv = static_cast<const float*>(want[1].raw());
        EXPECT_TRUE(std::isinf(cv[128 * 144 + 40]) || std::isnan(cv[128 * 144 + 40])) << where;
        EXPECT_TRUE(std::isfinite(cv[128 * 144 + 127 * 144])) << where;
        for (size_t i = 0; i < 2; ++i) EXPECT_TRUE(same_bits(got[i], want[i])) << where << " output " << i;
        EXPECT_TRUE(same_bits(compact.run({{"x", x}})[0], want[0])) << where;
      }
}

// Conversion with float16 / bfloat16 storage (docs/format.md section 5): the file stores the same weights rounded,
// each behind a Cast; loaded with float32 storage (the Casts folded at load: widen-stored-weights) or compact
// storage, it gives the bits of the model with rounded weights.
TEST(CompactWeights, ConvertedFilesStoreTheRoundedWeights) {
  const Weights w = make_weights();
  const Tensor x = tensor(random_values(2 * 8 * 10 * 10, 9, 1.0f), {2, 8, 10, 10});
  const std::string onnx = onnx_bytes(w);
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(onnx.data()), onnx.size());
  for (WeightStorage s : {WeightStorage::Float16, WeightStorage::BFloat16}) {
    ConvertOptions co;
    co.weight_storage = s;
    const std::vector<std::byte> file = model_format::convert_bytes(bytes, co);
    EXPECT_LT(file.size(), model_format::convert_bytes(bytes).size() * 6 / 10);
    const std::string ref_onnx = onnx_bytes(rounded(w, s));
    const std::span<const std::byte> ref(reinterpret_cast<const std::byte*>(ref_onnx.data()), ref_onnx.size());
    for (Mode mode : {Mode::Exact, Mode::Fast})
      for (WeightStorage session : {WeightStorage::Float32, s}) {
        SessionOptions o;
        o.mode = mode;
        const Tensor want = Session::load_bytes(ref, o).run(std::vector<NamedTensor>{{"x", x}})[0];
        o.weight_storage = session;
        const Session loaded = Session::load_bytes(file, o);
        int widened = -1;
        for (const auto& [name, n] : loaded.graph_passes())
          if (name == "widen-stored-weights") widened = n;
        EXPECT_EQ(widened, s == WeightStorage::Float16 ? 3 : 4);
        EXPECT_EQ(compacted(loaded), session == WeightStorage::Float32 ? -1 : widened);
        EXPECT_TRUE(same_bits(loaded.run(std::vector<NamedTensor>{{"x", x}})[0], want))
            << (mode == Mode::Exact ? "exact" : "fast");
      }
  }
}

TEST(CompactWeights, WeightsThatDoNotFitAreLeftInFloat32) {
  Weights w = make_weights();
  for (float& v : w.conv) v = std::nanf("");  // not finite: left as it is
  w.gemm[3] = std::numeric_limits<float>::infinity();
  SessionOptions o;
  o.mode = Mode::Exact;
  o.weight_storage = WeightStorage::BFloat16;
  EXPECT_EQ(compacted(build(w, o).session()), 2);  // dense and big only
  w.dense[5] = 65520.0f;                           // would round to infinity in binary16 (and is beyond 65504 anyway)
  o.weight_storage = WeightStorage::Float16;
  EXPECT_EQ(compacted(build(w, o).session()), 0);
}

TEST(CompactWeights, UnknownStorageIsAnInvalidArgument) {
  SessionOptions o;
  o.weight_storage = static_cast<WeightStorage>(7);
  const Error e = test::expect_error(ErrorKind::InvalidArgument, [&] { build(make_weights(), o); });
  EXPECT_NE(std::string(e.what()).find("weight storage"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace onemodel
