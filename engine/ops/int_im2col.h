// The im2col matrix of the int16 integer product (ConvInteger / QLinearConv where the CPU has no byte
// product: wasm, AVX2 and below, NEON) built from a padded copy of the input (docs/int8.md "Integer product
// kernel"). The copy holds x - zx as int16 with the window's padding as zeros (what a padding tap adds), so
// every tap of every output position is an in-bounds read at a fixed offset, and for stride 1 a strip's
// columns within one output row are consecutive values: each pair of k rows of a strip is two contiguous
// reads interleaved, with no per-row bookkeeping. Row by row with bounds (quant_products.cc build_group) cost
// ISNet small 21% of its wasm run.
#pragma once
#include <cstdint>
#include <vector>

#include "base/thread_pool.h"
#include "kernels/isa.h"
#include "ops/window.h"

namespace onemodel::rt {

// One image and group of the input, padded to dp x hp x wp per channel. tap[p] is the offset of k row
// p = (c, kz, ky, kx) from an output position's first tap (its channel 0, kz = ky = kx = 0).
struct PaddedInput {
  std::vector<int16_t> data;
  int64_t dp = 0, hp = 0, wp = 0;
  std::vector<int64_t> tap;
};

// Whether the padded copy of a group stays near the input's size (padding at most doubles a plane, plus a
// little for small planes): hostile padding keeps the bounded row builder instead of allocating for it.
bool padded_input_fits(const WindowGeom& g);

// Fills `out` for the cg channels at xg (planes of g.in_plane() values, Q = uint8_t or int8_t) and the taps
// of a cg-channel group.
template <class Q>
void pad_input(const WindowGeom& g, int64_t cg, const Q* xg, int32_t zx, ThreadPool* pool, PaddedInput& out);

// Columns [j0, j0 + cols) of the im2col matrix (wsz k rows) in the packed layout of kernels/qgemm.h (strips
// of nr columns, `pair` k values per int32 lane, kq lane groups, padding 0), at pb.
void build_padded_strips(kern::Isa isa, const WindowGeom& g, const PaddedInput& in, int64_t nr, int64_t pair,
                         int64_t wsz, int64_t kq, int64_t j0, int64_t cols, int16_t* pb, ThreadPool* pool);

}  // namespace onemodel::rt
