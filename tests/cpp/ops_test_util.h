// Test harness for operator kernels: builds an ir::Node, looks the operator up in the static table, runs
// infer (and run, unless the output is constant or a view) with plain contexts, as the session would.
#pragma once
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "attr_util.h"
#include "base/bits.h"
#include "ir/graph.h"
#include "runtime/kernel.h"

namespace onemodel::test {

class TestArena final : public rt::Arena {
 public:
  Tensor allocate(DType dtype, const Shape& shape) override { return Tensor::zeros(dtype, shape); }
};

struct OpCase {
  std::string op_type;
  int64_t opset = 17;
  std::vector<ir::Attribute> attrs;
  std::vector<Tensor> inputs;         // empty Tensor = omitted optional input
  std::vector<bool> constant_inputs;  // per input: value known at plan time (default: no)
  bool exact = false;
  size_t num_outputs = 1;
  kern::Isa isa = kern::Isa::Scalar;  // the target prepare() and run() see
};

struct OpResult {
  std::vector<Tensor> outputs;
  bool was_constant = false;
  bool needed_runtime_values = false;
  rt::KernelFlags flags;
};

inline ir::Node make_node(const OpCase& c) {
  ir::Node node;
  node.name = "n0";
  node.op_type = c.op_type;
  node.opset = c.opset;
  node.attributes = c.attrs;
  for (size_t i = 0; i < c.inputs.size(); ++i)
    node.inputs.push_back(c.inputs[i].empty() ? ir::kNoValue : static_cast<int>(i));
  for (size_t i = 0; i < c.num_outputs; ++i) node.outputs.push_back(static_cast<int>(100 + i));
  return node;
}

// Runs the whole kernel life cycle; errors propagate as onemodel::Error.
inline OpResult run_op(const OpCase& c) {
  const rt::OpDef* def = rt::find_op("", c.op_type, c.opset);
  if (!def) throw Error(ErrorKind::UnsupportedOperator, c.op_type + " (opset " + std::to_string(c.opset) + ")");
  const ir::Node node = make_node(c);
  const rt::NodeInfo info(node, c.exact);
  std::unique_ptr<rt::Kernel> k = def->factory(info);
  OpResult r;
  r.flags = k->flags();
  std::vector<rt::InputMeta> metas(c.inputs.size());
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (c.inputs[i].empty()) continue;
    metas[i].present = true;
    metas[i].dtype = c.inputs[i].dtype();
    metas[i].shape = c.inputs[i].shape();
    if (i < c.constant_inputs.size() && c.constant_inputs[i]) metas[i].value = &c.inputs[i];
  }
  std::vector<rt::OutputMeta> outs(c.num_outputs);
  rt::InferContext ictx{info, metas, outs, c.exact};
  k->infer(ictx);
  if (ictx.needs_runtime_values) {
    // As the runtime does: shape again with every value known.
    r.needed_runtime_values = true;
    for (size_t i = 0; i < c.inputs.size(); ++i)
      if (metas[i].present) metas[i].value = &c.inputs[i];
    outs.assign(c.num_outputs, rt::OutputMeta{});
    rt::InferContext again{info, metas, outs, c.exact};
    k->infer(again);
  }
  if (!outs[0].constant.empty()) {
    r.was_constant = true;
    for (auto& o : outs) r.outputs.push_back(o.constant);
    return r;
  }
  for (auto& o : outs) r.outputs.push_back(Tensor::zeros(o.dtype, o.shape));
  TestArena arena;
  rt::PrepareContext pctx{info, metas, outs, c.exact, c.isa};
  auto state = k->prepare(pctx);
  rt::RunContext rctx{info, c.inputs, r.outputs, c.exact, state.get(), &arena, nullptr, c.isa};
  k->run(rctx);
  return r;
}

template <class T>
std::vector<T> values(const Tensor& t) {
  auto s = t.data<T>();
  return {s.begin(), s.end()};
}

inline uint32_t fbits(float f) { return float_bits(f); }
inline float from_fbits(uint32_t u) { return float_from_bits(u); }
inline uint64_t dbits(double d) { return double_bits(d); }

// Expects the error kind and a message fragment.
template <class F>
void expect_error(F&& f, ErrorKind kind, const std::string& fragment) {
  try {
    f();
    ADD_FAILURE() << "no error, expected " << error_kind_name(kind) << " with '" << fragment << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_NE(e.message().find(fragment), std::string::npos) << e.what();
  }
}

}  // namespace onemodel::test
