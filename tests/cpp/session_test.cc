// Session and Model end to end on the committed sample models (tools/make_testdata.py). Expected numbers
// come from numpy (quoted in the brief and the spec's getting-started and cookbook pages) or from a naive
// reference computed in the test from the model's own weights.
#include <gtest/gtest.h>

#include "kernels/isa.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <thread>

#include "onemodel/model.h"
#include "onemodel/session.h"
#include "isa_env.h"
#include "base/bits.h"
#include "onnx/import.h"
#include "onnx_test_util.h"
#include "test_util.h"

namespace onemodel {
namespace {

using test::expect_error;

using test::testdata;

std::vector<float> values(const Tensor& t) {
  auto d = t.data<float>();
  return {d.begin(), d.end()};
}

TEST(Session, ClassifierHappyPath) {
  Model m = Model::load(testdata("classifier.onnx"));
  std::vector<float> x = {5.1f, 3.5f, 1.4f, 0.2f};
  std::vector<float> p = m.run(std::span<const float>(x));
  ASSERT_EQ(p.size(), 3u);
  // numpy: [0.23228599 0.28132826 0.4863858]
  EXPECT_NEAR(p[0], 0.23228599f, 2e-6);
  EXPECT_NEAR(p[1], 0.28132826f, 2e-6);
  EXPECT_NEAR(p[2], 0.4863858f, 2e-6);
  // The best target this machine offers, unless ONEMODEL_ISA caps it.
  EXPECT_EQ(m.session().kernel_path(), kern::isa_name(kern::session_isa()));
  ASSERT_EQ(m.session().inputs().size(), 1u);
  EXPECT_EQ(m.session().inputs()[0].name, "x");
  EXPECT_EQ(m.session().inputs()[0].dtype, DType::F32);
  EXPECT_EQ(m.session().inputs()[0].dims.size(), 2u);
}

TEST(Session, ClassifierBatchOfThreeRowsMatchesSingleRows) {
  Model m = Model::load(testdata("classifier.onnx"));
  std::vector<float> rows = {5.1f, 3.5f, 1.4f, 0.2f, 6.2f, 2.9f, 4.3f, 1.3f, 7.7f, 3.0f, 6.1f, 2.3f};
  std::vector<float> all = m.run(std::span<const float>(rows));  // 12 values -> batch 3
  ASSERT_EQ(all.size(), 9u);
  for (size_t r = 0; r < 3; ++r) {
    std::vector<float> one = m.run(std::span<const float>(rows.data() + 4 * r, 4));
    float sum = 0;
    for (size_t c = 0; c < 3; ++c) {
      EXPECT_EQ(one[c], all[3 * r + c]);  // rows are independent: same bits
      sum += one[c];
    }
    EXPECT_NEAR(sum, 1.0f, 1e-5);
  }
  EXPECT_NEAR(all[0], 0.23228599f, 2e-6);
  // Explicit shape and a count that does not divide.
  std::vector<int64_t> shape = {3, 4};
  EXPECT_EQ(m.run(std::span<const float>(rows), shape), all);
  std::vector<float> bad(5, 1.0f);
  expect_error(ErrorKind::InvalidInput, [&] { m.run(std::span<const float>(bad)); });
}

TEST(Session, ScorerNamedInputsAnyOrder) {
  Session s = Session::load(testdata("scorer.onnx"));
  ASSERT_EQ(s.inputs().size(), 2u);
  EXPECT_EQ(s.inputs()[0].name, "features");
  EXPECT_EQ(s.inputs()[0].dtype, DType::F32);
  ASSERT_EQ(s.inputs()[0].dims.size(), 2u);
  EXPECT_EQ(s.inputs()[0].dims[0].param, "batch");
  EXPECT_FALSE(s.inputs()[0].dims[0].is_fixed());
  EXPECT_EQ(s.inputs()[0].dims[1].value, 3);
  EXPECT_EQ(s.inputs()[1].name, "bias");
  EXPECT_EQ(s.inputs()[1].dims[0].value, 1);
  EXPECT_EQ(s.inputs()[1].dims[1].value, 2);
  ASSERT_EQ(s.outputs().size(), 2u);
  EXPECT_EQ(s.outputs()[0].name, "score");
  EXPECT_EQ(s.outputs()[0].dims[0].param, "batch");
  EXPECT_EQ(s.outputs()[0].dims[1].value, 2);
  EXPECT_EQ(s.outputs()[1].name, "best");
  ASSERT_EQ(s.outputs()[1].dims.size(), 1u);
  EXPECT_EQ(s.outputs()[1].dims[0].param, "batch");
  ASSERT_EQ(s.opsets().size(), 1u);
  EXPECT_EQ(s.opsets()[0].first, "");
  EXPECT_EQ(s.opsets()[0].second, 13);

  Tensor features = Tensor::from_values<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  Tensor bias = Tensor::from_values<float>({0.5f, 1.5f}, Shape{1, 2});
  std::vector<std::string> in_names = {"bias", "features"};
  std::vector<Tensor> ins = {bias, features};
  std::vector<std::string> out_names = {"score", "best"};
  std::vector<Tensor> outs(2);
  s.run(in_names, ins, out_names, outs);
  EXPECT_EQ(outs[0].shape(), Shape({2, 2}));
  EXPECT_EQ(values(outs[0]), (std::vector<float>{4.5f, 6.5f, 10.5f, 12.5f}));
  EXPECT_EQ(outs[1].shape(), Shape({2}));
  EXPECT_EQ(values(outs[1]), (std::vector<float>{6.5f, 12.5f}));
  EXPECT_EQ(values(features), (std::vector<float>{1, 2, 3, 4, 5, 6}));  // inputs are never modified

  // Pre-allocated outputs of the right type and shape are overwritten in place.
  const void* where = outs[1].raw();
  Tensor f2 = Tensor::from_values<float>({0, 0, 1, 1, 1, 1}, Shape{2, 3});
  std::vector<Tensor> ins2 = {bias, f2};
  s.run(in_names, ins2, out_names, outs);
  EXPECT_EQ(outs[1].raw(), where);
  EXPECT_EQ(values(outs[0]), (std::vector<float>{1.5f, 2.5f, 2.5f, 3.5f}));
  EXPECT_EQ(values(outs[1]), (std::vector<float>{2.5f, 3.5f}));

  // Tensor form returning new tensors, one output by name.
  std::vector<NamedTensor> named = {{"features", features}, {"bias", bias}};
  std::vector<std::string> best = {"best"};
  std::vector<Tensor> r = s.run(named, best);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(values(r[0]), (std::vector<float>{6.5f, 12.5f}));
  std::vector<Tensor> all = s.run(named);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(values(all[0]), (std::vector<float>{4.5f, 6.5f, 10.5f, 12.5f}));
}

TEST(Session, ScorerNonContiguousInputIsCopied) {
  Session s = Session::load(testdata("scorer.onnx"));
  // features^T stored as [3,2], permuted to a [2,3] view: rows (1,2,3) and (4,5,6).
  Tensor stored = Tensor::from_values<float>({1, 4, 2, 5, 3, 6}, Shape{3, 2});
  std::vector<int> perm = {1, 0};
  Tensor features = stored.permute(perm);
  ASSERT_FALSE(features.is_contiguous());
  Tensor bias = Tensor::from_values<float>({0.5f, 1.5f}, Shape{1, 2});
  std::vector<NamedTensor> named = {{"features", features}, {"bias", bias}};
  std::vector<Tensor> r = s.run(named);
  EXPECT_EQ(values(r[0]), (std::vector<float>{4.5f, 6.5f, 10.5f, 12.5f}));
}

// wide.onnx: y = relu(x W1) W2, checked against a naive double-precision reference on the model's weights.
std::vector<float> wide_reference(const std::vector<float>& x, size_t batch) {
  ir::Model m = onnx::import_file(testdata("wide.onnx"));
  const ir::Graph& g = *m.graph;
  // The importer's tensors may be unaligned views into the file; copy the bytes out.
  auto weight = [&](const char* name) {
    const Tensor& t = g.values[static_cast<size_t>(g.find_value(name))].initializer->data;
    std::vector<float> w(static_cast<size_t>(t.numel()));
    std::memcpy(w.data(), t.raw(), w.size() * sizeof(float));
    return w;
  };
  auto w1 = weight("W1"), w2 = weight("W2");
  std::vector<float> y(batch * 64);
  for (size_t b = 0; b < batch; ++b) {
    std::vector<double> h(512, 0.0);
    for (size_t j = 0; j < 512; ++j) {
      for (size_t k = 0; k < 256; ++k) h[j] += static_cast<double>(x[b * 256 + k]) * w1[k * 512 + j];
      h[j] = std::max(h[j], 0.0);
    }
    for (size_t j = 0; j < 64; ++j) {
      double acc = 0;
      for (size_t k = 0; k < 512; ++k) acc += h[k] * w2[k * 64 + j];
      y[b * 64 + j] = static_cast<float>(acc);
    }
  }
  return y;
}

std::vector<float> wide_input(size_t batch, float phase) {
  std::vector<float> x(batch * 256);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i) * 0.37f + phase);
  return x;
}

