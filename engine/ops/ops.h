// Factories of the operator families, one line each in op_table.cc.
#pragma once
#include <memory>

#include "runtime/kernel.h"

namespace onemodel::rt {

std::unique_ptr<Kernel> make_add(const NodeInfo& info);       // binary.cc
std::unique_ptr<Kernel> make_sub(const NodeInfo& info);
std::unique_ptr<Kernel> make_mul(const NodeInfo& info);
std::unique_ptr<Kernel> make_div(const NodeInfo& info);
std::unique_ptr<Kernel> make_relu(const NodeInfo& info);      // unary.cc
std::unique_ptr<Kernel> make_matmul(const NodeInfo& info);    // matmul.cc
std::unique_ptr<Kernel> make_gemm(const NodeInfo& info);
std::unique_ptr<Kernel> make_softmax(const NodeInfo& info);   // softmax.cc
std::unique_ptr<Kernel> make_reduce_max(const NodeInfo& info);  // reduce.cc
std::unique_ptr<Kernel> make_reshape(const NodeInfo& info);   // views.cc
std::unique_ptr<Kernel> make_identity(const NodeInfo& info);
std::unique_ptr<Kernel> make_constant(const NodeInfo& info);  // constant.cc
std::unique_ptr<Kernel> make_shape(const NodeInfo& info);
std::unique_ptr<Kernel> make_cast(const NodeInfo& info);      // cast.cc

}  // namespace onemodel::rt
