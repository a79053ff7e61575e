// Scratch buffers for chunks that run concurrently (kernels/conv_driver.cc depthwise phase planes, the
// Winograd blocks of kernels/winograd.cc): a kernel cuts its scratch into slot_count(threads) equal slots and
// each running chunk holds one. At most `threads` chunks run at once, so a free slot exists except when there
// are more threads than slots (then a chunk waits for one). Which slot a chunk gets never changes a result.
// A chunk first tries the slot of the pool thread running it (ThreadPool::current_thread), so each thread keeps
// reusing one slot, which stays in its core's cache: taking the first free slot handed the two slots back and
// forth between the threads of a 2-thread pool, moving every depthwise phase plane between the cores.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>

#include "base/thread_pool.h"

namespace onemodel::kern {

inline constexpr int kMaxSlots = 64;

inline int slot_count(int threads) { return std::clamp(threads, 1, kMaxSlots); }

class Slots {
 public:
  explicit Slots(int n) : n_(n) {
    for (int i = 0; i < n_; ++i) busy_[i].v.store(0, std::memory_order_relaxed);
  }
  int acquire() {
    const int home = ThreadPool::current_thread() % n_;
    for (;;) {
      for (int j = 0; j < n_; ++j) {
        const int i = (home + j) % n_;
        if (busy_[i].v.load(std::memory_order_relaxed) == 0 && busy_[i].v.exchange(1, std::memory_order_acquire) == 0)
          return i;
      }
      std::this_thread::yield();
    }
  }
  void release(int i) { busy_[i].v.store(0, std::memory_order_release); }

 private:
  struct alignas(64) Flag {  // one cache line each: threads taking their own slots do not share a line
    std::atomic<uint8_t> v;
  };
  int n_;
  Flag busy_[kMaxSlots];
};

}  // namespace onemodel::kern
