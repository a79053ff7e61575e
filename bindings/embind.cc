// Embind bindings of the engine for the npm package `onemodel` (see bindings/README.md).
//
// The thin-binding rule: this file only converts between JS values and the public C++ API. It holds no
// defaults (every option arrives as an explicit number from TypeScript), it does not validate what the
// TypeScript layer already validates, and it never lets a C++ exception escape as an opaque wasm
// exception: every onemodel::Error becomes a plain JS object {kind, message, operators, node, source,
// offset, fieldPath} thrown as a JS value, which web/src turns into a OneModelError.
//
// Data crosses the boundary as bytes: an input typed array is viewed as a Uint8Array and copied into a new
// engine tensor; an output is copied out of wasm memory into a fresh typed array, so nothing handed to JS
// aliases wasm memory (which may move when it grows).
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdint>
#include <cstring>
#include <exception>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "onemodel/onemodel.h"

namespace {

using emscripten::val;
using onemodel::DType;
using onemodel::Error;
using onemodel::ErrorKind;

// The JS object for an engine error. `offset` is null when unknown; strings are "" when unknown.
val error_object(ErrorKind kind, const std::string& message, const Error* e) {
  val obj = val::object();
  obj.set("kind", std::string(onemodel::error_kind_name(kind)));
  obj.set("message", message);
  val ops = val::array();
  if (e != nullptr) {
    for (const auto& op : e->operators()) ops.call<void>("push", op);
  }
  obj.set("operators", ops);
  obj.set("node", e != nullptr ? e->node() : std::string());
  obj.set("source", e != nullptr ? e->source() : std::string());
  obj.set("fieldPath", e != nullptr ? e->field_path() : std::string());
  if (e != nullptr && e->offset() >= 0) {
    obj.set("offset", static_cast<double>(e->offset()));
  } else {
    obj.set("offset", val::null());
  }
  return obj;
}

// Runs `f` and converts any C++ exception into a thrown JS error object. The JS throw happens after the
// C++ handler has finished, so no C++ exception object is alive while JS unwinds the wasm frames.
template <class F>
auto guarded(F&& f) -> decltype(f()) {
  std::optional<val> failure;
  try {
    return f();
  } catch (const Error& e) {
    failure = error_object(e.kind(), e.message(), &e);
  } catch (const std::bad_alloc&) {
    failure = error_object(ErrorKind::Unsupported, "out of memory (the wasm heap is limited to 4 GiB)", nullptr);
  } catch (const std::exception& e) {
    failure = error_object(ErrorKind::Internal, e.what(), nullptr);
  } catch (...) {
    failure = error_object(ErrorKind::Internal, "an exception that is not a std::exception", nullptr);
  }
  failure->throw_();
}

// Typed-array constructor name for an engine element type (bool as Uint8Array, fp16/bf16 as raw bits).
const char* array_constructor(DType t) {
  switch (t) {
    case DType::F32: return "Float32Array";
    case DType::F64: return "Float64Array";
    case DType::I8: return "Int8Array";
    case DType::U8: return "Uint8Array";
    case DType::Bool: return "Uint8Array";
    case DType::I16: return "Int16Array";
    case DType::U16: return "Uint16Array";
    case DType::F16: return "Uint16Array";
    case DType::BF16: return "Uint16Array";
    case DType::I32: return "Int32Array";
    case DType::U32: return "Uint32Array";
    case DType::I64: return "BigInt64Array";
    case DType::U64: return "BigUint64Array";
    default:
      throw Error(ErrorKind::Unsupported,
                  "element type " + std::string(onemodel::dtype_name(t)) + " cannot be returned to JavaScript");
  }
}

const char* kind_name(onemodel::ValueKind k) {
  switch (k) {
    case onemodel::ValueKind::Tensor: return "tensor";
    case onemodel::ValueKind::Sequence: return "sequence";
    case onemodel::ValueKind::Optional: return "optional";
    case onemodel::ValueKind::Map: return "map";
    case onemodel::ValueKind::SparseTensor: return "sparse_tensor";
    case onemodel::ValueKind::Opaque: return "opaque";
    case onemodel::ValueKind::Unknown: return "unknown";
  }
  return "unknown";
}

val value_infos(const std::vector<onemodel::ValueInfo>& infos) {
  val out = val::array();
  for (const auto& info : infos) {
    val obj = val::object();
    obj.set("name", info.name);
    obj.set("dtype", static_cast<int>(info.dtype));
    obj.set("hasShape", info.has_shape);
    obj.set("kind", std::string(kind_name(info.kind)));
    obj.set("elementKind", std::string(kind_name(info.element_kind)));
    val dims = val::array();
    for (const auto& d : info.dims) {
      if (d.is_fixed()) {
        dims.call<void>("push", static_cast<double>(d.value));
      } else if (!d.param.empty()) {
        dims.call<void>("push", d.param);
      } else {
        dims.call<void>("push", val::null());
      }
    }
    obj.set("dims", dims);
    out.call<void>("push", obj);
  }
  return out;
}

// JS array of strings -> vector<string>.
std::vector<std::string> strings_of(const val& array) {
  const auto n = array["length"].as<unsigned>();
  std::vector<std::string> out;
  out.reserve(n);
  for (unsigned i = 0; i < n; ++i) out.push_back(array[i].as<std::string>());
  return out;
}

// Copies a JS typed array (any element type) into `dst`, which has exactly `nbytes` bytes.
void copy_from_js(const val& typed_array, void* dst, size_t nbytes) {
  const auto js_bytes = typed_array["byteLength"].as<double>();
  if (js_bytes != static_cast<double>(nbytes)) {
    throw Error(ErrorKind::InvalidInput, "input buffer holds " + std::to_string(static_cast<int64_t>(js_bytes)) +
                                             " bytes, the tensor needs " + std::to_string(nbytes));
  }
  if (nbytes == 0) return;
  val bytes = val::global("Uint8Array").new_(typed_array["buffer"], typed_array["byteOffset"], typed_array["byteLength"]);
  val view(emscripten::typed_memory_view(nbytes, static_cast<uint8_t*>(dst)));
  view.call<void>("set", bytes);
}

// New JS typed array holding a copy of a (contiguous) engine tensor.
val copy_to_js(const onemodel::Tensor& t) {
  const onemodel::Tensor c = t.contiguous();
  const size_t n = static_cast<size_t>(c.numel());
  val array = val::global(array_constructor(c.dtype())).new_(static_cast<double>(n));
  const size_t nbytes = c.nbytes();
  if (nbytes > 0) {
    val dst = val::global("Uint8Array").new_(array["buffer"], 0, static_cast<double>(nbytes));
    val src(emscripten::typed_memory_view(nbytes, static_cast<const uint8_t*>(c.raw())));
    dst.call<void>("set", src);
  }
  return array;
}

// One engine tensor from a JS {dtype code, dims, typed array} triple (the checks TypeScript cannot make:
// the element type is one the engine stores, extents are integers in range, the byte length matches).
onemodel::Tensor tensor_from_js(const std::string& name, const val& code, const val& shape_js, const val& data) {
  const DType dtype = static_cast<DType>(code.as<int>());
  if (!onemodel::dtype_is_stored(dtype)) {
    throw Error(ErrorKind::InvalidInput, "input '" + name + "' has an element type code the engine does not store");
  }
  const auto rank = shape_js["length"].as<unsigned>();
  std::vector<int64_t> shape(rank);
  for (unsigned d = 0; d < rank; ++d) {
    const double extent = shape_js[d].as<double>();
    if (!(extent >= 0 && extent <= static_cast<double>(onemodel::kMaxElements)) || extent != static_cast<double>(static_cast<int64_t>(extent))) {
      throw Error(ErrorKind::InvalidInput, "input '" + name + "' has an invalid dimension");
    }
    shape[d] = static_cast<int64_t>(extent);
  }
  onemodel::Tensor t = onemodel::Tensor::zeros(dtype, onemodel::Shape(shape));
  copy_from_js(data, t.raw_mut(), t.nbytes());
  return t;
}

// {dtype, dims, data} for an engine tensor (data copied out of wasm memory).
val tensor_to_js(const onemodel::Tensor& t) {
  val obj = val::object();
  obj.set("dtype", static_cast<int>(t.dtype()));
  val shape = val::array();
  for (int64_t e : t.shape().dims()) shape.call<void>("push", static_cast<double>(e));
  obj.set("dims", shape);
  obj.set("data", copy_to_js(t));
  return obj;
}

// The session handle JS holds. Copies share one engine session; release() frees the model for all.
class WasmSession {
 public:
  explicit WasmSession(onemodel::Session s) : session_(std::move(s)) {}

