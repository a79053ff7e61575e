// A fused chain of float32 element-wise operators (docs/architecture.md "Fused element-wise programs"): the
// `fuse-elementwise` pass writes one into the attributes of a FusedElementwise or FusedConv node, the operators read it
// back (ops/ew_program.h runs it). Plain data and its checked attribute encoding; hostile attribute values are refused
// here with a message, never run.
//
// A program is a list of instructions over a few registers. Each instruction reads one or two operands (a
// register written earlier, one of the node's tensor inputs broadcast NumPy style, or a scalar constant) and
// writes a register; the last instruction's result is the node's output. Every instruction is the same
// operation, in the same operand order, as the ONNX operator it replaces, so a fused chain gives the bits of
// the unfused one in both modes.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace onemodel::ir {

enum class EwOp : uint8_t {
  Add,
  Sub,
  Mul,
  Div,
  Max,
  Min,  // binary: a op b
  Relu,
  LeakyRelu,
  HardSigmoid,
  HardSwish,
  Clip,  // unary with parameters p0, p1 (alpha/beta, lo/hi)
  Sigmoid,
  Tanh,  // unary on the vector transcendental kernels
  Gelu,  // the same, p0 = 0 for the erf form, 1 for the tanh form (ONNX Gelu's approximate)
  Erf,   // unary on the vector transcendental kernels (after Gelu: the attribute encoding numbers operations)
  Count,
};
bool ew_is_binary(EwOp op);
const char* ew_name(EwOp op);

struct EwRef {
  enum class Kind : uint8_t { Reg, Input, Const };
  Kind kind = Kind::Reg;
  int index = 0;
};

struct EwInstr {
  EwOp op = EwOp::Add;
  int dst = 0;
  EwRef a, b;  // b unused by unary operations
  float p0 = 0, p1 = 0;
};

// Limits that keep a program's working set in L1 (registers of ops/ew_program.h's block size).
inline constexpr int kEwMaxRegs = 8;
inline constexpr int kEwMaxInstrs = 32;
inline constexpr int kEwMaxInputs = 16;

struct EwProgram {
  std::vector<EwInstr> code;
  std::vector<float> consts;
  int regs = 0;    // registers used (1 + highest index written)
  int inputs = 0;  // 1 + highest input index read
};

// The attributes carrying `p` (ew_code: six ints per instruction, ew_params: two floats per instruction,
// ew_consts: the scalar constants).
std::vector<Attribute> ew_attributes(const EwProgram& p);

// Reads and checks the program of `node`: known operations, registers below kEwMaxRegs and written before
// they are read, constants in range, at most kEwMaxInstrs instructions and kEwMaxInputs inputs. Returns
// nothing and sets `error` when the attributes are malformed.
std::optional<EwProgram> ew_read(const Node& node, std::string& error);

}  // namespace onemodel::ir
