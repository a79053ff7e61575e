// Factories of the convolution family (ops-conv.md), one line each in op_table.cc.
#pragma once
#include <memory>

#include "runtime/kernel.h"

namespace onemodel::rt {

// conv.cc
std::unique_ptr<Kernel> make_conv(const NodeInfo& info);
std::unique_ptr<Kernel> make_conv_transpose(const NodeInfo& info);
std::unique_ptr<Kernel> make_fused_conv(const NodeInfo& info);  // the `fuse-elementwise` pass

}  // namespace onemodel::rt
