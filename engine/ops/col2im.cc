// Col2Im (opset 18, ops-newer.md section 6): input [N, C * prod(block_shape), L] holds, per image and channel, one
// row per block offset (row-major over block_shape) and one column per block position (row-major over the block
// grid); the rows are added into the image [N, C, image_shape...] where they land. That is ConvTranspose's col2im
// step with the block grid as its input and the image as its output, so it runs on kern::col2im_f32 (every image
// element starts at +0 and receives its taps in increasing block-offset order; canonical NaN in exact mode). One to
// three spatial axes, float32. image_shape and block_shape are inputs; the output shape needs image_shape's value.
#include <memory>
#include <string>
#include <vector>

#include "kernels/conv.h"
#include "ops/index_util.h"
#include "ops/ops.h"
#include "ops/window.h"

namespace onemodel::rt {
namespace {

class Col2ImKernel final : public Kernel {
 public:
  Col2ImKernel(std::vector<int64_t> dilations, std::vector<int64_t> pads, std::vector<int64_t> strides)
      : Kernel(KernelFlags{.exact = true}),
        dilations_(std::move(dilations)),
        pads_(std::move(pads)),
        strides_(std::move(strides)) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0) || !ctx.has_input(1) || !ctx.has_input(2))
      ctx.fail(ErrorKind::InvalidModel, "expects input, image_shape and block_shape");
    if (ctx.input(0).dtype != DType::F32)
      ctx.fail(ErrorKind::Unsupported, "element type " + type_str(ctx.input(0).dtype) + " is not supported");
    for (size_t i : {size_t{1}, size_t{2}}) {
      if (ctx.input(i).dtype != DType::I64)
        ctx.fail(ErrorKind::InvalidModel, "image_shape and block_shape must be int64");
      if (ctx.input(i).shape.rank() != 1) ctx.fail(ErrorKind::InvalidModel, "image_shape and block_shape must be 1-D");
    }
    if (!have_values(ctx, {1, 2})) return;
    Shape out;
    geometry(ctx.info, ctx.input(0).shape, ints_of(ctx, 1, "image_shape"), ints_of(ctx, 2, "block_shape"), out,
             ErrorKind::InvalidModel);
    ctx.set_output(0, DType::F32, out);
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    Shape out;
    const kern::ConvGeometry g =
        geometry(ctx.info, x.shape(), read_int_tensor(ctx.info, ctx.input(1), "image_shape"),
                 read_int_tensor(ctx.info, ctx.input(2), "block_shape"), out, ErrorKind::InvalidInput);
    if (out != y.shape() || x.dtype() != DType::F32)
      ctx.fail(ErrorKind::InvalidInput, "inputs do not match the planned output " + y.shape().to_string());
    const float* px = x.data<float>().data();
    float* py = y.mutable_data<float>().data();
    const int64_t rows = g.in_channels * g.taps(), cols = g.in_size();
    for (int64_t n = 0; n < g.batch; ++n)
      kern::col2im_f32(ctx.isa, ctx.exact, g, g.in_channels, px + n * rows * cols,
                       py + n * g.in_channels * g.out_size(), ctx.pool);
  }

 private:
  // The geometry (in = block grid, out = image, kernel = block_shape, the attributes), with every value checked
  // before any arithmetic; errors of kind `kind` (the attributes' always InvalidModel).
  kern::ConvGeometry geometry(const NodeInfo& info, const Shape& x, const std::vector<int64_t>& image,
                              const std::vector<int64_t>& block, Shape& out, ErrorKind kind) const {
    const size_t k = image.size();
    if (k == 0 || block.size() != k)
      info.fail(kind, "image_shape " + list_str(image) + " and block_shape " + list_str(block) +
                          " must have one entry per axis");
    if (k > 3) info.fail(ErrorKind::Unsupported, std::to_string(k) + " spatial axes (at most 3 are supported)");
    auto attr = [&](const std::vector<int64_t>& v, size_t count, int64_t dflt, int64_t lo, const char* what) {
      if (v.empty()) return std::vector<int64_t>(count, dflt);
      if (v.size() != count)
        info.fail(ErrorKind::InvalidModel, std::string(what) + " has " + std::to_string(v.size()) +
                                               " entries, expected " + std::to_string(count));
      for (int64_t a : v)
        if (a < lo || a > kMaxWindowAttr)
          info.fail(ErrorKind::InvalidModel, std::string(what) + " " + list_str(v) + " is out of range");
      return v;
    };
    const std::vector<int64_t> dil = attr(dilations_, k, 1, 1, "dilations");
    const std::vector<int64_t> pads = attr(pads_, 2 * k, 0, 0, "pads");
    const std::vector<int64_t> str = attr(strides_, k, 1, 1, "strides");
    if (x.rank() != 3) info.fail(kind, "input must be [N, C * prod(block_shape), L], got " + x.to_string());
    kern::ConvGeometry g;
    g.batch = x[0];
    int64_t taps = 1, blocks = 1;
    std::vector<int64_t> dims = {x[0], 0};
    for (size_t d = 0; d < k; ++d) {
      if (image[d] < 0 || image[d] > kMaxWindowAttr || block[d] < 1 || block[d] > kMaxWindowAttr)
        info.fail(kind, "image_shape " + list_str(image) + " or block_shape " + list_str(block) + " is out of range");
      const int64_t span = dil[d] * (block[d] - 1) + 1;
      const int64_t room = image[d] + pads[d] + pads[d + k] - span;
      if (room < 0)
        info.fail(kind,
                  "block_shape " + list_str(block) + " does not fit image_shape " + list_str(image) + " with the pads");
      const size_t a = 3 - k + d;  // lifted to three axes
      g.in[a] = room / str[d] + 1;
      g.out[a] = image[d];
      g.kernel[a] = block[d];
      g.stride[a] = str[d];
      g.dilation[a] = dil[d];
      g.pad_before[a] = pads[d];
      // Each factor is at most 2^31 before it multiplies a product of at most 2^31: no overflow.
      if (g.in[a] > kMaxElements) info.fail(kind, "block grid too large");
      taps *= block[d];
      blocks *= g.in[a];
      if (taps > kMaxElements || blocks > kMaxElements) info.fail(kind, "block_shape or block grid too large");
      dims.push_back(image[d]);
    }
    if (x[1] % taps != 0)
      info.fail(kind, "input extent " + std::to_string(x[1]) +
                          " is not a multiple of prod(block_shape) = " + std::to_string(taps));
    if (x[2] != blocks)
      info.fail(kind,
                "input has " + std::to_string(x[2]) + " block positions, the image holds " + std::to_string(blocks));
    g.in_channels = g.out_channels = x[1] / taps;
    dims[1] = g.in_channels;
    out = checked(info, dims, kind);
    return g;
  }

  static Shape checked(const NodeInfo& info, const std::vector<int64_t>& dims, ErrorKind kind) {
    if (!Shape::valid(dims)) info.fail(kind, "output shape " + list_str(dims) + " exceeds the engine's limits");
    return shape_of(dims);
  }

  std::vector<int64_t> dilations_, pads_, strides_;
};

}  // namespace

std::unique_ptr<Kernel> make_col2im(const NodeInfo& info) {
  return std::make_unique<Col2ImKernel>(info.get_ints("dilations"), info.get_ints("pads"), info.get_ints("strides"));
}

}  // namespace onemodel::rt
