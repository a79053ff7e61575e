// Shapes, views and contiguous copies (tensors.md sections 3-4). Element values are checked against an
// index formula written in the test: the source holds f(i,j,k) = 100*i + 10*j + k, and each view's
// expected row-major content is built with plain loops from the operation's definition.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "onemodel/tensor.h"

namespace onemodel {
namespace {

// [2,3,4] int32 tensor with value 100*i + 10*j + k at (i,j,k).
Tensor source234() {
  std::vector<int32_t> v;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) v.push_back(100 * i + 10 * j + k);
  return Tensor::from_values<int32_t>(std::span<const int32_t>(v), Shape{2, 3, 4});
}

// Row-major content of any view, read through contiguous().
std::vector<int32_t> values(const Tensor& t) {
  Tensor c = t.contiguous();
  auto d = c.data<int32_t>();
  return {d.begin(), d.end()};
}

// Expected values of a rank-3 result with extents e, from a formula on the result index.
std::vector<int32_t> expect3(std::array<int64_t, 3> e, const std::function<int32_t(int64_t, int64_t, int64_t)>& f) {
  std::vector<int32_t> out;
  for (int64_t a = 0; a < e[0]; ++a)
    for (int64_t b = 0; b < e[1]; ++b)
      for (int64_t c = 0; c < e[2]; ++c) out.push_back(f(a, b, c));
  return out;
}

std::vector<int64_t> strides_of(const Tensor& t) { return {t.strides().begin(), t.strides().end()}; }

TEST(ShapeTest, Limits) {
  EXPECT_THROW(Shape({100000, 100000, 0}), Error);
  try {
    Shape({100000, 100000, 0});
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
  }
  EXPECT_THROW(Shape({1, 1, 1, 1, 1, 1, 1, 1, 1}), Error);  // rank 9
  EXPECT_NO_THROW(Shape({1, 1, 1, 1, 1, 1, 1, 1}));         // rank 8
  EXPECT_THROW(Shape({-1, 2}), Error);
  // Prefix products: 2^31-1 itself fits, one more does not; [0, 100000, 100000] fits since every prefix is 0.
  EXPECT_NO_THROW(Shape({2147483647}));
  EXPECT_THROW(Shape({2147483648LL}), Error);
  EXPECT_THROW(Shape({65536, 32768}), Error);  // 2^31
  EXPECT_NO_THROW(Shape({0, 100000, 100000}));
  EXPECT_NO_THROW(Shape({46340, 46340}));  // 2147395600 < 2^31-1
  EXPECT_EQ(Shape({2, 3, 4}).numel(), 24);
  EXPECT_EQ(Shape().numel(), 1);
  EXPECT_EQ(Shape({2, 0, 4}).numel(), 0);
}

TEST(TensorViewTest, ContiguousReturnsSelfOrCopies) {
  Tensor t = source234();
  Tensor same = t.contiguous();
  EXPECT_EQ(same.raw(), t.raw());
  Tensor tr = t.transpose(0, 2);
  EXPECT_FALSE(tr.is_contiguous());
  Tensor c = tr.contiguous();
  EXPECT_NE(c.storage().data.get(), t.storage().data.get());
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(c.shape(), Shape({4, 3, 2}));
  // A view that is contiguous but offset (select of the second block) is returned as is.
  Tensor sel = t.select(0, 1);
  EXPECT_TRUE(sel.is_contiguous());
  EXPECT_EQ(sel.contiguous().raw(), sel.raw());
}

TEST(TensorViewTest, Permute) {
  Tensor t = source234();
  std::array<int, 3> p{2, 0, 1};
  Tensor v = t.permute(p);
  EXPECT_EQ(v.shape(), Shape({4, 2, 3}));
  EXPECT_EQ(strides_of(v), (std::vector<int64_t>{1, 12, 4}));
  EXPECT_EQ(values(v), expect3({4, 2, 3}, [](auto a, auto b, auto c) { return int32_t(100 * b + 10 * c + a); }));
  std::array<int, 3> dup{0, 0, 1};
  EXPECT_THROW(t.permute(dup), Error);
  std::array<int, 2> short_perm{0, 1};
  EXPECT_THROW(t.permute(short_perm), Error);
}

TEST(TensorViewTest, Transpose) {
  Tensor t = source234();
  Tensor v = t.transpose(1, 2);
  EXPECT_EQ(v.shape(), Shape({2, 4, 3}));
  EXPECT_EQ(values(v), expect3({2, 4, 3}, [](auto a, auto b, auto c) { return int32_t(100 * a + 10 * c + b); }));
  EXPECT_THROW(t.transpose(0, 3), Error);
}

TEST(TensorViewTest, SliceWithStep) {
  Tensor t = source234();
  Tensor v = t.slice(2, 1, 4, 2);  // k = 1, 3
  EXPECT_EQ(v.shape(), Shape({2, 3, 2}));
  EXPECT_EQ(v.offset(), 1);
  EXPECT_EQ(strides_of(v), (std::vector<int64_t>{12, 4, 2}));
  EXPECT_EQ(values(v),
            expect3({2, 3, 2}, [](auto a, auto b, auto c) { return int32_t(100 * a + 10 * b + 1 + 2 * c); }));
  Tensor w = t.slice(1, 1, 3);  // j = 1, 2
  EXPECT_EQ(values(w), expect3({2, 2, 4}, [](auto a, auto b, auto c) { return int32_t(100 * a + 10 * (b + 1) + c); }));
  // ceil((4-0)/3) = 2: k = 0, 3
  EXPECT_EQ(t.slice(2, 0, 4, 3).shape(), Shape({2, 3, 2}));
  // Empty result: the offset does not move.
  Tensor e = t.slice(1, 3, 3);
  EXPECT_EQ(e.shape(), Shape({2, 0, 4}));
  EXPECT_EQ(e.offset(), 0);
  EXPECT_THROW(t.slice(2, 2, 1), Error);
  EXPECT_THROW(t.slice(2, 0, 5), Error);
  EXPECT_THROW(t.slice(2, -1, 2), Error);
  EXPECT_THROW(t.slice(2, 0, 2, 0), Error);
}

TEST(TensorViewTest, Select) {
  Tensor t = source234();
  Tensor v = t.select(1, 2);
  EXPECT_EQ(v.shape(), Shape({2, 4}));
  EXPECT_EQ(v.offset(), 8);
  std::vector<int32_t> want;
  for (int a = 0; a < 2; ++a)
    for (int c = 0; c < 4; ++c) want.push_back(100 * a + 20 + c);
  EXPECT_EQ(values(v), want);
  Tensor s = t.select(0, 1).select(0, 2).select(0, 3);
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(values(s), std::vector<int32_t>{123});
  EXPECT_THROW(t.select(1, 3), Error);
  EXPECT_THROW(t.select(1, -1), Error);
}

TEST(TensorViewTest, FlipNegativeStrides) {
  Tensor t = source234();
  Tensor v = t.flip(2);
  EXPECT_EQ(strides_of(v), (std::vector<int64_t>{12, 4, -1}));
  EXPECT_EQ(v.offset(), 3);
  EXPECT_EQ(values(v), expect3({2, 3, 4}, [](auto a, auto b, auto c) { return int32_t(100 * a + 10 * b + 3 - c); }));
  Tensor w = t.flip(0).flip(1);
  EXPECT_EQ(values(w),
            expect3({2, 3, 4}, [](auto a, auto b, auto c) { return int32_t(100 * (1 - a) + 10 * (2 - b) + c); }));
  // Slicing a flipped tensor: k' = 1..3 step 2 of reversed k -> k = 2, 0.
  Tensor x = v.slice(2, 1, 4, 2);
  EXPECT_EQ(values(x),
            expect3({2, 3, 2}, [](auto a, auto b, auto c) { return int32_t(100 * a + 10 * b + 2 - 2 * c); }));
  // Flip twice is the identity, also in layout.
  Tensor y = v.flip(-1);
  EXPECT_TRUE(y.is_contiguous());
  EXPECT_EQ(y.offset(), 0);
}

TEST(TensorViewTest, UnsqueezeSqueeze) {
  Tensor t = source234();
  Tensor u = t.unsqueeze(1);
  EXPECT_EQ(u.shape(), Shape({2, 1, 3, 4}));
  EXPECT_EQ(strides_of(u), (std::vector<int64_t>{12, 12, 4, 1}));
  Tensor e = t.unsqueeze(3);
  EXPECT_EQ(e.shape(), Shape({2, 3, 4, 1}));
  EXPECT_EQ(strides_of(e)[3], 1);
  Tensor n = t.unsqueeze(-1);
  EXPECT_EQ(n.shape(), Shape({2, 3, 4, 1}));
  EXPECT_TRUE(u.is_contiguous());
  EXPECT_EQ(values(u), values(t));
  EXPECT_EQ(u.squeeze(1).shape(), Shape({2, 3, 4}));
  EXPECT_THROW(u.squeeze(0), Error);
  Tensor many = t.select(0, 1).unsqueeze(0).unsqueeze(2).unsqueeze(4);
  EXPECT_EQ(many.shape(), Shape({1, 3, 1, 4, 1}));
  Tensor sq = many.squeeze();
  EXPECT_EQ(sq.shape(), Shape({3, 4}));
  std::vector<int32_t> want;
  for (int b = 0; b < 3; ++b)
    for (int c = 0; c < 4; ++c) want.push_back(100 + 10 * b + c);
  EXPECT_EQ(values(sq), want);
  Tensor r8 = Tensor::zeros(DType::F32, Shape({1, 1, 1, 1, 1, 1, 1, 1}));
  EXPECT_THROW(r8.unsqueeze(0), Error);
}

TEST(TensorViewTest, ExpandStrideZero) {
  std::vector<int32_t> col{7, 8, 9};
  Tensor c = Tensor::from_values<int32_t>(std::span<const int32_t>(col), Shape{3, 1});
  Tensor v = c.expand(Shape({2, 3, 4}));
  EXPECT_EQ(strides_of(v), (std::vector<int64_t>{0, 1, 0}));
  EXPECT_EQ(values(v), expect3({2, 3, 4}, [](auto, auto b, auto) { return int32_t(7 + b); }));
  EXPECT_THROW(c.expand(Shape({2, 4, 4})), Error);
  EXPECT_THROW(c.expand(Shape({3})), Error);
  // 1 -> 0 is allowed (numpy broadcasting).
  EXPECT_EQ(c.expand(Shape({3, 0})).numel(), 0);
}

TEST(TensorViewTest, ReshapeViewable) {
  Tensor t = source234();
  Tensor r = t.try_reshape(Shape({6, 4}));
  ASSERT_FALSE(r.empty());
  EXPECT_EQ(r.raw(), t.raw());
  EXPECT_EQ(strides_of(r), (std::vector<int64_t>{4, 1}));
  EXPECT_EQ(values(r), values(t));
  // A slice along the first axis keeps [j,k] contiguous: [1,3,4] -> [12] is a view.
  Tensor s = t.slice(0, 1, 2);
  Tensor sr = s.try_reshape(Shape({12}));
  ASSERT_FALSE(sr.empty());
  EXPECT_EQ(sr.offset(), 12);
  // Step-2 slice of the last axis: dims (2,3,2), strides (12,4,2). 4 == 2*2 and 12 == 4*3, so all three
  // merge into one run of 12 elements with inner stride 2.
  Tensor st = t.slice(2, 0, 4, 2);
  Tensor str = st.try_reshape(Shape({3, 4}));
  ASSERT_FALSE(str.empty());
  EXPECT_EQ(strides_of(str), (std::vector<int64_t>{8, 2}));
  std::vector<int32_t> want;
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 2; ++c) want.push_back(100 * a + 10 * b + 2 * c);
  EXPECT_EQ(values(str), want);
  // Extent-1 dims anywhere in the new shape.
  Tensor ones = t.try_reshape(Shape({1, 2, 1, 12, 1}));
  ASSERT_FALSE(ones.empty());
  EXPECT_EQ(values(ones), values(t));
  // Splitting a transposed tensor's dims without crossing runs: [4,3,2] strides (1,4,12) -> [2,2,3,2].
  Tensor tr = t.permute(std::array<int, 3>{2, 1, 0});
  Tensor split = tr.try_reshape(Shape({2, 2, 3, 2}));
  ASSERT_FALSE(split.empty());
  EXPECT_EQ(strides_of(split), (std::vector<int64_t>{2, 1, 4, 12}));
  // Empty tensors are always viewable with contiguous strides.
  Tensor empty = t.slice(1, 0, 0);
  Tensor er = empty.try_reshape(Shape({0, 5}));
  ASSERT_FALSE(er.empty());
  EXPECT_EQ(strides_of(er), (std::vector<int64_t>{5, 1}));
  EXPECT_THROW(t.try_reshape(Shape({5, 5})), Error);
}

