// Per-target code for kernels/transcendental.h: one loop template over the vector functions of vmath-inl.h.
// The tail runs the same vector code on a zero-padded copy, so an element's result never depends on its
// position in the array (fast mode included).
#if defined(ONEMODEL_KERNELS_TRANSCENDENTAL_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEMODEL_KERNELS_TRANSCENDENTAL_INL_H_
#undef ONEMODEL_KERNELS_TRANSCENDENTAL_INL_H_
#else
#define ONEMODEL_KERNELS_TRANSCENDENTAL_INL_H_
#endif

#include "hwy/highway.h"
#include "kernels/simd_common-inl.h"
#include "kernels/transcendental.h"
#include "kernels/vmath-inl.h"

HWY_BEFORE_NAMESPACE();
namespace onemodel::kern::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// One array entry point per function: the exact or fast instantiation of a vmath-inl.h template.
#define ONEMODEL_TRANSC_ARRAY(Name, Fn)                                           \
  inline void Name(bool exact, const float* x, float* y, int64_t n) {             \
    if (exact) {                                                                  \
      MapArray(x, y, n, [](auto d, auto v) HWY_ATTR { return Fn<true>(d, v); });  \
    } else {                                                                      \
      MapArray(x, y, n, [](auto d, auto v) HWY_ATTR { return Fn<false>(d, v); }); \
    }                                                                             \
  }
ONEMODEL_TRANSC_ARRAY(ExpArray, Exp)
ONEMODEL_TRANSC_ARRAY(ExpNonPositiveArray, ExpNonPositive)
ONEMODEL_TRANSC_ARRAY(LogArray, Log)
ONEMODEL_TRANSC_ARRAY(SigmoidArray, Sigmoid)
ONEMODEL_TRANSC_ARRAY(TanhArray, Tanh)
ONEMODEL_TRANSC_ARRAY(ErfArray, Erf)
ONEMODEL_TRANSC_ARRAY(OnePlusErfArray, OnePlusErf)
ONEMODEL_TRANSC_ARRAY(GeluErfArray, GeluErf)
ONEMODEL_TRANSC_ARRAY(GeluTanhArray, GeluTanh)
#undef ONEMODEL_TRANSC_ARRAY

inline constexpr TranscendentalFns kTranscendentalFns{&ExpArray,        &ExpNonPositiveArray, &LogArray,
                                                      &SigmoidArray,    &TanhArray,           &ErfArray,
                                                      &OnePlusErfArray, &GeluErfArray,        &GeluTanhArray};

}  // namespace onemodel::kern::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif
