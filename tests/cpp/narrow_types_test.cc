// Narrow element types (base/narrow_types.h, ops-newer.md section 10): codes decoded by hand from the format
// descriptions, and models whose float8 / 4-bit initializers are only cast (they load, the Cast gives the values)
// or used otherwise (a typed refusal naming the type).
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "base/narrow_types.h"
#include "onemodel/session.h"
#include "onnx_test_util.h"
#include "ops_test_util.h"

namespace onemodel::test {
namespace {

constexpr DType kE4M3FN = static_cast<DType>(17), kE4M3FNUZ = static_cast<DType>(18);
constexpr DType kE5M2 = static_cast<DType>(19), kE5M2FNUZ = static_cast<DType>(20);
constexpr DType kU4 = static_cast<DType>(21), kI4 = static_cast<DType>(22), kF4 = static_cast<DType>(23);
constexpr DType kE8M0 = static_cast<DType>(24);

TEST(NarrowTypes, Float8CodesByHand) {
  // e4m3fn, bias 7: 0x7E = 2^(15-7) * 1.75 = 448 (the largest); 0x01 = 2^-6 / 8 = 2^-9; 0x38 = 2^0 = 1;
  // 0x7F and 0xFF are NaN; 0x80 is -0.
  EXPECT_EQ(narrow_float_value(kE4M3FN, 0x7E), 448.0f);
  EXPECT_EQ(narrow_float_value(kE4M3FN, 0xFE), -448.0f);
  EXPECT_EQ(narrow_float_value(kE4M3FN, 0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(narrow_float_value(kE4M3FN, 0x38), 1.0f);
  EXPECT_TRUE(std::isnan(narrow_float_value(kE4M3FN, 0x7F)));
  EXPECT_TRUE(std::isnan(narrow_float_value(kE4M3FN, 0xFF)));
  EXPECT_EQ(fbits(narrow_float_value(kE4M3FN, 0x80)), 0x80000000u);
  // e4m3fnuz, bias 8: 0x7F = 2^(15-8) * 1.875 = 240; 0x80 is the NaN; 0x01 = 2^-7 / 8 = 2^-10.
  EXPECT_EQ(narrow_float_value(kE4M3FNUZ, 0x7F), 240.0f);
  EXPECT_TRUE(std::isnan(narrow_float_value(kE4M3FNUZ, 0x80)));
  EXPECT_EQ(narrow_float_value(kE4M3FNUZ, 0x01), std::ldexp(1.0f, -10));
  // e5m2, bias 15: 0x7B = 2^15 * 1.75 = 57344; 0x7C = +inf, 0xFC = -inf, 0x7D NaN; 0x01 = 2^-14 / 4 = 2^-16.
  EXPECT_EQ(narrow_float_value(kE5M2, 0x7B), 57344.0f);
  EXPECT_EQ(narrow_float_value(kE5M2, 0x7C), std::numeric_limits<float>::infinity());
  EXPECT_EQ(narrow_float_value(kE5M2, 0xFC), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(narrow_float_value(kE5M2, 0x7D)));
  EXPECT_EQ(narrow_float_value(kE5M2, 0x01), std::ldexp(1.0f, -16));
  // e5m2fnuz, bias 16: 0x7F = 2^15 * 1.75 = 57344 (no infinity); 0x80 NaN; 0x01 = 2^-17.
  EXPECT_EQ(narrow_float_value(kE5M2FNUZ, 0x7F), 57344.0f);
  EXPECT_TRUE(std::isnan(narrow_float_value(kE5M2FNUZ, 0x80)));
  EXPECT_EQ(narrow_float_value(kE5M2FNUZ, 0x01), std::ldexp(1.0f, -17));
  // e8m0: 2^(e - 127); 127 is 1, 0 is 2^-127, 0xFF NaN.
  EXPECT_EQ(narrow_float_value(kE8M0, 127), 1.0f);
  EXPECT_EQ(narrow_float_value(kE8M0, 0), std::ldexp(1.0f, -127));
  EXPECT_TRUE(std::isnan(narrow_float_value(kE8M0, 0xFF)));
}

TEST(NarrowTypes, FourBitPackingByHand) {
  // Bytes 0x21, 0xF8: elements 0x1, 0x2 (low nibble first), 0x8, 0xF.
  const std::vector<std::byte> packed = {std::byte{0x21}, std::byte{0xF8}};
  std::vector<int8_t> i4(4);
  ASSERT_TRUE(decode_narrow(kI4, packed, 4, i4.data()));
  EXPECT_EQ(i4, (std::vector<int8_t>{1, 2, -8, -1}));
  std::vector<uint8_t> u4(3);
  ASSERT_TRUE(decode_narrow(kU4, packed, 3, u4.data()));  // an odd count ignores the last high nibble
  EXPECT_EQ(u4, (std::vector<uint8_t>{1, 2, 8}));
  // float4e2m1: 1 = 0.5, 2 = 1, 8 = -0, 15 = -6.
  std::vector<float> f4(4);
  ASSERT_TRUE(decode_narrow(kF4, packed, 4, f4.data()));
  EXPECT_EQ(f4[0], 0.5f);
  EXPECT_EQ(f4[1], 1.0f);
  EXPECT_EQ(fbits(f4[2]), 0x80000000u);
  EXPECT_EQ(f4[3], -6.0f);
  EXPECT_FALSE(decode_narrow(kI4, packed, 5, i4.data()));  // 5 elements need 3 bytes
  EXPECT_FALSE(decode_narrow(DType::F32, packed, 1, f4.data()));
  EXPECT_EQ(narrow_widened_type(DType::F16), DType::Undefined);
}

// A model: initializer w of `elem` with `raw` bytes and `n` elements, then `op` (Cast to `to`, or Add w + w) to y
// (declared of type `to`, float32 for Add).
std::string narrow_model(int elem, const std::string& raw, int64_t n, const std::string& op, int to) {
  Msg t;
  t.varint(1, static_cast<uint64_t>(n)).varint(2, static_cast<uint64_t>(elem)).bytes(8, "w").bytes(9, raw);
  Msg nd = op == "Cast" ? node("Cast", {"w"}, {"y"}, "c") : node(op, {"w", "w"}, {"y"}, "c");
  if (op == "Cast") nd.msg(5, Msg().bytes(1, "to").varint(3, static_cast<uint64_t>(to)).varint(20, 2));
  Msg g;
  g.msg(1, nd).bytes(2, "g").msg(5, t).msg(12, value_info("y", op == "Cast" ? to : 1, {n}));
  return model(g, 8, 21).b;
}

std::vector<Tensor> run_model(const std::string& bytes, Mode mode) {
  SessionOptions o;
  o.mode = mode;
  const Session s = Session::load_bytes(std::as_bytes(std::span(bytes.data(), bytes.size())), o);
  return s.run(std::span<const NamedTensor>{});
}

TEST(NarrowTypes, InitializersOnlyCastLoad) {
  for (Mode mode : {Mode::Fast, Mode::Exact}) {
    // float8e4m3fn [0, 2^-9, 448, -448, 1, -0] to float32.
    const std::string raw = {'\x00', '\x01', '\x7E', '\xFE', '\x38', '\x80'};
    const std::vector<float> y = values<float>(run_model(narrow_model(17, raw, 6, "Cast", 1), mode)[0]);
    ASSERT_EQ(y.size(), 6u);
    EXPECT_EQ(y[0], 0.0f);
    EXPECT_EQ(y[1], std::ldexp(1.0f, -9));
    EXPECT_EQ(y[2], 448.0f);
    EXPECT_EQ(y[3], -448.0f);
    EXPECT_EQ(y[4], 1.0f);
    EXPECT_EQ(fbits(y[5]), 0x80000000u);
    // int4 [1, 2, -8, -1] to int32.
    const std::string i4 = {'\x21', '\xF8'};
    EXPECT_EQ(values<int32_t>(run_model(narrow_model(22, i4, 4, "Cast", 6), mode)[0]),
              (std::vector<int32_t>{1, 2, -8, -1}));
  }
  // The NaN code of e4m3fn to float32 in exact mode: the canonical NaN.
  const std::string nan = {'\x7F'};
  EXPECT_EQ(fbits(values<float>(run_model(narrow_model(17, nan, 1, "Cast", 1), Mode::Exact)[0])[0]), 0x7FC00000u);
}

TEST(NarrowTypes, OtherUsesAreTypedRefusals) {
  const std::string raw = {'\x38', '\x38'};
  expect_error([&] { run_model(narrow_model(17, raw, 2, "Add", 0), Mode::Fast); }, ErrorKind::Unsupported,
               "initializer 'w' has element type float8e4m3fn");
  // A Cast to a narrow type stays refused (the graph output of that type or the Cast, whichever is checked first).
  expect_error([&] { run_model(narrow_model(17, raw, 2, "Cast", 19), Mode::Fast); }, ErrorKind::Unsupported,
               "float8e5m2");
}

}  // namespace
}  // namespace onemodel::test
