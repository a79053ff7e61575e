// fp32 convolution kernels, NCHW (kernels-gemm.md "Convolution", kernels-depthwise.md, exact-mode.md).
// Every shape is lifted to three spatial axes (depth, height, width) with size-1 leading axes, so one code path
// serves 1-D, 2-D and 3-D. Bias is never part of the sums: the caller adds it after them (conv_f32's epilogue).
//
// Conv, per output (n, oc, od, oh, ow) of group g: acc = +0, then for c, kd, kh, kw (that nesting, increasing)
// acc = acc + w * x_padded, where a padding tap is a real product with +0 (an infinite or NaN weight meeting
// padding gives NaN). Regular and grouped convolutions are the matrix product of the group's weights with the
// im2col matrix, which is never materialised: the product fills one cache-sized panel of it at a time from
// the input (an implicit GEMM, kernels/gemm.h PanelSource) against weights packed once. Depthwise ones
// (groups == in_channels > 1) run a direct kernel with the same order.
//
// ConvTranspose, per image and group: col = W_g^T * X_g (kernels/gemm.h, the sum over input channels), then
// col2im: every output element starts at +0 and receives the taps landing on it in increasing (kd, kh, kw)
// order. That extends ops-conv.md's 2-D rule to three axes. Exact mode rewrites NaN outputs as 0x7FC00000.
#pragma once
#include <array>
#include <cstdint>
#include <memory>

#include "base/thread_pool.h"
#include "kernels/gemm.h"
#include "kernels/isa.h"

