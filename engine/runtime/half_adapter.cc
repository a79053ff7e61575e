// The half-precision adapter (docs/fp16.md section 2): widen, run the float32 kernel, round back.
#include "runtime/half_adapter.h"

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include "base/big_buffer.h"
#include "base/fp16.h"
#include "kernels/isa.h"
#include "kernels/widen.h"
#include "runtime/inputs.h"

namespace onemodel::rt {

namespace {

bool type_has_half(const ir::TypeInfo& t) {
  if (is_half(t.elem)) return true;
  return t.inner && type_has_half(*t.inner);
}

// Conversions run in fixed chunks over the pool; each element is converted alone, so the thread count never
// changes a bit (docs/fp16.md section 3).
constexpr int64_t kConvertChunk = 32768;

// dst = src converted by `run` (a kernels/widen.h conversion of n contiguous values), in fixed chunks over the pool.
template <class S, class D>
void convert_into(const Tensor& src, Tensor& dst, ThreadPool* pool, kern::Isa isa,
                  void (*run)(kern::Isa, const S*, D*, int64_t)) {
  const auto* s = static_cast<const S*>(src.raw());
  auto* d = static_cast<D*>(dst.raw_mut());
  const int64_t n = src.numel();
  parallel_for(pool, (n + kConvertChunk - 1) / kConvertChunk, 0.5 * static_cast<double>(n), [&](int64_t c) {
    const int64_t lo = c * kConvertChunk;
    run(isa, s + lo, d + lo, std::min(n, lo + kConvertChunk) - lo);
  });
}

// `src` (float16 or bfloat16) widened into `dst` (float32) on the session's target `isa`: exact, the same bits
// on every target (kernels/widen.h).
void widen_into(const Tensor& src, Tensor& dst, ThreadPool* pool, kern::Isa isa) {
  convert_into(src, dst, pool, isa, src.dtype() == DType::BF16 ? kern::widen_bf16_f32 : kern::widen_f16_f32);
}

// `src` (float32) rounded to nearest even into `dst` (float16 or bfloat16) on `isa`: the same bits on every
// target as base/fp16.h's scalar rounding, a vector at a time (kernels/widen.h).
void narrow_into(const Tensor& src, Tensor& dst, ThreadPool* pool, kern::Isa isa) {
  convert_into(src, dst, pool, isa, dst.dtype() == DType::BF16 ? kern::narrow_f32_bf16 : kern::narrow_f32_f16);
}

Tensor widened(const Tensor& src, kern::Isa isa) {
  const Tensor c = src.is_contiguous() ? src : contiguous_copy(src);
  Tensor out = Tensor::zeros(DType::F32, c.shape());
  widen_into(c, out, nullptr, isa);
  return out;
}

Tensor narrowed(const Tensor& src, DType to, kern::Isa isa) {
  const Tensor c = src.is_contiguous() ? src : contiguous_copy(src);
  Tensor out = Tensor::zeros(to, c.shape());
  narrow_into(c, out, nullptr, isa);
  return out;
}

// Float32 scratch of adapted calls: buffers the calling thread keeps and grows (base/big_buffer.h), taken in
// stack order so a body's adapted nodes inside an adapted If or Loop take the next ones. Not from the run's arena:
// it is only rewound between runs, so widened copies of every activation of a large model would pile up in it
// (ISNet medium at 1024 x 1024 exceeded wasm's 4 GiB heap); here each depth keeps the largest buffer it needed.
// Freshly allocated per call (calloc), they cost a zero fill and, from the allocator's mmap threshold on, fresh
// pages at every call: PP-OCR rec in float16 spent 13% of an exact run in page faults and 4% in memset (perf).
// The kernel writes all of it before reading.
class ScratchLease {
 public:
  ScratchLease() : first_(stack().depth) {}
  ~ScratchLease() { stack().depth = first_; }
  ScratchLease(const ScratchLease&) = delete;
  ScratchLease& operator=(const ScratchLease&) = delete;

  Tensor take(const Shape& shape) {
    Stack& st = stack();
    if (st.depth == st.buffers.size()) st.buffers.emplace_back();
    float* p = st.buffers[st.depth++].get(static_cast<size_t>(std::max<int64_t>(shape.numel(), 1)));
    Storage view;
    view.data = std::shared_ptr<std::byte>(reinterpret_cast<std::byte*>(p), [](std::byte*) {});
    view.bytes = static_cast<size_t>(shape.numel()) * sizeof(float);
    return Tensor::view_of(view, 0, DType::F32, shape);
  }

