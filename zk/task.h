// lockstep contract: the coroutine task type, the executor seam, and cancellation.
//
// Task<T> is a lazy, move-only coroutine. Creating one runs nothing; `co_await task` starts it
// and suspends the awaiter until it finishes (symmetric transfer both ways, so deep chains of
// tasks do not grow the stack). A task is awaited at most once. Root tasks are started with
// Context::spawn; every task awaited from a root shares the root's TaskContext, which carries
// its cancellation state and its identity for logs.
//
// Where coroutines resume: always on the executor of the context that spawned the root. A
// completed operation, a fired watch or an expired timer never resumes a coroutine inline; it
// calls Executor::schedule, and the executor resumes it later (the simulator makes that a
// scheduling choice, so a caller and a watch handler of one client interleave under the
// scheduler's control; the real client resumes it on the client's one event-loop thread).
//
// Cancellation is explicit and delivered once: TaskHandle::cancel() makes the await the task is
// suspended in (or, if it is running, its next cancellable await) complete with
// Error::kCancelled. Later awaits run normally, so a cancelled recipe can still clean up.
//
// Exceptions are not part of the contract: a coroutine that lets one escape terminates the
// process with a message (recipes report failures as Error values).
#pragma once

#include "zk/invariant.h"
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <utility>

#include "zk/types.h"

namespace zk {

using TimerId = uint64_t;

// Something that wants a call at a point in time (a sleep, a watch wait with a deadline).
class TimerCallback {
 public:
  virtual void on_timer() = 0;

 protected:
  ~TimerCallback() = default;
};

struct TaskContext;

// The executor seam: the one place where coroutines of a client are resumed and timers kept.
// Implemented by the simulator (virtual time, scheduler choices) and by the real client (one
// event-loop thread). Single-threaded: every method is called on the executor's own thread.
class Executor {
 public:
  virtual ~Executor() = default;
  virtual Time now() const = 0;
  // Resumes `h` later, on this executor, at the current time.
  virtual void schedule(std::coroutine_handle<> h) = 0;
  // The same, for a coroutine of root task `task` (nullptr: unknown). An executor that can
  // hold one task while the others run (the simulator's stall fault) overrides this.
  virtual void schedule(std::coroutine_handle<> h, const TaskContext* task) {
    (void)task;
    schedule(h);
  }
  // Calls cb->on_timer() on this executor at `at` (or as soon after as possible) unless
  // cancelled first. Returns a nonzero id.
  virtual TimerId start_timer(Time at, TimerCallback* cb) = 0;
  // Cancels a timer that has not fired. Cancelling a fired or unknown id is a no-op.
  virtual void cancel_timer(TimerId id) = 0;
};

// An await point that can be cancelled: while a task is suspended in one, the task's context
// points at it.
class Cancellable {
 public:
  virtual void on_cancel() = 0;

 protected:
  ~Cancellable() = default;
};

// Per-root-task state shared by every task the root awaits.
struct TaskContext {
  uint32_t id = 0;   // unique within its Context, in spawn order
  std::string name;  // for logs and traces ("caller", "watch-handler", ...)
  Executor* executor = nullptr;
  bool cancel_pending = false;          // cancel() arrived while not suspended
  Cancellable* suspended_on = nullptr;  // the cancellable await the task sits in, if any
  const char* yield_point = nullptr;    // the explicit yield point it is resuming from, if any

  // Delivers one cancellation (see the header comment).
  void cancel() {
    if (suspended_on != nullptr) {
      Cancellable* c = suspended_on;
      suspended_on = nullptr;
      c->on_cancel();
    } else {
      cancel_pending = true;
    }
  }
  // Consumes a pending cancellation, if any.
  bool take_cancel() { return std::exchange(cancel_pending, false); }
};

namespace detail {

// Coroutine frames come from a per-thread pool of reused blocks (zk/task.cc). Memory only: which
// block a frame gets never changes what runs.
void* allocate_frame(size_t n);
void release_frame(void* frame, size_t n);

[[noreturn]] inline void escaped_exception() {
  std::fputs("lockstep: an exception escaped a coroutine; recipes must return errors\n", stderr);
  std::abort();
}

struct PromiseBase {
  TaskContext* ctx = nullptr;
  std::coroutine_handle<> continuation;  // null for a root task
  void (*on_root_done)(void* arg) = nullptr;
  void* on_root_done_arg = nullptr;

  // An exception thrown out of an awaited task is carried to its awaiter, which rethrows it
  // from the co_await (so a caller can turn a recipe's exception into a verdict); one thrown out
  // of a root task, which nobody awaits, aborts the process with a message.
  std::exception_ptr exception;

  std::suspend_always initial_suspend() noexcept { return {}; }
  void unhandled_exception() noexcept {
    if (!continuation) escaped_exception();
    exception = std::current_exception();
  }

