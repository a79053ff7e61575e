// The slab planner (graph-runtime.md section 5). It sees only sizes, element types and the order of steps,
// so it can be tested on synthetic step lists without kernels or models.
#pragma once
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "onemodel/dtype.h"

namespace onemodel::rt {

// What the slab planner sees of a graph value and of a plan step (a PlanStep reduced to value ids).
struct SlabValue {
  bool in_slab = false;  // false: input, constant or dynamic value; never placed
  size_t bytes = 0;
  DType dtype = DType::Undefined;
};

struct SlabStep {
  std::vector<int> inputs;   // value ids read (kNoValue entries allowed and ignored)
  std::vector<int> outputs;  // value ids written
  int in_place_input = -1;   // index into `inputs` whose block output 0 may take over
  bool view = false;         // output 0 is a view of inputs[0]: it shares the block
};

struct MemoryPlan {
  static constexpr int64_t kNotInSlab = -1;
  std::vector<int64_t> offsets;  // per value: byte offset in the slab, or kNotInSlab
  size_t slab_bytes = 0;
  std::vector<int> last_use;  // per value: last step reading it (for tests and poisoning)
  // Per step: the slab ranges (offset, bytes) that became free when the step finished. Checked builds
  // poison them so a read of a dead value shows up as garbage in the tests.
  std::vector<std::vector<std::pair<size_t, size_t>>> freed_after;
};

inline constexpr size_t kSlabAlign = 64;

// Places every in-slab value. `graph_outputs` live to the end. Throws Error(Unsupported) when the slab
// would exceed 2^31-1 bytes.
MemoryPlan plan_memory(const std::vector<SlabValue>& values, const std::vector<SlabStep>& steps,
                       const std::vector<int>& graph_outputs);

}  // namespace onemodel::rt