 private:
  struct Stack {
    std::vector<GrowingFloats> buffers;
    size_t depth = 0;
  };
  static Stack& stack() {
    thread_local Stack s;
    return s;
  }
  size_t first_;
};

// What prepare() hands to run() when the node is adapted: the float32 form of each constant half-precision
// input (empty for the others) and the inner kernel's own prepared state.
struct Adapted {
  std::vector<Tensor> widened;
  std::shared_ptr<const void> inner;
};

// The inner kernel's flags, without compact weights: the adapter hands its inner kernel widened inputs only, so
// the plan widens compact weights for a wrapped node itself (onemodel.WidenWeight).
KernelFlags adapter_flags(KernelFlags f) {
  f.compact_weights = false;
  return f;
}

class HalfAdapter final : public Kernel {
 public:
  HalfAdapter(std::unique_ptr<Kernel> inner, bool binary16_native, size_t num_inputs, kern::Isa isa)
      : Kernel(adapter_flags(inner->flags())),
        inner_(std::move(inner)),
        binary16_native_(binary16_native),
        isa_(isa),
        kept_(num_inputs) {}

  void infer(InferContext& ctx) const override {
    const DType st = storage_type(ctx.inputs.size(), [&](size_t i) { return meta_type(ctx.inputs[i]); });
    if (st == DType::Undefined) return inner_->infer(ctx);
    std::vector<InputMeta> m32(ctx.inputs.begin(), ctx.inputs.end());
    std::vector<Tensor> values(m32.size());
    for (size_t i = 0; i < m32.size(); ++i) {
      if (!m32[i].present || !is_half(m32[i].dtype)) continue;
      m32[i].dtype = DType::F32;
      if (!m32[i].value) continue;
      // A run-time value seen by a dynamic step is widened for this call only; plan constants are kept.
      values[i] = m32[i].constant ? widen_constant(i, *m32[i].value) : widened(*m32[i].value, isa_);
      m32[i].value = &values[i];
    }
    std::vector<OutputMeta> o32(ctx.outputs.size());
    InferContext c32{ctx.info, m32, o32, ctx.exact};
    inner_->infer(c32);
    if (c32.needs_runtime_values) return ctx.require_runtime_values();
    for (size_t o = 0; o < o32.size(); ++o) {
      OutputMeta& out = o32[o];
      if (out.dtype == DType::F32) {
        out.dtype = st;
        if (!out.constant.empty()) out.constant = narrowed(out.constant, st, isa_);
      }
      ctx.outputs[o] = std::move(out);
    }
  }

  std::shared_ptr<const void> prepare(PrepareContext& ctx) const override {
    const DType st = storage_type(ctx.inputs.size(), [&](size_t i) { return meta_type(ctx.inputs[i]); });
    if (st == DType::Undefined) return inner_->prepare(ctx);
    auto state = std::make_shared<Adapted>();
    state->widened.resize(ctx.inputs.size());
    std::vector<InputMeta> m32(ctx.inputs.begin(), ctx.inputs.end());
    for (size_t i = 0; i < m32.size(); ++i) {
      if (!m32[i].present || !is_half(m32[i].dtype)) continue;
      m32[i].dtype = DType::F32;
      if (!m32[i].value) continue;  // prepare sees plan constants only (graph-runtime.md section 2)
      state->widened[i] = widen_constant(i, *m32[i].value);
      m32[i].value = &state->widened[i];
    }
    std::vector<OutputMeta> o32(ctx.outputs.begin(), ctx.outputs.end());
    for (OutputMeta& o : o32)
      if (o.dtype == st) o.dtype = DType::F32, o.constant = Tensor();
    PrepareContext c32{ctx.info, m32, o32, ctx.exact, ctx.isa};
    state->inner = inner_->prepare(c32);
    return state;
  }

  void run(RunContext& ctx) const override {
    const DType st = storage_type(
        ctx.inputs.size(), [&](size_t i) { return ctx.has_input(i) ? ctx.inputs[i].dtype() : DType::Undefined; });
    if (st == DType::Undefined) return inner_->run(ctx);
    const auto* state = static_cast<const Adapted*>(ctx.state);
    if (!state || state->widened.size() != ctx.inputs.size())
      ctx.fail(ErrorKind::Internal, "the half-precision adapter runs without its prepared state");
    // Every input is widened before the inner kernel writes anything, and outputs are rounded after it
    // finished, so an output sharing an input's block (in_place_input) is safe.
    ScratchLease lease;
    std::vector<Tensor> in32(ctx.inputs.begin(), ctx.inputs.end());
    for (size_t i = 0; i < in32.size(); ++i) {
      if (!ctx.has_input(i) || !is_half(in32[i].dtype())) continue;
      if (!state->widened[i].empty()) {
        in32[i] = state->widened[i];
        continue;
      }
      in32[i] = lease.take(ctx.inputs[i].shape());
      widen_into(ctx.inputs[i], in32[i], ctx.pool, isa_);
    }
    std::vector<Tensor> out32(ctx.outputs.begin(), ctx.outputs.end());
    std::vector<char> narrow(out32.size(), 0);
    for (size_t o = 0; o < out32.size(); ++o) {
      if (out32[o].empty() || out32[o].dtype() != st) continue;
      out32[o] = lease.take(out32[o].shape());  // the kernel writes all of its outputs
      narrow[o] = 1;
    }
    RunContext c32{ctx.info, in32, out32, ctx.exact, state->inner.get(), ctx.arena, ctx.pool, ctx.isa};
    c32.profile = ctx.profile;
    inner_->run(c32);
    for (size_t o = 0; o < out32.size(); ++o)
      if (narrow[o]) narrow_into(out32[o], ctx.outputs[o], ctx.pool, isa_);
  }

