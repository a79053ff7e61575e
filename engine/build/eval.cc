#include "build/eval.h"

#include "runtime/arena.h"

namespace onemodel::build {

std::vector<Tensor> evaluate_node(const rt::Kernel& kernel, const ir::Node& node, std::span<const rt::InputMeta> inputs,
                                  std::span<const rt::OutputMeta> outs, bool exact, kern::Isa isa, ThreadPool* pool) {
  const rt::KernelFlags& flags = kernel.flags();
  if (flags.on_values)
    throw Error(ErrorKind::Unsupported, node.op_type + ": operators over sequences and optionals cannot run eagerly");
  std::vector<Tensor> results(outs.size());
  bool all_constant = !outs.empty();
  for (const rt::OutputMeta& o : outs) all_constant &= !o.constant.empty();
  if (all_constant && !flags.outputs_data_dependent) {
    for (size_t o = 0; o < outs.size(); ++o) results[o] = outs[o].constant;
    return results;
  }
  std::vector<Tensor> ins(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].present) ins[i] = inputs[i].value->contiguous();
  if (flags.view_of_input) {  // the output is input 0 with the stated shape; run() is never called
    results[0] = ins[0].reshape(outs[0].shape);
    return results;
  }
  rt::NodeInfo info(node, exact);
  rt::PrepareContext pctx{info, inputs, outs, exact, isa};
  std::shared_ptr<const void> state = kernel.prepare(pctx);
  if (!flags.outputs_data_dependent)
    for (size_t o = 0; o < outs.size(); ++o) results[o] = Tensor::zeros(outs[o].dtype, outs[o].shape);
  rt::BumpArena arena;
  rt::RunContext rctx{info, ins, results, exact, state.get(), &arena, pool, isa};
  kernel.run(rctx);
  for (Tensor& t : results) t = t.contiguous();
  return results;
}

}  // namespace onemodel::build
