// Per-target code for kernels/pool.h. Included once per target by pool.cc through hwy/foreach_target.h.
#if defined(ONEMODEL_KERNELS_POOL_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEMODEL_KERNELS_POOL_INL_H_
#undef ONEMODEL_KERNELS_POOL_INL_H_
#else
#define ONEMODEL_KERNELS_POOL_INL_H_
#endif

#include <cstdint>
#include <limits>

#include "hwy/highway.h"
#include "kernels/exact_math.h"
#include "kernels/pool.h"
#include "kernels/simd_common-inl.h"

HWY_BEFORE_NAMESPACE();
namespace onemodel::kern::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Each vector of outputs folds every tap of every row in registers and touches best once (a pass per tap read
// and wrote best nine times for a 3x3 window: ResNet-50's stem pool spent its time on those loads).
// U vectors of outputs from q: the taps in order, each vector its own chain (one chain waited on the compare
// and blend of every tap: ~6 cycles each).
// kFinal: start from NaN instead of best's values and store the results with NaN made canonical.
template <int U, bool kFinal, class D>
HWY_INLINE void MaxWindowVectors(D d, const float* const* rows, int64_t nrows, int64_t stride, int64_t taps,
                                 int64_t dilation, float* best, const int64_t* qs) {
  using V = hn::Vec<D>;
  auto up = [](V v, V b) HWY_ATTR { return hn::IfThenElse(hn::Or(hn::Gt(v, b), hn::IsNaN(b)), v, b); };
  V b[U];
  for (int u = 0; u < U; ++u)
    b[u] = kFinal ? hn::Set(d, std::numeric_limits<float>::quiet_NaN()) : hn::LoadU(d, best + qs[u]);
  for (int64_t r = 0; r < nrows; ++r) {
    const float* row = rows[r];
    if (stride == 1) {
      for (int64_t t = 0; t < taps; ++t)
        for (int u = 0; u < U; ++u) b[u] = up(hn::LoadU(d, row + qs[u] + t * dilation), b[u]);
    } else if (dilation == 1) {
      // Taps t and t + 1 are the two halves of the pairs at t: one de-interleave serves both. A last unpaired
      // tap (t > 0) is the odd half of the pairs at t - 1, which ends at the last element the vector needs
      // (the even half at t read one past it, so the last output of a row had to go alone).
      for (int64_t t = 0; t < taps; t += 2)
        for (int u = 0; u < U; ++u) {
          V even, odd;
          const bool pair = t + 1 < taps;
          hn::LoadInterleaved2(d, row + 2 * qs[u] + t - (!pair && t > 0 ? 1 : 0), even, odd);
          if (pair) {
            b[u] = up(even, b[u]);
            b[u] = up(odd, b[u]);
          } else {
            b[u] = up(t > 0 ? odd : even, b[u]);
          }
        }
    } else {
      for (int64_t t = 0; t < taps; ++t)
        for (int u = 0; u < U; ++u) {
          V even, odd;
          const bool last_odd = t + 1 == taps && t > 0;  // as above: the odd half ends at the last element
          hn::LoadInterleaved2(d, row + 2 * qs[u] + t * dilation - (last_odd ? 1 : 0), even, odd);
          b[u] = up(last_odd ? odd : even, b[u]);
        }
    }
  }
  for (int u = 0; u < U; ++u) hn::StoreU(kFinal ? CanonicalNaN(d, b[u]) : b[u], d, best + qs[u]);
}

// Each vector of outputs folds every tap of every row in registers and touches best once (a pass per tap read
// and wrote best nine times for a 3x3 window: ResNet-50's stem pool 0.87 -> 0.3 ms with the chains above).
template <bool kFinal>
HWY_INLINE void MaxWindowT(const float* const* rows, int64_t nrows, int64_t stride, int64_t taps, int64_t dilation,
                           float* best, int64_t count) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  auto update = &max_tap_update;
  // The last vector is moved back to end at the last output it may read for (folding a tap into a value that
  // already holds it changes nothing, so recomputed outputs keep their values). Stride 2 with one tap reads
  // the odd element of each pair too, so its vectors end one output early and that output goes alone; with
  // more taps the last one ends each vector's reads at the last element its outputs need (above).
  int64_t q = 0, vec_end = 0;
  if (stride == 1) vec_end = count;
  if (stride == 2) vec_end = taps >= 2 ? count : count - 1;
  if ((stride == 1 || stride == 2) && vec_end >= lanes) {
    // Vector starts: whole vectors, then one moved back to end at vec_end; up to four at a time.
    int64_t qs[4];
    int n = 0;
    auto flush = [&]() HWY_ATTR {
      if (n == 4) MaxWindowVectors<4, kFinal>(d, rows, nrows, stride, taps, dilation, best, qs);
      if (n == 3) MaxWindowVectors<3, kFinal>(d, rows, nrows, stride, taps, dilation, best, qs);
      if (n == 2) MaxWindowVectors<2, kFinal>(d, rows, nrows, stride, taps, dilation, best, qs);
      if (n == 1) MaxWindowVectors<1, kFinal>(d, rows, nrows, stride, taps, dilation, best, qs);
      n = 0;
    };
    for (; q + lanes <= vec_end; q += lanes) {
      qs[n++] = q;
      if (n == 4) flush();
    }
    if (q < vec_end) {
      qs[n++] = vec_end - lanes;
      if (n == 4) flush();
    }
    flush();
    q = vec_end;
  }
  for (; q < count; ++q) {
    // In a register: best may alias nothing, but the compiler cannot know.
    float b = kFinal ? std::numeric_limits<float>::quiet_NaN() : best[q];
    for (int64_t r = 0; r < nrows; ++r)
      for (int64_t t = 0; t < taps; ++t) b = update(rows[r][q * stride + t * dilation], b);
    best[q] = kFinal ? kern::canon(b) : b;
  }
}

