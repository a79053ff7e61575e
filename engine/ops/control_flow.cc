// If, Loop, Scan and SequenceMap (graph-runtime.md section 8). Each body is compiled once, when the kernel is
// made, into a nested CompiledGraph (runtime/subgraph.h); a run makes or reuses a plan per body input shape
// set. Values carried between iterations and collected scan slices are detached heap tensors, so a long
// loop holds only the current state plus its results, not every iteration's arena memory.
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "ops/value_kernel.h"
#include "runtime/subgraph.h"

namespace onemodel::rt {

namespace {

std::string num(int64_t v) { return std::to_string(v); }

// `src` without axis `axis`, at position `pos` of it (a new contiguous tensor).
Tensor take_slice(const Tensor& src, int axis, int64_t pos) {
  std::vector<int64_t> dims = src.shape().to_vector();
  const int64_t len = dims[static_cast<size_t>(axis)];
  dims.erase(dims.begin() + axis);
  Tensor out = Tensor::zeros(src.dtype(), Shape(std::span<const int64_t>(dims)));
  int64_t outer = 1, inner = static_cast<int64_t>(dtype_size(src.dtype()));
  for (int d = 0; d < axis; ++d) outer *= src.shape()[d];
  for (int d = axis + 1; d < src.rank(); ++d) inner *= src.shape()[d];
  const auto* s = static_cast<const std::byte*>(src.raw());
  auto* o = static_cast<std::byte*>(out.raw_mut());
  for (int64_t k = 0; k < outer && inner > 0; ++k)
    std::memcpy(o + k * inner, s + (k * len + pos) * inner, static_cast<size_t>(inner));
  return out;
}

// Writes `slice` at position `pos` of axis `axis` of `dst` (dst's shape is slice's with that axis inserted).
void put_slice(const Tensor& dst, int axis, int64_t pos, const Tensor& slice) {
  const int64_t len = dst.shape()[axis];
  int64_t outer = 1, inner = static_cast<int64_t>(dtype_size(dst.dtype()));
  for (int d = 0; d < axis; ++d) outer *= dst.shape()[d];
  for (int d = axis + 1; d < dst.rank(); ++d) inner *= dst.shape()[d];
  const auto* s = static_cast<const std::byte*>(slice.raw());
  auto* o = static_cast<std::byte*>(dst.raw_mut());
  for (int64_t k = 0; k < outer && inner > 0; ++k)
    std::memcpy(o + (k * len + pos) * inner, s + k * inner, static_cast<size_t>(inner));
}

Shape insert_axis(const Shape& s, int axis, int64_t len) {
  std::vector<int64_t> dims = s.to_vector();
  dims.insert(dims.begin() + axis, len);
  return Shape(std::span<const int64_t>(dims));
}

// What a value holds, looking through an optional (a body may take optional(sequence) and return the
// sequence, as ONNX's loop16_seq_none does).
ValueKind base_kind(const Value& v) { return v.kind() == ValueKind::Optional ? v.content_kind() : v.kind(); }

// Loop-carried values keep their kind and element type from one iteration to the next (shapes may change).
void check_carried(const NodeInfo& info, size_t k, const Value& before, const Value& after) {
  const ValueKind a = base_kind(before), b = base_kind(after);
  if ((a != b && a != ValueKind::Unknown && b != ValueKind::Unknown) ||
      (before.elem_type() != DType::Undefined && after.elem_type() != DType::Undefined &&
       before.elem_type() != after.elem_type()))
    info.fail(ErrorKind::InvalidModel,
              "body output for carried value " + std::to_string(k) + " is " + value_kind_text(after.kind()) + " of " +
                  std::string(dtype_short_name(after.elem_type())) + ", its input was " +
                  value_kind_text(before.kind()) + " of " + std::string(dtype_short_name(before.elem_type())));
}

// A scan output slice must be a tensor of the same type and shape in every iteration.
const Tensor& check_scan_slice(const NodeInfo& info, size_t k, int64_t iter, const Value& v, const Tensor* first) {
  if (!v.is_tensor())
    info.fail(ErrorKind::InvalidModel,
              "scan output " + std::to_string(k) + " must be a tensor, got " + value_kind_text(v.kind()));
  const Tensor& t = v.tensor();
  if (first && (t.dtype() != first->dtype() || t.shape() != first->shape()))
    info.fail(ErrorKind::InvalidModel,
              "scan output " + std::to_string(k) + " is " + std::string(dtype_short_name(t.dtype())) + " " +
                  t.shape().to_string() + " in iteration " + num(iter) + " but " +
                  std::string(dtype_short_name(first->dtype())) + " " + first->shape().to_string() + " in iteration 0");
  return t;
}

Tensor make_i64(int64_t v) { return Tensor::from_values<int64_t>({v}, Shape()); }
Tensor make_bool(bool v) { return Tensor::from_values<bool>({v}, Shape()); }

class IfKernel final : public ValueKernel {
 public:
  explicit IfKernel(const NodeInfo& info) : then_(info, "then_branch"), else_(info, "else_branch") {
    for (const Subgraph* b : {&then_, &else_})
      if (b->num_outputs() != info.num_outputs() || b->num_inputs() != 0)
        info.fail(ErrorKind::InvalidModel, "each branch must take no inputs and produce " +
                                               std::to_string(info.num_outputs()) + " outputs; one takes " +
                                               std::to_string(b->num_inputs()) + " and produces " +
                                               std::to_string(b->num_outputs()));
  }
  void run(RunContext& ctx) const override {
    bool cond = scalar_bool(ctx, tensor_input(ctx, 0, "cond"), "cond");
    std::vector<Value> outs;
    (cond ? then_ : else_).run(ctx, {}, outs);
    for (size_t o = 0; o < ctx.value_outputs.size(); ++o) ctx.value_outputs[o] = std::move(outs[o]);
  }

 private:
  Subgraph then_, else_;
};

// Limit on a stacked scan output: the engine's per-tensor element limit, checked as iterations accumulate
// so a huge trip count fails cleanly instead of exhausting memory.
void check_stack_size(const NodeInfo& info, size_t k, int64_t count, const Tensor& slice) {
  if (slice.numel() > 0 && count > kMaxElements / slice.numel())
    info.fail(ErrorKind::Unsupported,
              "scan output " + std::to_string(k) + " would exceed 2^31-1 elements after " + num(count) + " iterations");
}

class LoopKernel final : public ValueKernel {
 public:
  explicit LoopKernel(const NodeInfo& info) : info_(info), body_(info, "body") {
    const ir::Node& n = info.node();
    if (n.inputs.size() < 2)
      info.fail(ErrorKind::InvalidModel, "Loop needs the inputs M and cond (either may be empty)");
    carried_ = n.inputs.size() - 2;
    if (n.outputs.size() < carried_)
      info.fail(ErrorKind::InvalidModel, "Loop has " + std::to_string(carried_) + " carried values but " +
                                             std::to_string(n.outputs.size()) + " outputs");
    scans_ = n.outputs.size() - carried_;
    if (body_.num_inputs() != 2 + carried_ || body_.num_outputs() != 1 + carried_ + scans_)
      info.fail(ErrorKind::InvalidModel, "the body must take " + std::to_string(2 + carried_) + " inputs and produce " +
                                             std::to_string(1 + carried_ + scans_) + " outputs; it takes " +
                                             std::to_string(body_.num_inputs()) + " and produces " +
                                             std::to_string(body_.num_outputs()));
    if (n.inputs[0] < 0 && n.inputs[1] < 0)
      info.fail(ErrorKind::Unsupported, "a Loop with neither a trip count nor a condition never ends");
  }

