// Convolution drivers (kernels/conv.h): path choice, im2col and col2im, the depthwise chunking and the direct
// fallback. Data movement and scalar loops only; the arithmetic hot loops are the matrix product (gemm.h) and
// the per-target depthwise kernel (depthwise-inl.h). Chunk sizes are constants of the shape, never of the
// thread count, and every chunk writes only its own outputs, so results do not depend on the threads.
#include "kernels/conv.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include "base/int_div.h"
#include "kernels/bias.h"
#include "kernels/exact_math.h"
#include "kernels/gemm.h"
#include "kernels/scratch_slots.h"
#include "kernels/winograd.h"
#include "onemodel/error.h"

namespace onemodel::kern {
namespace {

constexpr int64_t kMaxDepthwiseStrideW = 8;

using kern::canon;  // NaN -> 0x7FC00000

// The range [lo, hi) of positions i in [0, count) for which i * stride + offset lies in [0, limit).
void valid_range(int64_t count, int64_t stride, int64_t offset, int64_t limit, int64_t& lo, int64_t& hi) {
  lo = std::clamp<int64_t>(ceil_div(-offset, stride), 0, count);
  hi = std::clamp<int64_t>(ceil_div(limit - offset, stride), lo, count);
}

// A plane walk that may ignore the depth axis: depth 1 in and out, one depth tap, no depth padding (a 3-D
// convolution of depth 1 with depth taps reads padding there).
bool flat_depth(const ConvGeometry& g) {
  return g.in[0] == 1 && g.out[0] == 1 && g.kernel[0] == 1 && g.pad_before[0] == 0;
}

}  // namespace

void apply_epilogue_planes(const ConvEpilogue& ep, int64_t n, int64_t oc0, int64_t planes, int64_t size, float* y) {
  if (ep.apply_planes) return ep.apply_planes(ep.ctx, n, oc0, planes, size, y);
  for (int64_t p = 0; p < planes; ++p) ep.apply(ep.ctx, n, oc0 + p, 0, size, y + p * size);
}

namespace {

// Planes [q0, q1) (q = image * out_channels + channel, contiguous in y) through the epilogue, split where the
// image changes.
void epilogue_plane_range(const ConvEpilogue& ep, const ConvGeometry& g, int64_t q0, int64_t q1, float* y) {
  const int64_t os = g.out_size();
  while (q0 < q1) {
    const int64_t n = q0 / g.out_channels, oc = q0 % g.out_channels;
    const int64_t end = std::min(q1, (n + 1) * g.out_channels);
    apply_epilogue_planes(ep, n, oc, end - q0, os, y + q0 * os);
    q0 = end;
  }
}

// One group per input channel. A single-channel convolution (groups == in_channels == 1) is not taken as
// depthwise: its many output channels (a 1-D filter bank such as an STFT, 257 x 512 taps) are a plain matrix
// product over the taps, which the depthwise kernels' one-plane-at-a-time loops run ~30x slower (measured:
// openWakeWord's melspectrogram Conv 2.8 ms on DepthwiseDirect). Both paths give the same exact bits.
bool depthwise_shape(const ConvGeometry& g) {
  return g.groups > 1 && g.groups == g.in_channels && g.out_channels % g.in_channels == 0;
}

// Vector lanes of float on a target.
int64_t float_lanes(Isa isa) {
  switch (isa) {
    case Isa::Avx512: return 16;
    case Isa::Avx2: return 8;
    case Isa::Scalar: return 1;
    default: return 4;
  }
}

// The four-row walk (DepthwisePlane::rows): square 3x3, or 5x5 where 16 lanes mean AVX-512's 32 registers,
// height stride 1 or 2, height dilation 1.
bool rows_walk(Isa isa, const ConvGeometry& g) {
  const int64_t k = g.kernel[1];
  return g.kernel[2] == k && (k == 3 || (k == 5 && float_lanes(isa) == 16)) && g.dilation[1] == 1 && g.stride[1] <= 2;
}

// Flat planes, on targets of 8 or 16 lanes: rows narrower than 8 (a row at a time ran 4-lane vectors, two per
// row of 7), and height strides above 1 with rows narrower than two full vectors unless the four-row walk
// takes them (MobileNetV3 in-model, AVX-512, four-row walk / flat: 56 -> 28 5x5 stride 2 0.83, 28 -> 14 3x3
// stride 2 0.95; kernels-depthwise.md section 3 has the figures against the older walk).
bool flat_plane(Isa isa, const ConvGeometry& g) {
  const int64_t lanes = float_lanes(isa), ow = g.out[2];
  return lanes >= 8 && (ow < 8 || (g.stride[1] > 1 && ow < 2 * lanes && !rows_walk(isa, g)));
}

// The 2-D depthwise plane of a shape whose depth axis is trivial; `flat`: walked as one run of positions,
// with row phases when the height stride is above 1.
DepthwisePlane make_plane(const ConvGeometry& g, bool flat) {
  DepthwisePlane p{};
  p.in_h = g.in[1], p.in_w = g.in[2], p.out_h = g.out[1], p.out_w = g.out[2];
  p.k_h = g.kernel[1], p.k_w = g.kernel[2], p.s_h = g.stride[1], p.s_w = g.stride[2];
  p.d_h = g.dilation[1], p.d_w = g.dilation[2], p.pad_t = g.pad_before[1], p.pad_l = g.pad_before[2];
  p.padded_h = (p.out_h - 1) * p.s_h + (p.k_h - 1) * p.d_h + 1;
  p.padded_w = (p.out_w - 1) * p.s_w + (p.k_w - 1) * p.d_w + 1;
  p.phase_w = ceil_div(p.padded_w, p.s_w);
  p.flat = flat;
  p.ph_h = flat ? p.s_h : 1;
  p.phase_h = ceil_div(p.padded_h, p.ph_h);
  p.in_place =
      p.s_w == 1 && p.ph_h == 1 && p.pad_t == 0 && p.pad_l == 0 && p.padded_h <= p.in_h && p.padded_w <= p.in_w;
  return p;
}

DepthwisePlane make_plane(Isa isa, const ConvGeometry& g) {
  DepthwisePlane p = make_plane(g, flat_plane(isa, g));
  p.rows = !p.flat && rows_walk(isa, g);
  return p;
}

bool blocked_plane(Isa isa, const ConvGeometry& g);
int64_t blocked_floats(const DepthwisePlane& p, int64_t lanes);

// Scratch of one slot: the phase planes and the row temporary, then a flat plane's output run.
int64_t phase_floats(const DepthwisePlane& p) {
  const int64_t rs = p.in_place ? p.in_w : p.phase_w;
  const int64_t tmp = p.flat ? (p.out_h - 1) * rs + p.out_w : 0;
  return (p.in_place ? 0 : p.s_w * p.ph_h * p.phase_h * p.phase_w + p.s_w * p.phase_w) + tmp;
}

// Enough for whichever layout the target picks (the scratch is sized without knowing it; only the 8- and
// 16-lane targets take flat planes, AVX2 also where AVX-512's 5x5 four-row walk does not).
int64_t phase_floats(const ConvGeometry& g) {
  const int64_t rows = phase_floats(make_plane(g, false));
  const bool any_flat = flat_plane(Isa::Avx512, g) || flat_plane(Isa::Avx2, g);
  const int64_t walk = any_flat ? std::max(rows, phase_floats(make_plane(g, true))) : rows;
  const bool any_blocked = blocked_plane(Isa::Avx512, g) || blocked_plane(Isa::Avx2, g);
  return any_blocked ? std::max(walk, blocked_floats(make_plane(g, false), 16)) : walk;
}

// Channel-blocked planes (kernels-depthwise.md section 8), on targets of 8 or 16 lanes: strided or tiny
// planes, whose rows fill vectors badly and whose phase planes cost more to build than their taps cost to run.
// Per node in MobileNetV3 on a Zen 4 (blocked / the walks, AVX-512 and AVX2): 14 -> 7 5x5 stride 2 0.57 and
// 0.75, 28 -> 14 3x3 stride 2 0.50 and 0.96, 56 -> 28 5x5 stride 2 0.93 and 0.95, 7x7 5x5 0.72-0.74 and
// 0.87-0.91; but stride 1 at 14x14 and larger 1.3-2.0 and 112 -> 56 stride 2 1.15-1.27 (the transposes in
// and out cost more there than the walks lose). Since eight positions share each tap's weights and the
// transposes run 8x8 in registers (session 33, Zen 3, AVX2, blocked / walk, alone): also stride 1 with 25 taps
// or more where the four-row walk does not take them, 5x5 at 14x14 0.74, 28x28 0.75, 56x56 0.81, 7x7 at 28x28
// 0.66; 3x3 at stride 1 still walks (14x14 1.13, 28x28 1.27, 56x56 1.34).
constexpr int64_t kBlockedMaxPositions = 4096;  // padded positions
bool blocked_plane(Isa isa, const ConvGeometry& g) {
  if (float_lanes(isa) < 8) return false;
  const DepthwisePlane p = make_plane(g, false);
  const bool strided = p.s_h > 1 || p.s_w > 1;
  const bool many_taps = p.k_h * p.k_w >= 25 && !rows_walk(isa, g);
  return p.padded_h * p.padded_w <= kBlockedMaxPositions && (strided || many_taps || p.out_h * p.out_w <= 64);
}

// One slot of the blocked path for `lanes` channels: the padded tile, the outputs, the taps.
int64_t blocked_floats(const DepthwisePlane& p, int64_t lanes) {
  return (p.padded_h * p.padded_w + p.out_h * p.out_w + p.k_h * p.k_w) * lanes;
}

int64_t planes_per_chunk(const ConvGeometry& g) {
  return std::clamp<int64_t>(4096 / std::max<int64_t>(g.out_size(), 1), 1, 32);
}

// The taps of channels [oc0, oc0 + used) as taps x lanes (lanes past `used` repeat the last channel): the
// blocked path's weights for one block, made per call or once by conv_pack_weights.
void block_taps(const float* w, int64_t taps, int64_t lanes, int64_t oc0, int64_t used, float* wt) {
  for (int64_t l = 0; l < lanes; ++l) {
    const float* src = w + (oc0 + std::min(l, used - 1)) * taps;
    for (int64_t t = 0; t < taps; ++t) wt[t * lanes + l] = src[t];
  }
}

// The blocked path: a chunk is one block of `lanes` output channels of one image (the last one narrower). Its
// input planes are written channels-last into the slot's tile, whose padding stays +0 from the slot's first
// chunk on (only the interior is ever written), the kernel writes the outputs channels-last, and they are
// copied back into the planes. Only data moves outside the kernel, so every output is section 2's chain.
void depthwise_blocked(Isa isa, bool exact, const ConvGeometry& g, const float* x, const float* w,
                       const float* blocked_w, float* scratch, float* y, ThreadPool* pool, const ConvEpilogue* ep) {
  const DepthwiseFns& fns = depthwise_fns(isa);
  const DepthwisePlane p = make_plane(g, false);
  const int64_t lanes = float_lanes(isa), taps = p.k_h * p.k_w, os = g.out_size(), is = g.in_size();
  const int64_t tile_floats = p.padded_h * p.padded_w * lanes;
  const int64_t mult = g.out_channels / g.in_channels;
  const int64_t blocks = ceil_div(g.out_channels, lanes);
  const int64_t slot_size = phase_floats(g);
  const int threads = pool ? pool->threads() : 1;
  Slots slots(slot_count(threads));
  std::array<bool, kMaxSlots> zeroed{};
  const int64_t cols = std::min(p.in_w, p.padded_w - p.pad_l);  // input columns that taps reach
  const double work =
      double(g.batch * g.out_channels) * (double(os * taps) / 8.0 + double(p.padded_h * p.padded_w) / 2.0);
  parallel_for(pool, g.batch * blocks, work, [&](int64_t c) {
    const int slot = slots.acquire();
    float* tile = scratch + slot * slot_size;
    float* out = tile + tile_floats;
    float* own_taps = out + os * lanes;
    if (!zeroed[static_cast<size_t>(slot)]) {  // written once: the flags of the slots share a cache line
      std::fill(tile, tile + tile_floats, 0.0f);
      zeroed[static_cast<size_t>(slot)] = true;
    }
    const int64_t n = c / blocks, oc0 = (c % blocks) * lanes;
    const int64_t used = std::min(lanes, g.out_channels - oc0);  // lanes past it repeat the last channel, dropped
    // This block's taps: packed once (conv_pack_weights), else transposed here.
    const float* wt = blocked_w ? blocked_w + (c % blocks) * taps * lanes : own_taps;
    if (!blocked_w) block_taps(w, taps, lanes, oc0, used, own_taps);
    const float* xin[16];
    for (int64_t l = 0; l < lanes; ++l) xin[l] = x + (n * g.in_channels + (oc0 + std::min(l, used - 1)) / mult) * is;
    // Rows that taps reach, all in one call when they are whole (a call per row of seven was a seventh of
    // MobileNetV3's 7x7 layers).
    const int64_t rows = std::min(p.in_h, p.padded_h - p.pad_t);
    float* at = tile + (p.pad_t * p.padded_w + p.pad_l) * lanes;
    if (cols == p.in_w && rows > 0)
      fns.to_channels_last(xin, 0, rows * p.in_w, at, p.in_w, p.padded_w);
    else
      for (int64_t iy = 0; iy < rows && cols > 0; ++iy)
        fns.to_channels_last(xin, iy * p.in_w, cols, at + iy * p.padded_w * lanes, cols, p.padded_w);
    fns.compute_blocked(exact, p, tile, wt, out);
    fns.from_channels_last(out, lanes, os, used, y + (n * g.out_channels + oc0) * os, os);
    slots.release(slot);
    if (ep) epilogue_plane_range(*ep, g, n * g.out_channels + oc0, n * g.out_channels + oc0 + used, y);
  });
}

void depthwise_vector(Isa isa, bool exact, const ConvGeometry& g, const float* x, const float* w,
                      const float* blocked_w, float* y, float* scratch, ThreadPool* pool, const ConvEpilogue* ep) {
  if (blocked_plane(isa, g)) return depthwise_blocked(isa, exact, g, x, w, blocked_w, scratch, y, pool, ep);
  const DepthwiseFns& fns = depthwise_fns(isa);
  const DepthwisePlane p = make_plane(isa, g);
  const int64_t taps = p.k_h * p.k_w;
  int64_t tap_off[kMaxDepthwiseTaps];
  const int64_t rs = p.in_place ? p.in_w : p.phase_w;
  const int64_t phase_plane = p.phase_h * p.phase_w;
  for (int64_t ky = 0; ky < p.k_h; ++ky)
    for (int64_t kx = 0; kx < p.k_w; ++kx) {
      const int64_t dx = kx * p.d_w, dy = ky * p.d_h;
      tap_off[ky * p.k_w + kx] = ((dx % p.s_w) * p.ph_h + dy % p.ph_h) * phase_plane + (dy / p.ph_h) * rs + dx / p.s_w;
    }
  const int64_t planes = g.batch * g.out_channels;
  const int64_t mult = g.out_channels / g.in_channels;
  const int64_t per_chunk = planes_per_chunk(g);
  const int64_t chunks = ceil_div(planes, per_chunk);
  const int64_t slot_size = phase_floats(g);
  const int64_t tmp_at = p.in_place ? 0 : p.s_w * p.ph_h * phase_plane + p.s_w * p.phase_w;
  const int threads = pool ? pool->threads() : 1;
  Slots slots(slot_count(threads));
  // A slot whose padding this call has written: the padding is the same for every plane, so later chunks on
  // the slot copy only the input rows (a chunk is often one plane: MobileNetV3's 64-channel stride-2 layer at
  // 112x112 spent 57% of its time rebuilding whole phase planes; now 0.78x the time, 72 channels at 56x56
  // 0.87x). Only the chunk holding a slot touches its flag.
  std::array<bool, kMaxSlots> padded{};
  const double work = double(planes) * (double(g.out_size() * taps) / 8.0 + double(p.padded_h * p.padded_w) / 2.0);
  parallel_for(pool, chunks, work, [&](int64_t c) {
    const bool own_slot = !p.in_place || p.flat;
    const int slot = own_slot ? slots.acquire() : -1;
    float* phases = own_slot ? scratch + slot * slot_size : nullptr;
    int64_t built = -1;  // input plane currently in `phases` (multipliers > 1 reuse it)
    const int64_t end = std::min(planes, (c + 1) * per_chunk);
    for (int64_t q = c * per_chunk; q < end; ++q) {
      const int64_t n = q / g.out_channels, oc = q % g.out_channels;
      const int64_t in_plane = n * g.in_channels + oc / mult;
      const float* xin = x + in_plane * g.in_size();
      const float* src = xin;
      if (!p.in_place) {
        if (built != in_plane)
          fns.build_phases(p, xin, phases, phases + p.s_w * p.ph_h * phase_plane, padded[static_cast<size_t>(slot)]);
        if (!padded[static_cast<size_t>(slot)]) padded[static_cast<size_t>(slot)] = true;  // once (a shared line)
        built = in_plane;
        src = phases;
      }
      fns.compute_plane(exact, p, src, rs, tap_off, w + oc * taps, y + q * g.out_size(),
                        phases ? phases + tmp_at : nullptr);
    }
    if (slot >= 0) slots.release(slot);
    // The chunk's planes (at most 4096 outputs, still in cache) in one epilogue call per image.
    if (ep) epilogue_plane_range(*ep, g, c * per_chunk, end, y);
  });
}

// The exact-mode.md order one output at a time, for shapes the vector kernel does not take. Padding taps are
// products with +0. Fast mode runs the same unfused code.
void depthwise_direct(bool exact, const ConvGeometry& g, const float* x, const float* w, float* y, ThreadPool* pool,
                      const ConvEpilogue* ep) {
  const int64_t planes = g.batch * g.out_channels;
  const int64_t mult = g.out_channels / g.in_channels;
  const int64_t per_chunk = planes_per_chunk(g);
  const int64_t taps = g.taps();
  const double work = double(planes) * double(g.out_size() * taps);
  parallel_for(pool, ceil_div(planes, per_chunk), work, [&](int64_t c) {
    const int64_t end = std::min(planes, (c + 1) * per_chunk);
    for (int64_t q = c * per_chunk; q < end; ++q) {
      const int64_t n = q / g.out_channels, oc = q % g.out_channels;
      const float* xin = x + (n * g.in_channels + oc / mult) * g.in_size();
      const float* wq = w + oc * taps;
      float* yq = y + q * g.out_size();
      for (int64_t od = 0; od < g.out[0]; ++od)
        for (int64_t oh = 0; oh < g.out[1]; ++oh)
          for (int64_t ow = 0; ow < g.out[2]; ++ow) {
            float acc = 0.0f;
            for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
              const int64_t id = od * g.stride[0] - g.pad_before[0] + kd * g.dilation[0];
              for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
                const int64_t ih = oh * g.stride[1] - g.pad_before[1] + kh * g.dilation[1];
                for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
                  const int64_t iw = ow * g.stride[2] - g.pad_before[2] + kw * g.dilation[2];
                  const bool inside = id >= 0 && id < g.in[0] && ih >= 0 && ih < g.in[1] && iw >= 0 && iw < g.in[2];
                  const float v = inside ? xin[(id * g.in[1] + ih) * g.in[2] + iw] : 0.0f;
                  const float prod = wq[(kd * g.kernel[1] + kh) * g.kernel[2] + kw] * v;
                  acc = acc + prod;
                }
              }
            }
            yq[(od * g.out[1] + oh) * g.out[2] + ow] = exact ? canon(acc) : acc;
          }
    }
    if (ep) epilogue_plane_range(*ep, g, c * per_chunk, end, y);
  });
}

