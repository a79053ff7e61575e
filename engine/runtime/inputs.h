// Input checks and copies shared by the session forms. All validation happens before a plan is looked up or
// anything runs, so a wrong call never half-runs (graph-runtime.md section 4).
#pragma once
#include <span>
#include <string>
#include <vector>

#include "onemodel/session.h"
#include "runtime/plan.h"
#include "tensor/readable.h"

namespace onemodel::rt {

// Copies any tensor (strided or not) into `dst` in row-major order; dst holds t.nbytes() bytes.
void copy_into(const Tensor& t, void* dst);
// A new contiguous, 64-byte-aligned copy of `t`.
Tensor contiguous_copy(const Tensor& t);
// `t` itself when kernels can read it in place (tensor/readable.h), else its contiguous_copy.
Tensor usable(const Tensor& t);

// Matches named tensors to the model's inputs. Returns, for each model input (in model order), the index
// into `names`/`tensors` of the tensor given for it. Error(InvalidInput) for an unknown, duplicate or
// missing name, an empty tensor, a wrong element type, a wrong rank or a wrong fixed extent.
std::vector<size_t> match_inputs(const std::vector<ValueInfo>& model_inputs, std::span<const std::string> names,
                                 std::span<const Tensor> tensors);
// The Value form of match_inputs: also checks kinds. A sequence input needs a sequence whose items have the
// declared element type (and, when declared, the item shape); an optional input takes an optional, or a
// plain value of its content kind, which is wrapped (the returned `normalized` holds the wrapped values,
// in model order). Error(InvalidInput) naming the input.
std::vector<size_t> match_value_inputs(const std::vector<ValueInfo>& model_inputs, std::span<const std::string> names,
                                       std::span<const Value> values, std::vector<Value>& normalized);
// Checks one tensor's element type and shape against the declared type of input `info`.
void check_input(const ValueInfo& info, DType dtype, const Shape& shape);
// Resolves output names to indices into `model_outputs`; all outputs in model order when `names` is empty.
std::vector<size_t> match_outputs(const std::vector<ValueInfo>& model_outputs, std::span<const std::string> names);

// "[batch, 3]" for messages and metadata printing.
std::string dims_to_string(const std::vector<Dim>& dims);

}  // namespace onemodel::rt
