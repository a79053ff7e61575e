// The `fuse-elementwise` pass (docs/architecture.md "Fused element-wise programs"; both modes, bits preserved): groups
// of float32 element-wise operators (Add, Sub, Mul, Div, two-input Max/Min, Relu, LeakyRelu, HardSigmoid, HardSwish,
// Clip with constant bounds, Sigmoid, Tanh, Gelu, Erf, Pow by a constant 2) become one FusedElementwise node running
// them as one program (ir/ew_program.h), and a group that starts at a Conv becomes a FusedConv, which runs the program
// on each block of outputs while it is in cache. A group may be a DAG (x * clip(x + 3, 0, 6) / 6 reads x twice), but
// only its last value may be read outside it. A group that starts at a MatMul by a constant matrix becomes a
// FusedMatMul the same way (graph-passes.md section 6).
//
// Measured on PP-OCRv4 det (640x640, AVX2, 1 thread): the affine scale and shift after every Conv and the
// decomposed hard-swish after it were 55 of 200 ms, five passes over 6.5 MB tensors each.
//
// Types are not known before the plan, so a group only takes operators whose output is proven float32:
// a float32 constant or graph input, a Conv output (Conv is float32 only), an element-wise result with a
// float32 input (these operators take one element type for all inputs), the outputs of an operator of
// kKeepsType whose first input is float32, or a Cast to float32. In a half-precision graph (fast mode only: exact
// mode runs no pass there) "float32" includes the float16 or bfloat16 values the half-precision adapter widens
// around the fused node, which then rounds once where its members rounded each (docs/fp16.md section 4).
#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/ew_program.h"
#include "passes/passes.h"