// The vector depthwise path copies each plane into a zero-padded buffer spanning every tap of every output.
// Hostile pads and dilations (each up to 2^31, ops/window.h) can give a one-element output whose taps span
// 2^31 rows and columns; such a plane is refused for the vector path (the direct loop needs no buffer). Real
// convolutions pad by less than a kernel, so the bound never binds on them.
bool padded_plane_fits(const ConvGeometry& g) {
  const int64_t ph = (g.out[1] - 1) * g.stride[1] + (g.kernel[1] - 1) * g.dilation[1] + 1;
  const int64_t pw = (g.out[2] - 1) * g.stride[2] + (g.kernel[2] - 1) * g.dilation[2] + 1;
  const int64_t limit = 4 * (g.in[1] * g.in[2] + g.out[1] * g.out[2]) + (int64_t{1} << 16);
  return ph <= limit && pw <= limit && ph * pw <= limit;
}

}  // namespace

void col2im_f32(Isa isa, bool exact, const ConvGeometry& g, int64_t channels, const float* col, float* y,
                ThreadPool* pool, const float* bias) {
  const int64_t taps = g.taps(), is = g.in_size(), os = g.out_size();
  const double work = double(channels * taps * is) / 2.0 + double(channels * os) / 2.0;
  parallel_for(pool, channels, work, [&](int64_t c) {
    float* plane = y + c * os;
    std::memset(plane, 0, sizeof(float) * size_t(os));
    for (int64_t kd = 0; kd < g.kernel[0]; ++kd)
      for (int64_t kh = 0; kh < g.kernel[1]; ++kh)
        for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
          const float* crow = col + ((c * g.kernel[0] + kd) * g.kernel[1] * g.kernel[2] + kh * g.kernel[2] + kw) * is;
          const int64_t off_w = kw * g.dilation[2] - g.pad_before[2];
          int64_t lo = 0, hi = 0;
          valid_range(g.in[2], g.stride[2], off_w, g.out[2], lo, hi);
          for (int64_t id = 0; id < g.in[0]; ++id) {
            const int64_t od = id * g.stride[0] - g.pad_before[0] + kd * g.dilation[0];
            if (od < 0 || od >= g.out[0]) continue;
            for (int64_t ih = 0; ih < g.in[1]; ++ih) {
              const int64_t oh = ih * g.stride[1] - g.pad_before[1] + kh * g.dilation[1];
              if (oh < 0 || oh >= g.out[1]) continue;
              const float* src = crow + (id * g.in[1] + ih) * g.in[2];
              float* dst = plane + (od * g.out[1] + oh) * g.out[2];
              for (int64_t iw = lo; iw < hi; ++iw) {
                float& o = dst[iw * g.stride[2] + off_w];
                o = o + src[iw];
              }
            }
          }
        }
    if (exact)
      for (int64_t i = 0; i < os; ++i) plane[i] = canon(plane[i]);
    // The bias here rather than in a pass of its own after every channel: that pass ran on one thread (PP-OCRv4
    // det's 24 -> 24 2x2 stride-2 ConvTranspose to 320 x 320).
    if (bias) add_channel_bias(isa, exact, plane, bias + c, 1, os);
  });
}

