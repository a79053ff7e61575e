// Factories of the normalisation, softmax and reduction operators (ops-norms.md) beyond those in ops.h, one line each in op_table.cc.
#pragma once
#include <memory>

#include "runtime/kernel.h"

namespace onemodel::rt {

// reduce.cc (make_reduce_max is declared in ops.h)
std::unique_ptr<Kernel> make_reduce_sum(const NodeInfo& info);
std::unique_ptr<Kernel> make_reduce_mean(const NodeInfo& info);
std::unique_ptr<Kernel> make_reduce_min(const NodeInfo& info);
std::unique_ptr<Kernel> make_reduce_prod(const NodeInfo& info);
std::unique_ptr<Kernel> make_reduce_l1(const NodeInfo& info);
std::unique_ptr<Kernel> make_reduce_l2(const NodeInfo& info);
std::unique_ptr<Kernel> make_reduce_sum_square(const NodeInfo& info);
std::unique_ptr<Kernel> make_reduce_log_sum(const NodeInfo& info);
std::unique_ptr<Kernel> make_reduce_log_sum_exp(const NodeInfo& info);
// softmax.cc (make_softmax is declared in ops.h)
std::unique_ptr<Kernel> make_log_softmax(const NodeInfo& info);
std::unique_ptr<Kernel> make_hardmax(const NodeInfo& info);
// arg_cumsum.cc
std::unique_ptr<Kernel> make_argmax(const NodeInfo& info);
std::unique_ptr<Kernel> make_argmin(const NodeInfo& info);
std::unique_ptr<Kernel> make_cumsum(const NodeInfo& info);
// norms.cc
std::unique_ptr<Kernel> make_layer_normalization(const NodeInfo& info);
std::unique_ptr<Kernel> make_rms_normalization(const NodeInfo& info);
std::unique_ptr<Kernel> make_instance_normalization(const NodeInfo& info);
std::unique_ptr<Kernel> make_group_normalization(const NodeInfo& info);
// norms.cc (not in ops-norms.md)
std::unique_ptr<Kernel> make_lp_normalization(const NodeInfo& info);
std::unique_ptr<Kernel> make_mean_variance_normalization(const NodeInfo& info);

}  // namespace onemodel::rt