TEST(Session, WideMatchesNaiveReference) {
  Session s = Session::load(testdata("wide.onnx"));
  std::vector<float> x = wide_input(1, 0.0f);
  std::vector<float> ref = wide_reference(x, 1);
  std::vector<float> y(64);
  std::vector<int64_t> shape = {1, 256};
  std::vector<int64_t> out_shape = s.run<float, float>(x, shape, y);
  EXPECT_EQ(out_shape, (std::vector<int64_t>{1, 64}));
  for (size_t i = 0; i < 64; ++i) EXPECT_NEAR(y[i], ref[i], 1e-4) << i;
  // The cookbook's first value.
  EXPECT_NEAR(y[0], -0.4711962f, 1e-5);
}

std::vector<std::byte> read_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::vector<char> c((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<std::byte> b(c.size());
  std::memcpy(b.data(), c.data(), c.size());
  return b;
}

TEST(Session, LoadBytesCopiesTheBuffer) {
  std::vector<std::byte> bytes = read_file(testdata("classifier.onnx"));
  Model m = Model::load_bytes(bytes);
  std::fill(bytes.begin(), bytes.end(), std::byte{0});  // the caller may reuse its buffer
  // or free it: the weights were copied out of it (onnx-import.md section 6), and a view left behind would be
  // a use after free under ASan.
  bytes = {};
  bytes.shrink_to_fit();
  std::vector<float> x = {5.1f, 3.5f, 1.4f, 0.2f};
  std::vector<float> p = m.run(std::span<const float>(x));
  EXPECT_NEAR(p[2], 0.4863858f, 2e-6);
}

// Model::run widens float16 and bfloat16 outputs with base/fp16.h's conversions: exact for every number
// (subnormals included), NaN payloads kept with the quiet bit set. The constants pass through Expand unchanged.
TEST(Session, ModelRunWidensHalfAndBfloat16Outputs) {
  for (const int elem : {10, 16}) {  // FLOAT16, BFLOAT16
    const std::vector<uint16_t> c = elem == 10 ? std::vector<uint16_t>{0x3C00, 0x8001, 0x7D01, 0xFC00}
                                               : std::vector<uint16_t>{0x3F80, 0x8001, 0x7F81, 0xFF80};
    test::Msg t;
    t.varint(1, 4).varint(2, static_cast<uint64_t>(elem)).bytes(8, "c");
    t.bytes(9, std::string(reinterpret_cast<const char*>(c.data()), c.size() * 2));
    test::Msg g;
    g.msg(1, test::node("Expand", {"c", "s"}, {"y"})).msg(5, t);
    g.msg(11, test::value_info("s", 7, {1})).msg(12, test::value_info("y", elem, {4}));
    const std::string bytes = test::model(g).b;
    Model m = Model::load_bytes(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())));
    const std::vector<int64_t> shape = {4};
    const std::vector<float> y = m.run(std::span<const int64_t>(shape));
    ASSERT_EQ(y.size(), 4u);
    const std::vector<uint32_t> want = elem == 10
                                           ? std::vector<uint32_t>{0x3F800000u, 0xB3800000u, 0x7FE02000u, 0xFF800000u}
                                           : std::vector<uint32_t>{0x3F800000u, 0x80010000u, 0x7FC10000u, 0xFF800000u};
    for (size_t i = 0; i < 4; ++i) EXPECT_EQ(float_bits(y[i]), want[i]) << "type " << elem << " element " << i;
  }
}

