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

#include "core.h"
#include "ctc.h"
#include "embind_util.h"
#include "onemodel/onemodel.h"

namespace {

using emscripten::val;
using onemodel::DType;
using onemodel::Error;
using onemodel::ErrorKind;
namespace binding = onemodel::binding;
using namespace onemodel::binding::js;

val value_infos(const std::vector<onemodel::ValueInfo>& infos) {
  val out = val::array();
  for (const auto& info : infos) {
    val obj = val::object();
    obj.set("name", info.name);
    obj.set("dtype", static_cast<int>(info.dtype));
    obj.set("hasShape", info.has_shape);
    obj.set("kind", std::string(binding::kind_name(info.kind)));
    obj.set("elementKind", std::string(binding::kind_name(info.element_kind)));
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

// The session handle JS holds. Copies share one engine session; release() frees the model for all.
class WasmSession {
 public:
  explicit WasmSession(onemodel::Session s) : session_(std::move(s)) {}

  static WasmSession create(const val& bytes, const std::string& source_name, int mode, int threads,
                            int optimization_level, int max_cached_plans, int weight_storage) {
    return guarded([&]() {
      const onemodel::SessionOptions options =
          binding::session_options(mode, threads, optimization_level, max_cached_plans, {}, weight_storage);
      std::vector<std::byte> buffer(static_cast<size_t>(bytes["byteLength"].as<double>()));
      copy_from_js("model", bytes, buffer.data(), buffer.size());
      return WasmSession(onemodel::Session::load_bytes(buffer, options, source_name));
    });
  }

  val inputs() const {
    return guarded([&]() { return value_infos(session_.inputs()); });
  }
  val outputs() const {
    return guarded([&]() { return value_infos(session_.outputs()); });
  }
  std::string kernel_path() const {
    return guarded([&]() { return std::string(session_.kernel_path()); });
  }
  int threads() const {
    return guarded([&]() { return session_.threads(); });
  }

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
        feeds.push_back({input_names[i], tensor_from_js(input_names[i], dtype_codes[i], dims[i], data[i])});
      }
      const std::vector<onemodel::Tensor> results = session_.run(feeds, strings_of(output_names));
      const std::vector<std::string> result_names =
          binding::result_names(session_, strings_of(output_names), results.size());
      val out = val::array();
      for (size_t k = 0; k < results.size(); ++k) {
        val obj = tensor_to_js(results[k]);
        obj.set("name", result_names[k]);
        out.call<void>("push", obj);
      }
      return out;
    });
  }

  // The Value form (sequences and optionals). Per input: kinds[i] is a binding::InputKind code, elem_codes[i]
  // the element type (for empty sequences and optionals), items[i] an array of {dtype, dims, data} (one for a
  // tensor, none for an empty optional). Returns [{name, kind, contentKind?, present, elemType, items}].
  val run_values(const val& names, const val& kinds, const val& elem_codes, const val& items,
                 const val& output_names) const {
    return guarded([&]() {
      const std::vector<std::string> input_names = strings_of(names);
      std::vector<onemodel::NamedValue> feeds;
      for (unsigned i = 0; i < input_names.size(); ++i) {
        std::vector<onemodel::Tensor> tensors;
        const val list = items[i];
        const auto n = list["length"].as<unsigned>();
        for (unsigned k = 0; k < n; ++k)
          tensors.push_back(tensor_from_js(input_names[i], list[k]["dtype"], list[k]["dims"], list[k]["data"]));
        feeds.push_back(
            {input_names[i], binding::input_value(input_names[i], kinds[i].as<int>(),
                                                  static_cast<DType>(elem_codes[i].as<int>()), std::move(tensors))});
      }
      const std::vector<onemodel::Value> results = session_.run_values(feeds, strings_of(output_names));
      const std::vector<std::string> result_names =
          binding::result_names(session_, strings_of(output_names), results.size());
      val out = val::array();
      for (size_t k = 0; k < results.size(); ++k) {
        const binding::ValueResult r = binding::value_result(results[k]);
        val obj = val::object();
        obj.set("name", result_names[k]);
        obj.set("kind", std::string(r.kind));
        if (r.content_kind != nullptr) obj.set("contentKind", std::string(r.content_kind));
        obj.set("present", r.present);
        obj.set("elemType", static_cast<int>(r.elem));
        val list = val::array();
        for (const onemodel::Tensor& t : r.items) list.call<void>("push", tensor_to_js(t));
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

// A new JS typed array (`type`: its constructor's name) holding a copy of `v`.
template <class T>
val typed_copy(const char* type, const std::vector<T>& v) {
  return val::global(type).new_(val(emscripten::typed_memory_view(v.size(), v.data())));
}

// CTC decoding (docs/ctc.md; shapes in bindings/ctc.h). `data` holds the float32 scores of `dims`
// [batch, steps, classes]; returns per batch item {labels, firstSteps, lastSteps, runConfidences,
// stepProbabilities, confidence}.
val ctc_greedy(const val& data, const val& dims, int kind, double blank) {
  return guarded([&]() {
    const onemodel::Tensor scores = tensor_from_js("scores", val(binding::kCtcScoresCode), dims, data);
    val out = val::array();
    for (const binding::CtcGreedyItem& r : binding::ctc_greedy(scores, kind, blank)) {
      val obj = val::object();
      obj.set("labels", typed_copy("Int32Array", r.labels));
      obj.set("firstSteps", typed_copy("Int32Array", r.first_steps));
      obj.set("lastSteps", typed_copy("Int32Array", r.last_steps));
      obj.set("runConfidences", typed_copy("Float32Array", r.run_confidences));
      obj.set("stepProbabilities", typed_copy("Float32Array", r.step_probabilities));
      obj.set("confidence", r.confidence);
      out.call<void>("push", obj);
    }
    return out;
  });
}

// Per batch item the best hypotheses, best first: [[{labels, logProbability, confidence}]].
val ctc_beam_search(const val& data, const val& dims, int kind, double blank, double beam_width, double top_n) {
  return guarded([&]() {
    const onemodel::Tensor scores = tensor_from_js("scores", val(binding::kCtcScoresCode), dims, data);
    val out = val::array();
    for (const auto& item : binding::ctc_beam_search(scores, kind, blank, beam_width, top_n)) {
      val list = val::array();
      for (const binding::CtcHypothesis& h : item) {
        val obj = val::object();
        obj.set("labels", typed_copy("Int32Array", h.labels));
        obj.set("logProbability", h.log_probability);
        obj.set("confidence", h.confidence);
        list.call<void>("push", obj);
      }
      out.call<void>("push", list);
    }
    return out;
  });
}

// The model (ONNX or OneModel bytes) in the OneModel format (docs/format.md), as a new Uint8Array.
val convert(const val& bytes, const std::string& source_name, int weight_storage) {
  return guarded([&]() {
    std::vector<std::byte> buffer(static_cast<size_t>(bytes["byteLength"].as<double>()));
    copy_from_js("model", bytes, buffer.data(), buffer.size());
    const std::vector<std::byte> out = binding::convert_model(buffer, weight_storage, source_name);
    // slice(): a copy in JS memory, so nothing handed out aliases the wasm heap.
    return val(emscripten::typed_memory_view(out.size(), reinterpret_cast<const uint8_t*>(out.data())))
        .call<val>("slice");
  });
}

}  // namespace

EMSCRIPTEN_BINDINGS(onemodel) {
  emscripten::class_<WasmSession>("WasmSession")
      .class_function("create", &WasmSession::create)
      .function("inputs", &WasmSession::inputs)
      .function("outputs", &WasmSession::outputs)
      .function("kernelPath", &WasmSession::kernel_path)
      .function("threads", &WasmSession::threads)
      .function("opsets", &WasmSession::opsets)
      .function("run", &WasmSession::run)
      .function("runValues", &WasmSession::run_values)
      .function("startProfiling", &WasmSession::start_profiling)
      .function("endProfiling", &WasmSession::end_profiling)
      .function("release", &WasmSession::release);
  emscripten::function("version", &engine_version);
  emscripten::function("ctcGreedy", &ctc_greedy);
  emscripten::function("ctcBeamSearch", &ctc_beam_search);
  emscripten::function("convert", &convert);
}
