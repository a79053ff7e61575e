// Factories of the smaller families added for backend coverage (ops-coverage.md): losses, Det, and the signal
// operators. One line each in op_table.cc.
#pragma once
#include <memory>

#include "runtime/kernel.h"

namespace onemodel::rt {

std::unique_ptr<Kernel> make_negative_log_likelihood_loss(const NodeInfo& info);  // loss.cc
std::unique_ptr<Kernel> make_softmax_cross_entropy_loss(const NodeInfo& info);
std::unique_ptr<Kernel> make_tfidf_vectorizer(const NodeInfo& info);  // tfidf.cc
std::unique_ptr<Kernel> make_det(const NodeInfo& info);  // det.cc
std::unique_ptr<Kernel> make_dft(const NodeInfo& info);  // signal.cc
std::unique_ptr<Kernel> make_stft(const NodeInfo& info);
std::unique_ptr<Kernel> make_hann_window(const NodeInfo& info);
std::unique_ptr<Kernel> make_hamming_window(const NodeInfo& info);
std::unique_ptr<Kernel> make_blackman_window(const NodeInfo& info);
std::unique_ptr<Kernel> make_mel_weight_matrix(const NodeInfo& info);
std::unique_ptr<Kernel> make_fused_attention(const NodeInfo& info);  // attention.cc (the `attention` pass)
std::unique_ptr<Kernel> make_fused_elementwise(const NodeInfo& info);  // fused_elementwise.cc (`fuse-elementwise`)
std::unique_ptr<Kernel> make_fused_matmul(const NodeInfo& info);  // matmul.cc (`fuse-elementwise`)

}  // namespace onemodel::rt
