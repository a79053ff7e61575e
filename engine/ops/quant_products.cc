// MatMulInteger, QLinearMatMul, ConvInteger and QLinearConv (int8.md). The integer sums
// sum (a - za) * (b - zb) are exact in any order, so a plain loop gives the bits every path must give; the
// requantization y = clamp(round_half_even(float(acc) * mult) + zy) with mult = (sa * sb) / sy is a fixed
// sequence of float32 operations. Both modes share the code.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/qgemm.h"
#include "ops/common.h"
#include "ops/int_im2col.h"
#include "ops/matmul_shape.h"
#include "ops/quant_common.h"
#include "ops/ops.h"
#include "ops/window.h"

namespace onemodel::rt {
namespace {

bool is_q8(DType t) { return t == DType::U8 || t == DType::I8; }

// The values of a zero-point or scale input as a vector of `want` entries: one element broadcasts,
// otherwise it must be 1-D with exactly `want` elements. Empty tensor: zeros. Returns false on mismatch.
bool int_params(const Tensor* t, int64_t want, std::vector<int32_t>& out) {
  out.assign(static_cast<size_t>(want), 0);
  if (!t) return true;
  if (t->numel() == 1 && t->rank() <= 1) {
    std::fill(out.begin(), out.end(), static_cast<int32_t>(quant::int_at(*t, 0)));
    return true;
  }
  if (t->rank() != 1 || t->shape()[0] != want) return false;
  for (int64_t i = 0; i < want; ++i) out[static_cast<size_t>(i)] = static_cast<int32_t>(quant::int_at(*t, i));
  return true;
}
bool float_params(const Tensor& t, int64_t want, std::vector<float>& out) {
  out.assign(static_cast<size_t>(want), 0.0f);
  const auto v = t.data<float>();
  if (t.numel() == 1 && t.rank() <= 1) {
    std::fill(out.begin(), out.end(), v[0]);
    return true;
  }
  if (t.rank() != 1 || t.shape()[0] != want) return false;
  for (int64_t i = 0; i < want; ++i) out[static_cast<size_t>(i)] = v[static_cast<size_t>(i)];
  return true;
}
int64_t q_at(const Tensor& t, int64_t i) { return quant::int_at(t, i); }

// dst[e] = t[offset + e] - zero(e) for e < count, as int16 (an 8-bit value less an 8-bit zero point lies in
// [-255, 255]). `zero` maps the element index to its zero point.
template <class Z>
void widen_q8(const Tensor& t, int64_t offset, int64_t count, Z&& zero, int16_t* dst) {
  quant::visit_q8(t.dtype(), [&](auto tag) {
    using Q = decltype(tag);
    const Q* src = t.data<Q>().data() + offset;
    for (int64_t e = 0; e < count; ++e) dst[e] = static_cast<int16_t>(static_cast<int32_t>(src[e]) - zero(e));
  });
}

// ---- matrix products ----

// rows x k 8-bit values of t from element `offset` (row-major) as signed bytes v - shift into dst (rows of kp,
// padding left as it is), with each row's sum of v - shift modulo 2^32 in sums: the A operand of the byte
// product, for the weights of a convolution and the left matrix of a product alike.
void signed_byte_rows(const Tensor& t, int64_t offset, int64_t rows, int64_t k, int64_t kp, int32_t shift, int8_t* dst,
                      uint32_t* sums) {
  quant::visit_q8(t.dtype(), [&](auto tag) {
    using Q = decltype(tag);
    const Q* src = t.data<Q>().data() + offset;
    for (int64_t i = 0; i < rows; ++i) {
      uint32_t sum = 0;
      for (int64_t p = 0; p < k; ++p) {
        const int32_t v = static_cast<int32_t>(src[i * k + p]) - shift;
        dst[i * kp + p] = static_cast<int8_t>(v);
        sum += static_cast<uint32_t>(v);
      }
      sums[i] = sum;
    }
  });
}

// One batch matrix on the byte product (docs/int8.md "Integer product kernel"): A as signed bytes
// a_s = a - shift_a (shift_a = 128 for uint8, 0 for int8), B packed as unsigned bytes b_u = b + off_b (off_b =
// 128 for int8, 0 for uint8). With alpha_i = shift_a - za[i] and beta_j = off_b + zb[j], modulo 2^32:
// sum_p (a - za)(b - zb) = sum_p a_s b_u + alpha_i * sum_p b_u - beta_j * (sum_p a_s + k * alpha_i),
// the kernel's correction with s = alpha, r = 0, v = sum_p a_s + k * alpha, w = beta.
struct ByteMatMul {
  std::vector<int8_t> a8;
  std::vector<uint8_t> packed;
  std::vector<int32_t> s, r, v, w;
  std::vector<uint32_t> sums;
};

void byte_matmul(const RunContext& ctx, const kern::QGemmLayout& lay, const MatMulDims& d, const Tensor& a,
                 int64_t a_off, const Tensor& b, int64_t b_off, const std::vector<int32_t>& za,
                 const std::vector<int32_t>& zb, int32_t* acc) {
  thread_local ByteMatMul bm;
  const int64_t kp = lay.kq(d.k) * lay.pair;
  const int32_t shift_a = a.dtype() == DType::U8 ? 128 : 0, off_b = b.dtype() == DType::I8 ? 128 : 0;
  bm.a8.assign(static_cast<size_t>(d.m * kp), 0);
  bm.s.resize(static_cast<size_t>(d.m));
  bm.r.assign(static_cast<size_t>(d.m), 0);
  bm.v.resize(static_cast<size_t>(d.m));
  bm.w.resize(static_cast<size_t>(d.n));
  bm.sums.resize(static_cast<size_t>(d.m));
  signed_byte_rows(a, a_off, d.m, d.k, kp, shift_a, bm.a8.data(), bm.sums.data());
  for (int64_t i = 0; i < d.m; ++i) {
    const int32_t alpha = shift_a - za[static_cast<size_t>(i)];
    bm.s[static_cast<size_t>(i)] = alpha;
    bm.v[static_cast<size_t>(i)] = static_cast<int32_t>(bm.sums[static_cast<size_t>(i)] +
                                                        static_cast<uint32_t>(d.k) * static_cast<uint32_t>(alpha));
  }
  for (int64_t j = 0; j < d.n; ++j) bm.w[static_cast<size_t>(j)] = off_b + zb[static_cast<size_t>(j)];
  bm.packed.assign(static_cast<size_t>(lay.packed_size(d.k, d.n)), 0);
  quant::visit_q8(b.dtype(), [&](auto tag) {
    using Q = decltype(tag);
    const Q* src = b.data<Q>().data() + b_off;
    // In the packed order (strip, quad row, column, member): element (p, j) at QGemmLayout::at, padding 0.
    const int64_t nr = lay.nr, kq = lay.kq(d.k);
    uint8_t* dst = bm.packed.data();
    for (int64_t j0 = 0; j0 < d.n; j0 += nr) {
      const int64_t cols = std::min(nr, d.n - j0);
      for (int64_t q = 0; q < kq; ++q, dst += nr * 4)
        for (int64_t t = 0; t < 4 && q * 4 + t < d.k; ++t) {
          const Q* row = src + (q * 4 + t) * d.n + j0;
          for (int64_t j = 0; j < cols; ++j)
            dst[j * 4 + t] = static_cast<uint8_t>(static_cast<int32_t>(row[j]) + off_b);
        }
    }
  });
  const kern::Q8Fix fix{bm.s.data(), bm.r.data(), bm.v.data(), bm.w.data()};
  kern::qgemm_q8_packed(ctx.isa, d.m, d.n, d.k, bm.a8.data(), kp, bm.packed.data(), fix, acc, d.n, ctx.pool);
}

// acc[o][i][j] = sum_p (A[i][p] - za[i]) * (B[p][j] - zb[j]) for every broadcast batch o, int32 wrap-around,
// on the integer products of kernels/qgemm.h (exact in any order, so the same bits as the plain triple loop):
// the byte product where the CPU has one, else the int16 product.
void int_matmul(const RunContext& ctx, const MatMulDims& d, const Tensor& a, const Tensor& b,
                const std::vector<int32_t>& za, const std::vector<int32_t>& zb, int32_t* acc) {
  const int64_t as = d.m * d.k, bs = d.k * d.n, os = d.m * d.n;
  const kern::QGemmLayout q8 = kern::qgemm_q8_layout(ctx.isa);
  std::vector<int16_t> a16, b16;
  if (q8.nr == 0) {
    a16.resize(static_cast<size_t>(as));
    b16.resize(static_cast<size_t>(bs));
  }
  broadcast_n<2>(d.out_batch, {&d.a_batch, &d.b_batch}, [&](int64_t o, const auto& off, int64_t cnt, const auto& st) {
    for (int64_t t = 0; t < cnt; ++t) {
      const int64_t ia = off[0] + t * st[0], ib = off[1] + t * st[1];
      if (q8.nr > 0) {
        byte_matmul(ctx, q8, d, a, ia * as, b, ib * bs, za, zb, acc + (o + t) * os);
        continue;
      }
      widen_q8(
          a, ia * as, as, [&](int64_t e) { return za[static_cast<size_t>(e / d.k)]; }, a16.data());
      widen_q8(
          b, ib * bs, bs, [&](int64_t e) { return zb[static_cast<size_t>(e % d.n)]; }, b16.data());
      kern::qgemm_s16(ctx.isa, d.m, d.n, d.k, a16.data(), d.k, b16.data(), d.n, acc + (o + t) * os, d.n, ctx.pool);
    }
  });
}

// y = clamp(round_half_even(float(acc) * mult) + zy) into the output's 8-bit type.
void requantize(int64_t count, const int32_t* acc, const float* mult, int64_t mult_step_mod, int64_t mult_div,
                int64_t zy, Tensor& y) {
  quant::visit_q8(y.dtype(), [&](auto tag) {
    using Q = decltype(tag);
    Q* out = y.mutable_data<Q>().data();
    for (int64_t e = 0; e < count; ++e) {
      const float m = mult[(e / mult_div) % mult_step_mod];
      const float v = static_cast<float>(acc[e]) * m;
      out[e] =
          static_cast<Q>(quant::saturate_round(v, zy, std::numeric_limits<Q>::min(), std::numeric_limits<Q>::max()));
    }
  });
}

class MatMulIntegerKernel final : public Kernel {
 public:
  // qlinear: QLinearMatMul (inputs a, sa, za, b, sb, zb, sy, zy [, bias]); else MatMulInteger (A, B, za, zb).
  explicit MatMulIntegerKernel(bool qlinear) : Kernel(KernelFlags{.exact = true}), q_(qlinear) {}

