// Comparisons and boolean logic (ops-elementwise.md): Equal (7+, numeric and bool), Less and Greater (7+),
// LessOrEqual and GreaterOrEqual (12+), And, Or, Xor (7+, bool). Broadcast NumPy style; the output is bool.
// NaN compares false with everything, itself included: the C++ operators already behave so, and f16 is
// compared after the exact widening to float.
#include "ops/elementwise_common.h"
#include "ops/elementwise_ops.h"

namespace onemodel::rt {

using namespace ew;

std::unique_ptr<Kernel> make_equal(const NodeInfo&) {
  return binary<kNumeric | kBool>([](auto a, auto b) { return a == b; }, true, true);
}
std::unique_ptr<Kernel> make_less(const NodeInfo&) {
  return binary<kNumeric>([](auto a, auto b) { return a < b; }, true, true);
}
std::unique_ptr<Kernel> make_greater(const NodeInfo&) {
  return binary<kNumeric>([](auto a, auto b) { return a > b; }, true, true);
}
std::unique_ptr<Kernel> make_less_or_equal(const NodeInfo&) {
  return binary<kNumeric>([](auto a, auto b) { return a <= b; }, true, true);
}
std::unique_ptr<Kernel> make_greater_or_equal(const NodeInfo&) {
  return binary<kNumeric>([](auto a, auto b) { return a >= b; }, true, true);
}

std::unique_ptr<Kernel> make_and(const NodeInfo&) {
  return binary<kBool>([](bool a, bool b) { return a && b; }, true, true);
}
std::unique_ptr<Kernel> make_or(const NodeInfo&) {
  return binary<kBool>([](bool a, bool b) { return a || b; }, true, true);
}
std::unique_ptr<Kernel> make_xor(const NodeInfo&) {
  return binary<kBool>([](bool a, bool b) { return a != b; }, true, true);
}

}  // namespace onemodel::rt
