// FusedElementwise (domain "onemodel"; the `fuse-elementwise` pass, docs/architecture.md "Fused element-wise
// programs"): a chain of float32 element-wise operators run as one program over its inputs broadcast together
// (ops/ew_program.h), one pass over memory instead of one per operator, with the bits of the unfused chain in both
// modes.
#include "ops/elementwise_common.h"
#include "ops/ew_program.h"
#include "ops/ops.h"

namespace onemodel::rt {
namespace {

class FusedElementwiseKernel final : public Kernel {
 public:
  explicit FusedElementwiseKernel(ir::EwProgram p)
      : Kernel(KernelFlags{.exact = true}), prog_(kern::ew_plan(std::move(p))) {}

  void infer(InferContext& ctx) const override {
    ew::require_inputs(ctx, ctx.inputs.size());
    if (ctx.inputs.empty()) ctx.fail(ErrorKind::InvalidModel, "expects at least one input");
    std::vector<const Shape*> s;
    for (size_t i = 0; i < ctx.inputs.size(); ++i) {
      ew::check_type(ctx.info, ctx.input(i).dtype, ew::kF32);
      s.push_back(&ctx.input(i).shape);
    }
    ctx.set_output(0, DType::F32, ew::broadcast_all(ctx.info, s, ErrorKind::InvalidModel));
  }

  void run(RunContext& ctx) const override {
    Tensor& out = ctx.output(0);
    std::vector<const Shape*> s;
    std::vector<const Tensor*> in;
    for (const Tensor& t : ctx.inputs) {
      if (t.dtype() != DType::F32 || !t.is_contiguous())
        ctx.fail(ErrorKind::InvalidInput, "inputs must be contiguous float32 tensors");
      s.push_back(&t.shape());
      in.push_back(&t);
    }
    ew::check_run_shapes(ctx, s, out);
    ewp::run_broadcast(prog_, ctx.isa, ctx.exact, in, out, ctx.pool);
  }

 private:
  kern::EwPlan prog_;
};

}  // namespace

std::unique_ptr<Kernel> make_fused_elementwise(const NodeInfo& info) {
  if (info.num_inputs() > static_cast<size_t>(ir::kEwMaxInputs))
    info.fail(ErrorKind::InvalidModel, "more than " + std::to_string(ir::kEwMaxInputs) + " inputs");
  return std::make_unique<FusedElementwiseKernel>(ewp::read_program(info, info.num_inputs()));
}

}  // namespace onemodel::rt
