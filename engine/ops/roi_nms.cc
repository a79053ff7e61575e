// RoiAlign (opsets 10, 16) and NonMaxSuppression (10+), the detection helpers.
//   RoiAlign (ops-coverage.md): each output bin averages (or, in max mode, takes the largest weighted
//     neighbour of) a grid of bilinear samples; coordinate_transformation_mode defaults to half_pixel from
//     opset 16 and output_half_pixel before; sampling_ratio 0 uses ceil(region size / bins). Not exact.
//   NonMaxSuppression: per batch and class, candidates above score_threshold in descending score order
//     (ties: lower box index first) are kept unless their IoU with a kept box exceeds iou_threshold. The
//     selection is a comparison sequence on float32 values, so it is exact.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "ops/index_util.h"
#include "ops/ops.h"

namespace onemodel::rt {
namespace {

class RoiAlignKernel final : public Kernel {
 public:
  RoiAlignKernel(bool max_mode, bool half_pixel, int64_t oh, int64_t ow, int64_t ratio, float scale)
      : Kernel(KernelFlags{.exact = false}),
        max_(max_mode),
        half_(half_pixel),
        oh_(oh),
        ow_(ow),
        ratio_(ratio),
        scale_(scale) {}

  void infer(InferContext& ctx) const override {
    for (size_t i = 0; i < 3; ++i)
      if (!ctx.has_input(i)) ctx.fail(ErrorKind::InvalidModel, "expects inputs X, rois and batch_indices");
    if (ctx.input(0).dtype != DType::F32 || ctx.input(1).dtype != DType::F32)
      ctx.fail(ErrorKind::Unsupported, "element types other than float32 are not supported");
    if (ctx.input(2).dtype != DType::I64) ctx.fail(ErrorKind::InvalidModel, "batch_indices must be int64");
    ctx.set_output(0, DType::F32, out_shape(ctx.info, ctx.input(0).shape, ctx.input(1).shape, ctx.input(2).shape));
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Shape os = out_shape(ctx.info, x.shape(), ctx.input(1).shape(), ctx.input(2).shape());
    if (ctx.output(0).shape() != os) ctx.fail(ErrorKind::InvalidInput, "inputs do not match the planned output");
    const int64_t n = x.shape()[0], c = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
    const float* px = x.data<float>().data();
    const float* rois = ctx.input(1).data<float>().data();
    const int64_t* bi = ctx.input(2).data<int64_t>().data();
    float* py = ctx.output(0).mutable_data<float>().data();
    const float off = half_ ? 0.5f : 0.0f;
    for (int64_t r = 0; r < os[0]; ++r) {
      if (bi[r] < 0 || bi[r] >= n)
        ctx.fail(ErrorKind::InvalidInput,
                 "batch index " + std::to_string(bi[r]) + " of roi " + std::to_string(r) + " is out of range");
      const float* box = rois + r * 4;
      const float x0 = box[0] * scale_ - off, y0 = box[1] * scale_ - off;
      float rw = box[2] * scale_ - off - x0, rh = box[3] * scale_ - off - y0;
      if (!half_) {
        rw = std::max(rw, 1.0f);
        rh = std::max(rh, 1.0f);
      }
      const float bh = rh / static_cast<float>(oh_), bw = rw / static_cast<float>(ow_);
      const int64_t gh = ratio_ > 0 ? ratio_ : grid_count(rh, oh_), gw = ratio_ > 0 ? ratio_ : grid_count(rw, ow_);
      const float count = static_cast<float>(std::max<int64_t>(gh * gw, 1));
      for (int64_t ch = 0; ch < c; ++ch) {
        const float* plane = px + (bi[r] * c + ch) * h * w;
        for (int64_t ph = 0; ph < oh_; ++ph)
          for (int64_t pw = 0; pw < ow_; ++pw) {
            float acc = 0.0f;
            bool first = true;
            for (int64_t iy = 0; iy < gh; ++iy) {
              const float yy =
                  y0 + static_cast<float>(ph) * bh + (static_cast<float>(iy) + 0.5f) * bh / static_cast<float>(gh);
              for (int64_t ix = 0; ix < gw; ++ix) {
                const float xx =
                    x0 + static_cast<float>(pw) * bw + (static_cast<float>(ix) + 0.5f) * bw / static_cast<float>(gw);
                float v[4] = {0, 0, 0, 0};
                sample(plane, h, w, yy, xx, v);
                if (max_) {
                  const float m = std::max(std::max(std::max(v[0], v[1]), v[2]), v[3]);
                  acc = first ? m : std::max(acc, m);
                } else {
                  acc += v[0] + v[1] + v[2] + v[3];
                }
                first = false;
              }
            }
            py[((r * c + ch) * oh_ + ph) * ow_ + pw] = max_ ? acc : acc / count;
          }
      }
    }
  }

