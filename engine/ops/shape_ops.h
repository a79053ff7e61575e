// Factories of the shape and indexing operators (ops-shape-indexing.md) beyond those in ops.h, one line each in op_table.cc.
#pragma once
#include <memory>

#include "runtime/kernel.h"

namespace onemodel::rt {

std::unique_ptr<Kernel> make_size(const NodeInfo& info);             // constant.cc
std::unique_ptr<Kernel> make_squeeze(const NodeInfo& info);          // views.cc
std::unique_ptr<Kernel> make_unsqueeze(const NodeInfo& info);
std::unique_ptr<Kernel> make_flatten(const NodeInfo& info);
std::unique_ptr<Kernel> make_dropout(const NodeInfo& info);
std::unique_ptr<Kernel> make_transpose(const NodeInfo& info);        // layout.cc
std::unique_ptr<Kernel> make_expand(const NodeInfo& info);
std::unique_ptr<Kernel> make_tile(const NodeInfo& info);
std::unique_ptr<Kernel> make_depth_to_space(const NodeInfo& info);
std::unique_ptr<Kernel> make_space_to_depth(const NodeInfo& info);
std::unique_ptr<Kernel> make_reverse_sequence(const NodeInfo& info);
std::unique_ptr<Kernel> make_concat(const NodeInfo& info);           // concat_split.cc
std::unique_ptr<Kernel> make_split(const NodeInfo& info);
std::unique_ptr<Kernel> make_slice(const NodeInfo& info);            // slice_pad.cc
std::unique_ptr<Kernel> make_pad(const NodeInfo& info);
std::unique_ptr<Kernel> make_gather(const NodeInfo& info);           // gather.cc
std::unique_ptr<Kernel> make_gather_elements(const NodeInfo& info);
std::unique_ptr<Kernel> make_gather_nd(const NodeInfo& info);
std::unique_ptr<Kernel> make_scatter_elements(const NodeInfo& info); // scatter.cc
std::unique_ptr<Kernel> make_scatter_nd(const NodeInfo& info);
std::unique_ptr<Kernel> make_constant_of_shape(const NodeInfo& info);  // generators.cc
std::unique_ptr<Kernel> make_range(const NodeInfo& info);
std::unique_ptr<Kernel> make_eye_like(const NodeInfo& info);
std::unique_ptr<Kernel> make_one_hot(const NodeInfo& info);
std::unique_ptr<Kernel> make_trilu(const NodeInfo& info);
std::unique_ptr<Kernel> make_non_zero(const NodeInfo& info);         // selection.cc
std::unique_ptr<Kernel> make_top_k(const NodeInfo& info);
std::unique_ptr<Kernel> make_compress(const NodeInfo& info);
std::unique_ptr<Kernel> make_unique_op(const NodeInfo& info);
std::unique_ptr<Kernel> make_einsum(const NodeInfo& info);           // einsum.cc

}  // namespace onemodel::rt
