// NodeInfo's typed attribute readers (graph-runtime.md section 2): a wrong attribute type is an
// InvalidModel error naming the node, so a malformed model is reported where it is first read.
#include "runtime/kernel.h"

namespace onemodel::rt {
namespace {
const char* attr_type_name(ir::AttrType t) {
  switch (t) {
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
    default: return "UNDEFINED";
  }
}
}  // namespace

void NodeInfo::fail(ErrorKind kind, const std::string& message) const {
  throw Error(kind, op_type() + " node '" + name() + "': " + message).with_node(name());
}

namespace {
const ir::Attribute* typed(const NodeInfo& info, std::string_view attr, ir::AttrType want) {
  const ir::Attribute* a = info.find(attr);
  if (!a) return nullptr;
  if (a->type != want)
    info.fail(ErrorKind::InvalidModel, "attribute '" + std::string(attr) + "' must be " + attr_type_name(want) +
                                           ", got " + attr_type_name(a->type));
  return a;
}
}  // namespace

int64_t NodeInfo::get_int(std::string_view attr, int64_t dflt) const {
  const ir::Attribute* a = typed(*this, attr, ir::AttrType::Int);
  return a ? a->i : dflt;
}

float NodeInfo::get_float(std::string_view attr, float dflt) const {
  const ir::Attribute* a = typed(*this, attr, ir::AttrType::Float);
  return a ? a->f : dflt;
}

std::string NodeInfo::get_string(std::string_view attr, std::string_view dflt) const {
  const ir::Attribute* a = typed(*this, attr, ir::AttrType::String);
  return a ? a->s : std::string(dflt);
}

std::vector<int64_t> NodeInfo::get_ints(std::string_view attr) const {
  const ir::Attribute* a = typed(*this, attr, ir::AttrType::Ints);
  return a ? a->ints : std::vector<int64_t>{};
}

std::vector<float> NodeInfo::get_floats(std::string_view attr) const {
  const ir::Attribute* a = typed(*this, attr, ir::AttrType::Floats);
  return a ? a->floats : std::vector<float>{};
}

const ir::TensorValue* NodeInfo::get_tensor(std::string_view attr) const {
  const ir::Attribute* a = typed(*this, attr, ir::AttrType::Tensor);
  if (!a) return nullptr;
  if (!a->t) fail(ErrorKind::InvalidModel, "attribute '" + std::string(attr) + "' holds no tensor");
  return a->t.get();
}

}  // namespace onemodel::rt
