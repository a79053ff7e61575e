// Per-target code for kernels/ew_program.h. Included once per target by ew_program.cc through
// hwy/foreach_target.h.
#if defined(ONEMODEL_KERNELS_EW_PROGRAM_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONEMODEL_KERNELS_EW_PROGRAM_INL_H_
#undef ONEMODEL_KERNELS_EW_PROGRAM_INL_H_
#else
#define ONEMODEL_KERNELS_EW_PROGRAM_INL_H_
#endif

#include <algorithm>
#include <cstring>

#include "hwy/highway.h"
#include "kernels/ew_program.h"
#include "kernels/simd_common-inl.h"
#include "kernels/transcendental.h"

HWY_BEFORE_NAMESPACE();
namespace onemodel::kern::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace ew_detail {

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;

// An operand resolved for one block: n values at p, or the value s repeated.
struct Src {
  const float* p;
  float s;
  bool scalar;
};

// d[0, n) = f(a) / f(a, b) lane by lane, n a multiple of the lane count (Block pads ragged blocks); a scalar
// operand is a splat.
template <class F>
HWY_INLINE void Map1(const Src& a, float* out, int64_t n, F f) {
  const DF d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  if (a.scalar) {
    std::fill(out, out + n, hn::GetLane(f(d, hn::Set(d, a.s))));
    return;
  }
  for (int64_t k = 0; k < n; k += lanes) hn::StoreU(f(d, hn::LoadU(d, a.p + k)), d, out + k);
}

template <bool kScalarA, bool kScalarB, class F>
HWY_INLINE void Map2Pattern(const Src& a, const Src& b, float* out, int64_t n, F f) {
  const DF d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const VF sa = hn::Set(d, a.s), sb = hn::Set(d, b.s);
  for (int64_t k = 0; k < n; k += lanes) {
    const VF va = kScalarA ? sa : hn::LoadU(d, a.p + k);
    const VF vb = kScalarB ? sb : hn::LoadU(d, b.p + k);
    hn::StoreU(f(d, va, vb), d, out + k);
  }
}

template <class F>
HWY_INLINE void Map2(const Src& a, const Src& b, float* out, int64_t n, F f) {
  if (a.scalar && b.scalar) {
    const DF d;
    std::fill(out, out + n, hn::GetLane(f(d, hn::Set(d, a.s), hn::Set(d, b.s))));
  } else if (b.scalar) {
    Map2Pattern<false, true>(a, b, out, n, f);
  } else if (a.scalar) {
    Map2Pattern<true, false>(a, b, out, n, f);
  } else {
    Map2Pattern<false, false>(a, b, out, n, f);
  }
}

// clamp(v, 0, 1), NaN passing through (ops/elementwise_common.h clamp01).
HWY_INLINE VF Clamp01(DF d, VF v) {
  const VF zero = hn::Zero(d), one = hn::Set(d, 1.0f);
  return hn::IfThenElse(hn::Lt(v, zero), zero, hn::IfThenElse(hn::Gt(v, one), one, v));
}

void Run(Isa isa, bool exact, const ir::EwProgram& prog, const EwOperand* in, int64_t n, float* out);

// A block whose length is not a whole number of vectors runs on padded copies of its inputs and output (the
// lanes past n compute on zeros and are dropped), so the loops need no tail code and never touch memory past n.
inline void Block(Isa isa, bool exact, const ir::EwProgram& prog, const EwOperand* in, int64_t n, float* out) {
  const DF d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  if (n % lanes == 0) return Run(isa, exact, prog, in, n, out);
  const int64_t padded = (n + lanes - 1) / lanes * lanes;
  HWY_ALIGN float buf[ir::kEwMaxInputs + 1][kEwBlock];
  EwOperand local[ir::kEwMaxInputs];
  for (int i = 0; i < prog.inputs; ++i) {
    local[i] = in[i];
    if (in[i].scalar) continue;
    hn::Store(hn::Zero(d), d, buf[i] + padded - lanes);  // the lanes past n compute on zeros
    CopyOverlapped(in[i].p, buf[i], n);
    local[i].p = buf[i];
  }
  float* o = buf[ir::kEwMaxInputs];
  Run(isa, exact, prog, local, padded, o);
  CopyOverlapped(o, out, n);
}

inline void Run(Isa isa, bool exact, const ir::EwProgram& prog, const EwOperand* in, int64_t n, float* out) {
  HWY_ALIGN float regs[ir::kEwMaxRegs][kEwBlock];
  auto resolve = [&](const ir::EwRef& r) -> Src {
    switch (r.kind) {
      case ir::EwRef::Kind::Reg: return {regs[r.index], 0.0f, false};
      case ir::EwRef::Kind::Const: return {nullptr, prog.consts[static_cast<size_t>(r.index)], true};
      case ir::EwRef::Kind::Input: {
        const EwOperand& o = in[r.index];
        return o.scalar ? Src{nullptr, o.p[0], true} : Src{o.p, 0.0f, false};
      }
    }
    return {nullptr, 0.0f, true};
  };
  const size_t last = prog.code.size() - 1;
  for (size_t i = 0; i <= last; ++i) {
    const ir::EwInstr& ins = prog.code[i];
    float* dst = i == last ? out : regs[ins.dst];
    const Src a = resolve(ins.a);
    using ir::EwOp;
    switch (ins.op) {
      case EwOp::Add: Map2(a, resolve(ins.b), dst, n, [](DF, VF x, VF y) { return hn::Add(x, y); }); break;
      case EwOp::Sub: Map2(a, resolve(ins.b), dst, n, [](DF, VF x, VF y) { return hn::Sub(x, y); }); break;
      case EwOp::Mul: Map2(a, resolve(ins.b), dst, n, [](DF, VF x, VF y) { return hn::Mul(x, y); }); break;
      case EwOp::Div: Map2(a, resolve(ins.b), dst, n, [](DF, VF x, VF y) { return hn::Div(x, y); }); break;
      case EwOp::Max:  // NaN wins (the first operand's if both); equal operands give the second
        Map2(a, resolve(ins.b), dst, n, [](DF, VF x, VF y) {
          const VF r = hn::IfThenElse(hn::Gt(x, y), x, y);
          return hn::IfThenElse(hn::IsNaN(x), x, hn::IfThenElse(hn::IsNaN(y), y, r));
        });
        break;
      case EwOp::Min:
        Map2(a, resolve(ins.b), dst, n, [](DF, VF x, VF y) {
          const VF r = hn::IfThenElse(hn::Lt(x, y), x, y);
          return hn::IfThenElse(hn::IsNaN(x), x, hn::IfThenElse(hn::IsNaN(y), y, r));
        });
        break;
      case EwOp::Relu:  // x <= 0 (-0 included) gives +0; NaN passes through
        Map1(a, dst, n, [](DF d, VF x) { return hn::IfThenElse(hn::Le(x, hn::Zero(d)), hn::Zero(d), x); });
        break;
      case EwOp::LeakyRelu: {
        const float alpha = ins.p0;
        Map1(a, dst, n, [alpha](DF d, VF x) {
          return hn::IfThenElse(hn::Lt(x, hn::Zero(d)), hn::Mul(hn::Set(d, alpha), x), x);
        });
        break;
      }
      case EwOp::HardSigmoid: {
        const float alpha = ins.p0, beta = ins.p1;
        Map1(a, dst, n, [alpha, beta](DF d, VF x) {
          return Clamp01(d, hn::Add(hn::Mul(hn::Set(d, alpha), x), hn::Set(d, beta)));
        });
        break;
      }
      case EwOp::HardSwish:
        Map1(a, dst, n, [](DF d, VF x) {
          return hn::Mul(x, Clamp01(d, hn::Add(hn::Mul(x, hn::Set(d, 0.16666667f)), hn::Set(d, 0.5f))));
        });
        break;
      case EwOp::Clip: {
        const float lo = ins.p0, hi = ins.p1;
        Map1(a, dst, n, [lo, hi](DF d, VF x) {
          const VF l = hn::Set(d, lo), h = hn::Set(d, hi);
          const VF v = hn::IfThenElse(hn::Lt(x, l), l, x);
          return hn::IfThenElse(hn::Gt(v, h), h, v);
        });
        break;
      }
      case EwOp::Sigmoid:
      case EwOp::Tanh: {
        const float* src = a.p;
        if (a.scalar) {  // the kernels take arrays
          std::fill(dst, dst + n, a.s);
          src = dst;
        }
        (ins.op == EwOp::Sigmoid ? sigmoid_f32 : tanh_f32)(isa, exact, src, dst, n);
        continue;  // canonical already
      }
      case EwOp::Count: break;
    }
    if (exact) Map1(Src{dst, 0.0f, false}, dst, n, [](DF d, VF x) { return CanonicalNaN(d, x); });
  }
}

}  // namespace ew_detail

inline constexpr EwFns kEwFns{&ew_detail::Block};

}  // namespace onemodel::kern::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif
