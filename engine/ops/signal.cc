// DFT, STFT (opset 17), the Hann, Hamming and Blackman windows, and MelWeightMatrix (opset 17). All fast-only:
// they rest on cos/sin/log10/pow from the platform library, which exact mode does not have (ops-coverage.md).
//   DFT: the last axis holds 1 (real) or 2 (real, imaginary) components; `axis` counts from the batch axis. An
//     optional dft_length zero-pads or truncates the signal axis. onesided keeps bins 0..n/2 (real input).
//     inverse divides by n. Direct O(n^2) sums in double with twiddles exp(-2 pi i (k j mod n) / n): reducing
//     k*j modulo n first keeps the angle exact, so long transforms stay accurate without an FFT's reordering.
//   STFT: signal [batch, length, 1|2], frame_step (scalar), optional window [frame_length], optional
//     frame_length; frames = (length - frame_length) / frame_step + 1; each frame times the window, then DFT.
//   Windows: w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), N = size (periodic) or size - 1 (symmetric).
//   MelWeightMatrix: ops-coverage.md's rule (num_mel_bins + 2 edge points, steps of (high - low) / (bins + 2)
//     in mel as the ONNX reference computes them, hertz -> bin floor((dft_length + 1) f / sample_rate), double).
#include <cmath>
#include <numbers>

#include "ops/common.h"
#include "ops/index_util.h"
#include "ops/ops.h"

namespace onemodel::rt {
namespace {

bool float_type(DType t) { return t == DType::F32 || t == DType::F64 || t == DType::F16 || t == DType::BF16; }

double read_number(const Tensor& t, int64_t k) {
  switch (t.dtype()) {
    case DType::F32: return static_cast<const float*>(t.raw())[k];
    case DType::F64: return static_cast<const double*>(t.raw())[k];
    case DType::F16: return half_to_float(static_cast<const uint16_t*>(t.raw())[k]);
    case DType::BF16: return bf16_to_float(static_cast<const uint16_t*>(t.raw())[k]);
    case DType::I32: return static_cast<const int32_t*>(t.raw())[k];
    case DType::I64: return static_cast<double>(static_cast<const int64_t*>(t.raw())[k]);
    default: return 0;
  }
}

void write_number(Tensor& t, int64_t k, double v) {
  switch (t.dtype()) {
    case DType::F32: static_cast<float*>(t.raw_mut())[k] = static_cast<float>(v); break;
    case DType::F64: static_cast<double*>(t.raw_mut())[k] = v; break;
    case DType::F16: static_cast<uint16_t*>(t.raw_mut())[k] = float_to_half(static_cast<float>(v)); break;
    case DType::BF16: static_cast<uint16_t*>(t.raw_mut())[k] = float_to_bf16(static_cast<float>(v)); break;
    default: break;
  }
}

int64_t scalar_int(const NodeInfo& info, const Tensor& t, const char* what) {
  const auto v = read_int_tensor(info, t, what);
  if (v.size() != 1) info.fail(ErrorKind::InvalidModel, std::string(what) + " must hold one value");
  return v[0];
}

// One transform of n_in complex samples (stride `step` complex elements apart in re/im arrays read through
// `get`) into n_out bins of a length-n transform.
template <class Get, class Put>
void dft_1d(int64_t n, int64_t n_in, int64_t n_out, bool inverse, Get&& get, Put&& put) {
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t k = 0; k < n_out; ++k) {
    double re = 0, im = 0;
    for (int64_t j = 0; j < n_in; ++j) {
      const double angle = sign * 2.0 * std::numbers::pi * static_cast<double>((k * j) % n) / static_cast<double>(n);
      const double c = std::cos(angle), s = std::sin(angle);
      double xr, xi;
      get(j, xr, xi);
      re += xr * c - xi * s;
      im += xr * s + xi * c;
    }
    if (inverse) {
      re /= static_cast<double>(n);
      im /= static_cast<double>(n);
    }
    put(k, re, im);
  }
}

class DftKernel final : public Kernel {
 public:
  DftKernel(int64_t axis, bool inverse, bool onesided)
      : Kernel(KernelFlags{.exact = false}), axis_(axis), inverse_(inverse), onesided_(onesided) {}

