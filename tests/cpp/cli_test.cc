// The CLI helpers of cli/cli.h: output file names, random inputs, printed values and declared types.
// Expected values are written by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>

#include "cli/cli.h"

namespace onemodel::cli {
namespace {

ValueInfo tensor_info(DType t, std::vector<Dim> dims) {
  ValueInfo v;
  v.name = "in";
  v.dtype = t;
  v.has_shape = true;
  v.dims = std::move(dims);
  return v;
}

TEST(CliTest, SanitizeOutputName) {
  EXPECT_EQ(sanitize_output_name("a/b:c"), "a_b_c");
  EXPECT_EQ(sanitize_output_name("probs"), "probs");
  EXPECT_EQ(sanitize_output_name("Out-1.x_y"), "Out-1.x_y");
  EXPECT_EQ(sanitize_output_name("../../etc/passwd"), ".._.._etc_passwd");
  EXPECT_EQ(sanitize_output_name("a b\\c\n"), "a_b_c_");
  EXPECT_EQ(sanitize_output_name("\xc3\xa9"), "__");  // UTF-8 e-acute: two bytes, two underscores
  EXPECT_EQ(sanitize_output_name(""), "_");
}

TEST(CliTest, RandomInputShapeAndDeterminism) {
  ValueInfo v = tensor_info(DType::F32, {Dim{-1, "batch"}, Dim{4, ""}, Dim{-1, ""}});
  Tensor a = random_input(v, 7), b = random_input(v, 7), c = random_input(v, 8);
  EXPECT_EQ(a.shape(), Shape({1, 4, 1}));  // symbolic and unknown dims are 1
  EXPECT_EQ(std::memcmp(a.raw(), b.raw(), a.nbytes()), 0);
  EXPECT_NE(std::memcmp(a.raw(), c.raw(), a.nbytes()), 0);
  ValueInfo big = tensor_info(DType::F32, {Dim{1000, ""}});
  std::set<float> distinct;
  Tensor r = random_input(big, 1);
  for (float x : r.data<float>()) {
    EXPECT_GE(x, -1.0f);
    EXPECT_LT(x, 1.0f);
    EXPECT_EQ(x * 8388608.0f, std::floor(x * 8388608.0f));  // on the 2^-23 grid
    distinct.insert(x);
  }
  EXPECT_GT(distinct.size(), 990u);
}

TEST(CliTest, RandomInputTypes) {
  for (DType t : {DType::I64, DType::I32, DType::I8, DType::U8, DType::U16, DType::U64}) {
    Tensor x = random_input(tensor_info(t, {Dim{200, ""}}), 3);
    ASSERT_EQ(x.dtype(), t);
    const auto* p = static_cast<const uint8_t*>(x.raw());
    size_t es = dtype_size(t);
    std::set<int> seen;
    for (size_t i = 0; i < 200; ++i) {
      EXPECT_LT(p[i * es], 4);  // low byte in [0, 4)
      for (size_t k = 1; k < es; ++k) EXPECT_EQ(p[i * es + k], 0);
      seen.insert(p[i * es]);
    }
    EXPECT_EQ(seen.size(), 4u);
  }
  Tensor b = random_input(tensor_info(DType::Bool, {Dim{100, ""}}), 3);
  std::set<int> bools;
  for (size_t i = 0; i < 100; ++i) bools.insert(static_cast<const uint8_t*>(b.raw())[i]);
  EXPECT_EQ(bools, (std::set<int>{0, 1}));
  // F16: decode the bits independently (normal numbers only: sign, 5-bit exponent, 10-bit mantissa).
  Tensor h = random_input(tensor_info(DType::F16, {Dim{300, ""}}), 5);
  for (size_t i = 0; i < 300; ++i) {
    uint16_t bits;
    std::memcpy(&bits, static_cast<const std::byte*>(h.raw()) + 2 * i, 2);
    int exp = (bits >> 10) & 31, man = bits & 1023;
    double v = (bits & 0x7fff) == 0 ? 0.0 : std::ldexp(1.0 + man / 1024.0, exp - 15);
    if (bits & 0x8000) v = -v;
    EXPECT_TRUE(exp < 31) << bits;
    EXPECT_GE(v, -1.0);
    EXPECT_LT(v, 1.0);
    EXPECT_EQ(v * 1024, std::floor(v * 1024)) << bits;
  }
  Tensor f64 = random_input(tensor_info(DType::F64, {}), 9);
  EXPECT_EQ(f64.rank(), 0);
  ValueInfo no_shape = tensor_info(DType::F32, {});
  no_shape.has_shape = false;
  EXPECT_THROW(random_input(no_shape, 1), Error);
  EXPECT_THROW(random_input(tensor_info(DType::String, {Dim{1, ""}}), 1), Error);
  ValueInfo seq = tensor_info(DType::F32, {});
  seq.kind = ValueKind::Sequence;
  EXPECT_THROW(random_input(seq, 1), Error);
}

TEST(CliTest, FormatValues) {
  Tensor f = Tensor::from_values<float>({0.5f, -1.25f, 1e-7f, 123456789.0f}, Shape{2, 2});
  EXPECT_EQ(format_values(f), "0.5 -1.25 1e-07 1.23457e+08");
  std::vector<int64_t> many(10);
  for (int i = 0; i < 10; ++i) many[static_cast<size_t>(i)] = i - 3;
  Tensor m = Tensor::from_values<int64_t>(std::span<const int64_t>(many), Shape{10});
  EXPECT_EQ(format_values(m), "-3 -2 -1 0 1 2 3 4 ...");
  EXPECT_EQ(format_values(m, 2), "-3 -2 ...");
  EXPECT_EQ(format_values(Tensor::from_values<bool>({true, false}, Shape{2})), "true false");
  EXPECT_EQ(format_values(Tensor::from_values<uint64_t>({18446744073709551615ull}, Shape{1})), "18446744073709551615");
  // F16 bits 0x3c00 = 1, 0xc100 = -2.5, 0x0001 = 2^-24; BF16 0x3fc0 = 1.5.
  uint16_t hb[3] = {0x3c00, 0xc100, 0x0001};
  EXPECT_EQ(format_values(Tensor::copy_of(DType::F16, Shape{3}, hb, 6)), "1 -2.5 5.96046e-08");
  uint16_t bf = 0x3fc0;
  EXPECT_EQ(format_values(Tensor::copy_of(DType::BF16, Shape{1}, &bf, 2)), "1.5");
  // Strided tensors print in row-major order.
  Tensor t = Tensor::from_values<int32_t>({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  EXPECT_EQ(format_values(t.transpose(0, 1)), "1 4 2 5 3 6");
  EXPECT_EQ(format_values(Tensor::zeros(DType::F32, Shape{0})), "");
}

TEST(CliTest, DescribeValue) {
  EXPECT_EQ(describe_value(tensor_info(DType::F32, {Dim{-1, "batch"}, Dim{4, ""}, Dim{-1, ""}})), "F32 [batch,4,?]");
  EXPECT_EQ(describe_value(tensor_info(DType::I64, {})), "I64 []");
  ValueInfo u = tensor_info(DType::F32, {});
  u.has_shape = false;
  EXPECT_EQ(describe_value(u), "F32 [...]");
}

}  // namespace
}  // namespace onemodel::cli
