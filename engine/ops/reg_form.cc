#include "ops/reg_form.h"

namespace onemodel::rt {
namespace {

using Kind = ir::EwRef::Kind;

bool same(const ir::EwRef& x, const ir::EwRef& y) { return x.kind == y.kind && x.index == y.index; }

struct Matcher {
  const ir::EwProgram& p;
  std::span<const RegInput> in;

  // The description of operand x when it is a program input, else null.
  const RegInput* input(const ir::EwRef& x) const {
    if (x.kind != Kind::Input || x.index < 1 || static_cast<size_t>(x.index) >= in.size()) return nullptr;
    return &in[static_cast<size_t>(x.index)];
  }
  // One value for every output: a constant, or an input of one element.
  std::optional<float> uniform(const ir::EwRef& x) const {
    if (x.kind == Kind::Const) return p.consts[static_cast<size_t>(x.index)];
    const RegInput* v = input(x);
    if (!v || v->kind != RegInput::Kind::Value) return std::nullopt;
    return v->value;
  }
  const float* per(const ir::EwRef& x, RegInput::Kind k) const {
    const RegInput* v = input(x);
    return v && v->kind == k ? v->p : nullptr;
  }

  // Hard-swish as four steps at code[i], reading `cur`: Add(cur, add), Clip, Mul(cur, clip), then Div or Mul by a
  // value (x * clip(x + 3, 0, 6) / 6 as PP-OCR's exports write it). Fills the tail of `r`; false otherwise.
  bool hardswish_steps(size_t i, const ir::EwRef& cur, kern::RegEpilogue& r) const {
    if (i + 4 > p.code.size()) return false;
    auto reg = [](const ir::EwInstr& x) { return ir::EwRef{Kind::Reg, x.dst}; };
    const ir::EwInstr &add = p.code[i], &clip = p.code[i + 1], &mul = p.code[i + 2], &last = p.code[i + 3];
    if (add.op != ir::EwOp::Add || clip.op != ir::EwOp::Clip || mul.op != ir::EwOp::Mul) return false;
    const bool cur_a = same(add.a, cur);
    if (!cur_a && !same(add.b, cur)) return false;
    const auto c = uniform(cur_a ? add.b : add.a);
    if (!c || !same(clip.a, reg(add))) return false;
    if (!((same(mul.a, cur) && same(mul.b, reg(clip))) || (same(mul.b, cur) && same(mul.a, reg(clip))))) return false;
    std::optional<float> l;
    if (last.op == ir::EwOp::Div && same(last.a, reg(mul))) l = uniform(last.b);
    if (last.op == ir::EwOp::Mul && (same(last.a, reg(mul)) || same(last.b, reg(mul))))
      l = uniform(same(last.a, reg(mul)) ? last.b : last.a);
    if (!l) return false;
    r.tail = kern::RegTail::HardSwishSteps;
    r.hs_add = *c;
    r.lo = clip.p0;
    r.hi = clip.p1;
    r.hs_div = last.op == ir::EwOp::Div;
    r.hs_last = *l;
    return true;
  }

  // Instruction `x` as a step by one value on the running value `cur` (kern::RegScalarStep): a Mul, Add or Sub as
  // ChainLoop encodes them (Mul s: (s, -0); Add s: (1, s); Sub s: (1, -s); s - v is not one), a Max or Min in
  // either operand order.
  std::optional<kern::RegScalarStep> scalar_step(const ir::EwInstr& x, const ir::EwRef& cur) const {
    using ir::EwOp;
    const bool cur_a = same(x.a, cur);
    if (!cur_a && !same(x.b, cur)) return std::nullopt;
    const auto v = uniform(cur_a ? x.b : x.a);
    if (!v) return std::nullopt;
    kern::RegScalarStep s;
    switch (x.op) {
      case EwOp::Mul: s.m = *v; break;
      case EwOp::Add: s.a = *v; break;
      case EwOp::Sub:
        if (!cur_a) return std::nullopt;
        s.a = -*v;
        break;
      case EwOp::Max:
      case EwOp::Min:
        s.op = x.op == EwOp::Max ? kern::RegStepOp::Max : kern::RegStepOp::Min;
        s.value_first = !cur_a;
        s.a = *v;
        break;
      default: return std::nullopt;
    }
    return s;
  }
};

kern::RegTail tail_of(const ir::EwInstr& t) {
  switch (t.op) {
    case ir::EwOp::Relu: return kern::RegTail::Relu;
    case ir::EwOp::Clip: return kern::RegTail::Clip;
    case ir::EwOp::LeakyRelu: return kern::RegTail::LeakyRelu;
    case ir::EwOp::HardSwish: return kern::RegTail::HardSwish;
    case ir::EwOp::Gelu: return t.p0 == 0.0f ? kern::RegTail::GeluErf : kern::RegTail::GeluTanh;
    default: return kern::RegTail::None;
  }
}

}  // namespace

// The operand order of the residual's Add is the one the element-wise steps use (ew_program-inl.h RunChain): an
// Add after an earlier instruction and followed by a tail runs as a pair, the running value first; otherwise as
// written.
std::optional<kern::RegEpilogue> register_form(const ir::EwProgram& p, std::span<const RegInput> in, const float* bias,
                                               bool exact, int64_t& res_n) {
  const Matcher mt{p, in};
  kern::RegEpilogue r;
  r.bias = bias;
  ir::EwRef cur{Kind::Input, 0};
  size_t i = 0;
  // A bias the program adds first (a convolution's bias as its program's last input, a MatMul's bias row), the
  // product first as written.
  if (!r.bias && !p.code.empty() && p.code[0].op == ir::EwOp::Add && same(p.code[0].a, cur)) {
    r.bias = mt.per(p.code[0].b, RegInput::Kind::PerRow);
    r.col_bias = r.bias ? nullptr : mt.per(p.code[0].b, RegInput::Kind::PerCol);
    if (r.bias || r.col_bias) {
      cur = {Kind::Reg, p.code[0].dst};
      i = 1;
    }
  }
  // A batch normalisation's Mul by a and Add of b, one value per row (passes/batchnorm_affine.cc), the running
  // value first as that pass writes them.
  for (const bool mul : {true, false}) {
    if (i >= p.code.size() || p.code[i].op != (mul ? ir::EwOp::Mul : ir::EwOp::Add) || !same(p.code[i].a, cur) ||
        (!mul && !r.scale))
      break;
    const float* v = mt.per(p.code[i].b, RegInput::Kind::PerRow);
    if (!v) break;
    (mul ? r.scale : r.shift) = v;
    cur = {Kind::Reg, p.code[i].dst};
    ++i;
  }
  // Steps by one value before the tail (PP-LCNetV3's learnable affine x * s + b in exact mode, where
  // conv-affine-fold does not take it), stopping where hard-swish's four steps begin.
  while (r.pres < kern::kRegScalarSteps && i < p.code.size()) {
    kern::RegEpilogue probe = r;
    if (mt.hardswish_steps(i, cur, probe)) break;
    const auto step = mt.scalar_step(p.code[i], cur);
    if (!step) break;
    r.pre[r.pres++] = *step;
    cur = {Kind::Reg, p.code[i].dst};
    ++i;
  }
  const size_t add_at = i;
  bool res_is_a = false;
  if (mt.hardswish_steps(i, cur, r)) {
    cur = {Kind::Reg, p.code[i + 3].dst};
    i += 4;
  } else {
    // After a scale only in exact mode: the operand order below is the one the steps use right after the bias,
    // and only a NaN's payload (canonical in exact mode) depends on it (PP-LCNet's BatchNormalization then
    // residual in exact mode).
    if ((!r.scale || exact) && r.pres == 0 && i < p.code.size() && p.code[i].op == ir::EwOp::Add) {
      const ir::EwInstr& add = p.code[i];
      res_is_a = same(add.b, cur);
      const RegInput* x = same(res_is_a ? add.b : add.a, cur) ? mt.input(res_is_a ? add.a : add.b) : nullptr;
      if (x && x->kind == RegInput::Kind::Tile) {
        r.res = x->p;
        r.res_ld = x->ld;
        res_n = x->n_stride;
        cur = {Kind::Reg, add.dst};
        ++i;
      }
    }
    if (i < p.code.size() && same(p.code[i].a, cur) && tail_of(p.code[i]) != kern::RegTail::None) {
      const ir::EwInstr& t = p.code[i];
      r.tail = tail_of(t);
      r.lo = t.p0;
      r.hi = t.p1;
      cur = {Kind::Reg, t.dst};
      ++i;
    }
  }
  // Steps by one value after the tail (not after Gelu, which the microkernel applies to the stored tile).
  while (!r.res && !kern::gelu_tail(r.tail) && r.posts < kern::kRegScalarSteps && i < p.code.size()) {
    const auto step = mt.scalar_step(p.code[i], cur);
    if (!step) break;
    r.post[r.posts++] = *step;
    cur = {Kind::Reg, p.code[i].dst};
    ++i;
  }
  if (i != p.code.size() || (i == 0 && !r.bias)) return std::nullopt;
  r.res_first = r.res && res_is_a && !(add_at > 0 && r.tail != kern::RegTail::None);
  return r;
}

}  // namespace onemodel::rt
