// External data (onnx-import.md section 5): location rules, directory confinement through symbolic
// links, offset/length checks, and values read correctly from files in a temporary directory.
#include <gtest/gtest.h>

#include "onnx_test_util.h"

namespace onemodel::test {
namespace {

Msg entry(const std::string& k, const std::string& v) { return Msg().bytes(1, k).bytes(2, v); }

// A float tensor [n] named `name` whose values are external.
Msg ext_tensor(const std::string& name, int64_t n, std::vector<std::pair<std::string, std::string>> entries) {
  Msg t = Msg().varint(1, static_cast<uint64_t>(n)).varint(2, 1).bytes(8, name);
  for (auto& [k, v] : entries) t.msg(13, entry(k, v));
  t.varint(14, 1);
  return t;
}

Msg ext_model(const Msg& tensor) {
  return model(Msg().msg(1, node("Relu", {"w"}, {"y"})).msg(5, tensor).msg(12, value_info("y", 1, {2})));
}

std::string floats_bytes(std::initializer_list<float> v) {
  return std::string(reinterpret_cast<const char*>(std::data(v)), v.size() * 4);
}

class OnnxExternal : public ::testing::Test {
 protected:
  TempDir dir{"ext"};
  void SetUp() override {
    // weights.bin: 4 bytes of padding, then floats 1.5, -2.
    write_file(dir.path / "weights.bin", "PAD!" + floats_bytes({1.5f, -2.f}));
    std::filesystem::create_directories(dir.path / "sub");
    write_file(dir.path / "sub" / "w2.bin", floats_bytes({7.f, 8.f}));
  }
  ErrorKind kind_from_file(const Msg& m) {
    write_file(dir.path / "m.onnx", m.b);
    try {
      onnx::import_file(dir.path / "m.onnx");
    } catch (const Error& e) {
      last = e;
      return e.kind();
    }
    return ErrorKind::Internal;
  }
  Error last{ErrorKind::Internal, ""};
};

TEST_F(OnnxExternal, ReadFromModelDirectory) {
  Msg m =
      ext_model(ext_tensor("w", 2, {{"location", "weights.bin"}, {"offset", "4"}, {"length", "8"}, {"checksum", "x"}}));
  write_file(dir.path / "m.onnx", m.b);
  auto r = onnx::import_file(dir.path / "m.onnx");
  EXPECT_EQ(values_of<float>(r.graph->values[0].initializer->data), (std::vector<float>{1.5f, -2.f}));
  // Leading zeros are still decimal.
  Msg z = ext_model(ext_tensor("w", 2, {{"location", "weights.bin"}, {"offset", "000000000000000000004"}}));
  write_file(dir.path / "z.onnx", z.b);
  EXPECT_EQ(values_of<float>(onnx::import_file(dir.path / "z.onnx").graph->values[0].initializer->data)[0], 1.5f);
  // Length defaults to the expected length; a subdirectory is fine.
  Msg m2 = ext_model(ext_tensor("w", 2, {{"location", "sub/w2.bin"}}));
  write_file(dir.path / "m2.onnx", m2.b);
  auto r2 = onnx::import_file(dir.path / "m2.onnx");
  EXPECT_EQ(values_of<float>(r2.graph->values[0].initializer->data), (std::vector<float>{7.f, 8.f}));
}

TEST_F(OnnxExternal, BytesNeedADirectory) {
  Msg m = ext_model(ext_tensor("w", 2, {{"location", "sub/w2.bin"}}));
  try {
    import_msg(m);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::ExternalData);
    EXPECT_EQ(e.field_path(), "ModelProto.graph.initializer[0].external_data");
  }
  onnx::ImportOptions o;
  o.external_data_dir = (dir.path / "sub").string();
  Msg m2 = ext_model(ext_tensor("w", 2, {{"location", "w2.bin"}}));
  auto r = import_msg(m2, o);
  EXPECT_EQ(values_of<float>(r.graph->values[0].initializer->data), (std::vector<float>{7.f, 8.f}));
}

TEST_F(OnnxExternal, SharedMappingForTwoTensors) {
  Msg g = Msg().msg(1, node("Add", {"a", "b"}, {"y"}));
  g.msg(5, ext_tensor("a", 1, {{"location", "weights.bin"}, {"offset", "4"}}));
  g.msg(5, ext_tensor("b", 1, {{"location", "weights.bin"}, {"offset", "8"}}));
  write_file(dir.path / "m.onnx", model(g).b);
  auto r = onnx::import_file(dir.path / "m.onnx");
  const auto& a = r.graph->values[0].initializer->data;
  const auto& b = r.graph->values[1].initializer->data;
  EXPECT_EQ(values_of<float>(a)[0], 1.5f);
  EXPECT_EQ(values_of<float>(b)[0], -2.f);
  // Both views point into one buffer, 4 bytes apart.
  EXPECT_EQ(static_cast<const char*>(b.raw()) - static_cast<const char*>(a.raw()), 4);
}

TEST_F(OnnxExternal, BadLocations) {
  for (const char* loc :
       {"../x", "/abs/path", "C:foo", "..\\x", "sub/../weights.bin", "sub\\..\\weights.bin", "\\x", ""}) {
    EXPECT_EQ(kind_from_file(ext_model(ext_tensor("w", 2, {{"location", loc}}))), ErrorKind::ExternalData) << loc;
  }
  EXPECT_EQ(kind_from_file(ext_model(ext_tensor("w", 2, {{"location", std::string("a\0b", 3)}}))),
            ErrorKind::ExternalData);
  EXPECT_EQ(kind_from_file(ext_model(ext_tensor("w", 2, {}))), ErrorKind::ExternalData);  // no location
  EXPECT_EQ(kind_from_file(ext_model(ext_tensor("w", 2, {{"location", "missing.bin"}}))), ErrorKind::ExternalData);
  EXPECT_EQ(kind_from_file(ext_model(ext_tensor("w", 2, {{"location", "sub"}}))),
            ErrorKind::ExternalData);  // a directory
}

TEST_F(OnnxExternal, SymlinkLeavingTheDirectory) {
  TempDir outside("outside");
  write_file(outside.path / "secret.bin", floats_bytes({9.f, 9.f}));
  std::filesystem::create_symlink(outside.path / "secret.bin", dir.path / "link.bin");
  std::filesystem::create_directory_symlink(outside.path, dir.path / "linkdir");
  EXPECT_EQ(kind_from_file(ext_model(ext_tensor("w", 2, {{"location", "link.bin"}}))), ErrorKind::ExternalData);
  EXPECT_EQ(kind_from_file(ext_model(ext_tensor("w", 2, {{"location", "linkdir/secret.bin"}}))),
            ErrorKind::ExternalData);
  // A link that stays inside is fine.
  std::filesystem::create_symlink(dir.path / "sub" / "w2.bin", dir.path / "inside.bin");
  Msg ok = ext_model(ext_tensor("w", 2, {{"location", "inside.bin"}}));
  write_file(dir.path / "ok.onnx", ok.b);
  EXPECT_EQ(values_of<float>(onnx::import_file(dir.path / "ok.onnx").graph->values[0].initializer->data)[1], 8.f);
}

TEST_F(OnnxExternal, OffsetAndLength) {
  // weights.bin has 12 bytes.
  EXPECT_EQ(kind_from_file(ext_model(ext_tensor("w", 2, {{"location", "weights.bin"}, {"offset", "8"}}))),
            ErrorKind::ExternalData);
  EXPECT_EQ(
      kind_from_file(ext_model(ext_tensor("w", 2, {{"location", "weights.bin"}, {"offset", "18446744073709551615"}}))),
      ErrorKind::ExternalData);
  EXPECT_EQ(kind_from_file(ext_model(ext_tensor("w", 2, {{"location", "weights.bin"}, {"offset", "0x4"}}))),
            ErrorKind::ExternalData);
  EXPECT_EQ(kind_from_file(ext_model(ext_tensor("w", 2, {{"location", "weights.bin"}, {"offset", "-4"}}))),
            ErrorKind::ExternalData);
  EXPECT_EQ(kind_from_file(ext_model(ext_tensor("w", 2, {{"location", "weights.bin"}, {"offset", " 4"}}))),
            ErrorKind::ExternalData);
  EXPECT_EQ(kind_from_file(ext_model(ext_tensor("w", 2, {{"location", "weights.bin"}, {"length", "4"}}))),
            ErrorKind::ExternalData);
  EXPECT_EQ(kind_from_file(ext_model(ext_tensor("w", 2, {{"location", "weights.bin"}, {"length", "8a"}}))),
            ErrorKind::ExternalData);
  EXPECT_NE(last.message().find("8a"), std::string::npos);
  EXPECT_EQ(last.field_path(), "ModelProto.graph.initializer[0].external_data");
  // Mixing external data with raw_data.
  Msg t = ext_tensor("w", 2, {{"location", "weights.bin"}});
  t.bytes(9, std::string(8, '\0'));
  EXPECT_EQ(kind_from_file(ext_model(t)), ErrorKind::InvalidModel);
  // Too-large tensors are refused from their dims before the file is looked at.
  EXPECT_EQ(kind_from_file(ext_model(ext_tensor("w", int64_t{1} << 30, {{"location", "missing.bin"}}))),
            ErrorKind::Unsupported);
}

TEST_F(OnnxExternal, TensorProtoFile) {
  write_file(dir.path / "input_0.pb", float_tensor_raw("in", {2}, {3.f, 4.f}).b);
  auto tv = onnx::read_tensor_proto_file(dir.path / "input_0.pb");
  EXPECT_EQ(tv.name, "in");
  EXPECT_EQ(values_of<float>(tv.data), (std::vector<float>{3.f, 4.f}));
}

}  // namespace
}  // namespace onemodel::test
