// TensorProto rules (onnx-import.md section 3) through read_tensor_proto and inside models.
// Expected bytes are worked out by hand from the conversion rules in the spec.
#include <gtest/gtest.h>

#include "onnx_test_util.h"

namespace onemodel::test {
namespace {

ir::TensorValue read(const Msg& t) { return onnx::read_tensor_proto(storage_of(t.b), "<tensor>"); }

Error error_of(const Msg& t) {
  try {
    read(t);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "tensor was accepted";
  return Error(ErrorKind::Internal, "none");
}

Msg header(int type, std::initializer_list<int64_t> dims, const std::string& name = "t") {
  Msg t;
  for (auto d : dims) t.varint(1, static_cast<uint64_t>(d));
  t.varint(2, static_cast<uint64_t>(type)).bytes(8, name);
  return t;
}

std::vector<uint8_t> raw_bytes(const ir::TensorValue& tv) {
  const Storage& s = tv.raw;
  const auto* p = reinterpret_cast<const uint8_t*>(s.data.get());
  return std::vector<uint8_t>(p, p + s.bytes);
}

std::vector<uint8_t> data_bytes(const ir::TensorValue& tv) {
  const auto* p = static_cast<const uint8_t*>(tv.data.raw());
  return std::vector<uint8_t>(p, p + tv.data.nbytes());
}

TEST(OnnxTensor, RawFloat) {
  auto tv = read(float_tensor_raw("w", {2, 2}, {1.f, -2.f, 0.5f, 8.f}));
  EXPECT_EQ(tv.name, "w");
  EXPECT_EQ(tv.dtype, DType::F32);
  EXPECT_EQ(tv.dims, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(tv.data.shape(), Shape({2, 2}));
  EXPECT_EQ(values_of<float>(tv.data), (std::vector<float>{1.f, -2.f, 0.5f, 8.f}));
}

TEST(OnnxTensor, ScalarAndEmpty) {
  auto s = read(header(7, {}).packed_varints(7, {static_cast<uint64_t>(-9)}));
  EXPECT_EQ(s.data.rank(), 0);
  EXPECT_EQ(values_of<int64_t>(s.data), (std::vector<int64_t>{-9}));
  auto e = read(header(1, {0, 3}));  // no elements, no source: fine
  EXPECT_EQ(e.data.numel(), 0);
  EXPECT_FALSE(e.data.empty());
}

TEST(OnnxTensor, Int32DataConversions) {
  // int8: low 8 bits.
  EXPECT_EQ(data_bytes(read(header(3, {3}).packed_varints(5, {static_cast<uint64_t>(-1), 127, 0x1ff}))),
            (std::vector<uint8_t>{0xff, 0x7f, 0xff}));
  // uint16: low 16 bits, unpacked entries mixed with packed.
  EXPECT_EQ(values_of<uint16_t>(read(header(4, {3}).varint(5, 65535).packed_varints(5, {1, 0x12345})).data),
            (std::vector<uint16_t>{65535, 1, 0x2345}));
  // bool: any non-zero entry becomes 1.
  EXPECT_EQ(data_bytes(read(header(9, {4}).packed_varints(5, {0, 5, static_cast<uint64_t>(-1), 256}))),
            (std::vector<uint8_t>{0, 1, 1, 1}));
  // float16: entries are bit patterns (0x3c00 = 1.0, 0xc000 = -2.0).
  EXPECT_EQ(values_of<uint16_t>(Tensor::view_of(
                read(header(10, {2}).packed_varints(5, {0x3c00, 0xc000})).data.storage(), 0, DType::U16, Shape({2}))),
            (std::vector<uint16_t>{0x3c00, 0xc000}));
  // int32 as is.
  EXPECT_EQ(values_of<int32_t>(read(header(6, {2}).packed_varints(5, {static_cast<uint64_t>(-7), 7})).data),
            (std::vector<int32_t>{-7, 7}));
  // int4 (22): an entry's low byte is one packed byte; 3 elements need 2 bytes.
  auto i4 = read(header(22, {3}).packed_varints(5, {0x21, 0x103}));
  EXPECT_TRUE(i4.data.empty());
  EXPECT_EQ(raw_bytes(i4), (std::vector<uint8_t>{0x21, 0x03}));
  // uint2 (25): 5 elements in 2 bytes.
  EXPECT_EQ(raw_bytes(read(header(25, {5}).packed_varints(5, {0xe4, 0x01}))), (std::vector<uint8_t>{0xe4, 0x01}));
  // float6e2m3 (27): 1,2,3,4 packed LSB-first = 0x103081 -> 81 30 10.
  EXPECT_EQ(raw_bytes(read(header(27, {4}).packed_varints(5, {1, 2, 3, 0x44}))),
            (std::vector<uint8_t>{0x81, 0x30, 0x10}));
  // float8e4m3fn (17): 8 bits each.
  EXPECT_EQ(raw_bytes(read(header(17, {2}).packed_varints(5, {0x38, 0x1c0}))), (std::vector<uint8_t>{0x38, 0xc0}));
}

TEST(OnnxTensor, WideTypedFields) {
  // uint64_data serves uint32 with the low 32 bits.
  EXPECT_EQ(values_of<uint32_t>(read(header(12, {2}).packed_varints(11, {(uint64_t{1} << 32) | 5, 0xffffffffu})).data),
            (std::vector<uint32_t>{5, 0xffffffffu}));
  EXPECT_EQ(values_of<uint64_t>(read(header(13, {1}).varint(11, ~uint64_t{0})).data),
            (std::vector<uint64_t>{~uint64_t{0}}));
  EXPECT_EQ(values_of<int64_t>(read(header(7, {2}).varint(7, 3).varint(7, static_cast<uint64_t>(-3))).data),
            (std::vector<int64_t>{3, -3}));
  Msg d = header(11, {2});
  double a = 0.1, b = -1e300;
  uint64_t ua, ub;
  std::memcpy(&ua, &a, 8);
  std::memcpy(&ub, &b, 8);
  d.fixed64(10, ua).fixed64(10, ub);
  EXPECT_EQ(values_of<double>(read(d).data), (std::vector<double>{0.1, -1e300}));
  // complex64 from float_data: 2 floats per element, kept as raw bytes.
  auto c = read(header(14, {1}).packed_floats(4, {1.f, 2.f}));
  EXPECT_TRUE(c.data.empty());
  ASSERT_EQ(c.raw.bytes, 8u);
  float pair[2];
  std::memcpy(pair, c.raw.data.get(), 8);
  EXPECT_EQ(pair[0], 1.f);
  EXPECT_EQ(pair[1], 2.f);
  // float_data unpacked and packed mixed.
  EXPECT_EQ(values_of<float>(read(header(1, {3}).f32(4, 1.5f).packed_floats(4, {2.5f, 3.5f})).data),
            (std::vector<float>{1.5f, 2.5f, 3.5f}));
}

TEST(OnnxTensor, Strings) {
  auto s = read(header(8, {2}).bytes(6, "ab").bytes(6, std::string("\xff\x00", 2)));
  EXPECT_EQ(s.strings, (std::vector<std::string>{"ab", std::string("\xff\x00", 2)}));
  EXPECT_EQ(error_of(header(8, {3}).bytes(6, "a")).kind(), ErrorKind::InvalidModel);
}

TEST(OnnxTensor, DimensionErrors) {
  Error over = error_of(header(1, {int64_t{1} << 40, int64_t{1} << 40}));
  EXPECT_EQ(over.kind(), ErrorKind::InvalidModel);
  EXPECT_EQ(over.field_path(), "TensorProto");
  EXPECT_EQ(error_of(header(1, {2, -1})).kind(), ErrorKind::InvalidModel);
  // 2^29 floats = 2^31 bytes: unsupported, decided from the dims with no data present.
  Error big = error_of(header(1, {int64_t{1} << 29}));
  EXPECT_EQ(big.kind(), ErrorKind::Unsupported);
  // 2^31-1 bytes of uint8 would be fine by size, but 2^31 is not.
  EXPECT_EQ(error_of(header(2, {int64_t{1} << 31})).kind(), ErrorKind::Unsupported);
  // 2^60 elements exactly is allowed by the count rule (then too many bytes); 2^60+1 is not.
  EXPECT_EQ(error_of(header(1, {int64_t{1} << 60})).kind(), ErrorKind::Unsupported);
  EXPECT_EQ(error_of(header(1, {(int64_t{1} << 60) + 1})).kind(), ErrorKind::InvalidModel);
  // Rank 9: beyond the engine's Shape limits, named.
  Error rank = error_of(header(1, {1, 1, 1, 1, 1, 1, 1, 1, 1}, "deep").packed_floats(4, {1.f}));
  EXPECT_EQ(rank.kind(), ErrorKind::Unsupported);
  EXPECT_NE(std::string(rank.message()).find("deep"), std::string::npos);
}

TEST(OnnxTensor, SourceErrors) {
  // raw_data of the wrong length: offset of the raw_data key and its field path.
  Msg t = header(1, {2});
  size_t raw_at = t.b.size();
  t.bytes(9, std::string(4, '\0'));
  Error e = error_of(t);
  EXPECT_EQ(e.kind(), ErrorKind::InvalidModel);
  EXPECT_EQ(e.offset(), static_cast<int64_t>(raw_at));
  EXPECT_EQ(e.field_path(), "TensorProto.raw_data");
  EXPECT_EQ(e.source(), "<tensor>");
  // Mixing raw_data and float_data.
  EXPECT_EQ(error_of(header(1, {1}).bytes(9, std::string(4, '\0')).f32(4, 1.f)).kind(), ErrorKind::InvalidModel);
  // A typed field that does not belong to the element type.
  EXPECT_EQ(error_of(header(1, {1}).varint(7, 1)).kind(), ErrorKind::InvalidModel);
  EXPECT_EQ(error_of(header(12, {1}).varint(5, 1)).kind(), ErrorKind::InvalidModel);
  // Typed field with the wrong count.
  EXPECT_EQ(error_of(header(1, {3}).packed_floats(4, {1.f, 2.f})).kind(), ErrorKind::InvalidModel);
  // Elements and no source.
  EXPECT_EQ(error_of(header(1, {3})).kind(), ErrorKind::InvalidModel);
  // Segments are not supported.
  EXPECT_EQ(error_of(header(1, {1}).msg(3, Msg().varint(1, 0).varint(2, 1)).f32(4, 1.f)).kind(),
            ErrorKind::Unsupported);
  // Element type codes: 0 is no type, 29 is unknown.
  EXPECT_EQ(error_of(header(0, {1})).kind(), ErrorKind::InvalidModel);
  EXPECT_EQ(error_of(header(29, {1})).kind(), ErrorKind::Unsupported);
  // raw_data for strings.
  EXPECT_EQ(error_of(header(8, {1}).bytes(9, "x")).kind(), ErrorKind::InvalidModel);
}

TEST(OnnxTensor, AllElementTypeByteLengths) {
  // Expected raw_data bytes for 3 elements of every code 1..28 except string (8), by the bit widths of
  // section 3: ceil(3 * bits / 8).
  const int bytes_for_3[29] = {0,  12, 3, 3, 6, 6, 12, 24, 0, 3, 6, 24, 12, 24, 24,
                               48, 6,  3, 3, 3, 3, 2,  2,  2, 3, 1, 1,  3,  3};
  for (int code = 1; code <= 28; ++code) {
    if (code == 8) continue;
    auto n = static_cast<size_t>(bytes_for_3[code]);
    auto tv = read(header(code, {3}).bytes(9, std::string(n, '\x01')));
    if (dtype_is_stored(static_cast<DType>(code))) {
      EXPECT_EQ(tv.data.nbytes(), n) << code;
    } else {
      EXPECT_EQ(tv.raw.bytes, n) << code;
    }
    EXPECT_EQ(error_of(header(code, {3}).bytes(9, std::string(n + 1, '\x01'))).kind(), ErrorKind::InvalidModel) << code;
  }
}

TEST(OnnxTensor, ViewsIntoInputBytes) {
  // raw_data initializers are views: the tensor's bytes live inside the caller's storage.
  Msg g = Msg()
              .msg(1, node("Relu", {"w"}, {"y"}))
              .msg(5, float_tensor_raw("w", {2}, {4.f, 5.f}))
              .msg(12, value_info("y", 1, {2}));
  Storage s = storage_of(model(g).b);
  auto m = onnx::import_bytes(s, "<b>");
  const auto* p = static_cast<const std::byte*>(m.graph->values[0].initializer->data.raw());
  EXPECT_GE(p, s.data.get());
  EXPECT_LT(p, s.data.get() + s.bytes);
  EXPECT_EQ(values_of<float>(m.graph->values[0].initializer->data), (std::vector<float>{4.f, 5.f}));
}

TEST(OnnxTensor, CopyRawDataLeavesTheInputBytes) {
  // With copy_raw_data (what Session::load_bytes imports with) raw_data gets a 64-byte-aligned buffer of its
  // own, also in an attribute's tensor and for a type kept as raw bytes (complex64 here); same values.
  const float pair[2] = {1.f, -2.f};
  Msg h = header(14, {1}, "h").bytes(9, std::string(reinterpret_cast<const char*>(pair), 8));
  Msg c = node("Constant", {}, {"c"});
  c.msg(5, Msg().bytes(1, "value").msg(5, float_tensor_raw("", {1}, {7.f})).varint(20, 4));
  Msg g = Msg()
              .msg(1, c)
              .msg(1, node("Relu", {"w"}, {"y"}))
              .msg(5, float_tensor_raw("w", {3}, {4.f, -5.f, 6.f}))
              .msg(5, h)
              .msg(12, value_info("y", 1, {3}));
  // One byte in front moves every raw_data off its alignment in the buffer.
  Storage s = storage_of("\x0a" + std::string(1, '\0') + model(g).b);
  Storage inner;
  inner.data = std::shared_ptr<std::byte>(s.data, s.data.get() + 2);
  inner.bytes = s.bytes - 2;
  onnx::ImportOptions o;
  o.copy_raw_data = true;
  const auto m = onnx::import_bytes(inner, "<b>", o);
  const auto outside = [&](const void* p) {
    const auto* b = static_cast<const std::byte*>(p);
    return b < s.data.get() || b >= s.data.get() + s.bytes;
  };
  const ir::Graph& gr = *m.graph;
  int seen = 0;
  for (const ir::Value& v : gr.values) {
    if (!v.initializer) continue;
    const ir::TensorValue& tv = *v.initializer;
    const void* p = tv.data.empty() ? static_cast<const void*>(tv.raw.data.get()) : tv.data.raw();
    EXPECT_TRUE(outside(p)) << v.name;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << v.name;
    ++seen;
    if (v.name == "w") {
      EXPECT_EQ(values_of<float>(tv.data), (std::vector<float>{4.f, -5.f, 6.f}));
    }
    if (v.name == "h") {
      ASSERT_EQ(tv.raw.bytes, 8u);
      EXPECT_EQ(std::memcmp(tv.raw.data.get(), pair, 8), 0);
    }
  }
  EXPECT_EQ(seen, 2);
  const ir::Attribute* value = nullptr;
  for (const ir::Node& n : gr.nodes)
    if (n.op_type == "Constant") value = &n.attributes.at(0);
  ASSERT_NE(value, nullptr);
  ASSERT_TRUE(value->t);
  EXPECT_TRUE(outside(value->t->data.raw()));
  EXPECT_EQ(values_of<float>(value->t->data), (std::vector<float>{7.f}));
}

TEST(OnnxTensor, FieldPathInsideModel) {
  // Third node attribute holds a bad tensor: ModelProto.graph.node[1].attribute[1].t, at the t key.
  Msg bad_t = header(1, {2}).bytes(9, "abc");
  Msg attr0 = Msg().bytes(1, "a").varint(3, 1);
  Msg attr1 = Msg().bytes(1, "value").msg(5, bad_t);
  Msg n1 = node("Constant", {}, {"c"});
  n1.msg(5, attr0).msg(5, attr1);
  Msg g = Msg().msg(1, node("Relu", {"x"}, {"y"})).msg(1, n1).msg(11, value_info("x", 1, {2}));
  Msg m = model(g);
  try {
    import_msg(m);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidModel);
    EXPECT_EQ(e.field_path(), "ModelProto.graph.node[1].attribute[1].t.raw_data");
    // Offset: position of the raw_data key inside the file, found independently by searching for
    // the unique byte sequence key(9,len)=0x4a 0x03 'a' 'b' 'c'.
    EXPECT_EQ(e.offset(), static_cast<int64_t>(m.b.find("\x4a\x03"
                                                        "abc")));
  }
}

}  // namespace
}  // namespace onemodel::test