  static WasmSession create(const val& bytes, const std::string& source_name, int mode, int threads, int optimization_level, int max_cached_plans) {
    return guarded([&]() {
      if (mode < 0 || mode > 1) throw Error(ErrorKind::InvalidArgument, "mode code " + std::to_string(mode) + " is not 0 (fast) or 1 (exact)");
      if (optimization_level < 0 || optimization_level > 2) {
        throw Error(ErrorKind::InvalidArgument,
                    "optimization level code " + std::to_string(optimization_level) + " is not 0, 1 or 2");
      }
      onemodel::SessionOptions options;
      options.mode = static_cast<onemodel::Mode>(mode);
      options.intra_op_threads = threads;
      options.optimization_level = static_cast<onemodel::OptimizationLevel>(optimization_level);
      options.max_cached_plans = max_cached_plans;
      const auto n = bytes["byteLength"].as<double>();
      std::vector<std::byte> buffer(static_cast<size_t>(n));
      copy_from_js(bytes, buffer.data(), buffer.size());
      return WasmSession(onemodel::Session::load_bytes(buffer, options, source_name));
    });
  }

  val inputs() const { return guarded([&]() { return value_infos(session_.inputs()); }); }
  val outputs() const { return guarded([&]() { return value_infos(session_.outputs()); }); }
  std::string kernel_path() const { return guarded([&]() { return std::string(session_.kernel_path()); }); }