  void infer(InferContext& ctx) const override {
    const InputMeta& x = ctx.input(0);
    if (!float_type(x.dtype))
      ctx.fail(ErrorKind::Unsupported, "element type " + type_str(x.dtype) + " is not supported");
    if (!have_values(ctx, {1})) return;
    ctx.set_output(0, x.dtype, out_shape(ctx.info, x.shape, ctx.has_input(1) ? ctx.input(1).value : nullptr));
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Shape out = out_shape(ctx.info, x.shape(), ctx.has_input(1) ? &ctx.input(1) : nullptr);
    Tensor& y = ctx.output(0);
    if (y.shape() != out)
      ctx.fail(ErrorKind::InvalidInput, "input does not match the planned output " + y.shape().to_string());
    const int r = x.rank();
    const int axis = signal_axis(ctx.info, r);
    const int64_t comps = x.shape()[r - 1];
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= x.shape()[d];
    for (int d = axis + 1; d < r - 1; ++d) inner *= x.shape()[d];
    const int64_t n_sig = x.shape()[axis],
                  n = out[axis] == 0 ? 0 : dft_length(ctx.info, x.shape(), ctx.has_input(1) ? &ctx.input(1) : nullptr);
    const int64_t n_in = std::min(n_sig, n), n_out = out[axis];
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        auto get = [&](int64_t j, double& re, double& im) {
          const int64_t base = ((o * n_sig + j) * inner + i) * comps;
          re = read_number(x, base);
          im = comps == 2 ? read_number(x, base + 1) : 0.0;
        };
        auto put = [&](int64_t k, double re, double im) {
          const int64_t base = ((o * n_out + k) * inner + i) * 2;
          write_number(y, base, re);
          write_number(y, base + 1, im);
        };
        dft_1d(n, n_in, n_out, inverse_, get, put);
      }
  }

 private:
  int signal_axis(const NodeInfo& info, int rank) const {
    if (rank < 2) info.fail(ErrorKind::InvalidModel, "input needs a signal axis and a component axis");
    int64_t a = axis_ < 0 ? axis_ + rank - 1 : axis_;
    if (a < 0 || a >= rank - 1)
      info.fail(ErrorKind::InvalidModel, "axis " + std::to_string(axis_) + " is out of range");
    return static_cast<int>(a);
  }
  int64_t dft_length(const NodeInfo& info, const Shape& x, const Tensor* len) const {
    const int64_t n = len ? scalar_int(info, *len, "dft_length") : x[signal_axis(info, x.rank())];
    if (n < 1) info.fail(ErrorKind::InvalidModel, "dft_length must be at least 1, not " + std::to_string(n));
    return n;
  }
  Shape out_shape(const NodeInfo& info, const Shape& x, const Tensor* len) const {
    const int r = x.rank();
    const int axis = signal_axis(info, r);
    const int64_t comps = x[r - 1];
    if (comps != 1 && comps != 2) info.fail(ErrorKind::InvalidModel, "the last axis must be 1 (real) or 2 (complex)");
    if (onesided_ && comps == 2) info.fail(ErrorKind::InvalidModel, "onesided needs a real input");
    if (onesided_ && inverse_) info.fail(ErrorKind::Unsupported, "onesided inverse DFT is not supported");
    std::vector<int64_t> d = x.to_vector();
    const int64_t n = x.numel() == 0 && !len ? x[axis] : dft_length(info, x, len);
    d[static_cast<size_t>(axis)] = onesided_ ? n / 2 + 1 : n;
    d[static_cast<size_t>(r - 1)] = 2;
    return shape_of(d);
  }

  int64_t axis_;
  bool inverse_, onesided_;
};

class StftKernel final : public Kernel {
 public:
  explicit StftKernel(bool onesided) : Kernel(KernelFlags{.exact = false}), onesided_(onesided) {}

