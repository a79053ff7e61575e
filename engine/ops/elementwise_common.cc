// Out-of-line checks of the element-wise family (ops/elementwise_common.h): one wording for every operator.
#include "ops/elementwise_common.h"

namespace onemodel::rt::ew {

Shape broadcast_all(const NodeInfo& info, std::span<const Shape* const> shapes, ErrorKind kind) {
  Shape s = *shapes[0];
  std::string listed = s.to_string();
  for (size_t i = 1; i < shapes.size(); ++i) {
    listed += " and " + shapes[i]->to_string();
    try {
      s = Shape::broadcast(s, *shapes[i]);
    } catch (const Error&) {
      info.fail(kind, "inputs of shapes " + listed + " do not broadcast");
    }
  }
  return s;
}

void check_run_shapes(const RunContext& ctx, std::span<const Shape* const> shapes, const Tensor& out) {
  if (broadcast_all(ctx.info, shapes, ErrorKind::InvalidInput) != out.shape())
    ctx.fail(ErrorKind::InvalidInput, "inputs do not match the planned output " + out.shape().to_string());
}

void check_type(const NodeInfo& info, DType t, uint32_t types, const char* what) {
  if (static_cast<int>(t) < 0 || static_cast<int>(t) >= 32 || !(types & bit(t)))
    info.fail(ErrorKind::Unsupported, std::string(what) + " " + type_str(t) + " is not supported");
}

void require_inputs(const InferContext& ctx, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (!ctx.has_input(i))
      ctx.fail(ErrorKind::InvalidModel, "expects " + std::to_string(n) + " input" + (n == 1 ? "" : "s") +
                                            ", input " + std::to_string(i) + " is missing");
}

void require_same_type(const InferContext& ctx, size_t first, size_t last) {
  const DType t = ctx.input(first).dtype;
  for (size_t i = first + 1; i < last; ++i)
    if (ctx.has_input(i) && ctx.input(i).dtype != t)
      ctx.fail(ErrorKind::InvalidModel, "input types differ: " + type_str(t) + " and " + type_str(ctx.input(i).dtype));
}

}  // namespace onemodel::rt::ew