  val opsets() const {
    return guarded([&]() {
      val out = val::array();
      for (const auto& [domain, version] : session_.opsets()) {
        val obj = val::object();
        obj.set("domain", domain);
        obj.set("version", static_cast<double>(version));
        out.call<void>("push", obj);
      }
      return out;
    });
  }

  // names[i] is fed dims[i] of element type dtype_codes[i] with the bytes of data[i]; returns the outputs
  // named in output_names (all, in model order, when empty) as [{name, dtype, dims, data}].
  val run(const val& names, const val& dtype_codes, const val& dims, const val& data, const val& output_names) const {
    return guarded([&]() {
      const std::vector<std::string> input_names = strings_of(names);
      std::vector<onemodel::NamedTensor> feeds;
      feeds.reserve(input_names.size());
      for (unsigned i = 0; i < input_names.size(); ++i) {
        const DType dtype = static_cast<DType>(dtype_codes[i].as<int>());
        if (!onemodel::dtype_is_stored(dtype)) {
          throw Error(ErrorKind::InvalidInput, "input '" + input_names[i] + "' has an element type code the engine does not store");
        }
        const val shape_js = dims[i];
        const auto rank = shape_js["length"].as<unsigned>();
        std::vector<int64_t> shape(rank);
        for (unsigned d = 0; d < rank; ++d) {
          const double extent = shape_js[d].as<double>();
          if (!(extent >= 0 && extent <= static_cast<double>(onemodel::kMaxElements)) || extent != static_cast<double>(static_cast<int64_t>(extent))) {
            throw Error(ErrorKind::InvalidInput, "input '" + input_names[i] + "' has an invalid dimension");
          }
          shape[d] = static_cast<int64_t>(extent);
        }
        onemodel::Tensor t = onemodel::Tensor::zeros(dtype, onemodel::Shape(shape));
        copy_from_js(data[i], t.raw_mut(), t.nbytes());
        feeds.push_back({input_names[i], std::move(t)});
      }
      const std::vector<std::string> wanted = strings_of(output_names);
      const std::vector<onemodel::Tensor> results = session_.run(feeds, wanted);

      // Names of the returned tensors: the requested ones, or every model output in model order.
      std::vector<std::string> result_names = wanted;
      if (result_names.empty()) {
        for (const auto& info : session_.outputs()) result_names.push_back(info.name);
      }
      if (result_names.size() != results.size()) {
        throw Error(ErrorKind::Internal, "the session returned " + std::to_string(results.size()) + " outputs for " +
                                             std::to_string(result_names.size()) + " names");
      }
      val out = val::array();
      for (size_t k = 0; k < results.size(); ++k) {
        const onemodel::Tensor& t = results[k];
        val obj = val::object();
        obj.set("name", result_names[k]);
        obj.set("dtype", static_cast<int>(t.dtype()));
        val shape = val::array();
        for (int64_t e : t.shape().dims()) shape.call<void>("push", static_cast<double>(e));
        obj.set("dims", shape);
        obj.set("data", copy_to_js(t));
        out.call<void>("push", obj);
      }
      return out;
    });
  }

