// Cast (opsets 6-12, 13-18, 19+) and CastLike (15+): every pair of the 13 stored element types, by tensors.md section
// 10 and ops-elementwise.md "Cast". Floating sources go through double (holds f16/bf16/f32/f64 exactly), integer and
// bool sources through a 64-bit integer:
//   float -> float     round to nearest even (f64 -> f16/bf16 goes through f32, rounding twice, as specified)
//   float -> integer   truncate toward zero, saturate to the target range, NaN -> 0
//   integer -> integer wrap modulo 2^bits;  integer -> float round to nearest even (u64 read as unsigned)
//   any -> bool        x != 0 (NaN is true, -0 false);  bool -> number 0 or 1
// Exact mode stores NaN as the positive quiet NaN of the target type. The float8 types (the only ones
// `saturate` affects), strings and the other unstored types are Unsupported.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/widen.h"
#include "ops/elementwise_common.h"
#include "ops/ops.h"

namespace onemodel::rt {
namespace {

// A source element widened: a double for float sources, else a 64-bit integer (signed or unsigned).
struct Wide {
  enum Kind { Float, Signed, Unsigned } kind;
  double f = 0;
  int64_t i = 0;
  uint64_t u = 0;
};

Wide load(DType t, const std::byte* p) {
  auto rd = [p](auto tag) {
    decltype(tag) v;
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (t) {
    case DType::F32: return {Wide::Float, static_cast<double>(rd(float{}))};
    case DType::F64: return {Wide::Float, rd(double{})};
    case DType::F16: return {Wide::Float, static_cast<double>(half_to_float(rd(uint16_t{})))};
    case DType::BF16: return {Wide::Float, static_cast<double>(bf16_to_float(rd(uint16_t{})))};
    case DType::I8: return {Wide::Signed, 0, rd(int8_t{})};
    case DType::I16: return {Wide::Signed, 0, rd(int16_t{})};
    case DType::I32: return {Wide::Signed, 0, rd(int32_t{})};
    case DType::I64: return {Wide::Signed, 0, rd(int64_t{})};
    case DType::U8: return {Wide::Unsigned, 0, 0, rd(uint8_t{})};
    case DType::U16: return {Wide::Unsigned, 0, 0, rd(uint16_t{})};
    case DType::U32: return {Wide::Unsigned, 0, 0, rd(uint32_t{})};
    case DType::U64: return {Wide::Unsigned, 0, 0, rd(uint64_t{})};
    case DType::Bool: return {Wide::Unsigned, 0, 0, static_cast<uint64_t>(rd(uint8_t{}) != 0)};
    default: return {Wide::Unsigned};
  }
}

// An integer rounded to nearest even with `bits` significant bits, as a float (exact for bits <= 24). Used
// for bfloat16, where int -> f32 -> bf16 would round twice.
float round_int_to_bits(uint64_t mag, bool neg, int bits) {
  int msb = 63;
  while (msb >= 0 && !((mag >> msb) & 1u)) --msb;
  const int drop = msb + 1 - bits;
  if (drop > 0) {
    const uint64_t rem = mag & ((uint64_t{1} << drop) - 1);
    const uint64_t half = uint64_t{1} << (drop - 1);
    uint64_t top = mag >> drop;
    if (rem > half || (rem == half && (top & 1u))) ++top;  // may carry to bits+1 bits: still exact
    const float v = std::ldexp(static_cast<float>(top), drop);
    return neg ? -v : v;
  }
  const auto v = static_cast<float>(mag);
  return neg ? -v : v;
}

template <class T>
void store_int(const Wide& w, std::byte* p) {
  T v;
  if (w.kind == Wide::Float)
    v = ew::saturate_cast<T>(w.f);
  else if (w.kind == Wide::Signed)
    v = static_cast<T>(static_cast<uint64_t>(w.i));  // wrap modulo 2^bits
  else
    v = static_cast<T>(w.u);
  std::memcpy(p, &v, sizeof v);
}

template <class T>
void put(std::byte* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

void store(DType t, const Wide& w, bool exact, std::byte* p) {
  const bool nan = w.kind == Wide::Float && w.f != w.f;
  switch (t) {
    case DType::Bool:
      put<uint8_t>(p, w.kind == Wide::Float ? (w.f != 0.0 || nan) : (w.kind == Wide::Signed ? w.i != 0 : w.u != 0));
      return;
    case DType::I8: return store_int<int8_t>(w, p);
    case DType::I16: return store_int<int16_t>(w, p);
    case DType::I32: return store_int<int32_t>(w, p);
    case DType::I64: return store_int<int64_t>(w, p);
    case DType::U8: return store_int<uint8_t>(w, p);
    case DType::U16: return store_int<uint16_t>(w, p);
    case DType::U32: return store_int<uint32_t>(w, p);
    case DType::U64: return store_int<uint64_t>(w, p);
    default: break;
  }
  // Float targets.
  if (w.kind != Wide::Float) {
    const bool neg = w.kind == Wide::Signed && w.i < 0;
    const uint64_t mag =
        w.kind == Wide::Unsigned ? w.u : (neg ? 0 - static_cast<uint64_t>(w.i) : static_cast<uint64_t>(w.i));
    switch (t) {
      case DType::F64:
        return put<double>(p, w.kind == Wide::Unsigned ? static_cast<double>(w.u) : static_cast<double>(w.i));
      case DType::F32:
        return put<float>(p, w.kind == Wide::Unsigned ? static_cast<float>(w.u) : static_cast<float>(w.i));
      // |i| < 2^24 converts to f32 exactly, and anything larger overflows binary16 either way: one rounding.
      case DType::F16: return put<uint16_t>(p, float_to_half(round_int_to_bits(mag, neg, 24)));
      case DType::BF16: return put<uint16_t>(p, float_to_bf16(round_int_to_bits(mag, neg, 8)));
      default: return;
    }
  }
  if (nan && exact) {
    switch (t) {
      case DType::F64: return put<double>(p, kern::canonical_nan_f64());
      case DType::F32: return put<float>(p, kern::canonical_nan_f32());
      case DType::F16: return put<uint16_t>(p, 0x7E00);
      case DType::BF16: return put<uint16_t>(p, 0x7FC0);
      default: return;
    }
  }
  switch (t) {
    case DType::F64: return put<double>(p, w.f);
    case DType::F32: return put<float>(p, static_cast<float>(w.f));
    case DType::F16: return put<uint16_t>(p, float_to_half(static_cast<float>(w.f)));
    case DType::BF16: return put<uint16_t>(p, float_to_bf16(static_cast<float>(w.f)));
    default: return;
  }
}

class CastKernel final : public Kernel {
 public:
  // to = Undefined: CastLike (the target is input 1's element type).
  explicit CastKernel(DType to) : Kernel(KernelFlags{.exact = true}), to_(to) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0)) ctx.fail(ErrorKind::InvalidModel, "expects one input");
    const DType from = ctx.input(0).dtype;
    if (!dtype_is_stored(from)) ctx.fail(ErrorKind::Unsupported, "cast from " + type_str(from) + " is not supported");
    DType to = to_;
    if (to == DType::Undefined) {  // CastLike: the type of input 1, whose values are never read
      if (!ctx.has_input(1)) ctx.fail(ErrorKind::InvalidModel, "expects two inputs (input and target_type)");
      to = ctx.input(1).dtype;
      if (!dtype_is_stored(to)) ctx.fail(ErrorKind::Unsupported, "cast to " + type_str(to) + " is not supported");
    }
    ctx.set_output(0, to, ctx.input(0).shape);
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    const DType to = to_ == DType::Undefined ? y.dtype() : to_;
    if (x.shape() != y.shape() || y.dtype() != to || !dtype_is_stored(to))
      ctx.fail(ErrorKind::InvalidInput, "input does not match the planned output " + y.shape().to_string());
    const DType from = x.dtype();
    if (!dtype_is_stored(from)) ctx.fail(ErrorKind::Unsupported, "cast from " + type_str(from) + " is not supported");
    const size_t in_size = dtype_size(from), out_size = dtype_size(to);
    const auto* src = static_cast<const std::byte*>(x.raw());
    auto* dst = static_cast<std::byte*>(y.raw_mut());
    const int64_t n = x.numel();
    // Integers to float32, the casts quantized models make of every product (ISNet: 119 int32 results, 0.4 s
    // of a 6.6 s run through the generic path): one conversion of the value each, exactly what store() does
    // with it, as loops that vectorise, in chunks on the pool.
    if (to == DType::F32 && (from == DType::I32 || from == DType::U8 || from == DType::I8)) {
      float* out = reinterpret_cast<float*>(dst);
      ew::for_chunks(ctx.pool, n, [&](int64_t b, int64_t e) {
        if (from == DType::I32) {
          const auto* in = reinterpret_cast<const int32_t*>(src);
          for (int64_t i = b; i < e; ++i) out[i] = static_cast<float>(in[i]);
        } else if (from == DType::U8) {
          const auto* in = reinterpret_cast<const uint8_t*>(src);
          for (int64_t i = b; i < e; ++i) out[i] = static_cast<float>(in[i]);
        } else {
          const auto* in = reinterpret_cast<const int8_t*>(src);
          for (int64_t i = b; i < e; ++i) out[i] = static_cast<float>(in[i]);
        }
      });
      return;
    }
    for (int64_t i = 0; i < n; ++i)
      store(to, load(from, src + static_cast<size_t>(i) * in_size), ctx.exact, dst + static_cast<size_t>(i) * out_size);
  }

