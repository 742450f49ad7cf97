// lockstep contract: a client's ordered event dispatcher, and a condition a callback may block on.
//
// The real ZooKeeper clients hand watch events and completions to the application's callbacks on
// one thread per client handle (the C client's completion thread, Java's EventThread), one at a
// time, in the order the library received them. A callback that blocks (waits on a monitor, sleeps
// in a retry loop, waits for the connection to come back) stalls every later callback of that
// client, session events included. Dispatcher is that thread in the contract:
//   - on_watch / on_session / on_complete queue a callback at the moment the client library
//     delivers the event or the reply (synchronously, inside the delivery: a parked sink on the
//     state, zk/wait.h), so callbacks run in delivery order, whatever the scheduler does with
//     the coroutines around them;
//   - one root task ("event-thread") runs the queued callbacks one after another: the next one
//     starts only when the previous one's Task has finished;
//   - a callback that awaits a Condition, a sleep or a request keeps the dispatcher busy until
//     it returns: everything queued behind it waits.
// Recipes may also simply await futures and watches in their own tasks (zk/watch.h): the
// dispatcher is for code written the callback way, whose ordering bugs it reproduces.
//
// How it maps to the real client (real/): the C client's completion thread runs completions and
// watcher callbacks in receive order; real::Session posts each to its event loop (the executor)
// in that order, where it fulfils the state, which queues the dispatcher's callback. So on both
// backends callbacks run in the order the library produced them, one at a time, on the executor.
// Session::dispatcher() gives each session one dispatcher, started on first use.
//
// An exception thrown by a callback is caught and counted (Java's EventThread logs it and goes
// on); the dispatcher carries on with the next callback.
// Single-threaded: use only on the executor's thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "zk/context.h"
#include "zk/error.h"
#include "zk/task.h"
#include "zk/wait.h"
#include "zk/watch.h"

namespace zk {

// A condition a task can block on, as a Java monitor's wait / notifyAll: wait() completes with kOk
// at the first notify_all() after it was called, kOperationTimeout at the deadline, kCancelled
// when the task is cancelled. No spurious wake-ups; a notify with nobody waiting is lost.
class Condition {
 public:
  auto wait(Time deadline = kNever) {
    Promise<Status> p;
    waiters_.push_back(p);
    return p.future().until(deadline);
  }
  void notify_all() {
    std::vector<Promise<Status>> w;
    w.swap(waiters_);
    for (Promise<Status>& p : w) p.fulfil(Status{});
  }
  size_t waiting() const { return waiters_.size(); }

 private:
  std::vector<Promise<Status>> waiters_;
};

class Dispatcher {
 public:
  using WatchCallback = std::function<Task<void>(Result<WatchEvent>)>;

  // Starts the dispatcher's root task on `ctx`, named `name`.
  explicit Dispatcher(Context& ctx, std::string name = "event-thread");
  ~Dispatcher();
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  // Queues `cb` behind every callback already queued.
  void post(std::function<Task<void>()> cb);

  // Queues cb(event) for each result `w` delivers, as it is delivered: session events while it
  // waits, then its node event (the last). A watch that did not arm gets one kNothing; a dead
  // one ends with its session event. REQUIRES: w.valid(); nothing else waits on w.
  void on_watch(const Watch& w, WatchCallback cb);

  // Queues cb(event) for every session event posted to `events` (Session::subscribe()), in
  // order, for as long as the dispatcher lives. REQUIRES: nothing else waits on `events`.
  void on_session(const SessionEvents& events, WatchCallback cb);

  // Queues cb(result) when `f` completes (a completion callback).
  template <class T>
  void on_complete(Future<T> f, std::function<Task<void>(T)> cb) {
    std::shared_ptr<detail::FutureState<T>> st = std::move(f.s_);
    LOCKSTEP_ASSERT(st);
    std::weak_ptr<Shared> ws = shared_;
    // The sink holds the state weakly: parked on it, a strong hold would be a cycle.
    std::weak_ptr<detail::FutureState<T>> wst = st;
    auto deliver = [wst, ws, cb = std::move(cb)]() {
      std::shared_ptr<Shared> s = ws.lock();
      std::shared_ptr<detail::FutureState<T>> st = wst.lock();
      if (!s || s->closed || !st) return;
      T v = st->take();
      s->enqueue([cb, v = std::move(v)]() mutable { return cb(std::move(v)); });
    };
    if (st->ready()) {
      deliver();
    } else {
      st->park_sink(std::move(deliver));
    }
  }

  size_t queued() const { return shared_->queue.size(); }
  bool busy() const { return shared_->busy; }          // a callback is running or blocked in one
  uint64_t completed() const { return shared_->ran; }  // callbacks that have returned
  uint64_t thrown() const { return shared_->thrown; }  // callbacks that threw

 private:
  struct Item {
    std::function<Task<void>()> run;
    Error error = Error::kOk;
    static Item failure(Error e) { return Item{nullptr, e}; }
  };
  struct Shared {
    Mailbox<Item> queue;
    bool closed = false;
    bool busy = false;
    uint64_t ran = 0;
    uint64_t thrown = 0;
    std::vector<SessionEvents> subscriptions;  // on_session's queues, kept while it lives
    void enqueue(std::function<Task<void>()> run) { queue.post(Item{std::move(run)}); }
  };
  static Task<void> loop(std::shared_ptr<Shared> s);
  static void forward_watch(std::shared_ptr<detail::WatchState> st, std::weak_ptr<Shared> ws,
                            WatchCallback cb);
  static void forward_session(std::shared_ptr<detail::MailboxState<Result<WatchEvent>>> st,
                              std::weak_ptr<Shared> ws, WatchCallback cb);

  std::shared_ptr<Shared> shared_;
};

}  // namespace zk
