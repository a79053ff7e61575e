// The static operator table (graph-runtime.md section 2): one OpDef per operator, its first supported opset to
// the last; the factory reads the node's opset and handles every version in the range (the comments name what
// changed at which opset). A second line for an operator exists only for a different factory (Scatter) or a
// gap; ranges never overlap. kLatest is the newest ai.onnx opset this table vouches for: a model importing a
// later one is reported, not guessed at.
#include <array>

#include "ops/ops.h"

namespace onemodel::rt {
namespace {

constexpr int kLatest = 25;

constexpr std::array kTable = {
    // ---- matrix products (kernels-gemm.md) ----
    OpDef{"", "MatMul", 1, kLatest, make_matmul},
    OpDef{"", "Gemm", 7, kLatest, make_gemm},  // C required before 11 (checked by the kernel)

    // ---- convolution family (ops-conv.md, kernels-gemm.md, kernels-depthwise.md): keep this family's lines here ----
    OpDef{"", "Conv", 1, kLatest, make_conv},                     // float32, 1-3 spatial axes
    OpDef{"", "ConvTranspose", 1, kLatest, make_conv_transpose},  // float32, 1-3 spatial axes
    OpDef{"", "Col2Im", 18, kLatest, make_col2im},                // float32, 1-3 spatial axes

    // ---- element-wise family (ops-elementwise.md): keep this family's lines inside this block ----
    OpDef{"", "Add", 7, kLatest, make_add},
    OpDef{"", "Sub", 7, kLatest, make_sub},
    OpDef{"", "Mul", 7, kLatest, make_mul},
    OpDef{"", "Div", 7, kLatest, make_div},
    OpDef{"", "Mod", 10, kLatest, make_mod},  // fmod = 0 integers only
    OpDef{"", "Pow", 7, kLatest, make_pow},   // exact only for a constant exponent of 2
    OpDef{"", "BitShift", 11, kLatest, make_bit_shift},
    OpDef{"", "BitwiseAnd", 18, kLatest, make_bitwise_and},
    OpDef{"", "BitwiseOr", 18, kLatest, make_bitwise_or},
    OpDef{"", "BitwiseXor", 18, kLatest, make_bitwise_xor},
    OpDef{"", "BitwiseNot", 18, kLatest, make_bitwise_not},
    OpDef{"", "Max", 6, kLatest, make_max},
    OpDef{"", "Min", 6, kLatest, make_min},
    OpDef{"", "Sum", 6, kLatest, make_sum},
    OpDef{"", "Mean", 6, kLatest, make_mean},
    OpDef{"", "Neg", 6, kLatest, make_neg},
    OpDef{"", "Abs", 6, kLatest, make_abs},
    OpDef{"", "Sign", 9, kLatest, make_sign},
    OpDef{"", "Reciprocal", 6, kLatest, make_reciprocal},
    OpDef{"", "Sqrt", 6, kLatest, make_sqrt},
    OpDef{"", "Floor", 6, kLatest, make_floor},
    OpDef{"", "Ceil", 6, kLatest, make_ceil},
    OpDef{"", "Round", 11, kLatest, make_round},
    OpDef{"", "Exp", 6, kLatest, make_exp},
    OpDef{"", "Log", 6, kLatest, make_log},
    OpDef{"", "Tanh", 6, kLatest, make_tanh},
    OpDef{"", "Sigmoid", 6, kLatest, make_sigmoid},
    OpDef{"", "Erf", 9, kLatest, make_erf},
    OpDef{"", "IsNaN", 9, kLatest, make_is_nan},
    OpDef{"", "IsInf", 10, kLatest, make_is_inf},
    OpDef{"", "Not", 1, kLatest, make_not},
    OpDef{"", "Sin", 7, kLatest, make_sin},  // libm: fast mode only (also the next ten)
    OpDef{"", "Cos", 7, kLatest, make_cos},
    OpDef{"", "Tan", 7, kLatest, make_tan},
    OpDef{"", "Asin", 7, kLatest, make_asin},
    OpDef{"", "Acos", 7, kLatest, make_acos},
    OpDef{"", "Atan", 7, kLatest, make_atan},
    OpDef{"", "Sinh", 9, kLatest, make_sinh},
    OpDef{"", "Cosh", 9, kLatest, make_cosh},
    OpDef{"", "Asinh", 9, kLatest, make_asinh},
    OpDef{"", "Acosh", 9, kLatest, make_acosh},
    OpDef{"", "Atanh", 9, kLatest, make_atanh},
    OpDef{"", "Relu", 6, kLatest, make_relu},
    OpDef{"", "Gelu", 20, kLatest, make_gelu},
    OpDef{"", "LeakyRelu", 6, kLatest, make_leaky_relu},
    OpDef{"", "HardSigmoid", 6, kLatest, make_hard_sigmoid},
    OpDef{"", "HardSwish", 14, kLatest, make_hard_swish},
    OpDef{"", "Softsign", 1, kLatest, make_softsign},
    OpDef{"", "ThresholdedRelu", 10, kLatest, make_thresholded_relu},
    OpDef{"", "Shrink", 9, kLatest, make_shrink},
    OpDef{"", "PRelu", 7, kLatest, make_prelu},
    OpDef{"", "Elu", 6, kLatest, make_elu},  // exact: on kern::exact_exp / exact_log (also Selu, Celu, Softplus)
    OpDef{"", "Selu", 6, kLatest, make_selu},
    OpDef{"", "Celu", 12, kLatest, make_celu},
    OpDef{"", "Softplus", 1, kLatest, make_softplus},
    OpDef{"", "Mish", 18, kLatest, make_mish},  // ops-newer.md: float32, float16 (also Swish)
    OpDef{"", "Swish", 24, kLatest, make_swish},
    OpDef{"", "Equal", 7, kLatest, make_equal},
    OpDef{"", "Less", 7, kLatest, make_less},
    OpDef{"", "Greater", 7, kLatest, make_greater},
    OpDef{"", "LessOrEqual", 12, kLatest, make_less_or_equal},
    OpDef{"", "GreaterOrEqual", 12, kLatest, make_greater_or_equal},
    OpDef{"", "And", 7, kLatest, make_and},
    OpDef{"", "Or", 7, kLatest, make_or},
    OpDef{"", "Xor", 7, kLatest, make_xor},
    OpDef{"", "Where", 9, kLatest, make_where},
    // opset 6: bounds are the attributes min / max; 11: bounds are optional scalar inputs
    OpDef{"", "Clip", 6, kLatest, make_clip},
    OpDef{"", "Cast", 6, kLatest, make_cast},  // opset 19: saturate (float8 only; those types are Unsupported)
    OpDef{"", "CastLike", 15, kLatest, make_cast_like},
    // opset 26 (after kLatest: a model importing 26 is refused as a whole, ops-newer.md section 1); also CumProd
    OpDef{"", "BitCast", 26, 26, make_bit_cast},
    // ---- end of element-wise family ----

    // ---- normalisation, softmax and reduction family (ops-norms.md): keep its lines inside this block ----
    // opset 1: coerce to 2-D at axis (default 1); 13: one axis (default -1)
    OpDef{"", "Softmax", 1, kLatest, make_softmax},
    OpDef{"", "LogSoftmax", 1, kLatest, make_log_softmax},
    OpDef{"", "Hardmax", 1, kLatest, make_hardmax},
    // opset 1: axes attribute; 13: axes input, noop_with_empty_axes
    OpDef{"", "ReduceSum", 1, kLatest, make_reduce_sum},
    // opset 1: axes attribute (all Reduce* below: 18+ axes input)
    OpDef{"", "ReduceMean", 1, kLatest, make_reduce_mean},
    OpDef{"", "ReduceMax", 1, kLatest, make_reduce_max},
    OpDef{"", "ReduceMin", 1, kLatest, make_reduce_min},
    OpDef{"", "ReduceProd", 1, kLatest, make_reduce_prod},
    OpDef{"", "ReduceL1", 1, kLatest, make_reduce_l1},
    OpDef{"", "ReduceL2", 1, kLatest, make_reduce_l2},
    OpDef{"", "ReduceSumSquare", 1, kLatest, make_reduce_sum_square},
    OpDef{"", "ReduceLogSum", 1, kLatest, make_reduce_log_sum},
    OpDef{"", "ReduceLogSumExp", 1, kLatest, make_reduce_log_sum_exp},
    OpDef{"", "ArgMax", 1, kLatest, make_argmax},   // opset 12: select_last_index
    OpDef{"", "ArgMin", 1, kLatest, make_argmin},   // opset 12: select_last_index
    OpDef{"", "CumSum", 11, kLatest, make_cumsum},  // exclusive, reverse; axis input
    OpDef{"", "CumProd", 26, 26, make_cumprod},
    OpDef{"", "LayerNormalization", 17, kLatest, make_layer_normalization},
    OpDef{"", "RMSNormalization", 23, kLatest, make_rms_normalization},
    OpDef{"", "InstanceNormalization", 6, kLatest, make_instance_normalization},
    // opset 18: scale and bias per group; 21: scale and bias per channel
    OpDef{"", "GroupNormalization", 18, kLatest, make_group_normalization},
    OpDef{"", "MeanVarianceNormalization", 9, kLatest, make_mean_variance_normalization},
    OpDef{"", "LpNormalization", 1, kLatest, make_lp_normalization},
    // ---- end of normalisation family ----

    // ---- recurrent family (ops-recurrent.md): keep its lines inside this block ----
    OpDef{"", "RNN", 7, kLatest, make_rnn},  // layout from 14 (absent before: 0)
    OpDef{"", "GRU", 7, kLatest, make_gru},
    OpDef{"", "LSTM", 7, kLatest, make_lstm},
    // ---- end of recurrent family ----

    // ---- quantization family (int8.md): keep its lines inside this block ----
    OpDef{"", "QuantizeLinear", 10, kLatest, make_quantize_linear},      // axis from 13; output_dtype from 21
    OpDef{"", "DequantizeLinear", 10, kLatest, make_dequantize_linear},  // axis from 13
    OpDef{"", "DynamicQuantizeLinear", 11, kLatest, make_dynamic_quantize_linear},
    OpDef{"", "MatMulInteger", 10, kLatest, make_matmul_integer},
    OpDef{"", "QLinearMatMul", 10, kLatest, make_qlinear_matmul},
    OpDef{"", "ConvInteger", 10, kLatest, make_conv_integer},
    OpDef{"", "QLinearConv", 10, kLatest, make_qlinear_conv},
    // ---- end of quantization family ----

    // ---- shape and indexing family (ops-shape-indexing.md): keep its lines inside this block ----
    OpDef{"", "Reshape", 5, kLatest, make_reshape},  // opset 14: allowzero
    OpDef{"", "Identity", 1, kLatest, make_identity},
    OpDef{"", "Constant", 1, kLatest, make_constant},
    OpDef{"", "Shape", 1, kLatest, make_shape},  // opset 15: start / end
    OpDef{"", "Size", 1, kLatest, make_size},
    OpDef{"", "Squeeze", 1, kLatest, make_squeeze},      // opset 1: axes attribute; 13: axes input
    OpDef{"", "Unsqueeze", 1, kLatest, make_unsqueeze},  // opset 1: axes attribute; 13: axes input
    OpDef{"", "Flatten", 1, kLatest, make_flatten},
    // opset 1: ratio attribute; 12: ratio and training_mode inputs
    OpDef{"", "Dropout", 1, kLatest, make_dropout},
    OpDef{"", "Transpose", 1, kLatest, make_transpose},
    OpDef{"", "Expand", 8, kLatest, make_expand},
    OpDef{"", "Tile", 6, kLatest, make_tile},
    OpDef{"", "DepthToSpace", 1, kLatest, make_depth_to_space},  // opset 11: mode
    OpDef{"", "SpaceToDepth", 1, kLatest, make_space_to_depth},
    OpDef{"", "ReverseSequence", 10, kLatest, make_reverse_sequence},
    OpDef{"", "Concat", 1, kLatest, make_concat},
    OpDef{"", "Split", 1, kLatest, make_split},  // opset 1: split attribute; 13: split input; 18: num_outputs
    OpDef{"", "Slice", 1, kLatest, make_slice},  // opset 1: attributes; 10: inputs, steps
    // opset 1: attributes; 11: pads / constant_value inputs; 18: axes input; wrap from 19
    OpDef{"", "Pad", 1, kLatest, make_pad},
    OpDef{"", "CenterCropPad", 18, kLatest, make_center_crop_pad},
    OpDef{"", "Gather", 1, kLatest, make_gather},  // opset 11: negative indices
    OpDef{"", "GatherElements", 11, kLatest, make_gather_elements},
    OpDef{"", "GatherND", 11, kLatest, make_gather_nd},  // opset 12: batch_dims
    OpDef{"", "Scatter", 9, 10, make_scatter_elements},  // deprecated alias of ScatterElements
    // opset 16: reduction add/mul; 18: reduction max/min
    OpDef{"", "ScatterElements", 11, kLatest, make_scatter_elements},
    OpDef{"", "ScatterND", 11, kLatest, make_scatter_nd},  // opset 16: reduction add/mul; 18: reduction max/min
    OpDef{"", "TensorScatter", 24, kLatest, make_tensor_scatter},
    OpDef{"", "ConstantOfShape", 9, kLatest, make_constant_of_shape},
    OpDef{"", "Range", 11, kLatest, make_range},
    OpDef{"", "EyeLike", 9, kLatest, make_eye_like},
    OpDef{"", "OneHot", 9, kLatest, make_one_hot},  // opset 11: negative indices
    OpDef{"", "Trilu", 14, kLatest, make_trilu},
    OpDef{"", "NonZero", 9, kLatest, make_non_zero},
    OpDef{"", "TopK", 1, kLatest, make_top_k},         // opset 1: k attribute; 10: K input; 11: largest, sorted
    OpDef{"", "Compress", 9, kLatest, make_compress},  // opset 11: negative axis
    OpDef{"", "Unique", 11, kLatest, make_unique_op},
    OpDef{"", "Einsum", 12, kLatest, make_einsum},
    // ---- end of shape and indexing family ----

    // ---- spatial family (ops-conv.md pooling/BatchNormalization/Resize, ops-coverage.md): keep its lines inside this
    // block ----
    // opset 8: Indices output, storage_order; 10: ceil_mode, dilations; 12: int8, uint8
    OpDef{"", "MaxPool", 1, kLatest, make_max_pool},
    // opset 7: count_include_pad; 10: ceil_mode; 19: dilations
    OpDef{"", "AveragePool", 1, kLatest, make_average_pool},
    OpDef{"", "GlobalAveragePool", 1, kLatest, make_global_average_pool},
    OpDef{"", "GlobalMaxPool", 1, kLatest, make_global_max_pool},
    // opset 1: p is a float; 2: p is an int; not exact; 18: ceil_mode, dilations
    OpDef{"", "LpPool", 1, kLatest, make_lp_pool},
    OpDef{"", "MaxUnpool", 9, kLatest, make_max_unpool},
    // opset 7: spatial; 14: training_mode (Unsupported)
    OpDef{"", "BatchNormalization", 7, kLatest, make_batch_normalization},
    OpDef{"", "LRN", 1, kLatest, make_lrn},  // not exact
    // opset 10: X, scales; asymmetric, nearest floor; 11: roi, sizes, coordinate modes, cubic;
    //   18: antialias, axes, keep_aspect_ratio_policy; 19: half_pixel_symmetric
    OpDef{"", "Resize", 10, kLatest, make_resize},
    OpDef{"", "Upsample", 7, 10, make_upsample},  // opset 7: scales attribute; 9: scales input
    // opset 16: 4-D only; bilinear/nearest/bicubic; not exact; 20: any spatial rank; linear/nearest/cubic
    OpDef{"", "GridSample", 16, kLatest, make_grid_sample},
    OpDef{"", "AffineGrid", 20, kLatest, make_affine_grid},
    // opset 10: output_half_pixel; not exact; 16: coordinate_transformation_mode (half_pixel)
    OpDef{"", "RoiAlign", 10, kLatest, make_roi_align},
    OpDef{"", "NonMaxSuppression", 10, kLatest, make_non_max_suppression},
    // ---- end of spatial family ----

    // ---- attention operators (ops-newer.md sections 7 and 9) ----
    OpDef{"", "RotaryEmbedding", 23, kLatest, make_rotary_embedding},  // float32
    OpDef{"", "Attention", 23, kLatest, make_attention},               // float32; opset 24: nonpad_kv_seqlen
    // ---- end of attention operators ----

    // ---- losses, Det and signal operators (ops-coverage.md) ----
    OpDef{"", "NegativeLogLikelihoodLoss", 12, kLatest, make_negative_log_likelihood_loss},
    OpDef{"", "SoftmaxCrossEntropyLoss", 12, kLatest, make_softmax_cross_entropy_loss},  // fast only
    OpDef{"", "Det", 11, kLatest, make_det},
    OpDef{"", "TfIdfVectorizer", 9, kLatest, make_tfidf_vectorizer},  // integer pools
    OpDef{"", "DFT", 17, 19, make_dft},                               // fast only (also the next five)
    OpDef{"", "STFT", 17, kLatest, make_stft},
    OpDef{"", "HannWindow", 17, kLatest, make_hann_window},
    OpDef{"", "HammingWindow", 17, kLatest, make_hamming_window},
    OpDef{"", "BlackmanWindow", 17, kLatest, make_blackman_window},
    OpDef{"", "MelWeightMatrix", 17, kLatest, make_mel_weight_matrix},
    // ---- end of losses, Det and signal operators ----

    // ---- control flow, sequences and optionals (graph-runtime.md section 8; ops/value_kernel.h) ----
    OpDef{"", "If", 1, kLatest, make_if},
    OpDef{"", "Loop", 1, kLatest, make_loop},
    // opset 8: batch axis, sequence_lens, directions; 9: axes and directions per input and output
    OpDef{"", "Scan", 8, kLatest, make_scan},
    OpDef{"", "SequenceMap", 17, kLatest, make_sequence_map},
    OpDef{"", "SequenceEmpty", 11, kLatest, make_sequence_empty},
    OpDef{"", "SequenceConstruct", 11, kLatest, make_sequence_construct},
    OpDef{"", "SequenceInsert", 11, kLatest, make_sequence_insert},
    OpDef{"", "SequenceErase", 11, kLatest, make_sequence_erase},
    OpDef{"", "SequenceAt", 11, kLatest, make_sequence_at},
    OpDef{"", "SequenceLength", 11, kLatest, make_sequence_length},
    OpDef{"", "SplitToSequence", 11, kLatest, make_split_to_sequence},
    OpDef{"", "ConcatFromSequence", 11, kLatest, make_concat_from_sequence},
    OpDef{"", "Optional", 15, kLatest, make_optional},
    OpDef{"", "OptionalHasElement", 15, kLatest, make_optional_has_element},  // 18: any input, or none
    OpDef{"", "OptionalGetElement", 15, kLatest, make_optional_get_element},  // 18: tensors pass through
    // ---- end of control flow ----

    // ---- fused operators the graph passes produce (passes/, graph-passes.md; domain "onemodel") ----
    OpDef{"onemodel", "FusedAttention", 1, 1, make_fused_attention},  // fast only
    OpDef{"onemodel", "FusedConv", 1, 1, make_fused_conv},
    OpDef{"onemodel", "FusedMatMul", 1, 1, make_fused_matmul},
    OpDef{"onemodel", "FusedElementwise", 1, 1, make_fused_elementwise},
    // ---- made by the weight compaction (passes/compact_weights.cc, docs/fp16.md) ----
    OpDef{"onemodel", "WidenWeight", 1, 1, make_widen_weight},
};

bool same_domain(std::string_view a, std::string_view b) {
  auto norm = [](std::string_view d) { return d == "ai.onnx" ? std::string_view{} : d; };
  return norm(a) == norm(b);
}

}  // namespace

std::span<const OpDef> op_table() { return kTable; }

const OpDef* find_op(std::string_view domain, std::string_view op_type, int64_t opset) {
  for (const OpDef& d : kTable)
    if (d.op_type == op_type && same_domain(d.domain, domain) && opset >= d.min_opset && opset <= d.max_opset)
      return &d;
  return nullptr;
}

}  // namespace onemodel::rt
