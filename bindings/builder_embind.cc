// Embind binding of the graph builder (docs/model-building.md section 7): `WasmBuilder` wraps one
// onemodel::GraphBuilder. Values cross as the builder's integer ids, element types as ONNX codes, tensors as
// {code, dims, bytes}; attributes as [{name, kind, value}] with kind 'int' | 'float' | 'string' | 'ints' | 'floats'.
// TypeScript (web/src/builder.ts) owns the API, the names and the argument checks; this file converts.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <string>
#include <vector>

#include "embind_util.h"
#include "onemodel/builder.h"

namespace {

using emscripten::val;
using namespace onemodel::binding::js;

std::vector<int> ints_of(const val& array) {
  const auto n = array["length"].as<unsigned>();
  std::vector<int> out(n);
  for (unsigned i = 0; i < n; ++i) out[i] = array[i].as<int>();
  return out;
}

val ids_to_js(const std::vector<onemodel::Var>& vars) {
  val out = val::array();
  for (const onemodel::Var& v : vars) out.call<void>("push", v.id());
  return out;
}

class WasmBuilder {
 public:
  static WasmBuilder create(int opset) {
    return guarded([&]() { return WasmBuilder(onemodel::GraphBuilder(opset)); });
  }

  // dims: numbers (fixed extents) and strings (symbol names).
  int input(const std::string& name, int code, const val& dims) {
    return guarded([&]() {
      std::vector<onemodel::DimArg> d;
      const auto n = dims["length"].as<unsigned>();
      for (unsigned i = 0; i < n; ++i) {
        if (dims[i].isString())
          d.emplace_back(dims[i].as<std::string>());
        else
          d.emplace_back(static_cast<int64_t>(dims[i].as<double>()));
      }
      return b_.input(name, static_cast<onemodel::DType>(code), d).id();
    });
  }
  int constant(const std::string& name, int code, const val& dims, const val& data) {
    return guarded([&]() { return b_.constant(tensor_from_js(name, val(code), dims, data), name).id(); });
  }
  int leaf(const std::string& name, int code, const val& dims, const val& data, const val& axis_names) {
    return guarded(
        [&]() { return b_.leaf(name, tensor_from_js(name, val(code), dims, data), strings_of(axis_names)).id(); });
  }
  // inputs: value ids, -1 for an omitted optional input. Returns the output ids.
  val op(const std::string& op_type, const val& inputs, const val& attrs, int num_outputs) {
    return guarded([&]() {
      std::vector<onemodel::Var> in;
      for (int id : ints_of(inputs)) in.push_back(id < 0 ? onemodel::Var() : b_.value(id));
      return ids_to_js(b_.op(op_type, in, attrs_of(attrs), num_outputs));
    });
  }
  // {dtype, dims}: a fixed extent as a number, a symbolic one as its expression's text.
  val value(int id) const {
    return guarded([&]() {
      const onemodel::Var v = b_.value(id);
      val out = val::object();
      out.set("dtype", static_cast<int>(v.dtype()));
      val dims = val::array();
      for (int a = 0; a < v.rank(); ++a) {
        auto fixed = v.dim_value(a);
        if (fixed)
          dims.call<void>("push", static_cast<double>(*fixed));
        else
          dims.call<void>("push", v.dim(a));
      }
      out.set("dims", dims);
      return out;
    });
  }
  val to_onnx(const val& names, const val& ids) const {
    return guarded([&]() { return bytes_to_js(b_.to_onnx(outputs_of(names, ids))); });
  }
  // spec_names[i] takes the extents spec_dims[i].
  val compiled_onnx(const val& names, const val& ids, const val& spec_names, const val& spec_dims) const {
    return guarded([&]() {
      std::vector<onemodel::InputSpec> specs;
      const std::vector<std::string> sn = strings_of(spec_names);
      for (unsigned i = 0; i < sn.size(); ++i) specs.push_back({sn[i], int64s_of(spec_dims[i])});
      return bytes_to_js(b_.compiled_onnx(outputs_of(names, ids), specs));
    });
  }

 private:
  explicit WasmBuilder(onemodel::GraphBuilder b) : b_(std::move(b)) {}
  onemodel::Outputs outputs_of(const val& names, const val& ids) const {
    const std::vector<std::string> n = strings_of(names);
    const std::vector<int> i = ints_of(ids);
    onemodel::Outputs out;
    for (size_t k = 0; k < n.size() && k < i.size(); ++k) out.emplace_back(n[k], b_.value(i[k]));
    return out;
  }
  onemodel::GraphBuilder b_;
};

}  // namespace

EMSCRIPTEN_BINDINGS(onemodel_builder) {
  emscripten::class_<WasmBuilder>("WasmBuilder")
      .class_function("create", &WasmBuilder::create)
      .function("input", &WasmBuilder::input)
      .function("constant", &WasmBuilder::constant)
      .function("leaf", &WasmBuilder::leaf)
      .function("op", &WasmBuilder::op)
      .function("value", &WasmBuilder::value)
      .function("toOnnx", &WasmBuilder::to_onnx)
      .function("compiledOnnx", &WasmBuilder::compiled_onnx);
}
