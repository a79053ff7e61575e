// Every operator of the table (ops/op_table.cc) as a node that lacks inputs its operator takes: none at all, one
// omitted (an empty name), a real one followed by omitted ones. A hostile file can say that; the session must
// refuse it with a typed Error or run it, never read past the node's inputs or through a missing value (under
// ASan and UBSan in tools/test.sh). fuzz_load_run found HammingWindow without inputs reading past them (session
// 44, docs/fuzzing.md section 4); this sweeps the same mistake through every operator and opset boundary.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "onemodel/onemodel.h"
#include "runtime/kernel.h"
#include "runtime/session_impl.h"
#include "runtime_fake_ops.h"

namespace onemodel {
namespace {

// Builds and runs one node; true when it ran, false on a typed Error. Anything else fails the test.
bool build_and_run(const rt::OpDef& def, int64_t opset, const std::vector<std::string>& ins) {
  rt::fake::Builder b;
  b.input("x", DType::F32, {2, 3});
  b.node(std::string(def.op_type), ins, {"y"}, {}, std::string(def.domain));
  b.output("y");
  for (ir::Node& n : b.g().nodes) n.opset = opset;
  std::vector<NamedValue> feeds{{"x", Value(Tensor::zeros(DType::F32, Shape{2, 3}))}};
  try {
    Session s = make_session(b.model(), SessionOptions{}, &rt::find_op);
    s.run_values(feeds);
    return true;
  } catch (const Error&) {
    return false;
  }
}

TEST(MissingInputs, EveryOperatorLackingInputsIsRefusedOrRuns) {
  const std::vector<std::vector<std::string>> forms = {{}, {""}, {"x", "", ""}};
  int nodes = 0, refused = 0;
  for (const rt::OpDef& def : rt::op_table()) {
    for (int64_t opset : {static_cast<int64_t>(def.min_opset), static_cast<int64_t>(std::min(def.max_opset, 30))}) {
      for (const auto& ins : forms) {
        SCOPED_TRACE(std::string(def.domain) + "::" + std::string(def.op_type) + " opset " + std::to_string(opset) +
                     " with " + std::to_string(ins.size()) + " inputs");
        ++nodes;
        refused += build_and_run(def, opset, ins) ? 0 : 1;
      }
    }
  }
  // Most operators need an input or an attribute these nodes lack: the sweep reached their checks.
  EXPECT_GT(nodes, 600);
  EXPECT_GT(refused, nodes / 2);
}

// The contexts themselves: input i past a node's inputs is an absent input (InferContext) or an empty Tensor
// (RunContext, which data-dependent kernels reach without an infer() that checked their inputs).
TEST(MissingInputs, ContextsAnswerPastTheNodesInputs) {
  ir::Node node;
  node.op_type = "NonZero";
  const rt::NodeInfo info(node, false);
  const std::vector<Tensor> one{Tensor::zeros(DType::F32, Shape{2})};
  const rt::RunContext run{info, one, {}};
  EXPECT_TRUE(run.has_input(0));
  EXPECT_EQ(run.input(0).numel(), 2);
  EXPECT_FALSE(run.has_input(3));
  EXPECT_TRUE(run.input(3).empty());
  const std::vector<rt::InputMeta> none;
  std::vector<rt::OutputMeta> outs(1);
  const rt::InferContext infer{info, none, outs};
  EXPECT_FALSE(infer.has_input(0));
  EXPECT_FALSE(infer.input(2).present);
}

}  // namespace
}  // namespace onemodel