  static void* operator new(size_t n) { return allocate_frame(n); }
  static void operator delete(void* f, size_t n) { release_frame(f, n); }

  struct FinalAwaiter {
    bool await_ready() noexcept { return false; }
    template <class P>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<P> h) noexcept {
      PromiseBase& p = h.promise();
      if (p.continuation) return p.continuation;
      if (p.on_root_done != nullptr) p.on_root_done(p.on_root_done_arg);
      return std::noop_coroutine();
    }
    void await_resume() noexcept {}
  };
  FinalAwaiter final_suspend() noexcept { return {}; }
};

}  // namespace detail

// An explicit yield point: `co_await zk::yield_point("after-list")` lets the client's other tasks
// run before this one goes on, and names the place, so that a stall fault can hold the task
// exactly there (sim: `stall` with task "NAME@after-list"). Between two statements that must not
// be separated by another task's work, a recipe marks where it could be: the scheduler and the
// faults then try it. It completes at once in effect (through the executor, like every resume).
struct YieldPoint {
  const char* name;
  TaskContext* task = nullptr;
  bool await_ready() const noexcept { return false; }
  template <class P>
  void await_suspend(std::coroutine_handle<P> h) {
    task = h.promise().ctx;
    LOCKSTEP_ASSERT(task != nullptr && task->executor != nullptr && "yield outside a task");
    task->yield_point = name;
    task->executor->schedule(h, task);
  }
  void await_resume() noexcept {
    if (task != nullptr) task->yield_point = nullptr;
  }
};
// REQUIRES: `name` outlives the await (a string literal).
inline YieldPoint yield_point(const char* name) { return YieldPoint{name}; }

template <class T = void>
class [[nodiscard]] Task;

namespace detail {

template <class T>
struct TaskPromise : PromiseBase {
  std::optional<T> value;
  Task<T> get_return_object() noexcept;
  template <class U>
  void return_value(U&& v) {
    value.emplace(std::forward<U>(v));
  }
  T take() {
    if (exception) std::rethrow_exception(exception);
    return std::move(*value);
  }
};

template <>
struct TaskPromise<void> : PromiseBase {
  Task<void> get_return_object() noexcept;
  void return_void() noexcept {}
  void take() {
    if (exception) std::rethrow_exception(exception);
  }
};

}  // namespace detail

template <class T>
class [[nodiscard]] Task {
 public:
  using promise_type = detail::TaskPromise<T>;
  using Handle = std::coroutine_handle<promise_type>;

  Task() = default;
  explicit Task(Handle h) : h_(h) {}
  Task(Task&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  Task& operator=(Task&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, {});
    }
    return *this;
  }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  ~Task() { reset(); }

  bool valid() const { return static_cast<bool>(h_); }

  struct Awaiter {
    Handle child;
    bool await_ready() const noexcept { return false; }
    template <class P>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<P> parent) noexcept {
      child.promise().ctx = parent.promise().ctx;
      child.promise().continuation = parent;
      return child;
    }
    T await_resume() { return child.promise().take(); }
  };

  // REQUIRES: valid(); the task has not been awaited before.
  Awaiter operator co_await() && {
    LOCKSTEP_ASSERT(h_ && !h_.done());
    return Awaiter{h_};
  }

  // For executors that start root tasks: releases ownership of the coroutine frame.
  Handle release() { return std::exchange(h_, {}); }

 private:
  void reset() {
    if (h_) h_.destroy();
    h_ = {};
  }
  Handle h_;
};

// `co_await zk::this_task()` yields the id of the root task the awaiting coroutine runs under
// (TaskContext::id: unique within its Context, in spawn order), without suspending. It names
// the caller: a Lock used by several tasks of one client at once keeps what each acquire holds
// per task under this id (recipes/lock.h, shared callers), as Curator's InterProcessMutex keeps
// its lock data per thread.
struct ThisTask {
  uint32_t id = 0;
  bool await_ready() const noexcept { return false; }
  template <class P>
  bool await_suspend(std::coroutine_handle<P> h) noexcept {
    const TaskContext* ctx = h.promise().ctx;
    id = ctx != nullptr ? ctx->id : 0;
    return false;  // resume at once: nothing was waited for
  }
  uint32_t await_resume() const noexcept { return id; }
};
inline ThisTask this_task() { return {}; }

namespace detail {
template <class T>
Task<T> TaskPromise<T>::get_return_object() noexcept {
  return Task<T>(std::coroutine_handle<TaskPromise<T>>::from_promise(*this));
}
inline Task<void> TaskPromise<void>::get_return_object() noexcept {
  return Task<void>(std::coroutine_handle<TaskPromise<void>>::from_promise(*this));
}
}  // namespace detail

}  // namespace zk