TEST(TensorViewTest, ReshapeNotViewableCopies) {
  Tensor t = source234();
  Tensor tr = t.transpose(0, 1);  // [3,2,4], strides (4,12,1)
  EXPECT_TRUE(tr.try_reshape(Shape({6, 4})).empty());
  EXPECT_TRUE(tr.try_reshape(Shape({24})).empty());
  Tensor r = tr.reshape(Shape({6, 4}));
  EXPECT_NE(r.storage().data.get(), t.storage().data.get());
  // Row-major order of the transposed view: (b, a, c) -> 100a + 10b + c.
  std::vector<int32_t> want = expect3({3, 2, 4}, [](auto b, auto a, auto c) { return int32_t(100 * a + 10 * b + c); });
  EXPECT_EQ(values(r), want);
  // Flipped tensors cannot be merged into a forward run.
  Tensor f = t.flip(2);
  EXPECT_TRUE(f.try_reshape(Shape({24})).empty());
  EXPECT_FALSE(f.try_reshape(Shape({6, 4})).empty());  // axes 0,1 merge; axis 2 stays its own run
  Tensor fr = f.reshape(Shape({24}));
  EXPECT_EQ(values(fr), values(f));
}

TEST(TensorViewTest, ViewRangeIsChecked) {
  Tensor t = source234();
  // A hand-built tensor whose strides reach past the buffer: any view of it is refused.
  std::array<int64_t, 1> big{25};
  Tensor bad(t.storage(), DType::I32, Shape({2}), big, 0);
  EXPECT_THROW(bad.flip(0), Error);
  std::array<int64_t, 1> neg{-1};
  Tensor bad2(t.storage(), DType::I32, Shape({2}), neg, 0);
  EXPECT_THROW(bad2.unsqueeze(0), Error);
  // An offset view at the very end is fine.
  std::array<int64_t, 1> one{1};
  Tensor ok(t.storage(), DType::I32, Shape({1}), one, 23);
  EXPECT_EQ(values(ok.unsqueeze(0)), std::vector<int32_t>{123});
}

