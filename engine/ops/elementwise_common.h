// Shared machinery of the element-wise family (ops-elementwise.md): element-type sets, a per-type view of
// storage (f16 computes in float and rounds once, bool is a byte), and two
// generic kernels (unary map, same-type binary map) that every simple operator instantiates with a lambda.
// Type sets are template parameters so a lambda is only ever compiled for the types it accepts (no
// bit operations on floats, no sqrt on bools), and exact-mode NaN canonicalisation lives in one place.
#pragma once
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>

#include "kernels/widen.h"
#include "ops/common.h"

namespace onemodel::rt::ew {

// ---- element-type sets (bit i = DType code i) ----
constexpr uint32_t bit(DType t) { return 1u << static_cast<int>(t); }
constexpr uint32_t kF32 = bit(DType::F32);
constexpr uint32_t kFloats = bit(DType::F16) | bit(DType::F32) | bit(DType::F64);
constexpr uint32_t kSigned = bit(DType::I8) | bit(DType::I16) | bit(DType::I32) | bit(DType::I64);
constexpr uint32_t kUnsigned = bit(DType::U8) | bit(DType::U16) | bit(DType::U32) | bit(DType::U64);
constexpr uint32_t kInts = kSigned | kUnsigned;
constexpr uint32_t kNumeric = kFloats | kInts;
constexpr uint32_t kBool = bit(DType::Bool);
constexpr uint32_t kStored = kNumeric | kBool | bit(DType::BF16);

// Tag types for the two element types whose storage differs from their arithmetic type.
struct Half {};
struct Boolean {};

// Storage and arithmetic type of one element type. load() widens; store() narrows (f16: one rounding) and,
// in exact mode, writes NaN as the positive quiet NaN of the type.
template <class Tag>
struct Elem {
  using Store = Tag;
  using Calc = Tag;
  static Calc load(Store s) { return s; }
  static Store store(Calc c, bool exact) {
    if constexpr (std::is_floating_point_v<Calc>) return exact ? kern::canon(c) : c;
    return c;
  }
};
template <>
struct Elem<Half> {
  using Store = uint16_t;
  using Calc = float;
  static Calc load(Store s) { return half_to_float(s); }
  static Store store(Calc c, bool exact) { return (exact && c != c) ? uint16_t{0x7E00} : float_to_half(c); }
};
template <>
struct Elem<Boolean> {
  using Store = uint8_t;
  using Calc = bool;
  static Calc load(Store s) { return s != 0; }
  static Store store(Calc c, bool) { return c ? 1 : 0; }
};

// Calls f(Tag{}) for t when t is in Types; returns false otherwise (the caller reports the type).
template <uint32_t Types, class F>
bool visit(DType t, F&& f) {
  if (static_cast<uint32_t>(t) >= 32 || !(Types & bit(t))) return false;
  switch (t) {
#define OM_EW_CASE(D, T)                         \
  case DType::D:                                 \
    if constexpr (Types & bit(DType::D)) f(T{}); \
    return true;
    OM_EW_CASE(F32, float)
    OM_EW_CASE(F64, double)
    OM_EW_CASE(F16, Half)
    OM_EW_CASE(I8, int8_t)
    OM_EW_CASE(I16, int16_t)
    OM_EW_CASE(I32, int32_t)
    OM_EW_CASE(I64, int64_t)
    OM_EW_CASE(U8, uint8_t)
    OM_EW_CASE(U16, uint16_t)
    OM_EW_CASE(U32, uint32_t)
    OM_EW_CASE(U64, uint64_t)
    OM_EW_CASE(Bool, Boolean)
#undef OM_EW_CASE
    default: return false;
  }
}

template <class S>
const S* in_ptr(const Tensor& t) {
  return static_cast<const S*>(t.raw());
}
template <class S>
S* out_ptr(Tensor& t) {
  return static_cast<S*>(t.raw_mut());
}

// Element-wise work over the session's pool (kernels-gemm.md's fixed-chunk rule): [0, n) is cut into chunks
// of kChunk elements, a constant, so which thread runs a chunk never changes a result. Below about 2 x 10 us
// of estimated work the pool runs everything on the caller.
constexpr int64_t kChunk = 16384;
constexpr double kNsPerElement = 0.25;
template <class F>
void for_chunks(ThreadPool* pool, int64_t n, F&& body) {
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  parallel_for(pool, chunks, kNsPerElement * static_cast<double>(n),
               [&](int64_t c) { body(c * kChunk, std::min(n, (c + 1) * kChunk)); });
}

// Rows of `inner` elements in chunks of about kChunk elements (at least one row each); `ns_per_element` is the
// work estimate's rate.
template <class F>
void for_row_chunks(ThreadPool* pool, int64_t rows, int64_t inner, F&& body, double ns_per_element = kNsPerElement) {
  const int64_t per = std::max<int64_t>(1, kChunk / std::max<int64_t>(inner, 1));
  const int64_t chunks = (rows + per - 1) / per;
  parallel_for(pool, chunks, ns_per_element * static_cast<double>(rows) * static_cast<double>(inner),
               [&](int64_t c) { body(c * per, std::min(rows, (c + 1) * per)); });
}

// Calls f(std::true_type) or f(std::false_type): the exact flag as a constant, so per-element stores
// compile without a branch and the loops vectorise.
template <class F>
void with_exact(bool exact, F&& f) {
  if (exact)
    f(std::true_type{});
  else
    f(std::false_type{});
}

// The broadcast shape of the inputs, or Error(kind) naming them. The names are written only on failure: every
// element-wise node checks its shapes so in every run, and formatting them each time was a string allocation
// per shape per node per run.
inline Shape broadcast_all(const NodeInfo& info, std::span<const Shape* const> shapes, ErrorKind kind) {
  Shape s = *shapes[0];
  for (size_t i = 1; i < shapes.size(); ++i) {
    try {
      s = Shape::broadcast(s, *shapes[i]);
    } catch (const Error&) {
      std::string listed = shapes[0]->to_string();
      for (size_t j = 1; j <= i; ++j) listed += " and " + shapes[j]->to_string();
      info.fail(kind, "inputs of shapes " + listed + " do not broadcast");
    }
  }
  return s;
}

// Run time: the inputs must still broadcast to the planned output (InvalidInput otherwise).
inline void check_run_shapes(const RunContext& ctx, std::span<const Shape* const> shapes, const Tensor& out) {
  if (broadcast_all(ctx.info, shapes, ErrorKind::InvalidInput) != out.shape())
    ctx.fail(ErrorKind::InvalidInput, "inputs do not match the planned output " + out.shape().to_string());
}

// Unsupported naming the type unless t is in the set.
inline void check_type(const NodeInfo& info, DType t, uint32_t types, const char* what = "element type") {
  if (static_cast<int>(t) < 0 || static_cast<int>(t) >= 32 || !(types & bit(t)))
    info.fail(ErrorKind::Unsupported, std::string(what) + " " + type_str(t) + " is not supported");
}

// Inputs 0..n-1 must be present (InvalidModel otherwise).
inline void require_inputs(const InferContext& ctx, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (!ctx.has_input(i))
      ctx.fail(ErrorKind::InvalidModel, "expects " + std::to_string(n) + " input" + (n == 1 ? "" : "s") + ", input " +
                                            std::to_string(i) + " is missing");
}

// Inputs [first, last) must have the element type of input `first`.
inline void require_same_type(const InferContext& ctx, size_t first, size_t last) {
  const DType t = ctx.input(first).dtype;
  for (size_t i = first + 1; i < last; ++i)
    if (ctx.has_input(i) && ctx.input(i).dtype != t)
      ctx.fail(ErrorKind::InvalidModel, "input types differ: " + type_str(t) + " and " + type_str(ctx.input(i).dtype));
}

// ---- unary map: y = f(x), output of x's type, or bool when f returns bool ----
template <uint32_t Types, class F>
class UnaryKernel final : public Kernel {
 public:
  UnaryKernel(F f, bool exact, bool bool_out)
      : Kernel(KernelFlags{.exact = exact, .in_place_input = bool_out ? -1 : 0}), f_(f), bool_out_(bool_out) {}