  void infer(InferContext& ctx) const override {
    const InputMeta& x = ctx.input(0);
    if (!float_type(x.dtype))
      ctx.fail(ErrorKind::Unsupported, "element type " + type_str(x.dtype) + " is not supported");
    if (!have_values(ctx, {1, 3})) return;
    ctx.set_output(
        0, x.dtype,
        geometry(ctx.info, x.shape, value_of(ctx, 1, "frame_step"), ctx.has_input(2) ? &ctx.input(2).shape : nullptr,
                 ctx.has_input(3) ? ctx.input(3).value : nullptr)
            .out);
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor* window = ctx.has_input(2) ? &ctx.input(2) : nullptr;
    const Geometry g = geometry(ctx.info, x.shape(), ctx.input(1), window ? &window->shape() : nullptr,
                                ctx.has_input(3) ? &ctx.input(3) : nullptr);
    Tensor& y = ctx.output(0);
    if (y.shape() != g.out)
      ctx.fail(ErrorKind::InvalidInput, "input does not match the planned output " + y.shape().to_string());
    const int64_t batch = x.shape()[0], len = x.shape()[1], comps = x.shape()[2];
    const int64_t bins = g.out[2];
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t f = 0; f < g.frames; ++f) {
        const int64_t start = f * g.step;
        auto get = [&](int64_t j, double& re, double& im) {
          const int64_t base = (b * len + start + j) * comps;
          const double w = window ? read_number(*window, j) : 1.0;
          re = read_number(x, base) * w;
          im = comps == 2 ? read_number(x, base + 1) * w : 0.0;
        };
        auto put = [&](int64_t k, double re, double im) {
          const int64_t base = ((b * g.frames + f) * bins + k) * 2;
          write_number(y, base, re);
          write_number(y, base + 1, im);
        };
        dft_1d(g.frame_length, g.frame_length, bins, false, get, put);
      }
  }

 private:
  struct Geometry {
    int64_t step = 1, frame_length = 1, frames = 0;
    Shape out;
  };
  Geometry geometry(const NodeInfo& info, const Shape& x, const Tensor& step, const Shape* window,
                    const Tensor* length) const {
    if (x.rank() != 3 || (x[2] != 1 && x[2] != 2))
      info.fail(ErrorKind::InvalidModel, "signal must be [batch, length, 1|2], not " + x.to_string());
    Geometry g;
    g.step = scalar_int(info, step, "frame_step");
    if (g.step < 1) info.fail(ErrorKind::InvalidModel, "frame_step must be at least 1");
    if (length)
      g.frame_length = scalar_int(info, *length, "frame_length");
    else if (window)
      g.frame_length = (*window)[0];
    else
      info.fail(ErrorKind::InvalidModel, "needs a window or a frame_length");
    if (window && (window->rank() != 1 || (*window)[0] != g.frame_length))
      info.fail(ErrorKind::InvalidModel, "window must have shape [" + std::to_string(g.frame_length) + "]");
    if (g.frame_length < 1 || g.frame_length > x[1])
      info.fail(ErrorKind::InvalidModel, "frame_length " + std::to_string(g.frame_length) + " does not fit the signal");
    if (onesided_ && x[2] == 2) info.fail(ErrorKind::InvalidModel, "onesided needs a real signal");
    g.frames = (x[1] - g.frame_length) / g.step + 1;
    g.out = Shape{x[0], g.frames, onesided_ ? g.frame_length / 2 + 1 : g.frame_length, 2};
    return g;
  }
  bool onesided_;
};

DType output_datatype(const NodeInfo& info) {
  const auto t = static_cast<DType>(info.get_int("output_datatype", 1));
  if (!float_type(t) && t != DType::I8 && t != DType::I16 && t != DType::I32 && t != DType::I64 && t != DType::U8 &&
      t != DType::U16 && t != DType::U32 && t != DType::U64)
    info.fail(ErrorKind::Unsupported, "output_datatype " + std::to_string(static_cast<int>(t)) + " is not supported");
  return t;
}

void store_any(Tensor& t, int64_t k, double v) {
  if (float_type(t.dtype())) return write_number(t, k, v);
  visit_numeric(t.dtype(), [&](auto z) { static_cast<decltype(z)*>(t.raw_mut())[k] = static_cast<decltype(z)>(v); });
}

class WindowKernel final : public Kernel {
 public:
  WindowKernel(DType out, bool periodic, double a0, double a1, double a2)
      : Kernel(KernelFlags{.exact = false}), out_(out), periodic_(periodic), a0_(a0), a1_(a1), a2_(a2) {}

  void infer(InferContext& ctx) const override {
    if (!have_values(ctx, {0})) return;
    ctx.set_output(0, out_, Shape{size(ctx.info, value_of(ctx, 0, "size"))});
  }
  void run(RunContext& ctx) const override {
    const int64_t n = size(ctx.info, ctx.input(0));
    Tensor& y = ctx.output(0);
    if (y.numel() != n) ctx.fail(ErrorKind::InvalidInput, "size does not match the planned output");
    const double denom = static_cast<double>(periodic_ ? n : n - 1);
    for (int64_t i = 0; i < n; ++i) {
      const double t = denom == 0 ? 0.0 : 2.0 * std::numbers::pi * static_cast<double>(i) / denom;
      store_any(y, i, a0_ - a1_ * std::cos(t) + a2_ * std::cos(2.0 * t));
    }
  }

 private:
  static int64_t size(const NodeInfo& info, const Tensor& t) {
    const int64_t n = scalar_int(info, t, "size");
    if (n < 0) info.fail(ErrorKind::InvalidModel, "size must not be negative");
    return n;
  }
  DType out_;
  bool periodic_;
  double a0_, a1_, a2_;
};

