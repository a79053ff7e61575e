// Hostile window attributes (ops/window.h, ops-conv.md "Output sizes") on every operator that reads them: Conv,
// ConvTranspose, ConvInteger, QLinearConv, MaxPool, AveragePool, LpPool and MaxUnpool. Kernels, strides,
// dilations and pads of 2^40 or INT64_MAX, negative pads, zero strides, wrong counts, a bad auto_pad and
// group 0 each give a typed error naming the node (never a crash, overflow or huge allocation: the sanitizer
// builds run this file too); values at the bound itself are either served or refused the same way.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "ops_test_util.h"

namespace onemodel::test {
namespace {

constexpr int64_t kBig = int64_t{1} << 40;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kBound = int64_t{1} << 31;  // the largest value accepted

ir::Attribute auto_pad(const std::string& v) {
  ir::Attribute a = attr_i("auto_pad", 0);
  a.type = ir::AttrType::String;
  a.s = v;
  return a;
}

template <class T>
Tensor filled(const Shape& s, T v) {
  std::vector<T> d(static_cast<size_t>(s.numel()), v);
  return Tensor::from_values(std::span<const T>(d), s);
}

// A valid node of `op` over a 5 x 5 (pools, convolutions) or 2 x 2 (MaxUnpool) input; `attrs` are added, and
// replace a base attribute of the same name (pools need a kernel_shape of their own).
OpCase base_case(const std::string& op, std::vector<ir::Attribute> attrs) {
  OpCase c;
  c.op_type = op;
  c.opset = 19;
  std::vector<ir::Attribute> base;
  const Tensor xf = filled<float>(Shape{1, 2, 5, 5}, 1.0f);
  const Tensor xq = filled<uint8_t>(Shape{1, 2, 5, 5}, 3);
  const Tensor one = filled<float>(Shape{}, 1.0f), zero = filled<uint8_t>(Shape{}, 0);
  if (op == "Conv") {
    c.inputs = {xf, filled<float>(Shape{2, 2, 3, 3}, 1.0f)};
  } else if (op == "ConvTranspose") {
    c.inputs = {filled<float>(Shape{1, 2, 3, 3}, 1.0f), filled<float>(Shape{2, 1, 2, 2}, 1.0f)};
  } else if (op == "ConvInteger") {
    c.opset = 10;
    c.inputs = {xq, filled<uint8_t>(Shape{2, 2, 3, 3}, 1), zero, zero};
  } else if (op == "QLinearConv") {
    c.opset = 10;
    c.inputs = {xq, one, zero, filled<uint8_t>(Shape{2, 2, 3, 3}, 1), one, zero, one, zero};
  } else if (op == "MaxUnpool") {
    c.opset = 11;
    c.inputs = {filled<float>(Shape{1, 1, 2, 2}, 1.0f),
                Tensor::from_values<int64_t>({0, 3, 10, 15}, Shape{1, 1, 2, 2})};
    base = {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {2, 2})};
  } else {
    c.inputs = {filled<float>(Shape{1, 1, 5, 5}, 1.0f)};
    base = {attr_ints("kernel_shape", {2, 2})};
  }
  for (const ir::Attribute& b : base) {
    bool replaced = false;
    for (const ir::Attribute& a : attrs) replaced = replaced || a.name == b.name;
    if (!replaced) c.attrs.push_back(b);
  }
  c.attrs.insert(c.attrs.end(), attrs.begin(), attrs.end());
  return c;
}

const std::vector<std::string> kConvs = {"Conv", "ConvTranspose", "ConvInteger", "QLinearConv"};
const std::vector<std::string> kPools = {"MaxPool", "AveragePool", "LpPool", "MaxUnpool"};

std::vector<std::string> all_ops() {
  std::vector<std::string> v = kConvs;
  v.insert(v.end(), kPools.begin(), kPools.end());
  return v;
}

// Runs the node and expects an error of `kind` naming it (any other exception fails the test too).
void expect_refused(const std::string& op, std::vector<ir::Attribute> attrs, const std::string& what,
                    ErrorKind kind = ErrorKind::InvalidModel) {
  SCOPED_TRACE(op + " with " + what);
  expect_error([&] { run_op(base_case(op, std::move(attrs))); }, kind, op + " node 'n0'");
}

TEST(OpsWindow, BaseCasesRun) {
  for (const std::string& op : all_ops()) {
    SCOPED_TRACE(op);
    EXPECT_NO_THROW(run_op(base_case(op, {})));
  }
}

TEST(OpsWindow, HugeAndNegativeValuesAreRefusedBeforeAnyArithmetic) {
  for (const std::string& op : all_ops()) {
    for (int64_t v : {kBig, kMax, kBound + 1}) {
      const std::string s = std::to_string(v);
      expect_refused(op, {attr_ints("dilations", {v, 1})}, "dilations " + s);
      expect_refused(op, {attr_ints("dilations", {v, v})}, "dilations both " + s);
      expect_refused(op, {attr_ints("strides", {v, 1})}, "strides " + s);
      expect_refused(op, {attr_ints("kernel_shape", {v, 2})}, "kernel_shape " + s);
      expect_refused(op, {attr_ints("kernel_shape", {v, v})}, "kernel_shape both " + s);
      expect_refused(op, {attr_ints("pads", {v, 0, 0, 0})}, "pads " + s);
      expect_refused(op, {attr_ints("pads", {v, v, v, v})}, "all pads " + s);
    }
    for (int64_t v : {int64_t{-1}, kMin, -kBig}) {
      const std::string s = std::to_string(v);
      expect_refused(op, {attr_ints("pads", {v, 0, 0, 0})}, "pads " + s);
      expect_refused(op, {attr_ints("pads", {0, 0, 0, v})}, "end pads " + s);
      expect_refused(op, {attr_ints("strides", {1, v})}, "strides " + s);
      expect_refused(op, {attr_ints("dilations", {v, 1})}, "dilations " + s);
      expect_refused(op, {attr_ints("kernel_shape", {2, v})}, "kernel_shape " + s);
    }
    expect_refused(op, {attr_ints("strides", {0, 1})}, "zero stride");
    expect_refused(op, {attr_ints("dilations", {1, 0})}, "zero dilation");
    expect_refused(op, {attr_ints("kernel_shape", {0, 2})}, "zero kernel");
  }
}

TEST(OpsWindow, WrongCountsAndBadStringsAreRefused) {
  for (const std::string& op : all_ops()) {
    expect_refused(op, {attr_ints("strides", {1, 1, 1})}, "three strides");
    expect_refused(op, {attr_ints("strides", {1})}, "one stride");
    expect_refused(op, {attr_ints("dilations", {1})}, "one dilation");
    expect_refused(op, {attr_ints("pads", {0, 0, 0})}, "three pads");
    expect_refused(op, {attr_ints("pads", {0, 0})}, "two pads");
    for (const char* s : {"SAME", "same_upper", "NOTSET ", "VALID\n"}) expect_refused(op, {auto_pad(s)}, s);
  }
  for (const std::string& op : kConvs) expect_refused(op, {attr_ints("kernel_shape", {3})}, "one kernel entry");
  for (const std::string& op : kPools) {
    expect_refused(op, {attr_ints("kernel_shape", {2})}, "one kernel entry");
    expect_refused(op, {attr_ints("kernel_shape", {})}, "empty kernel_shape");
    expect_refused(op, {attr_ints("kernel_shape", {1, 1, 1, 1})}, "four kernel entries", ErrorKind::Unsupported);
  }
}

TEST(OpsWindow, GroupsOutsideOneToTheChannelsAreRefused) {
  for (const std::string& op : kConvs)
    for (int64_t g : {int64_t{0}, int64_t{-1}, kMin, kBig, kMax, int64_t{3}})
      expect_refused(op, {attr_i("group", g)}, "group " + std::to_string(g));
}

TEST(OpsWindow, ValuesAtTheBoundAreServedOrRefusedByTheOutputLimit) {
  for (const std::string& op : all_ops()) {
    // Windows of extent 2^31 + 1 do not fit a 5-wide axis (MaxUnpool has no dilations to fit).
    if (op != "MaxUnpool") expect_refused(op, {attr_ints("dilations", {kBound, kBound})}, "dilations 2^31");
    // Pads of 2^31 make an output over 2^31 - 1 elements (ConvTranspose: crop more than the output; MaxUnpool:
    // pads beyond the unpooled extent).
    expect_refused(op, {attr_ints("pads", {kBound, kBound, kBound, kBound})}, "pads 2^31");
  }
  // Strides of 2^31: one window per axis for the forward operators; ConvTranspose and MaxUnpool would spread
  // the input over more than 2^31 - 1 elements.
  for (const char* op : {"Conv", "ConvInteger", "QLinearConv", "MaxPool", "AveragePool", "LpPool"}) {
    SCOPED_TRACE(op);
    auto r = run_op(base_case(op, {attr_ints("strides", {kBound, kBound})}));
    EXPECT_EQ(r.outputs[0].shape()[2], 1);
    EXPECT_EQ(r.outputs[0].shape()[3], 1);
  }
  expect_refused("ConvTranspose", {attr_ints("strides", {kBound, kBound})}, "strides 2^31");
  expect_refused("MaxUnpool", {attr_ints("strides", {kBound, kBound})}, "strides 2^31");
  // Under SAME_UPPER a stride of 2^31 needs no padding at all.
  auto same = run_op(base_case("MaxPool", {attr_ints("strides", {kBound, kBound}), auto_pad("SAME_UPPER")}));
  EXPECT_EQ(same.outputs[0].shape(), (Shape{1, 1, 1, 1}));
}

TEST(OpsWindow, ConvTransposeOutputAttributes) {
  for (int64_t v : {kBig, kMax, kMin, int64_t{-1}}) {
    expect_refused("ConvTranspose", {attr_ints("output_padding", {v, 0})}, "output_padding " + std::to_string(v));
    expect_refused("ConvTranspose", {attr_ints("output_shape", {v, 4})}, "output_shape " + std::to_string(v));
    expect_refused("ConvTranspose", {attr_ints("output_shape", {1, 2, 4, v})},
                   "output_shape N, C, " + std::to_string(v));
  }
  expect_refused("ConvTranspose", {attr_ints("output_padding", {1, 0})}, "output_padding not below the stride");
  expect_refused("ConvTranspose", {attr_ints("output_padding", {0})}, "one output_padding");
  expect_refused("ConvTranspose", {attr_ints("output_shape", {4, 4, 4})}, "three output_shape entries");
  // Inside the bounds: an output of 2^31 per axis is over the element limit; a small one is served.
  expect_refused("ConvTranspose", {attr_ints("output_shape", {kBound, kBound})}, "output_shape 2^31");
  auto r = run_op(base_case("ConvTranspose", {attr_ints("output_shape", {6, 7})}));
  EXPECT_EQ(r.outputs[0].shape(), (Shape{1, 1, 6, 7}));
}

// In-range pads and dilations can make the taps of a small output span 2^31 rows and columns. The convolution
// paths that copy planes into a zero-padded buffer (depthwise, padded direct) must not size that buffer from
// the span (it once crashed in the depthwise phase copy). A 3 x 3 window dilated by 2^30 over pads of 2^30 on
// a 1 x w input: only the centre tap of each output lands on the input.
TEST(OpsWindow, HugePadsAndDilationsWithASmallOutputRun) {
  const int64_t h = int64_t{1} << 30;
  for (int64_t w : {int64_t{1}, int64_t{20}}) {
    for (int64_t group : {int64_t{1}, int64_t{2}}) {
      SCOPED_TRACE("width " + std::to_string(w) + " group " + std::to_string(group));
      OpCase c;
      c.op_type = "Conv";
      c.opset = 17;
      c.inputs = {filled<float>(Shape{1, 2, 1, w}, 1.0f), filled<float>(Shape{2, 2 / group, 3, 3}, 1.0f)};
      c.attrs = {attr_ints("pads", {h, h, h, h}), attr_ints("dilations", {h, h}), attr_i("group", group)};
      auto r = run_op(c);
      ASSERT_EQ(r.outputs[0].shape(), (Shape{1, 2, 1, w}));
      // Each output sums the centre tap over its group's input channels: 2 / group ones.
      for (float v : r.outputs[0].data<float>()) EXPECT_EQ(v, static_cast<float>(2 / group));
    }
  }
}

}  // namespace
}  // namespace onemodel::test
