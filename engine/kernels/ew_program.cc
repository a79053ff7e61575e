// Dispatch for kernels/ew_program.h: the Highway per-target pass, then the one entry point.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/ew_program.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/ew_program-inl.h"

#if HWY_ONCE
#include "kernels/per_target.h"

namespace onemodel::kern {

void ew_block(Isa isa, bool exact, const ir::EwProgram& prog, const EwOperand* in, int64_t n, float* out) {
  ONEMODEL_PER_TARGET(kEwFns, isa)->block(isa, exact, prog, in, n, out);
}

}  // namespace onemodel::kern
#endif
