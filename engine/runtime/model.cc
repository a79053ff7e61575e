// The happy path (graph-runtime.md section 4, getting-started.md): one input, one output, shapes taken from the
// model. A single symbolic or unknown dimension absorbs the element count, so four values for [batch, 4] are
// one row. A text encoder's attention_mask and token_type_ids are filled in by Model::run itself.
#include "onemodel/model.h"

#include <string>

#include "base/fp16.h"
#include "runtime/inputs.h"

namespace onemodel {

namespace {

[[noreturn]] void invalid(const std::string& message) { throw Error(ErrorKind::InvalidInput, message); }

// The inputs Model::run feeds: the values passed, plus a text encoder's mask (ones) and segment ids (zeros) in
// their shape when the model declares them (graph-runtime.md section 4, "The happy path").
struct HappyInputs {
  const ValueInfo* values = nullptr;
  const ValueInfo* mask = nullptr;      // attention_mask
  const ValueInfo* segments = nullptr;  // token_type_ids
};

HappyInputs happy_inputs(const Session& s) {
  HappyInputs h;
  int others = 0;
  for (const ValueInfo& in : s.inputs()) {
    if (in.name == "attention_mask") {
      h.mask = &in;
    } else if (in.name == "token_type_ids") {
      h.segments = &in;
    } else {
      h.values = &in;
      ++others;
    }
  }
  if (s.outputs().size() != 1 || others != 1)
    invalid(
        "Model::run needs a model with one output and one input (a text encoder's attention_mask and "
        "token_type_ids are filled in); this one has " +
        std::to_string(s.inputs().size()) + " inputs and " + std::to_string(s.outputs().size()) +
        " outputs (use session() for named inputs and outputs)");
  return h;
}

std::vector<int64_t> infer_shape(const ValueInfo& info, size_t count) {
  const auto n = static_cast<int64_t>(count);
  if (!info.has_shape) return {n};  // unknown rank: a flat vector
  // [batch, sequence] with neither extent fixed: one sequence (one row).
  if (info.dims.size() == 2 && !info.dims[0].is_fixed() && !info.dims[1].is_fixed()) return {1, n};
  std::vector<int64_t> dims(info.dims.size());
  int64_t fixed = 1;
  int free_dim = -1;
  for (size_t i = 0; i < info.dims.size(); ++i) {
    if (info.dims[i].is_fixed()) {
      dims[i] = info.dims[i].value;
      fixed *= dims[i];
      continue;
    }
    if (free_dim >= 0)
      invalid("input '" + info.name + "' " + rt::dims_to_string(info.dims) +
              " has more than one symbolic or unknown dimension; pass a shape");
    free_dim = static_cast<int>(i);
  }
  if (free_dim < 0) {
    if (fixed != n)
      invalid("input '" + info.name + "' " + rt::dims_to_string(info.dims) + " needs " + std::to_string(fixed) +
              " values, got " + std::to_string(n));
    return dims;
  }
  if (fixed == 0 ? n != 0 : n % fixed != 0)
    invalid("input '" + info.name + "' " + rt::dims_to_string(info.dims) + ": " + std::to_string(n) +
            " values are not a whole number of " + std::to_string(fixed) + "-value rows");
  dims[static_cast<size_t>(free_dim)] = fixed == 0 ? 0 : n / fixed;
  return dims;
}

template <class T>
void convert(const Tensor& t, std::vector<float>& out) {
  auto d = t.data<T>();
  for (size_t i = 0; i < d.size(); ++i) out[i] = static_cast<float>(d[i]);
}

std::vector<float> to_float(const Tensor& t) {
  std::vector<float> out(static_cast<size_t>(t.numel()));
  const auto* raw = static_cast<const uint16_t*>(t.raw());
  switch (t.dtype()) {
    case DType::F32: convert<float>(t, out); break;
    case DType::F64: convert<double>(t, out); break;
    case DType::I8: convert<int8_t>(t, out); break;
    case DType::I16: convert<int16_t>(t, out); break;
    case DType::I32: convert<int32_t>(t, out); break;
    case DType::I64: convert<int64_t>(t, out); break;
    case DType::U8: convert<uint8_t>(t, out); break;
    case DType::U16: convert<uint16_t>(t, out); break;
    case DType::U32: convert<uint32_t>(t, out); break;
    case DType::U64: convert<uint64_t>(t, out); break;
    case DType::Bool: convert<bool>(t, out); break;
    case DType::F16:
      for (size_t i = 0; i < out.size(); ++i) out[i] = half_to_float(raw[i]);
      break;
    case DType::BF16:
      for (size_t i = 0; i < out.size(); ++i) out[i] = bf16_to_float(raw[i]);
      break;
    default:
      throw Error(ErrorKind::Unsupported,
                  "output element type " + std::string(dtype_name(t.dtype())) + " cannot be converted to float");
  }
  return out;
}

// A tensor of `shape` whose every element is `value`: one element broadcast by a stride-0 view (the session
// copies it into the run's arena).
template <class T>
Tensor constant(T value, const Shape& shape) {
  return Tensor::from_values<T>({value}, Shape()).expand(shape);
}

// Ones or zeros in `info`'s declared element type.
Tensor filled(const ValueInfo& info, bool one, const Shape& shape) {
  switch (info.dtype) {
    case DType::I64: return constant<int64_t>(one, shape);
    case DType::I32: return constant<int32_t>(one, shape);
    case DType::F32: return constant<float>(one, shape);
    default:
      invalid("Model::run fills input '" + info.name + "' only as int64, int32 or float32, not " +
              std::string(dtype_name(info.dtype)) + " (use session() with named tensors)");
  }
}

template <class T>
std::vector<float> run_values(const Session& s, std::span<const T> input, std::span<const int64_t> shape) {
  const HappyInputs h = happy_inputs(s);
  const ValueInfo& info = *h.values;
  std::vector<int64_t> dims =
      shape.empty() ? infer_shape(info, input.size()) : std::vector<int64_t>(shape.begin(), shape.end());
  if (!Shape::valid(dims)) invalid("input '" + info.name + "': invalid shape");
  Shape sh(dims);
  if (static_cast<size_t>(sh.numel()) != input.size())
    invalid("input '" + info.name + "' of shape " + sh.to_string() + " needs " + std::to_string(sh.numel()) +
            " values, got " + std::to_string(input.size()));
  std::vector<NamedTensor> in;
  in.push_back({info.name, Tensor::from_values<T>(input, sh)});
  if (h.mask) in.push_back({h.mask->name, filled(*h.mask, true, sh)});
  if (h.segments) in.push_back({h.segments->name, filled(*h.segments, false, sh)});
  std::vector<Tensor> out = s.run(in);
  return to_float(out.at(0));
}

}  // namespace

Model Model::load(const std::filesystem::path& path, const SessionOptions& options) {
  return Model(Session::load(path, options));
}

Model Model::load_bytes(std::span<const std::byte> bytes, const SessionOptions& options) {
  return Model(Session::load_bytes(bytes, options));
}

std::vector<float> Model::run(std::span<const float> input, std::span<const int64_t> shape) const {
  return run_values(session_, input, shape);
}
std::vector<float> Model::run(std::span<const int64_t> input, std::span<const int64_t> shape) const {
  return run_values(session_, input, shape);
}
std::vector<float> Model::run(std::span<const int32_t> input, std::span<const int64_t> shape) const {
  return run_values(session_, input, shape);
}

}  // namespace onemodel
