// Input and output matching for Session::run, plus the strided copy used to make inputs contiguous. The
// messages name the input and say what was expected, because these are the errors users actually meet.
#include "runtime/inputs.h"

#include <cstdint>
#include <cstring>

namespace onemodel::rt {

namespace {

std::string names_of(const std::vector<ValueInfo>& infos) {
  std::string s;
  for (size_t i = 0; i < infos.size(); ++i) s += (i ? ", " : "") + infos[i].name;
  return s.empty() ? "(none)" : s;
}

[[noreturn]] void invalid(const std::string& message) { throw Error(ErrorKind::InvalidInput, message); }

}  // namespace

void copy_into(const Tensor& t, void* dst) {
  const size_t es = dtype_size(t.dtype());
  const int64_t n = t.numel();
  if (n == 0) return;
  if (t.is_contiguous()) {
    std::memcpy(dst, t.raw(), static_cast<size_t>(n) * es);
    return;
  }
  // Odometer walk over the logical indices; the source address follows the strides.
  const int rank = t.rank();
  int64_t index[kMaxRank] = {};
  const auto* base = static_cast<const std::byte*>(t.raw());
  auto* out = static_cast<std::byte*>(dst);
  int64_t src_elem = 0;
  for (int64_t k = 0; k < n; ++k) {
    std::memcpy(out + static_cast<size_t>(k) * es, base + src_elem * static_cast<int64_t>(es), es);
    for (int d = rank - 1; d >= 0; --d) {
      src_elem += t.strides()[static_cast<size_t>(d)];
      if (++index[d] < t.shape()[d]) break;
      src_elem -= t.strides()[static_cast<size_t>(d)] * t.shape()[d];
      index[d] = 0;
    }
  }
}

Tensor contiguous_copy(const Tensor& t) {
  Tensor out = Tensor::zeros(t.dtype(), t.shape());
  copy_into(t, out.raw_mut());
  return out;
}

Tensor usable(const Tensor& t) { return readable_in_place(t) ? t : contiguous_copy(t); }

std::string dims_to_string(const std::vector<Dim>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ", ";
    s += dims[i].is_fixed() ? std::to_string(dims[i].value) : (dims[i].param.empty() ? "?" : dims[i].param);
  }
  return s + "]";
}

void check_input(const ValueInfo& info, DType dtype, const Shape& shape) {
  if (info.kind == ValueKind::Sequence || info.kind == ValueKind::Optional)
    invalid("input '" + info.name + "' is " + (info.kind == ValueKind::Sequence ? "a sequence" : "an optional") +
            "; pass it as a Value (Session::run_values)");
  if (!dtype_is_stored(dtype))
    invalid("input '" + info.name + "' has element type " + std::string(dtype_name(dtype)) +
            ", which is not supported");
  if (info.dtype != DType::Undefined && dtype != info.dtype)
    invalid("input '" + info.name + "' must be " + std::string(dtype_short_name(info.dtype)) + ", got " +
            std::string(dtype_short_name(dtype)));
  if (!info.has_shape) return;
  // A declared scalar takes a tensor of any shape, as ONNX Runtime does (graph-runtime.md section 4,
  // "Inputs"): exporters declare scalars loosely, and clients written for ORT feed them as [1] (Silero VAD's
  // `sr` in @ricky0123/vad-node). The graph then runs on the shape fed.
  if (info.dims.empty()) return;
  if (static_cast<size_t>(shape.rank()) != info.dims.size())
    invalid("input '" + info.name + "' must have rank " + std::to_string(info.dims.size()) + " " +
            dims_to_string(info.dims) + ", got shape " + shape.to_string());
  for (size_t d = 0; d < info.dims.size(); ++d)
    if (info.dims[d].is_fixed() && shape[static_cast<int>(d)] != info.dims[d].value)
      invalid("input '" + info.name + "' dimension " + std::to_string(d) + " must be " +
              std::to_string(info.dims[d].value) + " " + dims_to_string(info.dims) + ", got shape " +
              shape.to_string());
}

namespace {
// For each model input, the index of the caller's name for it; every input named exactly once, no unknown names.
std::vector<size_t> slots_of(const std::vector<ValueInfo>& model_inputs, std::span<const std::string> names,
                             size_t given, const char* what) {
  if (names.size() != given)
    invalid(std::to_string(names.size()) + " input names were given for " + std::to_string(given) + " " + what);
  constexpr size_t kUnset = static_cast<size_t>(-1);
  std::vector<size_t> slot(model_inputs.size(), kUnset);
  for (size_t k = 0; k < names.size(); ++k) {
    size_t i = 0;
    while (i < model_inputs.size() && model_inputs[i].name != names[k]) ++i;
    if (i == model_inputs.size())
      invalid("unknown input '" + names[k] + "'; the model's inputs are: " + names_of(model_inputs));
    if (slot[i] != kUnset) invalid("input '" + names[k] + "' is given more than once");
    slot[i] = k;
  }
  for (size_t i = 0; i < model_inputs.size(); ++i)
    if (slot[i] == kUnset) invalid("missing input '" + model_inputs[i].name + "'");
  return slot;
}
}  // namespace

