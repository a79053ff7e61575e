// Factories of the smaller families added for backend coverage (ops-coverage.md): losses, Det, and the signal
// operators. One line each in op_table.cc.
#pragma once
#include <memory>

#include "runtime/kernel.h"

namespace onemodel::rt {

std::unique_ptr<Kernel> make_negative_log_likelihood_loss(const NodeInfo& info);  // loss.cc
std::unique_ptr<Kernel> make_softmax_cross_entropy_loss(const NodeInfo& info);

}  // namespace onemodel::rt
