// Per-target code for kernels/winograd.h: the input and output transforms of F(2x2, 3x3) and F(4x4, 3x3), a row
// of tiles at a time, lanes across neighbouring tiles. Included once per target by winograd.cc through
// hwy/foreach_target.h.
#if defined(ONEMODEL_KERNELS_WINOGRAD_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEMODEL_KERNELS_WINOGRAD_INL_H_
#undef ONEMODEL_KERNELS_WINOGRAD_INL_H_
#else
#define ONEMODEL_KERNELS_WINOGRAD_INL_H_
#endif

#include <algorithm>
#include <cstdint>

#include "hwy/highway.h"
#include "kernels/winograd.h"

HWY_BEFORE_NAMESPACE();
namespace onemodel::kern::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace wino_detail {

// X^T d X for a 1-D transform `f` (kIn values to kOut, of X^T's rows) of a kIn x kIn tile d (get(i, j) = row i,
// column j): first each column, then each row of the result; put(r, c, value) receives the kOut x kOut outputs.
template <int kIn, int kOut, class T, class F, class Get, class Put>
HWY_INLINE void TwoPasses(F f, Get get, Put put) {
  T t[kOut][kIn];
  for (int j = 0; j < kIn; ++j) {
    T col[kIn], out[kOut];
    for (int i = 0; i < kIn; ++i) col[i] = get(i, j);
    f(col, out);
    for (int r = 0; r < kOut; ++r) t[r][j] = out[r];
  }
  for (int r = 0; r < kOut; ++r) {
    T out[kOut];
    f(t[r], out);
    for (int c = 0; c < kOut; ++c) put(r, c, out[c]);
  }
}

// B^T d B of one input tile of F(2x2, 3x3) (4x4) or F(4x4, 3x3) (6x6), d[i][j] = row i, column j: rows first
// (t = B^T d), then columns, each as kernels-gemm.md section 11 writes B^T's rows; lanes are tiles.
template <int kTile, class D, class Get, class Put>
HWY_INLINE void InputTile(D d, Get get, Put put) {
  using T = hn::Vec<D>;
  constexpr int kA = kTile + 2;
  auto b_t = [&](const T(&x)[kA], T(&t)[kA]) {
    if constexpr (kTile == 2) {
      t[0] = x[0] - x[2];
      t[1] = x[1] + x[2];
      t[2] = x[2] - x[1];
      t[3] = x[1] - x[3];
    } else {
      const T four = hn::Set(d, 4.0f), five = hn::Set(d, 5.0f), two = hn::Set(d, 2.0f);
      const T a = x[4] - x[2], b = x[3] - x[1];
      t[0] = four * x[0] - five * x[2] + x[4];
      t[1] = (x[4] + x[3]) - four * (x[1] + x[2]);
      t[2] = (x[4] - x[3]) + four * (x[1] - x[2]);
      t[3] = a + two * b;
      t[4] = a - two * b;
      t[5] = four * x[1] - five * x[3] + x[5];
    }
  };
  TwoPasses<kA, kA, T>(b_t, get, [&](int i, int j, T value) { put(kA * i + j, value); });
}

// A^T m A of one tile's (kTile + 2)^2 products: the kTile x kTile outputs y[r][c].
template <int kTile, class D, class Get, class Put>
HWY_INLINE void OutputTile(D d, Get get, Put put) {
  using T = hn::Vec<D>;
  constexpr int kA = kTile + 2;
  auto a_t = [&](const T(&m)[kA], T(&o)[kTile]) {
    if constexpr (kTile == 2) {
      o[0] = m[0] + m[1] + m[2];
      o[1] = m[1] - m[2] - m[3];
    } else {
      const T two = hn::Set(d, 2.0f), four = hn::Set(d, 4.0f), eight = hn::Set(d, 8.0f);
      const T s12 = m[1] + m[2], d12 = m[1] - m[2], s34 = m[3] + m[4], d34 = m[3] - m[4];
      o[0] = m[0] + s12 + s34;
      o[1] = d12 + two * d34;
      o[2] = s12 + four * s34;
      o[3] = d12 + eight * d34 + m[5];
    }
  };
  TwoPasses<kA, kTile, T>(
      a_t, [&](int i, int j) { return get(kA * i + j); }, put);
}

// Row i's kTile + 2 columns of each lane's tile, lane l's tile starting at p[kTile * l].
template <int kTile, class D>
HWY_INLINE void LoadTileRow(D d, const float* p, hn::Vec<D> (&c)[kTile + 2]) {
  if constexpr (kTile == 2) {
    hn::LoadInterleaved2(d, p, c[0], c[1]);
    hn::LoadInterleaved2(d, p + 2, c[2], c[3]);
  } else {
    hn::Vec<D> unused0, unused1;
    hn::LoadInterleaved4(d, p, c[0], c[1], c[2], c[3]);
    hn::LoadInterleaved4(d, p + 4, c[4], c[5], unused0, unused1);
  }
}

template <int kTile, class D>
HWY_INLINE void StoreTileRow(D d, const hn::Vec<D> (&o)[kTile], float* p) {
  if constexpr (kTile == 2) {
    hn::StoreInterleaved2(o[0], o[1], d, p);
  } else {
    hn::StoreInterleaved4(o[0], o[1], o[2], o[3], d, p);
  }
}

}  // namespace wino_detail

