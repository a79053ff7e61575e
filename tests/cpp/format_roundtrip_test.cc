// The OneModel format's round trip (docs/format.md): every committed model read back from the format gives
// the same ir::Model as from its ONNX file (compared through format_test_util.h's dump, written apart from
// the reader and writer), sessions give the same output bits, the writer is deterministic, the layout
// follows the format's text, external data is copied in, big files are mapped, and the public API
// (onemodel/model_format.h) converts and refuses what it does not implement.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "format/format.h"
#include "format_test_util.h"
#include "onemodel/model.h"
#include "onemodel/model_format.h"
#include "onemodel/session.h"
#include "test_util.h"

namespace onemodel::test {
namespace {

namespace fs = std::filesystem;

ir::Model read_back(const std::vector<std::byte>& bytes) {
  return format::read_bytes(storage_of(bytes_string(bytes)), "<converted>");
}

TEST(FormatRoundTrip, EveryTestdataModelGivesTheSameGraph) {
  int converted = 0;
  for (const fs::path& p : testdata_models()) {
    SCOPED_TRACE(p.string());
    ir::Model m;
    try {
      m = onnx::import_file(p);
    } catch (const Error&) {
      continue;  // a model the ONNX importer refuses has nothing to convert
    }
    std::vector<std::byte> bytes = format::write_bytes(m);
    ir::Model back = read_back(bytes);
    EXPECT_EQ(dump_model(back), dump_model(m));
    // Deterministic: writing again, and writing what was read, give the same bytes.
    EXPECT_EQ(format::write_bytes(m), bytes);
    EXPECT_EQ(format::write_bytes(back), bytes);
    ++converted;
  }
  EXPECT_GE(converted, 100);  // testdata holds 107 models
}

TEST(FormatRoundTrip, SessionsGiveTheSameBitsInBothModes) {
  int compared = 0;
  for (const fs::path& p : testdata_models()) {
    SCOPED_TRACE(p.string());
    std::vector<std::byte> bytes;
    try {
      bytes = format::write_bytes(onnx::import_file(p));
    } catch (const Error&) {
      continue;
    }
    for (Mode mode : {Mode::Fast, Mode::Exact}) {
      SessionOptions o;
      o.mode = mode;
      o.intra_op_threads = 1;
      std::string from_onnx, from_format;
      try {
        from_onnx = run_bits(Session::load(p, o));
      } catch (const Error& e) {
        from_onnx = std::string("load ") + std::string(error_kind_name(e.kind())) + ": " + e.message();
      }
      try {
        from_format = run_bits(Session::load_bytes(bytes, o));
      } catch (const Error& e) {
        from_format = std::string("load ") + std::string(error_kind_name(e.kind())) + ": " + e.message();
      }
      EXPECT_EQ(from_format, from_onnx);
      if (from_onnx.find(' ') != std::string::npos && from_onnx.rfind("error", 0) != 0 &&
          from_onnx.rfind("load", 0) != 0)
        ++compared;
    }
  }
  EXPECT_GE(compared, 60);
}

TEST(FormatRoundTrip, LayoutFollowsTheFormatText) {
  // A graph initializer and a Constant node's tensor attribute: section 1.3 places the initializer first.
  Msg value = float_tensor_raw("c", {3}, {4.f, 5.f, 6.f});
  Msg attr = Msg().bytes(1, "value").msg(5, value).varint(20, 4);
  Msg cnode = Msg().bytes(2, "c").bytes(4, "Constant").msg(5, attr);
  Msg g = Msg()
              .msg(1, cnode)
              .msg(1, node("Add", {"w", "c"}, {"y"}))
              .msg(5, float_tensor_raw("w", {3}, {1.f, 2.f, 3.f}))
              .msg(12, value_info("y", 1, {3}));
  std::string file = bytes_string(format::write_bytes(import_msg(model(g))));
  auto u64 = [&](size_t at) {
    uint64_t v = 0;
    for (int k = 7; k >= 0; --k) v = v << 8 | static_cast<uint8_t>(file[at + static_cast<size_t>(k)]);
    return v;
  };
  ASSERT_GE(file.size(), 64u);
  EXPECT_EQ(file.substr(0, 8), "ONEMODEL");
  EXPECT_EQ(u64(8), 1u);  // version 1, flags 0
  EXPECT_EQ(u64(16), 64u);
  const uint64_t manifest_length = u64(24), data_offset = u64(32), data_length = u64(40);
  EXPECT_EQ(data_offset % 64, 0u);
  EXPECT_GE(data_offset, 64 + manifest_length);
  EXPECT_EQ(data_offset + data_length, file.size());
  EXPECT_EQ(u64(48), file.size());
  EXPECT_EQ(u64(56), 0u);
  for (uint64_t k = 64 + manifest_length; k < data_offset; ++k) EXPECT_EQ(file[k], '\0');
  // The manifest read with nlohmann's DOM parser: compact, and the two tensors in section 1.3's order.
  std::string text = file.substr(64, manifest_length);
  EXPECT_EQ(text.find_first_of(" \n"), std::string::npos);
  nlohmann::json j = nlohmann::json::parse(text);
  EXPECT_EQ(j["format"], "onemodel");
  EXPECT_EQ(j["version"], 1);
  const auto& init = j["graph"]["initializers"][0]["data"];
  const auto& cdata = j["graph"]["nodes"][0]["attributes"][0]["value"]["data"];
  EXPECT_EQ(init["offset"], 0);
  EXPECT_EQ(init["length"], 12);
  EXPECT_EQ(cdata["offset"], 64);
  EXPECT_EQ(cdata["length"], 12);
  float w[3], c[3];
  std::memcpy(w, file.data() + data_offset, 12);
  std::memcpy(c, file.data() + data_offset + 64, 12);
  EXPECT_EQ(w[2], 3.f);
  EXPECT_EQ(c[0], 4.f);
  EXPECT_EQ(data_length, 64u + 12u);
}

// A file written from the format's text alone (not by our writer) loads and runs: y = x + W.
TEST(FormatRoundTrip, HandAssembledFileRuns) {
  const std::string manifest =
      R"({"format":"onemodel","version":1,"ir_version":8,"opsets":[{"domain":"","version":17}],)"
      R"("graph":{"name":"g","inputs":[{"name":"x","type":{"kind":"tensor","elem":1,"shape":[2]}}],)"
      R"("outputs":[{"name":"y","type":{"kind":"tensor","elem":1,"shape":[2]}}],)"
      R"("initializers":[{"name":"W","dtype":1,"dims":[2],"data":{"offset":0,"length":8}}],)"
      R"("nodes":[{"name":"add","op":"Add","inputs":["x","W"],"outputs":["y"],)"
      R"("attributes":[{"name":"unused","type":1,"value":1065353216}]}]}})";
  const float w[2] = {1.5f, -2.f};
  std::string file = assemble(manifest, std::string(reinterpret_cast<const char*>(w), 8));
  std::vector<std::byte> bytes(file.size());
  std::memcpy(bytes.data(), file.data(), file.size());
  Model m = Model::load_bytes(bytes);
  std::vector<float> y = m.run(std::vector<float>{1.f, 2.f}, std::vector<int64_t>{2});
  EXPECT_EQ(y, (std::vector<float>{2.5f, 0.f}));
  ir::Model ir = format::read_bytes(storage_of(file), "<hand>");
  EXPECT_EQ(ir.graph->nodes[0].attributes[0].f, 1.0f);  // a float attribute is its bit pattern
}

TEST(FormatRoundTrip, ConvertApiAndCliShapes) {
  TempDir dir("fmt_api");
  const fs::path out = dir.path / "wide.onemodel";
  model_format::convert(testdata("wide.onnx"), out);
  EXPECT_TRUE(model_format::is_model_format_file(out));
  EXPECT_FALSE(model_format::is_model_format_file(testdata("wide.onnx")));
  EXPECT_FALSE(model_format::is_model_format_file(dir.path / "missing"));
  std::string onnx_bytes = read_all(testdata("wide.onnx")), file = read_all(out);
  std::vector<std::byte> in(onnx_bytes.size());
  std::memcpy(in.data(), onnx_bytes.data(), onnx_bytes.size());
  EXPECT_EQ(bytes_string(model_format::convert_bytes(in)), file);  // path and bytes give the same file
  std::vector<std::byte> again(file.size());
  std::memcpy(again.data(), file.data(), file.size());
  EXPECT_TRUE(model_format::is_model_format(again));
  EXPECT_EQ(bytes_string(model_format::convert_bytes(again)), file);  // converting a .onemodel: unchanged
  // The cookbook's check: Model::load of both files, bit-identical outputs.
  std::vector<float> x(256);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) / 256.f;
  std::vector<float> a = Model::load(testdata("wide.onnx")).run(x), b = Model::load(out).run(x);
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * 4), 0);
  // Compact weight storage (tests/cpp/compact_weights_test.cc has its bits): about half the file.
  ConvertOptions half;
  half.weight_storage = WeightStorage::Float16;
  model_format::convert(testdata("wide.onnx"), out, half);
  EXPECT_LT(std::filesystem::file_size(out), file.size() * 6 / 10);
  half.weight_storage = static_cast<WeightStorage>(9);
  expect_error(ErrorKind::InvalidArgument, [&] { model_format::convert(testdata("wide.onnx"), out, half); });
  // An unwritable output is Io.
  expect_error(ErrorKind::Io, [&] { model_format::convert(testdata("wide.onnx"), dir.path / "no" / "such" / "f"); });
}