TEST(TensorViewTest, ContiguousOfEveryPermutationRank4) {
  // Source [2,3,4,5] holds its own row-major index. For each of the 24 permutations the copy must hold,
  // at result index j, the source index with k[p[t]] = j[t] (computed here digit by digit).
  const std::array<int64_t, 4> ext{2, 3, 4, 5};
  std::vector<int32_t> v(120);
  for (int i = 0; i < 120; ++i) v[static_cast<size_t>(i)] = i;
  Tensor t = Tensor::from_values<int32_t>(std::span<const int32_t>(v), Shape{2, 3, 4, 5});
  std::array<int, 4> p{0, 1, 2, 3};
  int checked = 0;
  do {
    std::array<int64_t, 4> rext{};
    for (int i = 0; i < 4; ++i) rext[static_cast<size_t>(i)] = ext[static_cast<size_t>(p[static_cast<size_t>(i)])];
    std::vector<int32_t> want;
    for (int64_t lin = 0; lin < 120; ++lin) {
      std::array<int64_t, 4> j{}, k{};
      int64_t rest = lin;
      for (int d = 3; d >= 0; --d) {
        j[static_cast<size_t>(d)] = rest % rext[static_cast<size_t>(d)];
        rest /= rext[static_cast<size_t>(d)];
      }
      for (int d = 0; d < 4; ++d) k[static_cast<size_t>(p[static_cast<size_t>(d)])] = j[static_cast<size_t>(d)];
      want.push_back(static_cast<int32_t>(((k[0] * 3 + k[1]) * 4 + k[2]) * 5 + k[3]));
    }
    EXPECT_EQ(values(t.permute(p)), want);
    ++checked;
  } while (std::next_permutation(p.begin(), p.end()));
  EXPECT_EQ(checked, 24);
  // Rank 1 with a negative stride, and a flip of a dense last axis under a strided outer axis.
  Tensor r = t.reshape(Shape({120})).slice(0, 10, 20).flip(0);
  std::vector<int32_t> want1;
  for (int i = 19; i >= 10; --i) want1.push_back(i);
  EXPECT_EQ(values(r), want1);
}

TEST(TensorViewTest, Float64Copies) {
  std::vector<double> d{1.5, 2.5, 3.5, 4.5, 5.5, 6.5};
  Tensor t = Tensor::from_values<double>(std::span<const double>(d), Shape{2, 3});
  Tensor c = t.transpose(0, 1).contiguous();
  auto v = c.data<double>();
  EXPECT_EQ(std::vector<double>(v.begin(), v.end()), (std::vector<double>{1.5, 4.5, 2.5, 5.5, 3.5, 6.5}));
}

}  // namespace
}  // namespace onemodel
