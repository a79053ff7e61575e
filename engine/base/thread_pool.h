// The intra-op thread pool (kernels-gemm.md, "Fixed chunks and thread independence"). A kernel splits its work
// into chunks whose sizes are constants of the kernel and the shape, never of the thread count, and every chunk
// writes its own outputs; the pool only decides who runs which chunk. So results cannot depend on how many
// threads there are, and the kernel tests check exactly that (1, 2 and 7 threads).
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace onemodel {

class ThreadPool {
 public:
  // `threads` counts the calling thread: 1 means no workers. 0 means one per logical core.
  explicit ThreadPool(int threads);
  // The pool a session runs on. Natively a pool of its own. In the threaded wasm build every session with the same
  // thread count shares one pool that is never destroyed: a browser's main thread cannot wait for a Web Worker
  // to start (the start is a message its own event loop must handle), so joining a worker from it could hang,
  // and the Workers the module keeps ready (docs/wasm-threads.md) are then enough for every session.
  static std::shared_ptr<ThreadPool> for_session(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int threads() const { return threads_; }

  // About 10 us of work per joining thread: below that, handing work over costs more than it saves. (It was
  // 80 us while every job woke sleeping threads; with workers watching for jobs, a job reaches them in well
  // under a microsecond. At 20 us openWakeWord's 30-50 us convolutions ran on one thread at 2; 10 us gave
  // 0.83x on that model and 0.95x on PP-OCRv4 det at 2 threads, 5 us was slower on det. Alternated minima.)
  static constexpr double kWorkPerThreadNs = 10000.0;
  // A worker that finished a job watches for the next one this long before it sleeps: a model's operators
  // come back to back, and a sleeping thread takes tens of microseconds to wake (a futex), a watching one
  // well under one (measured: MobileNetV3 at 2 threads was slower than at 1 with sleep-after-every-job).
  static constexpr int64_t kSpinNs = 100000;

  using ChunkFn = void (*)(void* ctx, int64_t chunk);
  // Calls fn(ctx, c) once for every c in [0, chunks) and returns when all have finished. `work_ns` is the
  // caller's estimate of the whole call's work; it caps how many workers join (none below 2 x 10 us). Runs on
  // the calling thread alone when the pool is already busy with another call (concurrent Session::run calls
  // share one pool) or when called from inside a chunk. No heap allocation. fn must not throw.
  void parallel_for(int64_t chunks, double work_ns, ChunkFn fn, void* ctx);

  // Which thread of its pool runs the current chunk: 0 for the calling thread (and outside any chunk), i for
  // worker i. A hint for keeping per-thread scratch on one core (kernels/scratch_slots.h); a chunk's result
  // must never depend on it.
  static int current_thread();

 private:
  void worker_loop(int id);
  // Runs chunks until none is left: first those of part `self`, then what is left of the other parts.
  void run_chunks(int self);

  int threads_ = 1;
  std::vector<std::thread> workers_;
  std::mutex job_mutex_;  // one job at a time

  // A job's chunks are cut into one contiguous part per joining thread (the caller's is part 0, worker i's part
  // i when there are that many, else the place it claimed); each thread runs its own part from the front, then
  // takes what is left of the others. So in back-to-back calls of one shape a thread keeps meeting the same data, which
  // stays in its own core's cache; one shared counter dealt the chunks out alternately and moved the data between the
  // cores on every call (kernels-gemm.md section 8, with the measurements).
  struct alignas(64) Part {
    std::atomic<int64_t> next{0};
    int64_t end = 0;
  };
  std::unique_ptr<Part[]> parts_;  // threads_ of them, made once: parallel_for allocates nothing
  int job_parts_ = 0;

  // A job is published by writing fn_, ctx_, parts_, job_parts_ and wanted_, then bumping generation_. A worker
  // counts itself in active_ before it claims one of the wanted_ places, so the caller, which closes the
  // job by zeroing wanted_ and then waits for active_ to reach 0, never returns while a worker may still
  // read the job.
  std::mutex mutex_;  // only for sleeping and waking
  std::condition_variable wake_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> sleepers_{0};
  std::atomic<bool> stop_{false};
  std::atomic<int> wanted_{0};
  std::atomic<int> active_{0};
  ChunkFn fn_ = nullptr;
  void* ctx_ = nullptr;
};

// parallel_for on `pool`, or on the calling thread when pool is null. f(int64_t chunk) is any callable.
template <class F>
void parallel_for(ThreadPool* pool, int64_t chunks, double work_ns, F&& f) {
  if (chunks <= 0) return;
  if (pool == nullptr || pool->threads() == 1 || chunks == 1) {
    for (int64_t c = 0; c < chunks; ++c) f(c);
    return;
  }
  using Fn = std::remove_reference_t<F>;
  pool->parallel_for(
      chunks, work_ns, [](void* ctx, int64_t c) { (*static_cast<Fn*>(ctx))(c); },
      const_cast<void*>(static_cast<const void*>(&f)));
}

}  // namespace onemodel
