#include "ir/ew_program.h"

#include <cmath>

namespace onemodel::ir {

namespace {

constexpr int kIntsPerInstr = 6;
constexpr int kFloatsPerInstr = 2;

Attribute named(const char* name, AttrType t) {
  Attribute a;
  a.name = name;
  a.type = t;
  return a;
}

}  // namespace

bool ew_is_binary(EwOp op) { return static_cast<int>(op) <= static_cast<int>(EwOp::Min); }

const char* ew_name(EwOp op) {
  static const char* const kNames[] = {"Add",  "Sub",     "Mul",       "Div",         "Max",
                                       "Min",  "Relu",    "LeakyRelu", "HardSigmoid", "HardSwish",
                                       "Clip", "Sigmoid", "Tanh",      "Gelu",        "Erf"};
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == static_cast<size_t>(EwOp::Count));
  return op < EwOp::Count ? kNames[static_cast<int>(op)] : "?";
}

std::vector<Attribute> ew_attributes(const EwProgram& p) {
  Attribute code = named("ew_code", AttrType::Ints);
  Attribute params = named("ew_params", AttrType::Floats);
  Attribute consts = named("ew_consts", AttrType::Floats);
  for (const EwInstr& in : p.code) {
    code.ints.insert(code.ints.end(), {static_cast<int64_t>(in.op), in.dst, static_cast<int64_t>(in.a.kind), in.a.index,
                                       static_cast<int64_t>(in.b.kind), in.b.index});
    params.floats.insert(params.floats.end(), {in.p0, in.p1});
  }
  consts.floats = p.consts;
  return {code, params, consts};
}

std::optional<EwProgram> ew_read(const Node& node, std::string& error) {
  const Attribute* code = node.find_attribute("ew_code");
  const Attribute* params = node.find_attribute("ew_params");
  const Attribute* consts = node.find_attribute("ew_consts");
  if (!code || code->type != AttrType::Ints || !params || params->type != AttrType::Floats) {
    error = "needs the ints attribute ew_code and the floats attribute ew_params";
    return std::nullopt;
  }
  const size_t n = code->ints.size() / kIntsPerInstr;
  if (n == 0 || code->ints.size() % kIntsPerInstr != 0 || params->floats.size() != n * kFloatsPerInstr) {
    error = "ew_code must hold 6 ints and ew_params 2 floats per instruction (at least one)";
    return std::nullopt;
  }
  if (n > static_cast<size_t>(kEwMaxInstrs)) {
    error = "more than " + std::to_string(kEwMaxInstrs) + " instructions";
    return std::nullopt;
  }
  EwProgram p;
  if (consts) {
    if (consts->type != AttrType::Floats) {
      error = "ew_consts must be floats";
      return std::nullopt;
    }
    p.consts = consts->floats;
  }
  bool written[kEwMaxRegs] = {};
  auto read_ref = [&](int64_t kind, int64_t index, EwRef& r, size_t at) {
    const std::string where = "instruction " + std::to_string(at) + ": ";
    if (kind == static_cast<int64_t>(EwRef::Kind::Reg)) {
      if (index < 0 || index >= kEwMaxRegs || !written[index]) {
        error = where + "reads register " + std::to_string(index) + " before it is written";
        return false;
      }
    } else if (kind == static_cast<int64_t>(EwRef::Kind::Input)) {
      if (index < 0 || index >= kEwMaxInputs) {
        error = where + "input " + std::to_string(index) + " is out of range";
        return false;
      }
      p.inputs = std::max(p.inputs, static_cast<int>(index) + 1);
    } else if (kind == static_cast<int64_t>(EwRef::Kind::Const)) {
      if (index < 0 || static_cast<size_t>(index) >= p.consts.size()) {
        error = where + "constant " + std::to_string(index) + " is out of range";
        return false;
      }
    } else {
      error = where + "unknown operand kind " + std::to_string(kind);
      return false;
    }
    r.kind = static_cast<EwRef::Kind>(kind);
    r.index = static_cast<int>(index);
    return true;
  };
  for (size_t i = 0; i < n; ++i) {
    const int64_t* c = &code->ints[i * kIntsPerInstr];
    if (c[0] < 0 || c[0] >= static_cast<int64_t>(EwOp::Count)) {
      error = "instruction " + std::to_string(i) + ": unknown operation " + std::to_string(c[0]);
      return std::nullopt;
    }
    EwInstr in;
    in.op = static_cast<EwOp>(c[0]);
    if (!read_ref(c[2], c[3], in.a, i)) return std::nullopt;
    if (ew_is_binary(in.op) && !read_ref(c[4], c[5], in.b, i)) return std::nullopt;
    if (c[1] < 0 || c[1] >= kEwMaxRegs) {
      error = "instruction " + std::to_string(i) + ": register " + std::to_string(c[1]) + " is out of range";
      return std::nullopt;
    }
    in.dst = static_cast<int>(c[1]);
    in.p0 = params->floats[i * kFloatsPerInstr];
    in.p1 = params->floats[i * kFloatsPerInstr + 1];
    if (in.op == EwOp::Gelu && in.p0 != 0.0f && in.p0 != 1.0f) {
      error = "instruction " + std::to_string(i) + ": Gelu's form must be 0 (erf) or 1 (tanh)";
      return std::nullopt;
    }
    written[in.dst] = true;
    p.regs = std::max(p.regs, in.dst + 1);
    p.code.push_back(in);
  }
  return p;
}

}  // namespace onemodel::ir