ConvPath conv_path(const ConvGeometry& g) {
  if (depthwise_shape(g)) {
    if (flat_depth(g) && g.kernel[1] * g.kernel[2] <= kMaxDepthwiseTaps && g.stride[2] <= kMaxDepthwiseStrideW &&
        padded_plane_fits(g))
      return ConvPath::Depthwise;
    return ConvPath::DepthwiseDirect;
  }
  bool one = true;
  for (int a = 0; a < 3; ++a)
    one = one && g.kernel[a] == 1 && g.stride[a] == 1 && g.pad_before[a] == 0 && g.out[a] == g.in[a];
  return one ? ConvPath::Gemm1x1 : ConvPath::Im2colGemm;
}

// A convolution with fewer output positions than half a register tile's width (1-D filter banks over a short
// frame, the late layers of a small audio model) wastes most of every tile; it runs transposed instead, output
// positions as the rows: C^T = col^T * W^T with W^T packed once, then C^T is transposed into place. Same
// per-output order, same bits. (openWakeWord melspectrogram: 257 x 8 outputs of 512 taps.) Up to
// kNarrowMaxTiles tiles of positions it also runs transposed when the channels fill the tiles' columns clearly
// better than the positions would (a ragged A strip costs nothing: a narrower microkernel runs): openWakeWord
// embedding's 96-channel layers at 12 x 4 and 10 x 2 positions, AVX-512.
constexpr int64_t kNarrowMaxTiles = 4;
// The register tiles' work in each form: positions in tiles of NR columns (W as A), or channels (W^T as B).
struct FormCosts {
  double normal, transposed;
};
static FormCosts form_costs(Isa isa, const ConvGeometry& g) {
  const int64_t nr = gemm_nr(isa), os = g.out_size(), mg = g.out_channels / g.groups;
  auto padded = [nr](int64_t v) { return (v + nr - 1) / nr * nr; };
  return {double(mg * padded(os)), double(os * padded(mg))};
}
static bool narrow_output(Isa isa, const ConvGeometry& g) {
  const int64_t nr = gemm_nr(isa), os = g.out_size();
  if (os * 2 <= nr) return true;
  if (os > kNarrowMaxTiles * nr) return false;
  const FormCosts c = form_costs(isa, g);
  return c.transposed < 0.9 * c.normal;
}

// Whether a packing in the form `transposed` serves g: always in narrow_output's form; in the other form when
// the tile model above rates that form's work no larger (narrow_output's 0.9 is a margin for the transposed
// path's extra pass), outside the forced-transposed region and within the transposed path's scratch
// (conv_scratch_floats keeps room for it up to kNarrowMaxTiles * 32 positions). Both forms give the same bits:
// this changes no result, only whether a new input shape may reuse a kept packing instead of packing again
// (PP-OCRv4 rec at a new width: 328 page faults in its first call, 68 with the reuse; the reused form is
// 1.17x slower on those layers; kernels-gemm.md section 6, "Narrow outputs").
static bool form_serves(Isa isa, const ConvGeometry& g, bool transposed) {
  if (transposed == narrow_output(isa, g)) return true;
  const int64_t nr = gemm_nr(isa), os = g.out_size();
  if (os > kNarrowMaxTiles * nr || os * 2 <= nr) return false;
  const FormCosts c = form_costs(isa, g);
  return transposed ? c.transposed <= c.normal : c.normal <= c.transposed;
}

