// Embind binding of eager tensors and tracing (docs/model-building.md section 9): `WasmEager` wraps one
// onemodel::EagerTensor (a cheap handle: copies share the value), `WasmTracer` one onemodel::Tracer. Tensors cross
// as {code, dims, bytes}; attributes as in builder_embind.cc. TypeScript (web/src/trace.ts) owns the API.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <optional>
#include <string>
#include <vector>

#include "embind_util.h"
#include "onemodel/trace.h"

namespace {

using emscripten::val;
using onemodel::EagerTensor;
using namespace onemodel::binding::js;

class WasmEagerList;

class WasmEager {
 public:
  explicit WasmEager(EagerTensor t) : t_(std::move(t)) {}

  static WasmEager constant(int code, const val& dims, const val& data) {
    return guarded([&]() { return WasmEager(EagerTensor(tensor_from_js("constant", val(code), dims, data))); });
  }
  // inputs: WasmEager handles or null; returns the outputs as a list (a class instance put into a JS array from
  // C++ would be a borrowed handle that Embind frees after the call: get(i) returns owned ones).
  static WasmEagerList op(const std::string& op_type, const val& inputs, const val& attrs, int num_outputs);
  int dtype() const {
    return guarded([&]() { return static_cast<int>(t_.dtype()); });
  }
  val sizes() const {
    return guarded([&]() {
      val out = val::array();
      for (int64_t e : t_.sizes().dims()) out.call<void>("push", static_cast<double>(e));
      return out;
    });
  }
  // {dtype, dims, data}; DataDependent while a trace records and this value depends on its inputs.
  val value() const {
    return guarded([&]() { return tensor_to_js(t_.value()); });
  }
  const EagerTensor& tensor() const { return t_; }

 private:
  EagerTensor t_;
};

class WasmEagerList {
 public:
  explicit WasmEagerList(std::vector<EagerTensor> v) : v_(std::move(v)) {}
  int size() const { return static_cast<int>(v_.size()); }
  WasmEager get(int i) const {
    return guarded([&]() {
      if (i < 0 || i >= size()) throw onemodel::Error(onemodel::ErrorKind::InvalidArgument, "no such output");
      return WasmEager(v_[static_cast<size_t>(i)]);
    });
  }

 private:
  std::vector<EagerTensor> v_;
};

WasmEagerList WasmEager::op(const std::string& op_type, const val& inputs, const val& attrs, int num_outputs) {
  return guarded([&]() {
    std::vector<EagerTensor> in;
    const auto n = inputs["length"].as<unsigned>();
    for (unsigned i = 0; i < n; ++i) in.push_back(inputs[i].isNull() ? EagerTensor() : inputs[i].as<WasmEager&>().t_);
    return WasmEagerList(EagerTensor::op(op_type, in, attrs_of(attrs), num_outputs));
  });
}

class WasmTracer {
 public:
  static WasmTracer begin() {
    return guarded([&]() { return WasmTracer(onemodel::Tracer::begin()); });
  }
  WasmEager input(const std::string& name, int code, const val& dims, const val& data, const val& axis_names) {
    return guarded([&]() {
      return WasmEager(tracer_->input(name, tensor_from_js(name, val(code), dims, data), strings_of(axis_names)));
    });
  }
  void parameter(const std::string& name, const WasmEager& weight) {
    guarded([&]() { tracer_->parameter(name, weight.tensor()); });
  }
  val finish(const val& names, const val& values) {
    return guarded([&]() {
      std::vector<std::pair<std::string, EagerTensor>> outs;
      const std::vector<std::string> n = strings_of(names);
      for (unsigned i = 0; i < n.size(); ++i) outs.emplace_back(n[i], values[i].as<WasmEager&>().tensor());
      const std::string bytes = tracer_->finish(outs).onnx;
      return bytes_to_js(bytes);
    });
  }
  // Stops recording (finish() also does); the JS handle's delete() frees it.
  void end() {
    guarded([&]() { tracer_.reset(); });
  }

 private:
  explicit WasmTracer(onemodel::Tracer t) : tracer_(std::make_shared<onemodel::Tracer>(std::move(t))) {}
  std::shared_ptr<onemodel::Tracer> tracer_;
};

void set_eager_mode(int mode) {
  guarded([&]() {
    if (mode != 0 && mode != 1) throw onemodel::Error(onemodel::ErrorKind::InvalidArgument, "eager mode code");
    onemodel::set_eager_mode(mode == 1 ? onemodel::Mode::Exact : onemodel::Mode::Fast);
  });
}

}  // namespace

EMSCRIPTEN_BINDINGS(onemodel_trace) {
  emscripten::class_<WasmEager>("WasmEager")
      .class_function("constant", &WasmEager::constant)
      .class_function("op", &WasmEager::op)
      .function("dtype", &WasmEager::dtype)
      .function("sizes", &WasmEager::sizes)
      .function("value", &WasmEager::value);
  emscripten::class_<WasmEagerList>("WasmEagerList")
      .function("size", &WasmEagerList::size)
      .function("get", &WasmEagerList::get);
  emscripten::class_<WasmTracer>("WasmTracer")
      .class_function("begin", &WasmTracer::begin)
      .function("input", &WasmTracer::input)
      .function("parameter", &WasmTracer::parameter)
      .function("finish", &WasmTracer::finish)
      .function("end", &WasmTracer::end);
  emscripten::function("setEagerMode", &set_eager_mode);
}
