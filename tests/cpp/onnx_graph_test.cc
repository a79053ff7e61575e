// Graph resolution (onnx-import.md section 4): value table, scopes and captures, references, opsets,
// types, the stable topological order and consumers.
#include <gtest/gtest.h>

#include "onnx_test_util.h"

namespace onemodel::test {
namespace {

Error error_of(const Msg& m) {
  try {
    import_msg(m);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "model was accepted";
  return Error(ErrorKind::Internal, "none");
}

// Sparse indices: int64 [1] = {2}.
Msg header_i64() { return Msg().varint(1, 1).varint(2, 7).bytes(8, "sp_idx").varint(7, 2); }

int id(const ir::Graph& g, const std::string& n) { return g.find_value(n); }

TEST(OnnxGraph, ValueTableOrderAndInputDefaults) {
  // IR < 4 style: initializer "b" is also an input (its default). "c" is a plain initializer.
  Msg g;
  g.msg(1, node("Add", {"a", "b"}, {"s"})).msg(1, node("Mul", {"s", "c"}, {"p", ""}));
  g.msg(5, float_tensor_raw("b", {1}, {2.f})).msg(5, float_tensor_raw("c", {1}, {3.f}));
  g.msg(15, Msg().msg(1, float_tensor_raw("sp", {1}, {1.f})).msg(2, header_i64()).packed_varints(3, {4}));
  g.msg(11, value_info("a", 1, {1})).msg(11, value_info("b", 1, {1})).msg(12, value_info("p", 1, {1}));
  auto m = import_msg(model(g, 3));
  const auto& G = *m.graph;
  ASSERT_EQ(G.values.size(), 6u);
  EXPECT_EQ(G.values[0].name, "a");
  EXPECT_EQ(G.values[1].name, "b");
  EXPECT_TRUE(G.values[1].is_input);
  ASSERT_TRUE(G.values[1].initializer);
  EXPECT_EQ(values_of<float>(G.values[1].initializer->data)[0], 2.f);
  EXPECT_EQ(G.values[2].name, "c");
  EXPECT_FALSE(G.values[2].is_input);
  EXPECT_EQ(G.values[3].name, "sp");
  ASSERT_TRUE(G.values[3].sparse_initializer);
  EXPECT_EQ(G.values[3].sparse_initializer->dims, (std::vector<int64_t>{4}));
  EXPECT_EQ(G.values[4].name, "s");
  EXPECT_EQ(G.values[5].name, "p");
  EXPECT_EQ(G.inputs, (std::vector<int>{0, 1}));
  EXPECT_EQ(G.initializers, (std::vector<int>{1, 2}));
  EXPECT_EQ(G.nodes[1].outputs, (std::vector<int>{5, ir::kNoValue}));
  EXPECT_EQ(G.values[5].producer, 1);
  EXPECT_EQ(G.values[5].producer_output, 0);
}

TEST(OnnxGraph, DuplicateNames) {
  Msg base_in = value_info("x", 1, {1});
  // Two inputs with one name.
  EXPECT_EQ(error_of(model(Msg().msg(11, base_in).msg(11, base_in))).kind(), ErrorKind::InvalidModel);
  // Initializer repeated (not an input default).
  Msg g = Msg().msg(5, float_tensor_raw("w", {1}, {1.f})).msg(5, float_tensor_raw("w", {1}, {1.f}));
  EXPECT_EQ(error_of(model(g)).kind(), ErrorKind::InvalidModel);
  // An input given two initializers.
  Msg g2 = Msg().msg(11, base_in).msg(5, float_tensor_raw("x", {1}, {1.f})).msg(5, float_tensor_raw("x", {1}, {1.f}));
  EXPECT_EQ(error_of(model(g2)).kind(), ErrorKind::InvalidModel);
  // A node output redefining an input, naming the node.
  Msg g3 = Msg().msg(11, base_in).msg(1, node("Relu", {"x"}, {"x"}, "relu1"));
  Error e = error_of(model(g3));
  EXPECT_EQ(e.kind(), ErrorKind::InvalidModel);
  EXPECT_EQ(e.node(), "relu1");
  EXPECT_EQ(e.field_path(), "ModelProto.graph.node[0].output[0]");
  // Empty input name.
  EXPECT_EQ(error_of(model(Msg().msg(11, value_info("", 1, {1})))).kind(), ErrorKind::InvalidModel);
}

TEST(OnnxGraph, UndefinedReferenceNamesTheNode) {
  Msg g = Msg().msg(11, value_info("x", 1, {1}));
  g.msg(1, node("Relu", {"x"}, {"y"}, "first")).msg(1, node("Add", {"y", "nope"}, {"z"}, "adder"));
  Msg m = model(g);
  Error e = error_of(m);
  EXPECT_EQ(e.kind(), ErrorKind::InvalidModel);
  EXPECT_EQ(e.node(), "adder");
  EXPECT_EQ(e.field_path(), "ModelProto.graph.node[1].input[1]");
  EXPECT_NE(e.message().find("nope"), std::string::npos);
  // Offset: the key of the second node field inside the graph (found by searching the node's bytes).
  std::string second = Msg().msg(1, node("Add", {"y", "nope"}, {"z"}, "adder")).b;
  EXPECT_EQ(e.offset(), static_cast<int64_t>(m.b.find(second)));
  // Undefined graph output.
  Error o = error_of(model(Msg().msg(11, value_info("x", 1, {1})).msg(12, value_info("q", 1, {1}))));
  EXPECT_EQ(o.kind(), ErrorKind::InvalidModel);
  EXPECT_EQ(o.field_path(), "ModelProto.graph.output[0]");
}

TEST(OnnxGraph, OmittedOptionalInputs) {
  Msg g = Msg().msg(11, value_info("x", 1, {1})).msg(1, node("Clip", {"x", "", "x"}, {"y"}));
  auto m = import_msg(model(g));
  EXPECT_EQ(m.graph->nodes[0].inputs, (std::vector<int>{0, ir::kNoValue, 0}));
  EXPECT_EQ(m.graph->values[0].consumers, (std::vector<int>{0}));  // each reader once
}

TEST(OnnxGraph, Opsets) {
  Msg g = Msg().msg(11, value_info("x", 1, {1}));
  Msg n = node("Relu", {"x"}, {"y"});
  n.bytes(7, "ai.onnx");
  Msg n2 = node("Special", {"y"}, {"z"}, "sp");
  n2.bytes(7, "com.example");
  g.msg(1, n).msg(1, n2);
  Msg with = model(g);
  with.msg(8, opset("com.example", 3));
  auto m = import_msg(with);
  EXPECT_EQ(m.graph->nodes[0].domain, "");
  EXPECT_EQ(m.graph->nodes[0].opset, 17);
  EXPECT_EQ(m.graph->nodes[1].domain, "com.example");
  EXPECT_EQ(m.graph->nodes[1].opset, 3);
  Error e = error_of(model(g));
  EXPECT_EQ(e.kind(), ErrorKind::InvalidModel);
  EXPECT_EQ(e.node(), "sp");
  // "ai.onnx" imported explicitly serves the empty domain.
  Msg ai = Msg()
               .varint(1, 8)
               .msg(7, Msg().msg(11, value_info("x", 1, {1})).msg(1, node("Relu", {"x"}, {"y"})))
               .msg(8, opset("ai.onnx", 11));
  auto m2 = import_msg(ai);
  EXPECT_EQ(m2.graph->nodes[0].opset, 11);
  EXPECT_EQ(m2.opset_imports[0].domain, "");
}

TEST(OnnxGraph, TypesFromDeclarationsThenValueInfo) {
  Msg g = Msg().msg(11, value_info("x", 1, {2})).msg(1, node("Relu", {"x"}, {"y"})).msg(1, node("Neg", {"y"}, {"z"}));
  g.msg(12, value_info("z", 10, {2}));
  g.msg(13, value_info("y", 11, {2})).msg(13, value_info("z", 7, {9})).msg(13, value_info("ghost", 1, {1}));
  auto m = import_msg(model(g));
  const auto& G = *m.graph;
  EXPECT_EQ(G.values[static_cast<size_t>(id(G, "y"))].type.elem, DType::F64);  // from value_info
  EXPECT_EQ(G.values[static_cast<size_t>(id(G, "z"))].type.elem, DType::F16);  // output declaration first
  EXPECT_EQ(id(G, "ghost"), -1);
}

TEST(OnnxGraph, StableTopologicalSort) {
  // File order: n0 reads c (made by n3), n1 reads x, n2 reads a (made by n0), n3 reads x.
  // Rule: repeatedly take the smallest ready file index -> n1, n3, n0, n2.
  Msg g = Msg().msg(11, value_info("x", 1, {1}));
  g.msg(1, node("Neg", {"c"}, {"a"}, "n0")).msg(1, node("Abs", {"x"}, {"b"}, "n1"));
  g.msg(1, node("Add", {"a", "b"}, {"d"}, "n2")).msg(1, node("Relu", {"x"}, {"c"}, "n3"));
  auto m = import_msg(model(g));
  const auto& G = *m.graph;
  EXPECT_TRUE(G.nodes_were_reordered);
  std::vector<std::string> names;
  std::vector<int> file_idx;
  for (const auto& n : G.nodes) {
    names.push_back(n.name);
    file_idx.push_back(n.file_index);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"n1", "n3", "n0", "n2"}));
  EXPECT_EQ(file_idx, (std::vector<int>{1, 3, 0, 2}));
  EXPECT_EQ(G.values[static_cast<size_t>(id(G, "a"))].producer, 2);
  EXPECT_EQ(G.values[static_cast<size_t>(id(G, "c"))].producer, 1);
  EXPECT_EQ(G.values[static_cast<size_t>(id(G, "x"))].consumers, (std::vector<int>{0, 1}));
  EXPECT_EQ(G.values[static_cast<size_t>(id(G, "b"))].consumers, (std::vector<int>{3}));
}

TEST(OnnxGraph, CycleRefused) {
  Msg g = Msg().msg(11, value_info("x", 1, {1}));
  g.msg(1, node("Relu", {"x"}, {"y"}, "ok"))
      .msg(1, node("Add", {"y", "q"}, {"p"}, "loop_a"))
      .msg(1, node("Neg", {"p"}, {"q"}, "loop_b"));
  Error e = error_of(model(g));
  EXPECT_EQ(e.kind(), ErrorKind::InvalidModel);
  EXPECT_EQ(e.node(), "loop_a");
  // A node reading its own output.
  Msg self = Msg().msg(1, node("Neg", {"s"}, {"s"}, "self"));
  EXPECT_EQ(error_of(model(self)).kind(), ErrorKind::InvalidModel);
}

Msg graph_attr(const std::string& name, const Msg& g) { return Msg().bytes(1, name).msg(6, g).varint(20, 5); }

TEST(OnnxGraph, SubgraphCaptures) {
  // outer: x -> Relu -> r; If(cond) with then = Add(r, w) reading r and w from outside, else = Neg(x)
  // with a nested Loop-like subgraph (body) that reads r two levels up.
  Msg then_g = Msg().bytes(2, "then").msg(1, node("Add", {"r", "w"}, {"t_out"})).msg(12, value_info("t_out", 1, {1}));
  Msg inner = Msg().bytes(2, "inner").msg(1, node("Abs", {"r"}, {"i_out"})).msg(12, value_info("i_out", 1, {1}));
  Msg holder = node("Wrap", {"x"}, {"e_out"});
  holder.msg(5, graph_attr("body", inner));
  // "x" is shadowed inside else: defined locally as an input.
  Msg else_g =
      Msg().bytes(2, "else").msg(11, value_info("x", 1, {1})).msg(1, holder).msg(12, value_info("e_out", 1, {1}));
  Msg if_node = node("If", {"cond"}, {"out"}, "if");
  if_node.msg(5, graph_attr("then_branch", then_g)).msg(5, graph_attr("else_branch", else_g));
  Msg g;
  g.msg(11, value_info("x", 1, {1})).msg(11, value_info("cond", 9, {})).msg(5, float_tensor_raw("w", {1}, {1.f}));
  g.msg(1, if_node).msg(1, node("Relu", {"x"}, {"r"}, "relu"));  // If listed before the node producing r
  g.msg(12, value_info("out", 1, {1}));
  Msg mm = model(g);
  mm.msg(8, opset("", 17));
  auto m = import_msg(mm);
  const auto& G = *m.graph;
  // If must run after Relu (it reads r through its subgraphs).
  EXPECT_TRUE(G.nodes_were_reordered);
  ASSERT_EQ(G.nodes.size(), 2u);
  EXPECT_EQ(G.nodes[0].name, "relu");
  const auto& ifn = G.nodes[1];
  EXPECT_EQ(ifn.subgraph_reads, (std::vector<int>{id(G, "r"), id(G, "w")}));
  EXPECT_EQ(G.values[static_cast<size_t>(id(G, "r"))].consumers, (std::vector<int>{1}));
  EXPECT_EQ(G.values[static_cast<size_t>(id(G, "w"))].consumers, (std::vector<int>{1}));
  const auto& tg = *ifn.find_attribute("then_branch")->g;
  EXPECT_EQ(tg.name, "then");
  ASSERT_EQ(tg.captures.size(), 2u);
  EXPECT_EQ(tg.values[static_cast<size_t>(tg.captures[0])].name, "r");
  EXPECT_TRUE(tg.values[static_cast<size_t>(tg.captures[0])].is_capture);
  EXPECT_EQ(tg.values[static_cast<size_t>(tg.captures[1])].name, "w");
  EXPECT_EQ(tg.nodes[0].inputs, (std::vector<int>{tg.captures[0], tg.captures[1]}));
  // else: x is its own input (no capture); r reaches the nested body through else's capture.
  const auto& eg = *ifn.find_attribute("else_branch")->g;
  ASSERT_EQ(eg.captures.size(), 1u);
  EXPECT_EQ(eg.values[static_cast<size_t>(eg.captures[0])].name, "r");
  EXPECT_EQ(eg.nodes[0].subgraph_reads, (std::vector<int>{eg.captures[0]}));
  const auto& body = *eg.nodes[0].find_attribute("body")->g;
  ASSERT_EQ(body.captures.size(), 1u);
  EXPECT_EQ(body.values[static_cast<size_t>(body.captures[0])].name, "r");
  EXPECT_EQ(eg.nodes[0].opset, 17);
  // An undefined name inside a subgraph names the subgraph's node, with its field path.
  Msg bad_then = Msg().msg(1, node("Add", {"r", "missing"}, {"t_out"}, "inner_add"));
  Msg bad_if = node("If", {"cond"}, {"out"}, "if");
  bad_if.msg(5, graph_attr("then_branch", bad_then));
  Msg bg = Msg().msg(11, value_info("cond", 9, {})).msg(11, value_info("r", 1, {1})).msg(1, bad_if);
  Error e = error_of(model(bg));
  EXPECT_EQ(e.node(), "inner_add");
  EXPECT_EQ(e.field_path(), "ModelProto.graph.node[0].attribute[0].g.node[0].input[1]");
}

TEST(OnnxGraph, FunctionBodiesNotResolved) {
  // A function body may read names only the function defines (formal inputs): no error, and its If
  // subgraph reads "X" as a capture. Unknown domains in bodies are not checked either.
  Msg then_g = Msg().msg(1, node("Identity", {"X"}, {"t"})).msg(12, value_info("t", 1, {1}));
  Msg if_node = node("If", {"C"}, {"Y"});
  if_node.msg(5, graph_attr("then_branch", then_g));
  Msg body2 = node("Other", {"Y"}, {"Z"});
  body2.bytes(7, "not.imported");
  Msg fn =
      Msg().bytes(1, "F").bytes(10, "local").bytes(4, "X").bytes(4, "C").bytes(5, "Z").msg(7, if_node).msg(7, body2);
  Msg g = Msg().msg(11, value_info("x", 1, {1})).msg(1, node("Relu", {"x"}, {"y"}));
  Msg m = model(g);
  m.msg(25, fn);
  auto r = import_msg(m);
  ASSERT_EQ(r.functions.size(), 1u);
  const auto& f = r.functions[0];
  ASSERT_EQ(f.nodes.size(), 2u);
  EXPECT_EQ(f.node_inputs[0], (std::vector<std::string>{"C"}));
  EXPECT_EQ(f.node_outputs[1], (std::vector<std::string>{"Z"}));
  EXPECT_EQ(f.nodes[1].domain, "not.imported");
  const auto& tg = *f.nodes[0].find_attribute("then_branch")->g;
  ASSERT_EQ(tg.captures.size(), 1u);
  EXPECT_EQ(tg.values[static_cast<size_t>(tg.captures[0])].name, "X");
}

}  // namespace
}  // namespace onemodel::test
