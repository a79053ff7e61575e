// Factories of the spatial operators (ops-conv.md pooling/BatchNormalization/Resize sections and
// ops-coverage.md): pooling, unpooling, local response and batch normalisation, resampling and the
// detection helpers. One line each in the "spatial family" block of op_table.cc.
#pragma once
#include <memory>

#include "runtime/kernel.h"

namespace onemodel::rt {

// pool.cc
std::unique_ptr<Kernel> make_max_pool(const NodeInfo& info);
std::unique_ptr<Kernel> make_average_pool(const NodeInfo& info);
std::unique_ptr<Kernel> make_global_average_pool(const NodeInfo& info);
std::unique_ptr<Kernel> make_global_max_pool(const NodeInfo& info);
// pool_lp_unpool.cc
std::unique_ptr<Kernel> make_lp_pool(const NodeInfo& info);
std::unique_ptr<Kernel> make_max_unpool(const NodeInfo& info);
// batchnorm_lrn.cc
std::unique_ptr<Kernel> make_batch_normalization(const NodeInfo& info);
std::unique_ptr<Kernel> make_lrn(const NodeInfo& info);
// resize.cc
std::unique_ptr<Kernel> make_resize(const NodeInfo& info);
std::unique_ptr<Kernel> make_upsample(const NodeInfo& info);
// grid_sample.cc
std::unique_ptr<Kernel> make_grid_sample(const NodeInfo& info);
std::unique_ptr<Kernel> make_affine_grid(const NodeInfo& info);
// roi_nms.cc
std::unique_ptr<Kernel> make_roi_align(const NodeInfo& info);
std::unique_ptr<Kernel> make_non_max_suppression(const NodeInfo& info);

}  // namespace onemodel::rt
