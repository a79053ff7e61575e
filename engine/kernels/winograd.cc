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
#include "onemodel/error.h"

namespace onemodel::kern {

namespace {

// The most transformed positions of a tile: F(4x4, 3x3)'s 6 x 6.
constexpr int64_t kMaxPositions = 36;

// Transformed tiles per block: a block's V (positions x in_channels x tiles) and products (positions x
// out_channels x tiles) stay in L2 while its products read and write them. A block is whole rows of tiles.
constexpr int64_t kPositionTilesPerBlock = 16 * 256;

struct Tiling {
  int64_t tile, alpha, positions;  // outputs per tile side (2 or 4), the input tile's side, alpha^2
  int64_t th, tw;                  // tiles down and across
  int64_t hp, wp;                  // the zero-padded input plane every tile reads inside
  int64_t rows;                    // tile rows per block
  int64_t vs, ps;                  // floats from one xi's V (c x ld) / product (m x ld) to the next, ld of a full block
};

// A block's rows of tiles in V_xi and M_xi are ld = nb + kWinogradRowRoom floats apart (nb its tiles): the
// transforms write and read whole vectors of tiles, up to lanes - 1 past a row. kWinogradReadRoom floats after
// the padded planes are never written, so no other thread writes what the input transform's last vectors read.
constexpr int64_t kRoom = kWinogradRowRoom, kReadRoom = kWinogradReadRoom;

// A stride of an odd number of 64-byte lines. The 36 V_xi (and M_xi) of a block are written and read together;
// at a stride of a multiple of 4 KiB they all fall in the same L1 set. ResNet-50's 64-channel 56x56 layer
// with blocks of 4 tile rows (64 x 112 floats per xi, 7 x 4 KiB) took 2.7 ms against 1.7 ms at 7 rows.
int64_t odd_lines(int64_t floats) {
  const int64_t lines = (floats + 15) / 16;
  return 16 * (lines % 2 == 0 ? lines + 1 : lines);
}

Tiling tiling(const ConvGeometry& g) {
  Tiling t{};
  t.tile = winograd_tile(g);
  t.alpha = t.tile + 2;
  t.positions = t.alpha * t.alpha;
  t.th = (g.out[1] + t.tile - 1) / t.tile;
  t.tw = (g.out[2] + t.tile - 1) / t.tile;
  t.hp = t.tile * t.th + 2;
  t.wp = t.tile * t.tw + 2;
  const int64_t most = std::clamp<int64_t>(kPositionTilesPerBlock / t.positions / t.tw, 1, t.th);
  const int64_t blocks = (t.th + most - 1) / most;
  // Blocks of equal height (within one row): ResNet-50's 56x56 layers were 9, 9, 9 and 1 tile rows, so two
  // threads ran 2 and 1.1 blocks' worth.
  t.rows = (t.th + blocks - 1) / blocks;
  t.vs = odd_lines(g.in_channels * (t.rows * t.tw + kRoom));
  t.ps = odd_lines(g.out_channels * (t.rows * t.tw + kRoom));
  return t;
}

}  // namespace

struct WinogradWeights {
  Isa isa;
  int64_t out_channels, in_channels;
  int64_t tile;  // 2 or 4: F(tile x tile, 3x3)
  // U_xi, xi = alpha * row + column of the alpha x alpha transform (alpha = tile + 2)
  std::array<std::shared_ptr<const PackedA>, kMaxPositions> u;
};

// F(4x4, 3x3) does 4x fewer multiply-adds than the direct sum (F(2x2, 3x3): 2.25x), but its transformed weights
// are 36/9 of the weights (F(2x2): 16/9), read from memory once per image: with few tiles they outweigh the
// products saved. One thread, AVX-512, conv_f32 alone, minima of three alternated, F(2x2) against F(4x4) with the
// caches flushed between calls (the weights from memory) / without: ResNet-50's 256 -> 256 at 14 x 14 (16 tiles
// of 4x4) 0.92 / 1.03 ms, 0.82 / 0.83 ms; its 128 -> 128 at 28 x 28 (49 tiles) 0.81 / 0.78, 0.65 / 0.57; its
// 64 -> 64 at 56 x 56 0.89 / 0.69, 0.77 / 0.58. So F(4x4) where the image has at least 36 of its tiles, or its
// transformed weights fit in 1 MiB.
int64_t winograd_tile(const ConvGeometry& g) {
  const int64_t tiles4 = ((g.out[1] + 3) / 4) * ((g.out[2] + 3) / 4);
  const int64_t bytes4 = 36 * g.out_channels * g.in_channels * int64_t{sizeof(float)};
  return tiles4 >= 36 || bytes4 <= (int64_t{1} << 20) ? 4 : 2;
}

int64_t winograd_packed_tile(const WinogradWeights& u) { return u.tile; }

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
  p->tile = winograd_tile(g);
  // U = G g G^T (kernels-gemm.md section 11's G of each size), in double, rounded once.
  static constexpr double G2[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  static constexpr double G4[6][3] = {{1.0 / 4, 0, 0},
                                      {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                      {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                      {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                      {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                      {0, 0, 1}};
  const double(*G)[3] = p->tile == 4 ? G4 : G2;
  const int alpha = static_cast<int>(p->tile) + 2, positions = alpha * alpha;
  std::vector<float> u(static_cast<size_t>(positions * m * c));
  for (int64_t o = 0; o < m; ++o)
    for (int64_t i = 0; i < c; ++i) {
      const float* k = w + (o * c + i) * 9;
      double t[6][3];
      for (int a = 0; a < alpha; ++a)
        for (int b = 0; b < 3; ++b) t[a][b] = G[a][0] * k[0 * 3 + b] + G[a][1] * k[1 * 3 + b] + G[a][2] * k[2 * 3 + b];
      for (int a = 0; a < alpha; ++a)
        for (int b = 0; b < alpha; ++b)
          u[static_cast<size_t>(((alpha * a + b) * m + o) * c + i)] =
              static_cast<float>(t[a][0] * G[b][0] + t[a][1] * G[b][1] + t[a][2] * G[b][2]);
    }
  for (int xi = 0; xi < positions; ++xi)
    p->u[static_cast<size_t>(xi)] = pack_a_f32(isa, m, c, MatrixView{u.data() + xi * m * c, c, 1});
  return p;
}

int64_t winograd_scratch_floats(const ConvGeometry& g, int threads) {
  const Tiling t = tiling(g);
  return g.in_channels * t.hp * t.wp + kReadRoom + int64_t{slot_count(threads)} * t.positions * (t.vs + t.ps);
}

// Block b (tile rows [b * rows, ...)): V_xi [c x nb], then the products M_xi = U_xi V_xi [m x nb], then each
// output channel's rows. With a pool, each of the three stages runs in parallel; without, all on this thread.
void run_block(const WinogradFns& fns, Isa isa, const ConvGeometry& g, const Tiling& t, const WinogradWeights& u,
               const float* xp, float* v, int64_t b, float* yn, int64_t n, const ConvEpilogue* epilogue,
               ThreadPool* pool) {
  const int64_t c = g.in_channels, m = g.out_channels, oh = g.out[1], ow = g.out[2], os = oh * ow;
  const int64_t ty0 = b * t.rows, ty1 = std::min(t.th, ty0 + t.rows), nb = (ty1 - ty0) * t.tw, ld = nb + kRoom;
  float* prod = v + t.positions * t.vs;
  parallel_for(pool, c, 0.5 * double(t.positions * c * nb),
               [&](int64_t ci) { fns.input(xp + ci * t.hp * t.wp, t.wp, t.tw, ty0, ty1, v + ci * ld, t.vs); });
  parallel_for(pool, t.positions, double(t.positions) * double(m) * double(c) * double(nb) / 40.0, [&](int64_t xi) {
    PanelSource src{nullptr, nullptr};  // read in place: `fill` is never called
    src.direct = v + xi * t.vs;
    src.ldb = ld;
    gemm_f32_panels(isa, false, *u.u[static_cast<size_t>(xi)], nb, src, prod + xi * t.ps, ld, nullptr);
  });
  const int64_t r0 = t.tile * ty0, r1 = std::min(oh, t.tile * ty1);
  parallel_for(pool, m, 0.375 * double(t.positions * m * nb), [&](int64_t mi) {
    float* plane = yn + mi * os;
    fns.output(prod + mi * ld, t.ps, t.tw, ty0, ty1, plane, oh, ow);
    if (epilogue) epilogue->apply(epilogue->ctx, n, mi, r0 * ow, (r1 - r0) * ow, plane + r0 * ow);
  });
}

// With at least two blocks of tile rows per thread, or a whole number of blocks per thread, blocks run in
// parallel, each on one thread from its input transform to its outputs with a scratch slot of its own; with
// fewer (ResNet-50's 28x28 and 14x14 layers are one block), each block's stages run in parallel instead
// (PP-OCRv4 det's 96 -> 24 layers at 160x160 ran 81 such parallel loops). Two blocks on two threads ran stage by
// stage before and were slower than one thread (det's 96 -> 24 layer at 40x40: 0.51 ms at 1 thread, 0.53 at 2,
// now 0.33). A block's arithmetic does not depend on which thread runs it, so the bits do not either. Cutting one
// block into one per thread instead read every weight once per thread: ResNet-50's 256 -> 256 at 14 x 14 at two
// threads 0.49 -> 0.52 ms, 0.61 -> 0.73 with the weights from memory (alone, alternated minima; not kept).
bool winograd_conv_f32(Isa isa, const ConvGeometry& g, int64_t n, const float* x, const WinogradWeights& u, float* y,
                       float* scratch, ThreadPool* pool, const ConvEpilogue* epilogue) {
  const Tiling t = tiling(g);
  if (u.tile != t.tile) throw Error(ErrorKind::Internal, "winograd_conv_f32: weights transformed for another tile");
  const WinogradFns& fns = (*ONEMODEL_PER_TARGET(kWinogradFns, isa))[t.tile == 4 ? 1 : 0];
  const int64_t c = g.in_channels, m = g.out_channels, os = g.out[1] * g.out[2];
  const int64_t slot_size = t.positions * (t.vs + t.ps);
  float* xp = scratch;
  float* slots_base = xp + c * t.hp * t.wp + kReadRoom;
  if (!pad_planes_f32(g, t.hp, t.wp, c, x + n * c * g.in_size(), xp, pool)) return false;
  float* yn = y + n * m * os;
  const int threads = pool ? pool->threads() : 1;
  const int64_t blocks = (t.th + t.rows - 1) / t.rows;
  const double work = double(t.positions) * double(m) * double(c) * double(t.th * t.tw) / 40.0 +
                      0.875 * double(t.positions * (c + m) * t.th * t.tw);
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