 private:
  DType to_;
};

// BitCast (opset 26, ops-newer.md section 4): the bytes of each element reread as the type `to` of the same width,
// little-endian as stored. A byte other than 0 or 1 is not a bool, so a cast to bool refuses it (InvalidInput).
class BitCastKernel final : public Kernel {
 public:
  explicit BitCastKernel(DType to) : Kernel(KernelFlags{.exact = true}), to_(to) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0)) ctx.fail(ErrorKind::InvalidModel, "expects one input");
    const DType from = ctx.input(0).dtype;
    if (!dtype_is_stored(from)) ctx.fail(ErrorKind::Unsupported, "cast from " + type_str(from) + " is not supported");
    if (dtype_size(from) != dtype_size(to_))
      ctx.fail(ErrorKind::InvalidModel,
               "cannot reinterpret " + type_str(from) + " as " + type_str(to_) + ": their bit widths differ");
    ctx.set_output(0, to_, ctx.input(0).shape);
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (x.shape() != y.shape() || x.nbytes() != y.nbytes())
      ctx.fail(ErrorKind::InvalidInput, "input does not match the planned output " + y.shape().to_string());
    const auto* src = static_cast<const uint8_t*>(x.raw());
    if (to_ == DType::Bool)
      for (size_t i = 0; i < x.nbytes(); ++i)
        if (src[i] > 1)
          ctx.fail(ErrorKind::InvalidInput, "element " + std::to_string(i) + " holds " + std::to_string(src[i]) +
                                                ", which is not a bool (0 or 1)");
    if (x.nbytes() > 0) std::memcpy(y.raw_mut(), src, x.nbytes());
  }

 private:
  DType to_;
};

