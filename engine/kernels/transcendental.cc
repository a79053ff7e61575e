// Dispatch for kernels/transcendental.h: the Highway per-target pass, then the entry points.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/transcendental.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/transcendental-inl.h"

#if HWY_ONCE
#include "kernels/per_target.h"
#include "kernels/transcendental.h"

namespace onemodel::kern {
namespace {
const TranscendentalFns& fns(Isa isa) { return *ONEMODEL_PER_TARGET(kTranscendentalFns, isa); }
}  // namespace

void exp_f32(Isa isa, bool exact, const float* x, float* y, int64_t n) { fns(isa).exp(exact, x, y, n); }
void exp_nonpositive_f32(Isa isa, bool exact, const float* x, float* y, int64_t n) {
  fns(isa).exp_nonpositive(exact, x, y, n);
}
void log_f32(Isa isa, bool exact, const float* x, float* y, int64_t n) { fns(isa).log(exact, x, y, n); }
void sigmoid_f32(Isa isa, bool exact, const float* x, float* y, int64_t n) { fns(isa).sigmoid(exact, x, y, n); }
void tanh_f32(Isa isa, bool exact, const float* x, float* y, int64_t n) { fns(isa).tanh(exact, x, y, n); }
void erf_f32(Isa isa, bool exact, const float* x, float* y, int64_t n) { fns(isa).erf(exact, x, y, n); }
void one_plus_erf_f32(Isa isa, bool exact, const float* x, float* y, int64_t n) {
  fns(isa).one_plus_erf(exact, x, y, n);
}
void gelu_erf_f32(Isa isa, bool exact, const float* x, float* y, int64_t n) { fns(isa).gelu_erf(exact, x, y, n); }
void gelu_tanh_f32(Isa isa, bool exact, const float* x, float* y, int64_t n) { fns(isa).gelu_tanh(exact, x, y, n); }

}  // namespace onemodel::kern
#endif
