// The static operator table (graph-runtime.md section 2): one OpDef per operator and opset range. Ranges of
// one operator never overlap; a lookup picks the line whose range holds the node's opset. kLatest is the
// newest ai.onnx opset this table vouches for: a model importing a later one is reported, not guessed at.
#include <array>

#include "ops/ops.h"

#include "ops/elementwise_ops.h"

#include "ops/norm_ops.h"

#include "ops/shape_ops.h"

namespace onemodel::rt {
namespace {

constexpr int kLatest = 25;

constexpr std::array kTable = {
    // ---- matrix products (kernels-gemm.md) ----
    OpDef{"", "MatMul", 1, kLatest, make_matmul},
    OpDef{"", "Gemm", 7, kLatest, make_gemm},            // C required before 11 (checked by the kernel)

    // ---- element-wise family (ops-elementwise.md): keep this family's lines inside this block ----
    OpDef{"", "Add", 7, kLatest, make_add},
    OpDef{"", "Sub", 7, kLatest, make_sub},
    OpDef{"", "Mul", 7, kLatest, make_mul},
    OpDef{"", "Div", 7, kLatest, make_div},
    OpDef{"", "Relu", 6, kLatest, make_relu},
    OpDef{"", "Cast", 6, 12, make_cast},
    OpDef{"", "Cast", 13, 18, make_cast},
    OpDef{"", "Cast", 19, kLatest, make_cast},           // saturate (float8 only; those types are Unsupported)
    // ---- end of element-wise family ----

    // ---- normalisation, softmax and reduction family (ops-norms.md): keep its lines inside this block ----
    OpDef{"", "Softmax", 1, 12, make_softmax},           // coerce to 2-D at axis (default 1)
    OpDef{"", "Softmax", 13, kLatest, make_softmax},     // one axis (default -1)
    OpDef{"", "ReduceMax", 1, 17, make_reduce_max},      // axes attribute
    OpDef{"", "ReduceMax", 18, kLatest, make_reduce_max},  // axes input, noop_with_empty_axes
    // ---- end of normalisation family ----

    // ---- shape and indexing family (ops-shape-indexing.md): keep its lines inside this block ----
    OpDef{"", "Reshape", 5, 13, make_reshape},
    OpDef{"", "Reshape", 14, kLatest, make_reshape},     // allowzero
    OpDef{"", "Identity", 1, kLatest, make_identity},
    OpDef{"", "Constant", 1, kLatest, make_constant},
    OpDef{"", "Shape", 1, 14, make_shape},
    OpDef{"", "Shape", 15, kLatest, make_shape},         // start / end
    OpDef{"", "Size", 1, 12, make_size},
    OpDef{"", "Size", 13, 18, make_size},
    OpDef{"", "Size", 19, kLatest, make_size},
    OpDef{"", "Squeeze", 1, 12, make_squeeze},            // axes attribute
    OpDef{"", "Squeeze", 13, kLatest, make_squeeze},      // axes input
    OpDef{"", "Unsqueeze", 1, 12, make_unsqueeze},        // axes attribute
    OpDef{"", "Unsqueeze", 13, kLatest, make_unsqueeze},  // axes input
    OpDef{"", "Flatten", 1, kLatest, make_flatten},
    OpDef{"", "Dropout", 1, 11, make_dropout},            // ratio attribute
    OpDef{"", "Dropout", 12, kLatest, make_dropout},      // ratio and training_mode inputs
    OpDef{"", "Transpose", 1, kLatest, make_transpose},
    OpDef{"", "Expand", 8, kLatest, make_expand},
    OpDef{"", "Tile", 6, kLatest, make_tile},
    OpDef{"", "DepthToSpace", 1, 10, make_depth_to_space},
    OpDef{"", "DepthToSpace", 11, kLatest, make_depth_to_space},  // mode
    OpDef{"", "SpaceToDepth", 1, kLatest, make_space_to_depth},
    OpDef{"", "ReverseSequence", 10, kLatest, make_reverse_sequence},
    OpDef{"", "Concat", 1, kLatest, make_concat},
    OpDef{"", "Split", 1, 12, make_split},                // split attribute
    OpDef{"", "Split", 13, 17, make_split},               // split input
    OpDef{"", "Split", 18, kLatest, make_split},          // num_outputs
    OpDef{"", "Slice", 1, 9, make_slice},                 // attributes
    OpDef{"", "Slice", 10, kLatest, make_slice},          // inputs, steps
    OpDef{"", "Pad", 1, 10, make_pad},                    // attributes
    OpDef{"", "Pad", 11, 17, make_pad},                   // pads / constant_value inputs
    OpDef{"", "Pad", 18, kLatest, make_pad},              // axes input; wrap from 19
    OpDef{"", "Gather", 1, 10, make_gather},
    OpDef{"", "Gather", 11, 12, make_gather},             // negative indices
    OpDef{"", "Gather", 13, kLatest, make_gather},
    OpDef{"", "GatherElements", 11, 12, make_gather_elements},
    OpDef{"", "GatherElements", 13, kLatest, make_gather_elements},
    OpDef{"", "GatherND", 11, 11, make_gather_nd},
    OpDef{"", "GatherND", 12, kLatest, make_gather_nd},   // batch_dims
    OpDef{"", "Scatter", 9, 10, make_scatter_elements},   // deprecated alias of ScatterElements
    OpDef{"", "ScatterElements", 11, 15, make_scatter_elements},
    OpDef{"", "ScatterElements", 16, 17, make_scatter_elements},  // reduction add/mul
    OpDef{"", "ScatterElements", 18, kLatest, make_scatter_elements},  // reduction max/min
    OpDef{"", "ScatterND", 11, 15, make_scatter_nd},
    OpDef{"", "ScatterND", 16, 17, make_scatter_nd},      // reduction add/mul
    OpDef{"", "ScatterND", 18, kLatest, make_scatter_nd}, // reduction max/min
    OpDef{"", "ConstantOfShape", 9, kLatest, make_constant_of_shape},
    OpDef{"", "Range", 11, kLatest, make_range},
    OpDef{"", "EyeLike", 9, kLatest, make_eye_like},
    OpDef{"", "OneHot", 9, 10, make_one_hot},
    OpDef{"", "OneHot", 11, kLatest, make_one_hot},       // negative indices
    OpDef{"", "Trilu", 14, kLatest, make_trilu},
    OpDef{"", "NonZero", 9, 12, make_non_zero},
    OpDef{"", "NonZero", 13, kLatest, make_non_zero},
    OpDef{"", "TopK", 1, 9, make_top_k},                  // k attribute
    OpDef{"", "TopK", 10, 10, make_top_k},                // K input
    OpDef{"", "TopK", 11, kLatest, make_top_k},           // largest, sorted
    OpDef{"", "Compress", 9, 10, make_compress},
    OpDef{"", "Compress", 11, kLatest, make_compress},    // negative axis
    OpDef{"", "Unique", 11, kLatest, make_unique_op},
    OpDef{"", "Einsum", 12, kLatest, make_einsum},
    // ---- end of shape and indexing family ----
};

bool same_domain(std::string_view a, std::string_view b) {
  auto norm = [](std::string_view d) { return d == "ai.onnx" ? std::string_view{} : d; };
  return norm(a) == norm(b);
}

}  // namespace

std::span<const OpDef> op_table() { return kTable; }

const OpDef* find_op(std::string_view domain, std::string_view op_type, int64_t opset) {
  for (const OpDef& d : kTable)
    if (d.op_type == op_type && same_domain(d.domain, domain) && opset >= d.min_opset && opset <= d.max_opset) return &d;
  return nullptr;
}

}  // namespace onemodel::rt
