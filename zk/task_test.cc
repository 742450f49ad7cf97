// Tests of the contract's coroutine machinery on a tiny hand-driven executor.
#include "zk/task.h"

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

#include "zk/context.h"
#include "zk/dispatcher.h"
#include "zk/wait.h"
#include "zk/watch.h"

namespace zk {
namespace {

// A minimal executor: a FIFO of ready coroutines and an ordered timer table.
class ManualExecutor final : public Executor {
 public:
  Time now() const override { return now_; }
  void schedule(std::coroutine_handle<> h) override { ready_.push_back(h); }
  TimerId start_timer(Time at, TimerCallback* cb) override {
    const TimerId id = next_id_++;
    timers_.emplace(std::make_pair(at, id), cb);
    return id;
  }
  void cancel_timer(TimerId id) override {
    for (auto it = timers_.begin(); it != timers_.end(); ++it) {
      if (it->first.second == id) {
        timers_.erase(it);
        return;
      }
    }
  }
  // Runs ready coroutines, then timers in time order, until nothing is left.
  void run() {
    for (int guard = 0; guard < 100000; ++guard) {
      if (!ready_.empty()) {
        auto h = ready_.front();
        ready_.pop_front();
        h.resume();
      } else if (!timers_.empty()) {
        auto it = timers_.begin();
        now_ = it->first.first;
        TimerCallback* cb = it->second;
        timers_.erase(it);
        cb->on_timer();
      } else {
        return;
      }
    }
    FAIL() << "executor did not quiesce";
  }
  void drain_ready() {
    while (!ready_.empty()) {
      auto h = ready_.front();
      ready_.pop_front();
      h.resume();
    }
  }

