// Hostile OneModel files (docs/format.md sections 1.1 and 3.1): every truncation, single-byte changes of the
// header and the manifest, ranges outside the data region, nesting past the limits, integers written as
// floats, huge counts. Each is refused with a typed Error naming the header field or manifest path (and the
// file offset), never a crash, a hang or an allocation of the claimed size (the suite runs under ASan and
// UBSan in tools/test.sh).
#include <gtest/gtest.h>

#include "format/format.h"
#include "format_test_util.h"
#include "test_util.h"

namespace onemodel::test {
namespace {

// y = x + W with W = [1.5, -2]: the base of the manifest cases (written from the format's text).
const std::string kManifest =
    R"({"format":"onemodel","version":1,"ir_version":8,"opsets":[{"domain":"","version":17}],)"
    R"("graph":{"inputs":[{"name":"x","type":{"kind":"tensor","elem":1,"shape":[2]}}],)"
    R"("outputs":[{"name":"y","type":{"kind":"tensor","elem":1,"shape":[2]}}],)"
    R"("initializers":[{"name":"W","dtype":1,"dims":[2],"data":{"offset":0,"length":8}}],)"
    R"("nodes":[{"name":"add","op":"Add","inputs":["x","W"],"outputs":["y"]}]}})";

std::string data8() {
  const float w[2] = {1.5f, -2.f};
  return std::string(reinterpret_cast<const char*>(w), 8);
}

// kManifest with `from` replaced by `to` (which must occur).
std::string with(const std::string& from, const std::string& to, std::string m = kManifest) {
  size_t at = m.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) m.replace(at, from.size(), to);
  return m;
}

ir::Model read(const std::string& file) { return format::read_bytes(storage_of(file), "<hostile>"); }

// Expects `kind` with exactly this field path; returns the error.
Error refused(ErrorKind kind, const std::string& file, const std::string& path) {
  Error e = expect_error(kind, [&] { read(file); });
  EXPECT_EQ(e.field_path(), path) << e.what();
  EXPECT_EQ(e.source(), "<hostile>");
  return e;
}

TEST(FormatHostile, TheBaseFileIsAccepted) {
  ir::Model m = read(assemble(kManifest, data8()));
  EXPECT_EQ(m.graph->nodes.size(), 1u);
  EXPECT_EQ(values_of<float>(m.graph->values[1].initializer->data), (std::vector<float>{1.5f, -2.f}));
}

TEST(FormatHostile, EveryTruncationAndExtension) {
  const std::string file = bytes_string(format::write_bytes(onnx::import_file(testdata("classifier.onnx"))));
  for (size_t n = 0; n < file.size(); ++n) {
    Error e = expect_error(ErrorKind::Malformed, [&] { read(file.substr(0, n)); });
    EXPECT_EQ(e.field_path(), n < 64 ? "header" : "file_length") << n;
  }
  Error e = refused(ErrorKind::Malformed, file.substr(0, 400), "file_length");
  EXPECT_EQ(e.offset(), 48);
  EXPECT_EQ(e.message(),
            "the header says the file is " + std::to_string(file.size()) + " bytes; it is 400 (truncated or extended)");
  refused(ErrorKind::Malformed, file + '\0', "file_length");
}

TEST(FormatHostile, EverySingleByteChangeOfTheHeaderIsRefused) {
  const std::string file = assemble(kManifest, data8());
  for (size_t k = 0; k < 64; ++k) {
    for (int mask : {0x01, 0x40, 0x80, 0xff}) {
      std::string m = file;
      m[k] = static_cast<char>(m[k] ^ mask);
      try {
        read(m);
        ADD_FAILURE() << "byte " << k << " ^ " << mask << " accepted";
      } catch (const Error& e) {
        EXPECT_TRUE(e.kind() == ErrorKind::Malformed || e.kind() == ErrorKind::Unsupported) << e.what();
        EXPECT_FALSE(e.field_path().empty()) << e.what();
        EXPECT_GE(e.offset(), 0) << e.what();
      }
    }
  }
  // The fields by name and offset.
  auto patched = [&](size_t at, uint8_t v) {
    std::string m = file;
    m[at] = static_cast<char>(v);
    return m;
  };
  EXPECT_EQ(refused(ErrorKind::Malformed, patched(0, 'X'), "magic").offset(), 0);
  EXPECT_EQ(refused(ErrorKind::Unsupported, patched(8, 2), "version").offset(), 8);
  EXPECT_EQ(refused(ErrorKind::Unsupported, patched(12, 1), "flags").offset(), 12);
  EXPECT_EQ(refused(ErrorKind::Malformed, patched(23, 0x80), "manifest_offset").offset(), 16);
  EXPECT_EQ(refused(ErrorKind::Malformed, patched(16, 65), "manifest_offset").offset(), 16);
  EXPECT_EQ(refused(ErrorKind::Malformed, patched(32, 1), "data_offset").offset(), 32);
  EXPECT_EQ(refused(ErrorKind::Malformed, patched(40, 7), "data_length").offset(), 40);
  EXPECT_EQ(refused(ErrorKind::Malformed, patched(56, 1), "reserved").offset(), 56);
  std::string shorter = file;  // manifest_length one less: the manifest's last byte becomes "padding"
  const uint64_t ml = kManifest.size() - 1;
  for (size_t k = 0; k < 8; ++k) shorter[24 + k] = static_cast<char>(ml >> (8 * k) & 0xff);
  EXPECT_EQ(refused(ErrorKind::Malformed, shorter, "padding").offset(), static_cast<int64_t>(64 + ml));
}

TEST(FormatHostile, ManifestByteChangesNeverCrash) {
  const std::string file = assemble(kManifest, data8());
  int accepted = 0, refused_count = 0;
  for (size_t k = 64; k < 64 + kManifest.size(); ++k) {
    for (int v : {0x00, 0x22, 0x7b, 0x5b, 0x39, 0x2d, 0x80, 0xff}) {  // NUL " { [ 9 - and two high bytes
      std::string m = file;
      m[k] = static_cast<char>(v);
      try {
        read(m);
        ++accepted;
      } catch (const Error& e) {
        ++refused_count;
        EXPECT_NE(e.kind(), ErrorKind::Internal) << e.what();
        EXPECT_EQ(e.field_path().rfind("manifest", 0), 0u) << e.what();
        EXPECT_GE(e.offset(), 64) << e.what();
      }
    }
  }
  EXPECT_GT(refused_count, accepted);
}

TEST(FormatHostile, RandomMutationsOfAConvertedFileNeverCrash) {
  const std::string file = bytes_string(format::write_bytes(onnx::import_file(testdata("scorer.onnx"))));
  uint64_t state = 0x2545f4914f6cdd1dull;
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  int refused_count = 0;
  for (int iter = 0; iter < 2000; ++iter) {
    std::string m = file;
    int flips = 1 + static_cast<int>(next() % 4);
    for (int k = 0; k < flips; ++k) m[64 + next() % (m.size() - 64)] = static_cast<char>(next() & 0xff);
    try {
      read(m);
    } catch (const Error& e) {
      EXPECT_NE(e.kind(), ErrorKind::Internal) << e.what();
      ++refused_count;
    }
  }
  EXPECT_GT(refused_count, 0);
}

TEST(FormatHostile, RangesOutsideTheDataRegion) {
  const std::string init = "manifest.graph.initializers[0].data";
  refused(ErrorKind::Malformed, assemble(with(R"("offset":0,"length":8)", R"("offset":64,"length":8)"), data8()),
          init + ".offset");
  refused(ErrorKind::Malformed, assemble(with(R"("offset":0,"length":8)", R"("offset":-64,"length":8)"), data8()),
          init + ".offset");
  refused(ErrorKind::Malformed,
          assemble(with(R"("offset":0,"length":8)", R"("offset":0,"length":4611686018427387904)"), data8()),
          init + ".length");
  refused(ErrorKind::Malformed,
          assemble(with(R"("offset":0,"length":8)", R"("offset":9223372036854775807,"length":8)"), data8()),
          init + ".offset");
  // In range but not what dims and dtype need; misaligned.
  refused(ErrorKind::InvalidModel, assemble(with(R"("length":8)", R"("length":4)"), data8()), init + ".length");
  std::string data = data8() + std::string(64, '\0');
  refused(ErrorKind::Malformed, assemble(with(R"("offset":0)", R"("offset":8)"), data), init + ".offset");
  refused(ErrorKind::InvalidModel, assemble(with(R"(,"data":{"offset":0,"length":8})", ""), data8()),
          "manifest.graph.initializers[0]");
}

TEST(FormatHostile, JsonNestingPastTheLimit) {
  auto nested = [](int levels) {  // an unknown field holding `levels` nested arrays
    return with(R"("ir_version":8,)", R"("ir_version":8,"extra":)" + std::string(static_cast<size_t>(levels), '[') +
                                          std::string(static_cast<size_t>(levels), ']') + ",");
  };
  EXPECT_NO_THROW(read(assemble(nested(1023), data8())));  // the root object and 1023 arrays: 1024 levels
  Error e = refused(ErrorKind::Unsupported, assemble(nested(1024), data8()), "manifest");
  EXPECT_NE(e.message().find("1024"), std::string::npos);
  refused(ErrorKind::Unsupported, assemble(nested(200000), data8()), "manifest");  // no deep recursion anywhere
  // Graphs and types: more than 64 open at once. The graph is one level, the value's type one more, and
  // each sequence around the tensor type one more: 62 sequences make 64 levels.
  auto typed = [](int sequences) {
    std::string t = R"({"kind":"tensor","elem":1})";
    for (int k = 0; k < sequences; ++k) t = R"({"kind":"sequence","inner":)" + t + "}";
    return with(R"("outputs")", R"("value_info":[{"name":"v","type":)" + t + R"(}],"outputs")");
  };
  EXPECT_NO_THROW(read(assemble(typed(62), data8())));
  Error deep = expect_error(ErrorKind::Unsupported, [&] { read(assemble(typed(63), data8())); });
  EXPECT_NE(deep.message().find("64"), std::string::npos) << deep.what();
  EXPECT_EQ(deep.field_path().rfind("manifest.graph.value_info[0].type.inner", 0), 0u) << deep.what();
}

TEST(FormatHostile, IntegersWrittenAsFloatsAndOutOfRange) {
  refused(ErrorKind::Malformed, assemble(with(R"("ir_version":8)", R"("ir_version":8.0)"), data8()),
          "manifest.ir_version");
  refused(ErrorKind::Malformed, assemble(with(R"("dims":[2])", R"("dims":[2e0])"), data8()),
          "manifest.graph.initializers[0].dims[0]");
  refused(ErrorKind::Malformed, assemble(with(R"("offset":0)", R"("offset":0.0)"), data8()),
          "manifest.graph.initializers[0].data.offset");
  refused(ErrorKind::Malformed, assemble(with(R"("ir_version":8)", R"("ir_version":18446744073709551615)"), data8()),
          "manifest.ir_version");
  refused(ErrorKind::Malformed, assemble(with(R"("ir_version":8)", R"("ir_version":1e400)"), data8()),
          "manifest");  // not even a finite number: the JSON parser refuses it
  refused(ErrorKind::Malformed, assemble(with(R"("ir_version":8)", R"("ir_version":"8")"), data8()),
          "manifest.ir_version");
  const std::string attr = R"("outputs":["y"],"attributes":[{"name":"a","type":1,"value":4294967296}])";
  refused(ErrorKind::Malformed, assemble(with(R"("outputs":["y"])", attr), data8()),
          "manifest.graph.nodes[0].attributes[0].value");
}

TEST(FormatHostile, HugeCounts) {
  // Decided from dims and dtype alone, before any range or allocation.
  Error e = refused(ErrorKind::InvalidModel,
                    assemble(with(R"("dims":[2])", R"("dims":[1099511627776,1099511627776])"), data8()),
                    "manifest.graph.initializers[0]");
  EXPECT_NE(e.message().find("2^60"), std::string::npos);
  refused(ErrorKind::Unsupported, assemble(with(R"("dims":[2])", R"("dims":[1073741824])"), data8()),
          "manifest.graph.initializers[0]");
  refused(ErrorKind::InvalidModel, assemble(with(R"("dims":[2])", R"("dims":[-2])"), data8()),
          "manifest.graph.initializers[0]");
  // A string tensor claiming 2^50 elements with one string.
  refused(ErrorKind::InvalidModel,
          assemble(with(R"("dtype":1,"dims":[2],"data":{"offset":0,"length":8})",
                        R"("dtype":8,"dims":[1125899906842624],"strings":["QQ=="])"),
                   data8()),
          "manifest.graph.initializers[0]");
}

TEST(FormatHostile, SchemaErrorsNameTheField) {
  refused(ErrorKind::Malformed, assemble("[]", ""), "manifest");
  refused(ErrorKind::Malformed, assemble("{", ""), "manifest");
  refused(ErrorKind::Malformed, assemble("", ""), "manifest");
  refused(ErrorKind::Malformed, assemble("\xef\xbb\xbf" + kManifest, data8()), "manifest");
  refused(ErrorKind::Malformed, assemble(with(R"("onemodel")", R"("onnx")"), data8()), "manifest.format");
  refused(ErrorKind::Malformed, assemble(with(R"("version":1)", R"("version":2)"), data8()), "manifest.version");
  refused(ErrorKind::InvalidModel, assemble(with(R"("ir_version":8)", R"("ir_version":2)"), data8()),
          "manifest.ir_version");
  refused(ErrorKind::Malformed, assemble(with(R"("ir_version":8,)", ""), data8()), "manifest.ir_version");
  refused(ErrorKind::Malformed, assemble(with(R"("ir_version":8)", R"("ir_version":8,"ir_version":8)"), data8()),
          "manifest.ir_version");
  refused(ErrorKind::Malformed, assemble(with(R"("nodes":[)", R"("nodes":7,"old":[)"), data8()),
          "manifest.graph.nodes");
  refused(ErrorKind::Malformed, assemble(with(R"("op":"Add",)", ""), data8()), "manifest.graph.nodes[0].op");
  refused(ErrorKind::Unsupported, assemble(with(R"("dtype":1)", R"("dtype":99)"), data8()),
          "manifest.graph.initializers[0]");
  refused(ErrorKind::Unsupported, assemble(with(R"("kind":"tensor")", R"("kind":"tuple")"), data8()),
          "manifest.graph.inputs[0].type.kind");
  const std::string attr = R"("outputs":["y"],"attributes":[{"name":"a","type":15,"value":1}])";
  Error e = refused(ErrorKind::Unsupported, assemble(with(R"("outputs":["y"])", attr), data8()),
                    "manifest.graph.nodes[0].attributes[0].type");
  EXPECT_EQ(e.node(), "add");
  const std::string bad64 = R"("outputs":["y"],"attributes":[{"name":"a","type":3,"value":"QQ="}])";
  refused(ErrorKind::Malformed, assemble(with(R"("outputs":["y"])", bad64), data8()),
          "manifest.graph.nodes[0].attributes[0].value");
  const std::string no_value = R"("outputs":["y"],"attributes":[{"name":"a","type":2}])";
  refused(ErrorKind::Malformed, assemble(with(R"("outputs":["y"])", no_value), data8()),
          "manifest.graph.nodes[0].attributes[0].value");
}

TEST(FormatHostile, ResolutionErrorsAsForOnnx) {
  Error e = refused(ErrorKind::InvalidModel, assemble(with(R"(["x","W"])", R"(["x","V"])"), data8()),
                    "manifest.graph.nodes[0].inputs[1]");
  EXPECT_EQ(e.node(), "add");
  EXPECT_GT(e.offset(), 64);
  refused(ErrorKind::InvalidModel, assemble(with(R"("outputs":["y"])", R"("outputs":["W"])"), data8()),
          "manifest.graph.nodes[0].outputs[0]");
  refused(ErrorKind::InvalidModel, assemble(with(R"("domain":"")", R"("domain":"x")"), data8()),
          "manifest.graph.nodes[0].domain");
}

}  // namespace
}  // namespace onemodel::test