  void infer(InferContext& ctx) const override {
    require_inputs(ctx, 1);
    const DType t = ctx.input(0).dtype;
    check_type(ctx.info, t, Types);
    ctx.set_output(0, bool_out_ ? DType::Bool : t, ctx.input(0).shape);
  }

  void run(RunContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (x.shape() != y.shape()) ctx.fail(ErrorKind::InvalidInput, "input does not match the planned output");
    const int64_t n = x.numel();
    if (!visit<Types>(x.dtype(), [&](auto tag) {
          using E = Elem<decltype(tag)>;
          using R = decltype(f_(typename E::Calc{}));
          using O = std::conditional_t<std::is_same_v<R, bool>, Elem<Boolean>, E>;
          const auto* px = in_ptr<typename E::Store>(x);
          auto* py = out_ptr<typename O::Store>(y);
          with_exact(ctx.exact, [&](auto ex) {
            for_chunks(ctx.pool, n, [&](int64_t b, int64_t e) {
              // A local copy of the function and pointers: through a reference the stores could alias them, so
              // the compiler would reload them every element and not vectorise.
              const F f = f_;
              const auto* __restrict in = px;
              auto* out = py;
              for (int64_t i = b; i < e; ++i) out[i] = O::store(f(E::load(in[i])), ex.value);
            });
          });
        }))
      ctx.fail(ErrorKind::Unsupported, "element type " + type_str(x.dtype()) + " is not supported");
  }