 private:
  Time now_{};
  std::deque<std::coroutine_handle<>> ready_;
  std::map<std::pair<Time, TimerId>, TimerCallback*> timers_;
  TimerId next_id_ = 1;
};

Task<int> add_one(int x) { co_return x + 1; }
Task<int> chain(int depth) {
  if (depth == 0) co_return 0;
  int v = co_await chain(depth - 1);
  co_return v + 1;
}

TEST(Task, NestedTasksReturnValuesThroughADeepChain) {
  // A 2,000-deep chain of awaited tasks passes each child's value to its parent (symmetric
  // transfer is not guaranteed to be a tail call under sanitizers, so the depth stays modest).
  ManualExecutor ex;
  Context ctx(ex, 1);
  int result = -1;
  ctx.spawn(
      [](int* out) -> Task<void> { *out = co_await chain(2000) + co_await add_one(1); }(&result),
      "chain");
  EXPECT_EQ(result, -1) << "spawn must not run the task inline";
  ex.run();
  EXPECT_EQ(result, 2002);
  EXPECT_EQ(ctx.live_tasks(), 0u);
}

Task<int> throws_after(int depth) {
  if (depth == 0) throw std::runtime_error("from the bottom");
  co_return co_await throws_after(depth - 1) + 1;
}

TEST(Task, AnExceptionReachesTheAwaiterThroughTheChain) {
  // A task that throws hands the exception to its awaiter, which rethrows it from its co_await,
  // through every level; the frames are freed and the catching task carries on.
  ManualExecutor ex;
  Context ctx(ex, 1);
  std::string caught;
  int after = 0;
  ctx.spawn(
      [](std::string* out, int* next) -> Task<void> {
        try {
          (void)co_await throws_after(5);
        } catch (const std::runtime_error& e) {
          *out = e.what();
        }
        *next = co_await add_one(1);
      }(&caught, &after),
      "catcher");
  ex.run();
  EXPECT_EQ(caught, "from the bottom");
  EXPECT_EQ(after, 2);
  EXPECT_EQ(ctx.live_tasks(), 0u);
}

// The id of the root task the caller runs under, read at any depth.
Task<uint32_t> task_id_nested(int depth) {
  if (depth == 0) co_return co_await this_task();
  co_return co_await task_id_nested(depth - 1);
}

TEST(Task, ThisTaskNamesTheRootAtAnyDepthWithoutSuspending) {
  // Two roots read their ids at once and 10 levels down: each sees its own handle's id at both
  // depths, and the two differ (shared callers key their lock state by it).
  ManualExecutor ex;
  Context ctx(ex, 1);
  uint32_t ids[2][2] = {{0, 0}, {0, 0}};
  TaskHandle roots[2];
  for (int r = 0; r < 2; ++r) {
    roots[r] = ctx.spawn(
        [](uint32_t* out) -> Task<void> {
          out[0] = co_await this_task();
          out[1] = co_await task_id_nested(10);
        }(ids[r]),
        "reader");
  }
  ex.run();
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(ids[r][0], roots[r].id());
    EXPECT_EQ(ids[r][1], roots[r].id());
  }
  EXPECT_NE(ids[0][0], ids[1][0]);
}

TEST(Future, ResumesThroughTheExecutorNotInline) {
  // Fulfilling a promise schedules the waiter; it runs only when the executor runs it.
  ManualExecutor ex;
  Context ctx(ex, 1);
  Promise<Status> p;
  int stage = 0;
  ctx.spawn(
      [](Future<Status> f, int* st) -> Task<void> {
        *st = 1;
        Status s = co_await std::move(f);
        *st = s.ok() ? 2 : 3;
      }(p.future(), &stage),
      "waiter");
  ex.drain_ready();
  EXPECT_EQ(stage, 1);
  p.fulfil(Status{});
  EXPECT_EQ(stage, 1);
  ex.drain_ready();
  EXPECT_EQ(stage, 2);
}

TEST(Future, CancellationWakesTheSuspendedAwaitOnceAndDropsTheLateReply) {
  // cancel() completes the pending await with kCancelled; the next await runs normally.
  ManualExecutor ex;
  Context ctx(ex, 1);
  Promise<Status> first, second;
  Error e1 = Error::kOk, e2 = Error::kNothing;
  auto h = ctx.spawn(
      [](Future<Status> a, Future<Status> b, Error* r1, Error* r2) -> Task<void> {
        *r1 = (co_await std::move(a)).error;
        *r2 = (co_await std::move(b)).error;
      }(first.future(), second.future(), &e1, &e2),
      "caller");
  ex.drain_ready();
  h.cancel();
  ex.drain_ready();
  EXPECT_EQ(e1, Error::kCancelled);
  first.fulfil(Status{});  // the late reply resumes nothing
  second.fulfil(Status{});
  ex.drain_ready();
  EXPECT_EQ(e2, Error::kOk);
  EXPECT_TRUE(h.done());
}

TEST(Future, CancelBeforeTheAwaitIsDeliveredAtTheNextAwait) {
  // A cancellation that arrives while the task runs is delivered at its next await.
  ManualExecutor ex;
  Context ctx(ex, 1);
  Error seen = Error::kOk;
  TaskHandle h;
  h = ctx.spawn(
      [](TaskHandle* self, Error* out) -> Task<void> {
        self->cancel();
        *out = (co_await Future<Status>::ready(Status{})).error;
      }(&h, &seen),
      "self-cancel");
  ex.run();
  EXPECT_EQ(seen, Error::kCancelled);
}

TEST(Future, DeadlinePassesFirst) {
  // until(deadline) completes with kOperationTimeout when no reply comes in time.
  ManualExecutor ex;
  Context ctx(ex, 1);
  Promise<Status> never;
  Error seen = Error::kOk;
  Time woke{};
  ctx.spawn(
      [](Context* c, Future<Status> f, Error* out, Time* t) -> Task<void> {
        *out = (co_await std::move(f).until(c->now() + milliseconds(50))).error;
        *t = c->now();
      }(&ctx, never.future(), &seen, &woke),
      "timed");
  ex.run();
  EXPECT_EQ(seen, Error::kOperationTimeout);
  EXPECT_EQ(woke, Time{} + milliseconds(50));
}

TEST(Context, SleepAdvancesVirtualTime) {
  // sleep_for completes at now + d on the executor's clock.
  ManualExecutor ex;
  Context ctx(ex, 1);
  std::vector<int64_t> woke;
  ctx.spawn(
      [](Context* c, std::vector<int64_t>* w) -> Task<void> {
        co_await c->sleep_for(milliseconds(30));
        w->push_back(c->now().us);
        co_await c->sleep_for(milliseconds(20));
        w->push_back(c->now().us);
      }(&ctx, &woke),
      "sleeper");
  ex.run();
  EXPECT_EQ(woke, (std::vector<int64_t>{30000, 50000}));
}

TEST(Watch, NodeEventIsStickyAndSessionEventsQueue) {
  // Session events wake a waiter without disarming; the node event, once fired, stays.
  ManualExecutor ex;
  Context ctx(ex, 1);
  Watch w = Watch::make("/a", WatchKind::kData);
  w.set_armed(true);
  std::vector<std::string> seen;
  ctx.spawn(
      [](Watch watch, std::vector<std::string>* out) -> Task<void> {
        for (int i = 0; i < 3; ++i) {
          auto r = co_await watch.wait();
          out->push_back(r.ok() ? to_string(r.value.type) + ":" + to_string(r.value.state)
                                : error_name(r.error));
        }
      }(w, &seen),
      "watcher");
  ex.drain_ready();
  w.deliver_session_event(SessionState::kConnecting);
  ex.drain_ready();
  w.deliver_node_event(WatchEvent{EventType::kDeleted, SessionState::kConnected, "/a", Zxid{7}, {}});
  ex.drain_ready();
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0], "session:connecting");
  EXPECT_EQ(seen[1], "deleted:connected");
  EXPECT_EQ(seen[2], "deleted:connected");
}

TEST(Watch, UnarmedWatchAnswersNothingInsteadOfSleepingForever) {
  // Waiting on a watch the server never armed returns kNothing at once.
  ManualExecutor ex;
  Context ctx(ex, 1);
  Watch w = Watch::make("/missing", WatchKind::kData);
  Error seen = Error::kOk;
  ctx.spawn(
      [](Watch watch, Error* out) -> Task<void> { *out = (co_await watch.wait()).error; }(w, &seen),
      "w");
  ex.run();
  EXPECT_EQ(seen, Error::kNothing);
}

TEST(Context, DestroyingTheContextDestroysSuspendedTasks) {
  // Tearing down with a task parked on a future leaves no leak and no dangling resume.
  ManualExecutor ex;
  Promise<Status> never;
  {
    Context ctx(ex, 1);
    ctx.spawn([](Future<Status> f) -> Task<void> { co_await std::move(f); }(never.future()), "p");
    ex.drain_ready();
    EXPECT_EQ(ctx.live_tasks(), 1u);
  }
  never.fulfil(Status{});  // must not resume the destroyed frame
  ex.drain_ready();
}

// ---- the event dispatcher (zk/dispatcher.h) ----

WatchEvent node_event(const std::string& path) {
  return WatchEvent{EventType::kDeleted, SessionState::kConnected, path, Zxid{}, {}};
}

