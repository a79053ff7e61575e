// Softmax rows and fused attention (kernels/softmax.h, kernels/attention.h) on every target this machine runs.
// The exact flavours are compared bit for bit with naive references written here from the pseudo-code of
// kernels-attention.md (scalar float arithmetic, one rounding per operator: the engine is built with
// -ffp-contract=off); the fast flavours are compared with double-precision references within stated bounds.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "base/thread_pool.h"
#include "kernels/attention.h"
#include "kernels/exact_math.h"
#include "kernels/isa.h"
#include "kernels/softmax.h"

namespace onemodel::kern {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
uint32_t u32(float f) { return std::bit_cast<uint32_t>(f); }

// ---- references ----

// The 16-partial order, written out: partial t takes terms j = t, t+16, ...; then the pairwise tree.
float ref_sum16(const std::vector<float>& t) {
  float part[16] = {};
  for (size_t j = 0; j < t.size(); ++j) part[j % 16] = part[j % 16] + t[j];
  float a[8], b[4];
  for (int i = 0; i < 8; ++i) a[i] = part[i] + part[i + 8];
  for (int i = 0; i < 4; ++i) b[i] = a[i] + a[i + 4];
  return (b[0] + b[2]) + (b[1] + b[3]);
}

float canon(float v) { return v != v ? std::bit_cast<float>(0x7FC00000u) : v; }

std::vector<float> ref_softmax(const std::vector<float>& x, bool log) {
  float m = -kInf;
  for (float v : x)
    if (v > m) m = v;
  std::vector<float> dd(x.size()), e(x.size()), y(x.size());
  for (size_t j = 0; j < x.size(); ++j) {
    dd[j] = x[j] - m;
    e[j] = kernels::exact_exp_nonpositive(dd[j]);
  }
  const float l = ref_sum16(e);
  const float ll = kernels::exact_log(l);
  for (size_t j = 0; j < x.size(); ++j) y[j] = canon(log ? dd[j] - ll : e[j] / l);
  return y;
}

struct Problem {
  int64_t batch, heads, q_len, k_len, d;
  bool masked;
  std::vector<float> q, k, v, mask;  // [b][h][rows][d] contiguous; mask [b][h][q][k]
  float scale;
};

// kernels-attention.md "The exact definition", one query row at a time.
std::vector<float> ref_attention_exact(const Problem& p) {
  std::vector<float> out(static_cast<size_t>(p.batch * p.heads * p.q_len * p.d));
  for (int64_t bh = 0; bh < p.batch * p.heads; ++bh)
    for (int64_t i = 0; i < p.q_len; ++i) {
      const float* q = &p.q[static_cast<size_t>((bh * p.q_len + i) * p.d)];
      float m = -kInf, l = 0.0f;
      std::vector<float> acc(static_cast<size_t>(p.d), 0.0f);
      for (int64_t kb = 0; kb < p.k_len; kb += 64) {
        const int64_t n = std::min<int64_t>(64, p.k_len - kb);
        std::vector<float> s(static_cast<size_t>(n)), w(static_cast<size_t>(n));
        for (int64_t j = 0; j < n; ++j) {
          const float* k = &p.k[static_cast<size_t>((bh * p.k_len + kb + j) * p.d)];
          float dot = 0.0f;
          for (int64_t x = 0; x < p.d; ++x) dot = dot + q[x] * k[x];
          const float mk = p.masked ? p.mask[static_cast<size_t>((bh * p.q_len + i) * p.k_len + kb + j)] : 0.0f;
          s[static_cast<size_t>(j)] = mk + dot * p.scale;
        }
        float bm = -kInf;
        for (float sv : s)
          if (sv > bm) bm = sv;
        const float m_new = bm > m ? bm : m;
        const float shift = m_new == -kInf ? 0.0f : m_new;
        for (int64_t j = 0; j < n; ++j) w[static_cast<size_t>(j)] = kernels::exact_exp_nonpositive(s[static_cast<size_t>(j)] - shift);
        const float bs = ref_sum16(w);
        const float alpha = m == -kInf ? 0.0f : (m == shift ? 1.0f : kernels::exact_exp_nonpositive(m - shift));
        l = l * alpha + bs;
        if (alpha != 1.0f)
          for (float& a : acc) a = a * alpha;
        m = m_new;
        for (int64_t j = 0; j < n; ++j) {
          const float* v = &p.v[static_cast<size_t>((bh * p.k_len + kb + j) * p.d)];
          for (int64_t x = 0; x < p.d; ++x) acc[static_cast<size_t>(x)] = acc[static_cast<size_t>(x)] + w[static_cast<size_t>(j)] * v[x];
        }
      }
      for (int64_t x = 0; x < p.d; ++x)
        out[static_cast<size_t>((bh * p.q_len + i) * p.d + x)] = canon(acc[static_cast<size_t>(x)] / l);
    }
  return out;
}

// Plain softmax attention in double (accuracy reference for both flavours).
std::vector<double> ref_attention_double(const Problem& p) {
  std::vector<double> out(static_cast<size_t>(p.batch * p.heads * p.q_len * p.d));
  for (int64_t bh = 0; bh < p.batch * p.heads; ++bh)
    for (int64_t i = 0; i < p.q_len; ++i) {
      std::vector<double> s(static_cast<size_t>(p.k_len));
      double m = -INFINITY;
      for (int64_t j = 0; j < p.k_len; ++j) {
        double dot = 0;
        for (int64_t x = 0; x < p.d; ++x)
          dot += static_cast<double>(p.q[static_cast<size_t>((bh * p.q_len + i) * p.d + x)]) *
                 p.k[static_cast<size_t>((bh * p.k_len + j) * p.d + x)];
        s[static_cast<size_t>(j)] = dot * p.scale + (p.masked ? p.mask[static_cast<size_t>((bh * p.q_len + i) * p.k_len + j)] : 0.0);
        m = std::max(m, s[static_cast<size_t>(j)]);
      }
      double l = 0;
      for (double& sv : s) l += (sv = std::exp(sv - m));
      for (int64_t x = 0; x < p.d; ++x) {
        double a = 0;
        for (int64_t j = 0; j < p.k_len; ++j) a += s[static_cast<size_t>(j)] * p.v[static_cast<size_t>((bh * p.k_len + j) * p.d + x)];
        out[static_cast<size_t>((bh * p.q_len + i) * p.d + x)] = a / l;
      }
    }
  return out;
}

Problem make_problem(int64_t batch, int64_t heads, int64_t q_len, int64_t k_len, int64_t d, bool masked,
                     uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.0f, 1.5f);
  Problem p{batch, heads, q_len, k_len, d, masked, {}, {}, {}, {}, 1.0f / std::sqrt(static_cast<float>(d))};
  auto fill = [&](std::vector<float>& t, int64_t rows) {
    t.resize(static_cast<size_t>(batch * heads * rows * d));
    for (float& v : t) v = g(rng);
  };
  fill(p.q, q_len);
  fill(p.k, k_len);
  fill(p.v, k_len);
  if (masked) {
    p.mask.resize(static_cast<size_t>(batch * heads * q_len * k_len));
    std::uniform_real_distribution<float> u(-2.0f, 1.0f);
    for (float& v : p.mask) v = u(rng);
  }
  return p;
}

