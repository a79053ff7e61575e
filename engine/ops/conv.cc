// Conv and ConvTranspose (ops-conv.md), float32, one to three spatial axes. Attributes and shapes (output
// sizes, auto_pad, output_shape, groups) are settled by ops/window.h; this file hands the result as a
// kern::ConvGeometry to the kernels of kernels/conv.h; the bias is the separate per-channel pass of
// kernels/bias.h, added after the taps.
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kernels/bias.h"
#include "kernels/conv.h"
#include "ops/common.h"
#include "ops/ops.h"
#include "ops/elementwise_common.h"
#include "ops/ew_program.h"
#include "ops/reg_form.h"
#include "ops/window.h"

namespace onemodel::rt {
namespace {

// The kernel geometry and output shape of a Conv (transpose = false) or ConvTranspose node for input shapes
// x and w (window.h); errors of kind `kind` name the node.
kern::ConvGeometry geometry(const NodeInfo& info, const WindowAttrs& a, bool transpose, const Shape& x, const Shape& w,
                            Shape& out_shape, ErrorKind kind) {
  const ConvWindow cw = conv_window(info, a, transpose, x, w, kind);
  kern::ConvGeometry g;
  g.batch = cw.g.n;
  g.in_channels = cw.g.c;
  g.out_channels = cw.out_channels;
  g.groups = cw.groups;
  g.in = cw.g.in;
  g.out = cw.g.out;
  g.kernel = cw.g.k;
  g.stride = cw.g.s;
  g.dilation = cw.g.d;
  g.pad_before = cw.g.pb;
  out_shape = cw.g.out_shape;
  return g;
}

// What runs on finished outputs of a Conv (kern::ConvEpilogue): the bias, then the fused element-wise program
// of a FusedConv, whose input 0 is the convolution's result and inputs 1.. the node's inputs 3.. . Each of
// those is walked per output plane either contiguously (its spatial axes are the output's) or as one value
// (its spatial axes are all 1).
struct Epilogue {
  struct Extra {
    const float* base;
    int64_t stride_n, stride_c;
    bool scalar;
  };
  kern::Isa isa;
  bool exact;
  const float* bias;  // added by a loop of its own
  const kern::EwPlan* prog;
  std::array<Extra, ir::kEwMaxInputs> extra;
  size_t extras;
  const float* bias_input;  // the program's last input instead (bias_first)

  static void apply(const void* vctx, int64_t n, int64_t oc, int64_t j0, int64_t count, float* y) {
    const auto& e = *static_cast<const Epilogue*>(vctx);
    if (e.bias) kern::add_channel_bias(e.isa, e.exact, y, e.bias + oc, 1, count);  // one rounding per element
    if (e.prog) e.run_program(n, oc, j0, false, count, y);
  }

  // The runs apply() will read of the program's tensor inputs (a residual), one touch per cache line: the
  // matrix product's tiles read them in short rows (NC columns of MR planes), too short for the hardware
  // prefetcher, so they came from memory at full latency (ResNet-50's 64 -> 256 convolutions at 56 x 56 with
  // the residual Add and Relu took 2.4 ms against 1.35 without them).
  static void prefetch(const void* vctx, int64_t n, int64_t oc, int64_t j0, int64_t count) {
    const auto& e = *static_cast<const Epilogue*>(vctx);
    if (!e.prog) return;
    for (size_t i = 0; i < e.extras; ++i) {
      const Extra& x = e.extra[i];
      if (x.scalar) continue;
      const char* at = reinterpret_cast<const char*>(x.base + n * x.stride_n + oc * x.stride_c + j0);
      const char* end = at + count * static_cast<int64_t>(sizeof(float));
      for (const char* p = at; p < end; p += 64) __builtin_prefetch(p, 0, 3);
      __builtin_prefetch(end - 1, 0, 3);
    }
  }

