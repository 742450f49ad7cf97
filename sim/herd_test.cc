// Herd instruments: per delete transaction, the watch notifications it delivered and the
// requests those notifications caused.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/sim_test_util.h"
#include "sim/world.h"

namespace lockstep::sim {
namespace {

using testing::await_result;
using zk::CreateMode;

// Watches `path` (children or existence), waits for the event, then re-reads the children once.
zk::Task<void> wake_and_recheck(zk::Session* s, std::string path, bool children) {
  zk::Watch w;
  if (children) {
    (void)co_await s->get_children(path, &w);
  } else {
    (void)co_await s->exists(path, &w);
  }
  (void)co_await w.wait();
  (void)co_await s->get_children("/lock");
}

// Runs one release with five waiters; `naive` waiters all watch the child list, the others
// watch only their predecessor. Returns the herd record of the release.
HerdRecord release_with_waiters(bool naive) {
  WorldOptions o;
  o.record_log = false;
  World w(o);
  std::vector<Client*> cs;
  for (int i = 0; i < 6; ++i) cs.push_back(&w.add_client());
  EXPECT_TRUE(await_result(w, *cs[0], cs[0]->create("/lock", "", CreateMode::kPersistent))->ok());
  std::vector<std::string> nodes;
  for (Client* c : cs) {
    nodes.push_back(await_result(w, *c, c->create("/lock/n-", "", CreateMode::kEphemeralSequential))
                        ->value.path);
  }
  for (size_t i = 1; i < cs.size(); ++i) {
    cs[i]->spawn(wake_and_recheck(cs[i], naive ? "/lock" : nodes[i - 1], naive), "waiter");
  }
  w.run_for(zk::milliseconds(50));
  EXPECT_TRUE(await_result(w, *cs[0], cs[0]->remove(nodes[0]))->ok());
  w.run_for(zk::milliseconds(50));
  EXPECT_FALSE(w.herd().empty());
  return w.herd().empty() ? HerdRecord{} : w.herd().back();
}

// A release under a naive lock notifies every waiter and each re-reads the children (the herd
// effect); under the fair lock it notifies only the next waiter.
TEST(HerdTest, NaiveLockHerdsFairLockDoesNot) {
  const HerdRecord naive = release_with_waiters(true);
  EXPECT_EQ(naive.path, "/lock/n-0000000000");
  EXPECT_EQ(naive.notifications, 5u);
  EXPECT_EQ(naive.requests_caused, 5u);
  const HerdRecord fair = release_with_waiters(false);
  EXPECT_EQ(fair.notifications, 1u);
  EXPECT_EQ(fair.requests_caused, 1u);
}

}  // namespace
}  // namespace lockstep::sim
