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

inline void MaxTaps(const float* row, int64_t stride, int64_t taps, int64_t dilation, float* best, int64_t count) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  auto update = [](float v, float b) { return ((v > b) | (b != b)) ? v : b; };
  for (int64_t t = 0; t < taps; ++t) {
    const float* tap = row + t * dilation;
    int64_t q = 0;
    if (stride == 1) {
      for (; q + lanes <= count; q += lanes) {
        const auto v = hn::LoadU(d, tap + q), b = hn::LoadU(d, best + q);
        hn::StoreU(hn::IfThenElse(hn::Or(hn::Gt(v, b), hn::IsNaN(b)), v, b), d, best + q);
      }
    } else if (stride == 2) {
      // Pairs (tap[2q], tap[2q + 1]) split into lanes; the odd element of the last pair is read too, so the
      // vector loop stops one output early.
      for (; q + lanes < count; q += lanes) {
        hn::Vec<decltype(d)> v, odd;
        hn::LoadInterleaved2(d, tap + 2 * q, v, odd);
        const auto b = hn::LoadU(d, best + q);
        hn::StoreU(hn::IfThenElse(hn::Or(hn::Gt(v, b), hn::IsNaN(b)), v, b), d, best + q);
      }
    }
    for (; q < count; ++q) best[q] = update(tap[q * stride], best[q]);
  }
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
  auto update = [](float v, float b) { return ((v > b) | (b != b)) ? v : b; };
  for (int64_t q = 0; q < count; ++q) {
    float best = std::numeric_limits<float>::quiet_NaN();
    for (int64_t r = 0; r < nrows; ++r) best = update(rows[r][2 * q + 1], update(rows[r][2 * q], best));
    y[q] = kernels::canon(best);
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

inline constexpr PoolFns kPoolFns{&MaxTaps, &MaxPairs, &SumTaps};

}  // namespace onemodel::kern::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif
