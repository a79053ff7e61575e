// The committed sample models (testdata/*.onnx) and model-level checks (onnx-import.md sections 2 and 6).
// Expected facts were read with /usr/bin/python3 + onnx 1.12 (onnx.load, numpy_helper.to_array) and pasted
// here as constants.
#include <gtest/gtest.h>

#include "onnx_test_util.h"
#include "test_util.h"

namespace onemodel::test {
namespace {

std::vector<std::string> dims_of(const ir::TypeInfo& t) {
  std::vector<std::string> out;
  for (const auto& d : t.dims) out.push_back(d.is_fixed() ? std::to_string(d.value) : d.param);
  return out;
}

const ir::Value& value(const ir::Graph& g, const std::string& name) {
  int id = g.find_value(name);
  EXPECT_GE(id, 0) << name;
  return g.values.at(static_cast<size_t>(id < 0 ? 0 : id));
}

TEST(OnnxModel, Classifier) {
  auto m = onnx::import_file(testdata("classifier.onnx"));
  EXPECT_EQ(m.ir_version, 8);
  ASSERT_EQ(m.opset_imports.size(), 1u);
  EXPECT_EQ(m.opset_imports[0].domain, "");
  EXPECT_EQ(m.opset_imports[0].version, 17);
  EXPECT_EQ(m.opset_for(""), 17);
  EXPECT_EQ(m.opset_for("ai.onnx"), 17);
  EXPECT_EQ(m.opset_for("com.microsoft"), 0);
  const ir::Graph& g = *m.graph;
  EXPECT_EQ(g.name, "classifier");
  EXPECT_FALSE(g.nodes_were_reordered);
  ASSERT_EQ(g.nodes.size(), 4u);
  const char* ops[] = {"Gemm", "Relu", "Gemm", "Softmax"};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(g.nodes[i].op_type, ops[i]);
    EXPECT_EQ(g.nodes[i].opset, 17);
    EXPECT_EQ(g.nodes[i].domain, "");
    EXPECT_EQ(g.nodes[i].file_index, static_cast<int>(i));
  }
  const auto* tb = g.nodes[0].find_attribute("transB");
  ASSERT_TRUE(tb);
  EXPECT_EQ(tb->type, ir::AttrType::Int);
  EXPECT_EQ(tb->i, 1);
  EXPECT_EQ(g.nodes[3].find_attribute("axis")->i, 1);
  // Inputs / outputs with the symbolic batch dimension.
  ASSERT_EQ(g.inputs.size(), 1u);
  const ir::Value& x = g.values[static_cast<size_t>(g.inputs[0])];
  EXPECT_EQ(x.name, "x");
  EXPECT_TRUE(x.is_input);
  EXPECT_EQ(x.type.kind, ValueKind::Tensor);
  EXPECT_EQ(x.type.elem, DType::F32);
  EXPECT_TRUE(x.type.has_shape);
  EXPECT_EQ(dims_of(x.type), (std::vector<std::string>{"batch", "4"}));
  ASSERT_EQ(g.outputs.size(), 1u);
  EXPECT_EQ(dims_of(g.values[static_cast<size_t>(g.outputs[0])].type), (std::vector<std::string>{"batch", "3"}));
  // Initializers: dtypes, dims and a few values (bit-exact float32 values from numpy).
  ASSERT_EQ(g.initializers.size(), 4u);
  const auto& w1 = *value(g, "W1").initializer;
  EXPECT_EQ(w1.dtype, DType::F32);
  EXPECT_EQ(w1.dims, (std::vector<int64_t>{8, 4}));
  auto w1d = values_of<float>(w1.data);
  ASSERT_EQ(w1d.size(), 32u);
  EXPECT_EQ(w1d[0], 0.0006150766857899725f);
  EXPECT_EQ(w1d[1], 0.14937277138233185f);
  EXPECT_EQ(w1d[2], -0.13706892728805542f);
  EXPECT_EQ(w1d[31], -0.23887664079666138f);
  const auto& b2 = *value(g, "b2").initializer;
  EXPECT_EQ(b2.dims, (std::vector<int64_t>{3}));
  EXPECT_EQ(values_of<float>(b2.data)[2], 0.449381947517395f);
  EXPECT_EQ(value(g, "W2").initializer->dims, (std::vector<int64_t>{3, 8}));
  // Value ids: input, 4 initializers, then node outputs; consumers and producers.
  EXPECT_EQ(g.find_value("x"), 0);
  EXPECT_EQ(g.find_value("W1"), 1);
  EXPECT_EQ(g.find_value("h"), 5);
  EXPECT_EQ(value(g, "h").producer, 0);
  EXPECT_EQ(value(g, "h").consumers, (std::vector<int>{1}));
  EXPECT_EQ(value(g, "x").consumers, (std::vector<int>{0}));
  EXPECT_EQ(g.nodes[2].inputs, (std::vector<int>{g.find_value("hr"), g.find_value("W2"), g.find_value("b2")}));
  EXPECT_EQ(m.source, testdata("classifier.onnx").string());
}

TEST(OnnxModel, Scorer) {
  auto m = onnx::import_file(testdata("scorer.onnx"));
  const ir::Graph& g = *m.graph;
  EXPECT_EQ(m.opset_for(""), 13);
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.nodes[2].op_type, "ReduceMax");
  const auto* axes = g.nodes[2].find_attribute("axes");
  ASSERT_TRUE(axes);
  EXPECT_EQ(axes->type, ir::AttrType::Ints);
  EXPECT_EQ(axes->ints, (std::vector<int64_t>{1}));
  EXPECT_EQ(g.nodes[2].find_attribute("keepdims")->i, 0);
  ASSERT_EQ(g.inputs.size(), 2u);
  EXPECT_EQ(dims_of(value(g, "bias").type), (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(dims_of(value(g, "best").type), (std::vector<std::string>{"batch"}));
  ASSERT_EQ(g.outputs.size(), 2u);
  auto w = values_of<float>(value(g, "W").initializer->data);
  EXPECT_EQ(w, (std::vector<float>{1, 0, 0, 1, 1, 1}));
}

TEST(OnnxModel, WideAndUnsupported) {
  auto m = onnx::import_file(testdata("wide.onnx"));
  const auto& w1 = *value(*m.graph, "W1").initializer;
  EXPECT_EQ(w1.dims, (std::vector<int64_t>{256, 512}));
  auto d = values_of<float>(w1.data);
  EXPECT_EQ(d[0], 0.05726110190153122f);
  EXPECT_EQ(d[1], -0.0661763921380043f);
  EXPECT_EQ(d[d.size() - 1], -0.012502416968345642f);
  EXPECT_EQ(values_of<float>(value(*m.graph, "W2").initializer->data)[2], 0.04234584420919418f);

  auto u = onnx::import_file(testdata("unsupported.onnx"));
  EXPECT_EQ(u.ir_version, 10);
  EXPECT_EQ(u.opset_for(""), 22);
  const auto& dec = u.graph->nodes[1];
  EXPECT_EQ(dec.op_type, "ImageDecoder");
  EXPECT_EQ(dec.find_attribute("pixel_format")->type, ir::AttrType::String);
  EXPECT_EQ(dec.find_attribute("pixel_format")->s, "RGB");
  // Outputs declared with no shape have unknown rank.
  EXPECT_FALSE(value(*u.graph, "y").type.has_shape);
  EXPECT_EQ(value(*u.graph, "y").type.elem, DType::F32);
  EXPECT_EQ(dims_of(value(*u.graph, "offset").type), (std::vector<std::string>{"1", "8", "2", "2"}));
  EXPECT_EQ(value(*u.graph, "encoded").type.elem, DType::U8);

  auto w = onnx::import_file(testdata("wave.onnx"));
  ASSERT_EQ(w.graph->nodes.size(), 1u);
  EXPECT_EQ(w.graph->nodes[0].op_type, "Cos");
}

TEST(OnnxModel, EveryPrefixOfClassifierRefused) {
  std::ifstream f(testdata("classifier.onnx"), std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  ASSERT_EQ(all.size(), 535u);
  for (size_t n = 0; n < all.size(); ++n) {
    try {
      onnx::import_bytes(storage_of(all.substr(0, n)), "<prefix>");
      ADD_FAILURE() << "prefix of " << n << " bytes was accepted";
    } catch (const Error& e) {
      EXPECT_TRUE(e.kind() == ErrorKind::Malformed || e.kind() == ErrorKind::InvalidModel) << n << ": " << e.what();
    }
  }
}

TEST(OnnxModel, MutatedClassifierNeverCrashes) {
  // Deterministic byte mutations (xorshift): each import either succeeds or throws onemodel::Error;
  // ASan/UBSan catch any out-of-bounds read on the way.
  std::ifstream f(testdata("classifier.onnx"), std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  uint64_t state = 0x9e3779b97f4a7c15ull;
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  int accepted = 0, refused = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string m = all;
    int flips = 1 + static_cast<int>(next() % 4);
    for (int k = 0; k < flips; ++k) m[next() % m.size()] = static_cast<char>(next() & 0xff);
    try {
      onnx::import_bytes(storage_of(m), "<mutant>");
      ++accepted;
    } catch (const Error&) {
      ++refused;
    }
  }
  EXPECT_EQ(accepted + refused, 3000);
  EXPECT_GT(refused, 0);
}

TEST(OnnxModel, MissingGraphAndOldIrVersion) {
  Msg g = Msg().msg(1, node("Relu", {"x"}, {"y"})).msg(11, value_info("x", 1, {2})).msg(12, value_info("y", 1, {2}));
  auto kind = [](const Msg& m) {
    try {
      import_msg(m);
    } catch (const Error& e) {
      return e.kind();
    }
    return ErrorKind::Internal;
  };
  EXPECT_EQ(kind(Msg().varint(1, 8).msg(8, opset("", 17))), ErrorKind::InvalidModel);
  EXPECT_EQ(kind(Msg().msg(7, g).msg(8, opset("", 17))), ErrorKind::InvalidModel);  // no ir_version
  EXPECT_EQ(kind(model(g, 2)), ErrorKind::InvalidModel);
  EXPECT_NO_THROW(import_msg(model(g, 3)));
  EXPECT_NO_THROW(import_msg(model(g, 99)));  // newer than known: accepted
}

TEST(OnnxModel, LargeModelIsMapped) {
  // A 1.5 MiB float initializer written to a temp file; files >= 1 MiB take the mmap path.
  const int64_t n = 393216;  // 1.5 MiB of float32
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i % 1000) * 0.5f;
  Msg g =
      Msg().msg(1, node("Relu", {"W"}, {"y"})).msg(5, float_tensor_raw("W", {n}, v)).msg(12, value_info("y", 1, {n}));
  TempDir dir("mmap");
  auto path = dir.path / "big.onnx";
  std::string bytes = model(g).b;
  ASSERT_GE(bytes.size(), size_t{1} << 20);
  write_file(path, bytes);
  ir::Model m = onnx::import_file(path);
  auto d = values_of<float>(value(*m.graph, "W").initializer->data);
  ASSERT_EQ(d.size(), static_cast<size_t>(n));
  EXPECT_EQ(d[0], 0.0f);
  EXPECT_EQ(d[999], 499.5f);
  EXPECT_EQ(d[static_cast<size_t>(n - 1)], static_cast<float>((n - 1) % 1000) * 0.5f);
#ifdef __linux__
  {  // The file appears in the process's memory map: it was mapped, not read.
    std::ifstream maps("/proc/self/maps");
    std::string all((std::istreambuf_iterator<char>(maps)), std::istreambuf_iterator<char>());
    EXPECT_NE(all.find(std::filesystem::canonical(path).string()), std::string::npos);
  }
#endif
  // The tensor keeps the mapping alive after the model (and the file) are gone.
  Tensor t = value(*m.graph, "W").initializer->data;
  m = ir::Model{};
  std::filesystem::remove(path);
  EXPECT_EQ(values_of<float>(t)[1001], 0.5f);
}

TEST(OnnxModel, IoErrors) {
  try {
    onnx::import_file(testdata("does-not-exist.onnx"));
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Io);
    EXPECT_EQ(e.source(), testdata("does-not-exist.onnx").string());
  }
  try {
    onnx::import_file(testdata(""));  // a directory
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Io);
  }
}

