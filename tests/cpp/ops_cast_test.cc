// Cast: the rules of tensors.md section 10 and ops-elementwise.md on edge values. Values marked "numpy"
// were printed by numpy's astype (which agrees with the spec where C is defined); saturation and NaN -> 0
// are the spec's own choices and are hand-written.
#include <cmath>
#include <limits>

#include "ops_test_util.h"

namespace onemodel::test {
namespace {

template <class T>
Tensor vec(std::vector<T> v) {
  return Tensor::from_values(std::span<const T>(v), Shape{static_cast<int64_t>(v.size())});
}
template <>
Tensor vec<bool>(std::vector<bool> v) {
  std::vector<uint8_t> b(v.begin(), v.end());
  return Tensor::copy_of(DType::Bool, Shape{static_cast<int64_t>(b.size())}, b.data(), b.size());
}
Tensor raw16(DType t, std::vector<uint16_t> v) {
  return Tensor::copy_of(t, Shape{static_cast<int64_t>(v.size())}, v.data(), v.size() * 2);
}
std::vector<uint16_t> raw16_values(const Tensor& t) {
  const auto* p = static_cast<const uint16_t*>(t.raw());
  return {p, p + t.numel()};
}

Tensor cast(Tensor x, DType to, bool exact = false, int64_t opset = 13) {
  OpCase c;
  c.op_type = "Cast";
  c.opset = opset;
  c.attrs = {attr_i("to", static_cast<int64_t>(to))};
  c.inputs = {std::move(x)};
  c.exact = exact;
  auto r = run_op(c);
  EXPECT_EQ(r.outputs[0].dtype(), to);
  return r.outputs[0];
}

const float kInf = std::numeric_limits<float>::infinity();
const float kNan = std::numeric_limits<float>::quiet_NaN();

TEST(OpsCastTest, FloatToIntegerTruncatesSaturatesNanIsZero) {
  const int32_t imax = std::numeric_limits<int32_t>::max(), imin = std::numeric_limits<int32_t>::min();
  EXPECT_EQ(values<int32_t>(cast(
                vec<float>({kNan, kInf, -kInf, 2.5f, -2.5f, -0.5f, 0.99f, 3e9f, -3e9f, -2147483648.0f}), DType::I32)),
            (std::vector<int32_t>{0, imax, imin, 2, -2, 0, 0, imax, imin, imin}));
  EXPECT_EQ(values<uint8_t>(cast(vec<float>({-1, 255.9f, 256, kNan, -0.5f, 300}), DType::U8)),
            (std::vector<uint8_t>{0, 255, 255, 0, 0, 255}));
  EXPECT_EQ(values<int8_t>(cast(vec<double>({-128.9, 127.9, -129, 1e300}), DType::I8)),
            (std::vector<int8_t>{-128, 127, -128, 127}));
  const int64_t lmax = std::numeric_limits<int64_t>::max(), lmin = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(
      values<int64_t>(cast(vec<double>({9.3e18, -9.3e18, 9223372036854774784.0, 9223372036854775808.0}), DType::I64)),
      (std::vector<int64_t>{lmax, lmin, 9223372036854774784LL, lmax}));
  // numpy: int(np.float32(1.8e19)) = 18000000404716257280
  EXPECT_EQ(values<uint64_t>(cast(vec<float>({1.8e19f, 2e19f, -1}), DType::U64)),
            (std::vector<uint64_t>{18000000404716257280ull, ~0ull, 0}));
  EXPECT_EQ(values<uint16_t>(cast(raw16(DType::F16, {0x7C00, 0x3E00, 0xFC00}), DType::U16)),
            (std::vector<uint16_t>{65535, 1, 0}));  // f16 inf, 1.5, -inf
}

TEST(OpsCastTest, IntegerToIntegerWraps) {
  // numpy astype: [300, -1] int32 -> uint8 [44, 255]; 2^40+5 int64 -> int32 5; uint64 max -> int8 -1;
  // int8 -128 -> uint64 18446744073709551488.
  EXPECT_EQ(values<uint8_t>(cast(vec<int32_t>({300, -1}), DType::U8)), (std::vector<uint8_t>{44, 255}));
  EXPECT_EQ(values<int32_t>(cast(vec<int64_t>({(int64_t{1} << 40) + 5}), DType::I32)), (std::vector<int32_t>{5}));
  EXPECT_EQ(values<int8_t>(cast(vec<uint64_t>({~0ull}), DType::I8)), (std::vector<int8_t>{-1}));
  EXPECT_EQ(values<uint64_t>(cast(vec<int8_t>({-128}), DType::U64)), (std::vector<uint64_t>{18446744073709551488ull}));
  EXPECT_EQ(values<int16_t>(cast(vec<uint32_t>({40000, 65536 + 7}), DType::I16)), (std::vector<int16_t>{-25536, 7}));
}

TEST(OpsCastTest, IntegerToFloatRoundsToNearestEven) {
  // numpy: int64 [16777217, 16777219] -> float32 [16777216, 16777220]; 2^53+1 -> float64 2^53.
  EXPECT_EQ(values<float>(cast(vec<int64_t>({16777217, 16777219, -3}), DType::F32)),
            (std::vector<float>{16777216, 16777220, -3}));
  EXPECT_EQ(values<double>(cast(vec<int64_t>({(int64_t{1} << 53) + 1}), DType::F64)),
            (std::vector<double>{9007199254740992.0}));
  EXPECT_EQ(values<float>(cast(vec<uint64_t>({~0ull}), DType::F32)), (std::vector<float>{18446744073709551616.0f}));
  EXPECT_EQ(values<double>(cast(vec<uint64_t>({~0ull}), DType::F64)), (std::vector<double>{18446744073709551616.0}));
  // numpy: int32 [2049, 2051, 65519, 65520, -70000] -> float16 bits [26624, 26626, 31743, 31744, 64512]
  EXPECT_EQ(raw16_values(cast(vec<int32_t>({2049, 2051, 65519, 65520, -70000}), DType::F16)),
            (std::vector<uint16_t>{26624, 26626, 31743, 31744, 64512}));
  // bfloat16 (8 significant bits): 257 -> 256, 259 -> 260 (ties to even); 2^24 + 2^16 + 1 is just above the
  // midpoint of 2^24 and 2^24 + 2^17, so one rounding gives 0x4B81 (through float32 it would tie to 0x4B80).
  EXPECT_EQ(raw16_values(cast(vec<int64_t>({257, 259, (1 << 24) + (1 << 16) + 1, -1}), DType::BF16)),
            (std::vector<uint16_t>{0x4380, 0x4382, 0x4B81, 0xBF80}));
  EXPECT_EQ(values<float>(cast(vec<bool>({true, false}), DType::F32)), (std::vector<float>{1, 0}));
  EXPECT_EQ(values<int64_t>(cast(vec<bool>({true, false}), DType::I64)), (std::vector<int64_t>{1, 0}));
}

TEST(OpsCastTest, FloatToFloat) {
  // numpy: float64 [1e300, 1e-50, 1+2^-24, 1+3*2^-24] -> float32 bits [0x7F800000, 0, 0x3F800000, 0x3F800002]
  auto f = values<float>(
      cast(vec<double>({1e300, 1e-50, 1 + std::ldexp(1.0, -24), 1 + 3 * std::ldexp(1.0, -24)}), DType::F32));
  EXPECT_EQ(fbits(f[0]), 0x7F800000u);
  EXPECT_EQ(fbits(f[1]), 0u);
  EXPECT_EQ(fbits(f[2]), 0x3F800000u);
  EXPECT_EQ(fbits(f[3]), 0x3F800002u);
  // numpy: float32 [1e-8, 65520, 65504] -> float16 [0x0000, 0x7C00, 0x7BFF]
  EXPECT_EQ(raw16_values(cast(vec<float>({1e-8f, 65520, 65504}), DType::F16)),
            (std::vector<uint16_t>{0, 0x7C00, 0x7BFF}));
  // float64 -> float16 goes through float32 (two roundings, as specified): 1 + 2^-11 + 2^-30 becomes the
  // float32 1 + 2^-11, a half tie that goes to even 1.0.
  EXPECT_EQ(raw16_values(cast(vec<double>({1 + std::ldexp(1.0, -11) + std::ldexp(1.0, -30)}), DType::F16)),
            (std::vector<uint16_t>{0x3C00}));
  EXPECT_EQ(values<float>(cast(raw16(DType::F16, {0x0001, 0x3555, 0xFBFF}), DType::F32)),
            (std::vector<float>{std::ldexp(1.0f, -24), 0.333251953125f, -65504.0f}));
  EXPECT_EQ(values<double>(cast(raw16(DType::BF16, {0x3F80, 0xC2F7}), DType::F64)), (std::vector<double>{1.0, -123.5}));
  EXPECT_EQ(raw16_values(cast(raw16(DType::F16, {0x3C00, 0x7C00}), DType::BF16)),
            (std::vector<uint16_t>{0x3F80, 0x7F80}));
  EXPECT_EQ(raw16_values(cast(raw16(DType::BF16, {0x4780}), DType::F16)), (std::vector<uint16_t>{0x7C00}));  // 65536
}

TEST(OpsCastTest, BoolTargetsAndNan) {
  EXPECT_EQ(values<bool>(cast(vec<float>({0, -0.0f, kNan, 0.1f, -kInf, 1e-45f}), DType::Bool)),
            (std::vector<bool>{false, false, true, true, true, true}));
  EXPECT_EQ(values<bool>(cast(vec<int32_t>({0, 5, -1}), DType::Bool)), (std::vector<bool>{false, true, true}));
  EXPECT_EQ(values<bool>(cast(vec<uint64_t>({0, 1ull << 63}), DType::Bool)), (std::vector<bool>{false, true}));
  EXPECT_EQ(values<bool>(cast(vec<bool>({true, false}), DType::Bool)), (std::vector<bool>{true, false}));
  // NaN payloads: fast mode keeps what the conversion defines, exact mode stores the canonical NaN.
  Tensor x = vec<float>({from_fbits(0xFFC12345u)});
  EXPECT_EQ(raw16_values(cast(x, DType::F16)), (std::vector<uint16_t>{0xFE09}));
  EXPECT_EQ(raw16_values(cast(x, DType::F16, true)), (std::vector<uint16_t>{0x7E00}));
  EXPECT_EQ(raw16_values(cast(x, DType::BF16, true)), (std::vector<uint16_t>{0x7FC0}));
  EXPECT_EQ(dbits(values<double>(cast(x, DType::F64, true))[0]), 0x7FF8000000000000ull);
  EXPECT_EQ(fbits(values<float>(cast(x, DType::F32, true))[0]), 0x7FC00000u);
  EXPECT_EQ(fbits(values<float>(cast(raw16(DType::F16, {0xFE01}), DType::F32, true))[0]), 0x7FC00000u);
}

TEST(OpsCastTest, EveryStoredPairKeepsSmallValues) {
  const DType types[] = {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I8,  DType::I16, DType::I32,
                         DType::I64, DType::U8,  DType::U16, DType::U32,  DType::U64, DType::Bool};
  int pairs = 0;
  for (DType from : types)
    for (DType to : types) {
      // Start from int64 {0, 1, 100} (bool: {0, 1, 1}), cast to `from`, then to `to`, then back to int64.
      Tensor base = vec<int64_t>({0, 1, 100});
      for (int64_t opset : {6, 13, 19}) {
        Tensor y = cast(cast(cast(base, from, true, opset), to, true, opset), DType::I64, true, opset);
        const bool via_bool = from == DType::Bool || to == DType::Bool;
        EXPECT_EQ(values<int64_t>(y), (std::vector<int64_t>{0, 1, via_bool ? 1 : 100}))
            << dtype_name(from) << " -> " << dtype_name(to);
      }
      ++pairs;
    }
  EXPECT_EQ(pairs, 169);
}

TEST(OpsCastTest, Errors) {
  expect_error([] { cast(vec<float>({1}), DType::String); }, ErrorKind::Unsupported, "cast to string");
  expect_error([] { cast(vec<float>({1}), static_cast<DType>(17)); }, ErrorKind::Unsupported, "float8e4m3fn");
  expect_error([] { cast(vec<float>({1}), DType::Complex64); }, ErrorKind::Unsupported, "complex64");
  OpCase c;
  c.op_type = "Cast";
  c.opset = 13;
  c.inputs = {vec<float>({1})};
  c.attrs = {attr_i("to", (int64_t{1} << 32) + 1)};  // must not wrap around to float32
  expect_error([&] { run_op(c); }, ErrorKind::InvalidModel, "holds no element type");
  c.attrs = {};
  expect_error([&] { run_op(c); }, ErrorKind::InvalidModel, "Cast node 'n0': attribute 'to' is required");
}

// Integers to float32 take a loop of their own: the value rounded once to nearest even, as the generic path.
// Hand-worked: 16777217 = 2^24 + 1 is a tie between 2^24 and 2^24 + 2 and goes to the even 2^24; 16777219 goes
// up to 16777220; INT32_MAX rounds to 2^31.
TEST(OpsCastTest, IntegersToFloatRoundOnce) {
  auto f = values<float>(
      cast(vec<int32_t>({0, -7, 16777217, 16777219, -16777217, 2147483647, -2147483647 - 1}), DType::F32));
  EXPECT_EQ(f,
            (std::vector<float>{0.0f, -7.0f, 16777216.0f, 16777220.0f, -16777216.0f, 2147483648.0f, -2147483648.0f}));
  EXPECT_EQ(values<float>(cast(vec<uint8_t>({0, 1, 254, 255}), DType::F32)), (std::vector<float>{0, 1, 254, 255}));
  EXPECT_EQ(values<float>(cast(vec<int8_t>({-128, -1, 0, 127}), DType::F32)), (std::vector<float>{-128, -1, 0, 127}));
  // More elements than one pool chunk, each its own value.
  std::vector<int32_t> big(40000);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<int32_t>(i * 2654435761u);
  auto g = values<float>(cast(vec<int32_t>(big), DType::F32));
  for (size_t i = 0; i < big.size(); ++i) ASSERT_EQ(g[i], static_cast<float>(static_cast<double>(big[i]))) << i;
}

}  // namespace
}  // namespace onemodel::test
