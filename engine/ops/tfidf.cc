// TfIdfVectorizer (opset 9) for integer inputs (string pools are outside our types: a typed error). The pool
// holds the n-grams grouped by length: ngram_counts[i] is where the (i + 1)-grams start. The j-th n-gram of the
// pool, counted across the groups in pool order, is counted into output column ngram_indexes[j].
// For each row and start position, and each skip s in 0..max_skip_count, the n-gram takes every (s + 1)-th
// token; lengths min_gram_length..max_gram_length are looked up. A unigram does not depend on the skip, so it
// is counted once per position. TF = counts, IDF = min(count, 1) * weight, TFIDF = count * weight (weights
// default to 1). Counts are small integers and the weights one multiplication each: exact.
#include <algorithm>
#include <map>

#include "ops/common.h"
#include "ops/ops.h"

namespace onemodel::rt {
namespace {

enum class TfMode { Tf, Idf, TfIdf };

class TfIdfKernel final : public Kernel {
 public:
  TfIdfKernel(TfMode mode, int64_t min_n, int64_t max_n, int64_t max_skip, std::map<std::vector<int64_t>, int64_t> pool,
              std::vector<float> weights, int64_t columns)
      : Kernel(KernelFlags{.exact = true}),
        mode_(mode),
        min_n_(min_n),
        max_n_(max_n),
        max_skip_(max_skip),
        pool_(std::move(pool)),
        weights_(std::move(weights)),
        columns_(columns) {}

  void infer(InferContext& ctx) const override {
    const InputMeta& x = ctx.input(0);
    if (x.dtype != DType::I32 && x.dtype != DType::I64)
      ctx.fail(ErrorKind::Unsupported,
               "input type " + type_str(x.dtype) + " is not supported (int32 or int64 pools only)");
    if (x.shape.rank() == 1)
      ctx.set_output(0, DType::F32, Shape{columns_});
    else if (x.shape.rank() == 2)
      ctx.set_output(0, DType::F32, Shape{x.shape[0], columns_});
    else
      ctx.fail(ErrorKind::InvalidModel, "input must be [C] or [N, C], not " + x.shape.to_string());
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    const int64_t rows = x.rank() == 2 ? x.shape()[0] : 1;
    const int64_t len = x.shape()[x.rank() - 1];
    if (y.numel() != rows * columns_) ctx.fail(ErrorKind::InvalidInput, "input does not match the planned output");
    float* py = y.mutable_data<float>().data();
    std::fill(py, py + y.numel(), 0.0f);
    std::vector<int64_t> gram;
    for (int64_t r = 0; r < rows; ++r) {
      auto token = [&](int64_t i) -> int64_t {
        return x.dtype() == DType::I32 ? x.data<int32_t>()[static_cast<size_t>(r * len + i)]
                                       : x.data<int64_t>()[static_cast<size_t>(r * len + i)];
      };
      float* row = py + r * columns_;
      for (int64_t start = 0; start < len; ++start)
        for (int64_t skip = 0; skip <= max_skip_; ++skip)
          for (int64_t n = std::max<int64_t>(min_n_, 1); n <= max_n_; ++n) {
            if (n == 1 && skip > 0) continue;
            if (start + (n - 1) * (skip + 1) >= len) break;
            gram.clear();
            for (int64_t k = 0; k < n; ++k) gram.push_back(token(start + k * (skip + 1)));
            auto it = pool_.find(gram);
            if (it != pool_.end()) row[it->second] += 1.0f;
          }
      for (int64_t col = 0; col < columns_; ++col) {
        float& v = row[col];
        const float w = weights_[static_cast<size_t>(col)];
        if (mode_ == TfMode::Idf)
          v = (v > 0 ? 1.0f : 0.0f) * w;
        else if (mode_ == TfMode::TfIdf)
          v = v * w;
      }
    }
  }

 private:
  TfMode mode_;
  int64_t min_n_, max_n_, max_skip_;
  std::map<std::vector<int64_t>, int64_t> pool_;
  std::vector<float> weights_;  // per output column (the weight of the pool n-gram counted there)
  int64_t columns_;
};

}  // namespace

std::unique_ptr<Kernel> make_tfidf_vectorizer(const NodeInfo& info) {
  if (info.has("pool_strings")) info.fail(ErrorKind::Unsupported, "string pools (pool_strings) are not supported");
  const std::string m = info.get_string("mode", "");
  TfMode mode;
  if (m == "TF")
    mode = TfMode::Tf;
  else if (m == "IDF")
    mode = TfMode::Idf;
  else if (m == "TFIDF")
    mode = TfMode::TfIdf;
  else
    info.fail(ErrorKind::InvalidModel, "mode '" + m + "' is not TF, IDF or TFIDF");
  const int64_t min_n = info.get_int("min_gram_length", 0), max_n = info.get_int("max_gram_length", 0);
  const int64_t max_skip = info.get_int("max_skip_count", 0);
  const std::vector<int64_t> counts = info.get_ints("ngram_counts"), indexes = info.get_ints("ngram_indexes");
  const std::vector<int64_t> pool = info.get_ints("pool_int64s");
  const std::vector<float> weights = info.get_floats("weights");
  if (min_n < 1 || max_n < min_n || max_skip < 0 || max_n > 64)
    info.fail(ErrorKind::InvalidModel, "needs 1 <= min_gram_length <= max_gram_length <= 64 and max_skip_count >= 0");
  if (counts.empty() || static_cast<int64_t>(counts.size()) < max_n)
    info.fail(ErrorKind::InvalidModel, "ngram_counts must have an entry for every n-gram length up to max_gram_length");
  std::map<std::vector<int64_t>, int64_t> grams;
  size_t j = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    const int64_t begin = counts[i], end = i + 1 < counts.size() ? counts[i + 1] : static_cast<int64_t>(pool.size());
    const auto n = static_cast<int64_t>(i + 1);
    if (begin < 0 || end < begin || end > static_cast<int64_t>(pool.size()) || (end - begin) % n != 0)
      info.fail(ErrorKind::InvalidModel,
                "ngram_counts does not split pool_int64s into whole " + std::to_string(n) + "-grams");
    for (int64_t p = begin; p < end; p += n, ++j) {
      if (j >= indexes.size())
        info.fail(ErrorKind::InvalidModel, "ngram_indexes has fewer entries than the pool has n-grams");
      if (indexes[j] < 0 || indexes[j] > (int64_t{1} << 24))
        info.fail(ErrorKind::InvalidModel, "ngram_indexes entry out of range");
      grams.emplace(std::vector<int64_t>(pool.begin() + p, pool.begin() + p + n), indexes[j]);
    }
  }
  if (!weights.empty() && weights.size() != j)
    info.fail(ErrorKind::InvalidModel, "weights must have one entry per pool n-gram");
  const int64_t columns = indexes.empty() ? 0 : *std::max_element(indexes.begin(), indexes.end()) + 1;
  std::vector<float> column_weights(static_cast<size_t>(columns), 1.0f);
  if (!weights.empty())
    for (size_t g = 0; g < j; ++g) column_weights[static_cast<size_t>(indexes[g])] = weights[g];
  return std::make_unique<TfIdfKernel>(mode, min_n, max_n, max_skip, std::move(grams), std::move(column_weights),
                                       columns);
}

}  // namespace onemodel::rt
