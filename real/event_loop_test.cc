#include "real/event_loop.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "real/run.h"
#include "zk/context.h"

namespace lockstep::real {
namespace {

class Recorder final : public zk::TimerCallback {
 public:
  Recorder(std::vector<int>* log, int tag) : log_(log), tag_(tag) {}
  void on_timer() override { log_->push_back(tag_); }

 private:
  std::vector<int>* log_;
  int tag_;
};

// Timers fire in deadline order whatever order they were started in, and a cancelled one never
// fires: three timers are started out of order and the middle one is cancelled.
TEST(EventLoop, TimersFireInDeadlineOrderAndCancelledOnesDoNot) {
  EventLoop loop;
  std::vector<int> log;
  Recorder a(&log, 1), b(&log, 2), c(&log, 3);
  const zk::Time t0 = loop.now();
  loop.start_timer(t0 + zk::milliseconds(30), &c);
  const zk::TimerId mid = loop.start_timer(t0 + zk::milliseconds(20), &b);
  loop.start_timer(t0 + zk::milliseconds(10), &a);
  loop.cancel_timer(mid);
  loop.cancel_timer(mid);  // a second cancel is a no-op
  ASSERT_TRUE(loop.run_until([&] { return log.size() == 2; }, 5000));
  EXPECT_EQ(log, (std::vector<int>{1, 3}));
  EXPECT_GE(loop.now(), t0 + zk::milliseconds(30));
  EXPECT_EQ(loop.pending_timers(), 0u);
}

// Closures posted from other threads run on the loop's owner thread, in posting order per
// poster: a helper thread posts 100 numbered closures.
TEST(EventLoop, PostFromAnotherThreadRunsOnTheOwnerInOrder) {
  EventLoop loop;
  std::vector<int> seen;
  bool wrong_thread = false;
  const auto owner = std::this_thread::get_id();
  std::thread poster([&] {
    for (int i = 0; i < 100; ++i) {
      loop.post([&, i] {
        if (std::this_thread::get_id() != owner) wrong_thread = true;
        seen.push_back(i);
      });
    }
  });
  ASSERT_TRUE(loop.run_until([&] { return seen.size() == 100; }, 5000));
  poster.join();
  EXPECT_FALSE(wrong_thread);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(seen[static_cast<size_t>(i)], i);
}

zk::Task<zk::Time> sleep_then_now(zk::Context* ctx, zk::Duration d) {
  zk::Status s = co_await ctx->sleep_for(d);
  EXPECT_TRUE(s.ok());
  co_return ctx->now();
}

// A coroutine that sleeps on a Context over the loop resumes no earlier than its deadline:
// a 25 ms sleep is measured on the loop's monotonic clock.
TEST(EventLoop, ContextSleepResumesAfterTheDuration) {
  EventLoop loop;
  zk::Context ctx(loop, 7);
  const zk::Time start = loop.now();
  std::optional<zk::Time> woke =
      run_task(loop, ctx, sleep_then_now(&ctx, zk::milliseconds(25)), 5000);
  ASSERT_TRUE(woke.has_value());
  EXPECT_GE(*woke - start, zk::milliseconds(25));
}

zk::Task<zk::Status> sleep_long(zk::Context* ctx) {
  co_return co_await ctx->sleep_for(zk::seconds(60));
}

// Cancelling a task parked in a long sleep completes the sleep with kCancelled on the loop:
// the task is cancelled from a posted closure while it sleeps.
TEST(EventLoop, CancelWakesASleepingTask) {
  EventLoop loop;
  zk::Context ctx(loop, 7);
  auto out = std::make_shared<std::optional<zk::Status>>();
  zk::TaskHandle h = ctx.spawn(
      [](zk::Context* c, std::shared_ptr<std::optional<zk::Status>> o) -> zk::Task<void> {
        o->emplace(co_await sleep_long(c));
      }(&ctx, out),
      "sleeper");
  loop.run_for(zk::milliseconds(5));
  ASSERT_FALSE(out->has_value());
  h.cancel();
  ASSERT_TRUE(loop.run_until([&] { return out->has_value(); }, 5000));
  EXPECT_EQ((*out)->error, zk::Error::kCancelled);
}

}  // namespace
}  // namespace lockstep::real