namespace {

// A stride-1 2-D (or 1-D) convolution with few output channels reads its im2col rows in place from a
// zero-padded copy of the input: row (c, kh, kw) of the product is the padded plane of channel c shifted by
// kh * dh rows and kw * dw columns, over "padded columns" j = oh * wp + ow (ow < wp; the columns ow >= out
// width are computed and dropped). Packing each panel cost about as much as its products when few output
// channels share it (PP-OCRv4 det's 96 -> 24 3x3 convolutions at 160x160, openWakeWord's 24-96 channel
// ones); many output channels share a panel enough that packing pays for its aligned loads.
constexpr int64_t kPaddedMaxChannels = 96;

struct PaddedPlane {
  int64_t s;       // the stride (both axes): 1, or 2 with each padded plane split into s * s phase planes
  int64_t hp, wp;  // padded (phase) plane: every tap of every output inside it
  int64_t n;       // product columns: (out rows - 1) * wp + out width
  bool copy;       // false: the input is that plane already (no padding), read as it is
  bool compact;    // the product's columns are not the output's (wp > out width): a scratch C, then copied
};

bool padded_direct(const ConvGeometry& g) {
  if (conv_path(g) != ConvPath::Im2colGemm || !flat_depth(g) || g.out_size() <= 16 || !padded_plane_fits(g))
    return false;
  if (g.stride[1] == 1 && g.stride[2] == 1) return g.out_channels / g.groups <= kPaddedMaxChannels;
  // Stride 2 both ways without dilation: the padded plane's 2 x 2 phases turn every tap into a stride-1 tap of
  // one phase (row (c, kh, kw) reads phase (kh % 2, kw % 2) shifted by kh / 2 rows and kw / 2 columns). Any
  // channel count: the panels' stride-2 gathers cost more than in-place reads of many A strips (ResNet-50's
  // 128 -> 128 3x3 at 56 -> 28 1.65 -> 1.47 ms, its stem 1.82 -> 1.59 ms; kernels-gemm.md section 6).
  return g.stride[1] == 2 && g.stride[2] == 2 && g.dilation[1] == 1 && g.dilation[2] == 1;
}

PaddedPlane padded_plane(const ConvGeometry& g) {
  PaddedPlane p{};
  p.s = g.stride[1];
  if (p.s == 1) {
    p.hp = g.out[1] + (g.kernel[1] - 1) * g.dilation[1];
    p.wp = g.out[2] + (g.kernel[2] - 1) * g.dilation[2];
    p.copy = !(g.pad_before[1] == 0 && g.pad_before[2] == 0 && p.hp == g.in[1] && p.wp == g.in[2]);
  } else {
    p.hp = g.out[1] + (g.kernel[1] - 1) / 2;
    p.wp = g.out[2] + (g.kernel[2] - 1) / 2;
    p.copy = true;
  }
  p.n = (g.out[1] - 1) * p.wp + g.out[2];
  p.compact = p.wp != g.out[2];
  return p;
}

int64_t padded_scratch_floats(const ConvGeometry& g) {
  const PaddedPlane p = padded_plane(g);
  return (p.copy ? (g.in_channels / g.groups) * p.s * p.s * p.hp * p.wp : 0) +
         (p.compact ? (g.out_channels / g.groups) * p.n : 0);
}

// The 2 x 2 phase planes (hp x wp each) of every channel's zero-padded plane: phase (a, b) of channel c at
// xp + ((c * 2 + a) * 2 + b) * hp * wp holds padded rows a, a + 2, ... and columns b, b + 2, ... (stride-2
// convolutions read in place, padded_direct). Input rows are de-interleaved a vector at a time (take_even).
// Only the phases a tap reads are built: a kernel one tap high (wide) reads row (column) phase 0 alone, so a
// 1x1 stride-2 convolution (ResNet-50's downsampling layers) copies a quarter of its input instead of all of it.
void phase_planes_f32(const ConvGeometry& g, int64_t hp, int64_t wp, int64_t channels, const float* x, float* xp,
                      const DepthwiseFns& fns, ThreadPool* pool) {
  const int64_t h = g.in[1], w = g.in[2], pt = g.pad_before[1], pl = g.pad_before[2];
  const int64_t row_phases = std::min<int64_t>(2, g.kernel[1]), col_phases = std::min<int64_t>(2, g.kernel[2]);
  parallel_for(pool, channels, 0.5 * double(channels * row_phases * col_phases * hp * wp), [&](int64_t c) {
    for (int64_t a = 0; a < row_phases; ++a)
      for (int64_t b = 0; b < col_phases; ++b) {
        float* plane = xp + ((c * 2 + a) * 2 + b) * hp * wp;
        // Phase columns j whose input column 2j + b - pl lies inside the row: [jlo, jhi).
        const int64_t jlo = std::min(wp, std::max<int64_t>(0, (pl - b + 1) / 2));
        const int64_t jhi = std::clamp<int64_t>((w + pl - b + 1) / 2, jlo, wp);
        for (int64_t i = 0; i < hp; ++i) {
          float* dst = plane + i * wp;
          const int64_t ir = 2 * i + a - pt;
          if (ir < 0 || ir >= h || jhi <= jlo) {
            std::fill(dst, dst + wp, 0.0f);
            continue;
          }
          std::fill(dst, dst + jlo, 0.0f);
          const int64_t first = 2 * jlo + b - pl;  // the input column of phase column jlo
          fns.take_even(x + (c * h + ir) * w + first, w - first, dst + jlo, jhi - jlo);
          std::fill(dst + jhi, dst + wp, 0.0f);
        }
      }
  });
}

}  // namespace

bool pad_planes_f32(const ConvGeometry& g, int64_t hp, int64_t wp, int64_t channels, const float* x, float* xp,
                    ThreadPool* pool) {
  const int64_t h = g.in[1], w = g.in[2], ph = g.pad_before[1], pw = g.pad_before[2];
  const int64_t cols = std::clamp<int64_t>(wp - pw, 0, w);
  const int64_t rows = std::clamp<int64_t>(hp - ph, 0, h);  // input rows inside the padded plane
  std::atomic<bool> finite{true};
  parallel_for(pool, channels, 0.25 * double(channels * hp * wp), [&](int64_t c) {
    float* dst = xp + c * hp * wp;
    const float* src = x + c * h * w;
    // Without column padding only the rows above and below are zeroed; with it the whole plane is, in one
    // call: zeroing the few columns left and right of each row was two library calls per row (openWakeWord's
    // 1x3 convolutions spent 12% of the model in them).
    const bool padded_columns = pw > 0 || pw + cols < wp;
    if (padded_columns) {
      std::fill(dst, dst + hp * wp, 0.0f);
    } else {
      std::fill(dst, dst + std::min(ph, hp) * wp, 0.0f);
      std::fill(dst + std::min(ph + rows, hp) * wp, dst + hp * wp, 0.0f);
    }
    uint32_t special = 0;  // any copied value that is infinite or NaN
    for (int64_t ih = 0; ih < rows; ++ih) {
      const float* __restrict in = src + ih * w;
      float* __restrict out = dst + (ih + ph) * wp + pw;
      for (int64_t i = 0; i < cols; ++i) {
        const float v = in[i];
        out[i] = v;
        special |= static_cast<uint32_t>(!(v - v == 0.0f));  // infinity - infinity and NaN - NaN are NaN
      }
    }
    if (special) finite.store(false, std::memory_order_relaxed);
  });
  return finite.load();
}

int64_t conv_scratch_floats(const ConvGeometry& g, bool exact, int threads) {
  // Fast-mode Winograd shapes also keep room for the panels' path (images with special values).
  if (!exact && winograd_applies(g))
    return std::max(winograd_scratch_floats(g, threads), conv_scratch_floats(g, true, threads));
  const ConvPath path = conv_path(g);
  const int64_t in_place = padded_direct(g) ? padded_scratch_floats(g) : int64_t{0};
  // Room for the transposed path of narrow outputs (col^T packed, then C^T) on any target: NR is at most 32,
  // MR one of 12, 6 and 4 (so rounding up to 12 covers each).
  if ((path == ConvPath::Gemm1x1 || path == ConvPath::Im2colGemm) && g.out_size() <= kNarrowMaxTiles * 32)
    return std::max((g.in_channels / g.groups) * g.taps() * ceil_div(g.out_size(), int64_t{12}) * 12 +
                        (g.out_channels / g.groups) * g.out_size(),
                    in_place);
  if (in_place > 0) return in_place;
  switch (path) {
    case ConvPath::Depthwise: return int64_t{slot_count(threads)} * phase_floats(g);
    default: return 0;
  }
}

// Per group: W as the product's A (row strips), or, for narrow outputs, W^T as its B (column strips).
struct ConvPackedWeights {
  Isa isa;
  bool transposed;
  int64_t out_channels, group_k, groups;
  std::vector<std::shared_ptr<const PackedA>> as_a;
  std::vector<std::shared_ptr<const PackedB>> as_bt;
  bool fast_wino = false;                           // packed for fast mode and a shape winograd_applies to
  std::shared_ptr<const WinogradWeights> wino;      // then these instead of as_a (unless a weight is not finite)
  PackStorage storage = PackStorage::F32;           // of as_a / as_bt (conv_pack_weights)
  std::shared_ptr<const ConvPackedWeights> panels;  // compact or alone, with wino: the panels, for special images
  // Depthwise: the taps of every block of `lanes` channels for the channel-blocked path (block_taps), else empty.
  std::vector<float> dw_taps;
  bool alone = false;  // made from a session's panels: conv_f32 gets no w (conv_pack_panels)
};

bool conv_packed_compact(const ConvPackedWeights& p) { return p.storage != PackStorage::F32; }
bool conv_packed_alone(const ConvPackedWeights& p) { return p.alone || conv_packed_compact(p); }