class MelKernel final : public Kernel {
 public:
  explicit MelKernel(DType out) : Kernel(KernelFlags{.exact = false}), out_(out) {}

  void infer(InferContext& ctx) const override {
    if (!float_type(out_)) ctx.fail(ErrorKind::Unsupported, "output_datatype must be a floating-point type");
    for (size_t i = 0; i < 5; ++i)
      if (!ctx.has_input(i)) ctx.fail(ErrorKind::InvalidModel, "expects five inputs");
    if (!have_values(ctx, {0, 1})) return;
    const int64_t bins = scalar_int(ctx.info, *ctx.input(0).value, "num_mel_bins");
    const int64_t dft = scalar_int(ctx.info, *ctx.input(1).value, "dft_length");
    if (bins < 1 || dft < 1) ctx.fail(ErrorKind::InvalidModel, "num_mel_bins and dft_length must be positive");
    ctx.set_output(0, out_, Shape{dft / 2 + 1, bins});
  }

  void run(RunContext& ctx) const override {
    const int64_t bins = scalar_int(ctx.info, ctx.input(0), "num_mel_bins");
    const int64_t dft = scalar_int(ctx.info, ctx.input(1), "dft_length");
    const double rate = read_number(ctx.input(2), 0);
    const double low = read_number(ctx.input(3), 0), high = read_number(ctx.input(4), 0);
    if (rate <= 0 || low < 0 || high < low)
      ctx.fail(ErrorKind::InvalidInput, "needs sample_rate > 0 and 0 <= lower <= upper edge");
    Tensor& y = ctx.output(0);
    const int64_t rows = dft / 2 + 1;
    if (y.shape() != Shape{rows, bins}) ctx.fail(ErrorKind::InvalidInput, "inputs do not match the planned output");
    auto mel = [](double f) { return 2595.0 * std::log10(1.0 + f / 700.0); };
    const double lo = mel(low), step = (mel(high) - lo) / static_cast<double>(bins + 2);
    std::vector<int64_t> edge(static_cast<size_t>(bins + 2));
    for (int64_t i = 0; i < bins + 2; ++i) {
      const double hz = 700.0 * (std::pow(10.0, (static_cast<double>(i) * step + lo) / 2595.0) - 1.0);
      edge[static_cast<size_t>(i)] = static_cast<int64_t>(std::floor(static_cast<double>(dft + 1) * hz / rate));
    }
    for (int64_t k = 0; k < rows * bins; ++k) write_number(y, k, 0.0);
    auto set = [&](int64_t row, int64_t col, double v) {
      if (row >= 0 && row < rows) write_number(y, row * bins + col, v);
    };
    for (int64_t i = 0; i < bins; ++i) {
      const int64_t l = edge[static_cast<size_t>(i)], c = edge[static_cast<size_t>(i + 1)],
                    h = edge[static_cast<size_t>(i + 2)];
      if (c == l)
        set(c, i, 1.0);
      else
        for (int64_t j = l; j <= c; ++j) set(j, i, static_cast<double>(j - l) / static_cast<double>(c - l));
      if (h > c)
        for (int64_t j = c; j < h; ++j) set(j, i, static_cast<double>(h - j) / static_cast<double>(h - c));
    }
  }

 private:
  DType out_;
};

}  // namespace

std::unique_ptr<Kernel> make_dft(const NodeInfo& info) {
  return std::make_unique<DftKernel>(info.get_int("axis", 1), info.get_int("inverse", 0) != 0,
                                     info.get_int("onesided", 0) != 0);
}
std::unique_ptr<Kernel> make_stft(const NodeInfo& info) {
  return std::make_unique<StftKernel>(info.get_int("onesided", 1) != 0);
}
std::unique_ptr<Kernel> make_hann_window(const NodeInfo& info) {
  return std::make_unique<WindowKernel>(output_datatype(info), info.get_int("periodic", 1) != 0, 0.5, 0.5, 0.0);
}
std::unique_ptr<Kernel> make_hamming_window(const NodeInfo& info) {
  return std::make_unique<WindowKernel>(output_datatype(info), info.get_int("periodic", 1) != 0, 25.0 / 46.0,
                                        21.0 / 46.0, 0.0);
}
std::unique_ptr<Kernel> make_blackman_window(const NodeInfo& info) {
  return std::make_unique<WindowKernel>(output_datatype(info), info.get_int("periodic", 1) != 0, 0.42, 0.5, 0.08);
}
std::unique_ptr<Kernel> make_mel_weight_matrix(const NodeInfo& info) {
  return std::make_unique<MelKernel>(output_datatype(info));
}

}  // namespace onemodel::rt
