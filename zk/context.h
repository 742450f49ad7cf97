// lockstep contract: a client's context — time, sleeps, randomness and root tasks.
//
// Every client (a simulated one or a real ZooKeeper handle) owns one Context over its
// executor. Recipes take time, deadlines and randomness only from here, never from the system:
// in the simulator time is virtual and the random stream is split from the run's seed.
//
// spawn() starts a root task: it is scheduled on the executor (it does not run inline) and
// its frame is destroyed when it finishes. The Context owns unfinished roots and destroys them
// when it is destroyed, so a test may drop a world with coroutines still suspended.
// Single-threaded: use only on the executor's thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "zk/error.h"
#include "zk/flat_map.h"
#include "zk/random.h"
#include "zk/task.h"
#include "zk/wait.h"

namespace zk {

class Context;

namespace detail {
class SleepTimer;
struct RootState {
  TaskContext ctx;
  std::coroutine_handle<> frame;
  bool done = false;
  Context* owner = nullptr;
  // Made by the first join() (most tasks are never joined): one kOk is posted to it when the
  // task finishes, or at once if it already has.
  std::optional<Mailbox<Status>> joiners;
};
}  // namespace detail

// A handle on a spawned root task. Copies refer to the same task; the handle may outlive it.
class TaskHandle {
 public:
  TaskHandle() = default;
  explicit TaskHandle(std::shared_ptr<detail::RootState> s) : s_(std::move(s)) {}

  bool valid() const { return static_cast<bool>(s_); }
  bool done() const { return s_->done; }
  uint32_t id() const { return s_->ctx.id; }
  const std::string& name() const { return s_->ctx.name; }
  // Delivers one cancellation to the task (see zk/task.h). No-op once it is done.
  void cancel() const {
    if (!s_->done) s_->ctx.cancel();
  }
  // Completes with kOk when the task has finished (at once if it already has).
  // REQUIRES: at most one joiner at a time.
  auto join() const {
    if (!s_->joiners) {
      s_->joiners.emplace();
      if (s_->done) s_->joiners->post(Status{});
    }
    return s_->joiners->next();
  }

 private:
  std::shared_ptr<detail::RootState> s_;
};

class Context {
 public:
  Context(Executor& executor, uint64_t seed);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  Time now() const { return executor_.now(); }
  Executor& executor() { return executor_; }

  // Completes with kOk after `d` (at once for d <= 0... still through the executor), or with
  // kCancelled if the task is cancelled first.
  Future<Status> sleep_for(Duration d);
  Future<Status> sleep_until(Time t);

  // Uniform in [0, bound), from this context's own stream. REQUIRES: bound > 0.
  uint64_t random_below(uint64_t bound) { return rng_.below(bound); }
  Prng& rng() { return rng_; }

  // Starts `task` as a root task named `name` (scheduled, not run inline).
  TaskHandle spawn(Task<void> task, std::string name);

  // Number of root tasks that have not finished.
  size_t live_tasks() const { return roots_.size(); }

 private:
  static void root_done(void* arg);

  Executor& executor_;
  Prng rng_;
  uint32_t next_task_id_ = 1;
  // Unfinished root tasks by id (every lock grant spawns one: a FlatMap, no node per task).
  FlatMap<uint32_t, std::shared_ptr<detail::RootState>> roots_;
  // Pending sleeps, owned here until their timer fires (a cancelled sleeper leaves its timer).
  FlatMap<uint64_t, std::unique_ptr<detail::SleepTimer>> sleeps_;
  uint64_t next_sleep_key_ = 1;
};

}  // namespace zk