  void run(RunContext& ctx) const override {
    int64_t trips = std::numeric_limits<int64_t>::max();
    if (!ctx.value_input(0).empty()) {
      trips = scalar_index(ctx, tensor_input(ctx, 0, "M"), "trip count M");
      if (trips < 0) ctx.fail(ErrorKind::InvalidInput, "trip count M is " + num(trips) + "; it must not be negative");
    }
    const bool has_cond = !ctx.value_input(1).empty();
    bool cond = has_cond ? scalar_bool(ctx, tensor_input(ctx, 1, "cond"), "cond") : true;

    std::vector<Value> formal(2 + carried_), outs;
    for (size_t k = 0; k < carried_; ++k) {
      const Value& v = ctx.value_input(2 + k);
      if (v.empty()) ctx.fail(ErrorKind::InvalidModel, "carried value " + std::to_string(k) + " is missing");
      formal[2 + k] = detach_value(v);  // may be a slab view of the outer run: the outputs must not alias it
    }
    std::vector<std::vector<Tensor>> slices(scans_);
    int64_t i = 0;
    for (; i < trips && cond; ++i) {
      formal[0] = Value(make_i64(i));
      formal[1] = Value(make_bool(cond));
      body_.run(ctx, formal, outs);
      if (has_cond) cond = scalar_bool(ctx, tensor_input_of(ctx, outs[0]), "the body's condition output");
      for (size_t k = 0; k < carried_; ++k) {
        check_carried(info_, k, formal[2 + k], outs[1 + k]);
        formal[2 + k] = std::move(outs[1 + k]);
      }
      for (size_t k = 0; k < scans_; ++k) {
        const Tensor& t =
            check_scan_slice(info_, k, i, outs[1 + carried_ + k], slices[k].empty() ? nullptr : &slices[k][0]);
        check_stack_size(info_, k, i + 1, t);
        slices[k].push_back(t);
      }
    }
    for (size_t k = 0; k < carried_; ++k) ctx.value_outputs[k] = std::move(formal[2 + k]);
    for (size_t k = 0; k < scans_; ++k) {
      if (slices[k].empty()) {
        DType t = body_.output_elem(1 + carried_ + k);
        ctx.value_outputs[carried_ + k] = Value(ctx.arena->allocate(t == DType::Undefined ? DType::F32 : t, Shape{0}));
        continue;
      }
      const auto count = static_cast<int64_t>(slices[k].size());
      Tensor out = ctx.arena->allocate(slices[k][0].dtype(), insert_axis(slices[k][0].shape(), 0, count));
      for (int64_t s = 0; s < count; ++s) put_slice(out, 0, s, slices[k][static_cast<size_t>(s)]);
      ctx.value_outputs[carried_ + k] = Value(out);
    }
  }

 private:
  static const Tensor& tensor_input_of(const RunContext& ctx, const Value& v) {
    if (!v.is_tensor()) ctx.fail(ErrorKind::InvalidModel, "the body's condition output must be a bool tensor");
    return v.tensor();
  }
  NodeInfo info_;
  Subgraph body_;
  size_t carried_ = 0, scans_ = 0;
};

// Scan: opset 9+ (axes and directions per scan input and output) and opset 8 (a batch axis 0, the scan axis
// 1, optional sequence lengths). Opset 8 runs the opset-9 loop once per batch entry.
class ScanKernel final : public ValueKernel {
 public:
  explicit ScanKernel(const NodeInfo& info) : info_(info), body_(info, "body"), v8_(info.opset() < 9) {
    const ir::Node& n = info.node();
    const int64_t m = info.get_int("num_scan_inputs", -1);
    const size_t first = v8_ ? 1 : 0;  // opset 8: input 0 is sequence_lens
    if (m < 1 || static_cast<size_t>(m) + first > n.inputs.size())
      info.fail(ErrorKind::InvalidModel, "num_scan_inputs must be between 1 and the number of inputs");
    scan_in_ = static_cast<size_t>(m);
    state_ = n.inputs.size() - first - scan_in_;
    if (n.outputs.size() < state_) info.fail(ErrorKind::InvalidModel, "Scan has fewer outputs than state values");
    scan_out_ = n.outputs.size() - state_;
    if (body_.num_inputs() != state_ + scan_in_ || body_.num_outputs() != state_ + scan_out_)
      info.fail(ErrorKind::InvalidModel, "the body must take " + std::to_string(state_ + scan_in_) +
                                             " inputs and produce " + std::to_string(state_ + scan_out_) + " outputs");
    in_axes_ = info.get_ints("scan_input_axes");
    in_dirs_ = info.get_ints(v8_ ? "directions" : "scan_input_directions");
    out_axes_ = info.get_ints("scan_output_axes");
    out_dirs_ = info.get_ints("scan_output_directions");
    if (v8_ && (!in_axes_.empty() || !out_axes_.empty() || !out_dirs_.empty()))
      info.fail(ErrorKind::InvalidModel, "opset 8 Scan has no axes or output directions");
    auto check_len = [&](const std::vector<int64_t>& v, size_t want, const char* name) {
      if (!v.empty() && v.size() != want)
        info.fail(ErrorKind::InvalidModel,
                  std::string(name) + " has " + std::to_string(v.size()) + " entries, want " + std::to_string(want));
    };
    check_len(in_axes_, scan_in_, "scan_input_axes");
    check_len(in_dirs_, scan_in_, "scan input directions");
    check_len(out_axes_, scan_out_, "scan_output_axes");
    check_len(out_dirs_, scan_out_, "scan_output_directions");
  }