  // The Value form (sequences and optionals). Per input: kinds[i] is 0 tensor, 1 sequence, 2 empty optional,
  // 3 optional of a tensor, 4 optional of a sequence; elem_codes[i] the element type (for empty sequences and
  // optionals); items[i] an array of {dtype, dims, data} (one for a tensor, none for an empty optional).
  // Returns [{name, kind, present, elemType, items: [{dtype, dims, data}]}].
  val run_values(const val& names, const val& kinds, const val& elem_codes, const val& items,
                 const val& output_names) const {
    return guarded([&]() {
      const std::vector<std::string> input_names = strings_of(names);
      std::vector<onemodel::NamedValue> feeds;
      for (unsigned i = 0; i < input_names.size(); ++i) {
        const int kind = kinds[i].as<int>();
        const DType elem = static_cast<DType>(elem_codes[i].as<int>());
        std::vector<onemodel::Tensor> tensors;
        const val list = items[i];
        const auto n = list["length"].as<unsigned>();
        for (unsigned k = 0; k < n; ++k)
          tensors.push_back(tensor_from_js(input_names[i], list[k]["dtype"], list[k]["dims"], list[k]["data"]));
        onemodel::Value v;
        switch (kind) {
          case 0: v = onemodel::Value(tensors.at(0)); break;
          case 1: v = onemodel::Value::sequence(std::move(tensors), elem); break;
          case 2: v = onemodel::Value::none(onemodel::ValueKind::Unknown, elem); break;
          case 3: v = onemodel::Value::optional(onemodel::Value(tensors.at(0))); break;
          case 4: v = onemodel::Value::optional(onemodel::Value::sequence(std::move(tensors), elem)); break;
          default: throw Error(ErrorKind::InvalidInput, "input '" + input_names[i] + "' has an unknown value kind code");
        }
        feeds.push_back({input_names[i], std::move(v)});
      }
      const std::vector<std::string> wanted = strings_of(output_names);
      const std::vector<onemodel::Value> results = session_.run_values(feeds, wanted);
      std::vector<std::string> result_names = wanted;
      if (result_names.empty()) {
        for (const auto& info : session_.outputs()) result_names.push_back(info.name);
      }
      val out = val::array();
      for (size_t k = 0; k < results.size(); ++k) {
        const onemodel::Value& r = results[k];
        const onemodel::Value* content = &r;
        val obj = val::object();
        obj.set("name", result_names.at(k));
        obj.set("kind", std::string(kind_name(r.kind())));
        bool present = true;
        if (r.kind() == onemodel::ValueKind::Optional) {
          present = r.has_element();
          obj.set("contentKind", std::string(kind_name(present ? r.element().kind() : r.content_kind())));
          if (present) content = &r.element();
        }
        obj.set("present", present);
        obj.set("elemType", static_cast<int>(r.elem_type()));
        val list = val::array();
        if (present) {
          if (content->kind() == onemodel::ValueKind::Sequence) {
            for (const onemodel::Tensor& t : content->items()) list.call<void>("push", tensor_to_js(t));
          } else {
            list.call<void>("push", tensor_to_js(content->tensor()));
          }
        }
        obj.set("items", list);
        out.call<void>("push", obj);
      }
      return out;
    });
  }

  void start_profiling() const {
    guarded([&]() {
      session_.start_profiling();
      return 0;
    });
  }

  // The Profile as a plain object (docs/profiling.md): the shaping into the JS API's names is web/src's.
  val end_profiling() const {
    return guarded([&]() {
      const onemodel::Profile p = session_.end_profiling();
      val out = val::object();
      out.set("runs", static_cast<double>(p.runs));
      out.set("runMs", p.run_ms);
      out.set("nodesMs", p.nodes_ms);
      out.set("overheadMs", p.overhead_ms);
      val nodes = val::array();
      for (const onemodel::NodeProfile& n : p.nodes) {
        val o = val::object();
        o.set("node", n.node);
        o.set("opType", n.op_type);
        o.set("depth", n.depth);
        o.set("calls", static_cast<double>(n.calls));
        o.set("totalMs", n.total_ms);
        o.set("selfMs", n.self_ms);
        o.set("share", n.share);
        nodes.call<void>("push", o);
      }
      out.set("nodes", nodes);
      val types = val::array();
      for (const onemodel::OpTypeProfile& t : p.op_types) {
        val o = val::object();
        o.set("opType", t.op_type);
        o.set("calls", static_cast<double>(t.calls));
        o.set("selfMs", t.self_ms);
        o.set("share", t.share);
        types.call<void>("push", o);
      }
      out.set("opTypes", types);
      out.set("text", p.to_text(0));
      return out;
    });
  }

  void release() {
    guarded([&]() {
      session_.release();
      return 0;
    });
  }

 private:
  onemodel::Session session_;
};

std::string engine_version() { return onemodel::version(); }

}  // namespace

EMSCRIPTEN_BINDINGS(onemodel) {
  emscripten::class_<WasmSession>("WasmSession")
      .class_function("create", &WasmSession::create)
      .function("inputs", &WasmSession::inputs)
      .function("outputs", &WasmSession::outputs)
      .function("kernelPath", &WasmSession::kernel_path)
      .function("opsets", &WasmSession::opsets)
      .function("run", &WasmSession::run)
      .function("runValues", &WasmSession::run_values)
      .function("startProfiling", &WasmSession::start_profiling)
      .function("endProfiling", &WasmSession::end_profiling)
      .function("release", &WasmSession::release);
  emscripten::function("version", &engine_version);
}