  void infer(InferContext& ctx) const override {
    const size_t ia = 0, ib = q_ ? 3 : 1;
    if (!ctx.has_input(ia) || !ctx.has_input(ib)) ctx.fail(ErrorKind::InvalidModel, "expects inputs a and b");
    if (q_)
      for (size_t i : {1, 2, 4, 5, 6, 7})
        if (!ctx.has_input(i)) ctx.fail(ErrorKind::InvalidModel, "input " + std::to_string(i) + " is required");
    if (!is_q8(ctx.input(ia).dtype) || !is_q8(ctx.input(ib).dtype))
      ctx.fail(ErrorKind::Unsupported, "operands must be uint8 or int8, got " + type_str(ctx.input(ia).dtype) +
                                           " and " + type_str(ctx.input(ib).dtype));
    MatMulDims d;
    std::string why;
    if (!matmul_dims(ctx.input(ia).shape, ctx.input(ib).shape, d, why)) ctx.fail(ErrorKind::InvalidModel, why);
    ctx.set_output(0, q_ ? ctx.input(7).dtype : DType::I32, d.out);
    if (q_ && !is_q8(ctx.input(7).dtype)) ctx.fail(ErrorKind::Unsupported, "y_zero_point must be uint8 or int8");
  }

  void run(RunContext& ctx) const override {
    const size_t ia = 0, ib = q_ ? 3 : 1;
    const Tensor& a = ctx.input(ia);
    const Tensor& b = ctx.input(ib);
    MatMulDims d;
    std::string why;
    if (!matmul_dims(a.shape(), b.shape(), d, why)) ctx.fail(ErrorKind::InvalidInput, why);
    if (d.out != ctx.output(0).shape()) ctx.fail(ErrorKind::InvalidInput, "inputs do not match the planned output");
    const size_t iza = q_ ? 2 : 2, izb = q_ ? 5 : 3;
    const Tensor* za = ctx.has_input(iza) ? &ctx.input(iza) : nullptr;
    const Tensor* zb = ctx.has_input(izb) ? &ctx.input(izb) : nullptr;
    if ((za && za->dtype() != a.dtype()) || (zb && zb->dtype() != b.dtype()))
      ctx.fail(ErrorKind::InvalidInput, "zero points must have their operand's type");
    std::vector<int32_t> zav, zbv;
    if (!int_params(za, d.m, zav))
      ctx.fail(ErrorKind::InvalidInput, "a's zero point must be a scalar or have one value per row");
    if (!int_params(zb, d.n, zbv))
      ctx.fail(ErrorKind::InvalidInput, "b's zero point must be a scalar or have one value per column");
    const int64_t count = d.out.numel();
    if (!q_) {
      int_matmul(ctx, d, a, b, zav, zbv, ctx.output(0).mutable_data<int32_t>().data());
      return;
    }
    Tensor acc_t = ctx.scratch(DType::I32, Shape{count});
    int32_t* acc = acc_t.mutable_data<int32_t>().data();
    int_matmul(ctx, d, a, b, zav, zbv, acc);
    if (ctx.has_input(8)) {  // int32 per-column bias (int8.md extension)
      const Tensor& bias = ctx.input(8);
      if (bias.dtype() != DType::I32 || bias.numel() != d.n)
        ctx.fail(ErrorKind::InvalidInput, "bias must be int32 with one value per column");
      const auto bv = bias.data<int32_t>();
      for (int64_t e = 0; e < count; ++e)
        acc[e] = static_cast<int32_t>(static_cast<uint32_t>(acc[e]) +
                                      static_cast<uint32_t>(bv[static_cast<size_t>(e % d.n)]));
    }
    std::vector<float> sa, sb, sy;
    for (size_t i : {1, 4, 6})
      if (ctx.input(i).dtype() != DType::F32) ctx.fail(ErrorKind::InvalidInput, "scales must be float32");
    if (!float_params(ctx.input(1), d.m, sa) || !float_params(ctx.input(4), d.n, sb) ||
        !float_params(ctx.input(6), 1, sy))
      ctx.fail(ErrorKind::InvalidInput, "scales must be scalars (a: or per row, b: or per column)");
    const Tensor& zy = ctx.input(7);
    if (zy.numel() != 1 || zy.dtype() != ctx.output(0).dtype())
      ctx.fail(ErrorKind::InvalidInput, "y_zero_point must be one value");
    // mult per (row, column): (sa * sb) / sy in float32.
    std::vector<float> mult(static_cast<size_t>(d.m * d.n));
    for (int64_t i = 0; i < d.m; ++i)
      for (int64_t j = 0; j < d.n; ++j) {
        const float p = sa[static_cast<size_t>(i)] * sb[static_cast<size_t>(j)];
        mult[static_cast<size_t>(i * d.n + j)] = p / sy[0];
      }
    requantize(count, acc, mult.data(), d.m * d.n, 1, q_at(zy, 0), ctx.output(0));
  }

