// Tests of the contract's coroutine machinery on a tiny hand-driven executor.
#include "zk/task.h"

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

#include "zk/context.h"
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
  w.deliver_node_event(WatchEvent{EventType::kDeleted, SessionState::kConnected, "/a", Zxid{7}});
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

}  // namespace
}  // namespace zk
