// The plan cache and option validation. The cache is a short most-recently-used list (16 entries by
// default); a linear scan over a handful of keys costs less than hashing shapes. Plans are built outside the
// cache lock, and two threads that need the same new plan build it once.
#include <optional>
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

std::shared_ptr<const ExecutionPlan> PlanCache::find(std::span<const InputSignature> key) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (!same_key((*it)->key(), key)) continue;
    if (it != entries_.begin()) entries_.splice(entries_.begin(), entries_, it);  // no allocation
    return entries_.front();
  }
  return nullptr;
}

// A plan is built without the lock, which every run takes: runs at shapes already planned go on while a new
// shape is planned (several milliseconds for OCR's recogniser). A thread that needs a plan another thread is
// building waits for that one, so a new plan is still built once; a build that fails fails both.
std::shared_ptr<const ExecutionPlan> PlanCache::get(const std::shared_ptr<const CompiledGraph>& graph,
                                                    std::span<const InputSignature> key) {
  std::optional<std::promise<std::shared_ptr<const ExecutionPlan>>> promise;  // made on a miss: a hit allocates nothing
  std::shared_future<std::shared_ptr<const ExecutionPlan>> other;             // another thread's build of this key
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto plan = find(key)) return plan;
    for (const Building& b : building_)
      if (same_key(b.key, key)) other = b.result;
    if (!other.valid()) {
      promise.emplace();
      building_.push_back(Building{std::vector<InputSignature>(key.begin(), key.end()), promise->get_future().share()});
    }
  }
  if (other.valid()) return other.get();
  std::shared_ptr<const ExecutionPlan> built;
  try {
    built = ExecutionPlan::create(graph, std::vector<InputSignature>(key.begin(), key.end()), memory_);
  } catch (...) {
    promise->set_exception(std::current_exception());
    std::lock_guard<std::mutex> lock(mutex_);
    forget(key);
    throw;
  }
  promise->set_value(built);
  std::vector<std::shared_ptr<const ExecutionPlan>> others;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    forget(key);
    ++built_;
    others.assign(entries_.begin(), entries_.end());
    entries_.push_front(built);
    while (entries_.size() > capacity_) entries_.pop_back();  // runs holding it keep their reference
  }
  // A new shape: the other plans' idle run states give their memory back, so the new plan's run state
  // reuses pages already written instead of faulting in fresh ones (graph-runtime.md section 5, "Reuse").
  // A plan whose state was dropped makes a new one from that memory when its shape comes back.
  for (const auto& p : others) p->drop_idle();
  return built;
}

void PlanCache::forget(std::span<const InputSignature> key) {
  for (auto it = building_.begin(); it != building_.end(); ++it)
    if (same_key(it->key, key)) {
      building_.erase(it);
      return;
    }
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
    throw Error(ErrorKind::InvalidArgument,
                "intra_op_threads must be between 0 and 256, got " + std::to_string(options.intra_op_threads));
  if (options.max_cached_plans < 1)
    throw Error(ErrorKind::InvalidArgument,
                "max_cached_plans must be at least 1, got " + std::to_string(options.max_cached_plans));
  if (options.max_nesting < 8 || options.max_nesting > 250)
    throw Error(ErrorKind::InvalidArgument,
                "max_nesting must be between 8 and 250, got " + std::to_string(options.max_nesting));
  if (options.mode != Mode::Fast && options.mode != Mode::Exact)
    throw Error(ErrorKind::InvalidArgument, "unknown mode " + std::to_string(static_cast<int>(options.mode)));
  if (options.optimization_level != OptimizationLevel::None && options.optimization_level != OptimizationLevel::Basic &&
      options.optimization_level != OptimizationLevel::All)
    throw Error(ErrorKind::InvalidArgument,
                "unknown optimization level " + std::to_string(static_cast<int>(options.optimization_level)));
  if (options.weight_storage != WeightStorage::Float32 && options.weight_storage != WeightStorage::Float16 &&
      options.weight_storage != WeightStorage::BFloat16)
    throw Error(ErrorKind::InvalidArgument,
                "unknown weight storage " + std::to_string(static_cast<int>(options.weight_storage)));
}

}  // namespace onemodel::rt
