// kernels/winograd.h: the per-target transforms (winograd-inl.h), then the weight transform and the driver.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/winograd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/winograd-inl.h"

#if HWY_ONCE
#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "kernels/gemm.h"
#include "kernels/per_target.h"
#include "kernels/scratch_slots.h"

namespace onemodel::kern {

namespace {

// Tiles per block: the block's transformed tiles (16 x in_channels x tiles) and products (16 x out_channels x
// tiles) stay in L2 while the 16 products read and write them. A block is whole rows of tiles.
constexpr int64_t kTilesPerBlock = 256;

struct Tiling {
  int64_t th, tw;  // tiles down and across (2x2 outputs each)
  int64_t hp, wp;  // the zero-padded input plane every tile reads inside
  int64_t rows;    // tile rows per block
  int64_t vs, ps;  // floats from one xi's V (c x nb) / product (m x nb) to the next, nb of a full block
};

// A stride of an odd number of 64-byte lines. The 16 V_xi (and M_xi) of a block are written and read together;
// at a stride of a multiple of 4 KiB they all fall in the same L1 set. ResNet-50's 64-channel 56x56 layer
// with blocks of 4 tile rows (64 x 112 floats per xi, 7 x 4 KiB) took 2.7 ms against 1.7 ms at 7 rows.
int64_t odd_lines(int64_t floats) {
  const int64_t lines = (floats + 15) / 16;
  return 16 * (lines % 2 == 0 ? lines + 1 : lines);
}

Tiling tiling(const ConvGeometry& g) {
  Tiling t{};
  t.th = (g.out[1] + 1) / 2;
  t.tw = (g.out[2] + 1) / 2;
  t.hp = 2 * t.th + 2;
  t.wp = 2 * t.tw + 2;
  const int64_t most = std::clamp<int64_t>(kTilesPerBlock / t.tw, 1, t.th);
  const int64_t blocks = (t.th + most - 1) / most;
  // Blocks of equal height (within one row): ResNet-50's 56x56 layers were 9, 9, 9 and 1 tile rows, so two
  // threads ran 2 and 1.1 blocks' worth.
  t.rows = (t.th + blocks - 1) / blocks;
  t.vs = odd_lines(g.in_channels * t.rows * t.tw);
  t.ps = odd_lines(g.out_channels * t.rows * t.tw);
  return t;
}

}  // namespace

struct WinogradWeights {
  Isa isa;
  int64_t out_channels, in_channels;
  std::array<std::shared_ptr<const PackedA>, 16> u;  // U_xi, xi = 4 * row + column of the 4x4 transform
};

bool winograd_applies(const ConvGeometry& g) {
  // Depth 1 in and out with one depth tap and no depth padding: a padded depth tap would read +0 everywhere.
  return g.groups == 1 && g.in[0] == 1 && g.out[0] == 1 && g.kernel[0] == 1 && g.pad_before[0] == 0 &&
         g.kernel[1] == 3 && g.kernel[2] == 3 && g.stride[1] == 1 && g.stride[2] == 1 && g.dilation[1] == 1 &&
         g.dilation[2] == 1 && g.in_channels >= 16 && g.out_channels >= 16 && g.out[1] >= 8 && g.out[2] >= 8;
}

std::shared_ptr<const WinogradWeights> winograd_pack(Isa isa, const ConvGeometry& g, const float* w) {
  const int64_t m = g.out_channels, c = g.in_channels;
  for (int64_t i = 0; i < m * c * 9; ++i)
    if (!std::isfinite(w[i])) return nullptr;
  auto p = std::make_shared<WinogradWeights>();
  p->isa = isa;
  p->out_channels = m;
  p->in_channels = c;
  // U = G g G^T with G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1], in double, rounded once.
  static constexpr double G[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  std::vector<float> u(static_cast<size_t>(16 * m * c));
  for (int64_t o = 0; o < m; ++o)
    for (int64_t i = 0; i < c; ++i) {
      const float* k = w + (o * c + i) * 9;
      double t[4][3];
      for (int a = 0; a < 4; ++a)
        for (int b = 0; b < 3; ++b) t[a][b] = G[a][0] * k[0 * 3 + b] + G[a][1] * k[1 * 3 + b] + G[a][2] * k[2 * 3 + b];
      for (int a = 0; a < 4; ++a)
        for (int b = 0; b < 4; ++b)
          u[static_cast<size_t>(((4 * a + b) * m + o) * c + i)] =
              static_cast<float>(t[a][0] * G[b][0] + t[a][1] * G[b][1] + t[a][2] * G[b][2]);
    }
  for (int xi = 0; xi < 16; ++xi)
    p->u[static_cast<size_t>(xi)] = pack_a_f32(isa, m, c, MatrixView{u.data() + xi * m * c, c, 1});
  return p;
}

int64_t winograd_scratch_floats(const ConvGeometry& g, int threads) {
  const Tiling t = tiling(g);
  return g.in_channels * t.hp * t.wp + int64_t{slot_count(threads)} * 16 * (t.vs + t.ps);
}

// Block b (tile rows [b * rows, ...)): V_xi [c x nb], then the 16 products M_xi = U_xi V_xi [m x nb], then each
// output channel's rows. With a pool, each of the three stages runs in parallel; without, all on this thread.
void run_block(const WinogradFns& fns, Isa isa, const ConvGeometry& g, const Tiling& t, const WinogradWeights& u,
               const float* xp, float* v, int64_t b, float* yn, int64_t n, const ConvEpilogue* epilogue,
               ThreadPool* pool) {
  const int64_t c = g.in_channels, m = g.out_channels, oh = g.out[1], ow = g.out[2], os = oh * ow;
  const int64_t ty0 = b * t.rows, ty1 = std::min(t.th, ty0 + t.rows), nb = (ty1 - ty0) * t.tw;
  float* prod = v + 16 * t.vs;
  parallel_for(pool, c, 8.0 * double(c * nb),
               [&](int64_t ci) { fns.input(xp + ci * t.hp * t.wp, t.wp, t.tw, ty0, ty1, v + ci * nb, t.vs); });
  parallel_for(pool, 16, 16.0 * double(m) * double(c) * double(nb) / 40.0, [&](int64_t xi) {
    PanelSource src{nullptr, nullptr};  // read in place: `fill` is never called
    src.direct = v + xi * t.vs;
    src.ldb = nb;
    gemm_f32_panels(isa, false, *u.u[static_cast<size_t>(xi)], nb, src, prod + xi * t.ps, nb, nullptr);
  });
  const int64_t r0 = 2 * ty0, r1 = std::min(oh, 2 * ty1);
  parallel_for(pool, m, 6.0 * double(m * nb), [&](int64_t mi) {
    float* plane = yn + mi * os;
    fns.output(prod + mi * nb, t.ps, t.tw, ty0, ty1, plane, oh, ow);
    if (epilogue) epilogue->apply(epilogue->ctx, n, mi, r0 * ow, (r1 - r0) * ow, plane + r0 * ow);
  });
}

// With at least two blocks of tile rows per thread, or a whole number of blocks per thread, blocks run in
// parallel, each on one thread from its input transform to its outputs with a scratch slot of its own; with
// fewer (ResNet-50's 28x28 and 14x14 layers are one block), each block's stages run in parallel instead
// (PP-OCRv4 det's 96 -> 24 layers at 160x160 ran 81 such parallel loops). Two blocks on two threads ran stage by
// stage before and were slower than one thread (det's 96 -> 24 layer at 40x40: 0.51 ms at 1 thread, 0.53 at 2,
// now 0.33). A block's arithmetic does not depend on which thread runs it, so the bits do not either.
bool winograd_conv_f32(Isa isa, const ConvGeometry& g, int64_t n, const float* x, const WinogradWeights& u, float* y,
                       float* scratch, ThreadPool* pool, const ConvEpilogue* epilogue) {
  const WinogradFns& fns = *ONEMODEL_PER_TARGET(kWinogradFns, isa);
  const Tiling t = tiling(g);
  const int64_t c = g.in_channels, m = g.out_channels, os = g.out[1] * g.out[2];
  const int64_t slot_size = 16 * (t.vs + t.ps);
  float* xp = scratch;
  float* slots_base = xp + c * t.hp * t.wp;
  if (!pad_planes_f32(g, t.hp, t.wp, c, x + n * c * g.in_size(), xp, pool)) return false;
  float* yn = y + n * m * os;
  const int64_t blocks = (t.th + t.rows - 1) / t.rows;
  const double work = 16.0 * double(m) * double(c) * double(t.th * t.tw) / 40.0 + 14.0 * double((c + m) * t.th * t.tw);
  const int threads = pool ? pool->threads() : 1;
  if (blocks >= 2 * threads || (blocks >= threads && blocks % threads == 0)) {
    Slots slots(slot_count(threads));
    parallel_for(pool, blocks, work, [&](int64_t b) {
      const int slot = slots.acquire();
      run_block(fns, isa, g, t, u, xp, slots_base + slot * slot_size, b, yn, n, epilogue, nullptr);
      slots.release(slot);
    });
  } else {
    for (int64_t b = 0; b < blocks; ++b) run_block(fns, isa, g, t, u, xp, slots_base, b, yn, n, epilogue, pool);
  }
  return true;
}

}  // namespace onemodel::kern
#endif
