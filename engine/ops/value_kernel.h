// Control flow, sequences and optionals (graph-runtime.md section 8): the base and the small helpers their
// kernels share (their factories are in ops.h). These kernels work on Values (KernelFlags::on_values) and only move
// data, so they are exact; a body's own operators decide whether a session can be exact (the body is compiled in the
// same mode).
#pragma once
#include <cstring>
#include <memory>
#include <string>

#include "runtime/inputs.h"
#include "runtime/kernel.h"

namespace onemodel::rt {

// Base of the Value kernels: run-time only, exact (they move values), never shaped at plan time.
class ValueKernel : public Kernel {
 public:
  ValueKernel() : Kernel(KernelFlags{.exact = true, .outputs_data_dependent = true, .on_values = true}) {}
  void infer(InferContext& ctx) const override {
    ctx.fail(ErrorKind::Internal, "a value kernel is never shaped at plan time");
  }
};

// A copy of `t` in the run's arena: what a kernel stores inside a sequence or optional (a slab view would be
// overwritten once the planner reuses its block).
inline Tensor copy_to_arena(const RunContext& ctx, const Tensor& t) {
  Tensor out = ctx.arena->allocate(t.dtype(), t.shape());
  copy_into(t, out.raw_mut());
  return out;
}

inline const char* value_kind_text(ValueKind k) {
  switch (k) {
    case ValueKind::Tensor: return "a tensor";
    case ValueKind::Sequence: return "a sequence";
    case ValueKind::Optional: return "an optional";
    default: return "no value";
  }
}

// Input i as a tensor, or Error(InvalidModel) naming the node.
inline const Tensor& tensor_input(const RunContext& ctx, size_t i, const char* what) {
  const Value& v = ctx.value_input(i);
  if (!v.is_tensor())
    ctx.fail(ErrorKind::InvalidModel, std::string(what) + " (input " + std::to_string(i) + ") must be a tensor, got " +
                                          value_kind_text(v.kind()));
  return v.tensor();
}

// Input i as a sequence, or Error(InvalidModel) naming the node.
inline const Value& sequence_input(const RunContext& ctx, size_t i, const char* what) {
  const Value& v = ctx.value_input(i);
  if (v.kind() != ValueKind::Sequence)
    ctx.fail(ErrorKind::InvalidModel, std::string(what) + " (input " + std::to_string(i) +
                                          ") must be a sequence, got " + value_kind_text(v.kind()));
  return v;
}

// A one-element int32/int64 tensor as int64 (positions, trip counts, split sizes).
inline int64_t scalar_index(const RunContext& ctx, const Tensor& t, const char* what) {
  if (t.numel() != 1)
    ctx.fail(ErrorKind::InvalidInput, std::string(what) + " must hold one element, got shape " + t.shape().to_string());
  if (t.dtype() == DType::I64) return t.data<int64_t>()[0];
  if (t.dtype() == DType::I32) return t.data<int32_t>()[0];
  ctx.fail(ErrorKind::InvalidModel,
           std::string(what) + " must be int32 or int64, got " + std::string(dtype_short_name(t.dtype())));
}

// A one-element bool tensor (If and Loop conditions).
inline bool scalar_bool(const RunContext& ctx, const Tensor& t, const char* what) {
  if (t.dtype() != DType::Bool)
    ctx.fail(ErrorKind::InvalidModel,
             std::string(what) + " must be bool, got " + std::string(dtype_short_name(t.dtype())));
  if (t.numel() != 1)
    ctx.fail(ErrorKind::InvalidInput, std::string(what) + " must hold one element, got shape " + t.shape().to_string());
  return *static_cast<const uint8_t*>(t.raw()) != 0;
}

}  // namespace onemodel::rt