namespace onemodel::passes {

namespace {

using ir::EwOp;
using ir::EwRef;

constexpr size_t kMaxMembers = 24;

struct Spec {
  std::string_view name;
  EwOp op;
};
constexpr Spec kSpecs[] = {
    {"Add", EwOp::Add},
    {"Sub", EwOp::Sub},
    {"Mul", EwOp::Mul},
    {"Div", EwOp::Div},
    {"Max", EwOp::Max},
    {"Min", EwOp::Min},
    {"Relu", EwOp::Relu},
    {"LeakyRelu", EwOp::LeakyRelu},
    {"HardSigmoid", EwOp::HardSigmoid},
    {"HardSwish", EwOp::HardSwish},
    {"Clip", EwOp::Clip},
    {"Sigmoid", EwOp::Sigmoid},
    {"Tanh", EwOp::Tanh},
    {"Gelu", EwOp::Gelu},
    {"Erf", EwOp::Erf},
};

// Operators whose outputs have the element type of their first input.
constexpr std::string_view kKeepsType[] = {
    "Abs",
    "AveragePool",
    "BatchNormalization",
    "Ceil",
    "Concat",
    "ConvTranspose",
    "Elu",
    "Erf",
    "Exp",
    "Expand",
    "Flatten",
    "Floor",
    "Gather",
    "Gelu",
    "Gemm",
    "GlobalAveragePool",
    "GlobalMaxPool",
    "Identity",
    "InstanceNormalization",
    "LayerNormalization",
    "Log",
    "MatMul",
    "MaxPool",
    "Neg",
    "Pad",
    "Pow",
    "Reciprocal",
    "ReduceMax",
    "ReduceMean",
    "ReduceMin",
    "ReduceSum",
    "Reshape",
    "Resize",
    "Round",
    "Selu",
    "Slice",
    "Softmax",
    "Softplus",
    "Split",
    "Sqrt",
    "Squeeze",
    "Tile",
    "Transpose",
    "Unsqueeze",
};

bool keeps_type(const ir::Node& n) {
  if (!n.domain.empty()) return false;
  for (std::string_view op : kKeepsType)
    if (op == n.op_type) return true;
  return false;
}

// Cast's `to` states its output's type: Silero VAD v5 squares its STFT's parts after a Cast to float (2 of its
// Pow nodes stayed out of the Add after them).
bool casts_to_f32(const ir::Node& n) {
  if (n.op_type != "Cast" || !n.domain.empty() || n.outputs.size() != 1 || n.outputs[0] < 0) return false;
  const ir::Attribute* to = n.find_attribute("to");
  return to && to->type == ir::AttrType::Int && to->i == static_cast<int64_t>(DType::F32);
}

float attr_float(const ir::Node& n, std::string_view name, float dflt) {
  const ir::Attribute* a = n.find_attribute(name);
  return a && a->type == ir::AttrType::Float ? a->f : dflt;
}

// One fusible node: the operation, its parameters, and the value inputs the program reads.
struct Candidate {
  EwOp op;
  float p0 = 0, p1 = 0;
  std::vector<int> operands;  // value ids (1 for unary operations, 2 for binary ones)
};

// Pow(x, 2) with a constant exponent of rank 0 (float or integer; rank 0 cannot shape the result): the Pow kernel
// computes x * x there (one rounding, both modes), so the program's Mul of x by itself gives its bits. Exported
// models square this way (STFT magnitudes, variances): openWakeWord's melspectrogram spent 5.7% of its time in the
// Pow kernel's scalar loop (perf, one thread) on its two squares (one now joins the Add after them, the other runs
// as a program of its own).
bool square_by_pow(const PassGraph& g, const ir::Node& n) {
  if (n.op_type != "Pow" || n.inputs.size() != 2 || n.inputs[0] < 0 || n.inputs[1] < 0) return false;
  const Tensor* e = g.constant(n.inputs[1]);
  if (!e || e->shape().rank() != 0 || !e->is_contiguous()) return false;
  switch (e->dtype()) {
    case DType::F32: return e->data<float>()[0] == 2.0f;
    case DType::F64: return e->data<double>()[0] == 2.0;
    case DType::I32: return e->data<int32_t>()[0] == 2;
    case DType::I64: return e->data<int64_t>()[0] == 2;
    default: return false;
  }
}

bool candidate(const PassGraph& g, const ir::Node& n, Candidate& c) {
  if (!n.domain.empty() || n.outputs.size() != 1 || n.outputs[0] < 0 || !n.subgraph_reads.empty()) return false;
  if (square_by_pow(g, n)) {
    c = Candidate{EwOp::Mul, 0.0f, 0.0f, {n.inputs[0], n.inputs[0]}};
    return true;
  }
  const Spec* spec = nullptr;
  for (const Spec& s : kSpecs)
    if (s.name == n.op_type) spec = &s;
  if (!spec) return false;
  c = Candidate{spec->op, 0.0f, 0.0f, {}};
  const size_t arity = ir::ew_is_binary(spec->op) ? 2 : 1;
  if (spec->op == EwOp::Clip) {
    if (n.inputs.empty() || n.inputs.size() > 3 || n.inputs[0] < 0) return false;
    c.p0 = std::numeric_limits<float>::lowest();
    c.p1 = std::numeric_limits<float>::max();
    if (n.opset < 11) {
      if (n.inputs.size() != 1) return false;
      if (n.find_attribute("min")) c.p0 = attr_float(n, "min", c.p0);
      if (n.find_attribute("max")) c.p1 = attr_float(n, "max", c.p1);
    } else {
      for (size_t i = 1; i < n.inputs.size(); ++i) {
        if (n.inputs[i] < 0) continue;
        const std::optional<float> b = g.scalar_f32(n.inputs[i]);
        if (!b) return false;  // a bound computed at run time
        (i == 1 ? c.p0 : c.p1) = *b;
      }
    }
    c.operands = {n.inputs[0]};
    return true;
  }
  if (n.inputs.size() != arity) return false;
  for (int v : n.inputs)
    if (v < 0) return false;
  if (spec->op == EwOp::LeakyRelu) c.p0 = attr_float(n, "alpha", 0.01f);
  if (spec->op == EwOp::Gelu) {
    // ONNX Gelu (opset 20, also what the `gelu` pass writes); another form or a bad attribute stays unfused, so
    // the operator reports it.
    const ir::Attribute* a = n.find_attribute("approximate");
    if (n.opset < 20 || (a && a->type != ir::AttrType::String)) return false;
    const std::string form = a ? a->s : "none";
    if (form != "none" && form != "tanh") return false;
    c.p0 = form == "tanh" ? 1.0f : 0.0f;
  }
  if (spec->op == EwOp::HardSigmoid) {
    c.p0 = attr_float(n, "alpha", 0.2f);
    c.p1 = attr_float(n, "beta", 0.5f);
  }
  c.operands = n.inputs;
  return true;
}

bool is_conv_head(const PassGraph& g, const ir::Node& n) {
  return n.op_type == "Conv" && n.domain.empty() && n.inputs.size() >= 2 && n.inputs.size() <= 3 &&
         n.outputs.size() == 1 && n.outputs[0] >= 0 && n.subgraph_reads.empty() && g.constant(n.inputs[1]);
}

// A MatMul by a constant matrix (a layer's weights; float32, or float16 / bfloat16 in a half-precision graph): its
// result has the matrix's type (MatMul takes one element type), and the product's tiles can run the program while
// they are in cache (FusedMatMul).
bool is_matmul_head(const PassGraph& g, const ir::Node& n) {
  if (n.op_type != "MatMul" || !n.domain.empty() || n.inputs.size() != 2 || n.inputs[0] < 0 || n.outputs.size() != 1 ||
      n.outputs[0] < 0 || !n.subgraph_reads.empty())
    return false;
  const Tensor* b = g.constant(n.inputs[1]);
  if (!b || b->shape().rank() != 2) return false;
  return b->dtype() == DType::F32 || b->dtype() == DType::F16 || b->dtype() == DType::BF16;
}

// A one-element float32 constant of rank 0 or 1 becomes a program constant; one of higher rank stays an
// input, because its rank still shapes the broadcast output.
std::optional<float> program_constant(const PassGraph& g, int v) {
  const Tensor* t = g.constant(v);
  if (!t || t->shape().rank() > 1) return std::nullopt;
  return g.scalar_f32(v);
}

struct Group {
  std::vector<int> members;  // node indices in graph order; members[0] is the Conv / MatMul of a head group
  bool conv = false;         // headed by a Conv or a MatMul (members[0]), whose result is program input 0
  bool closed = false;
};

// Groups become one node from two members on; a lone square by Pow too, whose kernel is a scalar loop.
bool rewritten(const PassGraph& g, const Group& grp) {
  return grp.members.size() >= 2 ||
         (grp.members.size() == 1 && g.graph().nodes[static_cast<size_t>(grp.members[0])].op_type == "Pow");
}

// What a group becomes: its program and the values it reads from outside.
struct Lowered {
  ir::EwProgram prog;
  std::vector<int> inputs;  // program input i reads value inputs[i] (input 0 of a FusedConv: the Conv result)
  bool ok = false;
  int overflow_member = -1;  // first member past the register or input limits
};

Lowered lower(const PassGraph& g, const Group& grp, const std::vector<Candidate>& cand) {
  Lowered out;
  std::map<int, int> reg_of;       // value -> register
  std::map<int, size_t> last_use;  // value -> last member position reading it
  const size_t first = grp.conv ? 1 : 0;
  for (size_t m = first; m < grp.members.size(); ++m)
    for (int v : cand[static_cast<size_t>(grp.members[m])].operands) last_use[v] = m;
  auto input_index = [&](int v) {
    auto it = std::find(out.inputs.begin(), out.inputs.end(), v);
    if (it != out.inputs.end()) return static_cast<int>(it - out.inputs.begin());
    out.inputs.push_back(v);
    return static_cast<int>(out.inputs.size()) - 1;
  };
  if (grp.conv) out.inputs.push_back(g.graph().nodes[static_cast<size_t>(grp.members[0])].outputs[0]);
  bool busy[ir::kEwMaxRegs] = {};
  for (size_t m = first; m < grp.members.size(); ++m) {
    const int node = grp.members[m];
    const Candidate& c = cand[static_cast<size_t>(node)];
    ir::EwInstr ins;
    ins.op = c.op;
    ins.p0 = c.p0;
    ins.p1 = c.p1;
    EwRef refs[2];
    for (size_t k = 0; k < c.operands.size(); ++k) {
      const int v = c.operands[k];
      if (auto r = reg_of.find(v); r != reg_of.end()) {
        refs[k] = EwRef{EwRef::Kind::Reg, r->second};
      } else if (auto s = program_constant(g, v)) {
        out.prog.consts.push_back(*s);
        refs[k] = EwRef{EwRef::Kind::Const, static_cast<int>(out.prog.consts.size()) - 1};
      } else {
        refs[k] = EwRef{EwRef::Kind::Input, input_index(v)};
      }
    }
    ins.a = refs[0];
    if (c.operands.size() > 1) ins.b = refs[1];
    for (int v : c.operands)  // registers whose value is read for the last time are free for the result
      if (auto r = reg_of.find(v); r != reg_of.end() && last_use[v] == m) busy[r->second] = false;
    int dst = 0;
    while (dst < ir::kEwMaxRegs && busy[dst]) ++dst;
    if (dst == ir::kEwMaxRegs || out.inputs.size() > static_cast<size_t>(ir::kEwMaxInputs) ||
        out.prog.code.size() >= static_cast<size_t>(ir::kEwMaxInstrs)) {
      out.overflow_member = static_cast<int>(m);
      return out;
    }
    busy[dst] = true;
    ins.dst = dst;
    reg_of[g.graph().nodes[static_cast<size_t>(node)].outputs[0]] = dst;
    out.prog.regs = std::max(out.prog.regs, dst + 1);
    out.prog.code.push_back(ins);
  }
  out.prog.inputs = static_cast<int>(out.inputs.size());
  out.ok = true;
  return out;
}

// Per node: its candidate form, whether it can join a group (fusible) or start one (head); per value: proven
// float32.
struct Typing {
  std::vector<Candidate> cand;
  std::vector<char> fusible, head, f32;
};

Typing type_nodes(const PassGraph& g) {
  const int nn = static_cast<int>(g.num_nodes());
  const ir::Graph& graph = g.graph();
  Typing t;
  t.f32.assign(graph.values.size(), 0);
  for (size_t v = 0; v < graph.values.size(); ++v) t.f32[v] = g.f32_source(static_cast<int>(v)) ? 1 : 0;
  t.cand.resize(static_cast<size_t>(nn));
  t.fusible.assign(static_cast<size_t>(nn), 0);
  t.head.assign(static_cast<size_t>(nn), 0);
  std::vector<char>& f32 = t.f32;
  for (int i = 0; i < nn; ++i) {
    if (g.removed(i)) continue;
    const ir::Node& n = graph.nodes[static_cast<size_t>(i)];
    const auto iu = static_cast<size_t>(i);
    // A candidate with a float32 operand first: Gelu is also an operator that keeps its input's type.
    bool typed = false;
    if (!is_conv_head(g, n) && !is_matmul_head(g, n) && candidate(g, n, t.cand[iu]))
      for (int v : t.cand[iu].operands) typed = typed || f32[static_cast<size_t>(v)];
    if (is_conv_head(g, n) || is_matmul_head(g, n)) {
      t.head[iu] = 1;
      f32[static_cast<size_t>(n.outputs[0])] = 1;
    } else if (typed) {
      t.fusible[iu] = 1;
      f32[static_cast<size_t>(n.outputs[0])] = 1;
    } else if (keeps_type(n) && !n.inputs.empty() && n.inputs[0] >= 0 && f32[static_cast<size_t>(n.inputs[0])]) {
      for (int v : n.outputs)
        if (v >= 0) f32[static_cast<size_t>(v)] = 1;
    } else if (casts_to_f32(n)) {
      f32[static_cast<size_t>(n.outputs[0])] = 1;
    }
  }
  return t;
}

}  // namespace

std::vector<char> proven_float32(const PassGraph& g) { return type_nodes(g).f32; }

int fuse_elementwise(PassGraph& g) {
  const int nn = static_cast<int>(g.num_nodes());
  const Typing typing = type_nodes(g);
  const std::vector<Candidate>& cand = typing.cand;
  const std::vector<char>&fusible = typing.fusible, &head = typing.head;

  // Groups in graph order: a fusible node joins the open group that produced its latest-produced input, else
  // starts one. A group whose inner value escapes (read outside it, a graph output) is closed at that member
  // and the grouping is redone; `ends` only grows, so this settles.
  std::set<int> ends;
  std::vector<Group> groups;
  std::vector<Lowered> lowered;
  for (int round = 0; round < nn + 1; ++round) {
    groups.clear();
    std::vector<int> group_of(static_cast<size_t>(nn), -1);
    for (int i = 0; i < nn; ++i) {
      const auto iu = static_cast<size_t>(i);
      if (g.removed(i) || (!head[iu] && !fusible[iu])) continue;
      int join = -1, latest = -1;
      if (fusible[iu])
        for (int v : cand[iu].operands) {
          const int p = g.producer(v);
          if (p < 0 || group_of[static_cast<size_t>(p)] < 0 || p <= latest) continue;
          const Group& pg = groups[static_cast<size_t>(group_of[static_cast<size_t>(p)])];
          if (pg.closed || pg.members.size() >= kMaxMembers) continue;
          latest = p;
          join = group_of[static_cast<size_t>(p)];
        }
      if (join < 0) {
        groups.push_back(Group{{}, head[iu] != 0, false});
        join = static_cast<int>(groups.size()) - 1;
      }
      groups[static_cast<size_t>(join)].members.push_back(i);
      groups[static_cast<size_t>(join)].closed = ends.count(i) > 0;
      group_of[iu] = join;
    }
    // Check every group: inner values read only inside, and within the program limits.
    bool changed = false;
    lowered.assign(groups.size(), Lowered{});
    for (size_t k = 0; k < groups.size(); ++k) {
      const Group& grp = groups[k];
      if (!rewritten(g, grp)) continue;
      for (size_t m = 0; m + 1 < grp.members.size() && !changed; ++m) {
        const int v = g.node(grp.members[m]).outputs[0];
        int inside = 0;
        for (size_t r = m + 1; r < grp.members.size(); ++r) {
          const ir::Node& reader = g.node(grp.members[r]);
          inside += static_cast<int>(std::count(reader.inputs.begin(), reader.inputs.end(), v));
        }
        if (g.uses(v) != inside) {
          ends.insert(grp.members[m]);
          changed = true;
        }
      }
      if (changed) break;
      lowered[k] = lower(g, grp, cand);
      if (!lowered[k].ok) {
        ends.insert(grp.members[static_cast<size_t>(lowered[k].overflow_member) - 1]);
        changed = true;
        break;
      }
    }
    if (!changed) break;
  }

  int rewrites = 0;
  for (size_t k = 0; k < groups.size(); ++k) {
    const Group& grp = groups[k];
    if (!rewritten(g, grp) || !lowered[k].ok) continue;
    const Lowered& lw = lowered[k];
    const int last = grp.members.back();
    const int out = g.node(last).outputs[0];
    ir::Node fused;
    fused.domain = "onemodel";
    fused.opset = 1;
    fused.file_index = g.node(last).file_index;
    fused.name = g.node(last).name;
    fused.outputs = {out};
    fused.attributes = ir::ew_attributes(lw.prog);
    if (grp.conv) {
      const ir::Node& conv = g.node(grp.members[0]);
      fused.op_type = conv.op_type == "MatMul" ? "FusedMatMul" : "FusedConv";
      fused.name = conv.name.empty() ? fused.name : conv.name;
      fused.inputs = conv.inputs;
      fused.inputs.resize(3, ir::kNoValue);
      fused.inputs.insert(fused.inputs.end(), lw.inputs.begin() + 1, lw.inputs.end());
      for (const ir::Attribute& a : conv.attributes) fused.attributes.push_back(a);
    } else {
      fused.op_type = "FusedElementwise";
      fused.inputs = lw.inputs;
    }
    for (size_t m = 0; m + 1 < grp.members.size(); ++m) g.remove(grp.members[m]);
    g.node(last) = std::move(fused);
    ++rewrites;
  }
  return rewrites;
}

}  // namespace onemodel::passes