 private:
  // ceil(extent / bins), bounded so hostile rois cannot ask for billions of samples.
  static int64_t grid_count(float extent, int64_t bins) {
    const float g = std::ceil(extent / static_cast<float>(bins));
    if (!(g > 0.0f)) return 0;
    return g > 4096.0f ? 4096 : static_cast<int64_t>(g);
  }
  // The four weighted neighbours of a bilinear sample at (y, x); all zero outside [-1, size].
  static void sample(const float* p, int64_t h, int64_t w, float y, float x, float* v) {
    const float fh = static_cast<float>(h), fw = static_cast<float>(w);
    if (!(y >= -1.0f && y <= fh && x >= -1.0f && x <= fw) || h == 0 || w == 0) return;
    y = std::max(y, 0.0f);
    x = std::max(x, 0.0f);
    auto yl = static_cast<int64_t>(y), xl = static_cast<int64_t>(x);
    int64_t yh = yl + 1, xh = xl + 1;
    if (yl >= h - 1) {
      yl = yh = h - 1;
      y = static_cast<float>(yl);
    }
    if (xl >= w - 1) {
      xl = xh = w - 1;
      x = static_cast<float>(xl);
    }
    const float ly = y - static_cast<float>(yl), lx = x - static_cast<float>(xl), hy = 1.0f - ly, hx = 1.0f - lx;
    v[0] = hy * hx * p[yl * w + xl];
    v[1] = hy * lx * p[yl * w + xh];
    v[2] = ly * hx * p[yh * w + xl];
    v[3] = ly * lx * p[yh * w + xh];
  }

  Shape out_shape(const NodeInfo& info, const Shape& x, const Shape& rois, const Shape& bi) const {
    if (x.rank() != 4) info.fail(ErrorKind::InvalidModel, "X must be 4-D, got " + x.to_string());
    if (rois.rank() != 2 || rois[1] != 4)
      info.fail(ErrorKind::InvalidModel, "rois must be [num_rois, 4], got " + rois.to_string());
    if (bi.rank() != 1 || bi[0] != rois[0])
      info.fail(ErrorKind::InvalidModel, "batch_indices must be [num_rois], got " + bi.to_string());
    const std::vector<int64_t> d{rois[0], x[1], oh_, ow_};
    if (!Shape::valid(d)) info.fail(ErrorKind::InvalidModel, "output would have more than 2^31-1 elements");
    return shape_of(d);
  }

  bool max_, half_;
  int64_t oh_, ow_, ratio_;
  float scale_;
};

class NmsKernel final : public Kernel {
 public:
  explicit NmsKernel(bool center)
      : Kernel(KernelFlags{.exact = true, .outputs_data_dependent = true}), center_(center) {}

  void infer(InferContext& ctx) const override {
    ctx.fail(ErrorKind::Internal, "NonMaxSuppression has data-dependent outputs");
  }

  void run(RunContext& ctx) const override {
    if (!ctx.has_input(0) || !ctx.has_input(1)) ctx.fail(ErrorKind::InvalidModel, "expects inputs boxes and scores");
    const Tensor& boxes = ctx.input(0);
    const Tensor& scores = ctx.input(1);
    if (boxes.dtype() != DType::F32 || scores.dtype() != DType::F32)
      ctx.fail(ErrorKind::Unsupported, "element types other than float32 are not supported");
    const Shape& bs = boxes.shape();
    const Shape& ss = scores.shape();
    if (bs.rank() != 3 || bs[2] != 4 || ss.rank() != 3 || ss[0] != bs[0] || ss[2] != bs[1])
      ctx.fail(ErrorKind::InvalidInput, "boxes " + bs.to_string() + " and scores " + ss.to_string() + " do not match");
    int64_t max_out = 0;
    if (ctx.has_input(2)) {
      const std::vector<int64_t> v = read_int_tensor(ctx.info, ctx.input(2), "max_output_boxes_per_class");
      if (v.size() != 1) ctx.fail(ErrorKind::InvalidInput, "max_output_boxes_per_class must hold one value");
      max_out = std::max<int64_t>(v[0], 0);
    }
    const float iou_t = scalar(ctx, 3, 0.0f);
    const bool has_st = ctx.has_input(4);
    const float score_t = scalar(ctx, 4, 0.0f);
    const float* pb = boxes.data<float>().data();
    const float* ps = scores.data<float>().data();
    const int64_t nb = bs[0], nbox = bs[1], ncls = ss[1];
    std::vector<int64_t> sel;
    std::vector<int64_t> order, kept;
    for (int64_t b = 0; b < nb; ++b)
      for (int64_t cl = 0; cl < ncls; ++cl) {
        const float* sc = ps + (b * ncls + cl) * nbox;
        order.clear();
        for (int64_t i = 0; i < nbox; ++i)
          if (!has_st || sc[i] > score_t) order.push_back(i);
        // NaN scores rank last (as -inf) so the order stays a strict weak ordering.
        auto key = [&](int64_t i) { return sc[i] != sc[i] ? -INFINITY : sc[i]; };
        // Descending score, ties by box index (the order a stable sort would give). std::sort with the index
        // tiebreak rather than std::stable_sort: GCC 12's temporary buffer trips ASan's alloc-dealloc check.
        std::sort(order.begin(), order.end(), [&](int64_t a, int64_t c) {
          const float ka = key(a), kc = key(c);
          return ka > kc || (ka == kc && a < c);
        });
        kept.clear();
        for (int64_t i : order) {
          if (static_cast<int64_t>(kept.size()) >= max_out) break;
          bool keep = true;
          for (int64_t k : kept)
            if (iou(pb + (b * nbox + k) * 4, pb + (b * nbox + i) * 4) > iou_t) {
              keep = false;
              break;
            }
          if (!keep) continue;
          kept.push_back(i);
          sel.insert(sel.end(), {b, cl, i});
        }
      }
    Tensor& y = ctx.allocate_output(0, DType::I64, Shape{static_cast<int64_t>(sel.size() / 3), 3});
    std::copy(sel.begin(), sel.end(), y.mutable_data<int64_t>().begin());
  }