 private:
  static DType meta_type(const InputMeta& m) { return m.present ? m.dtype : DType::Undefined; }

  // The storage type of the node's outputs: the type of its first half-precision input; Undefined when the
  // node is not adapted (no such input, or the binary16 arithmetic exception of docs/fp16.md section 2).
  template <class TypeOf>
  DType storage_type(size_t n, TypeOf&& type_of) const {
    DType st = DType::Undefined;
    bool all_f16 = true;
    for (size_t i = 0; i < n; ++i) {
      const DType t = type_of(i);
      if (t == DType::Undefined) continue;
      if (st == DType::Undefined && is_half(t)) st = t;
      all_f16 = all_f16 && t == DType::F16;
    }
    return binary16_native_ && all_f16 ? DType::Undefined : st;
  }

  // A plan constant widened once for the session (docs/fp16.md section 3): the last one widened per input is
  // kept with a reference to its source, so a source seen again (the next plan's weights) is the same tensor.
  Tensor widen_constant(size_t i, const Tensor& src) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (i >= kept_.size()) kept_.resize(i + 1);
    Kept& k = kept_[i];
    if (k.source.storage().data != src.storage().data || k.source.offset() != src.offset() ||
        k.source.dtype() != src.dtype() || k.source.shape() != src.shape()) {
      k.widened = widened(src, isa_);
      k.source = src;
    }
    return k.widened;
  }

  struct Kept {
    Tensor source, widened;
  };
  std::unique_ptr<Kernel> inner_;
  bool binary16_native_;
  kern::Isa isa_;  // the session's target (InferContext carries none)
  mutable std::mutex mutex_;
  mutable std::vector<Kept> kept_;
};

}  // namespace

bool graph_has_half(const ir::Graph& graph) {
  for (const ir::Value& v : graph.values) {
    if (type_has_half(v.type)) return true;
    if (v.initializer && is_half(v.initializer->dtype)) return true;
  }
  for (const ir::Node& n : graph.nodes)
    for (const ir::Attribute& a : n.attributes) {
      if (a.t && is_half(a.t->dtype)) return true;
      if (a.g && graph_has_half(*a.g)) return true;
      for (const auto& g : a.graphs)
        if (g && graph_has_half(*g)) return true;
      if ((n.op_type == "Cast" && a.name == "to") &&
          (a.i == static_cast<int64_t>(DType::F16) || a.i == static_cast<int64_t>(DType::BF16)))
        return true;
    }
  return false;
}

bool half_wrappable(const ir::Node& node, const KernelFlags& flags) {
  if (flags.view_of_input || flags.outputs_data_dependent || flags.on_values || flags.passes_values) return false;
  if (node.domain == "onemodel" && node.op_type == "WidenWeight") return false;  // reads its 16 bits itself
  if (!node.domain.empty() && node.domain != "ai.onnx") return true;
  // BitCast rereads the stored bytes: widened first, a float16 input would be reread as float32 (the newer-ops
  // case bitcast_float16_to_int16 was refused).
  for (const char* op : {"Cast", "CastLike", "BitCast", "Constant", "ConstantOfShape", "Shape", "Size"})
    if (node.op_type == op) return false;
  return true;
}

std::unique_ptr<Kernel> wrap_half(std::unique_ptr<Kernel> inner, const ir::Node& node, size_t num_inputs,
                                  kern::Isa isa) {
  const bool onnx = node.domain.empty() || node.domain == "ai.onnx";
  const bool binary16_native =
      onnx && (node.op_type == "Add" || node.op_type == "Sub" || node.op_type == "Mul" || node.op_type == "Div");
  return std::make_unique<HalfAdapter>(std::move(inner), binary16_native, num_inputs, isa);
}

}  // namespace onemodel::rt
