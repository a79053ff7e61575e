// gemm_f32 on every target this machine runs, against references written here from the spec's pseudo-code
// (exact-mode.md "Matrix product"): exact must give the naive loop's bits, fast must stay within Higham's bound
// of a double-precision reference. Views have random strides, offsets and transposes; inputs carry NaN, ±inf,
// ±0 and subnormals; C rows have guard elements that must stay untouched.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "base/thread_pool.h"
#include "kernels/gemm.h"
#include "kernels/isa.h"
#include "onemodel/error.h"

namespace onemodel::kern {
namespace {

constexpr float kGuard = 12345.f;
constexpr uint32_t kCanonicalNaN = 0x7FC00000u;

// A matrix stored in its own buffer with a random layout: row-major or transposed, padded strides, an offset,
// sometimes reversed rows (negative row stride).
struct StoredMatrix {
  std::vector<float> buf;
  MatrixView view{};
  int64_t rows = 0, cols = 0;
  float at(int64_t i, int64_t j) const { return view.data[i * view.row_stride + j * view.col_stride]; }
};

struct Values {
  std::mt19937 rng;
  double special_rate;  // probability of a special value per element
  float next() {
    static const float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                                     std::numeric_limits<float>::infinity(),
                                     -std::numeric_limits<float>::infinity(),
                                     0.f,
                                     -0.f,
                                     1e-40f,
                                     -3e-39f,
                                     std::bit_cast<float>(0xFFC12345u)};
    if (std::uniform_real_distribution<double>(0, 1)(rng) < special_rate)
      return specials[std::uniform_int_distribution<int>(0, 7)(rng)];
    return std::uniform_real_distribution<float>(-2.f, 2.f)(rng);
  }
};

StoredMatrix make_matrix(int64_t rows, int64_t cols, Values& vals, std::mt19937& rng) {
  StoredMatrix s;
  s.rows = rows;
  s.cols = cols;
  const bool transposed = rng() % 2 == 0;
  const bool reversed = rng() % 5 == 0;
  const int64_t pad = static_cast<int64_t>(rng() % 4), offset = static_cast<int64_t>(rng() % 5);
  const int64_t inner = (transposed ? rows : cols) + pad, outer = transposed ? cols : rows;
  s.buf.assign(static_cast<size_t>(offset + inner * outer + 3), std::numeric_limits<float>::quiet_NaN());
  int64_t rs = transposed ? 1 : inner, cs = transposed ? inner : 1;
  const float* base = s.buf.data() + offset;
  if (reversed && rows > 0) {
    base += (rows - 1) * rs;
    rs = -rs;
  }
  s.view = MatrixView{base, rs, cs};
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) const_cast<float*>(s.view.data)[i * rs + j * cs] = vals.next();
  return s;
}

// exact-mode.md: acc = +0; acc = round(acc + round(a * b)) for increasing p; NaN -> 0x7FC00000. The engine
// is compiled with -ffp-contract=off, so these float expressions are two roundings.
std::vector<uint32_t> exact_reference(const StoredMatrix& a, const StoredMatrix& b) {
  const int64_t m = a.rows, k = a.cols, n = b.cols;
  std::vector<uint32_t> out(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (int64_t p = 0; p < k; ++p) {
        const float prod = a.at(i, p) * b.at(p, j);
        acc = acc + prod;
      }
      out[static_cast<size_t>(i * n + j)] = std::isnan(acc) ? kCanonicalNaN : std::bit_cast<uint32_t>(acc);
    }
  return out;
}

struct Output {
  std::vector<float> buf;
  int64_t ldc = 0, m = 0, n = 0;
  float* c() { return buf.data(); }
  float at(int64_t i, int64_t j) const { return buf[static_cast<size_t>(i * ldc + j)]; }
};

Output make_output(int64_t m, int64_t n, std::mt19937& rng) {
  Output o;
  o.m = m;
  o.n = n;
  o.ldc = n + static_cast<int64_t>(rng() % 3);
  // Garbage inside (the kernel must not read it as a start value) and guards around the rows.
  o.buf.assign(static_cast<size_t>(m * o.ldc + 2), kGuard);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) o.buf[static_cast<size_t>(i * o.ldc + j)] = -777.f;
  return o;
}

void check_guards(const Output& o, const std::string& what) {
  for (int64_t i = 0; i < o.m; ++i)
    for (int64_t j = o.n; j < o.ldc; ++j) ASSERT_EQ(o.at(i, j), kGuard) << what << " guard " << i << "," << j;
  ASSERT_EQ(o.buf[o.buf.size() - 1], kGuard) << what;
  ASSERT_EQ(o.buf[o.buf.size() - 2], kGuard) << what;
}

std::vector<uint32_t> bits_of(const Output& o) {
  std::vector<uint32_t> r;
  for (int64_t i = 0; i < o.m; ++i)
    for (int64_t j = 0; j < o.n; ++j) r.push_back(std::bit_cast<uint32_t>(o.at(i, j)));
  return r;
}

// Fast mode: NaN and infinity where the exact reference has them (inputs stay far from overflow, so fusing
// cannot move them), elsewhere |c - exact| <= k * u * sum |a * b| + 1e-30 against a double reference.
void check_fast(const Output& o, const StoredMatrix& a, const StoredMatrix& b, const std::vector<uint32_t>& ref,
                const std::string& what) {
  const int64_t k = a.cols;
  for (int64_t i = 0; i < o.m; ++i)
    for (int64_t j = 0; j < o.n; ++j) {
      const float got = o.at(i, j);
      const float want = std::bit_cast<float>(ref[static_cast<size_t>(i * o.n + j)]);
      if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(got)) << what << " at " << i << "," << j;
        continue;
      }
      if (std::isinf(want)) {
        ASSERT_EQ(got, want) << what << " at " << i << "," << j;
        continue;
      }
      double sum = 0, abs_sum = 0;
      for (int64_t p = 0; p < k; ++p) {
        const double t = static_cast<double>(a.at(i, p)) * static_cast<double>(b.at(p, j));
        sum += t;
        abs_sum += std::fabs(t);
      }
      const double bound = static_cast<double>(k) * std::ldexp(1.0, -24) * abs_sum + 1e-30;
      ASSERT_LE(std::fabs(static_cast<double>(got) - sum), bound) << what << " at " << i << "," << j;
    }
}

std::string describe(Isa isa, bool exact, int64_t m, int64_t n, int64_t k) {
  return std::string(isa_name(isa)) + (exact ? " exact " : " fast ") + std::to_string(m) + "x" + std::to_string(n) +
         "x" + std::to_string(k);
}

// One shape on every target and in both modes, unpacked and packed.
void check_shape(int64_t m, int64_t n, int64_t k, double special_rate, std::mt19937& rng) {
  Values vals{std::mt19937(static_cast<uint32_t>(rng())), special_rate};
  const StoredMatrix a = make_matrix(m, k, vals, rng);
  const StoredMatrix b = make_matrix(k, n, vals, rng);
  const std::vector<uint32_t> ref = exact_reference(a, b);
  for (Isa isa : available_isas()) {
    const auto packed = pack_b_f32(isa, k, n, b.view);
    ASSERT_EQ(packed_b_rows(*packed), k);
    ASSERT_EQ(packed_b_cols(*packed), n);
    for (bool exact : {false, true}) {
      const std::string what = describe(isa, exact, m, n, k);
      Output o = make_output(m, n, rng);
      gemm_f32(isa, exact, m, n, k, a.view, b.view, o.c(), o.ldc, nullptr);
      check_guards(o, what);
      if (exact) {
        const std::vector<uint32_t> got = bits_of(o);
        for (size_t e = 0; e < got.size(); ++e)
          ASSERT_EQ(got[e], ref[e]) << what << " element " << e << " got " << std::bit_cast<float>(got[e]) << " want "
                                    << std::bit_cast<float>(ref[e]);
      } else {
        check_fast(o, a, b, ref, what);
      }
      Output q = make_output(m, n, rng);
      gemm_f32_packed(isa, exact, m, a.view, *packed, q.c(), q.ldc, nullptr);
      check_guards(q, what + " packed");
      ASSERT_EQ(bits_of(q), bits_of(o)) << what << " packed";
    }
  }
}

TEST(KernelGemm, EachDimensionFrom0To70) {
  std::mt19937 rng(2024);
  const int64_t others[] = {1, 7, 33};
  for (int dim = 0; dim < 3; ++dim)
    for (int64_t v = 0; v <= 70; ++v)
      for (int64_t x : others) {
        const int64_t y = others[(static_cast<size_t>(v) + static_cast<size_t>(x)) % 3];
        const int64_t m = dim == 0 ? v : x, n = dim == 1 ? v : (dim == 0 ? x : y), k = dim == 2 ? v : y;
        check_shape(m, n, k, (v % 3 == 0) ? 0.08 : 0.0, rng);
        if (HasFatalFailure()) return;
      }
}

