// Reading a manifest (format.md section 2) into the ONNX importer's parsed structures (onnx/proto.h), so
// that resolution (onnx/resolve.cc) builds the same ir::Model an ONNX file gives. Tensors are views into
// the file's data region.
#pragma once
#include <memory>

#include "format/header.h"
#include "format/json.h"
#include "onnx/proto.h"

namespace onemodel::format {

// Reads the model object (node 0 of `json`) into `model` and its main graph into `graph`; functions are
// finished (onnx::finish_function) here. Errors name the manifest path (the caller has pushed "manifest"
// onto st.ctx) and the file offset.
void read_manifest(onnx::ImportState& st, const Json& json, const Header& header, ir::Model& model,
                   std::unique_ptr<onnx::ParsedGraph>& graph);

}  // namespace onemodel::format
