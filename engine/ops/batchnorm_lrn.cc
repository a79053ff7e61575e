// BatchNormalization (inference) and LRN, the two per-channel normalisations of the spatial family.
//   BatchNormalization (ops-conv.md): per channel a = scale / sqrt(var + epsilon), b = bias - mean * a,
//     then y = x * a + b, every operation rounded on its own, so fast and exact give the same bits.
//     Training mode and the running-statistics outputs are refused as Unsupported (ops-coverage.md).
//   LRN: y = x / (bias + alpha / size * square_sum)^beta over a window of channels; the power goes
//     through libm, so LRN has no exact flavour.
#include <cmath>

#include "base/batchnorm_affine.h"
#include "base/thread_pool.h"
#include "ops/reduce_walk.h"
#include "ops/ops.h"

namespace onemodel::rt {
namespace {

// Shared checks: X is [N, C, ...] float32/float64 and the per-channel inputs are [C] of the same type.
int64_t channel_count(const NodeInfo& info, const Shape& x) {
  if (x.rank() < 2) info.fail(ErrorKind::InvalidModel, "input must have rank 2 or more, got " + x.to_string());
  return x[1];
}

class BatchNormKernel final : public Kernel {
 public:
  explicit BatchNormKernel(float epsilon)
      : Kernel(KernelFlags{.exact = true, .in_place_input = 0}), epsilon_(epsilon) {}

  void infer(InferContext& ctx) const override {
    for (size_t i = 0; i < 5; ++i)
      if (!ctx.has_input(i)) ctx.fail(ErrorKind::InvalidModel, "expects inputs X, scale, B, input_mean and input_var");
    const DType t = ctx.input(0).dtype;
    if (t != DType::F32 && t != DType::F64)
      ctx.fail(ErrorKind::Unsupported, "element type " + type_str(t) + " is not supported");
    const int64_t c = channel_count(ctx.info, ctx.input(0).shape);
    for (size_t i = 1; i < 5; ++i) {
      const InputMeta& m = ctx.input(i);
      if (m.dtype != t)
        ctx.fail(ErrorKind::Unsupported,
                 "per-channel inputs of type " + type_str(m.dtype) + " with X of type " + type_str(t));
      if (m.shape.rank() != 1 || m.shape[0] != c)
        ctx.fail(ErrorKind::InvalidModel, "per-channel input " + std::to_string(i) + " has shape " +
                                              m.shape.to_string() + ", expected [" + std::to_string(c) + "]");
    }
    ctx.set_output(0, t, ctx.input(0).shape);
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (ctx.output(0).shape() != x.shape())
      ctx.fail(ErrorKind::InvalidInput, "input does not match the planned output");
    const int64_t c = channel_count(ctx.info, x.shape());
    for (size_t i = 1; i < 5; ++i)
      if (ctx.input(i).numel() != c || ctx.input(i).dtype() != x.dtype())
        ctx.fail(ErrorKind::InvalidInput, "per-channel input " + std::to_string(i) + " does not match X");
    if (x.dtype() == DType::F32)
      go<float>(ctx, c);
    else
      go<double>(ctx, c);
  }

