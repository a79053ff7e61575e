// Fast-mode 3x3 convolution by Winograd's minimal filtering F(m x m, 3x3), m = 4 or 2 (Lavin and Gray 2016;
// kernels-gemm.md section 11). Each m x m block of outputs of one channel is A^T [ sum over c of (G g G^T) (.)
// (B^T d B) ] A, d the (m + 2) x (m + 2) input tile: (m + 2)^2 matrix products (one per transformed position xi)
// of the transformed weights U_xi [out_channels x in_channels] with the transformed tiles V_xi [in_channels x
// tiles] replace the im2col product, 4x (F(4x4)) or 2.25x (F(2x2)) fewer multiplications. Its error bound is
// kernels-gemm.md section 11's, checked by kernel_winograd_test.cc. Never used in exact mode (its bits are not
// exact mode's order).
#pragma once
#include <cstdint>
#include <memory>

#include "base/thread_pool.h"
#include "kernels/conv.h"
#include "kernels/isa.h"

namespace onemodel::kern {

// 2-D, groups 1, 3x3, stride 1, dilation 1, at least 16 input and output channels and 8x8 outputs: where
// the transforms' cost is small next to the products and edge tiles waste little.
bool winograd_applies(const ConvGeometry& g);

// The tile side of F(m x m, 3x3) for g's shape: 4 or 2 (winograd.cc says when).
int64_t winograd_tile(const ConvGeometry& g);

// The transformed weights, packed once per session ((m + 2)^2 packed A of out_channels x in_channels); null when a
// weight is infinite or NaN (the transforms would turn infinities into NaN where the direct sum has none).
struct WinogradWeights;
std::shared_ptr<const WinogradWeights> winograd_pack(Isa isa, const ConvGeometry& g, const float* w);
// The tile side `u` was transformed for: it serves the shapes whose winograd_tile is that.
int64_t winograd_packed_tile(const WinogradWeights& u);

// Floats of scratch winograd_conv_f32 needs when the pool has at most `threads` threads.
int64_t winograd_scratch_floats(const ConvGeometry& g, int threads);

// Image n of y = conv(x, w) in fast mode for a shape winograd_applies to, with `u` = winograd_pack(isa, g, w),
// then `epilogue` (optional) over its outputs. Returns false, having written nothing of y, when the image's
// input holds an infinity or NaN: the caller runs the direct product for it instead, so special values
// propagate as they do there. Fixed chunks: the same bits at any thread count.
bool winograd_conv_f32(Isa isa, const ConvGeometry& g, int64_t n, const float* x, const WinogradWeights& u, float* y,
                       float* scratch, ThreadPool* pool, const ConvEpilogue* epilogue);

// Floats of room the transforms' whole vectors need (winograd-inl.h): after each channel's row of a block's tiles
// in V_xi and M_xi (at least the widest target's lanes), and after the padded input planes (4 lanes + 8).
inline constexpr int64_t kWinogradRowRoom = 16;
inline constexpr int64_t kWinogradReadRoom = 80;

struct WinogradFns {
  void (*input)(const float* xp, int64_t wp, int64_t tw, int64_t ty0, int64_t ty1, float* v, int64_t xi_stride);
  void (*output)(const float* m, int64_t xi_stride, int64_t tw, int64_t ty0, int64_t ty1, float* y, int64_t oh,
                 int64_t ow);
};

}  // namespace onemodel::kern
