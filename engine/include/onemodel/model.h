// The happy path (getting-started.md): load a model, pass values in row-major order, get the single output.
// Names and shapes come from the model, a text encoder's mask and segment ids are filled in; for other inputs or
// several outputs use session().
#pragma once
#include <filesystem>
#include <span>
#include <vector>

#include "onemodel/session.h"

namespace onemodel {

class Model {
 public:
  static Model load(const std::filesystem::path& path, const SessionOptions& options = {});
  static Model load_bytes(std::span<const std::byte> bytes, const SessionOptions& options = {});

  // One input, one output; on a text encoder the values are the token ids and `attention_mask` (ones) and
  // `token_type_ids` (zeros) are filled in, in their shape. Without `shape`, the model's declared dims are
  // used, and a single symbolic or unknown dimension takes whatever extent makes the element count match (so 4
  // values are one row of [batch, 4]; [batch, sequence] with neither fixed is one sequence). The output is
  // converted to float if it is another numeric type. Rules: graph-runtime.md section 4.
  std::vector<float> run(std::span<const float> input, std::span<const int64_t> shape = {}) const;
  std::vector<float> run(std::span<const int64_t> input, std::span<const int64_t> shape = {}) const;
  std::vector<float> run(std::span<const int32_t> input, std::span<const int64_t> shape = {}) const;

  const Session& session() const { return session_; }

 private:
  explicit Model(Session s) : session_(std::move(s)) {}
  Session session_;
};

}  // namespace onemodel