  void run(RunContext& ctx) const override {
    const size_t first = v8_ ? 1 : 0;
    std::vector<Tensor> states(state_), scans(scan_in_);
    for (size_t k = 0; k < state_; ++k) states[k] = tensor_input(ctx, first + k, "a state input");
    for (size_t k = 0; k < scan_in_; ++k) scans[k] = tensor_input(ctx, first + state_ + k, "a scan input");
    if (!v8_) {
      std::vector<Tensor> out_states, out_scans;
      scan_once(ctx, states, scans, -1, out_states, out_scans);
      for (size_t k = 0; k < state_; ++k) ctx.value_outputs[k] = Value(out_states[k]);
      for (size_t k = 0; k < scan_out_; ++k) ctx.value_outputs[state_ + k] = Value(out_scans[k]);
      return;
    }
    // Opset 8: every input has the batch axis 0.
    int64_t batch = -1;
    for (const std::vector<Tensor>* list : {&states, &scans})
      for (const Tensor& t : *list) {
        if (t.rank() < 1) ctx.fail(ErrorKind::InvalidInput, "opset 8 Scan inputs need a batch axis");
        if (batch >= 0 && t.shape()[0] != batch)
          ctx.fail(ErrorKind::InvalidInput,
                   "inputs disagree on the batch size (" + num(batch) + " and " + num(t.shape()[0]) + ")");
        batch = t.shape()[0];
      }
    std::vector<int64_t> lens;
    if (!ctx.value_input(0).empty()) {
      const Tensor& sl = tensor_input(ctx, 0, "sequence_lens");
      if (sl.dtype() != DType::I32 || sl.numel() != batch)
        ctx.fail(ErrorKind::InvalidInput, "sequence_lens must be int32 with one entry per batch entry");
      for (int32_t v : sl.data<int32_t>()) lens.push_back(v);
    }
    std::vector<Tensor> final_states(state_), final_scans(scan_out_);
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<Tensor> st(state_), sc(scan_in_), out_states, out_scans;
      for (size_t k = 0; k < state_; ++k) st[k] = take_slice(states[k], 0, b);
      for (size_t k = 0; k < scan_in_; ++k) sc[k] = take_slice(scans[k], 0, b);
      scan_once(ctx, st, sc, lens.empty() ? -1 : lens[static_cast<size_t>(b)], out_states, out_scans);
      for (size_t k = 0; k < state_; ++k) {
        if (b == 0)
          final_states[k] = ctx.arena->allocate(out_states[k].dtype(), insert_axis(out_states[k].shape(), 0, batch));
        else if (out_states[k].shape() != take_shape(final_states[k]) ||
                 out_states[k].dtype() != final_states[k].dtype())
          ctx.fail(ErrorKind::InvalidModel,
                   "state output " + std::to_string(k) + " differs in shape between batch entries");
        put_slice(final_states[k], 0, b, out_states[k]);
      }
      for (size_t k = 0; k < scan_out_; ++k) {
        if (b == 0)
          final_scans[k] = ctx.arena->allocate(out_scans[k].dtype(), insert_axis(out_scans[k].shape(), 0, batch));
        else if (out_scans[k].shape() != take_shape(final_scans[k]) || out_scans[k].dtype() != final_scans[k].dtype())
          ctx.fail(ErrorKind::InvalidModel,
                   "scan output " + std::to_string(k) + " differs in shape between batch entries");
        put_slice(final_scans[k], 0, b, out_scans[k]);
      }
    }
    if (batch == 0) ctx.fail(ErrorKind::InvalidInput, "opset 8 Scan with a batch of 0 is not supported");
    for (size_t k = 0; k < state_; ++k) ctx.value_outputs[k] = Value(final_states[k]);
    for (size_t k = 0; k < scan_out_; ++k) ctx.value_outputs[state_ + k] = Value(final_scans[k]);
  }

