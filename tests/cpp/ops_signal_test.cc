// Det, DFT, the windows and their error paths, on hand-computed values (the backend cases cover the usual
// shapes; these pin pivoting, padding and truncation, and bad inputs).
#include <gtest/gtest.h>

#include <cmath>

#include "ops_test_util.h"

namespace onemodel::test {
namespace {

Tensor f32(std::vector<float> v, Shape s) { return Tensor::from_values(std::span<const float>(v), s); }
Tensor i64(std::vector<int64_t> v, Shape s) { return Tensor::from_values(std::span<const int64_t>(v), s); }

std::vector<float> det(std::vector<float> v, Shape s, bool exact = false) {
  OpCase c;
  c.op_type = "Det";
  c.opset = 11;
  c.inputs = {f32(std::move(v), s)};
  c.exact = exact;
  return values<float>(run_op(c).outputs[0]);
}

TEST(OpsSignalTest, DetPivotsAndSigns) {
  EXPECT_EQ(det({2, 1, 1, 3}, Shape{2, 2}), (std::vector<float>{5}));
  EXPECT_EQ(det({0, 1, 1, 0}, Shape{2, 2}), (std::vector<float>{-1}));  // one row swap
  EXPECT_EQ(det({1, 2, 2, 4}, Shape{2, 2}), (std::vector<float>{0}));   // singular
  // [[0,0,1],[0,2,0],[3,0,0]]: det = -6 (swap rows 0 and 2, pivots 3, 2, 1).
  EXPECT_EQ(det({0, 0, 1, 0, 2, 0, 3, 0, 0}, Shape{3, 3}), (std::vector<float>{-6}));
  EXPECT_EQ(det({1, 0, 0, 1, 4, 0, 0, 4}, Shape{2, 2, 2}), (std::vector<float>{1, 16}));  // batched
  const float nan = std::nanf("");
  EXPECT_EQ(fbits(det({nan, 1, 1, 1}, Shape{2, 2}, true)[0]), 0x7FC00000u);
  expect_error([] { det({1, 2, 3, 4, 5, 6}, Shape{2, 3}); }, ErrorKind::InvalidModel, "[..., M, M]");
}

std::vector<float> dft(Tensor x, std::vector<ir::Attribute> attrs, Tensor len = Tensor()) {
  OpCase c;
  c.op_type = "DFT";
  c.opset = 17;
  c.attrs = std::move(attrs);
  c.inputs = {std::move(x)};
  if (!len.empty()) c.inputs.push_back(std::move(len));
  return values<float>(run_op(c).outputs[0]);
}

void expect_near_all(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6f) << i;
}

TEST(OpsSignalTest, DftImpulsePaddingTruncationInverse) {
  // The impulse [1, 0, 0, 0] transforms to ones.
  expect_near_all(dft(f32({1, 0, 0, 0}, Shape{1, 4, 1}), {}), {1, 0, 1, 0, 1, 0, 1, 0});
  // dft_length 4 on [1, 1]: zero-padded; X[k] = 1 + e^{-i pi k / 2} = (2,0), (1,-1), (0,0), (1,1).
  expect_near_all(dft(f32({1, 1}, Shape{1, 2, 1}), {}, i64({4}, Shape{})), {2, 0, 1, -1, 0, 0, 1, 1});
  // dft_length 2 on [1, 2, 3]: truncated to [1, 2]: (3, 0), (-1, 0).
  expect_near_all(dft(f32({1, 2, 3}, Shape{1, 3, 1}), {}, i64({2}, Shape{})), {3, 0, -1, 0});
  // onesided keeps bins 0..n/2.
  expect_near_all(dft(f32({1, 0, 0, 0}, Shape{1, 4, 1}), {attr_i("onesided", 1)}), {1, 0, 1, 0, 1, 0});
  // inverse of the ones spectrum is the impulse (divided by n).
  expect_near_all(dft(f32({1, 0, 1, 0, 1, 0, 1, 0}, Shape{1, 4, 2}), {attr_i("inverse", 1)}), {1, 0, 0, 0, 0, 0, 0, 0});
  expect_error([] { dft(f32({1, 2, 3}, Shape{1, 1, 3}), {}); }, ErrorKind::InvalidModel, "1 (real) or 2 (complex)");
  expect_error([] { dft(f32({1, 0}, Shape{1, 2, 1}), {}, i64({0}, Shape{})); }, ErrorKind::InvalidModel, "at least 1");
}

TEST(OpsSignalTest, WindowsByHand) {
  auto window = [](const char* op, int64_t n, int64_t periodic) {
    OpCase c;
    c.op_type = op;
    c.opset = 17;
    c.attrs = {attr_i("periodic", periodic)};
    c.inputs = {i64({n}, Shape{})};
    return values<float>(run_op(c).outputs[0]);
  };
  expect_near_all(window("HannWindow", 4, 1), {0, 0.5f, 1, 0.5f});
  expect_near_all(window("HannWindow", 3, 0), {0, 1, 0});
  expect_near_all(window("HammingWindow", 2, 1), {4.f / 46.f, 1});  // 25/46 -+ 21/46
  expect_near_all(window("BlackmanWindow", 2, 1), {0, 1});          // 0.42 - 0.5 + 0.08, 0.42 + 0.5 + 0.08
  expect_error([&] { window("HannWindow", -1, 1); }, ErrorKind::InvalidModel, "negative");
}

}  // namespace
}  // namespace onemodel::test

