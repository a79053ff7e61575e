// The per-node profiler behind Session::start_profiling / end_profiling (docs/profiling.md). While it is
// active every run times each of its steps and adds them here; nodes of control-flow bodies are recorded
// under their path and their parent, so self times add up to the run without counting a body twice.
#pragma once
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "onemodel/profile.h"
#include "runtime/kernel.h"

namespace onemodel::rt {

class Profiler;

// Where the steps of one graph run are recorded: the profiler, the path prefix of the graph's nodes ("" for
// the model's graph, "If_12/then_branch/" for a body) and the node whose body this is (null at the top).
struct ProfileScope {
  Profiler* profiler = nullptr;
  std::string path;
  int depth = 0;
  const NodeInfo* parent = nullptr;
};

class Profiler {
 public:
  bool active() const { return active_.load(std::memory_order_relaxed); }
  // Clears what was recorded and starts recording.
  void start();
  // Stops recording and summarises (an empty Profile when it was never started).
  Profile finish();

  void record_step(const ProfileScope& scope, const NodeInfo& node, int64_t ns);
  void record_run(int64_t ns);

 private:
  struct Entry {
    std::string path, op_type;
    int depth = 0;
    const NodeInfo* parent = nullptr;
    int64_t calls = 0, ns = 0;
  };
  std::atomic<bool> active_{false};
  std::mutex mutex_;
  std::unordered_map<const NodeInfo*, Entry> entries_;  // NodeInfos live as long as the session's graphs
  int64_t runs_ = 0, run_ns_ = 0;
};

}  // namespace onemodel::rt