inline void MaxWindow(const float* const* rows, int64_t nrows, int64_t stride, int64_t taps, int64_t dilation,
                      float* best, int64_t count) {
  MaxWindowT<false>(rows, nrows, stride, taps, dilation, best, count);
}

inline void MaxWindowFinal(const float* const* rows, int64_t nrows, int64_t stride, int64_t taps, int64_t dilation,
                           float* y, int64_t count) {
  MaxWindowT<true>(rows, nrows, stride, taps, dilation, y, count);
}

// Lanes are outputs: each vector de-interleaves the pairs of a row. A ragged end repeats the last whole
// vector's worth of outputs (the same values again: y is not an input); rows shorter than a vector take 4-lane
// vectors, rows shorter than 4 go one output at a time.
template <class D>
HWY_INLINE void MaxPairsVec(D d, const float* const* rows, int64_t nrows, float* y, int64_t q) {
  auto best = hn::Set(d, std::numeric_limits<float>::quiet_NaN());
  for (int64_t r = 0; r < nrows; ++r) {
    hn::Vec<D> even, odd;
    hn::LoadInterleaved2(d, rows[r] + 2 * q, even, odd);
    best = hn::IfThenElse(hn::Or(hn::Gt(even, best), hn::IsNaN(best)), even, best);
    best = hn::IfThenElse(hn::Or(hn::Gt(odd, best), hn::IsNaN(best)), odd, best);
  }
  hn::StoreU(CanonicalNaN(d, best), d, y + q);
}

template <class D>
HWY_INLINE void MaxPairsRow(D d, const float* const* rows, int64_t nrows, float* y, int64_t count) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t q = 0;
  for (; q + lanes <= count; q += lanes) MaxPairsVec(d, rows, nrows, y, q);
  if (q < count) MaxPairsVec(d, rows, nrows, y, count - lanes);
}

inline void MaxPairs(const float* const* rows, int64_t nrows, float* y, int64_t count) {
  const hn::ScalableTag<float> d;
  const hn::CappedTag<float, 4> d4;
  if (count >= static_cast<int64_t>(hn::Lanes(d))) return MaxPairsRow(d, rows, nrows, y, count);
  if (count >= static_cast<int64_t>(hn::Lanes(d4))) return MaxPairsRow(d4, rows, nrows, y, count);
  // Bitwise, not short-circuit: on data a branch per comparison mispredicts (10 ns an output at 4 wide).
  auto update = &max_tap_update;
  for (int64_t q = 0; q < count; ++q) {
    float best = std::numeric_limits<float>::quiet_NaN();
    for (int64_t r = 0; r < nrows; ++r) best = update(rows[r][2 * q + 1], update(rows[r][2 * q], best));
    y[q] = kern::canon(best);
  }
}

inline void SumTaps(const float* row, int64_t stride, int64_t taps, int64_t dilation, float* acc, int64_t count) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t t = 0; t < taps; ++t) {
    const float* tap = row + t * dilation;
    int64_t q = 0;
    if (stride == 1) {
      for (; q + lanes <= count; q += lanes)
        hn::StoreU(hn::Add(hn::LoadU(d, acc + q), hn::LoadU(d, tap + q)), d, acc + q);
    } else if (stride == 2) {
      // As MaxTaps: the last pair's odd element is read too, so the vector loop stops one output early.
      for (; q + lanes < count; q += lanes) {
        hn::Vec<decltype(d)> v, odd;
        hn::LoadInterleaved2(d, tap + 2 * q, v, odd);
        hn::StoreU(hn::Add(hn::LoadU(d, acc + q), v), d, acc + q);
      }
    }
    for (; q < count; ++q) acc[q] = acc[q] + tap[q * stride];
  }
}

inline void CopyCanonical(const float* src, float* dst, int64_t n) {
  MapArray(src, dst, n, [](auto d, auto v) HWY_ATTR { return CanonicalNaN(d, v); });
}

// Two vector accumulators per row, a zero-padded tail, then the lanes' sum.
inline void RowMeansFast(const float* x, int64_t rows, int64_t n, float* y) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const float inv = 1.0f / static_cast<float>(n);
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * n;
    auto a0 = hn::Zero(d), a1 = hn::Zero(d);
    int64_t j = 0;
    for (; j + 2 * lanes <= n; j += 2 * lanes) {
      a0 = hn::Add(a0, hn::LoadU(d, row + j));
      a1 = hn::Add(a1, hn::LoadU(d, row + j + lanes));
    }
    for (; j + lanes <= n; j += lanes) a0 = hn::Add(a0, hn::LoadU(d, row + j));
    if (j < n) a1 = hn::Add(a1, LoadTail(d, row + j, static_cast<size_t>(n - j)));
    y[r] = kern::canon(hn::GetLane(hn::SumOfLanes(d, hn::Add(a0, a1))) * inv);
  }
}

inline constexpr PoolFns kPoolFns{&MaxWindow, &MaxWindowFinal, &MaxPairs, &SumTaps, &CopyCanonical, &RowMeansFast};

}  // namespace onemodel::kern::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif
