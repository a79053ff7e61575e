// Protobuf reader rules (onnx-import.md section 1), driven through import_bytes with hand-built bytes.
#include <gtest/gtest.h>

#include "onnx_test_util.h"

namespace onemodel::test {
namespace {

ErrorKind kind_of(const std::string& bytes, const onnx::ImportOptions& o = {}) {
  try {
    onnx::import_bytes(storage_of(bytes), "<test>", o);
  } catch (const Error& e) {
    return e.kind();
  }
  return ErrorKind::Internal;  // "no error" marker
}

Msg tiny_graph() {
  return Msg().msg(1, node("Relu", {"x"}, {"y"})).bytes(2, "g").msg(11, value_info("x", 1, {2})).msg(12, value_info("y", 1, {2}));
}

TEST(OnnxWire, SmokeImport) {
  auto m = import_msg(model(tiny_graph()));
  ASSERT_TRUE(m.graph);
  EXPECT_EQ(m.graph->name, "g");
  ASSERT_EQ(m.graph->nodes.size(), 1u);
  EXPECT_EQ(m.graph->nodes[0].op_type, "Relu");
  EXPECT_EQ(m.graph->nodes[0].opset, 17);
}

}  // namespace
}  // namespace onemodel::test
