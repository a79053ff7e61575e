// Window attributes and geometry of every operator that slides a kernel over one to three spatial axes: Conv,
// FusedConv and ConvTranspose (conv.cc), ConvInteger and QLinearConv (quant_products.cc) through
// conv_window(), and MaxPool, AveragePool, LpPool and MaxUnpool (pool.cc, pool_lp_unpool.cc) through
// pool_geometry(). One reader checks the attributes and one loop computes the output sizes of ops-conv.md
// ("Output sizes"). One, two or three spatial axes are lifted to three (missing leading axes have size 1,
// kernel 1), so every kernel is a single triple loop. Attribute values are bounded before any arithmetic, so
// hostile values (huge kernels, strides, dilations or pads, negative pads) give InvalidModel naming the node
// instead of overflow.
#pragma once
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ops/common.h"

namespace onemodel::rt {

// Largest kernel, stride, dilation, pad or group accepted. With extents below 2^31 (Shape's limit) every
// product of two such values and every sum of a few of them stays far inside int64.
inline constexpr int64_t kMaxWindowAttr = int64_t{1} << 31;

enum class AutoPad { NotSet, SameUpper, SameLower, Valid };

// The operator whose attributes are read: pools require kernel_shape and read ceil_mode; the convolutions
// read group; ConvTranspose also output_padding and output_shape.
enum class WindowOp { Pool, Conv, ConvTranspose };

struct WindowAttrs {
  AutoPad auto_pad = AutoPad::NotSet;
  // One value per spatial axis (pads two), as given: empty when absent. Pools have them filled (strides and
  // dilations 1, pads 0), since their kernel_shape fixes the number of axes.
  std::vector<int64_t> kernel, strides, dilations, pads;
  int64_t group = 1;                                  // convolutions
  bool ceil_mode = false;                             // pools
  std::vector<int64_t> output_padding, output_shape;  // ConvTranspose
};

// Reads and checks the window attributes of `op`; every value is in range when it returns (InvalidModel
// otherwise; a kernel_shape of more than 3 entries is Unsupported).
WindowAttrs read_window_attrs(const NodeInfo& info, WindowOp op);

// The geometry of one node for one input shape, lifted to three spatial axes: per axis the input size, output
// size, kernel, stride, dilation and the pads before and after (under SAME_* the computed ones).
struct WindowGeom {
  int64_t n = 1, c = 1;  // batch, input channels
  std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, k{1, 1, 1}, s{1, 1, 1}, d{1, 1, 1}, pb{0, 0, 0}, pa{0, 0, 0};
  int spatial = 0;  // the node's own number of spatial axes
  Shape out_shape;  // [N, output channels, out...] with the node's spatial rank

  int64_t in_plane() const { return in[0] * in[1] * in[2]; }
  int64_t out_plane() const { return out[0] * out[1] * out[2]; }
};

// A pool's geometry for input shape `x` ([N, C, spatial...] with kernel_shape's number of spatial axes).
// Errors are InvalidModel, at plan and at run time.
WindowGeom pool_geometry(const NodeInfo& info, const Shape& x, const WindowAttrs& a);

// A convolution's geometry (transpose: ConvTranspose) for input X and weights W ([M, C/group, kernel...], for
// ConvTranspose [C, M/group, kernel...]). Shape errors are of kind `kind` (InvalidModel at plan time,
// InvalidInput at run time); more than 3 spatial axes is Unsupported.
struct ConvWindow {
  WindowGeom g;
  int64_t out_channels = 1, groups = 1;
};
ConvWindow conv_window(const NodeInfo& info, const WindowAttrs& a, bool transpose, const Shape& x, const Shape& w,
                       ErrorKind kind);

// The taps of one pooling window along one axis that fall inside the input: positions first, first + step, ...
// (count of them), and how many taps lie inside the declared padding region [-pb, n + pa).
struct AxisWindow {
  int64_t first = 0, count = 0, step = 1, padded = 0;
};

// All windows of axis j (the same for every plane).
std::vector<AxisWindow> axis_windows(const WindowGeom& g, size_t j);

// "[a,b,c]": an attribute's values in a message (also Col2Im's, col2im.cc).
std::string list_str(const std::vector<int64_t>& v);

}  // namespace onemodel::rt
