// ir::Attribute builders shared by the operator tests (through ops_test_util.h) and the runtime tests
// (through runtime_fake_ops.h).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace onemodel::test {

// An attribute of `type` named `n`; the builders below fill in its value.
inline ir::Attribute attr_of(const std::string& n, ir::AttrType type) {
  ir::Attribute a;
  a.name = n;
  a.type = type;
  return a;
}

inline ir::Attribute attr_i(const std::string& n, int64_t v) {
  ir::Attribute a = attr_of(n, ir::AttrType::Int);
  a.i = v;
  return a;
}
inline ir::Attribute attr_f(const std::string& n, float v) {
  ir::Attribute a = attr_of(n, ir::AttrType::Float);
  a.f = v;
  return a;
}
inline ir::Attribute attr_s(const std::string& n, std::string v) {
  ir::Attribute a = attr_of(n, ir::AttrType::String);
  a.s = std::move(v);
  return a;
}
inline ir::Attribute attr_ints(const std::string& n, std::vector<int64_t> v) {
  ir::Attribute a = attr_of(n, ir::AttrType::Ints);
  a.ints = std::move(v);
  return a;
}
inline ir::Attribute attr_floats(const std::string& n, std::vector<float> v) {
  ir::Attribute a = attr_of(n, ir::AttrType::Floats);
  a.floats = std::move(v);
  return a;
}
inline ir::Attribute attr_strs(const std::string& n, std::vector<std::string> v) {
  ir::Attribute a = attr_of(n, ir::AttrType::Strings);
  a.strings = std::move(v);
  return a;
}

}  // namespace onemodel::test