TEST(Session, ImportErrorsPassThrough) {
  try {
    Session::load(testdata("no_such_model.onnx"));
    ADD_FAILURE() << "loaded a missing file";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Io) << e.what();
  }
  std::vector<std::byte> junk(16, std::byte{0xFF});
  try {
    Session::load_bytes(junk);
    ADD_FAILURE() << "loaded junk";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Malformed) << e.what();
  }
}

TEST(Session, ExactModeSameBytesAtOneAndTwoThreads) {
  std::vector<float> x = wide_input(1, 0.0f);
  std::vector<int64_t> shape = {1, 256};
  std::vector<std::vector<float>> results;
  for (int threads : {1, 2}) {
    SessionOptions o;
    o.mode = Mode::Exact;
    o.intra_op_threads = threads;
    Session s = Session::load(testdata("wide.onnx"), o);
    EXPECT_EQ(s.options().intra_op_threads, threads);
    std::vector<float> y(64);
    s.run<float, float>(x, shape, y);
    results.push_back(y);
  }
  EXPECT_EQ(std::memcmp(results[0].data(), results[1].data(), 64 * sizeof(float)), 0);
  std::vector<float> ref = wide_reference(x, 1);
  for (size_t i = 0; i < 64; ++i) EXPECT_NEAR(results[0][i], ref[i], 1e-4);
}

