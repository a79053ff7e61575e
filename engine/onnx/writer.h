// The ONNX writer (docs/model-building.md section 5): ir::Model -> ModelProto bytes. Deterministic: every message
// writes its fields in field-number order and repeated fields in the model's order, so equal models give equal
// bytes. Repeated scalars are packed; tensors of stored element types go into raw_data (little-endian), strings
// into string_data. What the writer cannot express (sparse tensors, functions, subgraph attributes) is refused
// with Error(Unsupported) naming it rather than dropped.
#pragma once
#include <string>

#include "ir/graph.h"

namespace onemodel::onnx {

std::string write_model(const ir::Model& model);

}  // namespace onemodel::onnx