 private:
  static Shape take_shape(const Tensor& t) {
    std::vector<int64_t> d = t.shape().to_vector();
    d.erase(d.begin());
    return Shape(std::span<const int64_t>(d));
  }

  int norm_axis(const RunContext& ctx, int64_t a, int rank, const char* what) const {
    if (a < -rank || a >= rank)
      ctx.fail(ErrorKind::InvalidModel,
               std::string(what) + " " + num(a) + " is outside [" + num(-rank) + ", " + num(rank - 1) + "]");
    return static_cast<int>(a < 0 ? a + rank : a);
  }

  // One scan over `scans` (no batch axis). `limit` >= 0 (opset 8 sequence lengths) runs only the first
  // `limit` positions; scan outputs are then padded with zeros to the full length.
  void scan_once(const RunContext& ctx, const std::vector<Tensor>& states, const std::vector<Tensor>& scans,
                 int64_t limit, std::vector<Tensor>& out_states, std::vector<Tensor>& out_scans) const {
    int64_t len = -1;
    std::vector<int> axes(scan_in_);
    for (size_t k = 0; k < scan_in_; ++k) {
      axes[k] = norm_axis(ctx, in_axes_.empty() ? 0 : in_axes_[k], scans[k].rank(), "scan input axis");
      int64_t l = scans[k].shape()[axes[k]];
      if (len >= 0 && l != len)
        ctx.fail(ErrorKind::InvalidInput,
                 "scan inputs disagree on the sequence length (" + num(len) + " and " + num(l) + ")");
      len = l;
    }
    int64_t steps = len;
    if (limit >= 0) {
      if (limit > len) ctx.fail(ErrorKind::InvalidInput, "sequence length " + num(limit) + " exceeds " + num(len));
      steps = limit;
    }
    std::vector<Value> formal(state_ + scan_in_), outs;
    // Copies: with no iteration the states are the outputs, and an outer slab view must not escape.
    for (size_t k = 0; k < state_; ++k) formal[k] = Value(contiguous_copy(states[k]));
    out_scans.assign(scan_out_, Tensor());
    std::vector<Tensor> first(scan_out_);  // iteration 0's slice of each scan output, for the shape check
    std::vector<int> out_axis(scan_out_, 0);
    for (int64_t t = 0; t < steps; ++t) {
      for (size_t k = 0; k < scan_in_; ++k) {
        bool rev = !in_dirs_.empty() && in_dirs_[k] != 0;
        formal[state_ + k] = Value(take_slice(scans[k], axes[k], rev ? steps - 1 - t : t));
      }
      body_.run(ctx, formal, outs);
      for (size_t k = 0; k < state_; ++k) {
        check_carried(info_, k, formal[k], outs[k]);
        if (!outs[k].is_tensor()) ctx.fail(ErrorKind::InvalidModel, "state outputs must be tensors");
        formal[k] = std::move(outs[k]);
      }
      for (size_t k = 0; k < scan_out_; ++k) {
        const Tensor& slice = check_scan_slice(info_, k, t, outs[state_ + k], first[k].empty() ? nullptr : &first[k]);
        if (first[k].empty()) {
          first[k] = slice;
          out_axis[k] = norm_axis(ctx, out_axes_.empty() ? 0 : out_axes_[k], slice.rank() + 1, "scan output axis");
          out_scans[k] = ctx.arena->allocate(slice.dtype(), insert_axis(slice.shape(), out_axis[k], len));
        }
        bool rev = !out_dirs_.empty() && out_dirs_[k] != 0;
        put_slice(out_scans[k], out_axis[k], rev ? len - 1 - t : t, slice);
      }
    }
    for (size_t k = 0; k < scan_out_; ++k)
      if (out_scans[k].empty()) {
        // No iterations: the per-iteration shape is unknown; a [0] tensor of the declared type.
        DType dt = body_.output_elem(state_ + k);
        out_scans[k] = ctx.arena->allocate(dt == DType::Undefined ? DType::F32 : dt, Shape{0});
      }
    out_states.assign(state_, Tensor());
    for (size_t k = 0; k < state_; ++k) out_states[k] = formal[k].tensor();
  }

