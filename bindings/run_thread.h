// The thread a Node session's runs execute on (bindings/README.md, "The Node-API addon"). Header-only and
// free of Node-API, so tests/cpp/run_thread_test.cc checks it under the sanitizers.
//
// Why: the engine keeps its scratch (packed panels, im2col strips, phase planes) per thread. Runs handed to
// whichever of libuv's four workers was free found that scratch cold and kept four copies of it (the engine's
// time per run above the CLI's unless the process was pinned to one CPU, and PP-OCRv4 det's RSS growing with
// the calls; the measurements are in bindings/README.md). The JS thread posts a run to its session's RunThread
// (post); a run started while another run of the session is still on it goes to a libuv worker, which runs it
// itself (run finds the thread busy) or hands it over and waits, so concurrent runs of one session still run
// side by side.
#ifndef ONEMODEL_BINDINGS_RUN_THREAD_H_
#define ONEMODEL_BINDINGS_RUN_THREAD_H_

#include <atomic>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace onemodel::binding {

class RunThread {
 public:
  RunThread() : thread_([this] { loop(); }) {}
  // Joins the thread. Whoever drops the last reference does it while no run uses the thread (a run's job holds
  // a reference), so the join only waits for the idle thread to wake and return.
  ~RunThread() {
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  RunThread(const RunThread&) = delete;
  RunThread& operator=(const RunThread&) = delete;

  // Runs `f` (which must not throw) on this thread and returns when it has finished; when another caller's
  // task is here, runs `f` on the calling thread instead.
  void run(const std::function<void()>& f) {
    if (busy_.exchange(true)) return f();
    std::unique_lock<std::mutex> lock(m_);
    task_ = &f;
    wake_.notify_all();
    wake_.wait(lock, [&] { return task_ == nullptr; });
    busy_.store(false);
  }

  // Hands `work` to this thread without waiting for it: there it runs, then the thread counts as free again and
  // runs `then` (which hands the result back to the caller's thread; neither may throw). Returns false, having
  // run nothing, when another task is here. The Node addon posts a run from the JS thread this way, one thread
  // wake each way instead of two through a libuv worker (bindings/README.md).
  bool post(std::function<void()> work, std::function<void()> then) {
    if (busy_.exchange(true)) return false;
    {
      std::lock_guard<std::mutex> lock(m_);
      posted_work_ = std::move(work);
      posted_then_ = std::move(then);
    }
    wake_.notify_all();
    return true;
  }

  std::thread::id id() const { return thread_.get_id(); }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(m_);
    for (;;) {
      wake_.wait(lock, [&] { return stop_ || task_ != nullptr || posted_work_ != nullptr; });
      if (task_ != nullptr) {
        lock.unlock();
        (*task_)();
        lock.lock();
        task_ = nullptr;
        wake_.notify_all();
        continue;
      }
      if (posted_work_ != nullptr) {
        std::function<void()> work = std::move(posted_work_), then = std::move(posted_then_);
        posted_work_ = nullptr;
        posted_then_ = nullptr;
        lock.unlock();
        work();
        busy_.store(false);  // free before the hand-back: the caller's next run may come right after it
        then();
        work = nullptr;  // the tasks' captures go here, off the lock
        then = nullptr;
        lock.lock();
        continue;
      }
      return;  // stop_
    }
  }

  std::atomic<bool> busy_{false};  // a task (run's or post's) holds the thread
  std::mutex m_;                   // guards task_, posted_work_, posted_then_ and stop_
  std::condition_variable wake_;
  const std::function<void()>* task_ = nullptr;
  std::function<void()> posted_work_, posted_then_;
  bool stop_ = false;
  std::thread thread_;  // last: it starts once the members above exist
};

// Runs f() on `runner` (nullptr: right here) and rethrows here whatever it threw there.
template <class F>
void on_run_thread(RunThread* runner, F&& f) {
  if (runner == nullptr) return f();
  std::exception_ptr failure;
  runner->run([&] {
    try {
      f();
    } catch (...) {
      failure = std::current_exception();
    }
  });
  if (failure) std::rethrow_exception(failure);
}

}  // namespace onemodel::binding

#endif  // ONEMODEL_BINDINGS_RUN_THREAD_H_