 private:
  static float scalar(const RunContext& ctx, size_t i, float dflt) {
    if (!ctx.has_input(i)) return dflt;
    const Tensor& t = ctx.input(i);
    if (t.dtype() != DType::F32 || t.numel() != 1)
      ctx.fail(ErrorKind::InvalidInput, "threshold input " + std::to_string(i) + " must be one float32");
    return t.data<float>()[0];
  }
  // Intersection over union; corners may come in either order; 0 when the union is empty.
  float iou(const float* a, const float* b) const {
    float ay0, ax0, ay1, ax1, by0, bx0, by1, bx1;
    corners(a, ay0, ax0, ay1, ax1);
    corners(b, by0, bx0, by1, bx1);
    const float ih = std::min(ay1, by1) - std::max(ay0, by0), iw = std::min(ax1, bx1) - std::max(ax0, bx0);
    if (!(ih > 0.0f) || !(iw > 0.0f)) return 0.0f;
    const float inter = ih * iw;
    const float uni = (ay1 - ay0) * (ax1 - ax0) + (by1 - by0) * (bx1 - bx0) - inter;
    return uni > 0.0f ? inter / uni : 0.0f;
  }
  void corners(const float* p, float& y0, float& x0, float& y1, float& x1) const {
    if (center_) {  // [x_center, y_center, width, height]
      x0 = p[0] - p[2] / 2.0f;
      x1 = p[0] + p[2] / 2.0f;
      y0 = p[1] - p[3] / 2.0f;
      y1 = p[1] + p[3] / 2.0f;
    } else {  // [y1, x1, y2, x2]
      y0 = std::min(p[0], p[2]);
      y1 = std::max(p[0], p[2]);
      x0 = std::min(p[1], p[3]);
      x1 = std::max(p[1], p[3]);
    }
  }
  bool center_;
};

}  // namespace

std::unique_ptr<Kernel> make_roi_align(const NodeInfo& info) {
  const std::string mode = info.get_string("mode", "avg");
  if (mode != "avg" && mode != "max") info.fail(ErrorKind::InvalidModel, "mode '" + mode + "' is not avg or max");
  const std::string ct =
      info.get_string("coordinate_transformation_mode", info.opset() >= 16 ? "half_pixel" : "output_half_pixel");
  if (ct != "half_pixel" && ct != "output_half_pixel")
    info.fail(ErrorKind::InvalidModel, "coordinate_transformation_mode '" + ct + "' is not supported");
  const int64_t oh = info.get_int("output_height", 1), ow = info.get_int("output_width", 1),
                sr = info.get_int("sampling_ratio", 0);
  if (oh < 1 || ow < 1 || oh > kMaxElements || ow > kMaxElements)
    info.fail(ErrorKind::InvalidModel, "output_height and output_width must be positive");
  if (sr < 0 || sr > 4096)
    info.fail(ErrorKind::InvalidModel, "sampling_ratio must be in [0, 4096], got " + std::to_string(sr));
  const float scale = info.get_float("spatial_scale", 1.0f);
  if (!std::isfinite(scale)) info.fail(ErrorKind::InvalidModel, "spatial_scale must be finite");
  return std::make_unique<RoiAlignKernel>(mode == "max", ct == "half_pixel", oh, ow, sr, scale);
}

std::unique_ptr<Kernel> make_non_max_suppression(const NodeInfo& info) {
  const int64_t c = info.get_int("center_point_box", 0);
  if (c != 0 && c != 1) info.fail(ErrorKind::InvalidModel, "center_point_box must be 0 or 1");
  return std::make_unique<NmsKernel>(c == 1);
}

}  // namespace onemodel::rt
