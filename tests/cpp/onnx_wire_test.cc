// Protobuf reader rules (onnx-import.md section 1), driven through import_bytes with hand-built bytes.
#include <gtest/gtest.h>

#include "onnx_test_util.h"

namespace onemodel::test {
namespace {

// Imports and returns the error; fails the test if nothing was thrown.
Error error_of(const std::string& bytes, const onnx::ImportOptions& o = {}) {
  try {
    onnx::import_bytes(storage_of(bytes), "<test>", o);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "import did not throw";
  return Error(ErrorKind::Internal, "no error");
}

Msg tiny_graph() {
  return Msg()
      .msg(1, node("Relu", {"x"}, {"y"}))
      .bytes(2, "g")
      .msg(11, value_info("x", 1, {2}))
      .msg(12, value_info("y", 1, {2}));
}

// A valid model header ("ir_version 8") followed by `tail`; the graph comes last so errors in `tail`
// are reached first. Offsets in `tail` start at 2.
std::string with_prefix(const std::string& tail) {
  return Msg().varint(1, 8).b + tail + Msg().msg(7, tiny_graph()).msg(8, opset("", 17)).b;
}

TEST(OnnxWire, SmokeImport) {
  auto m = import_msg(model(tiny_graph()));
  ASSERT_TRUE(m.graph);
  EXPECT_EQ(m.graph->name, "g");
  ASSERT_EQ(m.graph->nodes.size(), 1u);
  EXPECT_EQ(m.graph->nodes[0].op_type, "Relu");
  EXPECT_EQ(m.graph->nodes[0].opset, 17);
  EXPECT_EQ(m.source, "<test>");
}

TEST(OnnxWire, VarintOverTenBytes) {
  // field 5 (model_version) varint with 11 bytes: ten continuation bytes.
  std::string bad = "\x28" + std::string(10, '\x80') + "\x01";
  Error e = error_of(with_prefix(bad));
  EXPECT_EQ(e.kind(), ErrorKind::Malformed);
  EXPECT_EQ(e.offset(), 2);
  EXPECT_EQ(e.field_path(), "ModelProto");
  EXPECT_EQ(e.source(), "<test>");
}

TEST(OnnxWire, TenthByteAboveOne) {
  std::string bad = "\x28" + std::string(9, '\xff') + "\x02";
  EXPECT_EQ(error_of(with_prefix(bad)).kind(), ErrorKind::Malformed);
  // Tenth byte 1 is the top bit of a 64-bit value: accepted.
  std::string ok = "\x28" + std::string(9, '\xff') + "\x01";
  auto m = onnx::import_bytes(storage_of(with_prefix(ok)), "<t>");
  EXPECT_EQ(m.model_version, -1);
}

TEST(OnnxWire, OverlongVarintAccepted) {
  // ir_version 8 written as 0x88 0x80 0x80 0x00 (overlong), model_version 5 as 0x85 0x00.
  std::string bytes = std::string("\x08\x88\x80\x80\x00", 5) + std::string("\x28\x85\x00", 3) +
                      Msg().msg(7, tiny_graph()).msg(8, opset("", 17)).b;
  auto m = onnx::import_bytes(storage_of(bytes), "<t>");
  EXPECT_EQ(m.ir_version, 8);
  EXPECT_EQ(m.model_version, 5);
}

TEST(OnnxWire, TruncatedVarint) {
  std::string bytes = Msg().varint(1, 8).msg(7, tiny_graph()).msg(8, opset("", 17)).b + "\x28\x80";
  Error e = error_of(bytes);
  EXPECT_EQ(e.kind(), ErrorKind::Malformed);
  EXPECT_EQ(e.offset(), static_cast<int64_t>(bytes.size() - 2));
}

TEST(OnnxWire, LengthBeyondRemainder) {
  // doc_string (6) claiming 100 bytes with 3 left, then nothing.
  std::string bytes = Msg().varint(1, 8).b + "\x32\x64" + "abc";
  Error e = error_of(bytes);
  EXPECT_EQ(e.kind(), ErrorKind::Malformed);
  EXPECT_EQ(e.offset(), 2);
  // A 64-bit length (2^63) must not wrap around either.
  std::string huge = Msg().varint(1, 8).b + "\x32" + std::string(9, '\xff') + "\x01" + "abc";
  EXPECT_EQ(error_of(huge).kind(), ErrorKind::Malformed);
}

TEST(OnnxWire, BadWireTypes) {
  for (int wire : {3, 4, 6, 7}) {
    std::string bad(1, static_cast<char>((9 << 3) | wire));  // unknown field 9 with that wire type
    bad += std::string(16, '\0');
    Error e = error_of(Msg().varint(1, 8).b + bad);
    EXPECT_EQ(e.kind(), ErrorKind::Malformed) << wire;
    EXPECT_EQ(e.offset(), 2) << wire;
  }
}

TEST(OnnxWire, FieldZero) {
  Error e = error_of(with_prefix(std::string("\x00\x01", 2)));
  EXPECT_EQ(e.kind(), ErrorKind::Malformed);
  EXPECT_EQ(e.offset(), 2);
}

TEST(OnnxWire, KeyWiderThan32Bits) {
  Msg m;
  Msg::put_varint(m.b, (uint64_t{1} << 35) | 0);  // field 2^32, varint
  m.b += '\x01';
  EXPECT_EQ(error_of(with_prefix(m.b)).kind(), ErrorKind::Malformed);
}

TEST(OnnxWire, InvalidUtf8InString) {
  // producer_name (2) with a lone continuation byte.
  Error e = error_of(with_prefix(Msg().bytes(2, "ab\x80").b));
  EXPECT_EQ(e.kind(), ErrorKind::Malformed);
  EXPECT_EQ(e.offset(), 2);
  // Overlong '/' (C0 AF) and a surrogate (ED A0 80) are refused too.
  EXPECT_EQ(error_of(with_prefix(Msg().bytes(2, "\xc0\xaf").b)).kind(), ErrorKind::Malformed);
  EXPECT_EQ(error_of(with_prefix(Msg().bytes(2, "\xed\xa0\x80").b)).kind(), ErrorKind::Malformed);
  // Valid multi-byte UTF-8 is kept byte for byte.
  auto m =
      onnx::import_bytes(storage_of(with_prefix(Msg().bytes(2, "h\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80").b)), "<t>");
  EXPECT_EQ(m.producer_name, "h\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
}

TEST(OnnxWire, BytesFieldNotDecoded) {
  // Attribute s (bytes) may hold anything.
  Msg attr = Msg().bytes(1, "mode").bytes(4, std::string("\xff\x00\x80", 3)).varint(20, 3);
  Msg n = node("Relu", {"x"}, {"y"});
  n.msg(5, attr);
  Msg g = Msg().msg(1, n).msg(11, value_info("x", 1, {2})).msg(12, value_info("y", 1, {2}));
  auto m = import_msg(model(g));
  EXPECT_EQ(m.graph->nodes[0].attributes[0].s, std::string("\xff\x00\x80", 3));
}

TEST(OnnxWire, UnknownAndWrongWireTypeFieldsSkipped) {
  Msg g = tiny_graph();
  g.varint(100, 5).fixed64(101, 1).fixed32(102, 2).bytes(103, "zz");
  g.varint(2, 77);  // name (a string) arriving as a varint: skipped
  Msg m =
      Msg().varint(1, 8).bytes(99, "unknown").msg(7, g).msg(8, opset("", 17)).fixed32(1, 3);  // wrong wire ir_version
  auto r = import_msg(m);
  EXPECT_EQ(r.ir_version, 8);
  EXPECT_EQ(r.graph->name, "g");
}

TEST(OnnxWire, LastSingularWins) {
  Msg m = Msg()
              .varint(1, 5)
              .bytes(2, "first")
              .bytes(2, "second")
              .msg(7, tiny_graph().bytes(2, "g2"))
              .varint(1, 9)
              .msg(8, opset("", 17));
  auto r = import_msg(m);
  EXPECT_EQ(r.ir_version, 9);
  EXPECT_EQ(r.producer_name, "second");
  EXPECT_EQ(r.graph->name, "g2");
  // Singular message fields are not merged: the second graph replaces the first.
  Msg other = Msg().msg(1, node("Neg", {"a"}, {"b"})).msg(11, value_info("a", 1, {1})).msg(12, value_info("b", 1, {1}));
  auto r2 = import_msg(Msg().varint(1, 8).msg(7, tiny_graph()).msg(7, other).msg(8, opset("", 17)));
  ASSERT_EQ(r2.graph->nodes.size(), 1u);
  EXPECT_EQ(r2.graph->nodes[0].op_type, "Neg");
  EXPECT_EQ(r2.graph->name, "");
}

TEST(OnnxWire, Int32KeepsLow32Bits) {
  // Tensor elem_type 1 + 2^32 keeps the low 32 bits: float.
  Msg shape = Msg().msg(1, Msg().varint(1, 2));
  Msg tt = Msg().varint(1, (uint64_t{1} << 32) | 1).msg(2, shape);
  Msg vi = Msg().bytes(1, "x").msg(2, Msg().msg(1, tt));
  Msg g = Msg().msg(1, node("Relu", {"x"}, {"y"})).msg(11, vi).msg(12, value_info("y", 1, {2}));
  auto m = import_msg(model(g));
  EXPECT_EQ(m.graph->values[0].type.elem, DType::F32);
}

TEST(OnnxWire, PackedAndUnpackedMixed) {
  // ints attribute: unpacked 1, packed [2,3], unpacked -4 (10-byte varint), packed [5].
  Msg attr = Msg()
                 .bytes(1, "axes")
                 .varint(8, 1)
                 .packed_varints(8, {2, 3})
                 .varint(8, static_cast<uint64_t>(-4))
                 .packed_varints(8, {5});
  // floats: unpacked 1.5, packed [2.5, -3].
  attr.f32(7, 1.5f).packed_floats(7, {2.5f, -3.0f});
  attr.varint(20, 7);
  Msg n = node("Relu", {"x"}, {"y"});
  n.msg(5, attr);
  Msg g = Msg().msg(1, n).msg(11, value_info("x", 1, {2})).msg(12, value_info("y", 1, {2}));
  auto m = import_msg(model(g));
  const auto& a = m.graph->nodes[0].attributes[0];
  EXPECT_EQ(a.type, ir::AttrType::Ints);
  EXPECT_EQ(a.ints, (std::vector<int64_t>{1, 2, 3, -4, 5}));
  EXPECT_EQ(a.floats, (std::vector<float>{1.5f, 2.5f, -3.0f}));
}

// Builds `levels` TypeProto sequence_type levels inside a value_info.
std::string nested_types(int levels) {
  std::string inner = tensor_type(1, {1}).b;
  for (int i = 0; i < levels; ++i) inner = Msg().msg(4, Msg().bytes(1, inner)).b;
  Msg vi = Msg().bytes(1, "x").bytes(2, inner);
  Msg g = Msg().msg(1, node("Relu", {"x"}, {"y"})).msg(11, vi).msg(12, value_info("y", 1, {2}));
  return model(g).b;
}

TEST(OnnxWire, NestingLimit) {
  // ModelProto.graph(1).input(2).type(3) then two levels per sequence_type (Sequence + its TypeProto),
  // then tensor_type(+1) and shape(+1) and dim(+1).
  EXPECT_NO_THROW(onnx::import_bytes(storage_of(nested_types(10)), "<t>"));
  Error e = error_of(nested_types(70));
  EXPECT_EQ(e.kind(), ErrorKind::Malformed);
  EXPECT_EQ(e.field_path().rfind("ModelProto.graph.input[0].type.sequence_type.elem_type", 0), 0u) << e.field_path();
  onnx::ImportOptions small;
  small.max_nesting = 8;
  EXPECT_EQ(error_of(nested_types(3), small).kind(), ErrorKind::Malformed);  // 3 + 6 + 3 = 12 > 8
  onnx::ImportOptions big;
  big.max_nesting = 250;
  EXPECT_NO_THROW(onnx::import_bytes(storage_of(nested_types(70)), "<t>", big));  // 3 + 140 + 3 levels
}

TEST(OnnxWire, HundredThousandLevelsRefusedWithoutStackOverflow) {
  // Each level is TypeProto{sequence_type(4): Sequence{elem_type(1): TypeProto{...}}}. Lengths are
  // computed inside-out, then the headers are written outside-in (linear, no copying of the inner bytes).
  const int levels = 100000;
  const std::string core = tensor_type(1, {1}).b;
  auto vlen = [](uint64_t v) {
    std::string s;
    Msg::put_varint(s, v);
    return s;
  };
  std::vector<uint64_t> type_len(levels + 1), seq_len(levels + 1);
  type_len[0] = core.size();
  for (int i = 1; i <= levels; ++i) {
    seq_len[i] = 1 + vlen(type_len[i - 1]).size() + type_len[i - 1];
    type_len[i] = 1 + vlen(seq_len[i]).size() + seq_len[i];
  }
  std::string inner;
  inner.reserve(type_len[levels]);
  for (int i = levels; i >= 1; --i) inner += "\x22" + vlen(seq_len[i]) + "\x0a" + vlen(type_len[i - 1]);
  inner += core;
  ASSERT_EQ(inner.size(), type_len[levels]);
  Msg vi = Msg().bytes(1, "x").bytes(2, inner);
  Msg g = Msg().msg(11, vi);
  Error e = error_of(model(g).b);
  EXPECT_EQ(e.kind(), ErrorKind::Malformed);
}

TEST(OnnxWire, NestingOptionRange) {
  for (int bad : {7, 251, 0, -1}) {
    onnx::ImportOptions o;
    o.max_nesting = bad;
    Error e = error_of(model(tiny_graph()).b, o);
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument) << bad;
  }
}

TEST(OnnxWire, EmptyInputIsInvalidModel) {
  Error e = error_of("");
  EXPECT_EQ(e.kind(), ErrorKind::InvalidModel);
}

}  // namespace
}  // namespace onemodel::test