TEST(Session, UnsupportedOperatorsAllNamedAtLoad) {
  Error e = expect_error(ErrorKind::UnsupportedOperator, [] { Model::load(testdata("unsupported.onnx")); });
  EXPECT_EQ(e.operators(), (std::vector<std::string>{"DeformConv (opset 22)", "ImageDecoder (opset 22)"}));
  EXPECT_EQ(e.message(),
            "The model uses operators this library does not implement: DeformConv (opset 22), ImageDecoder "
            "(opset 22).");
}

// cookbook missing-operators: wave.onnx runs in fast mode (cos of 0..3 as printed there) and is refused in
// exact mode, naming Cos.
TEST(Session, WaveRunsFastAndRefusesExactNamingCos) {
  Session s = Session::load(testdata("wave.onnx"));
  std::vector<float> t = {0, 1, 2, 3}, y(4);
  std::vector<int64_t> shape = {4};
  s.run<float, float>(t, shape, y);
  const float want[] = {1.0f, 0.540302f, -0.416147f, -0.989992f};
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(y[i], want[i], 1e-6) << i;
  SessionOptions o;
  o.mode = Mode::Exact;
  Error e = expect_error(ErrorKind::ExactModeUnavailable, [&] { Session::load(testdata("wave.onnx"), o); });
  EXPECT_EQ(e.operators(), (std::vector<std::string>{"Cos"}));
  EXPECT_EQ(e.message(),
            "Exact mode is not available: no exact kernel exists for Cos. Use fast mode or remove these operators.");
}

// ONEMODEL_ISA caps the target per session: "scalar" always gives the scalar path natively, and an unknown
// value fails session creation with InvalidArgument naming the value.
TEST(SessionIsa, ScalarCapAndUnknownValue) {
  {
    IsaEnv env("scalar");
    Session s = Session::load(testdata("classifier.onnx"));
    EXPECT_EQ(s.kernel_path(), "Scalar");
  }
  {
    IsaEnv env("avx9000");
    try {
      Session::load(testdata("classifier.onnx"));
      FAIL() << "an unknown ONEMODEL_ISA must fail";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
      EXPECT_NE(std::string(e.what()).find("avx9000"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace onemodel
