// Sequence and optional operators (ONNX opset 11+ / 15+). Sequences are immutable Values sharing their item
// tensors, so insert and erase copy item handles, never item data; a tensor entering a sequence or optional
// is copied once into the run's arena (see copy_to_arena).
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "ops/value_kernel.h"

namespace onemodel::rt {

namespace {

std::string dt(DType t) { return std::string(dtype_short_name(t)); }

// A position in [-n, hi] made non-negative (hi is n for insert, n - 1 for at/erase).
int64_t position(const RunContext& ctx, size_t input, int64_t n, int64_t hi, int64_t dflt) {
  if (!ctx.value_input(input).is_tensor()) {
    if (ctx.value_input(input).empty()) return dflt;
    tensor_input(ctx, input, "position");
  }
  int64_t p = scalar_index(ctx, ctx.value_input(input).tensor(), "position");
  if (p < -n || p > hi)
    ctx.fail(ErrorKind::InvalidInput, "position " + std::to_string(p) + " is outside [" + std::to_string(-n) + ", " +
                                          std::to_string(hi) + "] for a sequence of " + std::to_string(n));
  return p < 0 ? p + n : p;
}

class SequenceEmptyKernel final : public ValueKernel {
 public:
  explicit SequenceEmptyKernel(DType t) : t_(t) {}
  void run(RunContext& ctx) const override { ctx.value_output(0) = Value::sequence({}, t_); }