AttentionArgs args_for(const Problem& p, float* out) {
  AttentionArgs a;
  a.batch = p.batch;
  a.heads = p.heads;
  a.q_len = p.q_len;
  a.k_len = p.k_len;
  a.d = p.d;
  a.scale = p.scale;
  a.q = p.q.data();
  a.q_sr = p.d, a.q_sh = p.q_len * p.d, a.q_sb = p.heads * p.q_len * p.d;
  a.k = p.k.data();
  a.k_sr = p.d, a.k_sh = p.k_len * p.d, a.k_sb = p.heads * p.k_len * p.d;
  a.v = p.v.data();
  a.v_sr = p.d, a.v_sh = p.k_len * p.d, a.v_sb = p.heads * p.k_len * p.d;
  if (p.masked) {
    a.mask = p.mask.data();
    a.m_sj = 1, a.m_si = p.k_len, a.m_sh = p.q_len * p.k_len, a.m_sb = p.heads * p.q_len * p.k_len;
  }
  a.out = out;
  a.o_sr = p.d, a.o_sh = p.q_len * p.d, a.o_sb = p.heads * p.q_len * p.d;
  return a;
}

// ---- softmax rows ----

TEST(KernelSoftmax, ExactRowsEqualReferenceOnEveryTarget) {
  std::mt19937 rng(11);
  std::normal_distribution<float> g(0.0f, 4.0f);
  const float specials[] = {kInf, -kInf, std::bit_cast<float>(0xFFC12345u), 0.0f, -0.0f, 1e-40f, -100.0f, 88.0f};
  for (int64_t n : {1, 2, 3, 15, 16, 17, 31, 33, 64, 70, 257, 1000}) {
    for (int variant = 0; variant < 6; ++variant) {
      std::vector<float> x(static_cast<size_t>(n));
      for (float& v : x) v = g(rng);
      if (variant == 1) x[static_cast<size_t>(n / 2)] = specials[rng() % 8];                 // one special
      if (variant == 2) for (float& v : x) v = -kInf;                                        // all -inf
      if (variant == 3) x[0] = -kInf;                                                        // one -inf
      if (variant == 4) for (size_t j = 0; j < x.size(); j += 3) x[j] = specials[rng() % 8];  // many
      if (variant == 5) for (float& v : x) v = v * 30.0f;                                    // wide
      for (bool log : {false, true}) {
        const std::vector<float> want = ref_softmax(x, log);
        for (Isa isa : available_isas()) {
          std::vector<float> y(x.size() + 1, 555.0f);
          if (log) log_softmax_rows(isa, true, x.data(), y.data(), 1, n);
          else softmax_rows(isa, true, x.data(), y.data(), 1, n);
          ASSERT_EQ(y.back(), 555.0f);
          for (size_t j = 0; j < x.size(); ++j)
            ASSERT_EQ(u32(y[j]), u32(want[j])) << isa_name(isa) << " log=" << log << " n=" << n << " variant="
                                               << variant << " j=" << j;
          // In place gives the same bits.
          std::vector<float> z = x;
          if (log) log_softmax_rows(isa, true, z.data(), z.data(), 1, n);
          else softmax_rows(isa, true, z.data(), z.data(), 1, n);
          for (size_t j = 0; j < x.size(); ++j) ASSERT_EQ(u32(z[j]), u32(want[j]));
        }
      }
    }
  }
}