 private:
  bool q_;
};

// ---- convolutions (1 to 3 spatial axes, NCHW) ----

// A ConvInteger / QLinearConv node's shapes: the window of window.h (lifted to three axes: depth, height,
// width), weights [M, C/group, kernel...].
struct ConvGeom {
  WindowGeom win;
  int64_t m = 0, cg = 0, group = 1;
};

ConvGeom conv_geom(const NodeInfo& info, const WindowAttrs& at, const Shape& x, const Shape& w, ErrorKind kind) {
  ConvWindow cw = conv_window(info, at, false, x, w, kind);
  return ConvGeom{std::move(cw.g), cw.out_channels, w[1], cw.groups};
}

// acc[n][m][oz][oy][ox] = sum over (c, kz, ky, kx) of (x - zx) * (w - zw[m]); padding taps contribute 0 (the
// input's zero point). Per image and group: the weights (less their zero points) times the im2col matrix of
// the input (less its zero point) on the integer product of kernels/qgemm.h; integer sums are exact in any
// order, so this is the plain loop's result. One and two spatial axes are the three-axis case with leading
// axes of size 1.
// What one im2col strip is built from: the group's input, what a value becomes (E(x + off)) and what a tap
// outside the input writes (E(zx + off)), and per kernel column kx the output columns whose tap lies inside the
// input row (col_lo/col_hi). The int16 product takes x - zx (off = -zx, so outside taps write 0); the byte
// product takes x as an unsigned byte (off = 128 for int8 inputs, else 0; outside taps write the zero point,
// which its correction cancels, docs/int8.md "Integer product kernel").
template <class Q>
struct StripSource {
  const ConvGeom& g;
  const Q* xg;
  int64_t plane;
  int32_t zx, off;
  int64_t wsz, kq, pair;
  const int64_t* col_lo;
  const int64_t* col_hi;
};

// A group of S consecutive strips of NR im2col columns (W = NR * S of them, starting at output position js, cnt
// of them real), every row (c, kz, ky, kx), in the packed layout of kernels/qgemm.h: strip t at
// strip0 + t * strip_step, lane group q at + q * NR * pair, column j's members side by side. Each k row is built
// W columns wide into a small buffer (the outside value where a tap is outside), then the `pair` rows sharing
// int32 lanes are interleaved and stored into each strip. W is 64 or more whatever NR is: built one NR-column
// strip at a time, the per-row bookkeeping cost the wasm build (NR = 8) as much as the products. The columns
// of a group fall into segments of one output row each; a segment's row of taps is located once per (kz, ky).
// A group's strips (a few KB each) are written in order while the input rows they read stay in cache (row by
// row across every strip of a 4 MiB block wrote one cache line per strip and row: 40% of ISNet's run). Rows
// past the last (k padding) are 0; every element of the real strips is written.
template <int64_t NR, int64_t S, class E, class Q>
void build_group(const StripSource<Q>& s, int64_t js, int64_t cnt, E* strip0, int64_t strip_step) {
  constexpr int64_t W = NR * S;
  const WindowGeom& g = s.g.win;
  const int64_t in_d = g.in[0], in_h = g.in[1], in_w = g.in[2], oh = g.out[1], ow = g.out[2];
  const int64_t kd = g.k[0], kh = g.k[1], kw = g.k[2], sw = g.s[2], dw = g.d[2], pw = g.pb[2];
  const int32_t off = s.off;
  const E outside = static_cast<E>(s.zx + off);
  // Segments: columns [t0, t0 + len) of the group are output columns [ox0, ox0 + len) of row (oz, oy); row_off is
  // the input row of the current (kz, ky) taps as an offset in the channel plane, -1 in the padding.
  struct Segment {
    int64_t t0, len, ox0, oz, oy, row_off;
  };
  Segment seg[W];
  int64_t nseg = 0;
  for (int64_t t = 0; t < cnt;) {
    const int64_t j = js + t, row = j / ow, ox = j % ow, len = std::min(cnt - t, ow - ox);
    seg[nseg++] = Segment{t, len, ox, row / oh, row % oh, -1};
    t += len;
  }
  int64_t kx = 0, ky = 0, kz = 0, c = 0;
  auto locate = [&] {
    for (int64_t i = 0; i < nseg; ++i) {
      Segment& sg = seg[i];
      const int64_t iz = sg.oz * g.s[0] - g.pb[0] + kz * g.d[0], iy = sg.oy * g.s[1] - g.pb[1] + ky * g.d[1];
      sg.row_off = iz >= 0 && iz < in_d && iy >= 0 && iy < in_h ? (iz * in_h + iy) * in_w : -1;
    }
  };
  locate();
  auto step = [&] {  // to the next row (c, kz, ky, kx)
    if (++kx < kw) return;
    kx = 0;
    if (++ky == kh) {
      ky = 0;
      if (++kz == kd) {
        kz = 0;
        ++c;
      }
    }
    locate();
  };
  auto build_row = [&](E* t) {  // row (c, kz, ky, kx) into t[0, W), then step to the next row
    const Q* xc = s.xg + c * s.plane;
    const int64_t off_x = kx * dw - pw, lo = s.col_lo[kx], hi = s.col_hi[kx];
    for (int64_t j = cnt; j < W; ++j) t[j] = outside;
    for (int64_t i = 0; i < nseg; ++i) {
      const Segment& sg = seg[i];
      // Byte rows alias everything, so the loops run on restricted locals (else they reload `off` per value).
      E* __restrict ts = t + sg.t0;
      const int32_t o = off;
      const int64_t a = std::clamp(lo, sg.ox0, sg.ox0 + sg.len), b = std::clamp(hi, a, sg.ox0 + sg.len);
      if (sg.row_off < 0) {
        for (int64_t j = 0; j < sg.len; ++j) ts[j] = outside;
        continue;
      }
      const Q* __restrict srow = xc + sg.row_off + off_x;
      for (int64_t ox = sg.ox0; ox < a; ++ox) ts[ox - sg.ox0] = outside;
      if (sw == 1) {
        // Stride 1: consecutive values, a loop the compiler turns into vector instructions.
        const Q* __restrict src = srow + a;
        E* __restrict dst = ts + (a - sg.ox0);
        for (int64_t j = 0; j < b - a; ++j) dst[j] = static_cast<E>(static_cast<int32_t>(src[j]) + o);
      } else {
        for (int64_t ox = a; ox < b; ++ox) ts[ox - sg.ox0] = static_cast<E>(static_cast<int32_t>(srow[ox * sw]) + o);
      }
      for (int64_t ox = b; ox < sg.ox0 + sg.len; ++ox) ts[ox - sg.ox0] = outside;
    }
    step();
  };
  constexpr int64_t kMaxPair = sizeof(E) == 1 ? 4 : 2;
  const int64_t strips = (cnt + NR - 1) / NR;
  alignas(64) E rows[kMaxPair][W];
  alignas(64) uint32_t lanes[W];
  for (int64_t p = 0; p < s.wsz; p += s.pair) {
    const int64_t at = (p / s.pair) * NR * s.pair;
    if (s.pair == 1) {
      build_row(rows[0]);
      for (int64_t t = 0; t < strips; ++t) std::memcpy(strip0 + t * strip_step + at, rows[0] + t * NR, sizeof(E) * NR);
      continue;
    }
    for (int64_t t = 0; t < kMaxPair && t < s.pair; ++t) {
      if (p + t < s.wsz) {
        build_row(rows[t]);
      } else {
        for (int64_t j = 0; j < W; ++j) rows[t][j] = 0;
      }
    }
    if constexpr (sizeof(E) == 2) {
      for (int64_t j = 0; j < W; ++j)
        lanes[j] = static_cast<uint32_t>(static_cast<uint16_t>(rows[0][j])) |
                   (static_cast<uint32_t>(static_cast<uint16_t>(rows[1][j])) << 16);
    } else {
      for (int64_t j = 0; j < W; ++j)
        lanes[j] = uint32_t{rows[0][j]} | (uint32_t{rows[1][j]} << 8) | (uint32_t{rows[2][j]} << 16) |
                   (uint32_t{rows[3][j]} << 24);
    }
    for (int64_t t = 0; t < strips; ++t)
      std::memcpy(strip0 + t * strip_step + at, lanes + t * NR, sizeof(uint32_t) * NR);
  }
}

// The weights of one convolution as the product's A operand, kept per thread between calls: int16 rows of w - zw
// (the int16 product), or signed-byte rows of w - 128 (uint8 weights) or w (int8) for the byte product, with
// the byte product's per-row corrections: s[i] = shift - zw[i] and r[i] = zx' * sum_p (w - zw[i]).
struct ConvWeights {
  std::vector<int16_t> w16;
  std::vector<int8_t> w8;
  std::vector<int32_t> s, r;
  std::vector<uint32_t> sums;
};

// Strips of one block built on the pool, in groups of S strips (at least 64 columns: build_group), chunks of
// max(8, S) strips. Strips are independent (each writes all of its own). Built on one thread, they kept
// ISNet's convolutions at 1.33x at two threads (the products scale).
template <int64_t NR, class E, class Q>
void build_strips(const RunContext& ctx, const StripSource<Q>& src, int64_t j0, int64_t cols, E* pb) {
  constexpr int64_t S = NR >= 64 ? 1 : 64 / NR, kStripsPerChunk = S > 8 ? S : 8;
  const int64_t strip_step = src.kq * NR * src.pair, strips = (cols + NR - 1) / NR;
  parallel_for(ctx.pool, (strips + kStripsPerChunk - 1) / kStripsPerChunk, double(cols) * double(src.wsz),
               [&](int64_t chunk) {
                 const int64_t end = std::min(strips, (chunk + 1) * kStripsPerChunk);
                 for (int64_t st = chunk * kStripsPerChunk; st < end; st += S)
                   build_group<NR, S>(src, j0 + st * NR, std::min(NR * std::min(S, end - st), cols - st * NR),
                                      pb + st * strip_step, strip_step);
               });
}

void int_conv(const RunContext& ctx, const ConvGeom& g, const Tensor& x, const Tensor& w, int32_t zx,
              const std::vector<int32_t>& zw, int32_t* acc) {
  const WindowGeom& win = g.win;
  const int64_t wsz = g.cg * win.k[0] * win.k[1] * win.k[2], plane = win.in_plane(), os = win.out_plane();
  const int64_t mg = g.m / g.group, kw = win.k[2], sw = win.s[2], in_w = win.in[2];
  // The byte product where the CPU has one (AVX-512 VNNI), else the int16 product.
  const kern::QGemmLayout q8 = kern::qgemm_q8_layout(ctx.isa);
  const bool bytes = q8.nr > 0;
  const kern::QGemmLayout lay = bytes ? q8 : kern::qgemm_layout(ctx.isa);
  const int64_t kq = lay.kq(wsz), nr = lay.nr, pair = lay.pair, kp = kq * pair;  // rows padded to whole lanes
  const int64_t esize = bytes ? 1 : 2;
  // The im2col matrix is built for blocks of output positions, so its memory stays a few MiB (a whole
  // 3x3 x 64-channel image at 512x512 would be 300 MB); the buffers are kept per thread between calls.
  const int64_t block = std::max<int64_t>(nr, (int64_t{4} << 20) / std::max<int64_t>(kp * esize, 1) / nr * nr);
  if (bytes ? nr != 32 : (nr != 4 && nr != 8 && nr != 16 && nr != 32))
    throw Error(ErrorKind::Internal, "ConvInteger: no strip builder for " + std::to_string(nr) + " columns");
  thread_local ConvWeights cw;
  thread_local std::vector<int16_t> pbuf;
  thread_local std::vector<uint8_t> pbuf8;
  // Per kernel column kx: the output columns whose tap lies inside the row, ix = ox * sw + kx * dw - pw in [0, w).
  std::vector<int64_t> col_lo(static_cast<size_t>(kw)), col_hi(static_cast<size_t>(kw));
  for (int64_t kx = 0; kx < kw; ++kx) {
    const int64_t off = kx * win.d[2] - win.pb[2];
    col_lo[static_cast<size_t>(kx)] = off >= 0 ? 0 : (-off + sw - 1) / sw;
    col_hi[static_cast<size_t>(kx)] = std::min(win.out[2], in_w - off <= 0 ? 0 : (in_w - off + sw - 1) / sw);
  }
  const bool x_signed = x.dtype() == DType::I8, w_signed = w.dtype() == DType::I8;
  const int32_t xoff = bytes ? (x_signed ? 128 : 0) : -zx;
  if (bytes) {
    // sum_p (x - zx)(w - zw) = sum_p x'(w - shift) + (shift - zw) * sum_p x' - zx' * sum_p (w - zw), with
    // x' = x + xoff the byte the strip holds (outside taps hold zx' = zx + xoff) and shift = 128 for uint8
    // weights (0 for int8), so w - shift is a signed byte; all modulo 2^32.
    const int32_t shift = w_signed ? 0 : 128, zxp = zx + xoff;
    cw.w8.assign(static_cast<size_t>(g.m * kp), 0);
    cw.s.resize(static_cast<size_t>(g.m));
    cw.r.resize(static_cast<size_t>(g.m));
    cw.sums.resize(static_cast<size_t>(g.m));
    signed_byte_rows(w, 0, g.m, wsz, kp, shift, cw.w8.data(), cw.sums.data());
    for (int64_t m = 0; m < g.m; ++m) {
      const int32_t z = zw[static_cast<size_t>(m)];
      // sum_p (w - zw) = sum_p (w - shift) + wsz * (shift - zw)
      const uint32_t sum =
          cw.sums[static_cast<size_t>(m)] + static_cast<uint32_t>(wsz) * static_cast<uint32_t>(shift - z);
      cw.s[static_cast<size_t>(m)] = shift - z;
      cw.r[static_cast<size_t>(m)] = static_cast<int32_t>(static_cast<uint32_t>(zxp) * sum);
    }
  } else {
    cw.w16.assign(static_cast<size_t>(g.m * kp), 0);
    for (int64_t m = 0; m < g.m; ++m)
      widen_q8(
          w, m * wsz, wsz, [&](int64_t) { return zw[static_cast<size_t>(m)]; }, cw.w16.data() + m * kp);
  }
  // The int16 product reads its im2col columns from a padded copy of each group (ops/int_im2col.h) unless the
  // padding would make that copy much larger than the input.
  const bool padded = !bytes && padded_input_fits(win);
  thread_local PaddedInput xpad;
  quant::visit_q8(x.dtype(), [&](auto tag) {
    using Q = decltype(tag);
    for (int64_t n = 0; n < win.n; ++n)
      for (int64_t gi = 0; gi < g.group; ++gi) {
        const Q* xg = x.data<Q>().data() + (n * win.c + gi * g.cg) * plane;
        const StripSource<Q> src{g, xg, plane, zx, xoff, wsz, kq, pair, col_lo.data(), col_hi.data()};
        if (padded) pad_input(win, g.cg, xg, zx, ctx.pool, xpad);
        for (int64_t j0 = 0; j0 < os; j0 += block) {
          const int64_t cols = std::min(block, os - j0);
          int32_t* out = acc + (n * g.m + gi * mg) * os + j0;
          // Columns [j0, j0 + cols) of the im2col matrix (row (c, kz, ky, kx), column (oz, oy, ox)) written
          // straight into the packed strips of kernels/qgemm.h: element (p, j) at
          // ((j/nr * kq + p/pair) * nr + j%nr) * pair + p%pair, j counted from j0.
          if (bytes) {
            pbuf8.resize(static_cast<size_t>(lay.packed_size(wsz, cols)));
            build_strips<32>(ctx, src, j0, cols, pbuf8.data());
            const kern::Q8Fix fix{cw.s.data() + gi * mg, cw.r.data() + gi * mg, nullptr, nullptr};
            kern::qgemm_q8_packed(ctx.isa, mg, cols, wsz, cw.w8.data() + gi * mg * kp, kp, pbuf8.data(), fix, out, os,
                                  ctx.pool);
            continue;
          }
          pbuf.resize(static_cast<size_t>(lay.packed_size(wsz, cols)));
          int16_t* pb = pbuf.data();
          if (padded) {
            build_padded_strips(ctx.isa, win, xpad, nr, pair, wsz, kq, j0, cols, pb, ctx.pool);
          } else {
            if (nr == 4) build_strips<4>(ctx, src, j0, cols, pb);
            if (nr == 8) build_strips<8>(ctx, src, j0, cols, pb);
            if (nr == 16) build_strips<16>(ctx, src, j0, cols, pb);
            if (nr == 32) build_strips<32>(ctx, src, j0, cols, pb);
          }
          kern::qgemm_s16_packed(ctx.isa, mg, cols, wsz, cw.w16.data() + gi * mg * kp, kp, pb, out, os, ctx.pool);
        }
      }
  });
}

class ConvIntegerKernel final : public Kernel {
 public:
  // qlinear: QLinearConv (x, sx, zx, w, sw, zw, sy, zy [, B]); else ConvInteger (x, w [, zx] [, zw]).
  ConvIntegerKernel(const NodeInfo& info, bool qlinear)
      : Kernel(KernelFlags{.exact = true}), at_(read_window_attrs(info, WindowOp::Conv)), q_(qlinear) {}

