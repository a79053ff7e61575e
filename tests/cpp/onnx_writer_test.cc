// The ONNX writer (onnx/writer.h, docs/model-building.md section 5): every committed model it can express reads
// back as the same ir::Model (compared through format_test_util.h's dump, written apart from reader and writer),
// writing is deterministic and idempotent, and sessions of the written bytes give the same output bits.
#include <gtest/gtest.h>

#include "format_test_util.h"
#include "onnx/import.h"
#include "onnx/writer.h"
#include "test_util.h"

namespace onemodel::test {
namespace {

ir::Model reimport(const std::string& bytes) { return onnx::import_bytes(storage_of(bytes), "<written>"); }

TEST(OnnxWriter, EveryTestdataModelReadsBackAsTheSameGraph) {
  int written = 0, refused = 0;
  for (const std::filesystem::path& p : testdata_models()) {
    SCOPED_TRACE(p.string());
    ir::Model m;
    try {
      m = onnx::import_file(p);
    } catch (const Error&) {
      continue;  // a model the importer refuses has nothing to write
    }
    std::string bytes;
    try {
      bytes = onnx::write_model(m);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Unsupported) << e.what();
      ++refused;
      continue;
    }
    ir::Model back = reimport(bytes);
    back.source = m.source;
    // Nodes are written in the importer's (sorted) order: a reordered file reads back with new positions.
    if (!m.graph->nodes_were_reordered) {
      EXPECT_EQ(dump_model(back), dump_model(m));
    }
    EXPECT_EQ(onnx::write_model(m), bytes);
    EXPECT_EQ(onnx::write_model(back), bytes);
    ++written;
  }
  EXPECT_GE(written, 100) << refused << " refused";  // testdata holds 110 models
}

TEST(OnnxWriter, SessionsOfTheWrittenBytesGiveTheSameBits) {
  int compared = 0;
  for (const std::filesystem::path& p : testdata_models()) {
    SCOPED_TRACE(p.string());
    std::string bytes;
    try {
      bytes = onnx::write_model(onnx::import_file(p));
    } catch (const Error&) {
      continue;
    }
    SessionOptions o;
    o.mode = Mode::Exact;
    o.intra_op_threads = 1;
    std::string a, b;
    try {
      a = run_bits(Session::load(p, o));
      b = run_bits(Session::load_bytes(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())), o));
    } catch (const Error& e) {
      continue;  // exact mode unavailable for this model: the load of the file itself fails the same way
    }
    EXPECT_EQ(b, a);
    compared += a.find(' ') != std::string::npos && a.rfind("error", 0) != 0;
  }
  EXPECT_GE(compared, 50);
}

TEST(OnnxWriter, KeepsTheDeclaredTypesOfIntermediates) {
  // x -> Relu -> h -> Neg -> y, with h declared in value_info (no committed model declares one).
  Msg g = Msg()
              .msg(1, node("Relu", {"x"}, {"h"}, "r"))
              .msg(1, node("Neg", {"h"}, {"y"}, "n"))
              .bytes(2, "g")
              .msg(11, value_info("x", 1, {2, 3}))
              .msg(12, value_info("y", 1, {2, 3}))
              .msg(13, value_info("h", 1, {2, 3}));
  ir::Model m = import_msg(model(g));
  std::string bytes = onnx::write_model(m);
  ir::Model back = reimport(bytes);
  back.source = m.source;
  EXPECT_EQ(dump_model(back), dump_model(m));
  const ir::Value& h = back.graph->values[static_cast<size_t>(back.graph->find_value("h"))];
  ASSERT_TRUE(h.type.has_shape);
  EXPECT_EQ(h.type.dims.size(), 2u);
}

TEST(OnnxWriter, RefusesWhatItCannotExpress) {
  ir::Model m = onnx::import_file(testdata("classifier.onnx"));
  m.functions.emplace_back();
  Error e = expect_error(ErrorKind::Unsupported, [&] { onnx::write_model(m); });
  EXPECT_NE(e.message().find("functions"), std::string::npos);
}

}  // namespace
}  // namespace onemodel::test
