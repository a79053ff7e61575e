#include "ops/int_im2col.h"

#include <algorithm>
#include <cstring>

#include "kernels/qgemm.h"

namespace onemodel::rt {

bool padded_input_fits(const WindowGeom& g) {
  double padded = 1, plain = 1;
  for (int a = 0; a < 3; ++a) {
    padded *= static_cast<double>(g.in[a]) + static_cast<double>(g.pb[a]) + static_cast<double>(g.pa[a]);
    plain *= static_cast<double>(g.in[a]);
  }
  return padded <= 2 * plain + 4096;
}

template <class Q>
void pad_input(const WindowGeom& g, int64_t cg, const Q* xg, int32_t zx, ThreadPool* pool, PaddedInput& out) {
  out.dp = g.in[0] + g.pb[0] + g.pa[0];
  out.hp = g.in[1] + g.pb[1] + g.pa[1];
  out.wp = g.in[2] + g.pb[2] + g.pa[2];
  const int64_t plane = out.dp * out.hp * out.wp, in_plane = g.in_plane();
  out.data.resize(static_cast<size_t>(cg * plane));
  parallel_for(pool, cg, static_cast<double>(plane) * static_cast<double>(cg), [&](int64_t c) {
    int16_t* dc = out.data.data() + c * plane;
    const Q* xc = xg + c * in_plane;
    for (int64_t z = 0; z < out.dp; ++z)
      for (int64_t y = 0; y < out.hp; ++y) {
        int16_t* __restrict row = dc + (z * out.hp + y) * out.wp;
        const int64_t iz = z - g.pb[0], iy = y - g.pb[1];
        if (iz < 0 || iz >= g.in[0] || iy < 0 || iy >= g.in[1]) {
          std::memset(row, 0, sizeof(int16_t) * static_cast<size_t>(out.wp));
          continue;
        }
        std::memset(row, 0, sizeof(int16_t) * static_cast<size_t>(g.pb[2]));
        std::memset(row + g.pb[2] + g.in[2], 0, sizeof(int16_t) * static_cast<size_t>(g.pa[2]));
        const Q* __restrict src = xc + (iz * g.in[1] + iy) * g.in[2];
        int16_t* __restrict dst = row + g.pb[2];
        for (int64_t x = 0; x < g.in[2]; ++x) dst[x] = static_cast<int16_t>(static_cast<int32_t>(src[x]) - zx);
      }
  });
  const int64_t kd = g.k[0], kh = g.k[1], kw = g.k[2];
  out.tap.resize(static_cast<size_t>(cg * kd * kh * kw));
  int64_t p = 0;
  for (int64_t c = 0; c < cg; ++c)
    for (int64_t kz = 0; kz < kd; ++kz)
      for (int64_t ky = 0; ky < kh; ++ky)
        for (int64_t kx = 0; kx < kw; ++kx)
          out.tap[static_cast<size_t>(p++)] = c * plane + (kz * g.d[0] * out.hp + ky * g.d[1]) * out.wp + kx * g.d[2];
}
template void pad_input<uint8_t>(const WindowGeom&, int64_t, const uint8_t*, int32_t, ThreadPool*, PaddedInput&);
template void pad_input<int8_t>(const WindowGeom&, int64_t, const int8_t*, int32_t, ThreadPool*, PaddedInput&);

namespace {

// One strip of NR columns starting at output position js (cnt of them real) into d (kq lane groups of NR *
// pair values). A strip inside one output row with stride 1 reads each k row as NR consecutive values;
// others (row ends, strides) read every value at its own offset.
template <int64_t NR>
void padded_strip(kern::Isa isa, const WindowGeom& g, const PaddedInput& in, int64_t pair, int64_t wsz, int64_t kq,
                  int64_t js, int64_t cnt, int16_t* d) {
  const int64_t oh = g.out[1], ow = g.out[2];
  int64_t off[NR];
  for (int64_t jj = 0; jj < cnt; ++jj) {
    const int64_t j = js + jj, ox = j % ow, row = j / ow, oy = row % oh, oz = row / oh;
    off[jj] = ((oz * g.s[0]) * in.hp + oy * g.s[1]) * in.wp + ox * g.s[2];
  }
  const int16_t* x = in.data.data();
  const int64_t* tap = in.tap.data();
  const bool contiguous = g.s[2] == 1 && cnt == NR && js % ow + NR <= ow;
  if (contiguous) {
    kern::qgemm_strip_from_rows(isa, x + off[0], tap, wsz, d);
    return;
  }
  for (int64_t q = 0; q < kq; ++q, d += NR * pair)
    for (int64_t jj = 0; jj < NR; ++jj)
      for (int64_t t = 0; t < pair; ++t) {
        const int64_t p = q * pair + t;
        d[jj * pair + t] = jj < cnt && p < wsz ? x[off[jj] + tap[p]] : int16_t{0};
      }
}

template <int64_t NR>
void padded_strips(kern::Isa isa, const WindowGeom& g, const PaddedInput& in, int64_t pair, int64_t wsz, int64_t kq,
                   int64_t j0, int64_t cols, int16_t* pb, ThreadPool* pool) {
  constexpr int64_t kStripsPerChunk = 8;
  const int64_t strip_step = kq * NR * pair, strips = (cols + NR - 1) / NR;
  parallel_for(pool, (strips + kStripsPerChunk - 1) / kStripsPerChunk, double(cols) * double(wsz), [&](int64_t chunk) {
    const int64_t end = std::min(strips, (chunk + 1) * kStripsPerChunk);
    for (int64_t st = chunk * kStripsPerChunk; st < end; ++st)
      padded_strip<NR>(isa, g, in, pair, wsz, kq, j0 + st * NR, std::min(NR, cols - st * NR), pb + st * strip_step);
  });
}

}  // namespace

void build_padded_strips(kern::Isa isa, const WindowGeom& g, const PaddedInput& in, int64_t nr, int64_t pair,
                         int64_t wsz, int64_t kq, int64_t j0, int64_t cols, int16_t* pb, ThreadPool* pool) {
  switch (nr) {
    case 4: return padded_strips<4>(isa, g, in, pair, wsz, kq, j0, cols, pb, pool);
    case 8: return padded_strips<8>(isa, g, in, pair, wsz, kq, j0, cols, pb, pool);
    case 16: return padded_strips<16>(isa, g, in, pair, wsz, kq, j0, cols, pb, pool);
    default: return padded_strips<32>(isa, g, in, pair, wsz, kq, j0, cols, pb, pool);
  }
}

}  // namespace onemodel::rt
