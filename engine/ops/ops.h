// Every operator factory, one declaration per operator, grouped by family and by the source file that defines it.
// op_table.cc maps (domain, op_type, opset range) to these in one line each; the factory reads the node's
// attributes and opset (docs/graph-runtime.md section 2). Adding an operator: docs/architecture.md.
#pragma once
#include <memory>

#include "runtime/kernel.h"

namespace onemodel::rt {

// ---- matrix products (docs/kernels-gemm.md) ----
// matmul.cc
std::unique_ptr<Kernel> make_matmul(const NodeInfo& info);
std::unique_ptr<Kernel> make_gemm(const NodeInfo& info);
std::unique_ptr<Kernel> make_fused_matmul(const NodeInfo& info);  // the `fuse-elementwise` pass

// ---- convolution family (docs/ops-conv.md) ----
// conv.cc
std::unique_ptr<Kernel> make_conv(const NodeInfo& info);
std::unique_ptr<Kernel> make_conv_transpose(const NodeInfo& info);
// col2im.cc
std::unique_ptr<Kernel> make_col2im(const NodeInfo& info);
std::unique_ptr<Kernel> make_fused_conv(const NodeInfo& info);  // the `fuse-elementwise` pass

// ---- element-wise family (docs/ops-elementwise.md) ----
// binary.cc
std::unique_ptr<Kernel> make_add(const NodeInfo& info);
std::unique_ptr<Kernel> make_sub(const NodeInfo& info);
std::unique_ptr<Kernel> make_mul(const NodeInfo& info);
std::unique_ptr<Kernel> make_div(const NodeInfo& info);
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
// activations.cc
std::unique_ptr<Kernel> make_relu(const NodeInfo& info);
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
std::unique_ptr<Kernel> make_mish(const NodeInfo& info);
std::unique_ptr<Kernel> make_swish(const NodeInfo& info);
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
// cast.cc
std::unique_ptr<Kernel> make_cast(const NodeInfo& info);
std::unique_ptr<Kernel> make_cast_like(const NodeInfo& info);
std::unique_ptr<Kernel> make_widen_weight(const NodeInfo& info);
std::unique_ptr<Kernel> make_bit_cast(const NodeInfo& info);

// ---- normalisation, softmax and reductions (docs/ops-norms.md) ----
// reduce.cc
std::unique_ptr<Kernel> make_reduce_max(const NodeInfo& info);
std::unique_ptr<Kernel> make_reduce_sum(const NodeInfo& info);
std::unique_ptr<Kernel> make_reduce_mean(const NodeInfo& info);
std::unique_ptr<Kernel> make_reduce_min(const NodeInfo& info);
std::unique_ptr<Kernel> make_reduce_prod(const NodeInfo& info);
std::unique_ptr<Kernel> make_reduce_l1(const NodeInfo& info);
std::unique_ptr<Kernel> make_reduce_l2(const NodeInfo& info);
std::unique_ptr<Kernel> make_reduce_sum_square(const NodeInfo& info);
std::unique_ptr<Kernel> make_reduce_log_sum(const NodeInfo& info);
std::unique_ptr<Kernel> make_reduce_log_sum_exp(const NodeInfo& info);
// softmax.cc
std::unique_ptr<Kernel> make_softmax(const NodeInfo& info);
std::unique_ptr<Kernel> make_log_softmax(const NodeInfo& info);
std::unique_ptr<Kernel> make_hardmax(const NodeInfo& info);
// arg_cumsum.cc
std::unique_ptr<Kernel> make_argmax(const NodeInfo& info);
std::unique_ptr<Kernel> make_argmin(const NodeInfo& info);
std::unique_ptr<Kernel> make_cumsum(const NodeInfo& info);
std::unique_ptr<Kernel> make_cumprod(const NodeInfo& info);
// norms.cc
std::unique_ptr<Kernel> make_layer_normalization(const NodeInfo& info);
std::unique_ptr<Kernel> make_rms_normalization(const NodeInfo& info);
std::unique_ptr<Kernel> make_instance_normalization(const NodeInfo& info);
std::unique_ptr<Kernel> make_group_normalization(const NodeInfo& info);
// norms.cc (not in ops-norms.md)
std::unique_ptr<Kernel> make_lp_normalization(const NodeInfo& info);
std::unique_ptr<Kernel> make_mean_variance_normalization(const NodeInfo& info);

// ---- shape and indexing (docs/ops-shape-indexing.md) ----
// views.cc
std::unique_ptr<Kernel> make_reshape(const NodeInfo& info);
std::unique_ptr<Kernel> make_identity(const NodeInfo& info);
std::unique_ptr<Kernel> make_squeeze(const NodeInfo& info);
std::unique_ptr<Kernel> make_unsqueeze(const NodeInfo& info);
std::unique_ptr<Kernel> make_flatten(const NodeInfo& info);
std::unique_ptr<Kernel> make_dropout(const NodeInfo& info);
// constant.cc
std::unique_ptr<Kernel> make_constant(const NodeInfo& info);
std::unique_ptr<Kernel> make_shape(const NodeInfo& info);
std::unique_ptr<Kernel> make_size(const NodeInfo& info);
// layout.cc
std::unique_ptr<Kernel> make_transpose(const NodeInfo& info);
std::unique_ptr<Kernel> make_expand(const NodeInfo& info);
std::unique_ptr<Kernel> make_tile(const NodeInfo& info);
std::unique_ptr<Kernel> make_depth_to_space(const NodeInfo& info);
std::unique_ptr<Kernel> make_space_to_depth(const NodeInfo& info);
std::unique_ptr<Kernel> make_reverse_sequence(const NodeInfo& info);
// concat_split.cc
std::unique_ptr<Kernel> make_concat(const NodeInfo& info);
std::unique_ptr<Kernel> make_split(const NodeInfo& info);
// slice_pad.cc
std::unique_ptr<Kernel> make_slice(const NodeInfo& info);
std::unique_ptr<Kernel> make_pad(const NodeInfo& info);
std::unique_ptr<Kernel> make_center_crop_pad(const NodeInfo& info);
// gather.cc
std::unique_ptr<Kernel> make_gather(const NodeInfo& info);
std::unique_ptr<Kernel> make_gather_elements(const NodeInfo& info);
std::unique_ptr<Kernel> make_gather_nd(const NodeInfo& info);
// scatter.cc
std::unique_ptr<Kernel> make_scatter_elements(const NodeInfo& info);
std::unique_ptr<Kernel> make_scatter_nd(const NodeInfo& info);
std::unique_ptr<Kernel> make_tensor_scatter(const NodeInfo& info);
// generators.cc
std::unique_ptr<Kernel> make_constant_of_shape(const NodeInfo& info);
std::unique_ptr<Kernel> make_range(const NodeInfo& info);
std::unique_ptr<Kernel> make_eye_like(const NodeInfo& info);
std::unique_ptr<Kernel> make_one_hot(const NodeInfo& info);
std::unique_ptr<Kernel> make_trilu(const NodeInfo& info);
// selection.cc
std::unique_ptr<Kernel> make_non_zero(const NodeInfo& info);
std::unique_ptr<Kernel> make_top_k(const NodeInfo& info);
std::unique_ptr<Kernel> make_compress(const NodeInfo& info);
std::unique_ptr<Kernel> make_unique_op(const NodeInfo& info);
// einsum.cc
std::unique_ptr<Kernel> make_einsum(const NodeInfo& info);

// ---- spatial: pooling, batch normalisation, resampling, detection helpers (docs/ops-conv.md) ----
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

// ---- recurrent (docs/ops-recurrent.md) and quantization (docs/int8.md) families ----
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

// ---- attention operators (docs/ops-newer.md) ----
// attention_onnx.cc
std::unique_ptr<Kernel> make_attention(const NodeInfo& info);
// rotary.cc
std::unique_ptr<Kernel> make_rotary_embedding(const NodeInfo& info);

// ---- losses, Det, signal (docs/ops-coverage.md) and the fused nodes of graph passes (docs/graph-passes.md) ----
// loss.cc
std::unique_ptr<Kernel> make_negative_log_likelihood_loss(const NodeInfo& info);
std::unique_ptr<Kernel> make_softmax_cross_entropy_loss(const NodeInfo& info);
// tfidf.cc
std::unique_ptr<Kernel> make_tfidf_vectorizer(const NodeInfo& info);
// det.cc
std::unique_ptr<Kernel> make_det(const NodeInfo& info);
// signal.cc
std::unique_ptr<Kernel> make_dft(const NodeInfo& info);
std::unique_ptr<Kernel> make_stft(const NodeInfo& info);
std::unique_ptr<Kernel> make_hann_window(const NodeInfo& info);
std::unique_ptr<Kernel> make_hamming_window(const NodeInfo& info);
std::unique_ptr<Kernel> make_blackman_window(const NodeInfo& info);
std::unique_ptr<Kernel> make_mel_weight_matrix(const NodeInfo& info);
// attention.cc (the `attention` pass)
std::unique_ptr<Kernel> make_fused_attention(const NodeInfo& info);
// fused_elementwise.cc (`fuse-elementwise`)
std::unique_ptr<Kernel> make_fused_elementwise(const NodeInfo& info);

// ---- control flow, sequences and optionals (docs/graph-runtime.md section 8) ----
// sequence_ops.cc
std::unique_ptr<Kernel> make_sequence_empty(const NodeInfo& info);
std::unique_ptr<Kernel> make_sequence_construct(const NodeInfo& info);
std::unique_ptr<Kernel> make_sequence_insert(const NodeInfo& info);
std::unique_ptr<Kernel> make_sequence_erase(const NodeInfo& info);
std::unique_ptr<Kernel> make_sequence_at(const NodeInfo& info);
std::unique_ptr<Kernel> make_sequence_length(const NodeInfo& info);
std::unique_ptr<Kernel> make_split_to_sequence(const NodeInfo& info);
std::unique_ptr<Kernel> make_concat_from_sequence(const NodeInfo& info);
std::unique_ptr<Kernel> make_optional(const NodeInfo& info);
std::unique_ptr<Kernel> make_optional_has_element(const NodeInfo& info);
std::unique_ptr<Kernel> make_optional_get_element(const NodeInfo& info);
// control_flow.cc
std::unique_ptr<Kernel> make_if(const NodeInfo& info);
std::unique_ptr<Kernel> make_loop(const NodeInfo& info);
std::unique_ptr<Kernel> make_scan(const NodeInfo& info);
std::unique_ptr<Kernel> make_sequence_map(const NodeInfo& info);

}  // namespace onemodel::rt
