// Scratch buffers for chunks that run concurrently (kernels/conv_driver.cc depthwise phase planes, the
// Winograd blocks of kernels/winograd.cc): a kernel cuts its scratch into slot_count(threads) equal slots and
// each running chunk holds one. At most `threads` chunks run at once, so a free slot exists except when there
// are more threads than slots (then a chunk waits for one). Which slot a chunk gets never changes a result.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>

namespace onemodel::kern {

inline constexpr int kMaxSlots = 64;

inline int slot_count(int threads) { return std::clamp(threads, 1, kMaxSlots); }

class Slots {
 public:
  explicit Slots(int n) : n_(n) {
    for (auto& b : busy_) b.store(0, std::memory_order_relaxed);
  }
  int acquire() {
    for (;;) {
      for (int i = 0; i < n_; ++i)
        if (busy_[i].load(std::memory_order_relaxed) == 0 && busy_[i].exchange(1, std::memory_order_acquire) == 0)
          return i;
      std::this_thread::yield();
    }
  }
  void release(int i) { busy_[i].store(0, std::memory_order_release); }

 private:
  int n_;
  std::atomic<uint8_t> busy_[kMaxSlots];
};

}  // namespace onemodel::kern
