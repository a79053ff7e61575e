// SHA-256 against the published FIPS 180-2 / NIST example vectors, and the output hash against values
// computed independently with /usr/bin/python3 hashlib + numpy in the terminal (pasted as constants):
//   sha256(pack('<q', code) + pack('<q', ndim) + dims as '<q' + array.tobytes())
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/sha256.h"
#include "onemodel/tensor.h"
#include "tensor/hash.h"

namespace onemodel {
namespace {

TEST(Sha256Test, StandardVectors) {
  EXPECT_EQ(sha256_hex("abc", 3), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("", 0), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  std::string m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  ASSERT_EQ(m448.size() * 8, 448u);
  EXPECT_EQ(sha256_hex(m448.data(), m448.size()), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  std::string m896 =
      "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrst"
      "u";
  ASSERT_EQ(m896.size() * 8, 896u);
  EXPECT_EQ(sha256_hex(m896.data(), m896.size()), "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

TEST(Sha256Test, OneMillionA) {
  std::string a(1000000, 'a');
  const char* want = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
  EXPECT_EQ(sha256_hex(a.data(), a.size()), want);
  // Same message fed in uneven pieces, exercising the partial-block buffer.
  Sha256 h;
  size_t pos = 0, piece = 1;
  while (pos < a.size()) {
    size_t n = std::min(piece, a.size() - pos);
    h.update(a.data() + pos, n);
    pos += n;
    piece = piece * 3 % 1000 + 1;
  }
  EXPECT_EQ(h.hex_digest(), want);
}

TEST(Sha256Test, BlockBoundaries) {
  // bytes(range(256)) * 3 (768 bytes), hashlib value.
  std::vector<uint8_t> m;
  for (int r = 0; r < 3; ++r)
    for (int i = 0; i < 256; ++i) m.push_back(static_cast<uint8_t>(i));
  EXPECT_EQ(sha256_hex(m.data(), m.size()), "f3a25aa93aa2fbba28d79260535bbd6a5eb0fc1c24a8b0f04e12b484c1dfe363");
}

TEST(TensorHashTest, MatchesPythonLayout) {
  // np.arange(1,7,dtype=float32)*0.5 reshaped (2,3)
  Tensor t = Tensor::from_values<float>({0.5f, 1.0f, 1.5f, 2.0f, 2.5f, 3.0f}, Shape{2, 3});
  EXPECT_EQ(tensor_sha256_hex(t), "3b234edd93eeaa0ffd512e59b5316fca6b5d7c4e7e8f675fd7cfafdc78714420");
  // Its transpose (a strided view) hashes like numpy's .T made contiguous.
  EXPECT_EQ(tensor_sha256_hex(t.transpose(0, 1)), "6485a9f003882214e09135477c62b8b0ca2ac4406bad41f561d925180d583378");
  // Scalar: hashlib.sha256(struct.pack("<qqq", 7, 0, 42)) (rank 0, no dims).
  Tensor s = Tensor::from_values<int64_t>({42}, Shape{});
  EXPECT_EQ(tensor_sha256_hex(s), "ba940b7480217d7cdd8a9128bd60371e590721bc28273cc15818887b955eee3b");
  Tensor b = Tensor::from_values<bool>({true, false, true}, Shape{3});
  EXPECT_EQ(tensor_sha256_hex(b), "d489e15f5e14eac2a7ed994653da4c1f0ceef68b61a4f9db737a98834dbbb783");
  Tensor e = Tensor::zeros(DType::F32, Shape{0, 4});
  EXPECT_EQ(tensor_sha256_hex(e), "45cd422a292c0b7e4158cb599a85573e6a9feb220b60bccf828ef09f4f94a1a3");
  Tensor i = Tensor::from_values<int32_t>({-1, 2147483647, -2147483647 - 1}, Shape{3});
  EXPECT_EQ(tensor_sha256_hex(i), "c9d2cfff04d23bb8c8054ff997c8475dbd16a3afc830e2fa82da7a5f8fad786f");
  EXPECT_THROW(tensor_sha256_hex(Tensor()), Error);
}

}  // namespace
}  // namespace onemodel
