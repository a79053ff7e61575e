// bindings/run_thread.h: the Node addon's per-session run thread (bindings/README.md, "The Node-API addon").
#include "../../bindings/run_thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace onemodel::binding {
namespace {

TEST(RunThread, RunsOnItsOwnThreadEveryTime) {
  RunThread rt;
  std::vector<std::thread::id> seen;
  for (int i = 0; i < 3; ++i) {
    // From three different caller threads, as libuv's workers would be.
    std::thread caller([&] { rt.run([&] { seen.push_back(std::this_thread::get_id()); }); });
    caller.join();
  }
  ASSERT_EQ(seen.size(), 3u);
  for (const std::thread::id& id : seen) {
    EXPECT_EQ(id, rt.id());
    EXPECT_NE(id, std::this_thread::get_id());
  }
}

TEST(RunThread, ABusyThreadLeavesASecondCallerOnItsOwnThread) {
  RunThread rt;
  std::promise<void> started, release;
  std::shared_future<void> released = release.get_future().share();
  std::thread::id first_ran, second_ran, second_caller;
  std::thread first([&] {
    rt.run([&] {
      first_ran = std::this_thread::get_id();
      started.set_value();
      released.wait();
    });
  });
  started.get_future().wait();
  std::thread second([&] {
    second_caller = std::this_thread::get_id();
    rt.run([&] { second_ran = std::this_thread::get_id(); });
  });
  second.join();  // finishes while the first run still holds the thread
  release.set_value();
  first.join();
  EXPECT_EQ(first_ran, rt.id());
  EXPECT_EQ(second_ran, second_caller);
  // Free again: the next run is back on the run thread.
  std::thread::id third_ran;
  rt.run([&] { third_ran = std::this_thread::get_id(); });
  EXPECT_EQ(third_ran, rt.id());
}

TEST(RunThread, ExceptionsComeBackToTheCaller) {
  RunThread rt;
  std::thread::id threw_on;
  try {
    on_run_thread(&rt, [&] {
      threw_on = std::this_thread::get_id();
      throw std::runtime_error("from the run thread");
    });
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "from the run thread");
  }
  EXPECT_EQ(threw_on, rt.id());
  int ran_here = 0;
  on_run_thread(nullptr, [&] { ran_here = 1; });  // no thread: right here
  EXPECT_EQ(ran_here, 1);
}

TEST(RunThread, ManyCallersAndTheDestructorJoin) {
  std::atomic<int> on_thread{0}, total{0};
  auto rt = std::make_unique<RunThread>();
  const std::thread::id id = rt->id();
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c)
    callers.emplace_back([&] {
      for (int i = 0; i < 200; ++i)
        rt->run([&] {
          total.fetch_add(1);
          if (std::this_thread::get_id() == id) on_thread.fetch_add(1);
        });
    });
  for (std::thread& t : callers) t.join();
  rt.reset();  // joins the idle thread
  EXPECT_EQ(total.load(), 800);
  EXPECT_GT(on_thread.load(), 0);
}

// post(): the work runs on the run thread, the thread is free again when `then` runs (a run the hand-back
// starts at once lands there too), a post while a task holds the thread is refused, and a run() meanwhile
// runs on its caller.
TEST(RunThread, PostRunsThereThenHandsBackWithTheThreadFree) {
  RunThread rt;
  std::promise<void> started, release, handed_back;
  std::shared_future<void> released = release.get_future().share();
  std::thread::id work_ran, then_ran, again_ran;
  ASSERT_TRUE(rt.post(
      [&] {
        work_ran = std::this_thread::get_id();
        started.set_value();
        released.wait();
      },
      [&] {
        then_ran = std::this_thread::get_id();
        // Free already: a post from here is taken (it runs once this hand-back returns).
        EXPECT_TRUE(rt.post([&] { again_ran = std::this_thread::get_id(); }, [&] { handed_back.set_value(); }));
      }));
  started.get_future().wait();
  EXPECT_FALSE(rt.post([] { ADD_FAILURE() << "ran while the thread was busy"; }, [] {}));
  std::thread::id ran_beside;
  rt.run([&] { ran_beside = std::this_thread::get_id(); });  // busy: on this thread
  EXPECT_EQ(ran_beside, std::this_thread::get_id());
  release.set_value();
  handed_back.get_future().wait();
  EXPECT_EQ(work_ran, rt.id());
  EXPECT_EQ(then_ran, rt.id());
  EXPECT_EQ(again_ran, rt.id());
  std::thread::id last;
  rt.run([&] { last = std::this_thread::get_id(); });  // free again after the second post's hand-back
  EXPECT_EQ(last, rt.id());
}

}  // namespace
}  // namespace onemodel::binding
