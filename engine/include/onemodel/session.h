// Sessions (graph-runtime.md section 4): created once per model, thread-safe run, plans cached per set of
// input element types and shapes. A Session is a cheap handle (shared ownership); copies share one model.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "onemodel/dtype.h"
#include "onemodel/error.h"
#include "onemodel/profile.h"
#include "onemodel/tensor.h"

namespace onemodel {

enum class Mode { Fast, Exact };
enum class OptimizationLevel { None, Basic, All };

// How float32 weights are kept (docs/fp16.md, compact weights): as the model has them, or the large weights of
// MatMul, Gemm and Conv rounded to binary16 or bfloat16 and widened for each use.
enum class WeightStorage { Float32, Float16, BFloat16 };

struct SessionOptions {
  Mode mode = Mode::Fast;
  int intra_op_threads = 0;  // 0 = one per logical core, at most 256; changes speed only, never results
  OptimizationLevel optimization_level = OptimizationLevel::All;
  int max_cached_plans = 16;  // >= 1
  // Directory external data is resolved against when loading from bytes (empty: external data refused).
  // For a file path the model's own directory is used and this is ignored.
  std::string external_data_dir;
  int max_nesting = 128;  // protobuf nesting limit, 8..250
  // Float16 / BFloat16: the constant input-1 weights of MatMul, Gemm and Conv (at least 1024 values, read by
  // nothing else, finite, and for Float16 within its range) are kept rounded to 16 bits and widened into run
  // memory for each use; results are those of the model with those weights rounded beforehand (docs/fp16.md).
  WeightStorage weight_storage = WeightStorage::Float32;
};

// A dimension as the model declares it: a fixed extent (value >= 0), a symbolic name, or unknown.
struct Dim {
  int64_t value = -1;
  std::string param;
  bool is_fixed() const { return value >= 0; }
};

enum class ValueKind { Tensor, Sequence, Optional, Map, SparseTensor, Opaque, Unknown };

// kind Sequence: `dtype` is the items' element type. kind Optional: `element_kind` says whether it holds a
// tensor or a sequence, and `dtype` is that content's element type. Shapes are given for tensors only.
struct ValueInfo {
  std::string name;
  ValueKind kind = ValueKind::Tensor;
  DType dtype = DType::Undefined;
  bool has_shape = false;  // false: unknown rank
  std::vector<Dim> dims;
  ValueKind element_kind = ValueKind::Unknown;  // Optional only: Tensor or Sequence (Unknown: undeclared)
};

class Value;  // onemodel/value.h
struct NamedValue;

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

class Session {
 public:
  static Session load(const std::filesystem::path& path, const SessionOptions& options = {});
  // The bytes are copied once; the caller may free them when this returns.
  static Session load_bytes(std::span<const std::byte> bytes, const SessionOptions& options = {},
                            std::string_view source_name = "<bytes>");

  const std::vector<ValueInfo>& inputs() const;
  const std::vector<ValueInfo>& outputs() const;
  const SessionOptions& options() const;
  // "Avx512", "Avx2", "Sse4", "Scalar" or "Wasm128": the kernels this session runs on.
  std::string_view kernel_path() const;
  // The threads a run of this session uses, the calling one included: options().intra_op_threads resolved
  // (0 = one per logical core); 1 in a wasm build without threads (docs/wasm-threads.md).
  int threads() const;
  // The graph passes this session ran (docs/architecture.md "Graph passes") as (pass name, patterns
  // rewritten); exact mode runs only the passes that keep bits (docs/graph-passes.md), so there it lists at
  // most those (fuse-elementwise at level All). The list is the session handle's own copy: release() does not
  // free it (a reference stays valid while this Session lives; calls after release() throw Disposed).
  const std::vector<std::pair<std::string, int>>& graph_passes() const;
  // Opset imports of the model as (domain, version); the empty domain is ai.onnx.
  const std::vector<std::pair<std::string, int64_t>>& opsets() const;

  // Tensor form: every model input exactly once, by name, any order. Returns the outputs named in
  // `output_names` (all model outputs, in model order, when empty).
  std::vector<Tensor> run(std::span<const NamedTensor> inputs, std::span<const std::string> output_names = {}) const;
  // The spec's form: outputs[i] receives output_names[i]; an empty Tensor is replaced by a new one, a tensor
  // of the right type and shape is overwritten in place, anything else is Error(InvalidInput).
  void run(std::span<const std::string> input_names, std::span<const Tensor> inputs,
           std::span<const std::string> output_names, std::span<Tensor> outputs) const;
  // Value form (onemodel/value.h): inputs and outputs may be tensors, sequences or optionals. Every model
  // input exactly once, by name; an optional input also accepts a plain value of its content kind. Returns
  // the outputs named in `output_names` (all, in model order, when empty); returned tensors own their data.
  std::vector<Value> run_values(std::span<const NamedValue> inputs,
                                std::span<const std::string> output_names = {}) const;
  // Span form for single-input, single-output models: copies `input` (shaped `shape`) in and the output
  // into `output`; returns the output shape. Error(InvalidInput) if `output` is too short.
  std::vector<int64_t> run_into(DType in_type, const void* input, size_t input_bytes, std::span<const int64_t> shape,
                                DType out_type, void* output, size_t output_bytes) const;
  template <class TIn, class TOut>
  std::vector<int64_t> run(std::span<const TIn> input, std::span<const int64_t> shape, std::span<TOut> output) const {
    return run_into(DTypeOf<TIn>::value, input.data(), input.size_bytes(), shape, DTypeOf<TOut>::value, output.data(),
                    output.size_bytes());
  }

  // Profiling (docs/profiling.md): from start_profiling on, every run of this session times each node;
  // end_profiling stops and returns the per-node and per-operator-type times of the runs in between.
  // Starting again clears what was recorded. Results are unchanged; only timing is added.
  void start_profiling() const;
  Profile end_profiling() const;

  // Frees the model once no run uses it; later calls throw Error(Disposed).
  void release();

  struct Impl;
  explicit Session(std::shared_ptr<Impl> impl);
  const std::shared_ptr<Impl>& impl() const { return impl_; }

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace onemodel
