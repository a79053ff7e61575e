// Values (graph-runtime.md section 8): what a model input or output can hold besides a plain tensor — a
// sequence of tensors, or an optional holding a tensor, a sequence, or nothing. A Value is an immutable
// handle: copies share the same tensors (like Tensor copies share storage), so passing one around is cheap.
#pragma once
#include <memory>
#include <vector>

#include "onemodel/dtype.h"
#include "onemodel/session.h"
#include "onemodel/tensor.h"

namespace onemodel {

class Value {
 public:
  Value() = default;  // no value at all: kind() is Unknown
  // A tensor value (implicit, so a Tensor can be passed wherever a Value is expected).
  Value(Tensor t);  // NOLINT(google-explicit-constructor)

  // A sequence. Every item must be a non-empty tensor of one element type; `elem` (Undefined = taken from
  // the items) names the element type, which an empty sequence needs. Error(InvalidArgument) otherwise.
  static Value sequence(std::vector<Tensor> items, DType elem = DType::Undefined);
  // An optional holding `content` (a tensor or a sequence value).
  static Value optional(Value content);
  // An optional holding nothing; `content` (Tensor or Sequence) and `elem` describe what it could hold.
  static Value none(ValueKind content = ValueKind::Tensor, DType elem = DType::Undefined);

  ValueKind kind() const noexcept { return kind_; }
  bool empty() const noexcept { return kind_ == ValueKind::Unknown; }
  bool is_tensor() const noexcept { return kind_ == ValueKind::Tensor; }

  // The tensor of a tensor value; Error(InvalidArgument) for any other kind.
  const Tensor& tensor() const;
  // The items of a sequence value; Error(InvalidArgument) for any other kind.
  const std::vector<Tensor>& items() const;
  // Optional: whether it holds something, and what (Error(InvalidArgument) when it holds nothing).
  bool has_element() const;
  const Value& element() const;
  // Optional: the kind it holds or would hold (Tensor or Sequence). Unknown for other kinds.
  ValueKind content_kind() const noexcept { return content_; }
  // Element type: a tensor's dtype, a sequence's item type, an optional's content element type.
  DType elem_type() const noexcept { return elem_; }

 private:
  ValueKind kind_ = ValueKind::Unknown;
  ValueKind content_ = ValueKind::Unknown;
  DType elem_ = DType::Undefined;
  Tensor tensor_;
  std::shared_ptr<const std::vector<Tensor>> items_;
  std::shared_ptr<const Value> element_;
};

struct NamedValue {
  std::string name;
  Value value;
};

}  // namespace onemodel
