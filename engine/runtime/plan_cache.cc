// The plan cache and option validation. The cache is a short most-recently-used list (16 entries by
// default); a linear scan over a handful of keys costs less than hashing shapes. Plans are built under the
// cache lock, so two threads that need the same new plan build it once.
#include <string>

#include "runtime/session_impl.h"

namespace onemodel::rt {

namespace {

bool same_key(const std::vector<InputSignature>& a, std::span<const InputSignature> b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!(a[i] == b[i])) return false;
  return true;
}

}  // namespace

std::shared_ptr<const ExecutionPlan> PlanCache::get(const std::shared_ptr<const CompiledGraph>& graph,
                                                    std::span<const InputSignature> key) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (!same_key((*it)->key(), key)) continue;
    if (it != entries_.begin()) entries_.splice(entries_.begin(), entries_, it);  // no allocation
    return entries_.front();
  }
  std::shared_ptr<const ExecutionPlan> plan =
      ExecutionPlan::create(graph, std::vector<InputSignature>(key.begin(), key.end()));
  ++built_;
  entries_.push_front(plan);
  while (entries_.size() > capacity_) entries_.pop_back();  // runs holding it keep their reference
  return plan;
}

size_t PlanCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

size_t PlanCache::plans_built() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return built_;
}

void validate_options(const SessionOptions& options) {
  if (options.intra_op_threads < 0 || options.intra_op_threads > 256)
    throw Error(ErrorKind::InvalidArgument, "intra_op_threads must be between 0 and 256, got " +
                                                std::to_string(options.intra_op_threads));
  if (options.max_cached_plans < 1)
    throw Error(ErrorKind::InvalidArgument, "max_cached_plans must be at least 1, got " +
                                                std::to_string(options.max_cached_plans));
  if (options.max_nesting < 8 || options.max_nesting > 250)
    throw Error(ErrorKind::InvalidArgument, "max_nesting must be between 8 and 250, got " +
                                                std::to_string(options.max_nesting));
  if (options.mode != Mode::Fast && options.mode != Mode::Exact)
    throw Error(ErrorKind::InvalidArgument, "unknown mode " + std::to_string(static_cast<int>(options.mode)));
  if (options.optimization_level != OptimizationLevel::None && options.optimization_level != OptimizationLevel::Basic &&
      options.optimization_level != OptimizationLevel::All)
    throw Error(ErrorKind::InvalidArgument, "unknown optimization level " +
                                                std::to_string(static_cast<int>(options.optimization_level)));
}

}  // namespace onemodel::rt
