// Factories of the recurrent family (ops-recurrent.md) and the quantization family (int8.md), one line each
// in op_table.cc.
#pragma once
#include <memory>

#include "runtime/kernel.h"

namespace onemodel::rt {

// recurrent.cc
std::unique_ptr<Kernel> make_rnn(const NodeInfo& info);
std::unique_ptr<Kernel> make_gru(const NodeInfo& info);
std::unique_ptr<Kernel> make_lstm(const NodeInfo& info);
// quantize.cc
std::unique_ptr<Kernel> make_quantize_linear(const NodeInfo& info);
std::unique_ptr<Kernel> make_dequantize_linear(const NodeInfo& info);
std::unique_ptr<Kernel> make_dynamic_quantize_linear(const NodeInfo& info);
// quant_products.cc
std::unique_ptr<Kernel> make_matmul_integer(const NodeInfo& info);
std::unique_ptr<Kernel> make_qlinear_matmul(const NodeInfo& info);
std::unique_ptr<Kernel> make_conv_integer(const NodeInfo& info);
std::unique_ptr<Kernel> make_qlinear_conv(const NodeInfo& info);

}  // namespace onemodel::rt
