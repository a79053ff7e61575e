// What an EagerTensor holds and what a recording Tracer keeps (docs/model-building.md section 8).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "build/state.h"
#include "onemodel/builder.h"
#include "onemodel/trace.h"

namespace onemodel::build {

class TraceState;

struct EagerCell {
  Tensor value;  // contiguous
  uint64_t version = 0;
  // Set when the value depends on an input of a trace: that trace and the builder value it recorded.
  std::weak_ptr<TraceState> tracer;
  int var = -1;
};

class TraceState : public std::enable_shared_from_this<TraceState> {
 public:
  TraceState() : builder(20) {}

  // The tracer recording on this thread, or null.
  static std::shared_ptr<TraceState>& active();
  // True when `c` depends on an input of this trace and the trace still records.
  bool traces(const EagerCell& c) const { return recording && c.tracer.lock().get() == this; }

  EagerTensor input(const std::string& name, const Tensor& example, const std::vector<std::string>& axis_names);
  void parameter(const std::string& name, const EagerTensor& weight);
  // Writes the operation that computed `results` from `inputs` (some traced by this trace) and links the results.
  void record(std::string_view op, const std::vector<EagerTensor>& inputs, const std::vector<Attr>& attrs,
              const std::vector<EagerTensor>& results);
  TracedModel finish(const std::vector<std::pair<std::string, EagerTensor>>& outputs);

  GraphBuilder builder;
  bool recording = true;

 private:
  Var var_of(const EagerTensor& t);
  void link(const EagerTensor& t, const Var& v);
  int64_t example_of(DimId d) const;
  Var shape_operand(const std::vector<DimId>& dims, bool allow_minus_one);
  std::vector<DimId> reshape_dims(const Var& x, const Shape& target);
  std::vector<DimId> expand_dims(const Var& x, const Shape& target);
  void check_sizes(std::string_view op, const std::vector<Var>& out, const std::vector<EagerTensor>& results) const;

  std::unordered_map<std::string, int64_t> example_;  // symbol -> its example size
  std::unordered_map<std::string, int> constants_;    // storage key -> constant's value id
  // Storage keys are addresses: the cells are held here until the trace ends, so no other tensor can take an
  // address over while its key is in use.
  std::unordered_map<std::string, std::pair<std::string, std::shared_ptr<EagerCell>>> parameters_;  // -> name
  std::vector<std::pair<std::shared_ptr<EagerCell>, uint64_t>> captured_;  // constants and their versions
  std::unordered_map<DimId, std::pair<int, int>> sources_;                 // symbolic extent -> (value id, axis)
};

}  // namespace onemodel::build
