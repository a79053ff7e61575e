// What the two JavaScript bindings (embind.cc for wasm, node/addon.cc for the Node-API addon) share: the
// checks a binding must make to stay memory-safe, the codes that cross the boundary, and the shaping of
// results and errors into plain C++ values that each binding then turns into JS values its own way.
// Nothing here touches a JS engine, so the rules cannot drift between the two bindings (bindings/README.md).
#pragma once
#include <cstddef>
#include <cstdint>
#include <exception>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "onemodel/onemodel.h"

namespace onemodel::binding {

// SessionOptions from the codes TypeScript sends (mode 0 fast / 1 exact; level 0 none / 1 basic / 2 all;
// weight storage 0 float32 / 1 float16 / 2 bfloat16). Error(InvalidArgument) for a code out of range.
// `external_data_dir` may be empty (external data refused).
SessionOptions session_options(int mode, int threads, int optimization_level, int max_cached_plans,
                               std::string external_data_dir = {}, int weight_storage = 0);

// convert(bytes, options) of the npm package (docs/format.md section 5): the model (ONNX, or already the
// OneModel format) written in the OneModel format. `weight_storage` is TypeScript's code (0 float32,
// 1 float16, 2 bfloat16; anything else is Error(InvalidArgument)); the engine refuses 1 and 2 for now.
std::vector<std::byte> convert_model(std::span<const std::byte> bytes, int weight_storage, std::string source_name,
                                     std::string external_data_dir = {});

// The element type and shape of input `name` from a type code (an ONNX TensorProto.DataType code) and extents
// `dims` as JS numbers. Error(InvalidInput) for a type the engine does not store, an extent that is not an
// integer in 0..kMaxElements, or a total beyond the engine's limits. The binding then checks the byte length
// (check_byte_length against `nbytes`) and copies the bytes into a tensor of this type and shape.
struct InputSpec {
  DType dtype = DType::Undefined;
  Shape shape;
  size_t nbytes = 0;
};
InputSpec input_spec(const std::string& name, int code, std::span<const double> dims);

// Error(InvalidInput) unless a JS buffer of `js_bytes` bytes fills exactly `needed` bytes.
void check_byte_length(const std::string& name, double js_bytes, size_t needed);

// Value-kind codes of runValues' inputs: what one input holds, as a plain int across the binding. A contract
// with TypeScript: web/src/native.ts `ValueCode` has the same names and numbers (tensor, sequence,
// emptyOptional, optionalTensor, optionalSequence), and tests/js/value-codes.test.mjs compares the two tables.
// Change both or neither.
enum class InputKind : int { Tensor = 0, Sequence = 1, EmptyOptional = 2, OptionalTensor = 3, OptionalSequence = 4 };

// The engine value for input `name` of kind code `kind` holding `tensors` (one for a tensor, any number for a
// sequence, none for an empty optional); `elem` is the element type for empty sequences and optionals.
// Error(InvalidInput) for an unknown code or a wrong number of tensors.
Value input_value(const std::string& name, int kind, DType elem, std::vector<Tensor> tensors);

// Names of what Session::run returns for `wanted`: `wanted` itself, or every model output in model order when
// it is empty. Error(Internal) if the count differs from `returned`.
std::vector<std::string> result_names(const Session& session, std::vector<std::string> wanted, size_t returned);

// "tensor", "sequence", "optional", "map", "sparse_tensor", "opaque" or "unknown".
const char* kind_name(ValueKind k) noexcept;

// The typed array that holds an engine element type in JS (bool as Uint8Array, float16/bfloat16 as raw bits
// in a Uint16Array). Error(Unsupported) for a type JS cannot receive (strings).
enum class JsArray { Float32, Float64, Int8, Uint8, Int16, Uint16, Int32, Uint32, BigInt64, BigUint64 };
JsArray js_array_of(DType t);
const char* js_array_name(JsArray a) noexcept;

// One runValues output: a tensor (one item), a sequence (its items) or an optional (present or not, with what
// it holds as content_kind; content_kind is null for the other kinds).
struct ValueResult {
  const char* kind = "tensor";
  const char* content_kind = nullptr;
  bool present = true;
  DType elem = DType::Undefined;
  std::vector<Tensor> items;  // contiguous
};
ValueResult value_result(const Value& v);

// An exception as the fields of the JS error object {kind, message, operators, node, source, offset,
// fieldPath} (offset -1 when unknown). `out_of_memory` is the message for std::bad_alloc.
struct ErrorInfo {
  std::string kind;
  std::string message;
  std::vector<std::string> operators;
  std::string node, source, field_path;
  int64_t offset = -1;
};
ErrorInfo error_info(std::exception_ptr e, std::string_view out_of_memory);

}  // namespace onemodel::binding
