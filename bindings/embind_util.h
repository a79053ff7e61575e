// What the Embind bindings share (embind.cc: sessions, conversion, CTC; builder_embind.cc: the graph builder):
// exceptions turned into plain JS error objects, and the copies of strings, typed arrays and tensors across the
// boundary (bindings/README.md).
#pragma once
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "core.h"
#include "onemodel/operators.h"

namespace onemodel::binding::js {

using emscripten::val;

// Runs `f` and converts any C++ exception into a thrown JS error object. The JS throw happens after the
// C++ handler has finished, so no C++ exception object is alive while JS unwinds the wasm frames.
template <class F>
inline auto guarded(F&& f) -> decltype(f()) {
  std::exception_ptr failure;
  try {
    return f();
  } catch (...) {
    failure = std::current_exception();
  }
  const binding::ErrorInfo info = binding::error_info(failure, "out of memory (the wasm heap is limited to 4 GiB)");
  failure = nullptr;
  val obj = val::object();
  obj.set("kind", info.kind);
  obj.set("message", info.message);
  val ops = val::array();
  for (const auto& op : info.operators) ops.call<void>("push", op);
  obj.set("operators", ops);
  obj.set("node", info.node);
  obj.set("source", info.source);
  obj.set("fieldPath", info.field_path);
  obj.set("offset", info.offset >= 0 ? val(static_cast<double>(info.offset)) : val::null());
  obj.throw_();
}

// JS array of strings -> vector<string>.
inline std::vector<std::string> strings_of(const val& array) {
  const auto n = array["length"].as<unsigned>();
  std::vector<std::string> out;
  out.reserve(n);
  for (unsigned i = 0; i < n; ++i) out.push_back(array[i].as<std::string>());
  return out;
}

// Copies a JS typed array (any element type) into `dst`, which has exactly `nbytes` bytes.
inline void copy_from_js(const std::string& name, const val& typed_array, void* dst, size_t nbytes) {
  binding::check_byte_length(name, typed_array["byteLength"].as<double>(), nbytes);
  if (nbytes == 0) return;
  val bytes =
      val::global("Uint8Array").new_(typed_array["buffer"], typed_array["byteOffset"], typed_array["byteLength"]);
  val view(emscripten::typed_memory_view(nbytes, static_cast<uint8_t*>(dst)));
  view.call<void>("set", bytes);
}

// New JS typed array holding a copy of a (contiguous) engine tensor.
inline val copy_to_js(const onemodel::Tensor& t) {
  const onemodel::Tensor c = t.contiguous();
  const size_t n = static_cast<size_t>(c.numel());
  val array = val::global(binding::js_array_name(binding::js_array_of(c.dtype()))).new_(static_cast<double>(n));
  const size_t nbytes = c.nbytes();
  if (nbytes > 0) {
    val dst = val::global("Uint8Array").new_(array["buffer"], 0, static_cast<double>(nbytes));
    val src(emscripten::typed_memory_view(nbytes, static_cast<const uint8_t*>(c.raw())));
    dst.call<void>("set", src);
  }
  return array;
}

// One engine tensor from a JS {dtype code, dims, typed array} triple.
inline onemodel::Tensor tensor_from_js(const std::string& name, const val& code, const val& shape_js, const val& data) {
  const auto rank = shape_js["length"].as<unsigned>();
  std::vector<double> dims(rank);
  for (unsigned d = 0; d < rank; ++d) dims[d] = shape_js[d].as<double>();
  const binding::InputSpec spec = binding::input_spec(name, code.as<int>(), dims);
  onemodel::Tensor t = onemodel::Tensor::zeros(spec.dtype, spec.shape);
  copy_from_js(name, data, t.raw_mut(), t.nbytes());
  return t;
}

// {name?, dtype, dims, data} for an engine tensor (data copied out of wasm memory).
inline val tensor_to_js(const onemodel::Tensor& t) {
  val obj = val::object();
  obj.set("dtype", static_cast<int>(t.dtype()));
  val shape = val::array();
  for (int64_t e : t.shape().dims()) shape.call<void>("push", static_cast<double>(e));
  obj.set("dims", shape);
  obj.set("data", copy_to_js(t));
  return obj;
}

inline std::vector<int64_t> int64s_of(const val& array) {
  const auto n = array["length"].as<unsigned>();
  std::vector<int64_t> out(n);
  for (unsigned i = 0; i < n; ++i) out[i] = static_cast<int64_t>(array[i].as<double>());
  return out;
}

// Node attributes from [{name, kind, value}], kind 'int' | 'float' | 'string' | 'ints' | 'floats'.
inline onemodel::Attr attr_of(const val& a) {
  const std::string name = a["name"].as<std::string>(), kind = a["kind"].as<std::string>();
  const val v = a["value"];
  if (kind == "int") return {name, static_cast<int64_t>(v.as<double>())};
  if (kind == "float") return {name, static_cast<float>(v.as<double>())};
  if (kind == "string") return {name, v.as<std::string>()};
  if (kind == "ints") return {name, int64s_of(v)};
  if (kind == "floats") {
    std::vector<float> f(v["length"].as<unsigned>());
    for (unsigned i = 0; i < f.size(); ++i) f[i] = static_cast<float>(v[i].as<double>());
    return {name, std::move(f)};
  }
  throw onemodel::Error(onemodel::ErrorKind::InvalidArgument, "attribute '" + name + "': unknown kind '" + kind + "'");
}

inline std::vector<onemodel::Attr> attrs_of(const val& attrs) {
  std::vector<onemodel::Attr> a;
  const auto n = attrs["length"].as<unsigned>();
  for (unsigned i = 0; i < n; ++i) a.push_back(attr_of(attrs[i]));
  return a;
}

// A new Uint8Array holding `bytes`.
inline val bytes_to_js(const std::string& bytes) {
  val out = val::global("Uint8Array").new_(static_cast<double>(bytes.size()));
  if (!bytes.empty())
    out.call<void>("set",
                   val(emscripten::typed_memory_view(bytes.size(), reinterpret_cast<const uint8_t*>(bytes.data()))));
  return out;
}

}  // namespace onemodel::binding::js
