// Model::run on text encoders (graph-runtime.md section 4, "The happy path"): token ids in, attention_mask
// filled with ones and token_type_ids with zeros in the ids' shape, [batch, sequence] taken as one sequence.
// The models are built here; each output is a sum of table lookups whose tables make every wrong fill visible
// (a zero mask adds 1000, a segment id of one adds 100), so the expected numbers are written by hand.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "onemodel/model.h"
#include "onemodel/session.h"
#include "onnx_test_util.h"
#include "test_util.h"

namespace onemodel {
namespace {

using test::expect_error;
using test::Msg;

constexpr int kF32 = 1, kI32 = 6, kI64 = 7, kF16 = 10;

// A [batch, sequence] input or output with both extents symbolic.
Msg sequence_info(const std::string& name, int elem) {
  Msg shape;
  shape.msg(1, Msg().bytes(2, "batch")).msg(1, Msg().bytes(2, "sequence"));
  Msg tt;
  tt.varint(1, static_cast<uint64_t>(elem)).msg(2, shape);
  return Msg().bytes(1, name).msg(2, Msg().msg(1, tt));
}

Model load(const Msg& graph) {
  const std::string bytes = test::model(graph).b;
  return Model::load_bytes(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())));
}

// y[b, t] = word[ids] + segment[token_type_ids] + mask_table[attention_mask], with word[v] = v,
// segment = {0.5, 100} and mask_table = {1000, 0}. The mask is declared first: the ids are the input that is
// neither attention_mask nor token_type_ids, wherever it stands.
Msg encoder(int id_type, bool with_segments = true) {
  Msg g;
  g.msg(1, test::node("Gather", {"word", "input_ids"}, {"w"}));
  g.msg(1, test::node("Gather", {"mask_table", "attention_mask"}, {"m"}));
  if (with_segments) {
    g.msg(1, test::node("Gather", {"segment", "token_type_ids"}, {"s"}));
    g.msg(1, test::node("Add", {"w", "s"}, {"ws"}));
    g.msg(1, test::node("Add", {"ws", "m"}, {"y"}));
  } else {
    g.msg(1, test::node("Add", {"w", "m"}, {"y"}));
  }
  g.msg(5, test::float_tensor_raw("word", {5}, {0, 1, 2, 3, 4}));
  g.msg(5, test::float_tensor_raw("segment", {2}, {0.5f, 100}));
  g.msg(5, test::float_tensor_raw("mask_table", {2}, {1000, 0}));
  g.msg(11, sequence_info("attention_mask", id_type)).msg(11, sequence_info("input_ids", id_type));
  if (with_segments) g.msg(11, sequence_info("token_type_ids", id_type));
  g.msg(12, sequence_info("y", kF32));
  return g;
}

TEST(ModelTextEncoder, FillsMaskWithOnesAndSegmentsWithZeros) {
  Model m = load(encoder(kI64));
  const std::vector<int64_t> ids = {3, 1, 4};
  EXPECT_EQ(m.run(std::span<const int64_t>(ids)), (std::vector<float>{3.5f, 1.5f, 4.5f}));
  // With a shape: three sequences of one token, filled in that shape.
  const std::vector<int64_t> shape = {3, 1};
  EXPECT_EQ(m.run(std::span<const int64_t>(ids), shape), (std::vector<float>{3.5f, 1.5f, 4.5f}));
  // The probe itself: a zero in the mask and a one in the segment ids show in the output.
  const std::vector<NamedTensor> feeds = {{"input_ids", Tensor::from_values<int64_t>({3, 1, 4}, {1, 3})},
                                          {"attention_mask", Tensor::from_values<int64_t>({1, 0, 1}, {1, 3})},
                                          {"token_type_ids", Tensor::from_values<int64_t>({0, 1, 0}, {1, 3})}};
  std::vector<Tensor> out = m.session().run(feeds);
  EXPECT_EQ(test::values_of<float>(out[0]), (std::vector<float>{3.5f, 1101.0f, 4.5f}));
}

TEST(ModelTextEncoder, Int32Ids) {
  Model m = load(encoder(kI32));
  const std::vector<int32_t> ids = {0, 2, 2, 4};
  EXPECT_EQ(m.run(std::span<const int32_t>(ids)), (std::vector<float>{0.5f, 2.5f, 2.5f, 4.5f}));
}