  // Planes of one value each, channels oc0 .. oc0 + channels - 1: the same operations on every value as
  // apply() per plane, with a program input that steps one value per channel (or none) read as a run over the
  // channels; any other input stride goes plane by plane.
  static void apply_points(const void* vctx, int64_t n, int64_t oc0, int64_t channels, float* y) {
    const auto& e = *static_cast<const Epilogue*>(vctx);
    for (size_t i = 0; i < e.extras; ++i)
      if (e.extra[i].stride_c != 0 && e.extra[i].stride_c != 1) {
        for (int64_t c = 0; c < channels; ++c) apply(vctx, n, oc0 + c, 0, 1, y + c);
        return;
      }
    if (e.bias) kern::add_channel_bias(e.isa, e.exact, y, e.bias + oc0, channels, 1);
    if (e.prog) e.run_program(n, oc0, 0, true, channels, y);
  }

  // `planes` whole planes of `size` values, channels oc0 onwards, contiguous at y: the same operations on every
  // value as apply() per plane. Planes shorter than half a block go several to a block, a per-plane input value
  // (the bias, a [1, C, 1, 1] scale) spread over its plane in a buffer, when every input is such a value or a
  // run laid out as the planes (a residual); otherwise plane by plane. MobileNetV3's 7 x 7 layers ran one
  // block of 49 values per channel.
  static void apply_planes(const void* vctx, int64_t n, int64_t oc0, int64_t planes, int64_t size, float* y) {
    const auto& e = *static_cast<const Epilogue*>(vctx);
    bool pack = size * 2 <= kern::kEwBlock;
    for (size_t i = 0; i < e.extras && pack; ++i) pack = e.extra[i].scalar || e.extra[i].stride_c == size;
    if (!pack) {
      for (int64_t p = 0; p < planes; ++p) apply(vctx, n, oc0 + p, 0, size, y + p * size);
      return;
    }
    if (e.bias) kern::add_channel_bias(e.isa, e.exact, y, e.bias + oc0, planes, size);
    if (!e.prog) return;
    // Input 0 is y itself; the others in run_program's order, a per-plane value spread where it steps by plane.
    std::array<const float*, ir::kEwMaxInputs> runs{};
    runs[0] = y;
    size_t k = 1;
    for (size_t i = 0; i < e.extras; ++i, ++k)
      if (!e.extra[i].scalar) runs[k] = e.extra[i].base + n * e.extra[i].stride_n + oc0 * size;
    if (e.bias_input) ++k;
    ewp::run_rows(
        *e.prog, e.isa, e.exact, k, runs.data(),
        [&](size_t i, int64_t p) {
          if (i - 1 < e.extras) {
            const Extra& x = e.extra[i - 1];
            return x.base[n * x.stride_n + (oc0 + p) * x.stride_c];
          }
          return e.bias_input[oc0 + p];
        },
        planes, size, y);
  }

