// libFuzzer target: any bytes loaded as a model the way users load one (Session::load_bytes chooses ONNX or
// the OneModel format by the magic bytes, then imports, runs the graph passes and compiles), and, when it
// loads, one run on small inputs. Odd-length inputs run in exact mode, even-length ones in fast mode, so both
// planners and both kernel families are reached; (length / 2) % 3 picks float32, float16 or bfloat16 weight
// storage. A typed onemodel::Error is the only acceptable failure
// (docs/fuzzing.md).
//
// Inputs are kept small so that a run costs little: fixed dimensions above 64 or more than 4096 elements in
// an input end the case before the run (the load is still fuzzed), symbolic dimensions are 2. Values are a
// fixed pattern of small numbers: 0 and 1 for integers (valid indices for most gathers), -1..1 for floats.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "onemodel/dtype.h"
#include "onemodel/error.h"
#include "onemodel/session.h"
#include "onemodel/tensor.h"

namespace {

using namespace onemodel;

constexpr int64_t kMaxDim = 64;
constexpr int64_t kMaxInputElements = 4096;

bool fillable(DType t) { return dtype_is_float(t) || dtype_is_integer(t) || t == DType::Bool; }

// A small input of the declared type and shape, or an empty tensor when the declaration is out of reach.
Tensor make_input(const ValueInfo& info) {
  if (info.kind != ValueKind::Tensor || !info.has_shape || !fillable(info.dtype)) return {};
  std::vector<int64_t> dims;
  int64_t numel = 1;
  for (const Dim& d : info.dims) {
    const int64_t v = d.is_fixed() ? d.value : 2;
    if (v > kMaxDim) return {};
    dims.push_back(v);
    numel *= v;
    if (numel > kMaxInputElements) return {};
  }
  if (!Shape::valid(dims)) return {};
  Tensor t = Tensor::zeros(info.dtype, Shape(dims));
  const size_t width = dtype_size(info.dtype);
  auto* bytes = static_cast<std::byte*>(t.raw_mut());
  for (int64_t i = 0; i < numel; ++i) {
    std::byte* at = bytes + static_cast<size_t>(i) * width;
    if (info.dtype == DType::F32) {
      const float v = static_cast<float>(i % 5 - 2) * 0.5f;
      std::memcpy(at, &v, sizeof v);
    } else if (info.dtype == DType::F64) {
      const double v = static_cast<double>(i % 5 - 2) * 0.5;
      std::memcpy(at, &v, sizeof v);
    } else if (!dtype_is_float(info.dtype)) {
      at[0] = std::byte{static_cast<unsigned char>(i & 1)};  // little-endian 0 or 1 of any integer width
    }
    // float16 / bfloat16 stay zero.
  }
  return t;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  SessionOptions options;
  options.mode = (size & 1) ? Mode::Exact : Mode::Fast;
  options.intra_op_threads = 1;
  // The weight storage from the length too, so the compaction of docs/fp16.md section 6 meets hostile graphs.
  options.weight_storage = static_cast<WeightStorage>((size / 2) % 3);
  try {
    const Session session =
        Session::load_bytes(std::span(reinterpret_cast<const std::byte*>(data), size), options, "fuzz");
    std::vector<NamedTensor> inputs;
    for (const ValueInfo& info : session.inputs()) {
      Tensor t = make_input(info);
      if (t.empty()) return 0;
      inputs.push_back({info.name, std::move(t)});
    }
    session.run(inputs);
  } catch (const Error&) {
  }
  return 0;
}