namespace {

// The channel-blocked depthwise path transposed each block's taps at every call: 960 channels of 5x5 taps were
// 15% of MobileNetV3's 7x7 layer (Zen 3). Packed once here instead, for shapes that take that path; compact
// weights are left to the plan's widening as before (the path reads float32 taps).
std::shared_ptr<const ConvPackedWeights> pack_depthwise(Isa isa, const ConvGeometry& g, const float* w,
                                                        PackStorage storage) {
  if (storage != PackStorage::F32 || !blocked_plane(isa, g)) return nullptr;
  auto p = std::make_shared<ConvPackedWeights>();
  const int64_t lanes = float_lanes(isa), taps = g.taps(), blocks = ceil_div(g.out_channels, lanes);
  p->isa = isa;
  p->transposed = false;
  p->out_channels = g.out_channels;
  p->group_k = taps;
  p->groups = g.groups;
  p->dw_taps.resize(static_cast<size_t>(blocks * taps * lanes));
  for (int64_t b = 0; b < blocks; ++b)
    block_taps(w, taps, lanes, b * lanes, std::min(lanes, g.out_channels - b * lanes),
               p->dw_taps.data() + b * taps * lanes);
  return p;
}

}  // namespace

std::shared_ptr<const ConvPackedWeights> conv_pack_weights(Isa isa, bool exact, const ConvGeometry& g, const float* w,
                                                           PackStorage storage) {
  const ConvPath path = conv_path(g);
  if (path == ConvPath::Depthwise) return pack_depthwise(isa, g, w, storage);
  if (path != ConvPath::Gemm1x1 && path != ConvPath::Im2colGemm) return nullptr;
  auto p = std::make_shared<ConvPackedWeights>();
  p->fast_wino = !exact && winograd_applies(g);
  if (p->fast_wino && (p->wino = winograd_pack(isa, g, w))) {
    p->isa = isa;
    p->transposed = false;
    p->out_channels = g.out_channels;
    p->group_k = g.in_channels * g.taps();
    p->groups = 1;
    p->storage = storage;
    if (storage != PackStorage::F32) p->panels = conv_pack_weights(isa, true, g, w, storage);
    return p;
  }
  p->storage = storage;
  const int64_t mg = g.out_channels / g.groups, k = (g.in_channels / g.groups) * g.taps();
  p->isa = isa;
  p->transposed = narrow_output(isa, g);
  p->out_channels = g.out_channels;
  p->group_k = k;
  p->groups = g.groups;
  for (int64_t gi = 0; gi < g.groups; ++gi) {
    const float* wg = w + gi * mg * k;
    if (p->transposed)
      p->as_bt.push_back(pack_b_f32(isa, k, mg, MatrixView{wg, 1, k}, storage));
    else
      p->as_a.push_back(pack_a_f32(isa, mg, k, MatrixView{wg, k, 1}, storage));
  }
  return p;
}

std::shared_ptr<const ConvPackedWeights> conv_pack_panels(Isa isa, int64_t out_channels, int64_t groups,
                                                          int64_t group_k, const float* w) {
  auto p = std::make_shared<ConvPackedWeights>();
  const int64_t mg = out_channels / groups;
  p->isa = isa;
  p->transposed = false;
  p->out_channels = out_channels;
  p->group_k = group_k;
  p->groups = groups;
  p->alone = true;
  for (int64_t gi = 0; gi < groups; ++gi)
    p->as_a.push_back(pack_a_f32(isa, mg, group_k, MatrixView{w + gi * mg * group_k, group_k, 1}));
  return p;
}

std::shared_ptr<const ConvPackedWeights> conv_pack_from_panels(Isa isa, bool exact, const ConvGeometry& g,
                                                               const std::shared_ptr<const ConvPackedWeights>& panels) {
  if (conv_packed_preferred(*panels, isa, exact, g)) return panels;
  const ConvPath path = conv_path(g);
  if ((path != ConvPath::Gemm1x1 && path != ConvPath::Im2colGemm) || panels->out_channels != g.out_channels ||
      panels->groups != g.groups || panels->group_k != (g.in_channels / g.groups) * g.taps())
    throw Error(ErrorKind::Internal, "conv_pack_from_panels: the panels do not fit this convolution");
  const int64_t mg = g.out_channels / g.groups;
  std::vector<float> w(static_cast<size_t>(g.out_channels * panels->group_k));
  for (int64_t gi = 0; gi < g.groups; ++gi)
    unpack_a_f32(*panels->as_a[static_cast<size_t>(gi)], w.data() + gi * mg * panels->group_k);
  std::shared_ptr<const ConvPackedWeights> made = conv_pack_weights(isa, exact, g, w.data());
  auto p = std::make_shared<ConvPackedWeights>(*made);
  p->alone = true;
  if (p->wino) p->panels = panels;
  return p;
}

bool conv_packed_matches(const ConvPackedWeights& p, Isa isa, bool exact, const ConvGeometry& g) {
  if (!p.dw_taps.empty())  // the same taps serve both modes and every shape of these weights
    return conv_path(g) == ConvPath::Depthwise && p.isa == isa && p.out_channels == g.out_channels &&
           p.groups == g.groups && p.group_k == g.taps();
  const bool wino = !exact && winograd_applies(g);
  return p.isa == isa && p.out_channels == g.out_channels && p.groups == g.groups &&
         p.group_k == (g.in_channels / g.groups) * g.taps() && p.fast_wino == wino &&
         (wino ? !p.wino || winograd_packed_tile(*p.wino) == winograd_tile(g) : form_serves(isa, g, p.transposed));
}

bool conv_packed_preferred(const ConvPackedWeights& p, Isa isa, bool exact, const ConvGeometry& g) {
  return conv_packed_matches(p, isa, exact, g) &&
         (!p.dw_taps.empty() || p.fast_wino || p.transposed == narrow_output(isa, g));
}

