// lockstep contract: awaitable results, mailboxes and the waiting machinery under them.
//
// Future<T> is the awaitable result of one operation; the implementation keeps the matching
// Promise<T> and fulfils it exactly once. Mailbox<T> is a queue with one consumer (session
// event subscriptions). Both resume their waiter through the waiting task's executor, never
// inline, and both honour cancellation and an optional deadline:
//   - cancellation (TaskHandle::cancel) completes the await with T::failure(kCancelled);
//   - a deadline that passes first completes it with T::failure(kOperationTimeout).
// T must provide `static T failure(Error)` (every zk::Result does).
//
// Ownership: the state is shared between the awaiting side and the fulfilling side. If the
// awaiting coroutine is destroyed while suspended, its awaiter detaches from the state, so a
// late fulfilment resumes nothing.
#pragma once

#include "zk/invariant.h"
#include <coroutine>
#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include "zk/error.h"
#include "zk/ring_queue.h"
#include "zk/task.h"

namespace zk {
namespace detail {

// One parked coroutine plus its deadline timer. The base of every awaitable state.
class Waiter : public Cancellable, public TimerCallback {
 public:
  Waiter() = default;
  Waiter(const Waiter&) = delete;
  Waiter& operator=(const Waiter&) = delete;
  virtual ~Waiter() { detach(); }

  bool parked() const { return static_cast<bool>(handle_) || static_cast<bool>(sink_); }

  // Parks a callback instead of a coroutine (the event dispatcher, zk/dispatcher.h): the next
  // resume_waiter() calls it synchronously, from inside the delivery, once. It may only queue
  // work; it runs in whatever the implementation was doing when it delivered.
  void park_sink(std::function<void()> sink) {
    LOCKSTEP_ASSERT(!handle_ && !sink_ && "two waiters on one state");
    sink_ = std::move(sink);
  }

  // Parks `h` (of task `task`) until resume_waiter(), a cancellation or the deadline.
  // Returns false, without parking, when a cancellation is pending: the await then completes
  // at once with kCancelled (abort() tells).
  bool park(std::coroutine_handle<> h, TaskContext* task, Time deadline) {
    LOCKSTEP_ASSERT(task != nullptr && task->executor != nullptr && "await outside a spawned task");
    LOCKSTEP_ASSERT(!handle_ && !sink_ && "two coroutines awaiting one state");
    abort_ = Error::kOk;
    if (task->take_cancel()) {
      abort_ = Error::kCancelled;
      return false;
    }
    handle_ = h;
    task_ = task;
    exec_ = task->executor;
    task->suspended_on = this;
    if (deadline != kNever) {
      if (deadline <= exec_->now()) {
        handle_ = {};
        task->suspended_on = nullptr;
        abort_ = Error::kOperationTimeout;
        return false;
      }
      timer_ = exec_->start_timer(deadline, this);
    }
    return true;
  }

  // Detaches a parked coroutine without resuming it (its frame is going away).
  void detach() {
    sink_ = nullptr;
    if (!handle_) return;
    if (timer_ != 0) exec_->cancel_timer(timer_);
    timer_ = 0;
    if (task_ != nullptr && task_->suspended_on == this) task_->suspended_on = nullptr;
    handle_ = {};
    task_ = nullptr;
  }

  // Schedules the parked coroutine, if any, to resume on its executor.
  void resume_waiter() {
    if (sink_) {
      std::function<void()> sink = std::move(sink_);
      sink_ = nullptr;
      sink();
      return;
    }
    if (!handle_) return;
    if (timer_ != 0) exec_->cancel_timer(timer_);
    timer_ = 0;
    if (task_ != nullptr && task_->suspended_on == this) task_->suspended_on = nullptr;
    std::coroutine_handle<> h = std::exchange(handle_, {});
    const TaskContext* task = std::exchange(task_, nullptr);
    exec_->schedule(h, task);
  }

  // kOk, or why the last await ended early (kCancelled, kOperationTimeout). Reading clears it.
  Error take_abort() { return std::exchange(abort_, Error::kOk); }

  void on_cancel() override {
    abort_ = Error::kCancelled;
    resume_waiter();
  }
  void on_timer() override {
    timer_ = 0;
    abort_ = Error::kOperationTimeout;
    resume_waiter();
  }

 protected:
  std::coroutine_handle<> handle_;
  TaskContext* task_ = nullptr;
  Executor* exec_ = nullptr;
  TimerId timer_ = 0;
  Error abort_ = Error::kOk;
  std::function<void()> sink_;  // park_sink
};

// Awaiter shared by Future and Mailbox: `State` provides ready(), take() and is a Waiter.
template <class State, class T>
struct StateAwaiter {
  std::shared_ptr<State> s;
  Time deadline = kNever;
  Error early = Error::kOk;

