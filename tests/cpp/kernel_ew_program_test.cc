// The fused element-wise block kernel (kernels/ew_program.h) on every target this machine runs, against the
// scalar formulas the unfused operators use (ops/elementwise_common.h): every lane must be the operator's
// bits (exact mode: NaN canonical; fast mode: NaN stays NaN), for every operand pattern (register, tensor
// run, repeated value, constant), ragged lengths and special values, and nothing past n may be touched.
#include <gtest/gtest.h>

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
  const float specials[] = {kNaN, kInf, -kInf, 0.f, -0.f, 1e-40f, -1e-40f, std::bit_cast<float>(0xFFC12345u),
                            -3.f, 3.f, 6.f, 1.f, -0.5f, 0.75f, -2.5f, 2.5f};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-8.f, 8.f);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = (i % 3 == 1) ? specials[(i / 3 + seed) % 16] : u(rng);
  return v;
}

void expect_same(float got, float want, bool exact, const std::string& where) {
  if (std::isnan(want)) {
    ASSERT_TRUE(std::isnan(got)) << where;
    if (exact) ASSERT_EQ(std::bit_cast<uint32_t>(got), 0x7FC00000u) << where;
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
  const EwOp ops[] = {EwOp::Add, EwOp::Sub, EwOp::Mul, EwOp::Div, EwOp::Max, EwOp::Min, EwOp::Relu,
                      EwOp::LeakyRelu, EwOp::HardSigmoid, EwOp::HardSwish, EwOp::Clip};
  for (Isa isa : available_isas())
    for (bool exact : {false, true})
      for (EwOp op : ops)
        for (int pattern = 0; pattern < 4; ++pattern)  // b: run, repeated value, constant; a repeated
          for (int64_t n : {1, 3, 8, 15, 16, 17, 31, 64, 70, 255, 256}) {
            const std::string where = std::string(isa_name(isa)) + " " + ir::ew_name(op) + " exact=" +
                                      std::to_string(exact) + " pattern=" + std::to_string(pattern) + " n=" +
                                      std::to_string(n);
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
            ew_block(isa, exact, prog, operands, n, out.data());
            ASSERT_EQ(out.back(), 4321.f) << where;
            for (int64_t k = 0; k < n; ++k) {
              const float x = pattern == 3 ? as : a[static_cast<size_t>(k)];
              const float y = pattern == 0 || pattern == 3 ? b[static_cast<size_t>(k)] : bs;
              expect_same(out[static_cast<size_t>(k)], reference(op, x, y, in.p0, in.p1), exact,
                          where + " k=" + std::to_string(k));
            }
          }
}

// x * clip(x + 3, 0, 6) / 6 as the pass lowers it, registers reused, written over its own input (a Conv
// epilogue works in place), then Sigmoid and Tanh, which run on the transcendental kernels.
TEST(KernelEwProgram, ProgramsReuseRegistersAndRunInPlace) {
  ir::EwProgram prog;
  prog.consts = {3.f, 6.f};
  auto instr = [](EwOp op, int dst, EwRef a, EwRef b = {}, float p0 = 0, float p1 = 0) {
    ir::EwInstr i;
    i.op = op;
    i.dst = dst;
    i.a = a;
    i.b = b;
    i.p0 = p0;
    i.p1 = p1;
    return i;
  };
  const EwRef x{EwRef::Kind::Input, 0}, r0{EwRef::Kind::Reg, 0}, r1{EwRef::Kind::Reg, 1};
  prog.code = {instr(EwOp::Add, 0, x, {EwRef::Kind::Const, 0}), instr(EwOp::Clip, 0, r0, {}, 0.f, 6.f),
               instr(EwOp::Mul, 1, x, r0), instr(EwOp::Div, 0, r1, {EwRef::Kind::Const, 1})};
  prog.regs = 2;
  prog.inputs = 1;
  ir::EwProgram trans;
  trans.code = {instr(EwOp::Sigmoid, 0, x), instr(EwOp::Tanh, 0, r0)};
  trans.regs = 1;
  trans.inputs = 1;
  for (Isa isa : available_isas())
    for (bool exact : {false, true})
      for (int64_t n : {5, 64, 77, 256}) {
        const std::string where = std::string(isa_name(isa)) + " exact=" + std::to_string(exact) + " n=" +
                                  std::to_string(n);
        const std::vector<float> x0 = values(static_cast<size_t>(n), 3);
        std::vector<float> y = x0;
        const EwOperand in{y.data(), false};
        ew_block(isa, exact, prog, &in, n, y.data());
        for (int64_t k = 0; k < n; ++k) {
          const float v = x0[static_cast<size_t>(k)];
          const float want = (v * ew::clip_value(v + 3.f, 0.f, 6.f)) / 6.f;
          expect_same(y[static_cast<size_t>(k)], exact ? kernels::canon(want) : want, exact,
                      where + " k=" + std::to_string(k));
        }
        std::vector<float> s(static_cast<size_t>(n)), want(static_cast<size_t>(n)), got(static_cast<size_t>(n));
        sigmoid_f32(isa, exact, x0.data(), s.data(), n);
        tanh_f32(isa, exact, s.data(), want.data(), n);
        const EwOperand tin{x0.data(), false};
        ew_block(isa, exact, trans, &tin, n, got.data());
        for (int64_t k = 0; k < n; ++k)
          expect_same(got[static_cast<size_t>(k)], want[static_cast<size_t>(k)], exact, where + " transcendental");
      }
}

}  // namespace
}  // namespace onemodel::kern