TEST(OnnxModel, MetadataFunctionsAndAttributeInference) {
  // An attribute without `type`: inferred from the field set. Attribute declared tensor without t: error.
  Msg a_f = Msg().bytes(1, "alpha").f32(2, 0.25f);
  Msg a_s = Msg().bytes(1, "name").bytes(4, "abc");
  Msg a_fl = Msg().bytes(1, "scales").packed_floats(7, {1.f, 2.f});
  Msg a_t = Msg().bytes(1, "value").msg(5, float_tensor_raw("", {1}, {3.5f}));
  Msg a_zero = Msg().bytes(1, "zero").varint(20, 2);  // Int declared, field absent: reads as 0
  Msg n = node("Custom", {"x"}, {"y"}, "n0");
  n.msg(5, a_f).msg(5, a_s).msg(5, a_fl).msg(5, a_t).msg(5, a_zero);
  Msg g = Msg().msg(1, n).msg(11, value_info("x", 1, {2})).msg(12, value_info("y", 1, {2}));
  Msg fn = Msg()
               .bytes(1, "MyFn")
               .bytes(10, "local")
               .bytes(4, "X")
               .bytes(5, "Y")
               .bytes(6, "k")
               .msg(7, node("Relu", {"X"}, {"Y"}))
               .msg(9, opset("", 17))
               .msg(11, Msg().bytes(1, "k").varint(3, 4));
  Msg m = model(g);
  m.msg(14, Msg().bytes(1, "author").bytes(2, "me"))
      .msg(25, fn)
      .bytes(2, "prod")
      .bytes(3, "1.0")
      .bytes(4, "dom")
      .varint(5, 7);
  auto r = import_msg(m);
  EXPECT_EQ(r.producer_name, "prod");
  EXPECT_EQ(r.producer_version, "1.0");
  EXPECT_EQ(r.domain, "dom");
  EXPECT_EQ(r.model_version, 7);
  ASSERT_EQ(r.metadata_props.size(), 1u);
  EXPECT_EQ(r.metadata_props[0], (std::pair<std::string, std::string>{"author", "me"}));
  const auto& attrs = r.graph->nodes[0].attributes;
  ASSERT_EQ(attrs.size(), 5u);
  EXPECT_EQ(attrs[0].type, ir::AttrType::Float);
  EXPECT_EQ(attrs[0].f, 0.25f);
  EXPECT_EQ(attrs[1].type, ir::AttrType::String);
  EXPECT_EQ(attrs[2].type, ir::AttrType::Floats);
  EXPECT_EQ(attrs[3].type, ir::AttrType::Tensor);
  EXPECT_EQ(values_of<float>(attrs[3].t->data)[0], 3.5f);
  EXPECT_EQ(attrs[4].type, ir::AttrType::Int);
  EXPECT_EQ(attrs[4].i, 0);
  ASSERT_EQ(r.functions.size(), 1u);
  const auto& f = r.functions[0];
  EXPECT_EQ(f.name, "MyFn");
  EXPECT_EQ(f.domain, "local");
  EXPECT_EQ(f.inputs, (std::vector<std::string>{"X"}));
  EXPECT_EQ(f.attributes, (std::vector<std::string>{"k"}));
  ASSERT_EQ(f.attribute_defaults.size(), 1u);
  EXPECT_EQ(f.attribute_defaults[0].i, 4);
  ASSERT_EQ(f.nodes.size(), 1u);
  EXPECT_EQ(f.nodes[0].op_type, "Relu");
  EXPECT_EQ(f.node_inputs[0], (std::vector<std::string>{"X"}));
  EXPECT_EQ(f.opset_imports[0].version, 17);

  auto err = [&](const Msg& attr) {
    Msg bad = node("Custom", {"x"}, {"y"});
    bad.msg(5, attr);
    try {
      import_msg(model(Msg().msg(1, bad).msg(11, value_info("x", 1, {2}))));
    } catch (const Error& e) {
      return e;
    }
    return Error(ErrorKind::Internal, "none");
  };
  Error e1 = err(Msg().bytes(1, "empty"));
  EXPECT_EQ(e1.kind(), ErrorKind::InvalidModel);
  EXPECT_EQ(e1.node(), "Custom");  // unnamed node: its op type
  EXPECT_EQ(e1.field_path(), "ModelProto.graph.node[0].attribute[0]");
  EXPECT_EQ(err(Msg().bytes(1, "t").varint(20, 4)).kind(), ErrorKind::InvalidModel);
  EXPECT_EQ(err(Msg().bytes(1, "g").varint(20, 5)).kind(), ErrorKind::InvalidModel);
  // ref_attr_name alone carries no value and is fine.
  Msg ok = node("Custom", {"x"}, {"y"});
  ok.msg(5, Msg().bytes(1, "r").bytes(21, "outer").varint(20, 2));
  EXPECT_NO_THROW(import_msg(model(Msg().msg(1, ok).msg(11, value_info("x", 1, {2})))));
}

