// The fused element-wise block kernel (kernels/ew_program.h) on every target this machine runs, against the
// scalar formulas the unfused operators use (ops/elementwise_common.h): every lane must be the operator's
// bits (exact mode: NaN canonical; fast mode: NaN stays NaN), for every operand pattern (register, tensor
// run, repeated value, constant), ragged lengths and special values, and nothing past n may be touched.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "kernels/ew_program.h"
#include "kernels/isa.h"
#include "kernels/transcendental.h"
#include "ops/elementwise_common.h"

namespace onemodel::kern {
namespace {

using ir::EwOp;
using ir::EwRef;
namespace ew = rt::ew;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> values(size_t n, uint32_t seed) {
  const float specials[] = {kNaN, kInf, -kInf, 0.f, -0.f,  1e-40f, -1e-40f, std::bit_cast<float>(0xFFC12345u),
                            -3.f, 3.f,  6.f,   1.f, -0.5f, 0.75f,  -2.5f,   2.5f};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-8.f, 8.f);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = (i % 3 == 1) ? specials[(i / 3 + seed) % 16] : u(rng);
  return v;
}

void expect_same(float got, float want, bool exact, const std::string& where) {
  if (std::isnan(want)) {
    ASSERT_TRUE(std::isnan(got)) << where;
    if (exact) {
      ASSERT_EQ(std::bit_cast<uint32_t>(got), 0x7FC00000u) << where;
    }
    return;
  }
  ASSERT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(want)) << where << " got " << got << " want " << want;
}

// The scalar formula of each operation (what the unfused operator computes per element).
float reference(EwOp op, float a, float b, float p0, float p1) {
  switch (op) {
    case EwOp::Add: return a + b;
    case EwOp::Sub: return a - b;
    case EwOp::Mul: return a * b;
    case EwOp::Div: return a / b;
    case EwOp::Max: return ew::nan_max(a, b);
    case EwOp::Min: return ew::nan_min(a, b);
    case EwOp::Relu: return ew::relu_value(a);
    case EwOp::LeakyRelu: return ew::leaky_relu_value(a, p0);
    case EwOp::HardSigmoid: return ew::hard_sigmoid_value(a, p0, p1);
    case EwOp::HardSwish: return ew::hard_swish_value(a);
    case EwOp::Clip: return ew::clip_value(a, p0, p1);
    default: return 0;
  }
}

TEST(KernelEwProgram, EveryOperationAndOperandPatternMatchesTheOperatorFormula) {
  const EwOp ops[] = {EwOp::Add,  EwOp::Sub,       EwOp::Mul,         EwOp::Div,       EwOp::Max, EwOp::Min,
                      EwOp::Relu, EwOp::LeakyRelu, EwOp::HardSigmoid, EwOp::HardSwish, EwOp::Clip};
  for (Isa isa : available_isas())
    for (bool exact : {false, true})
      for (EwOp op : ops)
        for (int pattern = 0; pattern < 4; ++pattern)  // b: run, repeated value, constant; a repeated
          for (int64_t n : {1, 3, 8, 15, 16, 17, 31, 64, 70, 255, 256}) {
            const std::string where = std::string(isa_name(isa)) + " " + ir::ew_name(op) +
                                      " exact=" + std::to_string(exact) + " pattern=" + std::to_string(pattern) +
                                      " n=" + std::to_string(n);
            std::vector<float> a = values(static_cast<size_t>(n), 1 + static_cast<uint32_t>(n));
            std::vector<float> b = values(static_cast<size_t>(n), 7 + static_cast<uint32_t>(n));
            const float bs = b[1 % b.size()], as = a[4 % a.size()];
            ir::EwProgram prog;
            prog.consts = {bs};
            ir::EwInstr in;
            in.op = op;
            in.a = EwRef{EwRef::Kind::Input, 0};
            in.b = pattern == 2 ? EwRef{EwRef::Kind::Const, 0} : EwRef{EwRef::Kind::Input, 1};
            in.p0 = op == EwOp::Clip ? -2.5f : 0.3f;
            in.p1 = op == EwOp::Clip ? 2.5f : 0.4f;
            prog.code = {in};
            prog.regs = 1;
            prog.inputs = 2;
            const EwOperand operands[2] = {{pattern == 3 ? &as : a.data(), pattern == 3},
                                           {pattern == 1 ? &bs : b.data(), pattern == 1}};
            std::vector<float> out(static_cast<size_t>(n) + 1, 4321.f);
            ew_block(isa, exact, ew_plan(prog), operands, n, out.data());
            ASSERT_EQ(out.back(), 4321.f) << where;
            for (int64_t k = 0; k < n; ++k) {
              const float x = pattern == 3 ? as : a[static_cast<size_t>(k)];
              const float y = pattern == 0 || pattern == 3 ? b[static_cast<size_t>(k)] : bs;
              expect_same(out[static_cast<size_t>(k)], reference(op, x, y, in.p0, in.p1), exact,
                          where + " k=" + std::to_string(k));
            }
          }
}

ir::EwInstr instr(EwOp op, int dst, EwRef a, EwRef b = {}, float p0 = 0, float p1 = 0) {
  ir::EwInstr i;
  i.op = op;
  i.dst = dst;
  i.a = a;
  i.b = b;
  i.p0 = p0;
  i.p1 = p1;
  return i;
}

// x * clip(x + 3, 0, 6) / 6 as the pass lowers it, registers reused, written over its own input (a Conv
// epilogue works in place), then Sigmoid, Tanh and Erf, which run on the transcendental kernels.
TEST(KernelEwProgram, ProgramsReuseRegistersAndRunInPlace) {
  ir::EwProgram prog;
  prog.consts = {3.f, 6.f};
  const EwRef x{EwRef::Kind::Input, 0}, r0{EwRef::Kind::Reg, 0}, r1{EwRef::Kind::Reg, 1};
  prog.code = {instr(EwOp::Add, 0, x, {EwRef::Kind::Const, 0}), instr(EwOp::Clip, 0, r0, {}, 0.f, 6.f),
               instr(EwOp::Mul, 1, x, r0), instr(EwOp::Div, 0, r1, {EwRef::Kind::Const, 1})};
  prog.regs = 2;
  prog.inputs = 1;
  ir::EwProgram trans;
  trans.code = {instr(EwOp::Sigmoid, 0, x), instr(EwOp::Tanh, 0, r0), instr(EwOp::Erf, 0, r0)};
  trans.regs = 1;
  trans.inputs = 1;
  for (Isa isa : available_isas())
    for (bool exact : {false, true})
      for (int64_t n : {5, 64, 77, 256}) {
        const std::string where =
            std::string(isa_name(isa)) + " exact=" + std::to_string(exact) + " n=" + std::to_string(n);
        const std::vector<float> x0 = values(static_cast<size_t>(n), 3);
        std::vector<float> y = x0;
        const EwOperand in{y.data(), false};
        ew_block(isa, exact, ew_plan(prog), &in, n, y.data());
        for (int64_t k = 0; k < n; ++k) {
          const float v = x0[static_cast<size_t>(k)];
          const float want = (v * ew::clip_value(v + 3.f, 0.f, 6.f)) / 6.f;
          expect_same(y[static_cast<size_t>(k)], exact ? kern::canon(want) : want, exact,
                      where + " k=" + std::to_string(k));
        }
        std::vector<float> s(static_cast<size_t>(n)), want(static_cast<size_t>(n)), got(static_cast<size_t>(n));
        std::vector<float> t(static_cast<size_t>(n));
        sigmoid_f32(isa, exact, x0.data(), s.data(), n);
        tanh_f32(isa, exact, s.data(), t.data(), n);
        erf_f32(isa, exact, t.data(), want.data(), n);
        const EwOperand tin{x0.data(), false};
        ew_block(isa, exact, ew_plan(trans), &tin, n, got.data());
        for (int64_t k = 0; k < n; ++k)
          expect_same(got[static_cast<size_t>(k)], want[static_cast<size_t>(k)], exact, where + " transcendental");
      }
}

// A squeeze-and-excitation scale as the fusion writes it (HardSigmoid, or Sigmoid, of a per-channel value, times
// the plane): the instructions on the one value run once and their register holds one value, which the Mul
// by the plane then reads; a register holding one value and then written as a block (r0 below) must read as the
// block. Lengths with and without a ragged end, every target, both modes.
TEST(KernelEwProgram, InstructionsOnOneValueGiveTheBitsOfTheBlock) {
  const EwRef s{EwRef::Kind::Input, 0}, plane{EwRef::Kind::Input, 1}, r0{EwRef::Kind::Reg, 0}, r1{EwRef::Kind::Reg, 1};
  for (bool sigmoid : {false, true}) {
    ir::EwProgram p;
    p.code = {sigmoid ? instr(EwOp::Sigmoid, 0, s) : instr(EwOp::HardSigmoid, 0, s, {}, 1.f / 6, 0.5f),
              instr(EwOp::Mul, 1, plane, r0), instr(EwOp::Add, 0, r1, {EwRef::Kind::Const, 0}),
              instr(EwOp::Mul, 0, r0, r1)};
    p.consts = {0.25f};
    p.regs = 2;
    p.inputs = 2;
    const EwPlan plan = ew_plan(p);
    for (Isa isa : available_isas())
      for (bool exact : {false, true})
        for (float one : {0.7f, -3.5f, kNaN, kInf})
          for (int64_t n : {5, 77, 196, 256}) {
            const std::string where = std::string(isa_name(isa)) + " sigmoid=" + std::to_string(sigmoid) +
                                      " exact=" + std::to_string(exact) + " one=" + std::to_string(one) +
                                      " n=" + std::to_string(n);
            const std::vector<float> x = values(static_cast<size_t>(n), 17);
            std::vector<float> ones(static_cast<size_t>(n), one), gate(static_cast<size_t>(n));
            if (sigmoid)
              sigmoid_f32(isa, exact, ones.data(), gate.data(), n);  // the operator over a whole plane
            else
              for (size_t k = 0; k < gate.size(); ++k) gate[k] = ew::hard_sigmoid_value(one, 1.f / 6, 0.5f);
            const EwOperand in[2] = {{&one, true}, {x.data(), false}};
            std::vector<float> got(static_cast<size_t>(n) + 1, 4321.f);
            ew_block(isa, exact, plan, in, n, got.data());
            ASSERT_EQ(got.back(), 4321.f) << where;
            for (int64_t k = 0; k < n; ++k) {
              const auto i = static_cast<size_t>(k);
              auto c = [&](float v) { return exact ? kern::canon(v) : v; };
              const float g = c(gate[i]), m = c(x[i] * g), a = c(m + 0.25f), want = c(a * m);
              expect_same(got[i], want, exact, where + " k=" + std::to_string(k));
            }
          }
  }
}

// The program one instruction at a time with the operators' scalar formulas, NaN canonical after each in exact
// mode: what the unfused operators compute.
std::vector<float> reference_program(const ir::EwProgram& p, const std::vector<std::vector<float>>& in,
                                     const std::vector<bool>& scalar, int64_t n, bool exact) {
  std::vector<float> out(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    float regs[ir::kEwMaxRegs] = {};
    auto get = [&](const EwRef& r) {
      const auto i = static_cast<size_t>(r.index);
      if (r.kind == EwRef::Kind::Reg) return regs[i];
      if (r.kind == EwRef::Kind::Const) return p.consts[i];
      return in[i][scalar[i] ? 0 : static_cast<size_t>(k)];
    };
    float v = 0;
    for (const ir::EwInstr& ins : p.code) {
      v = reference(ins.op, get(ins.a), ir::ew_is_binary(ins.op) ? get(ins.b) : 0.f, ins.p0, ins.p1);
      if (exact) v = kern::canon(v);
      regs[ins.dst] = v;
    }
    out[static_cast<size_t>(k)] = v;
  }
  return out;
}

ir::EwProgram program(std::vector<ir::EwInstr> code, int regs, int inputs, std::vector<float> consts = {}) {
  ir::EwProgram p;
  p.code = std::move(code);
  p.regs = regs;
  p.inputs = inputs;
  p.consts = std::move(consts);
  return p;
}

size_t fused_steps(const EwPlan& plan) {
  size_t f = 0;
  for (const EwStep& s : plan.steps) f += s.kind != EwStepKind::One;
  return f;
}

// The runs models repeat are planned as fused steps: PP-OCR's bias, affine, decomposed hard-swish and affine
// (a Conv epilogue), the residual Add + Relu, and a register read again later, which must keep its value.
TEST(KernelEwProgram, PlansFuseTheRunsModelsRepeat) {
  const EwRef x{EwRef::Kind::Input, 0}, bias{EwRef::Kind::Input, 1}, r0{EwRef::Kind::Reg, 0}, r1{EwRef::Kind::Reg, 1};
  auto c = [](int i) { return EwRef{EwRef::Kind::Const, i}; };
  const ir::EwProgram ocr =
      program({instr(EwOp::Add, 0, x, bias), instr(EwOp::Mul, 0, c(0), r0), instr(EwOp::Add, 0, r0, c(1)),
               instr(EwOp::Add, 1, r0, c(2)), instr(EwOp::Clip, 1, r1, {}, 0.f, 6.f), instr(EwOp::Mul, 1, r0, r1),
               instr(EwOp::Div, 1, r1, c(3)), instr(EwOp::Mul, 1, c(4), r1), instr(EwOp::Add, 1, r1, c(5))},
              2, 2, {1.1f, 0.2f, 3.f, 6.f, 0.9f, 0.1f});
  const EwPlan p = ew_plan(ocr);
  ASSERT_EQ(p.steps.size(), 3u);
  EXPECT_EQ(p.steps[0].kind, EwStepKind::Chain);
  EXPECT_EQ(p.steps[0].count, 3);
  EXPECT_EQ(p.steps[1].kind, EwStepKind::HardSwish);
  EXPECT_EQ(p.steps[2].kind, EwStepKind::Chain);
  EXPECT_EQ(p.steps[2].count, 2);

  const EwPlan q = ew_plan(program(
      {instr(EwOp::Add, 0, x, bias), instr(EwOp::Add, 0, r0, {EwRef::Kind::Input, 2}), instr(EwOp::Relu, 0, r0)}, 1,
      3));
  ASSERT_EQ(q.steps.size(), 1u);
  EXPECT_EQ(q.steps[0].kind, EwStepKind::Chain);
  EXPECT_EQ(q.steps[0].count, 3);

  // r0 = x + 1 is read by the last instruction: the first two may not fuse.
  const ir::EwProgram live =
      program({instr(EwOp::Add, 0, x, c(0)), instr(EwOp::Mul, 1, r0, c(0)), instr(EwOp::Max, 0, r1, r0)}, 2, 1, {1.f});
  EXPECT_EQ(fused_steps(ew_plan(live)), 0u);
}

// A program ending in a Mul of an input read nowhere else, by the instruction before it or another input, is
// split for rows of one factor (ops/ew_program.cc); any other is not.
TEST(KernelEwProgram, PlansSplitAScaleByOneValuePerRow) {
  const EwRef in0{EwRef::Kind::Input, 0}, in1{EwRef::Kind::Input, 1}, r0{EwRef::Kind::Reg, 0};
  const EwPlan gate =
      ew_plan(program({instr(EwOp::HardSigmoid, 0, in0, {}, 1.f / 6, 0.5f), instr(EwOp::Mul, 1, in1, r0)}, 2, 2));
  EXPECT_EQ(gate.scale_input, 1);
  EXPECT_FALSE(gate.scale_first);
  EXPECT_EQ(gate.scale_value_input, -1);
  ASSERT_TRUE(gate.scale_prefix);
  EXPECT_EQ(gate.scale_prefix->prog.code.size(), 1u);
  EXPECT_EQ(gate.scale_prefix->prog.code[0].op, EwOp::HardSigmoid);
  const EwPlan reversed = ew_plan(program({instr(EwOp::Sigmoid, 0, in1), instr(EwOp::Mul, 0, r0, in0)}, 1, 2));
  EXPECT_EQ(reversed.scale_input, 0);
  EXPECT_TRUE(reversed.scale_first);
  const EwPlan plain = ew_plan(program({instr(EwOp::Mul, 0, in0, in1)}, 1, 2));
  EXPECT_EQ(plain.scale_input, 0);
  EXPECT_EQ(plain.scale_value_input, 1);
  EXPECT_FALSE(plain.scale_prefix);
  // The scaled input also read before the Mul; the factor not the last result before it; not a Mul; a square.
  for (const ir::EwProgram& p :
       {program({instr(EwOp::Add, 0, in0, in1), instr(EwOp::Mul, 0, in1, r0)}, 1, 2),
        program({instr(EwOp::Relu, 0, in0), instr(EwOp::Relu, 1, in0), instr(EwOp::Mul, 1, in1, r0)}, 2, 2),
        program({instr(EwOp::Relu, 0, in0), instr(EwOp::Add, 1, in1, r0)}, 2, 2),
        program({instr(EwOp::Mul, 0, in1, in1)}, 1, 2)}) {
    const EwPlan q = ew_plan(p);
    EXPECT_EQ(q.scale_input, -1);
    EXPECT_FALSE(q.scale_prefix);
  }
}

// Random programs biased towards fusable runs (chains by constants and inputs that are one value or a tensor
// run only when the block runs, tails, decomposed hard-swish, registers reused and read again), on every
// target and both modes, against the instruction-at-a-time reference.
TEST(KernelEwProgram, FusedStepsGiveTheBitsOfTheInstructions) {
  std::mt19937 rng(20261201);
  auto pick = [&](int k) { return static_cast<int>(rng() % static_cast<uint32_t>(k)); };
  size_t fused = 0, programs = 0;
  for (int trial = 0; trial < 300; ++trial) {
    ir::EwProgram p;
    p.consts = {3.f, 6.f, 0.5f, -0.f, 1.25f, -2.f, 0.f};
    p.inputs = 3;
    std::vector<int> written;
    int last = -1;
    auto any_ref = [&]() -> EwRef {
      if (!written.empty() && pick(3) == 0)
        return EwRef{EwRef::Kind::Reg, written[static_cast<size_t>(pick(static_cast<int>(written.size())))]};
      return EwRef{EwRef::Kind::Input, pick(3)};
    };
    auto running = [&]() -> EwRef { return last >= 0 && pick(5) != 0 ? EwRef{EwRef::Kind::Reg, last} : any_ref(); };
    auto other = [&]() -> EwRef {
      const int k = pick(10);
      if (k < 5) return EwRef{EwRef::Kind::Const, pick(7)};
      if (k < 8) return EwRef{EwRef::Kind::Input, 1 + pick(2)};
      return any_ref();
    };
    auto emit = [&](ir::EwInstr in) {
      in.dst = pick(3) == 0 || last < 0 ? pick(4) : last;
      p.code.push_back(in);
      last = in.dst;
      if (std::find(written.begin(), written.end(), in.dst) == written.end()) written.push_back(in.dst);
    };
    const int len = 2 + pick(10);
    while (static_cast<int>(p.code.size()) < len) {
      const int kind = pick(12);
      if (kind < 2) {  // decomposed hard-swish
        const EwRef xr = running();
        const EwRef s = other();
        emit(pick(2) ? instr(EwOp::Add, 0, xr, s) : instr(EwOp::Add, 0, s, xr));
        emit(instr(EwOp::Clip, 0, EwRef{EwRef::Kind::Reg, last}, {}, 0.f, 6.f));
        const EwRef t{EwRef::Kind::Reg, last};
        emit(pick(2) ? instr(EwOp::Mul, 0, xr, t) : instr(EwOp::Mul, 0, t, xr));
        emit(instr(pick(2) ? EwOp::Div : EwOp::Mul, 0, EwRef{EwRef::Kind::Reg, last}, other()));
        continue;
      }
      const EwOp ops[] = {EwOp::Add,  EwOp::Sub,       EwOp::Mul, EwOp::Add, EwOp::Mul,      EwOp::Relu,
                          EwOp::Clip, EwOp::HardSwish, EwOp::Max, EwOp::Div, EwOp::LeakyRelu};
      const EwOp op = ops[pick(11)];
      const EwRef a = running(), b = other();
      if (!ir::ew_is_binary(op))
        emit(instr(op, 0, a, {}, op == EwOp::Clip ? -1.5f : 0.1f, op == EwOp::Clip ? 2.5f : 0.f));
      else
        emit(op != EwOp::Sub && pick(2) ? instr(op, 0, b, a) : instr(op, 0, a, b));
    }
    p.regs = ir::kEwMaxRegs;
    const EwPlan plan = ew_plan(p);
    fused += fused_steps(plan);
    ++programs;
    for (Isa isa : available_isas())
      for (bool exact : {false, true})
        for (int scalars = 0; scalars < 4; ++scalars)
          for (int64_t n : {7, 64, 77, 256}) {
            std::vector<std::vector<float>> in;
            std::vector<bool> sc = {false, (scalars & 1) != 0, (scalars & 2) != 0};
            for (uint32_t i = 0; i < 3; ++i)
              in.push_back(values(static_cast<size_t>(n), 11 * (i + 1) + static_cast<uint32_t>(trial)));
            const EwOperand ops[3] = {{in[0].data(), false},
                                      {in[1].data() + (sc[1] ? 5 % n : 0), sc[1]},
                                      {in[2].data() + (sc[2] ? 2 : 0), sc[2]}};
            std::vector<std::vector<float>> ref_in = in;
            if (sc[1]) ref_in[1][0] = in[1][static_cast<size_t>(5 % n)];
            if (sc[2]) ref_in[2][0] = in[2][2];
            const std::vector<float> want = reference_program(p, ref_in, sc, n, exact);
            std::vector<float> got(static_cast<size_t>(n) + 1, 4321.f);
            ew_block(isa, exact, plan, ops, n, got.data());
            ASSERT_EQ(got.back(), 4321.f);
            for (int64_t k = 0; k < n; ++k)
              expect_same(got[static_cast<size_t>(k)], want[static_cast<size_t>(k)], exact,
                          std::string(isa_name(isa)) + " trial " + std::to_string(trial) +
                              " exact=" + std::to_string(exact) + " scalars=" + std::to_string(scalars) +
                              " n=" + std::to_string(n) + " k=" + std::to_string(k));
          }
  }
  EXPECT_GT(fused, programs / 2);  // the test exercises the fused steps, not only single instructions
}

}  // namespace
}  // namespace onemodel::kern
