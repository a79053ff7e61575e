// Per-target code for kernels/winograd.h: the input and output transforms of F(2x2, 3x3), a row of tiles at a
// time, lanes across neighbouring tiles. Included once per target by winograd.cc through hwy/foreach_target.h.
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

// B^T d B of one 4x4 input tile, d[i][j] = row i, column j: rows first (t = B^T d), then columns. `T` is a
// vector or a float, so the vector loop and the scalar tail are one formula.
template <class T, class Get, class Put>
HWY_INLINE void InputTile(Get get, Put put) {
  T t[4][4];
  for (int j = 0; j < 4; ++j) {
    const T d0 = get(0, j), d1 = get(1, j), d2 = get(2, j), d3 = get(3, j);
    t[0][j] = d0 - d2;
    t[1][j] = d1 + d2;
    t[2][j] = d2 - d1;
    t[3][j] = d1 - d3;
  }
  for (int i = 0; i < 4; ++i) {
    put(4 * i + 0, t[i][0] - t[i][2]);
    put(4 * i + 1, t[i][1] + t[i][2]);
    put(4 * i + 2, t[i][2] - t[i][1]);
    put(4 * i + 3, t[i][1] - t[i][3]);
  }
}

// A^T m A of one tile's 16 products: the 2x2 outputs y[r][c].
template <class T, class Get, class Put>
HWY_INLINE void OutputTile(Get get, Put put) {
  T s[2][4];
  for (int j = 0; j < 4; ++j) {
    const T m0 = get(0 + j), m1 = get(4 + j), m2 = get(8 + j), m3 = get(12 + j);
    s[0][j] = m0 + m1 + m2;
    s[1][j] = m1 - m2 - m3;
  }
  for (int r = 0; r < 2; ++r) {
    put(r, 0, s[r][0] + s[r][1] + s[r][2]);
    put(r, 1, s[r][1] - s[r][2] - s[r][3]);
  }
}

}  // namespace wino_detail

// Tiles of rows [ty0, ty1) of one channel's padded plane `xp` (wp columns; tile (ty, tx) reads rows 2ty..2ty+3,
// columns 2tx..2tx+3) to v[xi * xi_stride + (ty - ty0) * tw + tx].
inline void WinoInput(const float* xp, int64_t wp, int64_t tw, int64_t ty0, int64_t ty1, float* v, int64_t xi_stride) {
  using wino_detail::InputTile;
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t ty = ty0; ty < ty1; ++ty) {
    const float* rows = xp + 2 * ty * wp;
    float* out = v + (ty - ty0) * tw;
    int64_t tx = 0;
    for (; tx + lanes <= tw; tx += lanes) {
      V even[4][2], odd[4][2];  // per row: columns 2tx (+2) and 2tx + 1 (+2) of each lane's tile
      for (int i = 0; i < 4; ++i) {
        hn::LoadInterleaved2(d, rows + i * wp + 2 * tx, even[i][0], odd[i][0]);
        hn::LoadInterleaved2(d, rows + i * wp + 2 * tx + 2, even[i][1], odd[i][1]);
      }
      InputTile<V>([&](int i, int j) { return j % 2 == 0 ? even[i][j / 2] : odd[i][j / 2]; },
                   [&](int xi, V value) { hn::StoreU(value, d, out + xi * xi_stride + tx); });
    }
    for (; tx < tw; ++tx)
      InputTile<float>([&](int i, int j) { return rows[i * wp + 2 * tx + j]; },
                       [&](int xi, float value) { out[xi * xi_stride + tx] = value; });
  }
}

// The products of tile rows [ty0, ty1) of one output channel (m[xi * xi_stride + (ty - ty0) * tw + tx]) to its
// output plane y (oh x ow); the parts of edge tiles past the plane are dropped.
inline void WinoOutput(const float* m, int64_t xi_stride, int64_t tw, int64_t ty0, int64_t ty1, float* y, int64_t oh,
                       int64_t ow) {
  using wino_detail::OutputTile;
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t ty = ty0; ty < ty1; ++ty) {
    const float* in = m + (ty - ty0) * tw;
    float* row0 = y + 2 * ty * ow;
    const bool two_rows = 2 * ty + 1 < oh;
    int64_t tx = 0;
    for (; two_rows && 2 * (tx + lanes) <= ow; tx += lanes) {
      V out[2][2];
      OutputTile<V>([&](int xi) { return hn::LoadU(d, in + xi * xi_stride + tx); },
                    [&](int r, int c, V value) { out[r][c] = value; });
      hn::StoreInterleaved2(out[0][0], out[0][1], d, row0 + 2 * tx);
      hn::StoreInterleaved2(out[1][0], out[1][1], d, row0 + ow + 2 * tx);
    }
    for (; tx < tw; ++tx)
      OutputTile<float>([&](int xi) { return in[xi * xi_stride + tx]; },
                        [&](int r, int c, float value) {
                          if (2 * ty + r < oh && 2 * tx + c < ow) row0[r * ow + 2 * tx + c] = value;
                        });
  }
}

inline constexpr WinogradFns kWinogradFns{&WinoInput, &WinoOutput};

}  // namespace onemodel::kern::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif
