// The pool's one promise: every chunk runs exactly once, whatever the thread count, nesting or concurrency.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "base/thread_pool.h"
#include "kernels/scratch_slots.h"

namespace onemodel {
namespace {

TEST(ThreadPool, EveryChunkExactlyOnce) {
  // Chunk counts below, at and above the thread count: parts of zero, one and many chunks, and parts left to
  // other threads when a worker joins late or not at all.
  for (int threads : {1, 2, 3, 7}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.threads(), threads);
    for (int64_t chunks : {0, 1, 2, 3, 5, 64, 1000}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(chunks));
      // Plenty of declared work so workers really wake.
      parallel_for(&pool, chunks, 1e9, [&](int64_t c) { hits[static_cast<size_t>(c)].fetch_add(1); });
      for (int64_t c = 0; c < chunks; ++c) ASSERT_EQ(hits[static_cast<size_t>(c)].load(), 1) << threads << " " << c;
    }
  }
}

TEST(ThreadPool, UsesWorkersForBigWorkOnly) {
  ThreadPool pool(2);
  std::atomic<int> off_caller{0};
  const auto caller = std::this_thread::get_id();
  // Small work: everything on the caller.
  parallel_for(&pool, 100, 1000.0, [&](int64_t) {
    if (std::this_thread::get_id() != caller) off_caller.fetch_add(1);
  });
  EXPECT_EQ(off_caller.load(), 0);
}

TEST(ThreadPool, NestedAndConcurrentCallsComplete) {
  ThreadPool pool(3);
  std::atomic<int64_t> total{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t)
    callers.emplace_back([&] {
      for (int rep = 0; rep < 50; ++rep)
        parallel_for(&pool, 8, 1e9,
                     [&](int64_t) { parallel_for(&pool, 4, 1e9, [&](int64_t) { total.fetch_add(1); }); });
    });
  for (auto& th : callers) th.join();
  EXPECT_EQ(total.load(), 4 * 50 * 8 * 4);
}

TEST(ThreadPool, CurrentThreadNamesEachThreadOnce) {
  // The caller is thread 0; each worker keeps one number in [1, threads) (kernels/scratch_slots.h keys its
  // slots by it), and no two threads share one.
  constexpr int kThreads = 4;
  ThreadPool pool(kThreads);
  EXPECT_EQ(ThreadPool::current_thread(), 0);
  std::mutex mu;
  std::map<std::thread::id, std::vector<int>> seen;
  const auto caller = std::this_thread::get_id();
  for (int rep = 0; rep < 200; ++rep)
    parallel_for(&pool, 64, 1e9, [&](int64_t) {
      volatile double x = 0;
      for (int i = 0; i < 2000; ++i) x = x + 1.0;  // long enough that workers join
      std::lock_guard<std::mutex> lock(mu);
      seen[std::this_thread::get_id()].push_back(ThreadPool::current_thread());
    });
  std::map<int, std::thread::id> owner;
  for (const auto& [id, values] : seen) {
    for (int v : values) {
      ASSERT_EQ(v, values.front());
      if (id == caller) {
        EXPECT_EQ(v, 0);
      } else {
        EXPECT_GE(v, 1);
        EXPECT_LT(v, kThreads);
      }
    }
    EXPECT_TRUE(owner.emplace(values.front(), id).second) << "two threads named " << values.front();
  }
  EXPECT_EQ(ThreadPool::current_thread(), 0);
}

TEST(ThreadPool, SlotsPreferTheRunningThreadsOwn) {
  // Outside a pool the running thread is 0, so slot 0 first, then the next free one; a released slot is free.
  kern::Slots slots(3);
  EXPECT_EQ(slots.acquire(), 0);
  EXPECT_EQ(slots.acquire(), 1);
  EXPECT_EQ(slots.acquire(), 2);
  slots.release(1);
  EXPECT_EQ(slots.acquire(), 1);
  slots.release(0);
  EXPECT_EQ(slots.acquire(), 0);
  // Inside a pool of 3: each thread gets its own slot whenever it is free (one chunk at a time per thread).
  ThreadPool pool(3);
  kern::Slots mine(3);
  std::atomic<int> mismatches{0};
  parallel_for(&pool, 300, 1e9, [&](int64_t) {
    const int s = mine.acquire();
    if (s != ThreadPool::current_thread() % 3) mismatches.fetch_add(1);
    mine.release(s);
  });
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(ThreadPool, NullPoolRunsInline) {
  int64_t sum = 0;
  parallel_for(nullptr, 10, 1e9, [&](int64_t c) { sum += c; });
  EXPECT_EQ(sum, 45);
}

}  // namespace
}  // namespace onemodel
