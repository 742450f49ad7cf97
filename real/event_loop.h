// lockstep real client: the event loop of one client process.
//
// An EventLoop is the zk::Executor of a real client process: every coroutine of every session
// that uses it resumes here, its timers fire here, and the ZooKeeper C client's completion and
// watcher callbacks (which run on the C client's own threads) never touch session state
// directly: they post() a closure, and the loop runs it. Several sessions (several C client
// handles) may share one loop, like one process holding several handles.
//
// Threads: the loop runs on the thread that calls run_until() / run_for() (its owner thread,
// fixed at construction; tests drive it from their own thread). post() is the only method that
// may be called from any thread. schedule(), start_timer(), cancel_timer(), now() and the run
// methods are owner-thread only (asserted in debug builds).
//
// Order: posted closures and scheduled coroutines run in the order they were posted or
// scheduled (one FIFO queue). Timers fire in (time, start order) once their time has come;
// due timers are checked between batches of queued work, so a timer may run slightly after
// work that was queued after its deadline.
//
// Time: now() is a monotonic clock (std::chrono::steady_clock) in microseconds since the loop
// was constructed. std::chrono is allowed in real/ only.
#pragma once

#include <chrono>
#include <condition_variable>
#include <coroutine>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "zk/task.h"
#include "zk/types.h"

namespace lockstep::real {

class EventLoop final : public zk::Executor {
 public:
  EventLoop();
  ~EventLoop() override;
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // ---- zk::Executor (owner thread) ----
  zk::Time now() const override;
  void schedule(std::coroutine_handle<> h) override;
  zk::TimerId start_timer(zk::Time at, zk::TimerCallback* cb) override;
  void cancel_timer(zk::TimerId id) override;

  // Thread-safe: runs `fn` on the loop, after everything posted or scheduled before it.
  void post(std::function<void()> fn);

  // Runs the loop on the calling (owner) thread until `done()` is true or `timeout_ms`
  // milliseconds of wall time pass. `done` is checked before the first wait, after every
  // closure and timer, and at least every kRecheckMs while idle (it may depend on the outside
  // world, e.g. a server's state). Returns done().
  bool run_until(const std::function<bool()>& done, int64_t timeout_ms);
  // Runs the loop for `d` of wall time.
  void run_for(zk::Duration d);

  static constexpr int64_t kRecheckMs = 5;

  // Number of pending timers (for tests of cancellation).
  size_t pending_timers() const { return timers_.size(); }

 private:
  using Clock = std::chrono::steady_clock;
  bool on_owner_thread() const { return std::this_thread::get_id() == owner_; }
  // Fires every timer that is due; returns how many fired.
  size_t fire_due_timers(const std::function<bool()>& done);

  const Clock::time_point start_;
  const std::thread::id owner_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;  // guarded by mu_

  // Owner thread only.
  std::map<std::pair<int64_t, zk::TimerId>, zk::TimerCallback*> timers_;
  std::map<zk::TimerId, int64_t> timer_at_;
  zk::TimerId next_timer_ = 1;
};

}  // namespace lockstep::real