namespace onemodel::kern {

// One convolution's shape. For Conv, `in` is the input and `out` the output spatial size; for ConvTranspose
// `in` is the (smaller) data input and `out` the produced output, and `pad_before` may be negative (an
// output_shape larger than the kernel reaches). Axes are {depth, height, width}; unused leading axes hold
// size 1, kernel 1, stride 1, dilation 1, pad 0.
struct ConvGeometry {
  int64_t batch = 1;
  int64_t in_channels = 1;
  int64_t out_channels = 1;
  int64_t groups = 1;
  std::array<int64_t, 3> in{1, 1, 1};
  std::array<int64_t, 3> out{1, 1, 1};
  std::array<int64_t, 3> kernel{1, 1, 1};
  std::array<int64_t, 3> stride{1, 1, 1};
  std::array<int64_t, 3> dilation{1, 1, 1};
  std::array<int64_t, 3> pad_before{0, 0, 0};

  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
  int64_t taps() const { return kernel[0] * kernel[1] * kernel[2]; }
};

// Which algorithm conv_f32 uses for a shape (exposed so tests can make sure they cover every one).
enum class ConvPath : uint8_t {
  Gemm1x1,          // 1x1, stride 1, unpadded: the input is the matrix product's B directly
  Im2colGemm,       // im2col per image and group, then the matrix product
  Depthwise,        // kernels-depthwise.md vector kernel (1-D and 2-D)
  DepthwiseDirect,  // the same order one output at a time: 3-D, more than 64 taps, or width stride above 8
};
ConvPath conv_path(const ConvGeometry& g);

// Floats of scratch conv_f32 needs for this shape and mode when at most `threads` threads run its chunks.
int64_t conv_scratch_floats(const ConvGeometry& g, bool exact, int threads);

// The weights of a Gemm1x1 / Im2colGemm convolution packed once for `isa` (one packed A per group, see
// kernels/gemm.h; in fast mode, for a shape kernels/winograd.h applies to, its transformed weights instead);
// for a depthwise shape that runs channel-blocked, its taps in blocks of the target's lanes (float32 storage
// only); null for the other depthwise shapes, which read the weights as they are. Depends on the weight shape
// (out_channels, in_channels / groups, kernel), the groups and, for the narrow-output and Winograd choices,
// the output size, so plans of most input sizes share it.
// `storage` other than F32 (compact weights, docs/fp16.md section 6; every weight already a value of that format):
// the packed matrices keep 16 bits per value and are widened at each use (gemm.h PackStorage); Winograd's
// transformed weights are not values of the format and stay float32, and the panels' packing for images with
// an infinity or NaN is made now, compact, since conv_f32 then gets no float32 weights.
struct ConvPackedWeights;
std::shared_ptr<const ConvPackedWeights> conv_pack_weights(Isa isa, bool exact, const ConvGeometry& g, const float* w,
                                                           PackStorage storage = PackStorage::F32);
// True when `p` holds 16-bit values (conv_f32 may then be called without w).
bool conv_packed_compact(const ConvPackedWeights& p);
// True when conv_f32 may be called without w for the shapes `p` matches: compact packings and those made by
// conv_pack_panels / conv_pack_from_panels.
bool conv_packed_alone(const ConvPackedWeights& p);
// A session's packing of the weights of a matrix-product convolution (not depthwise: groups == 1, or more than one
// input channel per group), shape-free: per group the mg x k matrix (mg = out_channels / groups, k = the
// group's input channels x taps) in pack_a_f32's layout, float32 (graph-runtime.md section 4, "Weights the packing
// keeps"). It serves the shapes whose preferred form is the plain one; conv_pack_from_panels makes the others.
std::shared_ptr<const ConvPackedWeights> conv_pack_panels(Isa isa, int64_t out_channels, int64_t groups,
                                                          int64_t group_k, const float* w);
// The packing of `panels` (conv_pack_panels) for shape g: `panels` itself where it is g's preferred form,
// else conv_pack_weights(g) of the weights unpacked from it (the transposed form, or Winograd's transformed
// weights with `panels` kept for images with an infinity or NaN). Same values, so the same bits as packing the
// weights themselves.
std::shared_ptr<const ConvPackedWeights> conv_pack_from_panels(Isa isa, bool exact, const ConvGeometry& g,
                                                               const std::shared_ptr<const ConvPackedWeights>& panels);
// True when `p` was packed for this target, mode and the weight shape of `g`, in a form that serves g's output
// size: the form conv_pack_weights(g) would choose, or, near the bound between the two (the transposed one for
// few output positions), the other one, which gives the same bits.
bool conv_packed_matches(const ConvPackedWeights& p, Isa isa, bool exact, const ConvGeometry& g);
// conv_packed_matches, and in the form conv_pack_weights(g) would choose.
bool conv_packed_preferred(const ConvPackedWeights& p, Isa isa, bool exact, const ConvGeometry& g);

// Channels [0, channels) of one image-group x (2-D planes of g.in) written into zero-padded planes of hp x wp
// at xp, the input at row pad_before[1], column pad_before[2]; input rows and columns past the padded plane
// are dropped. For the paths that read im2col rows in place. Returns false when a copied value is infinite or
// NaN.
bool pad_planes_f32(const ConvGeometry& g, int64_t hp, int64_t wp, int64_t channels, const float* x, float* xp,
                    ThreadPool* pool);

// y[batch, out_channels, out...] = conv(x[batch, in_channels, in...], w[out_channels, in_channels/groups,
// kernel...]). `scratch` holds conv_scratch_floats(g, threads) floats where threads >= the pool's threads
// (1 without a pool). `packed` (optional) is conv_pack_weights(isa, g, w); without it the weights are packed
// for this call. w may be null when `packed` is compact (conv_packed_compact) and matches. Exact results are the same
// bits on every target and at any thread count, packed or not. `epilogue` (optional) then runs over every output
// exactly once, in runs of one output plane: y points at output (n, oc, j0) and holds `count` finished values, which it
// may rewrite in place (the bias and fused element-wise chains of ops/conv.cc). The matrix-product and depthwise paths
// call it on the computing thread right after a block of outputs is finished, while it is in cache; the others after
// the product. When each output plane is one value (a 1x1 output: squeeze-and-excitation layers, a classifier), the
// paths call `apply_points` instead, if set, once for a run of planes: y[i] is output (n, oc0 + i, 0) for i < channels.
// One call per channel cost as much as the product there (MobileNetV3's 960 -> 240 layer).
struct ConvEpilogue {
  void (*apply)(const void* ctx, int64_t n, int64_t oc, int64_t j0, int64_t count, float* y);
  const void* ctx;
  void (*apply_points)(const void* ctx, int64_t n, int64_t oc0, int64_t channels, float* y) = nullptr;
  // Optional: starts bringing what apply(ctx, n, oc, j0, count, y) reads besides y into the cache.
  void (*prefetch)(const void* ctx, int64_t n, int64_t oc, int64_t j0, int64_t count) = nullptr;
  // Optional: apply(ctx, n, oc0 + p, 0, size, y + p * size) for p in [0, planes), in fewer calls.
  void (*apply_planes)(const void* ctx, int64_t n, int64_t oc0, int64_t planes, int64_t size, float* y) = nullptr;
  // Optional: what `apply` does, when it is a bias (per output channel), a residual (output (n, oc, j) reads
  // res[n * res_n + oc * res_c + j]) and a tail, as a register epilogue (gemm.h RegEpilogue; its bias and res
  // are those of channel 0 of image 0). The matrix-product panels then apply it to their full register tiles
  // and call `apply` only for the rest (kernels-gemm.md section 7).
  const RegEpilogue* reg = nullptr;
  int64_t reg_res_n = 0;
};
// `planes` whole consecutive output planes of image n through the epilogue (apply_planes when it has one).
void apply_epilogue_planes(const ConvEpilogue& ep, int64_t n, int64_t oc0, int64_t planes, int64_t size, float* y);
void conv_f32(Isa isa, bool exact, const ConvGeometry& g, const float* x, const float* w, float* y, float* scratch,
              ThreadPool* pool, const ConvPackedWeights* packed = nullptr, const ConvEpilogue* epilogue = nullptr);

// Floats of scratch conv_transpose_f32 needs.
int64_t conv_transpose_scratch_floats(const ConvGeometry& g);

// y[batch, out_channels, out...] = conv_transpose(x[batch, in_channels, in...], w[in_channels,
// out_channels/groups, kernel...]); output position o along an axis receives input position i through tap k
// when o = i * stride - pad_before + k * dilation.
// `bias` (optional): one value per output channel, added after the taps as add_channel_bias would.
void conv_transpose_f32(Isa isa, bool exact, const ConvGeometry& g, const float* x, const float* w, float* y,
                        float* scratch, ThreadPool* pool, const float* bias = nullptr);

// Adds the col rows (c, kd, kh, kw) x input positions of `channels` channels into their output planes (g.out): every
// output starts at +0 and receives its taps in increasing (kd, kh, kw) order; exact mode rewrites NaN as 0x7FC00000.
// ConvTranspose's second step and the Col2Im operator (ops-newer.md section 6). One chunk per channel.
// `bias` (optional, one value per channel): then added to each finished plane by add_channel_bias(isa, ...) in
// the same chunk.
void col2im_f32(Isa isa, bool exact, const ConvGeometry& g, int64_t channels, const float* col, float* y,
                ThreadPool* pool, const float* bias = nullptr);

// --- the depthwise vector kernel (depthwise-inl.h, one copy per target) ---

// At most this many taps per plane (kh * kw) take the depthwise vector kernel; larger kernels the direct loop.
inline constexpr int64_t kMaxDepthwiseTaps = 64;

// One output plane's geometry for the 2-D depthwise kernel (1-D runs with height 1).
struct DepthwisePlane {
  int64_t in_h, in_w, out_h, out_w;
  int64_t k_h, k_w, s_h, s_w, d_h, d_w, pad_t, pad_l;
  // Derived by conv_driver.cc: rows and columns of the zero-padded plane that taps reach, and the layout of the
  // phase planes: s_w column phases times ph_h row phases, each phase_h rows of phase_w columns; phase (a, b)
  // holds padded rows a, a + ph_h, ... and columns b, b + s_w, ... (ph_h is 1, or s_h for flat planes).
  int64_t padded_h, padded_w, phase_w, ph_h, phase_h;
  bool in_place;  // stride-1 width and height and no padding: taps read the input plane directly (row stride in_w)
  // Outputs walked as one run j = oy * row_stride + ox over the phase planes (the columns ox >= out_w are
  // computed and dropped), so narrow planes fill whole vectors (kernels-depthwise.md section 3).
  bool flat;
  // Not flat, square 3x3 (or 5x5 where 16 lanes mean AVX-512's 32 registers), height stride 1 or 2, height
  // dilation 1: walked four output rows at a time with the weights in registers (kernels-depthwise.md 3).
  bool rows;
};

struct DepthwiseFns {
  // Writes the phase planes of one input plane into `phases` (s_w * ph_h * phase_h * phase_w floats) using `row`
  // (phase_w * s_w floats) as a temporary. `zeroed`: `phases` holds an earlier plane built for the same
  // geometry, so padding that never changes need not be written again.
  void (*build_phases)(const DepthwisePlane& p, const float* x, float* phases, float* row, bool zeroed);
  // One output plane from its source (`src`, rows of `row_stride`); `tap_off[t]` is tap t's offset from an
  // output position's base, `w` the plane's taps in (kh, kw) order. A flat plane whose row stride is not out_w
  // is computed into `tmp` ((out_h - 1) * row_stride + out_w floats), then its rows are copied into y.
  void (*compute_plane)(bool exact, const DepthwisePlane& p, const float* src, int64_t row_stride,
                        const int64_t* tap_off, const float* w, float* y, float* tmp);
  // A channel-blocked plane (kernels-depthwise.md section 8): `tile` holds the zero-padded planes of as many
  // channels as the target has float lanes, channels-last (padded_h x padded_w x lanes), `wt` their taps
  // (taps x lanes); writes out_h x out_w x lanes outputs to `out`.
  void (*compute_blocked)(bool exact, const DepthwisePlane& p, const float* tile, const float* wt, float* out);
  // Positions j < count of rows of `row_w` (src[l][at + j] for every lane l; src holds lanes pointers) to
  // dst[((j / row_w) * dst_row + j % row_w) * lanes + l]: whole planes in one call, rows into a padded tile.
  void (*to_channels_last)(const float* const* src, int64_t at, int64_t count, float* dst, int64_t row_w,
                           int64_t dst_row);
  // dst[l * stride + j] = src[j * src_row + l] for j < count and l < used (src_row >= lanes; lanes values are
  // read at each position whatever `used` is). Also the transposed convolutions' C^T into planes.
  void (*from_channels_last)(const float* src, int64_t src_row, int64_t count, int64_t used, float* dst,
                             int64_t stride);
  // dst[i] = src[2 * i] for i < n, reading src[0, avail) only (avail >= 2 * n - 1). Not depthwise: the
  // im2col rows of a width-stride-2 convolution (a vector-per-4-values loop filled MobileNetV3's stem panels).
  void (*take_even)(const float* src, int64_t avail, float* dst, int64_t n);
};
const DepthwiseFns& depthwise_fns(Isa isa);  // depthwise.cc

}  // namespace onemodel::kern