namespace {

// The im2col matrix of one image and group, one panel at a time (kernels/gemm.h PanelSource): rows
// (c, kd, kh, kw), columns output positions, padding taps +0, in packed strips (of B, or of the transposed
// path's A: gemm_f32_packed_at).
struct PanelCtx {
  const ConvGeometry* g;
  const float* x;  // the group's first input channel
  const DepthwiseFns* fns;
};

// Copies row `tmp` (nc floats, contiguous) into the panel row's strips: strip s gets tmp[s*nr, s*nr + nr).
template <int64_t NR>
void scatter_strips(const float* tmp, int64_t nc, int64_t kc, float* prow) {
  int64_t q = 0;
  for (; q + NR <= nc; q += NR, prow += kc * NR) std::memcpy(prow, tmp + q, sizeof(float) * NR);
  if (q < nc) {
    std::memcpy(prow, tmp + q, sizeof(float) * size_t(nc - q));
    std::memset(prow + (nc - q), 0, sizeof(float) * size_t(NR - (nc - q)));
  }
}

// Row r = ((ch * kd_n + kd) * kh_n + kh) * kw_n + kw of col (one channel's tap), decoded once and then counted up.
struct TapRow {
  int64_t ch, kd, kh, kw;
  TapRow(const ConvGeometry& g, int64_t r)
      : ch(r / g.taps()),
        kd((r / (g.kernel[2] * g.kernel[1])) % g.kernel[0]),
        kh((r / g.kernel[2]) % g.kernel[1]),
        kw(r % g.kernel[2]) {}
  void next(const ConvGeometry& g) {
    if (++kw < g.kernel[2]) return;
    kw = 0;
    if (++kh < g.kernel[1]) return;
    kh = 0;
    if (++kd < g.kernel[0]) return;
    kd = 0;
    ++ch;
  }
};

// Panels this narrow gather element by element (gather_narrow_panel).
constexpr int64_t kGatherColumns = 8;

// fill_panel for a panel of at most kGatherColumns columns: each element read where its tap falls (+0 in the
// padding) and stored in its strip. Row by row, fill_panel's runs, copies and library calls cost about 50 ns a
// row whatever its width: Silero VAD's 128 -> 64 channel conv (3 taps, stride 2, 4 -> 2 positions) spent two
// thirds of its 21 us building its 384 rows of two (perf, one thread).
void gather_narrow_panel(const ConvGeometry& g, const float* x, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
                         int64_t nr, float* panel) {
  int64_t bd[kGatherColumns], bh[kGatherColumns], bw[kGatherColumns];  // each column's first tap, unpadded
  for (int64_t q = 0; q < nc; ++q) {
    const int64_t o = j0 + q, ow = o % g.out[2], orow = o / g.out[2];
    bd[q] = (orow / g.out[1]) * g.stride[0] - g.pad_before[0];
    bh[q] = (orow % g.out[1]) * g.stride[1] - g.pad_before[1];
    bw[q] = ow * g.stride[2] - g.pad_before[2];
  }
  const int64_t width = ceil_div(nc, nr) * nr;  // the strips' columns, zero past nc
  TapRow t(g, p0);
  for (int64_t pr = 0; pr < kc; ++pr, t.next(g)) {
    const float* xc = x + t.ch * g.in_size();
    const int64_t dd = t.kd * g.dilation[0], dh = t.kh * g.dilation[1], dw = t.kw * g.dilation[2];
    float* prow = panel + pr * nr;
    for (int64_t q = 0; q < width; ++q) {
      float v = 0.0f;
      if (q < nc) {
        const int64_t id = bd[q] + dd, ih = bh[q] + dh, iw = bw[q] + dw;
        if (id >= 0 && id < g.in[0] && ih >= 0 && ih < g.in[1] && iw >= 0 && iw < g.in[2])
          v = xc[(id * g.in[1] + ih) * g.in[2] + iw];
      }
      prow[(q / nr) * kc * nr + q % nr] = v;
    }
  }
}

void fill_panel(const void* vctx, int64_t p0, int64_t kc, int64_t j0, int64_t nc, int64_t nr, float* panel) {
  const PanelCtx& pc = *static_cast<const PanelCtx*>(vctx);
  const ConvGeometry& g = *pc.g;
  if (nc <= kGatherColumns) return gather_narrow_panel(g, pc.x, p0, kc, j0, nc, nr, panel);
  const int64_t kh_n = g.kernel[1], kw_n = g.kernel[2];
  const int64_t ow_n = g.out[2], oh_n = g.out[1], iw_n = g.in[2], sw = g.stride[2];
  // One im2col row segment at a time, built contiguously (runs along output rows: zeros, a copy, zeros), then
  // cut into the strips. kNC (128) bounds nc on every target.
  alignas(64) float tmp[256];
  if (nc > 256) throw Error(ErrorKind::Internal, "conv panel wider than 256 columns");
  // The output rows the columns cover, once per panel (not per panel row).
  struct Run {
    int64_t q, ow, run, od, oh;
  };
  Run runs[260];
  int64_t nruns = 0;
  for (int64_t q = 0, ow = j0 % ow_n, orow = j0 / ow_n; q < nc; ow = 0, ++orow) {
    const int64_t run = std::min(ow_n - ow, nc - q);
    runs[nruns++] = Run{q, ow, run, orow / oh_n, orow % oh_n};
    q += run;
  }
  // A stride-1 plane whose output rows are as wide as its input rows ("same" padding, or none along a width of
  // one tap) maps column j of every im2col row to input element j + delta of its channel: one contiguous copy
  // per row, then +0 over the columns whose tap falls in the padding. Row by row runs cost more than the copy
  // on narrow maps (openWakeWord's 96 x 14x4 3x1 conv spent as long filling panels as multiplying).
  const bool flat = flat_depth(g) && g.stride[1] == 1 && sw == 1 && iw_n == ow_n;
  const int64_t plane = g.in_size();
  const int64_t j1 = j0 + nc, j0_row = j0 - j0 % ow_n;
  // What a flat row needs of its tap, the same for every channel and only from the tap and the panel's
  // columns (integer divisions: computing them per row cost more than the row's copy).
  struct FlatTap {
    int64_t delta;   // column j reads element j + delta of the channel
    int64_t lo, hi;  // output columns whose tap lies inside the row
    int64_t a, b;    // panel columns whose tap's row lies inside the plane
    int64_t ca, cb;  // of those, the ones that address inside the plane
    int64_t row0;    // first output row start (column) at or before a
  };
  auto flat_tap = [&](int64_t kh, int64_t kw) {
    FlatTap t{};
    const int64_t off_h = kh * g.dilation[1] - g.pad_before[1], off_w = kw * g.dilation[2] - g.pad_before[2];
    valid_range(ow_n, 1, off_w, iw_n, t.lo, t.hi);
    t.delta = off_h * iw_n + off_w;
    t.a = std::clamp(std::max<int64_t>(0, -off_h) * ow_n, j0, j1);
    t.b = std::clamp(std::min(oh_n, g.in[1] - off_h) * ow_n, t.a, j1);
    t.ca = std::clamp(-t.delta, t.a, t.b);
    t.cb = std::clamp(plane - t.delta, t.ca, t.b);
    t.row0 = t.a == j0 ? j0_row : t.a;  // a is j0 or a multiple of ow_n
    return t;
  };
  // A table of the taps when the panel has rows enough to use it.
  constexpr int64_t kMaxTable = 64;
  FlatTap table[kMaxTable];
  const bool use_table = flat && kh_n * kw_n <= kMaxTable && kc >= 2 * kh_n * kw_n;
  if (use_table)
    for (int64_t t = 0; t < kh_n * kw_n; ++t) table[t] = flat_tap(t / kw_n, t % kw_n);
  TapRow tap(g, p0);
  for (int64_t pr = 0; pr < kc; ++pr, tap.next(g)) {
    const int64_t ch = tap.ch, kd = tap.kd, kh = tap.kh, kw = tap.kw;
    const float* xc = pc.x + ch * g.in_size();
    const int64_t off_w = kw * g.dilation[2] - g.pad_before[2];
    int64_t lo = 0, hi = 0;
    if (flat) {
      const FlatTap t = use_table ? table[kh * kw_n + kw] : flat_tap(kh, kw);
      // tmp[j - j0] is column j.
      std::fill(tmp, tmp + (t.ca - j0), 0.0f);
      if (t.cb > t.ca) std::memcpy(tmp + (t.ca - j0), xc + t.ca + t.delta, sizeof(float) * size_t(t.cb - t.ca));
      std::fill(tmp + (t.cb - j0), tmp + nc, 0.0f);
      if (t.lo > 0 || t.hi < ow_n)
        for (int64_t row = t.row0; row < t.b; row += ow_n) {
          for (int64_t j = std::max(row, t.a), e = std::min(row + t.lo, t.b); j < e; ++j) tmp[j - j0] = 0.0f;
          for (int64_t j = std::max(row + t.hi, t.a), e = std::min(row + ow_n, t.b); j < e; ++j) tmp[j - j0] = 0.0f;
        }
    } else {
      valid_range(ow_n, sw, off_w, iw_n, lo, hi);
    }
    for (int64_t k = 0; k < (flat ? 0 : nruns); ++k) {
      const Run& ru = runs[k];
      const int64_t id = ru.od * g.stride[0] - g.pad_before[0] + kd * g.dilation[0];
      const int64_t ih = ru.oh * g.stride[1] - g.pad_before[1] + kh * g.dilation[1];
      float* dst = tmp + ru.q - ru.ow;  // dst[o] is output column o of this run
      const int64_t a = ru.ow, b = ru.ow + ru.run;
      if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1]) {
        std::memset(dst + a, 0, sizeof(float) * size_t(b - a));
        continue;
      }
      const float* src = xc + (id * g.in[1] + ih) * iw_n + off_w;
      const int64_t vlo = std::clamp(lo, a, b), vhi = std::clamp(hi, vlo, b);
      // Plain loops: runs are short on small maps (7 columns at 7x7), where a library call per run costs more
      // than the copy.
      for (int64_t o = a; o < vlo; ++o) dst[o] = 0.0f;
      // Restrict-qualified copies (tmp never overlaps the input), so the strided loop vectorises too.
      float* __restrict d = dst;
      const float* __restrict sp = src;
      if (sw == 1) {
        for (int64_t o = vlo; o < vhi; ++o) d[o] = sp[o];
      } else if (sw == 2) {
        // The row's elements from sp[2 * vlo] on: iw_n - off_w - 2 * vlo of them.
        if (vhi > vlo) pc.fns->take_even(sp + 2 * vlo, iw_n - off_w - 2 * vlo, d + vlo, vhi - vlo);
      } else {
        for (int64_t o = vlo; o < vhi; ++o) d[o] = sp[o * sw];
      }
      for (int64_t o = vhi; o < b; ++o) dst[o] = 0.0f;
    }
    // Strips of B's width NR (4 to 32) or, for the transposed path's A (gemm_f32_packed_at), of A's height MR.
    float* prow = panel + pr * nr;
    switch (nr) {
      case 4: scatter_strips<4>(tmp, nc, kc, prow); break;
      case 6: scatter_strips<6>(tmp, nc, kc, prow); break;
      case 8: scatter_strips<8>(tmp, nc, kc, prow); break;
      case 12: scatter_strips<12>(tmp, nc, kc, prow); break;
      case 16: scatter_strips<16>(tmp, nc, kc, prow); break;
      case 32: scatter_strips<32>(tmp, nc, kc, prow); break;
      default: {
        for (int64_t qq = 0; qq < nc; qq += nr, prow += kc * nr)
          for (int64_t i = 0; i < nr; ++i) prow[i] = qq + i < nc ? tmp[qq + i] : 0.0f;
      }
    }
  }
}

}  // namespace

namespace {

// The epilogue of one image-group's product, per row of a finished tile (rows are the group's channels).
struct GroupEpilogue {
  const ConvEpilogue* ep;
  int64_t n, oc0, os;
};

// A tile of whole planes (its columns are all of each plane, which lie back to back) in one call.
void apply_tile_epilogue(const void* vctx, int64_t i0, int64_t rows, int64_t j0, int64_t cols, float* c, int64_t ldc) {
  const auto& ge = *static_cast<const GroupEpilogue*>(vctx);
  if (j0 == 0 && cols == ge.os && ldc == ge.os) return apply_epilogue_planes(*ge.ep, ge.n, ge.oc0 + i0, rows, cols, c);
  for (int64_t r = 0; r < rows; ++r) ge.ep->apply(ge.ep->ctx, ge.n, ge.oc0 + i0 + r, j0, cols, c + r * ldc);
}

void prefetch_tile_epilogue(const void* vctx, int64_t i0, int64_t rows, int64_t j0, int64_t cols) {
  const auto& ge = *static_cast<const GroupEpilogue*>(vctx);
  for (int64_t r = 0; r < rows; ++r) ge.ep->prefetch(ge.ep->ctx, ge.n, ge.oc0 + i0 + r, j0, cols);
}

}  // namespace