 private:
  F f_;
  bool bool_out_;
};

// `f` maps one arithmetic value (float for f16) to a value of the same type or to bool.
template <uint32_t Types, class F>
std::unique_ptr<Kernel> unary(F f, bool exact = true, bool bool_out = false) {
  return std::make_unique<UnaryKernel<Types, F>>(f, exact, bool_out);
}

// One run of a binary16 binary map (all inputs binary16: docs/fp16.md section 2), in blocks: operands widened
// and the result rounded back by the vector conversions of kernels/widen.h, f in float32 between. The bits of
// Elem<Half>'s per-element load and store (a correctly rounded binary16 result either way; exact mode's NaN the
// positive quiet one), without their branches per element: in the float16 MiniLM-shaped encoder the 62 Adds
// took 23 ms of a 75 ms run element by element (`onemodel bench --profile`).
template <bool kExact, class F>
void half_binary_row(kern::Isa isa, F f, const uint16_t* a, const uint16_t* b, uint16_t* o, int64_t n,
                     const std::array<int64_t, 2>& st) {
  constexpr int64_t kBlock = 256;
  float xa[kBlock], xb[kBlock], xo[kBlock];
  auto load = [&](const uint16_t* p, int64_t stride, int64_t k0, int64_t m, float* x) {
    if (stride == 1) {
      kern::widen_f16_f32(isa, p + k0, x, m);
    } else if (stride == 0) {
      const float v = half_to_float(p[0]);
      for (int64_t k = 0; k < m; ++k) x[k] = v;
    } else {
      for (int64_t k = 0; k < m; ++k) x[k] = half_to_float(p[(k0 + k) * stride]);
    }
  };
  for (int64_t k0 = 0; k0 < n; k0 += kBlock) {
    const int64_t m = std::min(kBlock, n - k0);
    load(a, st[0], k0, m, xa);
    load(b, st[1], k0, m, xb);
    for (int64_t k = 0; k < m; ++k) xo[k] = f(xa[k], xb[k]);
    if constexpr (kExact)
      for (int64_t k = 0; k < m; ++k) xo[k] = kern::canon(xo[k]);
    kern::narrow_f32_f16(isa, xo, o + k0, m);
  }
}

// ---- binary map over two inputs of one type, broadcast: z = f(a, b) of that type, or bool ----
template <uint32_t Types, class F>
class BinaryKernel final : public Kernel {
 public:
  BinaryKernel(F f, bool exact, bool bool_out)
      : Kernel(KernelFlags{.exact = exact, .in_place_input = bool_out ? -1 : 0}), f_(f), bool_out_(bool_out) {}

  void infer(InferContext& ctx) const override {
    require_inputs(ctx, 2);
    require_same_type(ctx, 0, 2);
    const DType t = ctx.input(0).dtype;
    check_type(ctx.info, t, Types);
    const std::array<const Shape*, 2> s{&ctx.input(0).shape, &ctx.input(1).shape};
    ctx.set_output(0, bool_out_ ? DType::Bool : t, broadcast_all(ctx.info, s, ErrorKind::InvalidModel));
  }

  void run(RunContext& ctx) const override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    Tensor& out = ctx.output(0);
    const std::array<const Shape*, 2> s{&a.shape(), &b.shape()};
    check_run_shapes(ctx, s, out);
    if (a.dtype() != b.dtype()) ctx.fail(ErrorKind::InvalidInput, "input types differ");
    if (!visit<Types>(a.dtype(), [&](auto tag) {
          using E = Elem<decltype(tag)>;
          using C = typename E::Calc;
          using R = decltype(f_(C{}, C{}));
          using O = std::conditional_t<std::is_same_v<R, bool> && !std::is_same_v<C, bool>, Elem<Boolean>, E>;
          const auto* pa = in_ptr<typename E::Store>(a);
          const auto* pb = in_ptr<typename E::Store>(b);
          auto* po = out_ptr<typename O::Store>(out);
          with_exact(ctx.exact, [&](auto ex) {
            constexpr bool kExact = decltype(ex)::value;
            // One loop per stride pattern (both contiguous, one operand repeated): plain loops vectorise.
            auto row = [&](int64_t o, const auto& off, int64_t n, const auto& st) {
              const F f_ = this->f_;  // a local copy (see UnaryKernel)
              const auto* ra = pa + off[0];
              const auto* rb = pb + off[1];
              auto* ro = po + o;
              if constexpr (std::is_same_v<E, Elem<Half>> && std::is_same_v<O, E>) {
                half_binary_row<kExact>(ctx.isa, f_, ra, rb, ro, n, std::array<int64_t, 2>{st[0], st[1]});
              } else if (st[0] == 1 && st[1] == 1) {
                for (int64_t k = 0; k < n; ++k) ro[k] = O::store(f_(E::load(ra[k]), E::load(rb[k])), kExact);
              } else if (st[0] == 1 && st[1] == 0) {
                const C vb = E::load(rb[0]);
                for (int64_t k = 0; k < n; ++k) ro[k] = O::store(f_(E::load(ra[k]), vb), kExact);
              } else if (st[0] == 0 && st[1] == 1) {
                const C va = E::load(ra[0]);
                for (int64_t k = 0; k < n; ++k) ro[k] = O::store(f_(va, E::load(rb[k])), kExact);
              } else {
                for (int64_t k = 0; k < n; ++k)
                  ro[k] = O::store(f_(E::load(ra[k * st[0]]), E::load(rb[k * st[1]])), kExact);
              }
            };
            const Shape& os = out.shape();
            if (a.shape() == os && b.shape() == os) {  // no broadcast: one flat run per chunk
              const std::array<int64_t, 2> unit{1, 1};
              for_chunks(ctx.pool, os.numel(), [&](int64_t lo, int64_t hi) {
                row(lo, std::array<int64_t, 2>{lo, lo}, hi - lo, unit);
              });
              return;
            }
            const int64_t inner = os.rank() == 0 ? 1 : os[os.rank() - 1];
            const int64_t rows = inner == 0 ? 0 : os.numel() / inner;
            for_row_chunks(ctx.pool, rows, inner,
                           [&](int64_t r0, int64_t r1) { broadcast_rows<2>(os, s, r0, r1, row); });
          });
        }))
      ctx.fail(ErrorKind::Unsupported, "element type " + type_str(a.dtype()) + " is not supported");
  }

 private:
  F f_;
  bool bool_out_;
};

template <uint32_t Types, class F>
std::unique_ptr<Kernel> binary(F f, bool exact = true, bool bool_out = false) {
  return std::make_unique<BinaryKernel<Types, F>>(f, exact, bool_out);
}

// ---- small arithmetic helpers shared by several sub-families ----

// Two's-complement wrap-around arithmetic for any integer type (no signed overflow UB).
template <class T>
T wrap_add(T a, T b) {
  return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
template <class T>
T wrap_sub(T a, T b) {
  return static_cast<T>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
template <class T>
T wrap_mul(T a, T b) {
  return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

// Max/Min of ops-elementwise.md: NaN wins (the first operand's if both); equal operands give the second.
template <class T>
T nan_max(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (a != a) return a;
    if (b != b) return b;
  }
  return a > b ? a : b;
}
template <class T>
T nan_min(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (a != a) return a;
    if (b != b) return b;
  }
  return a < b ? a : b;
}

// Activation and clamp formulas shared by their operators and by the fused programs of the `fuse-elementwise`
// pass (ops/ew_program.cc), so a fused chain computes every element with the very same operations.
// Relu: -0 becomes +0 (a compare and select); NaN passes through.
template <class T>
T relu_value(T x) {
  return (x < T(0) || x == T(0)) ? T(0) : x;
}
template <class T>
T leaky_relu_value(T x, float alpha) {
  return x < T(0) ? static_cast<T>(alpha) * x : x;
}
// clamp(v, 0, 1) with NaN passing through.
template <class T>
T clamp01(T v) {
  return v < T(0) ? T(0) : (v > T(1) ? T(1) : v);
}
template <class T>
T hard_sigmoid_value(T x, float alpha, float beta) {
  return clamp01(static_cast<T>(alpha) * x + static_cast<T>(beta));
}
template <class T>
T hard_swish_value(T x) {
  return x * clamp01(x * static_cast<T>(0.16666667f) + static_cast<T>(0.5f));
}
// Clip: the lower bound first, so the upper one wins when lo > hi; NaN fails both compares and passes through.
template <class T>
T clip_value(T v, T lo, T hi) {
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}

// Float to integer by the Cast rule: truncate toward zero, saturate, NaN gives 0.
template <class T>
T saturate_cast(double d) {
  if (d != d) return T{0};
  const double t = std::trunc(d);
  const double hi = std::ldexp(1.0, std::numeric_limits<T>::digits);  // 2^bits, exact in double
  if (t >= hi) return std::numeric_limits<T>::max();
  if (t < static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
  return static_cast<T>(t);
}

}  // namespace onemodel::rt::ew