// onemodel.WidenWeight (docs/fp16.md, compact weights; passes/compact_weights.cc makes it): a float16 or bfloat16
// weight widened exactly to float32 at every run, into the slab, just before the one product that reads it, when
// that product does not keep its packing of the 16 bits itself (runtime/plan.cc drops the step then). Never
// folded into a plan constant: holding the float32 copy is what compact storage avoids.
class WidenWeightKernel final : public Kernel {
 public:
  WidenWeightKernel() : Kernel(KernelFlags{.exact = true, .never_folded = true}) {}

  void infer(InferContext& ctx) const override {
    if (!ctx.has_input(0)) ctx.fail(ErrorKind::InvalidModel, "expects one input");
    const DType from = ctx.input(0).dtype;
    if (from != DType::F16 && from != DType::BF16)
      ctx.fail(ErrorKind::InvalidModel, "widens float16 or bfloat16, not " + type_str(from));
    ctx.set_output(0, DType::F32, ctx.input(0).shape);
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (x.shape() != y.shape() || y.dtype() != DType::F32 || (x.dtype() != DType::F16 && x.dtype() != DType::BF16) ||
        !x.is_contiguous())
      ctx.fail(ErrorKind::InvalidInput, "input does not match the planned output " + y.shape().to_string());
    const auto* src = static_cast<const uint16_t*>(x.raw());
    auto* dst = static_cast<float*>(y.raw_mut());
    const auto widen = x.dtype() == DType::BF16 ? kern::widen_bf16_f32 : kern::widen_f16_f32;
    ew::for_chunks(ctx.pool, x.numel(), [&](int64_t b, int64_t e) { widen(ctx.isa, src + b, dst + b, e - b); });
  }
};

// The element type named by attribute `to`: InvalidModel when absent or no type code, Unsupported when not stored.
DType target_type(const NodeInfo& info) {
  if (!info.has("to")) info.fail(ErrorKind::InvalidModel, "attribute 'to' is required");
  const int64_t code = info.get_int("to", 0);
  if (code < 0 || code > 1000)
    info.fail(ErrorKind::InvalidModel, "attribute 'to' holds no element type: " + std::to_string(code));
  const auto to = static_cast<DType>(code);
  if (!dtype_is_stored(to)) info.fail(ErrorKind::Unsupported, "cast to " + type_str(to) + " is not supported");
  return to;
}

}  // namespace

std::unique_ptr<Kernel> make_bit_cast(const NodeInfo& info) {
  return std::make_unique<BitCastKernel>(target_type(info));
}

std::unique_ptr<Kernel> make_cast(const NodeInfo& info) { return std::make_unique<CastKernel>(target_type(info)); }

std::unique_ptr<Kernel> make_cast_like(const NodeInfo&) { return std::make_unique<CastKernel>(DType::Undefined); }

std::unique_ptr<Kernel> make_widen_weight(const NodeInfo&) { return std::make_unique<WidenWeightKernel>(); }

}  // namespace onemodel::rt