  StateAwaiter(std::shared_ptr<State> st, Time d) : s(std::move(st)), deadline(d) {}
  StateAwaiter(StateAwaiter&&) = default;
  StateAwaiter(const StateAwaiter&) = delete;
  ~StateAwaiter() {
    if (s) s->detach();
  }

  bool await_ready() const noexcept { return false; }
  template <class P>
  bool await_suspend(std::coroutine_handle<P> h) {
    TaskContext* task = h.promise().ctx;
    if (task != nullptr && task->take_cancel()) {
      early = Error::kCancelled;
      return false;
    }
    if (s->ready()) return false;
    return s->park(h, task, deadline);
  }
  T await_resume() {
    if (early != Error::kOk) return s->give_up(early);
    Error abort = s->take_abort();
    if (abort != Error::kOk) return s->give_up(abort);
    return s->take();
  }
};

template <class T>
struct FutureState final : public Waiter {
  std::optional<T> value;
  bool gave_up = false;

  bool ready() const { return value.has_value(); }
  T take() { return std::move(*value); }
  T give_up(Error e) {
    gave_up = true;
    return T::failure(e);
  }
  void fulfil(T v) {
    if (value.has_value() || gave_up) return;
    value.emplace(std::move(v));
    resume_waiter();
  }
};

template <class T>
struct MailboxState final : public Waiter {
  RingQueue<T> queue;

  bool ready() const { return !queue.empty(); }
  T take() {
    T v = std::move(queue.front());
    queue.pop_front();
    return v;
  }
  T give_up(Error e) { return T::failure(e); }
  void post(T v) {
    queue.push_back(std::move(v));
    resume_waiter();
  }
};

}  // namespace detail

template <class T>
class Promise;
class Dispatcher;

// The awaitable result of one operation. Move-only; awaited at most once.
template <class T>
class [[nodiscard]] Future {
 public:
  Future() = default;
  explicit Future(std::shared_ptr<detail::FutureState<T>> s) : s_(std::move(s)) {}

  // An already-completed future (for operations that fail before sending anything).
  static Future ready(T v) {
    auto s = std::make_shared<detail::FutureState<T>>();
    s->value.emplace(std::move(v));
    return Future(std::move(s));
  }

  bool valid() const { return static_cast<bool>(s_); }
  bool is_ready() const { return s_ && s_->ready(); }

  // Awaits the result, giving up with kOperationTimeout at `deadline` (the request, if one was
  // sent, may still be applied).
  detail::StateAwaiter<detail::FutureState<T>, T> until(Time deadline) && {
    LOCKSTEP_ASSERT(s_);
    return {std::move(s_), deadline};
  }
  detail::StateAwaiter<detail::FutureState<T>, T> operator co_await() && {
    LOCKSTEP_ASSERT(s_);
    return {std::move(s_), kNever};
  }

 private:
  friend class Dispatcher;  // parks a completion callback on the state
  std::shared_ptr<detail::FutureState<T>> s_;
};

// The implementation's side of a Future.
template <class T>
class Promise {
 public:
  Promise() : s_(std::make_shared<detail::FutureState<T>>()) {}
  Future<T> future() const { return Future<T>(s_); }
  // Completes the future; the first call wins, later calls are ignored.
  void fulfil(T v) const { s_->fulfil(std::move(v)); }
  bool fulfilled() const { return s_->value.has_value(); }

 private:
  std::shared_ptr<detail::FutureState<T>> s_;
};

// A queue with one consumer at a time. Copies share the queue.
template <class T>
class Mailbox {
 public:
  Mailbox() : s_(std::make_shared<detail::MailboxState<T>>()) {}

  void post(T v) const { s_->post(std::move(v)); }
  bool empty() const { return s_->queue.empty(); }
  size_t size() const { return s_->queue.size(); }
  // True when this is the only handle on the queue (no copy, no waiter): nothing posted to it
  // can ever be taken, so a producer may forget it.
  bool orphaned() const { return s_.use_count() == 1; }

  // Awaits the next value; kOperationTimeout at the deadline, kCancelled on cancellation.
  detail::StateAwaiter<detail::MailboxState<T>, T> next(Time deadline = kNever) const {
    return {s_, deadline};
  }

 private:
  friend class Dispatcher;  // parks a callback on the queue
  std::shared_ptr<detail::MailboxState<T>> s_;
};

}  // namespace zk