namespace {
void conv_images(Isa isa, bool exact, const ConvGeometry& g, const float* x, float* y, float* scratch, ThreadPool* pool,
                 const ConvPackedWeights& pk, const ConvEpilogue* epilogue, int64_t n0, int64_t n1);
}  // namespace

void conv_f32(Isa isa, bool exact, const ConvGeometry& g, const float* x, const float* w, float* y, float* scratch,
              ThreadPool* pool, const ConvPackedWeights* packed, const ConvEpilogue* epilogue) {
  if (g.batch <= 0 || g.out_channels <= 0 || g.out_size() <= 0) return;
  const ConvPath path = conv_path(g);
  if (path == ConvPath::Depthwise) {
    const bool taps = packed && conv_packed_matches(*packed, isa, exact, g) && !packed->dw_taps.empty();
    return depthwise_vector(isa, exact, g, x, w, taps ? packed->dw_taps.data() : nullptr, y, scratch, pool, epilogue);
  }
  if (path == ConvPath::DepthwiseDirect) return depthwise_direct(exact, g, x, w, y, pool, epilogue);
  std::shared_ptr<const ConvPackedWeights> own;
  if (!packed || !conv_packed_matches(*packed, isa, exact, g)) {
    if (!w) throw Error(ErrorKind::Internal, "conv_f32: compact packed weights that do not match the shape");
    own = conv_pack_weights(isa, exact, g, w);
    packed = own.get();
  }
  if (!packed->wino) return conv_images(isa, exact, g, x, y, scratch, pool, *packed, epilogue, 0, g.batch);
  // Winograd per image; an image with an infinity or NaN in its input takes the panels (packed for it then, or
  // beforehand for compact weights).
  std::shared_ptr<const ConvPackedWeights> panels = packed->panels;
  for (int64_t n = 0; n < g.batch; ++n) {
    if (winograd_conv_f32(isa, g, n, x, *packed->wino, y, scratch, pool, epilogue)) continue;
    if (!panels) panels = conv_pack_weights(isa, true, g, w);  // the panels' packing is the same in both modes
    conv_images(isa, exact, g, x, y, scratch, pool, *panels, epilogue, n, n + 1);
  }
}

namespace {

// One input channel per group, one row (and depth) in and out, no padding before and every tap of every output
// inside the row: row j of the transposed path's col^T is the input from j * stride on, every dilation-th
// element, so the product packs its A strips from that view of the input instead of filling panels tap by tap.
// openWakeWord's melspectrogram (two 257-channel filter banks of 512 taps at stride 160, 8 positions) spent 19%
// of the model filling those panels (perf, Node, one thread).
bool strided_view_rows(const ConvGeometry& g) {
  return g.in_channels / g.groups == 1 && flat_depth(g) && g.in[1] == 1 && g.out[1] == 1 && g.kernel[1] == 1 &&
         g.pad_before[1] == 0 && g.pad_before[2] == 0 &&
         (g.out[2] - 1) * g.stride[2] + (g.kernel[2] - 1) * g.dilation[2] < g.in[2];
}

// Images [n0, n1) through the matrix-product paths, with `packed` from conv_pack_weights (not Winograd).
void conv_images(Isa isa, bool exact, const ConvGeometry& g, const float* x, float* y, float* scratch, ThreadPool* pool,
                 const ConvPackedWeights& pk, const ConvEpilogue* epilogue, int64_t n0, int64_t n1) {
  const ConvPackedWeights* packed = &pk;
  const ConvPath path = conv_path(g);
  const int64_t cg = g.in_channels / g.groups, mg = g.out_channels / g.groups, os = g.out_size();
  const int64_t k = cg * g.taps();
  // A 1x1 convolution's im2col is its input: the product reads B's strips in place instead of packing panels
  // (alternated minima, one thread, AVX2: 16->16 at 112x112 0.58x the packed time, 96->24 at 80x80 0.74x,
  // 240->40 at 28x28 0.71x, 256->64 at 56x56 0.88x, 960->160 at 7x7 0.93x). Up to session 19 this stopped at 192
  // output channels (64->256 at 56x56 measured 1.12x, re-reading each strip for many A strips); on the Zen 5 of
  // session 20 that layer is 0.94-0.96x in place on AVX-512 and AVX2, ResNet-50 0.97x at one and two threads,
  // PP-OCRv4 rec 0.97x, MobileNetV3, det, cls and embedding unchanged. Planes of a multiple of 4 KiB put every
  // row of a strip in one L1 set, which cost 1.31x on a Zen 3 (32->64 at 160x160), but packing them cost more
  // on the Zen 4 the benchmarks run on: PP-OCRv4 det's 1x1 layers at 320x320 and 160x160 (16->32, 32->48,
  // 48->48, 12->96) 0.67-0.88x per node on AVX-512 and 0.70-0.95x on AVX2, the whole model 0.96x at one and
  // two threads (alternated minima, session 16), so they read in place too.
  const bool direct_b = path == ConvPath::Gemm1x1 && !packed->transposed;
  const bool padded = !packed->transposed && padded_direct(g);
  const PaddedPlane pp = padded ? padded_plane(g) : PaddedPlane{};
  thread_local std::vector<int64_t> row_off;
  if (padded) {
    // Row (c, kh, kw) of the product: the padded plane of channel c shifted by kh * dh rows, kw * dw columns;
    // with stride 2, phase (kh % 2, kw % 2) of channel c shifted by kh / 2 rows and kw / 2 columns.
    row_off.resize(static_cast<size_t>(k));
    for (int64_t r = 0; r < k; ++r) {
      const int64_t kw = r % g.kernel[2], kh = (r / g.kernel[2]) % g.kernel[1], c = r / (g.kernel[2] * g.kernel[1]);
      row_off[static_cast<size_t>(r)] =
          pp.s == 1 ? c * pp.hp * pp.wp + kh * g.dilation[1] * pp.wp + kw * g.dilation[2]
                    : ((c * 2 + kh % 2) * 2 + kw % 2) * pp.hp * pp.wp + (kh / 2) * pp.wp + kw / 2;
    }
  }
  for (int64_t n = n0; n < n1; ++n)
    for (int64_t gi = 0; gi < g.groups; ++gi) {
      const float* xg = x + (n * g.in_channels + gi * cg) * g.in_size();
      float* yg = y + (n * g.out_channels + gi * mg) * os;
      const auto gs = static_cast<size_t>(gi);
      const PanelCtx pc{&g, xg, &depthwise_fns(isa)};
      if (packed->transposed) {
        // scratch: col^T packed (k x os, rows rounded up to MR), then C^T (os x mg). col^T's strips are
        // filled from the input by fill_panel, in parallel (ResNet-50's 512 -> 512 3x3 at 7 x 7 built col on
        // one thread, then packed it: a fifth of the layer at two threads). A 1x1 convolution's col is its
        // input, and with one output position C^T is the output itself (MobileNetV3's squeeze-and-excitation
        // convolutions spent a third of their time copying).
        const int64_t os_pad = ceil_div(os, gemm_mr(isa)) * gemm_mr(isa);
        float* ct = os == 1 ? yg : scratch + k * os_pad;
        if (path == ConvPath::Gemm1x1)
          gemm_f32_packed(isa, exact, os, MatrixView{xg, 1, os}, *packed->as_bt[gs], ct, mg, pool);
        else if (strided_view_rows(g))
          gemm_f32_packed(isa, exact, os, MatrixView{xg, g.stride[2], g.dilation[2]}, *packed->as_bt[gs], ct, mg, pool);
        else
          gemm_f32_packed_at(isa, exact, os, PanelSource{&fill_panel, &pc}, *packed->as_bt[gs], scratch, ct, mg, pool);
        if (ct == yg) {
          if (epilogue && epilogue->apply_points)
            epilogue->apply_points(epilogue->ctx, n, gi * mg, mg, yg);
          else if (epilogue)
            apply_epilogue_planes(*epilogue, n, gi * mg, mg, os, yg);
          continue;
        }
        // C^T into place and the epilogue, in fixed chunks of 32 channels on the pool.
        constexpr int64_t kChannelsPerChunk = 32;
        parallel_for(pool, ceil_div(mg, kChannelsPerChunk), 2.0 * double(os * mg), [&](int64_t chunk) {
          const int64_t oc0 = chunk * kChannelsPerChunk, oc1 = std::min(mg, oc0 + kChannelsPerChunk);
          // Whole groups of the target's lanes of channels by the depthwise kernel's transposes (8 x 8 blocks in
          // registers on AVX2 and AVX-512): one value at a time, this copy was 1.5% of MobileNetV3 (perf, AVX2,
          // one thread; its 960 <-> 160 layers at 7 x 7). The rest, rows of C^T outer: each reads its channels
          // side by side (channel outer read C^T down a column, os lines mg * 4 bytes apart, which fall in one L1
          // set when that is a multiple of 4 KiB: ResNet-50's 512 -> 2048 1x1 at 7 x 7 spent 18% of its time
          // there).
          const int64_t lanes = float_lanes(isa);
          int64_t oc = oc0;
          if (lanes > 1)
            for (; oc + lanes <= oc1; oc += lanes)
              depthwise_fns(isa).from_channels_last(ct + oc, mg, os, lanes, yg + oc * os, os);
          for (int64_t j = 0; j < os && oc < oc1; ++j) {
            const float* __restrict src = ct + j * mg;
            float* __restrict dst = yg + j;
            for (int64_t c = oc; c < oc1; ++c) dst[c * os] = src[c];
          }
          if (epilogue) apply_epilogue_planes(*epilogue, n, gi * mg + oc0, oc1 - oc0, os, yg + oc0 * os);
        });
        continue;
      }
      const GroupEpilogue ge{epilogue, n, gi * mg, os};
      RegEpilogue reg;  // the register epilogue at this image and group's first channel
      if (epilogue && epilogue->reg) {
        reg = *epilogue->reg;
        if (reg.bias) reg.bias += gi * mg;
        if (reg.scale) reg.scale += gi * mg;
        if (reg.shift) reg.shift += gi * mg;
        if (reg.res) reg.res += n * epilogue->reg_res_n + gi * mg * reg.res_ld;
      }
      const TileEpilogue te{&apply_tile_epilogue, &ge,
                            epilogue && epilogue->prefetch ? &prefetch_tile_epilogue : nullptr,
                            epilogue && epilogue->reg ? &reg : nullptr};
      PanelSource src{&fill_panel, &pc};
      if (direct_b) {
        src.direct = xg;
        src.ldb = os;
      }
      if (padded) {
        // scratch: the padded planes (unless the input is one already), then the product's C when its
        // columns are not the output's.
        float* xp = pp.copy ? scratch : nullptr;
        float* cp = scratch + (pp.copy ? cg * pp.s * pp.s * pp.hp * pp.wp : 0);
        if (pp.s == 2)
          phase_planes_f32(g, pp.hp, pp.wp, cg, xg, xp, depthwise_fns(isa), pool);
        else if (pp.copy)
          pad_planes_f32(g, pp.hp, pp.wp, cg, xg, xp, pool);
        src.direct = pp.copy ? xp : xg;
        src.row_off = row_off.data();
        if (!pp.compact) {
          gemm_f32_panels(isa, exact, *packed->as_a[gs], os, src, yg, os, pool, epilogue ? &te : nullptr);
          continue;
        }
        gemm_f32_panels(isa, exact, *packed->as_a[gs], pp.n, src, cp, pp.n, pool);
        const int64_t ow_n = g.out[2], oh_n = g.out[1];
        parallel_for(pool, mg, double(os) * double(mg), [&](int64_t oc) {
          float* yo = yg + oc * os;
          for (int64_t oh = 0; oh < oh_n; ++oh)
            std::memcpy(yo + oh * ow_n, cp + oc * pp.n + oh * pp.wp, sizeof(float) * size_t(ow_n));
          if (epilogue) epilogue->apply(epilogue->ctx, n, gi * mg + oc, 0, os, yo);
        });
        continue;
      }
      gemm_f32_panels(isa, exact, *packed->as_a[gs], os, src, yg, os, pool, epilogue ? &te : nullptr);
    }
}

}  // namespace