// Tiles of rows [ty0, ty1) of one channel's padded plane `xp` (wp >= kTile tw + 2 columns; tile (ty, tx) reads
// rows and columns kTile ty.., kTile tx.., kTile + 2 of each) to v[xi * xi_stride + (ty - ty0) * tw + tx]. A
// vector holds one value of as many neighbouring tiles as it has lanes, and a row's last vector is a whole one
// too: its lanes past the row read on into the plane (past the last row of the last channel, up to kTile lanes
// + 8 floats beyond it: the caller keeps that room after the planes) and write up to lanes - 1 values past the row,
// which the next row then overwrites, or, after the last row, into the channel's room for them (the caller's channel
// stride is at least (ty1 - ty0) * tw + lanes). With fewer tiles in a row than lanes (ResNet-50's 28x28 and 14x14
// layers on AVX-512), a tail of one tile at a time took most of the transforms' time.
template <int kTile>
void WinoInput(const float* xp, int64_t wp, int64_t tw, int64_t ty0, int64_t ty1, float* v, int64_t xi_stride) {
  constexpr int kA = kTile + 2;
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t ty = ty0; ty < ty1; ++ty) {
    const float* rows = xp + kTile * ty * wp;
    float* out = v + (ty - ty0) * tw;
    for (int64_t tx = 0; tx < tw; tx += lanes) {
      V c[kA][kA];  // c[i][j]: row i, column kTile tx' + j of each lane's tile tx'
      for (int i = 0; i < kA; ++i) wino_detail::LoadTileRow<kTile>(d, rows + i * wp + kTile * tx, c[i]);
      wino_detail::InputTile<kTile>(
          d, [&](int i, int j) { return c[i][j]; },
          [&](int xi, V value) { hn::StoreU(value, d, out + xi * xi_stride + tx); });
    }
  }
}

// The products of tile rows [ty0, ty1) of one output channel (m[xi * xi_stride + (ty - ty0) * tw + tx]) to its
// output plane y (oh x ow); the parts of edge tiles past the plane are dropped. Whole vectors of tiles as in
// WinoInput: a row's last one reads up to lanes - 1 values past the row (the next row's, or the room after the
// channel's), and its outputs reach the plane through a buffer.
template <int kTile>
void WinoOutput(const float* m, int64_t xi_stride, int64_t tw, int64_t ty0, int64_t ty1, float* y, int64_t oh,
                int64_t ow) {
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  HWY_ALIGN float part[kTile * hn::MaxLanes(d)];
  for (int64_t ty = ty0; ty < ty1; ++ty) {
    const float* in = m + (ty - ty0) * tw;
    float* row0 = y + kTile * ty * ow;
    const int64_t rows = std::min<int64_t>(kTile, oh - kTile * ty);
    for (int64_t tx = 0; tx < tw; tx += lanes) {
      V out[kTile][kTile];
      wino_detail::OutputTile<kTile>(
          d, [&](int xi) { return hn::LoadU(d, in + xi * xi_stride + tx); },
          [&](int r, int c, V value) { out[r][c] = value; });
      const int64_t cols = std::min(kTile * lanes, ow - kTile * tx);
      for (int64_t r = 0; r < rows; ++r) {
        float* dst = row0 + r * ow + kTile * tx;
        if (cols == kTile * lanes) {
          wino_detail::StoreTileRow<kTile>(d, out[r], dst);
        } else {
          wino_detail::StoreTileRow<kTile>(d, out[r], part);
          std::copy(part, part + cols, dst);
        }
      }
    }
  }
}

// The caller's room after each row of tiles and after the planes (winograd.cc) holds what a row's last vector
// writes and reads past it.
static_assert(static_cast<int64_t>(hn::MaxLanes(hn::ScalableTag<float>())) <= kWinogradRowRoom &&
                  4 * static_cast<int64_t>(hn::MaxLanes(hn::ScalableTag<float>())) + 8 <= kWinogradReadRoom,
              "a target with more lanes needs more room");

// Index 0: F(2x2, 3x3); 1: F(4x4, 3x3).
inline constexpr WinogradFns kWinogradFns[2] = {{&WinoInput<2>, &WinoOutput<2>}, {&WinoInput<4>, &WinoOutput<4>}};

}  // namespace onemodel::kern::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif
