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

// Ragged blocks of at least this many values run their whole vectors in place (Block).
inline constexpr int64_t kEwSplitBlock = 128;

// What one block's program reads and writes: its registers, inputs and output. A register whose instruction
// read only single values (constants, inputs that are one value in this block: a squeeze-and-excitation scale
// over its plane) holds that one value (`one`, `value`), not a block of copies of it.
struct Frame {
  const ir::EwProgram& prog;
  const EwOperand* in;
  float* out;
  float (*regs)[kEwBlock];
  bool* one;
  float* value;

  HWY_INLINE Src resolve(const ir::EwRef& r) const {
    switch (r.kind) {
      case ir::EwRef::Kind::Reg:
        return one[r.index] ? Src{nullptr, value[r.index], true} : Src{regs[r.index], 0.0f, false};
      case ir::EwRef::Kind::Const: return {nullptr, prog.consts[static_cast<size_t>(r.index)], true};
      case ir::EwRef::Kind::Input: {
        const EwOperand& o = in[r.index];
        return o.scalar ? Src{nullptr, o.p[0], true} : Src{o.p, 0.0f, false};
      }
    }
    return {nullptr, 0.0f, true};
  }
  // Where instruction i writes a block: the output for the program's last, else its register.
  float* dst(size_t i) const {
    if (i + 1 == prog.code.size()) return out;
    one[prog.code[i].dst] = false;
    return regs[prog.code[i].dst];
  }
};

// dst[0, n) = instruction `ins` over a (and b for a binary one).
inline void Compute(Isa isa, bool exact, const ir::EwInstr& ins, const Src& a, const Src& b, float* dst, int64_t n) {
  using ir::EwOp;
  switch (ins.op) {
    case EwOp::Add: Map2(a, b, dst, n, [](DF, VF x, VF y) { return hn::Add(x, y); }); break;
    case EwOp::Sub: Map2(a, b, dst, n, [](DF, VF x, VF y) { return hn::Sub(x, y); }); break;
    case EwOp::Mul: Map2(a, b, dst, n, [](DF, VF x, VF y) { return hn::Mul(x, y); }); break;
    case EwOp::Div: Map2(a, b, dst, n, [](DF, VF x, VF y) { return hn::Div(x, y); }); break;
    case EwOp::Max:  // NaN wins (the first operand's if both); equal operands give the second
      Map2(a, b, dst, n, [](DF, VF x, VF y) {
        const VF r = hn::IfThenElse(hn::Gt(x, y), x, y);
        return hn::IfThenElse(hn::IsNaN(x), x, hn::IfThenElse(hn::IsNaN(y), y, r));
      });
      break;
    case EwOp::Min:
      Map2(a, b, dst, n, [](DF, VF x, VF y) {
        const VF r = hn::IfThenElse(hn::Lt(x, y), x, y);
        return hn::IfThenElse(hn::IsNaN(x), x, hn::IfThenElse(hn::IsNaN(y), y, r));
      });
      break;
    case EwOp::Relu:  // x <= 0 (-0 included) gives +0; NaN passes through
      Map1(a, dst, n, [](DF d, VF x) { return VRelu(d, x); });
      break;
    case EwOp::LeakyRelu: {
      const float alpha = ins.p0;
      Map1(a, dst, n, [alpha](DF d, VF x) { return VLeakyRelu(d, x, hn::Set(d, alpha)); });
      break;
    }
    case EwOp::HardSigmoid: {
      const float alpha = ins.p0, beta = ins.p1;
      Map1(a, dst, n,
           [alpha, beta](DF d, VF x) { return Clamp01(d, hn::Add(hn::Mul(hn::Set(d, alpha), x), hn::Set(d, beta))); });
      break;
    }
    case EwOp::HardSwish: Map1(a, dst, n, [](DF d, VF x) { return VHardSwish(d, x); }); break;
    case EwOp::Clip: {
      const float lo = ins.p0, hi = ins.p1;
      Map1(a, dst, n, [lo, hi](DF d, VF x) { return VClip(x, hn::Set(d, lo), hn::Set(d, hi)); });
      break;
    }
    case EwOp::Sigmoid:
    case EwOp::Tanh:
    case EwOp::Gelu:
    case EwOp::Erf: {
      const float* src = a.p;
      if (a.scalar) {  // the kernels take arrays
        std::fill(dst, dst + n, a.s);
        src = dst;
      }
      // The functions the unfused operators run (ops/activations.cc, ops/array_unary.h), so the same bits.
      const auto fn = ins.op == EwOp::Sigmoid ? sigmoid_f32
                      : ins.op == EwOp::Tanh  ? tanh_f32
                      : ins.op == EwOp::Erf   ? erf_f32
                      : ins.p0 == 0.0f        ? gelu_erf_f32
                                              : gelu_tanh_f32;
      fn(isa, exact, src, dst, n);
      return;  // canonical already
    }
    case EwOp::Count: break;
  }
  if (exact) Map1(Src{dst, 0.0f, false}, dst, n, [](DF d, VF x) { return CanonicalNaN(d, x); });
}

// Instruction i over the block. When every operand is one value and the result goes to a register, it is
// computed on one vector and the register keeps the one value (no element depends on its position: the array
// functions give an element the same bits wherever it sits); a block of copies cost MobileNetV3's
// squeeze-and-excitation scale a HardSigmoid per element of each plane.
inline void RunOne(Isa isa, bool exact, const Frame& f, size_t i, int64_t n) {
  const ir::EwInstr& ins = f.prog.code[i];
  const Src a = f.resolve(ins.a);
  const Src b = ir::ew_is_binary(ins.op) ? f.resolve(ins.b) : Src{nullptr, 0.0f, true};
  if (a.scalar && b.scalar && i + 1 < f.prog.code.size()) {
    const DF d;
    HWY_ALIGN float v[hn::MaxLanes(d)];
    Compute(isa, exact, ins, a, b, v, static_cast<int64_t>(hn::Lanes(d)));
    f.one[ins.dst] = true;
    f.value[ins.dst] = v[0];
    return;
  }
  Compute(isa, exact, ins, a, b, f.dst(i), n);
}

// Fused steps (ew_plan). Only the step's result is stored, NaN canonicalised once in exact mode: every operation
// here gives NaN exactly when an operand is NaN, whatever its payload, so canonicalising between them changes
// nothing.
enum Tail { kNoTail, kRelu, kClip, kHardSwish, kLeakyRelu };

// lo, hi: Clip's bounds; lo is LeakyRelu's alpha.
template <int kTail>
HWY_INLINE VF ApplyTail(DF d, VF v, VF lo, VF hi) {
  if constexpr (kTail == kRelu) return VRelu(d, v);
  if constexpr (kTail == kClip) return VClip(v, lo, hi);
  if constexpr (kTail == kHardSwish) return VHardSwish(d, v);
  if constexpr (kTail == kLeakyRelu) return VLeakyRelu(d, v, lo);
  return v;
}

HWY_INLINE void StoreResult(bool exact, DF d, VF v, float* p) { hn::StoreU(exact ? CanonicalNaN(d, v) : v, d, p); }

// Each scalar instruction as v * m + a, both exact: Add s is (1, s), Sub s is (1, -s) (IEEE defines x - s as
// x + (-s)), Mul s is (s, -0) (-0 is the identity of addition, signed zeros included); Add and Mul commute
// bit for bit, so the operand order of the instruction does not matter.
template <int kOps, int kTail>
HWY_NOINLINE void ChainLoop(bool exact, const float* x, const float* m, const float* a, float lo, float hi, float* out,
                            int64_t n) {
  const DF d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  VF vm[3], va[3];
  for (int j = 0; j < kOps; ++j) {
    vm[j] = hn::Set(d, m[j]);
    va[j] = hn::Set(d, a[j]);
  }
  const VF vlo = hn::Set(d, lo), vhi = hn::Set(d, hi);
  for (int64_t k = 0; k < n; k += lanes) {
    VF v = hn::LoadU(d, x + k);
    for (int j = 0; j < kOps; ++j) v = hn::Add(hn::Mul(v, vm[j]), va[j]);
    StoreResult(exact, d, ApplyTail<kTail>(d, v, vlo, vhi), out + k);
  }
}

// One Add or Mul of x by a tensor run, then the tail.
template <bool kMul, int kTail>
HWY_NOINLINE void PairLoop(bool exact, const float* x, const float* y, float lo, float hi, float* out, int64_t n) {
  const DF d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const VF vlo = hn::Set(d, lo), vhi = hn::Set(d, hi);
  for (int64_t k = 0; k < n; k += lanes) {
    const VF vx = hn::LoadU(d, x + k), vy = hn::LoadU(d, y + k);
    StoreResult(exact, d, ApplyTail<kTail>(d, kMul ? hn::Mul(vx, vy) : hn::Add(vx, vy), vlo, vhi), out + k);
  }
}

template <bool kDiv>
HWY_NOINLINE void HardSwishLoop(bool exact, const float* x, float add, float lo, float hi, float last, float* out,
                                int64_t n) {
  const DF d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const VF vadd = hn::Set(d, add), vlo = hn::Set(d, lo), vhi = hn::Set(d, hi), vlast = hn::Set(d, last);
  for (int64_t k = 0; k < n; k += lanes) {
    const VF vx = hn::LoadU(d, x + k);
    const VF t = hn::Mul(vx, VClip(hn::Add(vx, vadd), vlo, vhi));
    StoreResult(exact, d, kDiv ? hn::Div(t, vlast) : hn::Mul(t, vlast), out + k);
  }
}

using ChainFn = void (*)(bool, const float*, const float*, const float*, float, float, float*, int64_t);
using PairFn = void (*)(bool, const float*, const float*, float, float, float*, int64_t);
inline constexpr ChainFn kChain[3][5] = {{&ChainLoop<1, kNoTail>, &ChainLoop<1, kRelu>, &ChainLoop<1, kClip>,
                                          &ChainLoop<1, kHardSwish>, &ChainLoop<1, kLeakyRelu>},
                                         {&ChainLoop<2, kNoTail>, &ChainLoop<2, kRelu>, &ChainLoop<2, kClip>,
                                          &ChainLoop<2, kHardSwish>, &ChainLoop<2, kLeakyRelu>},
                                         {&ChainLoop<3, kNoTail>, &ChainLoop<3, kRelu>, &ChainLoop<3, kClip>,
                                          &ChainLoop<3, kHardSwish>, &ChainLoop<3, kLeakyRelu>}};
inline constexpr PairFn kPair[2][5] = {{nullptr, &PairLoop<false, kRelu>, &PairLoop<false, kClip>,
                                        &PairLoop<false, kHardSwish>, &PairLoop<false, kLeakyRelu>},
                                       {nullptr, &PairLoop<true, kRelu>, &PairLoop<true, kClip>,
                                        &PairLoop<true, kHardSwish>, &PairLoop<true, kLeakyRelu>}};

// The tail of a chain ending at instruction t.
inline int TailOf(const ir::EwInstr& t) {
  switch (t.op) {
    case ir::EwOp::Relu: return kRelu;
    case ir::EwOp::Clip: return kClip;
    case ir::EwOp::LeakyRelu: return kLeakyRelu;
    default: return kHardSwish;
  }
}

// The operand of a fused instruction that is not the running value: ew_plan makes it a constant or an input,
// and the running value of every instruction after a step's first is the register its predecessor wrote.
inline const ir::EwRef& OtherOperand(const ir::EwInstr& ins, int x_operand) { return x_operand == 0 ? ins.b : ins.a; }
inline int RunningOperand(const ir::EwInstr& ins) { return ins.a.kind == ir::EwRef::Kind::Reg ? 0 : 1; }

// A Chain step. An operand that is a tensor run in this block (an input that may have been one value) splits
// it: the scalar instructions before it run as a chain into their register, an Add or Mul by the run followed
// by the tail runs as a pair, and whatever is left runs one instruction at a time.
inline void RunChain(Isa isa, bool exact, const Frame& f, EwStep st, int64_t n) {
  while (st.count > 1) {
    const ir::EwInstr& first = f.prog.code[st.first];
    const Src x = f.resolve(st.x_operand == 0 ? first.a : first.b);
    if (x.scalar) break;
    float m[3], a[3];
    int j = 0;
    const float* run = nullptr;  // the operand of instruction j when it is a tensor run
    for (; j < st.ops; ++j) {
      const ir::EwInstr& ins = f.prog.code[st.first + static_cast<size_t>(j)];
      const Src s = f.resolve(OtherOperand(ins, j == 0 ? st.x_operand : RunningOperand(ins)));
      if (!s.scalar) {
        run = s.p;
        break;
      }
      const bool mul = ins.op == ir::EwOp::Mul;
      m[j] = mul ? s.s : 1.0f;
      a[j] = mul ? -0.0f : (ins.op == ir::EwOp::Sub ? -s.s : s.s);
    }
    const bool whole = j == st.ops;
    const size_t end = whole ? st.first + size_t{st.count} : st.first + static_cast<size_t>(j);  // one past
    int tail = kNoTail;
    float lo = 0, hi = 0;
    if (whole && st.count > st.ops) {
      const ir::EwInstr& t = f.prog.code[end - 1];
      tail = TailOf(t);
      lo = t.p0;
      hi = t.p1;
    }
    if (j > 0) {
      kChain[j - 1][tail](exact, x.p, m, a, lo, hi, f.dst(end - 1), n);
      if (whole) return;
    } else if (st.ops == 1 && st.count == 2 && first.op != ir::EwOp::Sub) {
      const ir::EwInstr& t = f.prog.code[st.first + 1u];
      tail = TailOf(t);
      kPair[first.op == ir::EwOp::Mul][tail](exact, x.p, run, t.p0, t.p1, f.dst(st.first + 1u), n);
      return;
    } else {
      RunOne(isa, exact, f, st.first, n);
      j = 1;
    }
    st.first = static_cast<uint8_t>(st.first + j);
    st.count = static_cast<uint8_t>(st.count - j);
    st.ops = static_cast<uint8_t>(st.ops - j);
    st.x_operand = static_cast<uint8_t>(RunningOperand(f.prog.code[st.first]));
  }
  for (size_t i = st.first; i < size_t{st.first} + st.count; ++i) RunOne(isa, exact, f, i, n);
}

inline bool RunHardSwish(bool exact, const Frame& f, const EwStep& st, int64_t n) {
  const ir::EwInstr& add = f.prog.code[st.first];
  const ir::EwInstr& clip = f.prog.code[st.first + 1u];
  const ir::EwInstr& last = f.prog.code[st.first + 3u];
  const Src x = f.resolve(st.x_operand == 0 ? add.a : add.b);
  const Src s = f.resolve(st.x_operand == 0 ? add.b : add.a);
  const Src s2 = f.resolve(OtherOperand(last, RunningOperand(last)));
  if (x.scalar || !s.scalar || !s2.scalar) return false;
  (last.op == ir::EwOp::Div ? &HardSwishLoop<true> : &HardSwishLoop<false>)(exact, x.p, s.s, clip.p0, clip.p1, s2.s,
                                                                            f.dst(st.first + 3u), n);
  return true;
}

inline void Run(Isa isa, bool exact, const EwPlan& plan, const EwOperand* in, int64_t n, float* out) {
  HWY_ALIGN float regs[ir::kEwMaxRegs][kEwBlock];
  bool one[ir::kEwMaxRegs] = {};
  float value[ir::kEwMaxRegs];
  const Frame f{plan.prog, in, out, regs, one, value};
  for (const EwStep& st : plan.steps) {
    if (st.kind == EwStepKind::Chain) {
      RunChain(isa, exact, f, st, n);
      continue;
    }
    if (st.kind == EwStepKind::HardSwish && RunHardSwish(exact, f, st, n)) continue;
    for (size_t i = st.first; i < size_t{st.first} + st.count; ++i) RunOne(isa, exact, f, i, n);
  }
}

// A block whose length is not a whole number of vectors runs on padded copies of its inputs and output (the
// lanes past n compute on zeros and are dropped), so the loops need no tail code and never touch memory past n.
// A long one runs its whole vectors in place and only its last few values on the copies: a 14 x 14 plane (196
// values) had copied 196 values of each input and of the output for 4 values past 24 vectors. A short one is
// copied whole: a second pass through the program costs more than copying a few vectors (split at every
// length, the block kernel's share of PP-OCRv4 rec's time went 2.5% -> 3.3%, perf; 2.7% with kEwSplitBlock).
inline void Block(Isa isa, bool exact, const EwPlan& plan, const EwOperand* in, int64_t n, float* out) {
  const DF d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  if (n % lanes == 0) return Run(isa, exact, plan, in, n, out);
  const int64_t whole = n >= kEwSplitBlock ? n / lanes * lanes : 0;  // run in place
  if (whole > 0) Run(isa, exact, plan, in, whole, out);
  const int64_t rest = n - whole, padded = (rest + lanes - 1) / lanes * lanes;
  HWY_ALIGN float buf[ir::kEwMaxInputs + 1][kEwSplitBlock];
  EwOperand local[ir::kEwMaxInputs];
  for (int i = 0; i < plan.prog.inputs; ++i) {
    local[i] = in[i];
    if (in[i].scalar) continue;
    hn::Store(hn::Zero(d), d, buf[i] + padded - lanes);  // the lanes past n compute on zeros
    std::copy(in[i].p + whole, in[i].p + n, buf[i]);
    local[i].p = buf[i];
  }
  float* o = buf[ir::kEwMaxInputs];
  Run(isa, exact, plan, local, padded, o);
  std::copy(o, o + rest, out + whole);
}

}  // namespace ew_detail

inline constexpr EwFns kEwFns{&ew_detail::Block};

}  // namespace onemodel::kern::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif
