// The herd measurement: watch notifications per release (World::herd()) with many waiters,
// the fair mutex (one per release) against the naive lock (every waiter, every release).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "tests/recipes/scenario_test_util.h"

namespace lockstep::recipes::testing {
namespace {

using zk::milliseconds;

// One holder, then `waiters` clients queue (1 ms apart) and each releases 1 ms after its grant.
HerdFigures measure(const char* recipe, int waiters, uint32_t leases = 1) {
  sim::WorldOptions o;
  o.record_log = false;
  Scenario s(o);
  LockOptions lo;
  lo.max_leases = leases;
  Party& first = s.join(recipe, lo);
  s.acquire(first);
  s.run_for(milliseconds(100));
  for (int i = 0; i < waiters; ++i) {
    Party& p = s.join(recipe, lo);
    s.cycle(p, milliseconds(1));
    s.run_for(milliseconds(1), milliseconds(1));
  }
  s.run_for(milliseconds(500), milliseconds(1));  // everyone queued
  s.release(first);
  for (int i = 0; i < 1000 && s.grant_order.size() < static_cast<size_t>(waiters) + 1; ++i) {
    s.run_for(milliseconds(10), milliseconds(1));
  }
  s.run_for(milliseconds(100), milliseconds(1));  // the last release
  const HerdFigures h = herd_under(s.world, "/locks/test");
  std::printf(
      "[herd] %-15s waiters=%3d grants=%3zu releases=%3u notifications=%5llu "
      "per_release=%6.2f max=%3u requests_caused=%llu max_holders=%d\n",
      recipe, waiters, s.grant_order.size(), h.releases,
      static_cast<unsigned long long>(h.notifications), h.per_release(), h.max_per_release,
      static_cast<unsigned long long>(h.requests_caused), s.max_holders);
  EXPECT_EQ(s.grant_order.size(), static_cast<size_t>(waiters) + 1);
  EXPECT_LE(s.max_holders, static_cast<int>(leases));
  return h;
}

TEST(Herd, FairMutexNotifiesOneWaiterPerReleaseNaiveNotifiesAll) {
  // 100 waiters: the fair mutex delivers at most one notification per release; the naive lock
  // delivers one to every remaining waiter, so its figure grows with the number of waiters.
  const HerdFigures fair = measure("fair-mutex", 100);
  EXPECT_EQ(fair.releases, 101u);
  EXPECT_LE(fair.max_per_release, 1u);
  EXPECT_LE(fair.per_release(), 1.0);

  const HerdFigures naive10 = measure("naive-mutex", 10);
  const HerdFigures naive50 = measure("naive-mutex", 50);
  const HerdFigures naive100 = measure("naive-mutex", 100);
  EXPECT_EQ(naive100.releases, 101u);
  EXPECT_LT(naive10.per_release(), naive50.per_release());
  EXPECT_LT(naive50.per_release(), naive100.per_release());
  EXPECT_GE(naive100.max_per_release, 100u);
  EXPECT_GT(naive100.per_release(), 10 * fair.per_release());
}

TEST(Herd, GatedSemaphoreIsHerdFreeTheChildListSemaphoreIsNot) {
  // 50 waiters on 2 leases: the gated semaphore delivers at most one notification per delete
  // (the gate holder watches the lease list, the next gate waiter its predecessor); the
  // child-list semaphore wakes every waiter on every release.
  const HerdFigures gated = measure("semaphore-gated", 50, 2);
  EXPECT_LE(gated.max_per_release, 1u);
  const HerdFigures plain = measure("semaphore", 50, 2);
  EXPECT_GE(plain.max_per_release, 20u);
  EXPECT_GT(plain.per_release(), 5 * gated.per_release());
}

}  // namespace
}  // namespace lockstep::recipes::testing