TEST(ModelTextEncoder, MaskWithoutSegments) {
  Model m = load(encoder(kI64, false));
  const std::vector<int64_t> ids = {4, 0};
  EXPECT_EQ(m.run(std::span<const int64_t>(ids)), (std::vector<float>{4, 0}));
}

// A float mask (some exports declare one) is filled with 1.0: y = word[ids] + 1000 * mask.
TEST(ModelTextEncoder, FloatMask) {
  Msg g;
  g.msg(1, test::node("Gather", {"word", "input_ids"}, {"w"}));
  g.msg(1, test::node("Mul", {"attention_mask", "k"}, {"m"}));
  g.msg(1, test::node("Add", {"w", "m"}, {"y"}));
  g.msg(5, test::float_tensor_raw("word", {5}, {0, 1, 2, 3, 4}));
  g.msg(5, test::float_tensor_raw("k", {1}, {1000}));
  g.msg(11, sequence_info("input_ids", kI64)).msg(11, sequence_info("attention_mask", kF32));
  g.msg(12, sequence_info("y", kF32));
  Model m = load(g);
  const std::vector<int64_t> ids = {2, 1};
  EXPECT_EQ(m.run(std::span<const int64_t>(ids)), (std::vector<float>{1002, 1001}));
}

TEST(ModelTextEncoder, OtherInputsAreRefused) {
  // A third input that is neither the mask nor the segment ids: the values passed cannot say what it is.
  Msg g = encoder(kI64);
  g.msg(11, sequence_info("position_ids", kI64));
  Model m = load(g);
  const std::vector<int64_t> ids = {1};
  Error e = expect_error(ErrorKind::InvalidInput, [&] { m.run(std::span<const int64_t>(ids)); });
  EXPECT_NE(std::string(e.what()).find("has 4 inputs and 1 outputs"), std::string::npos) << e.what();

  // Segment ids of a type the fill does not write.
  Msg h;
  h.msg(1, test::node("Gather", {"word", "input_ids"}, {"y"}));
  h.msg(5, test::float_tensor_raw("word", {5}, {0, 1, 2, 3, 4}));
  h.msg(11, sequence_info("input_ids", kI64)).msg(11, sequence_info("token_type_ids", kF16));
  h.msg(12, sequence_info("y", kF32));
  Model half = load(h);
  e = expect_error(ErrorKind::InvalidInput, [&] { half.run(std::span<const int64_t>(ids)); });
  EXPECT_NE(std::string(e.what()).find("'token_type_ids' only as int64, int32 or float32"), std::string::npos)
      << e.what();
}

// The MiniLM-shaped encoder of tools/models/make_minilm.py (tools/models/fetch.sh writes it) when
// ONEMODEL_MINILM names the file: the one-line run equals a session run fed ones and zeros, bit for bit.
TEST(ModelTextEncoder, MiniLmShapedEncoder) {
  const char* file = std::getenv("ONEMODEL_MINILM");
  if (!file) GTEST_SKIP() << "ONEMODEL_MINILM is not set";
  SessionOptions o;
  o.mode = Mode::Exact;
  o.intra_op_threads = 1;
  Model m = Model::load(file, o);
  const std::vector<int64_t> ids = {101, 7592, 2088, 2003, 1037, 3231, 102};
  const std::vector<float> got = m.run(std::span<const int64_t>(ids));
  const int64_t n = static_cast<int64_t>(ids.size());
  const std::vector<int64_t> ones(ids.size(), 1);
  const std::vector<NamedTensor> feeds = {{"input_ids", Tensor::from_values<int64_t>(ids, {1, n})},
                                          {"attention_mask", Tensor::from_values<int64_t>(ones, {1, n})},
                                          {"token_type_ids", Tensor::zeros(DType::I64, {1, n})}};
  std::vector<Tensor> want = m.session().run(feeds);
  ASSERT_EQ(want[0].shape().rank(), 3);
  EXPECT_EQ(want[0].shape()[1], n);
  const std::vector<float> w = test::values_of<float>(want[0]);
  ASSERT_EQ(got.size(), w.size());
  EXPECT_EQ(std::memcmp(got.data(), w.data(), got.size() * sizeof(float)), 0);
}

}  // namespace
}  // namespace onemodel