  NodeInfo info_;
  Subgraph body_;
  bool v8_;
  size_t scan_in_ = 0, state_ = 0, scan_out_ = 0;
  std::vector<int64_t> in_axes_, in_dirs_, out_axes_, out_dirs_;
};

// SequenceMap (opset 17): runs the body once per position of the input sequence; additional inputs are
// sequences of the same length (their item at that position) or tensors (passed whole every time).
class SequenceMapKernel final : public ValueKernel {
 public:
  explicit SequenceMapKernel(const NodeInfo& info) : info_(info), body_(info, "body") {
    const ir::Node& n = info.node();
    if (body_.num_inputs() != n.inputs.size() || body_.num_outputs() != n.outputs.size())
      info.fail(ErrorKind::InvalidModel, "the body must take " + std::to_string(n.inputs.size()) +
                                             " inputs and produce " + std::to_string(n.outputs.size()) + " outputs");
  }
  void run(RunContext& ctx) const override {
    const size_t nin = body_.num_inputs();
    const Value& seq = sequence_input(ctx, 0, "input_sequence");
    const size_t len = seq.items().size();
    for (size_t j = 1; j < nin; ++j) {
      const Value& v = ctx.value_input(j);
      if (v.kind() == ValueKind::Sequence && v.items().size() != len)
        ctx.fail(ErrorKind::InvalidInput, "input " + std::to_string(j) + " has " + std::to_string(v.items().size()) +
                                              " items, the input sequence " + std::to_string(len));
      if (!v.is_tensor() && v.kind() != ValueKind::Sequence)
        ctx.fail(ErrorKind::InvalidModel, "input " + std::to_string(j) + " must be a tensor or a sequence");
    }
    std::vector<std::vector<Tensor>> results(body_.num_outputs());
    std::vector<Value> formal(nin), outs;
    for (size_t i = 0; i < len; ++i) {
      for (size_t j = 0; j < nin; ++j) {
        const Value& v = ctx.value_input(j);
        formal[j] = v.kind() == ValueKind::Sequence ? Value(v.items()[i]) : v;
      }
      body_.run(ctx, formal, outs);
      for (size_t k = 0; k < outs.size(); ++k) {
        if (!outs[k].is_tensor())
          ctx.fail(ErrorKind::InvalidModel, "body output " + std::to_string(k) + " must be a tensor");
        if (!results[k].empty() && results[k][0].dtype() != outs[k].tensor().dtype())
          ctx.fail(ErrorKind::InvalidModel, "body output " + std::to_string(k) + " changes element type");
        results[k].push_back(outs[k].tensor());
      }
    }
    for (size_t k = 0; k < results.size(); ++k) {
      DType elem = results[k].empty() ? body_.output_elem(k) : results[k][0].dtype();
      ctx.value_outputs[k] = Value::sequence(std::move(results[k]), elem);
    }
  }

 private:
  NodeInfo info_;
  Subgraph body_;
};

}  // namespace

std::unique_ptr<Kernel> make_if(const NodeInfo& info) { return std::make_unique<IfKernel>(info); }
std::unique_ptr<Kernel> make_loop(const NodeInfo& info) { return std::make_unique<LoopKernel>(info); }
std::unique_ptr<Kernel> make_scan(const NodeInfo& info) { return std::make_unique<ScanKernel>(info); }
std::unique_ptr<Kernel> make_sequence_map(const NodeInfo& info) { return std::make_unique<SequenceMapKernel>(info); }

}  // namespace onemodel::rt