TEST(KernelSoftmax, FastRowsAreCloseToDouble) {
  std::mt19937 rng(5);
  std::normal_distribution<float> g(0.0f, 3.0f);
  for (int64_t n : {1, 7, 64, 333}) {
    std::vector<float> x(static_cast<size_t>(n * 3));
    for (float& v : x) v = g(rng);
    for (Isa isa : available_isas()) {
      std::vector<float> y(x.size()), yl(x.size());
      softmax_rows(isa, false, x.data(), y.data(), 3, n);
      log_softmax_rows(isa, false, x.data(), yl.data(), 3, n);
      for (int64_t r = 0; r < 3; ++r) {
        double m = -INFINITY, l = 0;
        for (int64_t j = 0; j < n; ++j) m = std::max(m, static_cast<double>(x[static_cast<size_t>(r * n + j)]));
        for (int64_t j = 0; j < n; ++j) l += std::exp(x[static_cast<size_t>(r * n + j)] - m);
        for (int64_t j = 0; j < n; ++j) {
          const double xv = x[static_cast<size_t>(r * n + j)];
          const double want = std::exp(xv - m) / l;
          // Fast exp is about 2.3 ulp, the 1/l product and the sum add a few more: 1e-6 relative.
          EXPECT_NEAR(y[static_cast<size_t>(r * n + j)], want, 1e-6 * want + 1e-30) << isa_name(isa);
          EXPECT_NEAR(yl[static_cast<size_t>(r * n + j)], xv - m - std::log(l), 2e-6 * (1 + std::fabs(xv - m)))
              << isa_name(isa);
        }
      }
    }
  }
}

TEST(KernelSoftmax, Sum16EqualsReference) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1e4f, 1e4f);
  for (int64_t n = 0; n <= 100; ++n) {
    std::vector<float> x(static_cast<size_t>(n));
    for (float& v : x) v = u(rng);
    if (n == 50) x[7] = -0.0f;
    for (Isa isa : available_isas()) ASSERT_EQ(u32(sum16_f32(isa, x.data(), n)), u32(ref_sum16(x))) << n;
  }
}

// ---- fused attention ----

void expect_exact(const Problem& p) {
  const std::vector<float> want = ref_attention_exact(p);
  ThreadPool pool2(2), pool7(7);
  for (Isa isa : available_isas()) {
    for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2, &pool7}) {
      std::vector<float> out(want.size() + 1, 999.0f);
      attention(isa, true, args_for(p, out.data()), pool);
      ASSERT_EQ(out.back(), 999.0f);
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_EQ(u32(out[i]), u32(want[i])) << isa_name(isa) << " q=" << p.q_len << " k=" << p.k_len << " d=" << p.d
                                             << " mask=" << p.masked << " i=" << i
                                             << " threads=" << (pool ? pool->threads() : 1);
    }
  }
}

