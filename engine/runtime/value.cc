// onemodel::Value: construction checks and accessors. Kept small: the runtime stores sequences and
// optionals as Values next to its tensor table, and only the kernels of section 8 look inside them.
#include "onemodel/value.h"

#include <string>

namespace onemodel {

namespace {

[[noreturn]] void bad(const std::string& message) { throw Error(ErrorKind::InvalidArgument, message); }

const char* kind_word(ValueKind k) {
  switch (k) {
    case ValueKind::Tensor: return "a tensor";
    case ValueKind::Sequence: return "a sequence";
    case ValueKind::Optional: return "an optional";
    case ValueKind::Unknown: return "no value";
    default: return "another kind of value";
  }
}

}  // namespace

Value::Value(Tensor t) : kind_(ValueKind::Tensor), elem_(t.dtype()), tensor_(std::move(t)) {
  if (tensor_.empty()) bad("a tensor value needs a non-empty tensor");
}

Value Value::sequence(std::vector<Tensor> items, DType elem) {
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].empty()) bad("sequence item " + std::to_string(i) + " is an empty tensor");
    if (elem == DType::Undefined) elem = items[i].dtype();
    if (items[i].dtype() != elem)
      bad("sequence item " + std::to_string(i) + " is " + std::string(dtype_short_name(items[i].dtype())) +
          ", the sequence holds " + std::string(dtype_short_name(elem)));
  }
  Value v;
  v.kind_ = ValueKind::Sequence;
  v.elem_ = elem;
  v.items_ = std::make_shared<const std::vector<Tensor>>(std::move(items));
  return v;
}

Value Value::optional(Value content) {
  if (content.kind() != ValueKind::Tensor && content.kind() != ValueKind::Sequence)
    bad(std::string("an optional holds a tensor or a sequence, not ") + kind_word(content.kind()));
  Value v;
  v.kind_ = ValueKind::Optional;
  v.content_ = content.kind();
  v.elem_ = content.elem_type();
  v.element_ = std::make_shared<const Value>(std::move(content));
  return v;
}

Value Value::none(ValueKind content, DType elem) {
  if (content != ValueKind::Tensor && content != ValueKind::Sequence && content != ValueKind::Unknown)
    bad("an optional holds a tensor or a sequence");
  Value v;
  v.kind_ = ValueKind::Optional;
  v.content_ = content;
  v.elem_ = elem;
  return v;
}

const Tensor& Value::tensor() const {
  if (kind_ != ValueKind::Tensor) bad(std::string("the value is ") + kind_word(kind_) + ", not a tensor");
  return tensor_;
}

const std::vector<Tensor>& Value::items() const {
  if (kind_ != ValueKind::Sequence) bad(std::string("the value is ") + kind_word(kind_) + ", not a sequence");
  return *items_;
}

bool Value::has_element() const {
  if (kind_ != ValueKind::Optional) bad(std::string("the value is ") + kind_word(kind_) + ", not an optional");
  return element_ != nullptr;
}

const Value& Value::element() const {
  if (!has_element()) bad("the optional holds no element");
  return *element_;
}

}  // namespace onemodel