// Callbacks run in the order the library delivered their events, not the order they were
// registered, one at a time; post() queues behind what is queued.
TEST(Dispatcher, CallbacksRunInDeliveryOrder) {
  ManualExecutor ex;
  Context ctx(ex, 1);
  Dispatcher d(ctx);
  std::vector<std::string> ran;
  Watch a = Watch::make("/a", WatchKind::kData);
  Watch b = Watch::make("/b", WatchKind::kData);
  a.set_armed(true);
  b.set_armed(true);
  auto record = [&ran](Result<WatchEvent> ev) -> Task<void> {
    ran.push_back(ev.ok() ? ev.value.path : error_name(ev.error));
    co_return;
  };
  d.on_watch(a, record);
  d.on_watch(b, record);
  Promise<Result<int>> reply;
  d.on_complete<Result<int>>(reply.future(), [&ran](Result<int> r) -> Task<void> {
    ran.push_back("reply " + std::to_string(r.value));
    co_return;
  });
  b.deliver_session_event(SessionState::kConnecting);
  b.deliver_node_event(node_event("/b"));
  reply.fulfil(Result<int>{Error::kOk, 7});
  a.deliver_node_event(node_event("/a"));
  a.deliver_node_event(node_event("/a-again"));  // a fired watch is done
  d.post([&ran]() -> Task<void> {
    ran.push_back("posted");
    co_return;
  });
  ex.run();
  EXPECT_EQ(ran, (std::vector<std::string>{"/b", "/b", "reply 7", "/a", "posted"}));
  EXPECT_EQ(d.completed(), 5u);
}

// A callback that blocks on a Condition stalls every callback behind it, session events included,
// until it is notified (here by a task outside the dispatcher, 10 ms later).
TEST(Dispatcher, ABlockedCallbackStallsTheRest) {
  ManualExecutor ex;
  Context ctx(ex, 1);
  Dispatcher d(ctx);
  Condition cond;
  std::vector<std::pair<std::string, int64_t>> ran;
  d.post([&]() -> Task<void> {
    Status s = co_await cond.wait();
    ran.emplace_back(s.ok() ? "woken" : "timeout", ctx.now().us);
  });
  Mailbox<Result<WatchEvent>> events;
  d.on_session(events, [&](Result<WatchEvent> ev) -> Task<void> {
    ran.emplace_back(to_string(ev.value.state), ctx.now().us);
    co_return;
  });
  events.post(Result<WatchEvent>{Error::kOk, WatchEvent{EventType::kSession,
                                                       SessionState::kConnected, "", Zxid{}, {}}});
  ctx.spawn(
      [](Context* c, Condition* cv) -> Task<void> {
        (void)co_await c->sleep_for(milliseconds(10));
        cv->notify_all();
      }(&ctx, &cond),
      "notifier");
  ex.drain_ready();
  EXPECT_TRUE(ran.empty());
  EXPECT_TRUE(d.busy());
  EXPECT_EQ(d.queued(), 1u) << "the session event waits behind the blocked callback";
  ex.run();
  ASSERT_EQ(ran.size(), 2u);
  EXPECT_EQ(ran[0], std::make_pair(std::string("woken"), int64_t{10000}));
  EXPECT_EQ(ran[1].first, "connected");
  EXPECT_EQ(ran[1].second, 10000);
}

// A watch that did not arm gets one kNothing; a callback that throws is counted and the next
// one runs; a Condition wait times out at its deadline.
TEST(Dispatcher, UnarmedWatchThrowingCallbackAndTimedWait) {
  ManualExecutor ex;
  Context ctx(ex, 1);
  Dispatcher d(ctx);
  std::vector<std::string> ran;
  Watch w = Watch::make("/x", WatchKind::kData);
  d.on_watch(w, [&ran](Result<WatchEvent> ev) -> Task<void> {
    ran.push_back(error_name(ev.error));
    co_return;
  });
  d.post([]() -> Task<void> {
    throw std::runtime_error("callback failed");
    co_return;
  });
  Condition never;
  d.post([&]() -> Task<void> {
    Status s = co_await never.wait(ctx.now() + milliseconds(5));
    ran.push_back(error_name(s.error));
  });
  ex.run();
  EXPECT_EQ(ran, (std::vector<std::string>{"ZNOTHING", "ZOPERATIONTIMEOUT"}));
  EXPECT_EQ(d.thrown(), 1u);
  EXPECT_EQ(d.completed(), 3u);
}

}  // namespace
}  // namespace zk
