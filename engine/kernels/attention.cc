// Dispatch for kernels/attention.h: the Highway per-target pass, then the work-item loop over the pool.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/attention.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/attention-inl.h"

#if HWY_ONCE
#include "kernels/attention.h"
#include "kernels/per_target.h"

namespace onemodel::kern {

int64_t attention_items(const AttentionArgs& a) {
  if (a.batch <= 0 || a.heads <= 0 || a.q_len <= 0) return 0;
  return a.batch * a.heads * ((a.q_len + kAttentionQB - 1) / kAttentionQB);
}

void attention(Isa isa, bool exact, const AttentionArgs& a, ThreadPool* pool) {
  const int64_t items = attention_items(a);
  if (items == 0) return;
  const auto* fns = ONEMODEL_PER_TARGET(kAttentionFns, isa);
  // About 0.5 ns per multiply-add of the two products (a rough estimate; it only caps how many threads wake).
  const double work_ns = static_cast<double>(items) * kAttentionQB * static_cast<double>(a.k_len) *
                         static_cast<double>(a.d) * 2.0 * 0.5;
  parallel_for(pool, items, work_ns, [&](int64_t item) { fns->item(exact, a, item); });
}

}  // namespace onemodel::kern
#endif
