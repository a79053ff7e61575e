// Operators of opsets newer than the ONNX 1.12 test data (docs/ops-newer.md): Mish, Swish, CumProd, BitCast,
// CenterCropPad, Col2Im, RotaryEmbedding and TensorScatter, with expected values worked by hand from the operator
// documents (the same cases tools/newer_ops_reference.py checks its NumPy references on), and hostile attributes,
// shapes and indices, which must give a typed error naming the node.
#include <cmath>
#include <cstring>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "base/fp16.h"
#include "ops_test_util.h"

namespace onemodel::test {
namespace {

constexpr int64_t kBig = int64_t{1} << 40;
constexpr float kInf = std::numeric_limits<float>::infinity();

Tensor f32(std::vector<float> v, Shape s) { return Tensor::from_values<float>(v, s); }
Tensor f32(std::vector<float> v) { return f32(v, Shape{static_cast<int64_t>(v.size())}); }
Tensor i64(std::vector<int64_t> v, Shape s) { return Tensor::from_values<int64_t>(v, s); }
Tensor i64(std::vector<int64_t> v) { return i64(v, Shape{static_cast<int64_t>(v.size())}); }

OpCase op(const std::string& type, int64_t opset, std::vector<Tensor> inputs, std::vector<ir::Attribute> attrs = {}) {
  OpCase c;
  c.op_type = type;
  c.opset = opset;
  c.inputs = std::move(inputs);
  c.attrs = std::move(attrs);
  return c;
}

// Runs in both modes; the outputs must have the same bits (every kernel here is exact), and returns exact's.
Tensor run_both(OpCase c) {
  c.exact = false;
  const Tensor fast = run_op(c).outputs[0];
  c.exact = true;
  Tensor exact = run_op(c).outputs[0];
  EXPECT_EQ(fast.shape(), exact.shape());
  EXPECT_EQ(fast.nbytes(), exact.nbytes());
  if (fast.nbytes() == exact.nbytes() && fast.nbytes() > 0) {
    EXPECT_EQ(std::memcmp(fast.raw(), exact.raw(), fast.nbytes()), 0) << c.op_type << ": fast and exact differ";
  }
  return exact;
}

void expect_near(const Tensor& t, const std::vector<float>& want, float tol = 2e-7f) {
  const std::vector<float> got = values<float>(t);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol * std::max(1.0f, std::fabs(want[i]))) << "element " << i;
}

void expect_refused(const OpCase& c, ErrorKind kind, const std::string& what) {
  SCOPED_TRACE(c.op_type + ": " + what);
  expect_error([&] { run_op(c); }, kind, c.op_type + " node 'n0'");
}

// ---- Mish (18), Swish (24) ----

TEST(OpsNewer, MishHandValues) {
  // Mish(1) = tanh(ln(1 + e)) = tanh(1.3132617) = 0.8650984; Mish(-1) = -tanh(ln(1 + 1/e)) = -tanh(0.3132617).
  expect_near(run_both(op("Mish", 18, {f32({0, 1, -1, 20})})), {0, 0.8650984f, -0.3034014f, 20});
  // The function body Softplus, Tanh, Mul: -inf * tanh(+0) is NaN, stored canonically in exact mode.
  OpCase c = op("Mish", 18, {f32({-kInf, kInf})});
  c.exact = true;
  const std::vector<float> r = values<float>(run_op(c).outputs[0]);
  EXPECT_EQ(fbits(r[0]), 0x7FC00000u);
  EXPECT_EQ(r[1], kInf);
  // float16 is computed in float and rounded once: Mish(1) = 0.8650984 rounds to the half 0x3AEC (0.865234375).
  const uint16_t one = float_to_half(1.0f);
  const Tensor h = run_both(op("Mish", 18, {Tensor::copy_of(DType::F16, Shape{1}, &one, sizeof one)}));
  EXPECT_EQ(h.dtype(), DType::F16);
  EXPECT_EQ(static_cast<const uint16_t*>(h.raw())[0], 0x3AEC);
  expect_refused(op("Mish", 18, {Tensor::from_values<double>({1.0}, Shape{1})}), ErrorKind::Unsupported, "float64");
}

TEST(OpsNewer, SwishHandValues) {
  // Swish(1) = sigmoid(1) = 0.7310586; Swish(0) = 0; Swish(-1) = -sigmoid(-1) = -0.2689414.
  expect_near(run_both(op("Swish", 24, {f32({1, 0, -1})})), {0.7310586f, 0, -0.2689414f});
  // alpha 0.5: Swish(2) = 2 sigmoid(1) = 1.4621172.
  expect_near(run_both(op("Swish", 24, {f32({2})}, {attr_f("alpha", 0.5f)})), {1.4621172f});
  EXPECT_EQ(rt::find_op("", "Swish", 23), nullptr);  // not an operator before opset 24
}

// ---- CumProd (26) ----

TEST(OpsNewer, CumProdDocumentExamples) {
  const Tensor x = f32({1, 2, 3});
  const Tensor axis = i64({0}, Shape{});
  expect_near(run_both(op("CumProd", 26, {x, axis})), {1, 2, 6});
  expect_near(run_both(op("CumProd", 26, {x, axis}, {attr_i("exclusive", 1)})), {1, 1, 2});
  expect_near(run_both(op("CumProd", 26, {x, axis}, {attr_i("reverse", 1)})), {6, 6, 3});
  expect_near(run_both(op("CumProd", 26, {x, axis}, {attr_i("exclusive", 1), attr_i("reverse", 1)})), {6, 3, 1});
  // Along axis 1 of [[1, 2], [3, -4]]: [[1, 2], [3, -12]]; the first element is copied (so -0 stays -0).
  const Tensor m = run_both(op("CumProd", 26, {f32({1, 2, 3, -4}, Shape{2, 2}), i64({-1}, Shape{})}));
  expect_near(m, {1, 2, 3, -12});
  const Tensor z = run_both(op("CumProd", 26, {f32({-0.0f, 5}), axis}));
  EXPECT_EQ(fbits(values<float>(z)[0]), 0x80000000u);
  // Integers wrap: 2^62 * 4 = 2^64 = 0 modulo 2^64.
  const Tensor w = run_both(op("CumProd", 26, {i64({int64_t{1} << 62, 4}), axis}));
  EXPECT_EQ(values<int64_t>(w), (std::vector<int64_t>{int64_t{1} << 62, 0}));
  EXPECT_EQ(rt::find_op("", "CumProd", 25), nullptr);
  expect_error([&] { run_op(op("CumProd", 26, {x, i64({1}, Shape{})})); }, ErrorKind::InvalidInput, "axis 1");
}

// ---- BitCast (26) ----

TEST(OpsNewer, BitCastKeepsTheBytes) {
  // 1.0f = 0x3F800000 = 1065353216; -2.0f = 0xC0000000 = -1073741824.
  const Tensor a = run_both(op("BitCast", 26, {f32({1, -2})}, {attr_i("to", 6)}));
  EXPECT_EQ(a.dtype(), DType::I32);
  EXPECT_EQ(values<int32_t>(a), (std::vector<int32_t>{1065353216, -1073741824}));
  // A NaN payload survives in both modes: no value is converted.
  const Tensor b =
      run_both(op("BitCast", 26, {Tensor::from_values<int32_t>({0x7F800001}, Shape{1})}, {attr_i("to", 1)}));
  EXPECT_EQ(fbits(values<float>(b)[0]), 0x7F800001u);
  const Tensor c = run_both(op("BitCast", 26, {Tensor::from_values<uint8_t>({0, 1}, Shape{2})}, {attr_i("to", 9)}));
  EXPECT_EQ(c.dtype(), DType::Bool);
  expect_error(
      [] {
        run_op(op("BitCast", 26, {Tensor::from_values<uint8_t>({0, 2}, Shape{2})}, {attr_i("to", 9)}));
      },
      ErrorKind::InvalidInput, "not a bool");
  expect_refused(op("BitCast", 26, {f32({1})}, {attr_i("to", 5)}), ErrorKind::InvalidModel, "widths differ");
  expect_refused(op("BitCast", 26, {f32({1})}), ErrorKind::InvalidModel, "no to");
  expect_refused(op("BitCast", 26, {f32({1})}, {attr_i("to", 17)}), ErrorKind::Unsupported, "float8");
  expect_refused(op("BitCast", 26, {f32({1})}, {attr_i("to", -3)}), ErrorKind::InvalidModel, "negative to");
}

// ---- CenterCropPad (18) ----

TEST(OpsNewer, CenterCropPadHandValues) {
  const Tensor x = f32({1, 2, 3, 4, 5});
  // Crop 5 to 2 starts at (5 - 2) / 2 = 1; pad 5 to 8 starts at (8 - 5) / 2 = 1, the odd zero at the end.
  expect_near(run_both(op("CenterCropPad", 18, {x, i64({2})})), {2, 3});
  expect_near(run_both(op("CenterCropPad", 18, {x, i64({8})})), {0, 1, 2, 3, 4, 5, 0, 0});
  // [[1, 2, 3], [4, 5, 6]] with axes [-1] to 1: the middle column [2, 5]; to 4 on axis 0 with axes [0]:
  // start (4 - 2) / 2 = 1: [[0, 0, 0], [1, 2, 3], [4, 5, 6], [0, 0, 0]].
  const Tensor m = f32({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  const Tensor col = run_both(op("CenterCropPad", 18, {m, i64({1})}, {attr_ints("axes", {-1})}));
  EXPECT_EQ(col.shape(), (Shape{2, 1}));
  expect_near(col, {2, 5});
  expect_near(run_both(op("CenterCropPad", 18, {m, i64({4})}, {attr_ints("axes", {0})})),
              {0, 0, 0, 1, 2, 3, 4, 5, 6, 0, 0, 0});
  // Integers move as bytes.
  const Tensor n = run_both(op("CenterCropPad", 18, {i64({7, 8}), i64({3})}));
  EXPECT_EQ(values<int64_t>(n), (std::vector<int64_t>{7, 8, 0}));
}

TEST(OpsNewer, CenterCropPadRefusals) {
  const Tensor m = f32({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  // Errors found when the node is shaped (with a constant shape, or again with the run's values) are InvalidModel,
  // as for Reshape.
  OpCase neg = op("CenterCropPad", 18, {m, i64({2, -1})});
  neg.constant_inputs = {false, true};
  expect_refused(neg, ErrorKind::InvalidModel, "negative extent, constant");
  expect_refused(op("CenterCropPad", 18, {m, i64({2, -1})}), ErrorKind::InvalidModel, "negative extent at run time");
  expect_refused(op("CenterCropPad", 18, {m, i64({2, kBig})}), ErrorKind::InvalidModel, "2^40");
  expect_refused(op("CenterCropPad", 18, {m, i64({2})}), ErrorKind::InvalidModel, "one entry for two axes");
  expect_refused(op("CenterCropPad", 18, {m, i64({2, 2})}, {attr_ints("axes", {1, -1})}), ErrorKind::InvalidModel,
                 "repeated axis");
  expect_refused(op("CenterCropPad", 18, {m, i64({2})}, {attr_ints("axes", {2})}), ErrorKind::InvalidModel, "axis 2");
  expect_refused(op("CenterCropPad", 18, {m, f32({2, 2})}), ErrorKind::InvalidModel, "float shape");
}

// ---- Col2Im (18) ----

TEST(OpsNewer, Col2ImHandValues) {
  // 1-D, image 3, block 2: block positions 0 and 1; rows k = 0: [1, 2], k = 1: [10, 20]; image[l + k] += x:
  // [1, 2 + 10, 20].
  expect_near(run_both(op("Col2Im", 18, {f32({1, 2, 10, 20}, Shape{1, 2, 2}), i64({3}), i64({2})})), {1, 12, 20});
  // The document's example: image [5, 5], block [1, 5], one channel: block position l is row l, offset k column
  // k, so image[l][k] = x[k][l]; with x[k][l] = 5l + k + 1 the image is 1..25 row by row.
  std::vector<float> x(25);
  for (int k = 0; k < 5; ++k)
    for (int l = 0; l < 5; ++l) x[static_cast<size_t>(k * 5 + l)] = static_cast<float>(5 * l + k + 1);
  std::vector<float> want(25);
  for (int i = 0; i < 25; ++i) want[static_cast<size_t>(i)] = static_cast<float>(i + 1);
  const Tensor y = run_both(op("Col2Im", 18, {f32(x, Shape{1, 5, 5}), i64({5, 5}), i64({1, 5})}));
  EXPECT_EQ(y.shape(), (Shape{1, 1, 5, 5}));
  expect_near(y, want);
  // Pads and strides, 1-D: image 4, block 2, stride 2, pads [1, 1]: (4 + 2 - 2) / 2 + 1 = 3 blocks at -1, 1, 3;
  // rows k = 0: [a, b, c] land at -1 (dropped), 1, 3; k = 1: [d, e, f] at 0, 2, 4 (dropped): [d, b, e, c].
  expect_near(run_both(op("Col2Im", 18, {f32({1, 2, 3, 4, 5, 6}, Shape{1, 2, 3}), i64({4}), i64({2})},
                          {attr_ints("strides", {2}), attr_ints("pads", {1, 1})})),
              {4, 2, 5, 3});
  // Dilation 2, image 5, block 2: blocks 0..2, taps at l and l + 2: [a, b, c + d, e, f] for rows [a, b, c], [d, e, f].
  expect_near(run_both(op("Col2Im", 18, {f32({1, 2, 3, 4, 5, 6}, Shape{1, 2, 3}), i64({5}), i64({2})},
                          {attr_ints("dilations", {2})})),
              {1, 2, 7, 5, 6});
}

TEST(OpsNewer, Col2ImRefusals) {
  const Tensor x = f32({1, 2, 10, 20}, Shape{1, 2, 2});
  const auto c2i = [&](Tensor in, std::vector<int64_t> img, std::vector<int64_t> blk,
                       std::vector<ir::Attribute> a = {}) {
    return op("Col2Im", 18, {std::move(in), i64(img), i64(blk)}, std::move(a));
  };
  expect_refused(c2i(x, {3}, {0}), ErrorKind::InvalidModel, "block 0");
  expect_refused(c2i(x, {3}, {kBig}), ErrorKind::InvalidModel, "block 2^40");
  expect_refused(c2i(x, {-3}, {2}), ErrorKind::InvalidModel, "negative image");
  expect_refused(c2i(x, {4}, {2}), ErrorKind::InvalidModel, "block count differs");
  expect_refused(c2i(f32({1, 2, 3}, Shape{1, 3, 1}), {2}, {2}), ErrorKind::InvalidModel, "channels not a multiple");
  expect_refused(c2i(x, {3, 3}, {2}), ErrorKind::InvalidModel, "entry counts differ");
  expect_refused(c2i(x, {1}, {2}), ErrorKind::InvalidModel, "block larger than the image");
  expect_refused(c2i(f32({1, 2}, Shape{2}), {3}, {2}), ErrorKind::InvalidModel, "rank 1 input");
  expect_refused(c2i(x, {1, 1, 1, 3}, {1, 1, 1, 2}), ErrorKind::Unsupported, "four axes");
  for (int64_t v : {int64_t{0}, int64_t{-1}, kBig, std::numeric_limits<int64_t>::max()}) {
    const std::string s = std::to_string(v);
    expect_refused(c2i(x, {3}, {2}, {attr_ints("strides", {v})}), ErrorKind::InvalidModel, "stride " + s);
    expect_refused(c2i(x, {3}, {2}, {attr_ints("dilations", {v})}), ErrorKind::InvalidModel, "dilation " + s);
  }
  expect_refused(c2i(x, {3}, {2}, {attr_ints("pads", {-1, 0})}), ErrorKind::InvalidModel, "negative pad");
  expect_refused(c2i(x, {3}, {2}, {attr_ints("pads", {kBig, 0})}), ErrorKind::InvalidModel, "pad 2^40");
  expect_refused(c2i(x, {3}, {2}, {attr_ints("pads", {0})}), ErrorKind::InvalidModel, "one pad");
  expect_refused(c2i(x, {3}, {2}, {attr_ints("strides", {1, 1})}), ErrorKind::InvalidModel, "two strides");
  expect_refused(op("Col2Im", 18, {Tensor::from_values<double>({1, 2, 3, 4}, Shape{1, 2, 2}), i64({3}), i64({2})}),
                 ErrorKind::Unsupported, "float64");
  // An image of 2^31 - 1 per axis over two axes is beyond the element limit, not an allocation.
  const int64_t m = (int64_t{1} << 31) - 1;
  expect_refused(c2i(f32({1}, Shape{1, 1, 1}), {m, m}, {m, m}), ErrorKind::InvalidModel, "huge image");
  // A grid of 2^31 - 1 positions on one axis and about 3 * 2^31 on the other (pads of 2^31): refused before the
  // product of the two could overflow.
  const int64_t p = int64_t{1} << 31;
  expect_refused(c2i(f32({1}, Shape{1, 1, 1}), {m, m}, {1, 1}, {attr_ints("pads", {0, p, 0, p})}),
                 ErrorKind::InvalidModel, "grid beyond 2^31");
  // Exact mode stores NaN canonically.
  OpCase nan = c2i(f32({from_fbits(0xFFC00001u), 0}, Shape{1, 1, 2}), {2}, {1});
  nan.exact = true;
  EXPECT_EQ(fbits(values<float>(run_op(nan).outputs[0])[0]), 0x7FC00000u);
}

// ---- RotaryEmbedding (23) ----

TEST(OpsNewer, RotaryEmbeddingHandValues) {
  // One head of 4 at one position, cos 0.5 and sin 2 for both pairs. Halves: x1 = [1, 2], x2 = [3, 4]:
  // first = 0.5 x1 - 2 x2 = [-5.5, -7], second = 2 x1 + 0.5 x2 = [3.5, 6].
  const Tensor x = f32({1, 2, 3, 4}, Shape{1, 1, 1, 4});
  const Tensor cos = f32({0.5f, 0.5f}, Shape{1, 1, 2}), sin = f32({2, 2}, Shape{1, 1, 2});
  expect_near(run_both(op("RotaryEmbedding", 23, {x, cos, sin})), {-5.5f, -7, 3.5f, 6});
  // Interleaved: pairs (1, 2) and (3, 4): [0.5 - 4, 2 + 1, 1.5 - 8, 6 + 2].
  expect_near(run_both(op("RotaryEmbedding", 23, {x, cos, sin}, {attr_i("interleaved", 1)})), {-3.5f, 3, -6.5f, 8});
  // rotary_embedding_dim 2: only the pair (1, 2) turns: [0.5 - 4, 2 + 1, 3, 4].
  const Tensor c1 = f32({0.5f}, Shape{1, 1, 1}), s1 = f32({2}, Shape{1, 1, 1});
  expect_near(run_both(op("RotaryEmbedding", 23, {x, c1, s1}, {attr_i("rotary_embedding_dim", 2)})), {-3.5f, 3, 3, 4});
  // position_ids pick cache rows: row 1 is (cos 0, sin 1), a quarter turn: first = -x2, second = x1. Input 3-D
  // [1, 1, 2 * 2] with num_heads 2: heads [1, 2] and [3, 4] give [-2, 1] and [-4, 3].
  const Tensor cache_c = f32({1, 0}, Shape{2, 1}), cache_s = f32({0, 1}, Shape{2, 1});
  expect_near(
      run_both(op("RotaryEmbedding", 23, {f32({1, 2, 3, 4}, Shape{1, 1, 4}), cache_c, cache_s, i64({1}, Shape{1, 1})},
                  {attr_i("num_heads", 2)})),
      {-2, 1, -4, 3});
}

TEST(OpsNewer, RotaryEmbeddingRefusals) {
  const Tensor x = f32({1, 2, 3, 4}, Shape{1, 1, 1, 4});
  const Tensor cos = f32({0.5f, 0.5f}, Shape{1, 1, 2}), sin = f32({2, 2}, Shape{1, 1, 2});
  const Tensor cache = f32({1, 0, 0, 1}, Shape{2, 2});
  expect_refused(op("RotaryEmbedding", 23, {x, cache, cache, i64({2}, Shape{1, 1})}), ErrorKind::InvalidInput,
                 "position id past the cache");
  expect_refused(op("RotaryEmbedding", 23, {x, cache, cache, i64({-1}, Shape{1, 1})}), ErrorKind::InvalidInput,
                 "negative position id");
  expect_refused(op("RotaryEmbedding", 23, {x, cos, sin}, {attr_i("rotary_embedding_dim", 3)}), ErrorKind::InvalidModel,
                 "odd rotary dim");
  expect_refused(op("RotaryEmbedding", 23, {x, cos, sin}, {attr_i("rotary_embedding_dim", 6)}), ErrorKind::InvalidModel,
                 "rotary dim beyond the head");
  expect_refused(op("RotaryEmbedding", 23, {x, cos, sin}, {attr_i("rotary_embedding_dim", -2)}),
                 ErrorKind::InvalidModel, "negative rotary dim");
  expect_refused(op("RotaryEmbedding", 23, {f32({1, 2, 3, 4}, Shape{1, 1, 4}), cos, sin}), ErrorKind::InvalidModel,
                 "3-D without num_heads");
  expect_refused(op("RotaryEmbedding", 23, {f32({1, 2, 3, 4}, Shape{1, 1, 4}), cos, sin}, {attr_i("num_heads", 3)}),
                 ErrorKind::InvalidModel, "hidden not a multiple");
  expect_refused(op("RotaryEmbedding", 23, {f32({1, 2, 3, 4}, Shape{1, 1, 4}), cos, sin}, {attr_i("num_heads", kBig)}),
                 ErrorKind::InvalidModel, "huge num_heads");
  expect_refused(op("RotaryEmbedding", 23, {x, cos, f32({2}, Shape{1, 1, 1})}), ErrorKind::InvalidModel,
                 "caches differ");
  expect_refused(op("RotaryEmbedding", 23, {x, cache, cache}), ErrorKind::InvalidModel, "2-D cache without ids");
  expect_refused(op("RotaryEmbedding", 23, {f32({1, 2}, Shape{2}), cos, sin}), ErrorKind::InvalidModel, "rank 1");
}

// ---- TensorScatter (24) ----

TEST(OpsNewer, TensorScatterHandValues) {
  // Cache rows [1, 2, 3, 4] (axis -2 of [1, 4, 1]); update [7, 8] at 3 circular: rows 3 and 0 -> [8, 2, 3, 7].
  const Tensor past = f32({1, 2, 3, 4}, Shape{1, 4, 1});
  const Tensor upd = f32({7, 8}, Shape{1, 2, 1});
  expect_near(run_both(op("TensorScatter", 24, {past, upd, i64({3})}, {attr_s("mode", "circular")})), {8, 2, 3, 7});
  // Circular, index -1: rows 3 and 0 as well (the non-negative remainder).
  expect_near(run_both(op("TensorScatter", 24, {past, upd, i64({-1})}, {attr_s("mode", "circular")})), {8, 2, 3, 7});
  // Linear at 1: rows 1 and 2 -> [1, 7, 8, 4]; without write_indices at 0 -> [7, 8, 3, 4].
  expect_near(run_both(op("TensorScatter", 24, {past, upd, i64({1})})), {1, 7, 8, 4});
  expect_near(run_both(op("TensorScatter", 24, {past, upd})), {7, 8, 3, 4});
  // Two batch entries, axis 1 of [2, 3, 2]: entry 0 writes its row at 2, entry 1 at 0.
  const Tensor p2 = f32({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, Shape{2, 3, 2});
  const Tensor u2 = f32({1, 2, 3, 4}, Shape{2, 1, 2});
  expect_near(run_both(op("TensorScatter", 24, {p2, u2, i64({2, 0})}, {attr_i("axis", 1)})),
              {0, 0, 0, 0, 1, 2, 3, 4, 0, 0, 0, 0});
}

TEST(OpsNewer, TensorScatterRefusals) {
  const Tensor past = f32({1, 2, 3, 4}, Shape{1, 4, 1});
  const Tensor upd = f32({7, 8}, Shape{1, 2, 1});
  expect_refused(op("TensorScatter", 24, {past, upd, i64({3})}), ErrorKind::InvalidInput, "linear past the end");
  expect_refused(op("TensorScatter", 24, {past, upd, i64({-1})}), ErrorKind::InvalidInput, "linear negative");
  expect_refused(op("TensorScatter", 24, {past, upd, i64({std::numeric_limits<int64_t>::max()})}),
                 ErrorKind::InvalidInput, "linear INT64_MAX");
  expect_refused(op("TensorScatter", 24, {past, upd, i64({0, 0})}), ErrorKind::InvalidInput, "two indices, one entry");
  expect_refused(op("TensorScatter", 24, {past, upd}, {attr_i("axis", 0)}), ErrorKind::InvalidModel, "batch axis");
  expect_refused(op("TensorScatter", 24, {past, upd}, {attr_i("axis", 3)}), ErrorKind::InvalidModel, "axis 3");
  expect_refused(op("TensorScatter", 24, {past, upd}, {attr_s("mode", "ring")}), ErrorKind::InvalidModel, "mode");
  expect_refused(op("TensorScatter", 24, {upd, past}), ErrorKind::InvalidModel, "update longer than the cache");
  expect_refused(op("TensorScatter", 24, {past, f32({7, 8}, Shape{1, 1, 2})}), ErrorKind::InvalidModel,
                 "other axis differs");
  expect_refused(op("TensorScatter", 24, {past, Tensor::from_values<double>({7, 8}, Shape{1, 2, 1})}),
                 ErrorKind::InvalidModel, "types differ");
}

// ---- Attention (23, 24) ----

OpCase attention(std::vector<Tensor> in, std::vector<ir::Attribute> attrs = {}, int64_t opset = 23, size_t outs = 1) {
  OpCase c = op("Attention", opset, std::move(in), std::move(attrs));
  c.num_outputs = outs;
  return c;
}

TEST(OpsNewer, AttentionHandValues) {
  // One head, Q = [1, 0], K = I, V = [[1, 2], [3, 4]], scale 1: scores [1, 0], weights [e / (e + 1), 1 / (e + 1)] =
  // [0.7310586, 0.2689414], Y = [0.7310586 + 3 * 0.2689414, 1.4621172 + 4 * 0.2689414] = [1.5378828, 2.5378828].
  const Tensor q = f32({1, 0}, Shape{1, 1, 1, 2});
  const Tensor k = f32({1, 0, 0, 1}, Shape{1, 1, 2, 2});
  const Tensor v = f32({1, 2, 3, 4}, Shape{1, 1, 2, 2});
  const ir::Attribute one = attr_f("scale", 1.0f);
  expect_near(run_op(attention({q, k, v}, {one})).outputs[0], {1.5378828f, 2.5378828f}, 2e-6f);
  // Exact mode: the same value within rounding (fast mode may fuse the products).
  OpCase ex = attention({q, k, v}, {one});
  ex.exact = true;
  expect_near(run_op(ex).outputs[0], {1.5378828f, 2.5378828f}, 2e-6f);
  // Default scale 1 / sqrt(2): sqrt of it scales Q and K, scores [0.7071068, 0]; weights sigmoid(0.7071068) =
  // 0.6697615 and 0.3302385: Y = [0.6697615 + 0.9907155, 1.339523 + 1.320954] = [1.660477, 2.660477].
  expect_near(run_op(attention({q, k, v})).outputs[0], {1.660477f, 2.660477f}, 2e-6f);
  // Causal, no past: key 1 comes after query 0, Y = V[0]; a bool mask [true, false] does the same.
  expect_near(run_op(attention({q, k, v}, {one, attr_i("is_causal", 1)})).outputs[0], {1, 2});
  const Tensor bm = Tensor::from_values<bool>({true, false}, Shape{2});
  expect_near(run_op(attention({q, k, v, bm}, {one})).outputs[0], {1, 2});
  // A float mask [0, 1] makes the scores [1, 1]: Y = the mean of V's rows = [2, 3]. A mask of one column leaves
  // key 1 at -inf: Y = V[0].
  expect_near(run_op(attention({q, k, v, f32({0, 1})}, {one})).outputs[0], {2, 3});
  expect_near(run_op(attention({q, k, v, f32({0})}, {one})).outputs[0], {1, 2});
  // A past key [0, 1] with value [3, 4] and the new key [1, 0] with value [1, 2]: the keys are I again, reversed,
  // so Y is the first case's; present_key = [[0, 1], [1, 0]], present_value = [[3, 4], [1, 2]].
  OpCase p = attention({q, f32({1, 0}, Shape{1, 1, 1, 2}), f32({1, 2}, Shape{1, 1, 1, 2}), Tensor(),
                        f32({0, 1}, Shape{1, 1, 1, 2}), f32({3, 4}, Shape{1, 1, 1, 2})},
                       {one, attr_i("is_causal", 1)}, 23, 3);
  const OpResult r = run_op(p);
  expect_near(r.outputs[0], {1.5378828f, 2.5378828f}, 2e-6f);
  expect_near(r.outputs[1], {0, 1, 1, 0});
  expect_near(r.outputs[2], {3, 4, 1, 2});
  // Two query heads on one key/value head read the same keys: Q rows [1, 0] and [0, 1] give the first case's Y
  // and its mirror [0.2689414 + 3 * 0.7310586, ...] = [2.4621172, 3.4621172].
  expect_near(run_op(attention({f32({1, 0, 0, 1}, Shape{1, 2, 1, 2}), k, v}, {one})).outputs[0],
              {1.5378828f, 2.5378828f, 2.4621172f, 3.4621172f}, 2e-6f);
  // Opset 24, nonpad_kv_seqlen 1: key 1 is padding, Y = V[0].
  expect_near(run_op(attention({q, k, v, Tensor(), Tensor(), Tensor(), i64({1})}, {one}, 24)).outputs[0], {1, 2});
}

TEST(OpsNewer, AttentionRefusals) {
  const Tensor q = f32({1, 0}, Shape{1, 1, 1, 2});
  const Tensor k = f32({1, 0, 0, 1}, Shape{1, 1, 2, 2});
  const Tensor v = f32({1, 2, 3, 4}, Shape{1, 1, 2, 2});
  expect_refused(attention({q, k, v}, {}, 23, 4), ErrorKind::Unsupported, "qk_matmul_output");
  expect_refused(attention({q, k, v}, {attr_i("softmax_precision", 11)}), ErrorKind::Unsupported, "double softmax");
  expect_refused(attention({q, k, v}, {attr_f("scale", -1.0f)}), ErrorKind::InvalidModel, "negative scale");
  expect_refused(attention({q, k, v}, {attr_f("softcap", -1.0f)}), ErrorKind::InvalidModel, "negative softcap");
  expect_refused(attention({q, k, v, f32({0, 0, 0})}), ErrorKind::InvalidModel, "mask longer than the keys");
  expect_refused(attention({q, k, v, f32({0, 0, 0, 0}, Shape{2, 1, 2})}), ErrorKind::InvalidModel,
                 "mask batch 2 for batch 1");
  expect_refused(attention({q, k, v, Tensor::from_values<int32_t>({0, 0}, Shape{2})}), ErrorKind::InvalidModel,
                 "int mask");
  expect_refused(attention({q, k, v, Tensor(), Tensor(), Tensor(), i64({1})}), ErrorKind::InvalidModel,
                 "nonpad at opset 23");
  expect_refused(
      attention({f32({1, 0, 0, 1, 1, 0}, Shape{1, 3, 1, 2}), f32({1, 0, 0, 1, 1, 0, 0, 1}, Shape{1, 2, 2, 2}),
                 f32({1, 2, 3, 4, 1, 2, 3, 4}, Shape{1, 2, 2, 2})}),
      ErrorKind::InvalidModel, "3 heads over 2");
  expect_refused(attention({q, f32({1, 0, 0}, Shape{1, 1, 1, 3}), v}), ErrorKind::InvalidModel, "head sizes differ");
  expect_refused(attention({f32({1, 0}, Shape{1, 1, 2}), f32({1, 0}, Shape{1, 1, 2}), f32({1, 0}, Shape{1, 1, 2})}),
                 ErrorKind::InvalidModel, "3-D without head counts");
  expect_refused(attention({q, k, v, Tensor(), f32({0, 1}, Shape{1, 1, 1, 2})}), ErrorKind::InvalidModel,
                 "past_key without past_value");
  expect_refused(attention({q, k, v}, {attr_i("q_num_heads", -1)}), ErrorKind::InvalidModel, "negative heads");
  expect_refused(attention({Tensor::from_values<double>({1, 0}, Shape{1, 1, 1, 2}), k, v}), ErrorKind::Unsupported,
                 "float64");
}

}  // namespace
}  // namespace onemodel::test