 private:
  DType t_;
};

class SequenceConstructKernel final : public ValueKernel {
 public:
  void run(RunContext& ctx) const override {
    std::vector<Tensor> items;
    for (size_t i = 0; i < ctx.value_inputs.size(); ++i) {
      const Tensor& t = tensor_input(ctx, i, "a sequence item");
      if (!items.empty() && t.dtype() != items[0].dtype())
        ctx.fail(ErrorKind::InvalidModel, "input " + std::to_string(i) + " is " + dt(t.dtype()) + ", input 0 is " +
                                              dt(items[0].dtype()) + "; a sequence holds one element type");
      items.push_back(copy_to_arena(ctx, t));
    }
    ctx.value_output(0) = Value::sequence(std::move(items));
  }
};

class SequenceInsertKernel final : public ValueKernel {
 public:
  void run(RunContext& ctx) const override {
    const Value& seq = sequence_input(ctx, 0, "input_sequence");
    const Tensor& t = tensor_input(ctx, 1, "tensor");
    if (seq.elem_type() != DType::Undefined && t.dtype() != seq.elem_type())
      ctx.fail(ErrorKind::InvalidModel,
               "cannot insert a " + dt(t.dtype()) + " tensor into a sequence of " + dt(seq.elem_type()));
    const auto n = static_cast<int64_t>(seq.items().size());
    int64_t p = ctx.value_inputs.size() > 2 ? position(ctx, 2, n, n, n) : n;
    std::vector<Tensor> items = seq.items();
    items.insert(items.begin() + p, copy_to_arena(ctx, t));
    ctx.value_output(0) = Value::sequence(std::move(items), t.dtype());
  }
};

class SequenceEraseKernel final : public ValueKernel {
 public:
  void run(RunContext& ctx) const override {
    const Value& seq = sequence_input(ctx, 0, "input_sequence");
    const auto n = static_cast<int64_t>(seq.items().size());
    if (n == 0) ctx.fail(ErrorKind::InvalidInput, "cannot erase from an empty sequence");
    int64_t p = ctx.value_inputs.size() > 1 ? position(ctx, 1, n, n - 1, n - 1) : n - 1;
    std::vector<Tensor> items = seq.items();
    items.erase(items.begin() + p);
    ctx.value_output(0) = Value::sequence(std::move(items), seq.elem_type());
  }
};

class SequenceAtKernel final : public ValueKernel {
 public:
  void run(RunContext& ctx) const override {
    const Value& seq = sequence_input(ctx, 0, "input_sequence");
    const auto n = static_cast<int64_t>(seq.items().size());
    if (ctx.value_inputs.size() < 2 || ctx.value_input(1).empty())
      ctx.fail(ErrorKind::InvalidModel, "SequenceAt needs a position");
    int64_t p = position(ctx, 1, n, n - 1, 0);
    ctx.value_output(0) = Value(seq.items()[static_cast<size_t>(p)]);
  }
};

class SequenceLengthKernel final : public ValueKernel {
 public:
  void run(RunContext& ctx) const override {
    const Value& seq = sequence_input(ctx, 0, "input_sequence");
    Tensor out = ctx.arena->allocate(DType::I64, Shape());
    out.mutable_data<int64_t>()[0] = static_cast<int64_t>(seq.items().size());
    ctx.value_output(0) = Value(out);
  }
};

// Splits along `axis` into pieces of the given lengths (row-major copies into the arena).
class SplitToSequenceKernel final : public ValueKernel {
 public:
  SplitToSequenceKernel(int64_t axis, bool keepdims) : axis_(axis), keepdims_(keepdims) {}
  void run(RunContext& ctx) const override {
    const Tensor& in = tensor_input(ctx, 0, "input");
    const int r = in.rank();
    if (r == 0) ctx.fail(ErrorKind::InvalidInput, "cannot split a scalar");
    if (axis_ < -r || axis_ >= r)
      ctx.fail(ErrorKind::InvalidModel, "axis " + std::to_string(axis_) + " is outside [" + std::to_string(-r) + ", " +
                                            std::to_string(r - 1) + "]");
    const int axis = static_cast<int>(axis_ < 0 ? axis_ + r : axis_);
    const int64_t dim = in.shape()[axis];
    std::vector<int64_t> lengths;
    bool squeeze = false;
    const bool has_split = ctx.value_inputs.size() > 1 && !ctx.value_input(1).empty();
    if (!has_split) {
      lengths.assign(static_cast<size_t>(dim), 1);
      squeeze = !keepdims_;
    } else {
      const Tensor& s = tensor_input(ctx, 1, "split");
      if (s.rank() == 0) {
        int64_t size = scalar_index(ctx, s, "split");
        if (size <= 0) ctx.fail(ErrorKind::InvalidInput, "split size " + std::to_string(size) + " must be positive");
        for (int64_t at = 0; at < dim; at += size) lengths.push_back(std::min(size, dim - at));
      } else {
        if (s.rank() != 1)
          ctx.fail(ErrorKind::InvalidInput, "split must be a scalar or 1-D, got " + s.shape().to_string());
        int64_t sum = 0;
        for (int64_t k = 0; k < s.numel(); ++k) {
          int64_t len = s.dtype() == DType::I64   ? s.data<int64_t>()[static_cast<size_t>(k)]
                        : s.dtype() == DType::I32 ? s.data<int32_t>()[static_cast<size_t>(k)]
                                                  : -1;
          if (s.dtype() != DType::I64 && s.dtype() != DType::I32)
            ctx.fail(ErrorKind::InvalidModel, "split must be int32 or int64");
          if (len < 0 || len > dim)
            ctx.fail(ErrorKind::InvalidInput, "split length " + std::to_string(len) + " is invalid");
          sum += len;
          lengths.push_back(len);
        }
        if (sum != dim)
          ctx.fail(ErrorKind::InvalidInput,
                   "split lengths add up to " + std::to_string(sum) + ", the axis has " + std::to_string(dim));
      }
    }
    int64_t outer = 1, inner = static_cast<int64_t>(dtype_size(in.dtype()));
    for (int d = 0; d < axis; ++d) outer *= in.shape()[d];
    for (int d = axis + 1; d < r; ++d) inner *= in.shape()[d];
    const auto* src = static_cast<const std::byte*>(in.raw());
    std::vector<Tensor> items;
    int64_t start = 0;
    for (int64_t len : lengths) {
      std::vector<int64_t> dims = in.shape().to_vector();
      dims[static_cast<size_t>(axis)] = len;
      if (squeeze) dims.erase(dims.begin() + axis);
      Tensor piece = ctx.arena->allocate(in.dtype(), Shape(std::span<const int64_t>(dims)));
      auto* dst = static_cast<std::byte*>(piece.raw_mut());
      for (int64_t o = 0; o < outer && len > 0 && inner > 0; ++o)
        std::memcpy(dst + o * len * inner, src + (o * dim + start) * inner, static_cast<size_t>(len * inner));
      items.push_back(std::move(piece));
      start += len;
    }
    ctx.value_output(0) = Value::sequence(std::move(items), in.dtype());
  }

 private:
  int64_t axis_;
  bool keepdims_;
};

class ConcatFromSequenceKernel final : public ValueKernel {
 public:
  ConcatFromSequenceKernel(int64_t axis, bool new_axis) : axis_(axis), new_axis_(new_axis) {}
  void run(RunContext& ctx) const override {
    const Value& seq = sequence_input(ctx, 0, "input_sequence");
    const std::vector<Tensor>& items = seq.items();
    if (items.empty()) ctx.fail(ErrorKind::InvalidInput, "cannot concatenate an empty sequence");
    const Shape& first = items[0].shape();
    const int r = first.rank();
    const int out_rank = r + (new_axis_ ? 1 : 0);
    if (axis_ < -out_rank || axis_ >= out_rank || (r == 0 && !new_axis_))
      ctx.fail(ErrorKind::InvalidModel,
               "axis " + std::to_string(axis_) + " is invalid for items of rank " + std::to_string(r));
    const int axis = static_cast<int>(axis_ < 0 ? axis_ + out_rank : axis_);
    int64_t total = 0;
    for (size_t k = 0; k < items.size(); ++k) {
      const Shape& s = items[k].shape();
      bool ok = s.rank() == r;
      for (int d = 0; ok && d < r; ++d)
        if (s[d] != first[d] && (new_axis_ || d != axis)) ok = false;
      if (!ok)
        ctx.fail(ErrorKind::InvalidInput, "item " + std::to_string(k) + " has shape " + s.to_string() +
                                              ", which does not fit item 0's " + first.to_string());
      total += new_axis_ ? 1 : s[axis];
    }
    std::vector<int64_t> dims = first.to_vector();
    if (new_axis_)
      dims.insert(dims.begin() + axis, total);
    else
      dims[static_cast<size_t>(axis)] = total;
    Tensor out = ctx.arena->allocate(items[0].dtype(), Shape(std::span<const int64_t>(dims)));
    const auto es = static_cast<int64_t>(dtype_size(out.dtype()));
    int64_t outer = 1;
    for (int d = 0; d < axis; ++d) outer *= dims[static_cast<size_t>(d)];
    auto* dst = static_cast<std::byte*>(out.raw_mut());
    const int64_t out_row = out.numel() == 0 ? 0 : out.numel() / std::max<int64_t>(outer, 1) * es;
    int64_t at = 0;
    for (const Tensor& t : items) {
      const int64_t chunk = outer == 0 ? 0 : t.numel() / outer * es;  // bytes of this item per outer index
      const auto* src = static_cast<const std::byte*>(t.raw());
      for (int64_t o = 0; o < outer && chunk > 0; ++o)
        std::memcpy(dst + o * out_row + at, src + o * chunk, static_cast<size_t>(chunk));
      at += chunk;
    }
    ctx.value_output(0) = Value(out);
  }

 private:
  int64_t axis_;
  bool new_axis_;
};

class OptionalKernel final : public ValueKernel {
 public:
  OptionalKernel(ValueKind content, DType elem) : content_(content), elem_(elem) {}
  void run(RunContext& ctx) const override {
    const Value& in = ctx.value_input(0);
    if (in.empty()) {
      if (content_ == ValueKind::Unknown)
        ctx.fail(ErrorKind::InvalidModel, "an Optional without an input needs the 'type' attribute");
      ctx.value_output(0) = Value::none(content_, elem_);
    } else if (in.is_tensor()) {
      ctx.value_output(0) = Value::optional(Value(copy_to_arena(ctx, in.tensor())));
    } else if (in.kind() == ValueKind::Sequence) {
      ctx.value_output(0) = Value::optional(in);
    } else {
      ctx.fail(ErrorKind::InvalidModel,
               "an optional holds a tensor or a sequence, got " + std::string(value_kind_text(in.kind())));
    }
  }

 private:
  ValueKind content_;
  DType elem_;
};

class OptionalHasElementKernel final : public ValueKernel {
 public:
  void run(RunContext& ctx) const override {
    const Value& in = ctx.value_input(0);
    bool has = in.kind() == ValueKind::Optional ? in.has_element() : !in.empty();
    Tensor out = ctx.arena->allocate(DType::Bool, Shape());
    *static_cast<uint8_t*>(out.raw_mut()) = has ? 1 : 0;
    ctx.value_output(0) = Value(out);
  }
};

class OptionalGetElementKernel final : public ValueKernel {
 public:
  void run(RunContext& ctx) const override {
    const Value& in = ctx.value_input(0);
    if (in.kind() == ValueKind::Optional) {
      if (!in.has_element()) ctx.fail(ErrorKind::InvalidInput, "the optional input holds no element");
      ctx.value_output(0) = in.element();
    } else if (in.is_tensor()) {
      ctx.value_output(0) = Value(copy_to_arena(ctx, in.tensor()));  // opset 18: a plain tensor passes through
    } else if (in.kind() == ValueKind::Sequence) {
      ctx.value_output(0) = in;
    } else {
      ctx.fail(ErrorKind::InvalidModel, "OptionalGetElement needs an input");
    }
  }
};

DType dtype_attr(const NodeInfo& info, const char* name, int64_t dflt) {
  int64_t code = info.get_int(name, dflt);
  auto t = static_cast<DType>(code);
  if (code <= 0 || code > 255 || !dtype_is_stored(t))
    throw Error(ErrorKind::Unsupported, info.op_type() + " node '" + info.name() + "': element type code " +
                                            std::to_string(code) + " is not supported")
        .with_node(info.name());
  return t;
}

}  // namespace

std::unique_ptr<Kernel> make_sequence_empty(const NodeInfo& info) {
  return std::make_unique<SequenceEmptyKernel>(dtype_attr(info, "dtype", static_cast<int64_t>(DType::F32)));
}
std::unique_ptr<Kernel> make_sequence_construct(const NodeInfo&) { return std::make_unique<SequenceConstructKernel>(); }
std::unique_ptr<Kernel> make_sequence_insert(const NodeInfo&) { return std::make_unique<SequenceInsertKernel>(); }
std::unique_ptr<Kernel> make_sequence_erase(const NodeInfo&) { return std::make_unique<SequenceEraseKernel>(); }
std::unique_ptr<Kernel> make_sequence_at(const NodeInfo&) { return std::make_unique<SequenceAtKernel>(); }
std::unique_ptr<Kernel> make_sequence_length(const NodeInfo&) { return std::make_unique<SequenceLengthKernel>(); }
std::unique_ptr<Kernel> make_split_to_sequence(const NodeInfo& info) {
  return std::make_unique<SplitToSequenceKernel>(info.get_int("axis", 0), info.get_int("keepdims", 1) != 0);
}
std::unique_ptr<Kernel> make_concat_from_sequence(const NodeInfo& info) {
  if (!info.has("axis")) info.fail(ErrorKind::InvalidModel, "attribute 'axis' is required");
  return std::make_unique<ConcatFromSequenceKernel>(info.get_int("axis", 0), info.get_int("new_axis", 0) != 0);
}
std::unique_ptr<Kernel> make_optional(const NodeInfo& info) {
  ValueKind content = ValueKind::Unknown;
  DType elem = DType::Undefined;
  if (const ir::Attribute* a = info.find("type")) {
    if (a->type != ir::AttrType::TypeProto || !a->tp)
      info.fail(ErrorKind::InvalidModel, "attribute 'type' must be a type");
    const ir::TypeInfo* t = a->tp.get();
    content = t->kind;
    if (content != ValueKind::Tensor && content != ValueKind::Sequence)
      info.fail(ErrorKind::Unsupported, "an optional of a map or sparse tensor is not supported");
    if (content == ValueKind::Sequence) t = t->inner.get();
    if (t && t->kind == ValueKind::Tensor) elem = t->elem;
  }
  return std::make_unique<OptionalKernel>(content, elem);
}
std::unique_ptr<Kernel> make_optional_has_element(const NodeInfo&) {
  return std::make_unique<OptionalHasElementKernel>();
}
std::unique_ptr<Kernel> make_optional_get_element(const NodeInfo&) {
  return std::make_unique<OptionalGetElementKernel>();
}

}  // namespace onemodel::rt