TEST(FormatRoundTrip, ExternalDataIsCopiedIn) {
  TempDir dir("fmt_ext");
  std::vector<float> v = {1.5f, -2.f};
  write_file(dir.path / "weights.bin", "PAD!" + std::string(reinterpret_cast<const char*>(v.data()), 8));
  Msg t = Msg().varint(1, 2).varint(2, 1).bytes(8, "w");
  t.msg(13, Msg().bytes(1, "location").bytes(2, "weights.bin")).msg(13, Msg().bytes(1, "offset").bytes(2, "4"));
  t.varint(14, 1);
  write_file(dir.path / "m.onnx",
             model(Msg().msg(1, node("Relu", {"w"}, {"y"})).msg(5, t).msg(12, value_info("y", 1, {2}))).b);
  model_format::convert(dir.path / "m.onnx", dir.path / "m.onemodel");
  fs::remove(dir.path / "weights.bin");
  fs::remove(dir.path / "m.onnx");
  ir::Model m = format::read_file(dir.path / "m.onemodel");
  EXPECT_EQ(values_of<float>(m.graph->values[0].initializer->data), v);
}

TEST(FormatRoundTrip, LargeFileIsMappedAndWeightsAreAlignedViews) {
  const int64_t n = 393216;  // 1.5 MiB of float32
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i % 1000) * 0.5f;
  Msg g =
      Msg().msg(1, node("Relu", {"W"}, {"y"})).msg(5, float_tensor_raw("W", {n}, v)).msg(12, value_info("y", 1, {n}));
  TempDir dir("fmt_map");
  const fs::path p = dir.path / "big.onemodel";
  format::write_file(import_msg(model(g)), p);
  ir::Model m = format::read_file(p);
  const Tensor& w = m.graph->values[0].initializer->data;
  EXPECT_EQ(reinterpret_cast<uintptr_t>(w.raw()) % 64, 0u);
  EXPECT_EQ(values_of<float>(w), v);
#ifdef __linux__
  std::string maps = read_all("/proc/self/maps");
  EXPECT_NE(maps.find(fs::canonical(p).string()), std::string::npos);
#endif
}

}  // namespace
}  // namespace onemodel::test
