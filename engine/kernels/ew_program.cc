// Dispatch for kernels/ew_program.h: the Highway per-target pass, then the one entry point.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/ew_program.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/ew_program-inl.h"

#if HWY_ONCE
#include "kernels/per_target.h"

namespace onemodel::kern {

namespace {

using ir::EwOp;
using ir::EwRef;

bool is_reg(const EwRef& r, int reg) { return r.kind == EwRef::Kind::Reg && r.index == reg; }
bool same_ref(const EwRef& x, const EwRef& y) { return x.kind == y.kind && x.index == y.index; }
// A constant or an input: a scalar if the input is one value in the block (known only when it runs).
bool maybe_scalar(const EwRef& r) { return r.kind != EwRef::Kind::Reg; }

// Whether the value instruction i reads from register `reg` is needed by nothing after i.
bool dead_after(const ir::EwProgram& p, int reg, size_t i) {
  if (i + 1 < p.code.size() && p.code[i].dst == reg) return true;  // i overwrites it
  for (size_t j = i + 1; j < p.code.size(); ++j) {
    const ir::EwInstr& in = p.code[j];
    if (is_reg(in.a, reg) || (ir::ew_is_binary(in.op) && is_reg(in.b, reg))) return false;
    if (in.dst == reg && j + 1 < p.code.size()) return true;
  }
  return true;
}

// Which operand of a scalar Add/Sub/Mul is the running value (0: a, 1: b), or -1.
int running_operand(const ir::EwInstr& in) {
  if (in.op == EwOp::Sub) return maybe_scalar(in.b) ? 0 : -1;
  if (in.op != EwOp::Add && in.op != EwOp::Mul) return -1;
  if (in.a.kind == EwRef::Kind::Const) return 1;
  if (maybe_scalar(in.b)) return 0;
  if (maybe_scalar(in.a)) return 1;
  return -1;
}

// The next instruction j continues a chain whose running value is register `prev`.
bool continues(const ir::EwProgram& p, size_t j, int prev) {
  if (j >= p.code.size() || !dead_after(p, prev, j)) return false;
  const ir::EwInstr& in = p.code[j];
  if (in.op == EwOp::Sub) return is_reg(in.a, prev) && maybe_scalar(in.b);
  if (in.op == EwOp::Add || in.op == EwOp::Mul)
    return (is_reg(in.a, prev) && maybe_scalar(in.b)) || (is_reg(in.b, prev) && maybe_scalar(in.a));
  return false;
}

bool is_tail(const ir::EwProgram& p, size_t j, int prev) {
  if (j >= p.code.size() || !dead_after(p, prev, j)) return false;
  const ir::EwInstr& in = p.code[j];
  return (in.op == EwOp::Relu || in.op == EwOp::Clip || in.op == EwOp::HardSwish || in.op == EwOp::LeakyRelu) &&
         is_reg(in.a, prev);
}

// x + s, clip, x * that, / s' or * s', the intermediate registers dead and x not overwritten in between.
bool hard_swish_at(const ir::EwProgram& p, size_t i, EwStep& st) {
  if (i + 3 >= p.code.size()) return false;
  const ir::EwInstr &add = p.code[i], &clip = p.code[i + 1], &mul = p.code[i + 2], &last = p.code[i + 3];
  if (add.op != EwOp::Add || clip.op != EwOp::Clip || mul.op != EwOp::Mul ||
      (last.op != EwOp::Div && last.op != EwOp::Mul))
    return false;
  const int xo = running_operand(add);
  if (xo < 0) return false;
  const EwRef& x = xo == 0 ? add.a : add.b;
  if (x.kind == EwRef::Kind::Reg && (add.dst == x.index || clip.dst == x.index)) return false;
  if (!is_reg(clip.a, add.dst) || !dead_after(p, add.dst, i + 1)) return false;
  const bool mul_ok =
      (same_ref(mul.a, x) && is_reg(mul.b, clip.dst)) || (same_ref(mul.b, x) && is_reg(mul.a, clip.dst));
  if (!mul_ok || !dead_after(p, clip.dst, i + 2)) return false;
  const bool last_ok = (is_reg(last.a, mul.dst) && maybe_scalar(last.b)) ||
                       (last.op == EwOp::Mul && is_reg(last.b, mul.dst) && maybe_scalar(last.a));
  if (!last_ok || !dead_after(p, mul.dst, i + 3)) return false;
  st = EwStep{EwStepKind::HardSwish, static_cast<uint8_t>(i), 4, 0, static_cast<uint8_t>(xo)};
  return true;
}

// Up to three scalar Add/Sub/Mul and an optional Relu, Clip, HardSwish or LeakyRelu; at least two instructions.
bool chain_at(const ir::EwProgram& p, size_t i, EwStep& st) {
  const int xo = running_operand(p.code[i]);
  if (xo < 0) return false;
  size_t j = i + 1;
  int prev = p.code[i].dst;
  while (j - i < 3 && continues(p, j, prev)) prev = p.code[j++].dst;
  const auto ops = static_cast<uint8_t>(j - i);
  if (is_tail(p, j, prev)) ++j;
  if (j - i < 2) return false;
  st = EwStep{EwStepKind::Chain, static_cast<uint8_t>(i), static_cast<uint8_t>(j - i), ops, static_cast<uint8_t>(xo)};
  return true;
}

bool reads_input(const ir::EwInstr& in, int input) {
  auto is = [input](const EwRef& r) { return r.kind == EwRef::Kind::Input && r.index == input; };
  return is(in.a) || (ir::ew_is_binary(in.op) && is(in.b));
}

EwPlan steps_of(ir::EwProgram prog) {
  EwPlan plan;
  plan.prog = std::move(prog);
  const ir::EwProgram& p = plan.prog;
  for (size_t i = 0; i < p.code.size();) {
    EwStep st{EwStepKind::One, static_cast<uint8_t>(i), 1, 0, 0};
    if (!hard_swish_at(p, i, st)) chain_at(p, i, st);
    plan.steps.push_back(st);
    i += st.count;
  }
  return plan;
}

// EwPlan's scale_* fields: a last Mul of an input x by a register the instruction before it wrote, or by
// another input, x read by nothing else.
void split_scale(EwPlan& plan) {
  const ir::EwProgram& p = plan.prog;
  if (p.code.empty() || p.code.back().op != EwOp::Mul) return;
  const ir::EwInstr& mul = p.code.back();
  for (int xo = 0; xo < 2; ++xo) {
    const EwRef& x = xo == 0 ? mul.a : mul.b;
    const EwRef& v = xo == 0 ? mul.b : mul.a;
    if (x.kind != EwRef::Kind::Input || same_ref(x, v)) continue;
    bool alone = true;
    for (size_t i = 0; i + 1 < p.code.size(); ++i) alone = alone && !reads_input(p.code[i], x.index);
    if (!alone) continue;
    if (v.kind == EwRef::Kind::Input && p.code.size() == 1) {
      plan.scale_value_input = v.index;
    } else if (v.kind == EwRef::Kind::Reg && p.code.size() > 1 && p.code[p.code.size() - 2].dst == v.index) {
      ir::EwProgram prefix = p;
      prefix.code.pop_back();
      plan.scale_prefix = std::make_shared<const EwPlan>(steps_of(std::move(prefix)));
    } else {
      continue;
    }
    plan.scale_input = x.index;
    plan.scale_first = xo == 1;
    return;
  }
}

}  // namespace

EwPlan ew_plan(ir::EwProgram prog) {
  EwPlan plan = steps_of(std::move(prog));
  split_scale(plan);
  return plan;
}

void ew_block(Isa isa, bool exact, const EwPlan& plan, const EwOperand* in, int64_t n, float* out) {
  ONEMODEL_PER_TARGET(kEwFns, isa)->block(isa, exact, plan, in, n, out);
}

}  // namespace onemodel::kern
#endif
