// Session::Impl and the plan cache (graph-runtime.md sections 3 and 4). The part runs need — the compiled
// graph and its plans — sits in a SessionCore held by shared_ptr: release() drops the session's reference,
// and runs in flight keep theirs, so they finish safely and the weights go when the last one leaves.
#pragma once
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "onemodel/session.h"
#include "runtime/compiled_graph.h"
#include "runtime/plan.h"
#include "runtime/profiler.h"

namespace onemodel::rt {

// Least-recently-used cache of plans keyed by the input element types and shapes. Entries are shared_ptr:
// evicting a plan never frees one a run is using.
class PlanCache {
 public:
  explicit PlanCache(size_t capacity) : capacity_(capacity) {}
  // The plan for `key`, building it (outside the cache lock) when absent.
  std::shared_ptr<const ExecutionPlan> get(const std::shared_ptr<const CompiledGraph>& graph,
                                           std::span<const InputSignature> key);
  size_t size() const;
  size_t plans_built() const;
  const RunMemory& run_memory() const { return *memory_; }

 private:
  struct Building {  // a plan some thread is building now
    std::vector<InputSignature> key;
    std::shared_future<std::shared_ptr<const ExecutionPlan>> result;
  };
  std::shared_ptr<const ExecutionPlan> find(std::span<const InputSignature> key);  // under mutex_; moves it first
  void forget(std::span<const InputSignature> key);                                // under mutex_: drops its Building

  mutable std::mutex mutex_;
  size_t capacity_;
  size_t built_ = 0;
  std::list<std::shared_ptr<const ExecutionPlan>> entries_;  // most recently used first
  std::vector<Building> building_;
  std::shared_ptr<RunMemory> memory_ = std::make_shared<RunMemory>();  // the run states' memory, shared by its plans
};

struct SessionCore {
  SessionCore(std::shared_ptr<const CompiledGraph> g, size_t max_plans) : graph(std::move(g)), cache(max_plans) {}
  std::shared_ptr<const CompiledGraph> graph;
  PlanCache cache;
  Profiler profiler;
};

// Validates options: intra_op_threads 0..256, max_cached_plans >= 1, max_nesting 8..250.
void validate_options(const SessionOptions& options);

}  // namespace onemodel::rt

namespace onemodel {

struct Session::Impl {
  SessionOptions options;
  std::vector<ValueInfo> inputs, outputs;
  std::vector<std::pair<std::string, int64_t>> opsets;
  std::vector<std::pair<std::string, int>> graph_passes;

  // The core, or Error(Disposed) after release().
  std::shared_ptr<rt::SessionCore> core() const;
  void release();

  mutable std::mutex mutex;
  std::shared_ptr<rt::SessionCore> core_;
};

// Builds a session from an imported model (used by load, load_bytes and tests, which may pass their own
// operator table).
Session make_session(std::shared_ptr<const ir::Model> model, const SessionOptions& options,
                     rt::OpLookup lookup = &rt::find_op);

}  // namespace onemodel