  // The program over `count` values at y: one plane's run from position j0 (points false), or one value of each
  // of `count` channels from oc (points true), every input read as the matching run or repeated value.
  void run_program(int64_t n, int64_t oc, int64_t j0, bool points, int64_t count, float* y) const {
    std::array<ewp::Operand, ir::kEwMaxInputs> ops;
    ops[0] = ewp::Operand{y, false};
    size_t k = 1;
    for (size_t i = 0; i < extras; ++i, ++k) {
      const Extra& x = extra[i];
      const float* at = x.base + n * x.stride_n + oc * x.stride_c;
      ops[k] = points ? ewp::Operand{at, x.stride_c == 0} : ewp::Operand{at + (x.scalar ? 0 : j0), x.scalar};
    }
    if (bias_input) ops[k++] = ewp::Operand{bias_input + oc, !points};
    ewp::run_span(*prog, isa, exact, std::span<const ewp::Operand>(ops.data(), k), count, y);
  }
};

// `p` with the bias added by a first instruction, Add(input 0, a new last input), whose result replaces input
// 0 everywhere: the same operation as the separate loop, in the same pass over the block. Nothing when the
// program is at a limit.
std::optional<ir::EwProgram> bias_first(const ir::EwProgram& p) {
  if (p.regs >= ir::kEwMaxRegs || p.inputs >= ir::kEwMaxInputs || p.code.size() >= size_t{ir::kEwMaxInstrs})
    return std::nullopt;
  ir::EwProgram q = p;
  const ir::EwRef sum{ir::EwRef::Kind::Reg, p.regs};
  for (ir::EwInstr& in : q.code) {
    if (in.a.kind == ir::EwRef::Kind::Input && in.a.index == 0) in.a = sum;
    if (ir::ew_is_binary(in.op) && in.b.kind == ir::EwRef::Kind::Input && in.b.index == 0) in.b = sum;
  }
  ir::EwInstr add;
  add.op = ir::EwOp::Add;
  add.dst = p.regs;
  add.a = ir::EwRef{ir::EwRef::Kind::Input, 0};
  add.b = ir::EwRef{ir::EwRef::Kind::Input, p.inputs};
  q.code.insert(q.code.begin(), add);
  q.regs = p.regs + 1;
  q.inputs = p.inputs + 1;
  return q;
}

// How a program input of shape `in` walks a convolution output of shape `out` per plane, or false when it
// does neither (then the program runs after the convolution, over the whole output).
bool plane_walk(const Shape& in, const Shape& out, Epilogue::Extra& x) {
  const auto st = broadcast_strides(in, out);
  int64_t plane = 1;
  bool scalar = true, contiguous = true;
  for (int d = out.rank() - 1; d >= 2; --d) {
    const int64_t s = st[static_cast<size_t>(d)];
    scalar = scalar && s == 0;
    contiguous = contiguous && s == plane;
    plane *= out[d];
  }
  if (!scalar && !contiguous) return false;
  x.scalar = scalar;
  x.stride_n = st[0];
  x.stride_c = st[1];
  return true;
}

// The register epilogue (ops/reg_form.h) of a convolution's epilogue: extra i is program input i + 1 (a residual
// when it walks the planes, one value per channel, or one value), the bias of bias_first's program its last.
std::optional<kern::RegEpilogue> conv_register_form(const Epilogue& ep, bool exact, int64_t& res_n) {
  if (!ep.prog) {
    if (!ep.bias) return std::nullopt;
    kern::RegEpilogue r;
    r.bias = ep.bias;
    return r;
  }
  const ir::EwProgram& p = ep.prog->prog;
  std::array<RegInput, ir::kEwMaxInputs + 1> in{};
  using K = RegInput::Kind;
  for (size_t i = 0; i < ep.extras; ++i) {
    const Epilogue::Extra& e = ep.extra[i];
    RegInput& x = in[i + 1];
    if (!e.scalar)
      x = RegInput{K::Tile, 0.0f, e.base, e.stride_c, e.stride_n};
    else if (e.stride_c == 0 && e.stride_n == 0)
      x = RegInput{K::Value, e.base[0]};
    else if (e.stride_c == 1 && e.stride_n == 0)
      x = RegInput{K::PerRow, 0.0f, e.base};
  }
  if (ep.bias_input) in[static_cast<size_t>(p.inputs - 1)] = RegInput{K::PerRow, 0.0f, ep.bias_input};
  return register_form(p, std::span<const RegInput>(in.data(), static_cast<size_t>(p.inputs)), ep.bias, exact, res_n);
}

class ConvKernel final : public Kernel {
 public:
  ConvKernel(WindowAttrs attrs, bool transpose, std::optional<ir::EwProgram> prog = std::nullopt)
      : Kernel(KernelFlags{.exact = true, .compact_weights = !transpose}), a_(std::move(attrs)), transpose_(transpose) {
    if (!prog) return;
    if (auto with_bias = bias_first(*prog)) prog_bias_ = kern::ew_plan(*std::move(with_bias));
    prog_ = kern::ew_plan(*std::move(prog));
  }

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0) || !ctx.has_input(1)) ctx.fail(ErrorKind::InvalidModel, "expects inputs X and W");
    for (size_t i = 0; i < ctx.inputs.size(); ++i)
      if (ctx.has_input(i) && ctx.input(i).dtype != DType::F32)
        ctx.fail(ErrorKind::Unsupported,
                 "element type " + type_str(ctx.input(i).dtype) + " is not supported (float32 only)");
    Shape out;
    const kern::ConvGeometry g =
        geometry(ctx.info, a_, transpose_, ctx.input(0).shape, ctx.input(1).shape, out, ErrorKind::InvalidModel);
    if (ctx.has_input(2)) check_bias(ctx.info, ctx.input(2).shape, g.out_channels, ErrorKind::InvalidModel);
    if (prog_) {
      std::vector<const Shape*> s{&out};
      for (size_t i = 3; i < ctx.inputs.size(); ++i) {
        if (!ctx.has_input(i)) ctx.fail(ErrorKind::InvalidModel, "input " + std::to_string(i) + " is missing");
        s.push_back(&ctx.input(i).shape);
      }
      out = ew::broadcast_all(ctx.info, s, ErrorKind::InvalidModel);
    }
    ctx.set_output(0, DType::F32, out);
  }

  // A constant W is packed once for the matrix-product paths and the channel-blocked depthwise path (its taps)
  // and shared by every plan of the session (SharedPack). Compact weights (InputMeta::compact) are packed in
  // their 16 bits; the depthwise paths, which read float32 taps, leave them to the plan's per-run widening.
  std::shared_ptr<const void> prepare(PrepareContext& ctx) const override {
    if (transpose_ || ctx.inputs.size() < 2 || !ctx.inputs[1].value || !ctx.inputs[0].present) return nullptr;
    const Tensor& w = *ctx.inputs[1].value;
    Shape out;
    if (ctx.packed_weight) {  // the session's panels (pack_weight); w is a placeholder of the weight's shape
      const kern::ConvGeometry g =
          geometry(ctx.info, a_, false, ctx.inputs[0].shape, w.shape(), out, ErrorKind::InvalidModel);
      auto panels = std::static_pointer_cast<const kern::ConvPackedWeights>(ctx.packed_weight);
      const void* key = panels.get();
      std::shared_ptr<const kern::ConvPackedWeights> packed = packed_.find(
          key, [&](const kern::ConvPackedWeights& p) { return kern::conv_packed_preferred(p, ctx.isa, ctx.exact, g); });
      if (!packed)
        packed = packed_.get(
            key, [&](const kern::ConvPackedWeights& p) { return kern::conv_packed_matches(p, ctx.isa, ctx.exact, g); },
            [&] { return kern::conv_pack_from_panels(ctx.isa, ctx.exact, g, panels); });
      return packed;
    }
    if (w.dtype() != DType::F32 || !w.is_contiguous()) return nullptr;
    const kern::ConvGeometry g =
        geometry(ctx.info, a_, false, ctx.inputs[0].shape, w.shape(), out, ErrorKind::InvalidModel);
    const Tensor* compact = ctx.inputs[1].compact;
    const kern::PackStorage storage = pack_storage(compact);
    const void* key = compact ? compact->raw() : w.raw();
    const bool sixteen_bits = storage != kern::PackStorage::F32;
    // The packing in the form this shape prefers if one is kept, else one in the other form if it serves this
    // shape too (kernels-gemm.md section 6, "Narrow outputs"), else a new one.
    std::shared_ptr<const kern::ConvPackedWeights> packed = packed_.find(key, [&](const kern::ConvPackedWeights& p) {
      return kern::conv_packed_preferred(p, ctx.isa, ctx.exact, g) && kern::conv_packed_compact(p) == sixteen_bits;
    });
    if (!packed)
      packed = packed_.get(
          key,
          [&](const kern::ConvPackedWeights& p) {
            return kern::conv_packed_matches(p, ctx.isa, ctx.exact, g) && kern::conv_packed_compact(p) == sixteen_bits;
          },
          [&] { return kern::conv_pack_weights(ctx.isa, ctx.exact, g, w.data<float>().data(), storage); });
    ctx.took_compact = compact && packed;
    return packed;
  }

  // The matrix-product convolutions' weights as panels that every shape's packing is made from (depthwise ones
  // read their weights as they are on some shapes, so they keep them).
  std::shared_ptr<const void> pack_weight(const Tensor& w, kern::Isa isa) const override {
    if (transpose_ || w.rank() < 3 || w.shape()[0] % a_.group != 0) return nullptr;
    if (a_.group > 1 && w.shape()[1] == 1) return nullptr;  // depthwise: groups == input channels
    const int64_t group_k = w.numel() / w.shape()[0];
    return kern::conv_pack_panels(isa, w.shape()[0], a_.group, group_k, w.data<float>().data());
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    Tensor& y = ctx.output(0);
    Shape out;
    const kern::ConvGeometry g = geometry(ctx.info, a_, transpose_, x.shape(), w.shape(), out, ErrorKind::InvalidInput);
    std::vector<const Tensor*> extras;
    const Shape planned = prog_ ? ewp::program_inputs(ctx, out, extras) : out;
    // Compact weights taken by prepare(): w is their 16-bit constant, read only through the packing.
    const auto* packed = static_cast<const kern::ConvPackedWeights*>(ctx.state);
    const bool compact = packed && kern::conv_packed_compact(*packed);
    if (planned != y.shape() || x.dtype() != DType::F32 || (w.dtype() != DType::F32 && !compact) ||
        y.dtype() != DType::F32)
      ctx.fail(ErrorKind::InvalidInput, "inputs do not match the planned output " + y.shape().to_string());
    const bool has_bias = ctx.has_input(2);
    if (has_bias) check_bias(ctx.info, ctx.input(2).shape(), g.out_channels, ErrorKind::InvalidInput);
    if (y.numel() == 0) return;
    const int threads = ctx.pool ? ctx.pool->threads() : 1;
    const int64_t need =
        transpose_ ? kern::conv_transpose_scratch_floats(g) : kern::conv_scratch_floats(g, ctx.exact, threads);
    Tensor scratch;
    // Workspace, not zero-filled: every path writes what it reads first (im2col matrices, C^T, padded planes
    // with their padding, depthwise phases, Winograd's planes, transforms and products). The fill of a
    // Winograd workspace with a slot per thread (several MB) was 12% of PP-OCRv4 det's 96 -> 24 layer at 2
    // threads, which ran slower than at 1.
    if (need > 0) scratch = ctx.workspace(DType::F32, Shape{need});
    float* s = need > 0 ? scratch.mutable_data<float>().data() : nullptr;
    float* py = y.mutable_data<float>().data();
    const float* px = x.data<float>().data();
    const float* pw = packed && kern::conv_packed_alone(*packed) ? nullptr : w.data<float>().data();
    const float* pb = has_bias ? ctx.input(2).data<float>().data() : nullptr;
    if (transpose_) {
      kern::conv_transpose_f32(ctx.isa, ctx.exact, g, px, pw, py, s, ctx.pool, pb);
      return;
    }
    // The bias and the program run on each block of outputs as the kernel finishes it. A program input that
    // walks the planes neither contiguously nor as one value (or broadcasts the result to a larger shape)
    // makes the program a second pass over the whole result instead.
    Epilogue ep{ctx.isa, ctx.exact, pb, prog_ ? &*prog_ : nullptr, {}, extras.size(), nullptr};
    bool in_tile = planned == out;
    for (size_t i = 0; i < extras.size() && in_tile; ++i) {
      in_tile = plane_walk(extras[i]->shape(), out, ep.extra[i]);
      ep.extra[i].base = extras[i]->data<float>().data();
    }
    if (in_tile) {
      if (pb && prog_bias_) {
        ep.prog = &*prog_bias_;
        ep.bias_input = pb;
        ep.bias = nullptr;
      }
      // Prefetching pays on large planes only (per-node minima, ResNet-50 on a Zen 4: the 56 x 56 residual
      // convolutions 0.90-0.91x the time; the 28 x 28 and smaller ones, whose residual is still in cache,
      // 1.01-1.05x).
      const bool large = g.out_size() >= 2048;
      int64_t res_n = 0;
      const std::optional<kern::RegEpilogue> reg = conv_register_form(ep, ctx.exact, res_n);
      const kern::ConvEpilogue ce{&Epilogue::apply,
                                  &ep,
                                  &Epilogue::apply_points,
                                  large ? &Epilogue::prefetch : nullptr,
                                  &Epilogue::apply_planes,
                                  reg ? &*reg : nullptr,
                                  res_n};
      kern::conv_f32(ctx.isa, ctx.exact, g, px, pw, py, s, ctx.pool, packed, (pb || prog_) ? &ce : nullptr);
      return;
    }
    Tensor conv = ctx.scratch(DType::F32, out);
    ep.prog = nullptr;
    const kern::ConvEpilogue bias_only{&Epilogue::apply, &ep, &Epilogue::apply_points, nullptr,
                                       &Epilogue::apply_planes};
    kern::conv_f32(ctx.isa, ctx.exact, g, px, pw, conv.mutable_data<float>().data(), s, ctx.pool, packed,
                   pb ? &bias_only : nullptr);
    std::vector<const Tensor*> in{&conv};
    in.insert(in.end(), extras.begin(), extras.end());
    ewp::run_broadcast(*prog_, ctx.isa, ctx.exact, in, y, ctx.pool);
  }

 private:
  static void check_bias(const NodeInfo& info, const Shape& b, int64_t m, ErrorKind kind) {
    if (b.rank() != 1 || b[0] != m)
      info.fail(kind, "B " + b.to_string() + " must be [" + std::to_string(m) + "] (one value per output channel)");
  }

  WindowAttrs a_;
  bool transpose_;
  std::optional<kern::EwPlan> prog_;       // FusedConv
  std::optional<kern::EwPlan> prog_bias_;  // prog_ with the bias as its first instruction
  SharedPack<kern::ConvPackedWeights> packed_;
};

}  // namespace

std::unique_ptr<Kernel> make_conv(const NodeInfo& info) {
  return std::make_unique<ConvKernel>(read_window_attrs(info, WindowOp::Conv), false);
}

// FusedConv (domain "onemodel", the `fuse-elementwise` pass): Conv's attributes and inputs X, W, B (B may be
// omitted), then the inputs 1.. of the element-wise program that runs on its result.
std::unique_ptr<Kernel> make_fused_conv(const NodeInfo& info) {
  const size_t n = info.num_inputs();
  if (n < 2 || n - 2 > static_cast<size_t>(ir::kEwMaxInputs))
    info.fail(ErrorKind::InvalidModel, "expects X, W, B and at most " + std::to_string(ir::kEwMaxInputs - 1) +
                                           " program inputs, got " + std::to_string(n) + " inputs");
  return std::make_unique<ConvKernel>(read_window_attrs(info, WindowOp::Conv), false,
                                      ewp::read_program(info, n < 3 ? 1 : n - 2));
}

std::unique_ptr<Kernel> make_conv_transpose(const NodeInfo& info) {
  return std::make_unique<ConvKernel>(read_window_attrs(info, WindowOp::ConvTranspose), true);
}

}  // namespace onemodel::rt