namespace onemodel::test {
namespace {

// Pool: unigrams {5} -> column 1, {7} -> column 0; bigram {5, 7} -> column 2. Input 5 7 5 7 5.
std::vector<float> tfidf(const std::string& mode, std::vector<float> weights, int64_t skip = 0) {
  OpCase c;
  c.op_type = "TfIdfVectorizer";
  c.opset = 9;
  c.attrs = {attr_s("mode", mode),
             attr_i("min_gram_length", 1),
             attr_i("max_gram_length", 2),
             attr_i("max_skip_count", skip),
             attr_ints("ngram_counts", {0, 2}),
             attr_ints("ngram_indexes", {1, 0, 2}),
             attr_ints("pool_int64s", {5, 7, 5, 7})};
  if (!weights.empty()) c.attrs.push_back(attr_floats("weights", std::move(weights)));
  const std::vector<int64_t> x = {5, 7, 5, 7, 5};
  c.inputs = {Tensor::from_values(std::span<const int64_t>(x), Shape{5})};
  return values<float>(run_op(c).outputs[0]);
}

TEST(OpsTfIdfTest, ModesWeightsAndSkips) {
  // Counts: 7 twice (column 0), 5 three times (column 1), bigram 5 7 twice (column 2).
  EXPECT_EQ(tfidf("TF", {}), (std::vector<float>{2, 3, 2}));
  // Weights follow the pool order: {5}: 0.5, {7}: 4, {5, 7}: 10.
  EXPECT_EQ(tfidf("TFIDF", {0.5f, 4.f, 10.f}), (std::vector<float>{8, 1.5f, 20}));
  EXPECT_EQ(tfidf("IDF", {0.5f, 4.f, 10.f}), (std::vector<float>{4, 0.5f, 10}));
  // Skip up to 1 also pairs tokens two apart: (5,5), (7,7), (5,5), none in the pool; unigrams still count once.
  EXPECT_EQ(tfidf("TF", {}, 1), (std::vector<float>{2, 3, 2}));
  expect_error(
      [] {
        OpCase c;
        c.op_type = "TfIdfVectorizer";
        c.opset = 9;
        c.attrs = {attr_s("mode", "TF"),
                   attr_i("min_gram_length", 2),
                   attr_i("max_gram_length", 2),
                   attr_i("max_skip_count", 0),
                   attr_ints("ngram_counts", {0, 1}),
                   attr_ints("ngram_indexes", {0}),
                   attr_ints("pool_int64s", {5, 7})};
        c.inputs = {Tensor::from_values(std::span<const int64_t>(std::vector<int64_t>{1}), Shape{1})};
        run_op(c);
      },
      ErrorKind::InvalidModel, "whole 2-grams");
}

}  // namespace
}  // namespace onemodel::test
