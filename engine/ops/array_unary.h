// The float32 element-wise operators served by the vector transcendental kernels (kernels/transcendental.h):
// Exp, Log, Tanh, Sigmoid, Erf and Gelu. The array is cut into fixed chunks of kChunk elements (a constant,
// never derived from the thread count) spread over the session's pool; every element's result depends only
// on its input, so neither the cut nor the threads can change a bit.
#pragma once
#include <algorithm>
#include <memory>

#include "kernels/isa.h"
#include "ops/elementwise_common.h"

namespace onemodel::rt {

using ArrayKernelFn = void (*)(kern::Isa isa, bool exact, const float* x, float* y, int64_t n);

class ArrayUnaryKernel final : public Kernel {
 public:
  static constexpr int64_t kChunk = 16384;
  // About 3 ns per element for the longest functions (erf, GELU); it only caps how many threads wake.
  static constexpr double kNsPerElement = 3.0;

  explicit ArrayUnaryKernel(ArrayKernelFn fn) : Kernel(KernelFlags{.exact = true, .in_place_input = 0}), fn_(fn) {}

  void infer(InferContext& ctx) const override {
    ew::require_inputs(ctx, 1);
    const DType t = ctx.input(0).dtype;
    ew::check_type(ctx.info, t, ew::kF32);
    ctx.set_output(0, t, ctx.input(0).shape);
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (x.shape() != y.shape() || x.dtype() != DType::F32 || y.dtype() != DType::F32)
      ctx.fail(ErrorKind::InvalidInput, "input does not match the planned output");
    const int64_t n = x.numel();
    if (n == 0) return;
    const float* px = x.data<float>().data();
    float* py = y.mutable_data<float>().data();
    const int64_t chunks = (n + kChunk - 1) / kChunk;
    const kern::Isa isa = ctx.isa;
    const bool exact = ctx.exact;
    const ArrayKernelFn fn = fn_;
    parallel_for(ctx.pool, chunks, kNsPerElement * static_cast<double>(n), [&](int64_t c) {
      const int64_t first = c * kChunk;
      fn(isa, exact, px + first, py + first, std::min(kChunk, n - first));
    });
  }

 private:
  ArrayKernelFn fn_;
};

inline std::unique_ptr<Kernel> array_unary(ArrayKernelFn fn) { return std::make_unique<ArrayUnaryKernel>(fn); }

}  // namespace onemodel::rt
