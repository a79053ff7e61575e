// NodeInfo: the typed attribute readers a kernel factory uses (graph-runtime.md section 2). Reading an
// attribute with the wrong type is a model error, so every reader throws Error(InvalidModel) naming the node
// instead of silently converting: a model that stores `axis` as a float is broken, not "close enough".
#include <string>

#include "runtime/kernel.h"

namespace onemodel::rt {

namespace {

std::string_view attr_type_name(ir::AttrType t) {
  switch (t) {
    case ir::AttrType::Undefined: return "UNDEFINED";
    case ir::AttrType::Float: return "FLOAT";
    case ir::AttrType::Int: return "INT";
    case ir::AttrType::String: return "STRING";
    case ir::AttrType::Tensor: return "TENSOR";
    case ir::AttrType::Graph: return "GRAPH";
    case ir::AttrType::Floats: return "FLOATS";
    case ir::AttrType::Ints: return "INTS";
    case ir::AttrType::Strings: return "STRINGS";
    case ir::AttrType::Tensors: return "TENSORS";
    case ir::AttrType::Graphs: return "GRAPHS";
    case ir::AttrType::SparseTensor: return "SPARSE_TENSOR";
    case ir::AttrType::SparseTensors: return "SPARSE_TENSORS";
    case ir::AttrType::TypeProto: return "TYPE_PROTO";
    case ir::AttrType::TypeProtos: return "TYPE_PROTOS";
  }
  return "UNKNOWN";
}

// Returns the attribute when present and of type `want`; null when absent; throws on a type mismatch.
const ir::Attribute* checked(const NodeInfo& info, std::string_view name, ir::AttrType want) {
  const ir::Attribute* a = info.find(name);
  if (!a) return nullptr;
  if (!a->ref_attr_name.empty())
    info.fail(ErrorKind::InvalidModel, "attribute '" + std::string(name) + "' refers to function attribute '" +
                                           a->ref_attr_name + "' outside a function body");
  if (a->type != want)
    info.fail(ErrorKind::InvalidModel, "attribute '" + std::string(name) + "' must be " +
                                           std::string(attr_type_name(want)) + ", not " +
                                           std::string(attr_type_name(a->type)));
  return a;
}

}  // namespace

int64_t NodeInfo::get_int(std::string_view attr, int64_t dflt) const {
  const ir::Attribute* a = checked(*this, attr, ir::AttrType::Int);
  return a ? a->i : dflt;
}

float NodeInfo::get_float(std::string_view attr, float dflt) const {
  const ir::Attribute* a = checked(*this, attr, ir::AttrType::Float);
  return a ? a->f : dflt;
}

std::string NodeInfo::get_string(std::string_view attr, std::string_view dflt) const {
  const ir::Attribute* a = checked(*this, attr, ir::AttrType::String);
  return a ? a->s : std::string(dflt);
}

std::vector<int64_t> NodeInfo::get_ints(std::string_view attr) const {
  const ir::Attribute* a = checked(*this, attr, ir::AttrType::Ints);
  return a ? a->ints : std::vector<int64_t>{};
}

std::vector<float> NodeInfo::get_floats(std::string_view attr) const {
  const ir::Attribute* a = checked(*this, attr, ir::AttrType::Floats);
  return a ? a->floats : std::vector<float>{};
}

const ir::TensorValue* NodeInfo::get_tensor(std::string_view attr) const {
  const ir::Attribute* a = checked(*this, attr, ir::AttrType::Tensor);
  if (!a) return nullptr;
  if (!a->t) fail(ErrorKind::InvalidModel, "attribute '" + std::string(attr) + "' has no tensor value");
  return a->t.get();
}

void NodeInfo::fail(ErrorKind kind, const std::string& message) const {
  throw Error(kind, op_type() + " node '" + name() + "': " + message).with_node(name());
}

}  // namespace onemodel::rt