TEST(KernelAttention, ExactEqualsSpecReferenceOnEveryTargetAndThreadCount) {
  uint32_t seed = 1;
  for (int64_t d : {1, 2, 8, 17, 32, 64})
    for (int64_t k_len : {1, 63, 64, 65, 200})
      for (int64_t q_len : {1, 33})
        for (bool masked : {false, true}) expect_exact(make_problem(1, 2, q_len, k_len, d, masked, seed++));
  expect_exact(make_problem(2, 3, 70, 150, 16, true, 99));
}

TEST(KernelAttention, ExactSpecialRows) {
  Problem p = make_problem(1, 1, 6, 130, 8, true, 7);
  const size_t kl = 130;
  for (size_t j = 0; j < kl; ++j) p.mask[0 * kl + j] = -kInf;           // row 0 fully masked: NaN
  for (size_t j = 0; j < 64; ++j) p.mask[1 * kl + j] = -kInf;           // row 1: first block masked
  p.mask[2 * kl + 70] = kInf;                                           // row 2: a +inf score: NaN
  p.mask[3 * kl + 5] = std::bit_cast<float>(0xFFC00001u);               // row 3: a NaN score: NaN
  for (size_t j = 0; j < kl; j += 2) p.mask[4 * kl + j] = -kInf;        // row 4: half masked
  p.q[5 * 8 + 3] = 0.0f;
  expect_exact(p);
  std::vector<float> out(6 * 8);
  attention(available_isas().back(), true, args_for(p, out.data()), nullptr);
  for (int r : {0, 2, 3})
    for (int x = 0; x < 8; ++x) EXPECT_EQ(u32(out[static_cast<size_t>(r * 8 + x)]), 0x7FC00000u) << r;
  for (int r : {1, 4, 5})
    for (int x = 0; x < 8; ++x) EXPECT_TRUE(std::isfinite(out[static_cast<size_t>(r * 8 + x)])) << r;
}

// Broadcast mask (strides 0) and strided operands (heads interleaved as [b, s, h, d]).
TEST(KernelAttention, StridedOperandsAndBroadcastMask) {
  const int64_t B = 2, H = 3, Q = 40, K = 90, D = 16;
  Problem p = make_problem(B, H, Q, K, D, true, 21);
  // The same problem with Q stored [b, s, h, d] and the mask one row broadcast over b, h and i.
  for (int64_t bh = 0; bh < B * H; ++bh)
    for (int64_t i = 0; i < Q; ++i)
      for (int64_t j = 0; j < K; ++j)
        p.mask[static_cast<size_t>((bh * Q + i) * K + j)] = p.mask[static_cast<size_t>(j)];
  std::vector<float> qi(p.q.size());
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < Q; ++i)
        for (int64_t x = 0; x < D; ++x)
          qi[static_cast<size_t>(((b * Q + i) * H + h) * D + x)] = p.q[static_cast<size_t>(((b * H + h) * Q + i) * D + x)];
  const std::vector<float> want = ref_attention_exact(p);
  for (Isa isa : available_isas()) {
    std::vector<float> out(want.size());
    AttentionArgs a = args_for(p, out.data());
    a.q = qi.data();
    a.q_sr = H * D, a.q_sh = D, a.q_sb = Q * H * D;
    a.m_sb = 0, a.m_sh = 0, a.m_si = 0, a.m_sj = 1;
    attention(isa, true, a, nullptr);
    for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(u32(out[i]), u32(want[i])) << isa_name(isa) << " " << i;
  }
}

// kernels-attention.md "Accuracy": fast and exact both within 4e-6 absolute of a double reference for
// q, k ~ N(0, 1.5^2); fast is also deterministic across thread counts.
TEST(KernelAttention, AccuracyAndFastDeterminism) {
  ThreadPool pool7(7);
  for (bool masked : {false, true}) {
    const Problem p = make_problem(1, 2, 50, 300, 32, masked, 31);
    const std::vector<double> ref = ref_attention_double(p);
    for (Isa isa : available_isas()) {
      for (bool exact : {true, false}) {
        std::vector<float> o1(ref.size()), o7(ref.size());
        attention(isa, exact, args_for(p, o1.data()), nullptr);
        attention(isa, exact, args_for(p, o7.data()), &pool7);
        double worst = 0;
        for (size_t i = 0; i < ref.size(); ++i) {
          ASSERT_EQ(u32(o1[i]), u32(o7[i])) << isa_name(isa) << " exact=" << exact;
          worst = std::max(worst, std::fabs(o1[i] - ref[i]));
        }
        EXPECT_LE(worst, 4e-6) << isa_name(isa) << " exact=" << exact << " masked=" << masked;
      }
    }
  }
}

}  // namespace
}  // namespace onemodel::kern
