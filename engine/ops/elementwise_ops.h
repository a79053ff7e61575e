// Factories of the element-wise operators (ops-elementwise.md) beyond those in ops.h, one line each in op_table.cc.
#pragma once
#include <memory>

#include "runtime/kernel.h"

namespace onemodel::rt {

// binary.cc
std::unique_ptr<Kernel> make_mod(const NodeInfo& info);
std::unique_ptr<Kernel> make_pow(const NodeInfo& info);
std::unique_ptr<Kernel> make_bit_shift(const NodeInfo& info);
std::unique_ptr<Kernel> make_bitwise_and(const NodeInfo& info);
std::unique_ptr<Kernel> make_bitwise_or(const NodeInfo& info);
std::unique_ptr<Kernel> make_bitwise_xor(const NodeInfo& info);
// variadic.cc
std::unique_ptr<Kernel> make_max(const NodeInfo& info);
std::unique_ptr<Kernel> make_min(const NodeInfo& info);
std::unique_ptr<Kernel> make_sum(const NodeInfo& info);
std::unique_ptr<Kernel> make_mean(const NodeInfo& info);
// unary_math.cc
std::unique_ptr<Kernel> make_neg(const NodeInfo& info);
std::unique_ptr<Kernel> make_abs(const NodeInfo& info);
std::unique_ptr<Kernel> make_sign(const NodeInfo& info);
std::unique_ptr<Kernel> make_reciprocal(const NodeInfo& info);
std::unique_ptr<Kernel> make_sqrt(const NodeInfo& info);
std::unique_ptr<Kernel> make_floor(const NodeInfo& info);
std::unique_ptr<Kernel> make_ceil(const NodeInfo& info);
std::unique_ptr<Kernel> make_round(const NodeInfo& info);
std::unique_ptr<Kernel> make_exp(const NodeInfo& info);
std::unique_ptr<Kernel> make_log(const NodeInfo& info);
std::unique_ptr<Kernel> make_tanh(const NodeInfo& info);
std::unique_ptr<Kernel> make_sigmoid(const NodeInfo& info);
std::unique_ptr<Kernel> make_erf(const NodeInfo& info);
std::unique_ptr<Kernel> make_is_nan(const NodeInfo& info);
std::unique_ptr<Kernel> make_is_inf(const NodeInfo& info);
std::unique_ptr<Kernel> make_not(const NodeInfo& info);
std::unique_ptr<Kernel> make_bitwise_not(const NodeInfo& info);
std::unique_ptr<Kernel> make_sin(const NodeInfo& info);
std::unique_ptr<Kernel> make_cos(const NodeInfo& info);
std::unique_ptr<Kernel> make_tan(const NodeInfo& info);
std::unique_ptr<Kernel> make_asin(const NodeInfo& info);
std::unique_ptr<Kernel> make_acos(const NodeInfo& info);
std::unique_ptr<Kernel> make_atan(const NodeInfo& info);
std::unique_ptr<Kernel> make_sinh(const NodeInfo& info);
std::unique_ptr<Kernel> make_cosh(const NodeInfo& info);
std::unique_ptr<Kernel> make_asinh(const NodeInfo& info);
std::unique_ptr<Kernel> make_acosh(const NodeInfo& info);
std::unique_ptr<Kernel> make_atanh(const NodeInfo& info);
// activations.cc (make_relu is in ops.h)
std::unique_ptr<Kernel> make_gelu(const NodeInfo& info);
std::unique_ptr<Kernel> make_leaky_relu(const NodeInfo& info);
std::unique_ptr<Kernel> make_hard_sigmoid(const NodeInfo& info);
std::unique_ptr<Kernel> make_hard_swish(const NodeInfo& info);
std::unique_ptr<Kernel> make_softsign(const NodeInfo& info);
std::unique_ptr<Kernel> make_thresholded_relu(const NodeInfo& info);
std::unique_ptr<Kernel> make_shrink(const NodeInfo& info);
std::unique_ptr<Kernel> make_prelu(const NodeInfo& info);
std::unique_ptr<Kernel> make_elu(const NodeInfo& info);
std::unique_ptr<Kernel> make_selu(const NodeInfo& info);
std::unique_ptr<Kernel> make_celu(const NodeInfo& info);
std::unique_ptr<Kernel> make_softplus(const NodeInfo& info);
// compare_select.cc
std::unique_ptr<Kernel> make_equal(const NodeInfo& info);
std::unique_ptr<Kernel> make_less(const NodeInfo& info);
std::unique_ptr<Kernel> make_greater(const NodeInfo& info);
std::unique_ptr<Kernel> make_less_or_equal(const NodeInfo& info);
std::unique_ptr<Kernel> make_greater_or_equal(const NodeInfo& info);
std::unique_ptr<Kernel> make_and(const NodeInfo& info);
std::unique_ptr<Kernel> make_or(const NodeInfo& info);
std::unique_ptr<Kernel> make_xor(const NodeInfo& info);
// compare_select.cc (Where, Clip)
std::unique_ptr<Kernel> make_where(const NodeInfo& info);
std::unique_ptr<Kernel> make_clip(const NodeInfo& info);
// cast.cc (make_cast is in ops.h)
std::unique_ptr<Kernel> make_cast_like(const NodeInfo& info);

}  // namespace onemodel::rt