TEST(KernelGemm, RandomShapes) {
  std::mt19937 rng(99);
  for (int t = 0; t < 60; ++t) {
    const auto dim = [&] { return static_cast<int64_t>(rng() % 71); };
    check_shape(dim(), dim(), dim(), t % 2 ? 0.05 : 0.0, rng);
    if (HasFatalFailure()) return;
  }
}

// Shapes crossing the k-block (256), tile (64/96 x 64/128) and strip boundaries of every target.
TEST(KernelGemm, BlockBoundaries) {
  std::mt19937 rng(5);
  const int64_t shapes[][3] = {{97, 129, 257}, {13, 200, 520}, {130, 33, 300}, {1, 300, 513}, {200, 1, 256}};
  for (const auto& s : shapes) {
    check_shape(s[0], s[1], s[2], 0.0, rng);
    if (HasFatalFailure()) return;
  }
  check_shape(65, 70, 600, 0.002, rng);
  // One row against whole groups of strips (MicroRow), with NaN and infinities, over several k-blocks.
  check_shape(1, 520, 300, 0.05, rng);
}

TEST(KernelGemm, ZeroKGivesPositiveZero) {
  const float dummy = 1.f;
  for (Isa isa : available_isas())
    for (bool exact : {false, true}) {
      std::vector<float> c(12, -5.f);
      gemm_f32(isa, exact, 3, 4, 0, MatrixView{&dummy, 0, 1}, MatrixView{&dummy, 4, 1}, c.data(), 4, nullptr);
      for (float v : c) EXPECT_EQ(std::bit_cast<uint32_t>(v), 0u) << isa_name(isa);
    }
}

// -0 products summed from +0 give +0 (exact-mode.md: the accumulator starts at +0).
TEST(KernelGemm, NegativeZeroProductsGivePositiveZero) {
  const std::vector<float> a(5 * 3, -0.f), b(3 * 40, 1.f);
  for (Isa isa : available_isas())
    for (bool exact : {false, true}) {
      std::vector<float> c(5 * 40, 9.f);
      gemm_f32(isa, exact, 5, 40, 3, MatrixView{a.data(), 3, 1}, MatrixView{b.data(), 40, 1}, c.data(), 40, nullptr);
      for (float v : c) EXPECT_EQ(std::bit_cast<uint32_t>(v), 0u) << isa_name(isa);
    }
}

// unpack_a_f32 gives back, bit for bit, the values pack_a_f32 packed (a session that freed a convolution's
// weights makes its other forms from them: runtime/compiled_graph.cc pack_weights): ragged strips and k-blocks
// (k past 256), special values, every target; a 16-bit packing is refused.
TEST(KernelGemm, UnpackedAIsTheMatrixPacked) {
  std::mt19937 rng(77);
  std::uniform_real_distribution<float> u(-3.f, 3.f);
  for (Isa isa : available_isas())
    for (auto [m, k] : {std::pair<int64_t, int64_t>{1, 1}, {13, 300}, {32, 256}, {7, 513}, {0, 5}, {5, 0}}) {
      std::vector<float> a(static_cast<size_t>(m * k));
      for (float& v : a) v = u(rng);
      if (a.size() > 3) {
        a[1] = -0.f;
        a[2] = std::numeric_limits<float>::infinity();
        a[3] = std::numeric_limits<float>::quiet_NaN();
      }
      const auto packed = pack_a_f32(isa, m, k, MatrixView{a.data(), k, 1});
      std::vector<float> back(a.size(), 9.f);
      unpack_a_f32(*packed, back.data());
      for (size_t i = 0; i < a.size(); ++i)  // bits (NaN included); an empty matrix reads nothing
        EXPECT_EQ(std::bit_cast<uint32_t>(a[i]), std::bit_cast<uint32_t>(back[i]))
            << isa_name(isa) << " " << m << " x " << k << " at " << i;
    }
  const std::vector<float> ones(16, 1.f);
  std::vector<float> out(16);
  EXPECT_THROW(
      unpack_a_f32(*pack_a_f32(available_isas()[0], 4, 4, MatrixView{ones.data(), 4, 1}, PackStorage::F16), out.data()),
      Error);
}