TEST(OnnxModel, TypeProtoKinds) {
  Msg seq = Msg().msg(4, Msg().msg(1, tensor_type(7, {})));
  Msg map = Msg().msg(5, Msg().varint(1, 8).msg(2, tensor_type(1, {3})));
  Msg opt = Msg().msg(9, Msg().msg(1, tensor_type(9, {})));
  Msg unknown_rank = Msg().msg(1, Msg().varint(1, 1));
  Msg empty_dim = Msg().msg(1, Msg().varint(1, 1).msg(2, Msg().msg(1, Msg()).msg(1, Msg().varint(1, 5).bytes(2, "n"))));
  Msg g;
  g.msg(1, node("Identity", {"a"}, {"b"}));
  g.msg(11, Msg().bytes(1, "a").msg(2, seq))
      .msg(11, Msg().bytes(1, "m").msg(2, map))
      .msg(11, Msg().bytes(1, "o").msg(2, opt));
  g.msg(11, Msg().bytes(1, "u").msg(2, unknown_rank))
      .msg(11, Msg().bytes(1, "d").msg(2, empty_dim))
      .msg(11, Msg().bytes(1, "none"));
  g.msg(12, Msg().bytes(1, "b"));
  auto r = import_msg(model(g));
  const auto& G = *r.graph;
  EXPECT_EQ(value(G, "a").type.kind, ValueKind::Sequence);
  ASSERT_TRUE(value(G, "a").type.inner);
  EXPECT_EQ(value(G, "a").type.inner->elem, DType::I64);
  EXPECT_TRUE(value(G, "a").type.inner->has_shape);  // shape present, rank 0
  EXPECT_EQ(value(G, "m").type.kind, ValueKind::Map);
  EXPECT_EQ(value(G, "m").type.map_key, DType::String);
  EXPECT_EQ(dims_of(*value(G, "m").type.inner), (std::vector<std::string>{"3"}));
  EXPECT_EQ(value(G, "o").type.kind, ValueKind::Optional);
  EXPECT_EQ(value(G, "o").type.inner->elem, DType::Bool);
  EXPECT_FALSE(value(G, "u").type.has_shape);
  const auto& dd = value(G, "d").type.dims;
  ASSERT_EQ(dd.size(), 2u);
  EXPECT_EQ(dd[0].value, -1);
  EXPECT_EQ(dd[0].param, "");
  EXPECT_EQ(dd[1].param, "n");  // dim_param after dim_value: the last one set wins
  EXPECT_EQ(dd[1].value, -1);
  EXPECT_EQ(value(G, "none").type.kind, ValueKind::Unknown);
}

}  // namespace
}  // namespace onemodel::test
