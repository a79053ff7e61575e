#include "base/thread_pool.h"

#include <algorithm>

namespace onemodel {
namespace {
thread_local bool t_inside_chunk = false;  // nested calls run inline: a worker never waits on its own pool
}

ThreadPool::ThreadPool(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
#ifdef __EMSCRIPTEN__
  threads = 1;  // the wasm build has no threads
#endif
  threads_ = threads;
  workers_.reserve(static_cast<size_t>(threads - 1));
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::run_chunks() {
  const bool was_inside = t_inside_chunk;
  t_inside_chunk = true;
  for (int64_t c = next_.fetch_add(1, std::memory_order_relaxed); c < chunks_;
       c = next_.fetch_add(1, std::memory_order_relaxed))
    fn_(ctx_, c);
  t_inside_chunk = was_inside;
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || (generation_ != seen && wanted_ > 0); });
    if (stop_) return;
    seen = generation_;
    --wanted_;
    ++active_;
    lock.unlock();
    run_chunks();
    lock.lock();
    if (--active_ == 0) done_.notify_all();
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
  {
    std::lock_guard<std::mutex> lock(mutex_);
    fn_ = fn;
    ctx_ = ctx;
    chunks_ = chunks;
    next_.store(0, std::memory_order_relaxed);
    wanted_ = static_cast<int>(extra);
    ++generation_;
  }
  wake_.notify_all();
  run_chunks();
  std::unique_lock<std::mutex> lock(mutex_);
  wanted_ = 0;  // workers that have not woken yet stay out: every chunk is already taken
  done_.wait(lock, [&] { return active_ == 0; });
}

}  // namespace onemodel