int64_t conv_transpose_scratch_floats(const ConvGeometry& g) {
  return (g.out_channels / std::max<int64_t>(g.groups, 1)) * g.taps() * g.in_size();
}

namespace {

// A ConvTranspose whose taps tile the output: kernel == stride on every axis, no dilation, padding, trimming or
// output_padding (PP-OCRv4 det's 2x2 stride-2 upsampling). Each output element then receives exactly one entry
// of col, so col2im is a scatter, done on each block of col while it is in cache.
bool taps_tile_output(const ConvGeometry& g) {
  for (int a = 0; a < 3; ++a)
    if (g.kernel[a] != g.stride[a] || g.dilation[a] != 1 || g.pad_before[a] != 0 || g.out[a] != g.in[a] * g.stride[a])
      return false;
  return true;
}

struct TileScatter {
  const ConvGeometry* g;
  float* y;           // the group's first output plane
  const float* bias;  // the group's first bias, or null
  Isa isa;
  bool exact;
};

// col rows [i0, i0 + rows) (output channel and tap: row = oc * taps + (kd * KH + kh) * KW + kw) and columns
// [j0, j0 + cols) (input positions) into their output elements. col2im_f32 computes `+0 + v`, NaN canonical in
// exact mode, then add_channel_bias; here add_channel_bias runs on col's row (the same vector addition, so fast
// mode keeps its NaN payloads too) and the values move, NaN canonical in exact mode. `+0 + v` is v: a product's
// sum starts at +0, never becomes -0, and is never a signalling NaN.
void scatter_tile(const void* vctx, int64_t i0, int64_t rows, int64_t j0, int64_t cols, float* c, int64_t ldc) {
  const auto& t = *static_cast<const TileScatter*>(vctx);
  const ConvGeometry& g = *t.g;
  const int64_t taps = g.taps(), kh = g.kernel[1], kw = g.kernel[2];
  const int64_t ih = g.in[1], iw = g.in[2], oh = g.out[1], ow = g.out[2];
  for (int64_t r = 0; r < rows;) {
    const int64_t row = i0 + r, oc = row / taps, tap = row % taps;
    const int64_t kd = tap / (kh * kw), ky = tap / kw % kh, kx = tap % kw;
    // Two taps side by side (kx 0 and 1 of a 2-wide kernel, both in this block) interleave into one output
    // row: the one-tap loop's stores, two floats apart, were 43% of det's 24 -> 24 layer.
    const int64_t pair = kw == 2 && kx == 0 && r + 1 < rows ? 2 : 1;
    float* plane = t.y + oc * g.out_size();
    for (int64_t p = 0; p < pair; ++p)
      if (t.bias) add_channel_bias(t.isa, t.exact, c + (r + p) * ldc, t.bias + oc, 1, cols);
    const float* s0 = c + r * ldc;
    const float* s1 = c + (r + pair - 1) * ldc;
    int64_t j = j0;
    while (j < j0 + cols) {
      // One run of input positions within an input row: (id, iy, ix .. ix + len).
      const int64_t id = j / (ih * iw), iy = j / iw % ih, ix = j % iw;
      const int64_t len = std::min(iw - ix, j0 + cols - j), at = j - j0;
      float* dst = plane + ((id * g.stride[0] + kd) * oh + iy * kh + ky) * ow + ix * kw + kx;
      if (pair == 2 && t.exact) {
        for (int64_t q = 0; q < len; ++q) dst[2 * q] = canon(s0[at + q]), dst[2 * q + 1] = canon(s1[at + q]);
      } else if (pair == 2) {
        for (int64_t q = 0; q < len; ++q) dst[2 * q] = s0[at + q], dst[2 * q + 1] = s1[at + q];
      } else if (t.exact) {
        for (int64_t q = 0; q < len; ++q) dst[q * kw] = canon(s0[at + q]);
      } else {
        for (int64_t q = 0; q < len; ++q) dst[q * kw] = s0[at + q];
      }
      j += len;
    }
    r += pair;
  }
}

}  // namespace

void conv_transpose_f32(Isa isa, bool exact, const ConvGeometry& g, const float* x, const float* w, float* y,
                        float* scratch, ThreadPool* pool, const float* bias) {
  if (g.batch <= 0 || g.out_channels <= 0 || g.out_size() <= 0) return;
  const int64_t cg = g.in_channels / g.groups, mg = g.out_channels / g.groups;
  const int64_t rows = mg * g.taps(), is = g.in_size();
  if (taps_tile_output(g) && cg > 0) {
    // col = W_g^T * X_g with X_g read in place (a 1x1 convolution's B) and each finished block scattered into
    // the output at once: PP-OCRv4 det's two 2x2 stride-2 layers had written col whole (9.8 MB), read it
    // back in col2im, and packed X first.
    for (int64_t gi = 0; gi < g.groups; ++gi) {
      const std::shared_ptr<const PackedA> a = pack_a_f32(isa, rows, cg, MatrixView{w + gi * cg * rows, 1, rows});
      for (int64_t n = 0; n < g.batch; ++n) {
        const TileScatter ts{&g, y + (n * g.out_channels + gi * mg) * g.out_size(), bias ? bias + gi * mg : nullptr,
                             isa, exact};
        const TileEpilogue te{&scatter_tile, &ts};
        PanelSource src{nullptr, nullptr};  // B is read in place: no panel is filled
        src.direct = x + (n * g.in_channels + gi * cg) * is;
        src.ldb = is;
        gemm_f32_panels(isa, exact, *a, is, src, scratch, is, pool, &te);
      }
    }
    return;
  }
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t gi = 0; gi < g.groups; ++gi) {
      // A = W_g^T: element (row, c) is w[(gi * cg + c) * rows + row].
      gemm_f32(isa, exact, rows, is, cg, MatrixView{w + gi * cg * rows, 1, rows},
               MatrixView{x + (n * g.in_channels + gi * cg) * is, is, 1}, scratch, is, pool);
      col2im_f32(isa, exact, g, mg, scratch, y + (n * g.out_channels + gi * mg) * g.out_size(), pool,
                 bias ? bias + gi * mg : nullptr);
    }
}

}  // namespace onemodel::kern
