// Compiling and running a control-flow body. Captures: a body reads outer values by name; the importer
// recorded them as the node's subgraph reads (outer ids, first-use order), which the compiled node appends to
// its inputs, so planning and freeing in the outer graph see the reads and the kernel finds them in its own
// inputs.
#include "runtime/subgraph.h"

#include <string>

#include "runtime/inputs.h"
#include "runtime/run_state.h"

namespace onemodel::rt {

Value detach_value(const Value& v) {
  switch (v.kind()) {
    case ValueKind::Tensor: return Value(contiguous_copy(v.tensor()));
    case ValueKind::Sequence: {
      std::vector<Tensor> items;
      items.reserve(v.items().size());
      for (const Tensor& t : v.items()) items.push_back(contiguous_copy(t));
      return Value::sequence(std::move(items), v.elem_type());
    }
    case ValueKind::Optional:
      if (!v.has_element()) return v;
      return Value::optional(detach_value(v.element()));
    default: return v;
  }
}

Subgraph::Subgraph(const NodeInfo& info, std::string_view attr) : attr_(attr), info_(info) {
  const ir::Attribute* a = info.find(attr);
  if (!a || a->type != ir::AttrType::Graph || !a->g)
    info.fail(ErrorKind::InvalidModel, "attribute '" + std::string(attr) + "' must be a graph");
  const CompileScope* scope = info.scope();
  if (!scope || !scope->graph || !scope->lookup)
    info.fail(ErrorKind::Internal, "a subgraph can only be compiled inside a session");
  const ir::Graph& body = *a->g;
  num_formal_ = body.inputs.size();
  const ir::Node& node = info.node();
  // A capture of an outer constant becomes a weight of the body (CompileScope::constants); the others are
  // passed in every run, from the node's inputs.
  std::vector<Tensor> capture_weights(body.captures.size());
  for (size_t ci = 0; ci < body.captures.size(); ++ci) {
    const std::string& name = body.values[static_cast<size_t>(body.captures[ci])].name;
    size_t slot = 0;
    bool found = false;
    for (size_t k = 0; k < node.subgraph_reads.size() && !found; ++k) {
      int outer = node.subgraph_reads[k];
      if (outer >= 0 && static_cast<size_t>(outer) < scope->graph->values.size() &&
          scope->graph->values[static_cast<size_t>(outer)].name == name) {
        slot = node.inputs.size() + k;
        found = true;
        if (scope->constants && static_cast<size_t>(outer) < scope->constants->size())
          capture_weights[ci] = (*scope->constants)[static_cast<size_t>(outer)];
      }
    }
    if (!found)
      info.fail(ErrorKind::InvalidModel, "subgraph '" + std::string(attr) + "' reads outer value '" + name +
                                             "', which the node does not list among its subgraph reads");
    if (capture_weights[ci].empty()) capture_slots_.push_back(slot);
  }
  graph_ = CompiledGraph::create_body(a->g, info.exact(), scope->lookup, scope->isa, scope->pool,
                                      std::move(capture_weights), scope->half);
  cache_ = std::make_unique<PlanCache>(16);
}

DType Subgraph::output_elem(size_t k) const {
  const ValueInfo& info = graph_->output_infos()[k];
  return info.dtype;
}

void Subgraph::run(const RunContext& ctx, std::span<const Value> formal, std::vector<Value>& outputs) const {
  if (formal.size() != num_formal_)
    info_.fail(ErrorKind::InvalidModel, "the body takes " + std::to_string(num_formal_) +
                                            " inputs, the node "
                                            "passes " +
                                            std::to_string(formal.size()));
  const size_t n = num_formal_ + capture_slots_.size();
  std::vector<Value> ins(n);
  // Its own key, not the session's per-thread key scratch: bodies run nested inside a session's run (and
  // inside each other), so sharing it could overwrite a key still in use.
  std::vector<InputSignature> key(n);
  for (size_t i = 0; i < n; ++i) {
    if (i < num_formal_) {
      ins[i] = formal[i];
    } else {
      size_t slot = capture_slots_[i - num_formal_];
      if (slot < ctx.value_inputs.size())
        ins[i] = ctx.value_inputs[slot];
      else if (slot < ctx.inputs.size() && !ctx.inputs[slot].empty())
        ins[i] = Value(ctx.inputs[slot]);
    }
    if (ins[i].empty())
      info_.fail(ErrorKind::InvalidModel, "body input '" + graph_->input_infos()[i].name + "' has no value");
    key[i] = signature_of(ins[i]);
  }
  std::shared_ptr<const ExecutionPlan> plan = cache_->get(graph_, key);
  RunLease lease(*plan);
  for (size_t i = 0; i < n; ++i) lease.state->set_input_value(*plan, i, ins[i]);
  if (ctx.profile) {
    const ProfileScope& outer = *ctx.profile;
    ProfileScope inner{outer.profiler, outer.path + ctx.info.name() + "/" + attr_ + "/", outer.depth + 1, &ctx.info};
    lease.state->execute(*plan, &inner);
  } else {
    lease.state->execute(*plan);
  }
  outputs.resize(graph_->outputs().size());
  for (size_t k = 0; k < outputs.size(); ++k) {
    Value v = lease.state->value_of(graph_->outputs()[k]);
    if (v.empty()) info_.fail(ErrorKind::Internal, "body output " + std::to_string(k) + " was not produced");
    outputs[k] = detach_value(v);
  }
}

}  // namespace onemodel::rt
