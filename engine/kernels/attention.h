// Fused attention (kernels-attention.md): O[i] = softmax(scale * Q[i] K^T + mask[i]) V for every batch b, head
// h and query row i, in blocks of QB = 32 query rows and KB = 64 keys with online rescaling. The exact flavour
// is the spec's definition bit for bit on every target and thread count (score dots in increasing index from
// +0, ExpNonPositive, the 16-partial block sum, unfused products, out = acc / l, canonical NaN); the fast
// flavour fuses acc + a*b, uses the fast exponential and out = acc * (1/l), and is deterministic per machine.
#pragma once
#include <cstdint>

#include "base/thread_pool.h"
#include "kernels/isa.h"

namespace onemodel::kern {

inline constexpr int64_t kAttentionQB = 32;  // query rows per work item (part of the exact definition)
inline constexpr int64_t kAttentionKB = 64;  // keys per block: where the online softmax rescales

// Strided operands: element (b, h, row, x) of Q, K, V, O is at b*sb + h*sh + row*sr + x (x contiguous). The
// optional mask element (b, h, i, j) is at b*sb + h*sh + i*si + j*sj (strides of 0 broadcast).
struct AttentionArgs {
  int64_t batch = 0, heads = 0, q_len = 0, k_len = 0, d = 0;
  float scale = 1.0f;
  const float* q = nullptr;
  int64_t q_sb = 0, q_sh = 0, q_sr = 0;
  const float* k = nullptr;
  int64_t k_sb = 0, k_sh = 0, k_sr = 0;
  const float* v = nullptr;
  int64_t v_sb = 0, v_sh = 0, v_sr = 0;
  const float* mask = nullptr;  // null: no mask (+0)
  int64_t m_sb = 0, m_sh = 0, m_si = 0, m_sj = 0;
  float* out = nullptr;
  int64_t o_sb = 0, o_sh = 0, o_sr = 0;
};

// Work items (b, h, block of QB query rows): batch * heads * ceil(q_len / QB).
int64_t attention_items(const AttentionArgs& a);

// Runs every work item, spread over `pool` (null: the calling thread). Items write disjoint rows, so the
// result does not depend on the pool.
void attention(Isa isa, bool exact, const AttentionArgs& a, ThreadPool* pool);

struct AttentionFns {
  void (*item)(bool exact, const AttentionArgs& a, int64_t item);
};

}  // namespace onemodel::kern