TEST(KernelGemm, PackedForAnotherTargetIsRefused) {
  const auto isas = available_isas();
  if (isas.size() < 2) GTEST_SKIP() << "one target only";
  const std::vector<float> b(4, 1.f), a(4, 1.f);
  std::vector<float> c(4);
  const auto packed = pack_b_f32(isas[0], 2, 2, MatrixView{b.data(), 2, 1});
  EXPECT_THROW(gemm_f32_packed(isas[1], true, 2, MatrixView{a.data(), 2, 1}, *packed, c.data(), 2, nullptr), Error);
}

// Thread independence: the same bits with 1, 2 and 7 threads, with enough work that workers really wake.
TEST(KernelGemm, ThreadCountDoesNotChangeBits) {
  const int64_t m = 300, n = 300, k = 300;
  std::mt19937 rng(77);
  Values vals{std::mt19937(3), 0.0};
  const StoredMatrix a = make_matrix(m, k, vals, rng);
  const StoredMatrix b = make_matrix(k, n, vals, rng);
  const std::vector<uint32_t> ref = exact_reference(a, b);
  ThreadPool p1(1), p2(2), p7(7);
  for (Isa isa : available_isas())
    for (bool exact : {false, true}) {
      std::vector<std::vector<float>> outs;
      for (ThreadPool* pool : {&p1, &p2, &p7}) {
        std::vector<float> c(static_cast<size_t>(m * n));
        gemm_f32(isa, exact, m, n, k, a.view, b.view, c.data(), n, pool);
        outs.push_back(std::move(c));
      }
      const std::string what = describe(isa, exact, m, n, k);
      for (size_t t = 1; t < outs.size(); ++t) {
        ASSERT_EQ(std::memcmp(outs[0].data(), outs[t].data(), outs[0].size() * 4), 0) << what << " pool " << t;
      }
      if (exact) {
        for (size_t e = 0; e < ref.size(); ++e) ASSERT_EQ(std::bit_cast<uint32_t>(outs[0][e]), ref[e]) << what;
      }
    }
}

}  // namespace
}  // namespace onemodel::kern

namespace onemodel::kern {
namespace {

// gemm_f32_packed's epilogue: called once for every element of C, after its product is final, with the block's
// absolute row and column; both for an A packed whole (the panels' tiles) and for one too large for that (the
// epilogue after the tiles), at 1 and 2 threads.
struct CountingEpilogue {
  std::vector<int>* visits;
  int64_t n;
  static void apply(const void* vctx, int64_t i0, int64_t rows, int64_t j0, int64_t cols, float* c, int64_t ldc) {
    const auto& e = *static_cast<const CountingEpilogue*>(vctx);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < cols; ++j) {
        ++(*e.visits)[static_cast<size_t>((i0 + r) * e.n + j0 + j)];
        c[r * ldc + j] = c[r * ldc + j] * 2.0f + 1.0f;
      }
  }
};

TEST(KernelGemm, PackedEpilogueSeesEveryFinishedElementOnce) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  ThreadPool pool2(2);
  // 2100 x 2048 is more A than the whole-A path packs (16 MiB).
  for (auto [m, n, k] : {std::array<int64_t, 3>{37, 150, 70}, std::array<int64_t, 3>{2100, 9, 2048}}) {
    std::vector<float> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n));
    for (float& v : a) v = u(rng);
    for (float& v : b) v = u(rng);
    const Isa isa = available_isas().back();
    const auto packed = pack_b_f32(isa, k, n, MatrixView{b.data(), n, 1});
    std::vector<float> plain(static_cast<size_t>(m * n));
    gemm_f32_packed(isa, true, m, MatrixView{a.data(), k, 1}, *packed, plain.data(), n, nullptr);
    for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
      std::vector<int> visits(static_cast<size_t>(m * n), 0);
      const CountingEpilogue ctx{&visits, n};
      const TileEpilogue te{&CountingEpilogue::apply, &ctx};
      std::vector<float> c(static_cast<size_t>(m * n));
      gemm_f32_packed(isa, true, m, MatrixView{a.data(), k, 1}, *packed, c.data(), n, pool, &te);
      for (size_t e = 0; e < c.size(); ++e) {
        ASSERT_EQ(visits[e], 1) << m << "x" << n << " element " << e;
        ASSERT_EQ(std::bit_cast<uint32_t>(c[e]), std::bit_cast<uint32_t>(plain[e] * 2.0f + 1.0f)) << e;
      }
    }
  }
}

}  // namespace
}  // namespace onemodel::kern
