// The pool's one promise: every chunk runs exactly once, whatever the thread count, nesting or concurrency.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "base/thread_pool.h"

namespace onemodel {
namespace {

TEST(ThreadPool, EveryChunkExactlyOnce) {
  for (int threads : {1, 2, 7}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.threads(), threads);
    for (int64_t chunks : {0, 1, 2, 3, 64, 1000}) {
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

TEST(ThreadPool, NullPoolRunsInline) {
  int64_t sum = 0;
  parallel_for(nullptr, 10, 1e9, [&](int64_t c) { sum += c; });
  EXPECT_EQ(sum, 45);
}

}  // namespace
}  // namespace onemodel
