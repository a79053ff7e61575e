// ir::Model helpers.
#include "ir/graph.h"

namespace onemodel::ir {

// The empty domain and "ai.onnx" name the same operator set; the last import of a domain wins.
int64_t Model::opset_for(std::string_view d) const {
  if (d == "ai.onnx") d = "";
  int64_t v = 0;
  for (const auto& o : opset_imports) {
    std::string_view od = o.domain;
    if (od == "ai.onnx") od = "";
    if (od == d) v = o.version;
  }
  return v;
}

}  // namespace onemodel::ir
