// Shared rules of the two JavaScript bindings (core.h).
#include "core.h"

#include <new>
#include <utility>

namespace onemodel::binding {

SessionOptions session_options(int mode, int threads, int optimization_level, int max_cached_plans,
                               std::string external_data_dir, int weight_storage) {
  if (mode < 0 || mode > 1) {
    throw Error(ErrorKind::InvalidArgument, "mode code " + std::to_string(mode) + " is not 0 (fast) or 1 (exact)");
  }
  if (optimization_level < 0 || optimization_level > 2) {
    throw Error(ErrorKind::InvalidArgument,
                "optimization level code " + std::to_string(optimization_level) + " is not 0, 1 or 2");
  }
  if (weight_storage < 0 || weight_storage > 2)
    throw Error(ErrorKind::InvalidArgument,
                "weight storage code " + std::to_string(weight_storage) + " is not 0, 1 or 2");
  SessionOptions options;
  options.weight_storage = static_cast<WeightStorage>(weight_storage);
  options.mode = static_cast<Mode>(mode);
  options.intra_op_threads = threads;
  options.optimization_level = static_cast<OptimizationLevel>(optimization_level);
  options.max_cached_plans = max_cached_plans;
  options.external_data_dir = std::move(external_data_dir);
  return options;
}

std::vector<std::byte> convert_model(std::span<const std::byte> bytes, int weight_storage, std::string source_name,
                                     std::string external_data_dir) {
  if (weight_storage < 0 || weight_storage > 2)
    throw Error(ErrorKind::InvalidArgument,
                "weight storage code " + std::to_string(weight_storage) + " is not 0, 1 or 2");
  ConvertOptions options;
  options.weight_storage = static_cast<WeightStorage>(weight_storage);
  options.external_data_dir = std::move(external_data_dir);
  return model_format::convert_bytes(bytes, options, source_name);
}

InputSpec input_spec(const std::string& name, int code, std::span<const double> dims) {
  const DType dtype = static_cast<DType>(code);
  if (!dtype_is_stored(dtype)) {
    throw Error(ErrorKind::InvalidInput, "input '" + name + "' has an element type code the engine does not store");
  }
  std::vector<int64_t> shape(dims.size());
  int64_t total = 1;
  for (size_t d = 0; d < dims.size(); ++d) {
    const double extent = dims[d];
    if (!(extent >= 0 && extent <= static_cast<double>(kMaxElements)) ||
        extent != static_cast<double>(static_cast<int64_t>(extent))) {
      throw Error(ErrorKind::InvalidInput, "input '" + name + "' has an invalid dimension");
    }
    shape[d] = static_cast<int64_t>(extent);
    // Both factors are at most 2^31 - 1, so the product cannot overflow before the check.
    if (total != 0) total = shape[d] == 0 ? 0 : (total > kMaxElements / shape[d] ? kMaxElements + 1 : total * shape[d]);
  }
  if (total > kMaxElements || static_cast<uint64_t>(total) * dtype_size(dtype) > static_cast<uint64_t>(kMaxElements)) {
    throw Error(ErrorKind::InvalidInput, "input '" + name + "' has more elements than the engine allows");
  }
  return {dtype, Shape(shape), static_cast<size_t>(total) * dtype_size(dtype)};
}

void check_byte_length(const std::string& name, double js_bytes, size_t needed) {
  if (js_bytes != static_cast<double>(needed)) {
    throw Error(ErrorKind::InvalidInput, "input '" + name + "' buffer holds " +
                                             std::to_string(static_cast<int64_t>(js_bytes)) +
                                             " bytes, the tensor needs " + std::to_string(needed));
  }
}

Value input_value(const std::string& name, int kind, DType elem, std::vector<Tensor> tensors) {
  const auto one = [&]() -> Tensor& {
    if (tensors.size() != 1) {
      throw Error(ErrorKind::InvalidInput, "input '" + name + "' needs exactly one tensor");
    }
    return tensors[0];
  };
  switch (static_cast<InputKind>(kind)) {
    case InputKind::Tensor: return Value(one());
    case InputKind::Sequence: return Value::sequence(std::move(tensors), elem);
    case InputKind::EmptyOptional: return Value::none(ValueKind::Unknown, elem);
    case InputKind::OptionalTensor: return Value::optional(Value(one()));
    case InputKind::OptionalSequence: return Value::optional(Value::sequence(std::move(tensors), elem));
  }
  throw Error(ErrorKind::InvalidInput, "input '" + name + "' has an unknown value kind code");
}

std::vector<std::string> result_names(const Session& session, std::vector<std::string> wanted, size_t returned) {
  if (wanted.empty()) {
    for (const auto& info : session.outputs()) wanted.push_back(info.name);
  }
  if (wanted.size() != returned) {
    throw Error(ErrorKind::Internal, "the session returned " + std::to_string(returned) + " outputs for " +
                                         std::to_string(wanted.size()) + " names");
  }
  return wanted;
}

const char* kind_name(ValueKind k) noexcept {
  switch (k) {
    case ValueKind::Tensor: return "tensor";
    case ValueKind::Sequence: return "sequence";
    case ValueKind::Optional: return "optional";
    case ValueKind::Map: return "map";
    case ValueKind::SparseTensor: return "sparse_tensor";
    case ValueKind::Opaque: return "opaque";
    case ValueKind::Unknown: return "unknown";
  }
  return "unknown";
}

JsArray js_array_of(DType t) {
  switch (t) {
    case DType::F32: return JsArray::Float32;
    case DType::F64: return JsArray::Float64;
    case DType::I8: return JsArray::Int8;
    case DType::U8:
    case DType::Bool: return JsArray::Uint8;
    case DType::I16: return JsArray::Int16;
    case DType::U16:
    case DType::F16:
    case DType::BF16: return JsArray::Uint16;
    case DType::I32: return JsArray::Int32;
    case DType::U32: return JsArray::Uint32;
    case DType::I64: return JsArray::BigInt64;
    case DType::U64: return JsArray::BigUint64;
    default:
      throw Error(ErrorKind::Unsupported,
                  "element type " + std::string(dtype_name(t)) + " cannot be returned to JavaScript");
  }
}

const char* js_array_name(JsArray a) noexcept {
  switch (a) {
    case JsArray::Float32: return "Float32Array";
    case JsArray::Float64: return "Float64Array";
    case JsArray::Int8: return "Int8Array";
    case JsArray::Uint8: return "Uint8Array";
    case JsArray::Int16: return "Int16Array";
    case JsArray::Uint16: return "Uint16Array";
    case JsArray::Int32: return "Int32Array";
    case JsArray::Uint32: return "Uint32Array";
    case JsArray::BigInt64: return "BigInt64Array";
    case JsArray::BigUint64: return "BigUint64Array";
  }
  return "Uint8Array";
}

ValueResult value_result(const Value& v) {
  ValueResult r;
  r.kind = kind_name(v.kind());
  r.elem = v.elem_type();
  const Value* content = &v;
  if (v.kind() == ValueKind::Optional) {
    r.present = v.has_element();
    r.content_kind = kind_name(r.present ? v.element().kind() : v.content_kind());
    if (!r.present) return r;
    content = &v.element();
  }
  if (content->kind() == ValueKind::Sequence) {
    for (const Tensor& t : content->items()) r.items.push_back(t.contiguous());
  } else {
    r.items.push_back(content->tensor().contiguous());
  }
  return r;
}

ErrorInfo error_info(std::exception_ptr e, std::string_view out_of_memory) {
  ErrorInfo info;
  try {
    std::rethrow_exception(std::move(e));
  } catch (const Error& err) {
    info.kind = std::string(error_kind_name(err.kind()));
    info.message = err.message();
    info.operators = err.operators();
    info.node = err.node();
    info.source = err.source();
    info.field_path = err.field_path();
    info.offset = err.offset();
  } catch (const std::bad_alloc&) {
    info.kind = std::string(error_kind_name(ErrorKind::Unsupported));
    info.message = std::string(out_of_memory);
  } catch (const std::exception& err) {
    info.kind = std::string(error_kind_name(ErrorKind::Internal));
    info.message = err.what();
  } catch (...) {
    info.kind = std::string(error_kind_name(ErrorKind::Internal));
    info.message = "an exception that is not a std::exception";
  }
  return info;
}

}  // namespace onemodel::binding