 private:
  template <class T>
  void go(RunContext& ctx, int64_t c) const {
    const Tensor& x = ctx.input(0);
    const T* px = x.data<T>().data();
    T* py = ctx.output(0).mutable_data<T>().data();
    const T* scale = ctx.input(1).data<T>().data();
    const T* bias = ctx.input(2).data<T>().data();
    const T* mean = ctx.input(3).data<T>().data();
    const T* var = ctx.input(4).data<T>().data();
    const int64_t n = x.shape()[0];
    const int64_t plane = c == 0 || n == 0 ? 0 : x.numel() / (n * c);
    const T eps = static_cast<T>(epsilon_);
    // One chunk per (image, channel) plane on the pool: every element's arithmetic is the same on any thread.
    // Run on the calling thread alone, PP-OCRv4 det's BatchNormalization over 24 x 320 x 320 took 0.37 ms in a
    // one-thread session and 0.75 ms in a two-thread one (per-node profile, session 16).
    parallel_for(ctx.pool, n * c, 0.5 * static_cast<double>(x.numel()), [&](int64_t q) {
      const int64_t ch = q % c;
      const auto [a, b] = batchnorm_affine(scale[ch], bias[ch], mean[ch], var[ch], eps);
      const T* src = px + q * plane;
      T* dst = py + q * plane;
      for (int64_t i = 0; i < plane; ++i) dst[i] = canon_any(src[i] * a + b);
    });
  }
  float epsilon_;
};

class LrnKernel final : public Kernel {
 public:
  LrnKernel(int64_t size, float alpha, float beta, float bias)
      : Kernel(KernelFlags{.exact = false}), size_(size), alpha_(alpha), beta_(beta), bias_(bias) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0)) ctx.fail(ErrorKind::InvalidModel, "expects an input X");
    const DType t = ctx.input(0).dtype;
    if (t != DType::F32 && t != DType::F64)
      ctx.fail(ErrorKind::Unsupported, "element type " + type_str(t) + " is not supported");
    channel_count(ctx.info, ctx.input(0).shape);
    ctx.set_output(0, t, ctx.input(0).shape);
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (ctx.output(0).shape() != x.shape())
      ctx.fail(ErrorKind::InvalidInput, "input does not match the planned output");
    if (x.dtype() == DType::F32)
      go<float>(x, ctx.output(0));
    else
      go<double>(x, ctx.output(0));
  }

 private:
  template <class T>
  void go(const Tensor& x, Tensor& y) const {
    const int64_t n = x.shape()[0], c = x.shape()[1];
    const int64_t plane = n == 0 || c == 0 ? 0 : x.numel() / (n * c);
    const T* px = x.data<T>().data();
    T* py = y.mutable_data<T>().data();
    const int64_t below = (size_ - 1) / 2, above = size_ / 2;  // floor and ceil of (size - 1) / 2
    const T scale = static_cast<T>(alpha_) / static_cast<T>(size_);
    for (int64_t s = 0; s < n; ++s)
      for (int64_t ch = 0; ch < c; ++ch) {
        const int64_t lo = std::max<int64_t>(0, ch - below), hi = std::min<int64_t>(c - 1, ch + above);
        for (int64_t i = 0; i < plane; ++i) {
          T sq = T(0);
          for (int64_t k = lo; k <= hi; ++k) {
            const T v = px[(s * c + k) * plane + i];
            sq += v * v;
          }
          const int64_t at = (s * c + ch) * plane + i;
          py[at] = px[at] / std::pow(static_cast<T>(bias_) + scale * sq, static_cast<T>(beta_));
        }
      }
  }
  int64_t size_;
  float alpha_, beta_, bias_;
};

}  // namespace

std::unique_ptr<Kernel> make_batch_normalization(const NodeInfo& info) {
  if (info.get_int("training_mode", 0) != 0)
    info.fail(ErrorKind::Unsupported, "training_mode = 1 (training-mode batch statistics) is not supported");
  if (info.opset() < 9 && info.get_int("spatial", 1) != 1)
    info.fail(ErrorKind::Unsupported, "spatial = 0 (per-element statistics) is not supported");
  for (size_t i = 1; i < info.num_outputs(); ++i)
    if (info.node().outputs[i] != ir::kNoValue)
      info.fail(ErrorKind::Unsupported, "the running-statistics outputs (training mode) are not supported");
  return std::make_unique<BatchNormKernel>(info.get_float("epsilon", 1e-5f));
}

std::unique_ptr<Kernel> make_lrn(const NodeInfo& info) {
  if (!info.has("size")) info.fail(ErrorKind::InvalidModel, "attribute size is required");
  const int64_t size = info.get_int("size", 1);
  if (size < 1 || size > (int64_t{1} << 31))
    info.fail(ErrorKind::InvalidModel, "size must be positive, got " + std::to_string(size));
  return std::make_unique<LrnKernel>(size, info.get_float("alpha", 1e-4f), info.get_float("beta", 0.75f),
                                     info.get_float("bias", 1.0f));
}

}  // namespace onemodel::rt