  void infer(InferContext& ctx) const override {
    const size_t ix = 0, iw = q_ ? 3 : 1;
    if (!ctx.has_input(ix) || !ctx.has_input(iw)) ctx.fail(ErrorKind::InvalidModel, "expects inputs x and w");
    if (q_)
      for (size_t i : {1, 2, 4, 5, 6, 7})
        if (!ctx.has_input(i)) ctx.fail(ErrorKind::InvalidModel, "input " + std::to_string(i) + " is required");
    if (!is_q8(ctx.input(ix).dtype) || !is_q8(ctx.input(iw).dtype))
      ctx.fail(ErrorKind::Unsupported, "operands must be uint8 or int8, got " + type_str(ctx.input(ix).dtype) +
                                           " and " + type_str(ctx.input(iw).dtype));
    const ConvGeom g = conv_geom(ctx.info, at_, ctx.input(ix).shape, ctx.input(iw).shape, ErrorKind::InvalidModel);
    if (q_ && !is_q8(ctx.input(7).dtype)) ctx.fail(ErrorKind::Unsupported, "y_zero_point must be uint8 or int8");
    ctx.set_output(0, q_ ? ctx.input(7).dtype : DType::I32, g.win.out_shape);
  }

  void run(RunContext& ctx) const override {
    const size_t ix = 0, iw = q_ ? 3 : 1, izx = q_ ? 2 : 2, izw = q_ ? 5 : 3;
    const Tensor& x = ctx.input(ix);
    const Tensor& w = ctx.input(iw);
    const ConvGeom g = conv_geom(ctx.info, at_, x.shape(), w.shape(), ErrorKind::InvalidInput);
    if (g.win.out_shape != ctx.output(0).shape())
      ctx.fail(ErrorKind::InvalidInput, "inputs do not match the planned output");
    const Tensor* zx = ctx.has_input(izx) ? &ctx.input(izx) : nullptr;
    const Tensor* zw = ctx.has_input(izw) ? &ctx.input(izw) : nullptr;
    if ((zx && zx->dtype() != x.dtype()) || (zw && zw->dtype() != w.dtype()))
      ctx.fail(ErrorKind::InvalidInput, "zero points must have their operand's type");
    if (zx && zx->numel() != 1) ctx.fail(ErrorKind::InvalidInput, "x's zero point must be a scalar");
    std::vector<int32_t> zwv;
    // ConvInteger: per-tensor weight zero point (int8.md); QLinearConv: per-tensor or per output channel.
    if (!int_params(zw, g.m, zwv) || (!q_ && zw && zw->numel() != 1))
      ctx.fail(ErrorKind::InvalidInput, q_ ? "w's zero point must be a scalar or have one value per output channel"
                                           : "w's zero point must be a scalar (per-tensor)");
    const int32_t zxv = zx ? static_cast<int32_t>(q_at(*zx, 0)) : 0;
    if (!q_) {
      int_conv(ctx, g, x, w, zxv, zwv, ctx.output(0).mutable_data<int32_t>().data());
      return;
    }
    const int64_t count = g.win.out_shape.numel(), plane = g.win.out_plane();
    Tensor acc_t = ctx.scratch(DType::I32, Shape{count});
    int32_t* acc = acc_t.mutable_data<int32_t>().data();
    int_conv(ctx, g, x, w, zxv, zwv, acc);
    if (ctx.has_input(8)) {
      const Tensor& bias = ctx.input(8);
      if (bias.dtype() != DType::I32 || bias.numel() != g.m)
        ctx.fail(ErrorKind::InvalidInput, "B must be int32 with one value per output channel");
      const auto bv = bias.data<int32_t>();
      for (int64_t e = 0; e < count; ++e)
        acc[e] = static_cast<int32_t>(static_cast<uint32_t>(acc[e]) +
                                      static_cast<uint32_t>(bv[static_cast<size_t>((e / plane) % g.m)]));
    }
    for (size_t i : {1, 4, 6})
      if (ctx.input(i).dtype() != DType::F32) ctx.fail(ErrorKind::InvalidInput, "scales must be float32");
    std::vector<float> sx, sw, sy;
    if (!float_params(ctx.input(1), 1, sx) || !float_params(ctx.input(4), g.m, sw) ||
        !float_params(ctx.input(6), 1, sy))
      ctx.fail(ErrorKind::InvalidInput, "scales must be scalars (w: or one per output channel)");
    const Tensor& zy = ctx.input(7);
    if (zy.numel() != 1 || zy.dtype() != ctx.output(0).dtype())
      ctx.fail(ErrorKind::InvalidInput, "y_zero_point must be one value");
    std::vector<float> mult(static_cast<size_t>(g.m));
    for (int64_t m = 0; m < g.m; ++m) {
      const float p = sx[0] * sw[static_cast<size_t>(m)];
      mult[static_cast<size_t>(m)] = p / sy[0];
    }
    requantize(count, acc, mult.data(), g.m, plane, q_at(zy, 0), ctx.output(0));
  }

 private:
  WindowAttrs at_;
  bool q_;
};

}  // namespace

std::unique_ptr<Kernel> make_matmul_integer(const NodeInfo&) { return std::make_unique<MatMulIntegerKernel>(false); }
std::unique_ptr<Kernel> make_qlinear_matmul(const NodeInfo&) { return std::make_unique<MatMulIntegerKernel>(true); }
std::unique_ptr<Kernel> make_conv_integer(const NodeInfo& info) {
  return std::make_unique<ConvIntegerKernel>(info, false);
}
std::unique_ptr<Kernel> make_qlinear_conv(const NodeInfo& info) {
  return std::make_unique<ConvIntegerKernel>(info, true);
}

}  // namespace onemodel::rt
