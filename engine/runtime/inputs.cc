// Input and output matching for Session::run, plus the strided copy used to make inputs contiguous. The
// messages name the input and say what was expected, because these are the errors users actually meet.
#include "runtime/inputs.h"

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

std::string dims_to_string(const std::vector<Dim>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ", ";
    s += dims[i].is_fixed() ? std::to_string(dims[i].value) : (dims[i].param.empty() ? "?" : dims[i].param);
  }
  return s + "]";
}

void check_input(const ValueInfo& info, DType dtype, const Shape& shape) {
  if (!dtype_is_stored(dtype))
    invalid("input '" + info.name + "' has element type " + std::string(dtype_name(dtype)) +
            ", which is not supported");
  if (info.dtype != DType::Undefined && dtype != info.dtype)
    invalid("input '" + info.name + "' must be " + std::string(dtype_short_name(info.dtype)) + ", got " +
            std::string(dtype_short_name(dtype)));
  if (!info.has_shape) return;
  if (static_cast<size_t>(shape.rank()) != info.dims.size())
    invalid("input '" + info.name + "' must have rank " + std::to_string(info.dims.size()) + " " +
            dims_to_string(info.dims) + ", got shape " + shape.to_string());
  for (size_t d = 0; d < info.dims.size(); ++d)
    if (info.dims[d].is_fixed() && shape[static_cast<int>(d)] != info.dims[d].value)
      invalid("input '" + info.name + "' dimension " + std::to_string(d) + " must be " +
              std::to_string(info.dims[d].value) + " " + dims_to_string(info.dims) + ", got shape " +
              shape.to_string());
}

std::vector<size_t> match_inputs(const std::vector<ValueInfo>& model_inputs, std::span<const std::string> names,
                                 std::span<const Tensor> tensors) {
  if (names.size() != tensors.size())
    invalid(std::to_string(names.size()) + " input names were given for " + std::to_string(tensors.size()) +
            " tensors");
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
  for (size_t i = 0; i < model_inputs.size(); ++i) {
    const Tensor& t = tensors[slot[i]];
    if (t.empty()) invalid("input '" + model_inputs[i].name + "' is an empty tensor (no storage)");
    check_input(model_inputs[i], t.dtype(), t.shape());
  }
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