std::vector<size_t> match_inputs(const std::vector<ValueInfo>& model_inputs, std::span<const std::string> names,
                                 std::span<const Tensor> tensors) {
  std::vector<size_t> slot = slots_of(model_inputs, names, tensors.size(), "tensors");
  for (size_t i = 0; i < model_inputs.size(); ++i) {
    const Tensor& t = tensors[slot[i]];
    if (t.empty()) invalid("input '" + model_inputs[i].name + "' is an empty tensor (no storage)");
    check_input(model_inputs[i], t.dtype(), t.shape());
  }
  return slot;
}

namespace {

const char* kind_text(ValueKind k) {
  switch (k) {
    case ValueKind::Tensor: return "a tensor";
    case ValueKind::Sequence: return "a sequence";
    case ValueKind::Optional: return "an optional";
    default: return "no value";
  }
}

void check_items(const ValueInfo& info, const Value& seq) {
  for (size_t k = 0; k < seq.items().size(); ++k) {
    const Tensor& t = seq.items()[k];
    if (!dtype_is_stored(t.dtype()))
      invalid("input '" + info.name + "' item " + std::to_string(k) + " has element type " +
              std::string(dtype_name(t.dtype())) + ", which is not supported");
  }
  if (info.dtype != DType::Undefined && seq.elem_type() != DType::Undefined && seq.elem_type() != info.dtype)
    invalid("input '" + info.name + "' must be a sequence of " + std::string(dtype_short_name(info.dtype)) +
            ", got a sequence of " + std::string(dtype_short_name(seq.elem_type())));
}

// Sequence items and optional contents: plain tensor inputs get the same treatment in RunState::set_input.

Value usable_value(const Value& v) {
  switch (v.kind()) {
    case ValueKind::Tensor: return Value(usable(v.tensor()));
    case ValueKind::Sequence: {
      std::vector<Tensor> items;
      items.reserve(v.items().size());
      for (const Tensor& t : v.items()) items.push_back(usable(t));
      return Value::sequence(std::move(items), v.elem_type());
    }
    case ValueKind::Optional: return v.has_element() ? Value::optional(usable_value(v.element())) : v;
    default: return v;
  }
}

// Checks `v` against `info` and returns it, wrapped into an optional when the input is an optional.
Value check_value(const ValueInfo& info, const Value& v) {
  if (v.empty()) invalid("input '" + info.name + "' has no value");
  switch (info.kind) {
    case ValueKind::Tensor:
      if (!v.is_tensor()) invalid("input '" + info.name + "' must be a tensor, got " + kind_text(v.kind()));
      check_input(info, v.tensor().dtype(), v.tensor().shape());
      return v;
    case ValueKind::Sequence:
      if (v.kind() != ValueKind::Sequence)
        invalid("input '" + info.name + "' must be a sequence, got " + kind_text(v.kind()));
      check_items(info, v);
      return usable_value(v);
    case ValueKind::Optional: {
      Value opt = v.kind() == ValueKind::Optional ? v : Value::optional(v);
      if (info.element_kind != ValueKind::Unknown && opt.content_kind() != ValueKind::Unknown &&
          opt.content_kind() != info.element_kind)
        invalid("input '" + info.name + "' is an optional of " + kind_text(info.element_kind) + ", got " +
                (v.kind() == ValueKind::Optional ? "an optional of " : "") + kind_text(opt.content_kind()));
      if (opt.has_element()) {
        const Value& e = opt.element();
        if (e.is_tensor()) {
          ValueInfo inner = info;
          inner.kind = ValueKind::Tensor;
          check_input(inner, e.tensor().dtype(), e.tensor().shape());
        } else {
          check_items(info, e);
        }
      } else if (info.dtype != DType::Undefined && opt.elem_type() != DType::Undefined &&
                 opt.elem_type() != info.dtype) {
        invalid("input '" + info.name + "' must hold " + std::string(dtype_short_name(info.dtype)) + ", got " +
                std::string(dtype_short_name(opt.elem_type())));
      }
      return usable_value(opt);
    }
    default:
      if (v.is_tensor()) check_input(info, v.tensor().dtype(), v.tensor().shape());
      return usable_value(v);
  }
}

}  // namespace

std::vector<size_t> match_value_inputs(const std::vector<ValueInfo>& model_inputs, std::span<const std::string> names,
                                       std::span<const Value> values, std::vector<Value>& normalized) {
  std::vector<size_t> slot = slots_of(model_inputs, names, values.size(), "values");
  normalized.clear();
  for (size_t i = 0; i < model_inputs.size(); ++i) normalized.push_back(check_value(model_inputs[i], values[slot[i]]));
  return slot;
}

std::vector<size_t> match_outputs(const std::vector<ValueInfo>& model_outputs, std::span<const std::string> names) {
  std::vector<size_t> idx;
  if (names.empty()) {
    for (size_t i = 0; i < model_outputs.size(); ++i) idx.push_back(i);
    return idx;
  }
  for (const std::string& n : names) {
    size_t i = 0;
    while (i < model_outputs.size() && model_outputs[i].name != n) ++i;
    if (i == model_outputs.size())
      invalid("unknown output '" + n + "'; the model's outputs are: " + names_of(model_outputs));
    idx.push_back(i);
  }
  return idx;
}

}  // namespace onemodel::rt
