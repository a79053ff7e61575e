#include "base/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <map>

namespace onemodel {
namespace {
thread_local bool t_inside_chunk = false;  // nested calls run inline: a worker never waits on its own pool
thread_local int t_thread = 0;             // ThreadPool::current_thread()
}  // namespace

int ThreadPool::current_thread() { return t_thread; }

ThreadPool::ThreadPool(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
  threads = 1;  // a wasm build without -pthread has no threads
#endif
  threads_ = threads;
  parts_ = std::make_unique<Part[]>(static_cast<size_t>(threads));
  workers_.reserve(static_cast<size_t>(threads - 1));
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

std::shared_ptr<ThreadPool> ThreadPool::for_session(int threads) {
#if defined(__EMSCRIPTEN_PTHREADS__)
  static std::mutex mutex;
  static auto* pools = new std::map<int, std::shared_ptr<ThreadPool>>;  // never destroyed (see the header)
  std::lock_guard<std::mutex> lock(mutex);
  std::shared_ptr<ThreadPool>& pool = (*pools)[threads];
  if (!pool) pool = std::make_shared<ThreadPool>(threads);
  return pool;
#else
  return std::make_shared<ThreadPool>(threads);
#endif
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true);
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::run_chunks(int self) {
  const bool was_inside = t_inside_chunk;
  t_inside_chunk = true;
  for (int i = 0; i < job_parts_; ++i) {
    Part& part = parts_[static_cast<size_t>((self + i) % job_parts_)];
    for (int64_t c = part.next.fetch_add(1, std::memory_order_relaxed); c < part.end;
         c = part.next.fetch_add(1, std::memory_order_relaxed))
      fn_(ctx_, c);
  }
  t_inside_chunk = was_inside;
}

namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

void ThreadPool::worker_loop(int id) {
  t_thread = id;
  uint64_t seen = 0;
  for (;;) {
    // Watch for the next job for kSpinNs, then sleep until one is published.
    bool fresh = false;
    const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(kSpinNs);
    for (int i = 0; !fresh; ++i) {
      if (stop_.load(std::memory_order_relaxed)) return;
      fresh = generation_.load() != seen;
      if (fresh) break;
      cpu_relax();
      if ((i & 63) == 63 && std::chrono::steady_clock::now() > until) break;
    }
    if (!fresh) {
      std::unique_lock<std::mutex> lock(mutex_);
      sleepers_.fetch_add(1);
      wake_.wait(lock, [&] { return stop_.load() || generation_.load() != seen; });
      sleepers_.fetch_sub(1);
      if (stop_.load()) return;
    }
    seen = generation_.load();
    active_.fetch_add(1);
    int w = wanted_.load();
    while (w > 0 && !wanted_.compare_exchange_weak(w, w - 1)) {
    }
    if (w > 0) run_chunks(id < job_parts_ ? id : job_parts_ - w);
    active_.fetch_sub(1);
  }
}

void ThreadPool::parallel_for(int64_t chunks, double work_ns, ChunkFn fn, void* ctx) {
  if (chunks <= 0) return;
  const int64_t by_work = static_cast<int64_t>(work_ns / kWorkPerThreadNs);
  const int64_t extra = std::min<int64_t>({static_cast<int64_t>(threads_ - 1), chunks - 1, by_work - 1});
  std::unique_lock<std::mutex> job(job_mutex_, std::try_to_lock);
  if (extra <= 0 || t_inside_chunk || !job.owns_lock()) {
    for (int64_t c = 0; c < chunks; ++c) fn(ctx, c);
    return;
  }
  fn_ = fn;
  ctx_ = ctx;
  job_parts_ = static_cast<int>(extra) + 1;
  for (int64_t p = 0; p < job_parts_; ++p) {
    parts_[static_cast<size_t>(p)].next.store(chunks * p / job_parts_, std::memory_order_relaxed);
    parts_[static_cast<size_t>(p)].end = chunks * (p + 1) / job_parts_;
  }
  wanted_.store(static_cast<int>(extra));
  generation_.fetch_add(1);  // publishes the job (sequentially consistent, like every access below)
  if (sleepers_.load() > 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    wake_.notify_all();
  }
  run_chunks(0);
  wanted_.store(0);  // places not yet claimed stay empty: every chunk is already taken
  for (int i = 0; active_.load() != 0; ++i) {
    if (i < 4096)
      cpu_relax();
    else
      std::this_thread::yield();
  }
}

}  // namespace onemodel
