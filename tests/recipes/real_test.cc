// The same recipe code on Debian's real ZooKeeper server (label "real"): every correct recipe
// excludes and completes with contending sessions, and an expired holder learns it lost the
// lock while the waiter is granted. Wall-clock limits here are hang guards, not assertions.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "real/event_loop.h"
#include "real/run.h"
#include "real/server.h"
#include "real/session.h"
#include "recipes/registry.h"

namespace lockstep::recipes {
namespace {

using real::EventLoop;
using real::RealSession;

std::unique_ptr<real::Cluster> start_cluster() {
  real::ClusterOptions o;
  real::Cluster::StartResult r = real::Cluster::start(o);
  EXPECT_TRUE(r.cluster) << r.error;
  return std::move(r.cluster);
}

real::SessionOptions session_options(const real::Cluster& c, uint64_t seed) {
  real::SessionOptions o;
  o.hosts = c.connect_string();
  o.session_timeout = zk::seconds(4);
  o.seed = seed;
  return o;
}

struct Shared {
  int inside = 0;
  int max_inside = 0;
  int rounds_done = 0;
  int errors = 0;
  std::vector<int64_t> tokens;
};

zk::Task<void> rounds(Lock* lock, zk::Context* ctx, int n, Shared* sh) {
  for (int i = 0; i < n; ++i) {
    zk::Result<Grant> g = co_await lock->acquire(ctx->now() + zk::seconds(20));
    if (!g.ok()) {
      ++sh->errors;
      continue;
    }
    ++sh->inside;
    sh->max_inside = std::max(sh->max_inside, sh->inside);
    sh->tokens.push_back(g.value.fencing_token);
    (void)co_await ctx->sleep_for(zk::milliseconds(5));
    --sh->inside;
    (void)co_await lock->release();
    ++sh->rounds_done;
  }
}

// Ephemeral nodes at any depth below `path` (the recipes' contender nodes); -1 on an error.
zk::Task<int> count_ephemerals(zk::Session* s, std::string path) {
  zk::Result<zk::Children> ch = co_await s->get_children(path);
  if (!ch.ok()) co_return -1;
  int n = 0;
  for (const std::string& c : ch.value.names) {
    const std::string child = path + "/" + c;
    zk::Result<zk::Stat> st = co_await s->exists(child);
    if (!st.ok()) co_return -1;
    if (st.value.ephemeral_owner.valid()) ++n;
    const int below = co_await count_ephemerals(s, child);
    if (below < 0) co_return -1;
    n += below;
  }
  co_return n;
}

zk::Task<zk::Result<Grant>> acquire_once(Lock* lock, zk::Time deadline) {
  co_return co_await lock->acquire(deadline);
}

TEST(RealRecipes, EveryCorrectRecipeExcludesAndCompletesOnARealServer) {
  // Three sessions loop acquire/hold/release four times on each correct recipe (as a mutex:
  // writers, one lease): one holder at a time, every round done, tokens growing, no node left.
  auto cluster = start_cluster();
  ASSERT_TRUE(cluster);
  EventLoop loop;
  for (const RecipeInfo& r : registry()) {
    if (r.expected != Expected::kCorrect) continue;
    SCOPED_TRACE(r.name);
    LockOptions o;
    o.path = "/real/" + r.name;
    if (r.kind == Kind::kReadWrite) o.role = Role::kWrite;
    std::vector<std::unique_ptr<RealSession>> sessions;
    std::vector<std::unique_ptr<Lock>> locks;
    Shared sh;
    for (int i = 0; i < 3; ++i) {
      sessions.push_back(std::make_unique<RealSession>(loop, session_options(*cluster, i + 1)));
      o.client_name = "c" + std::to_string(i + 1);
      locks.push_back(r.make(*sessions.back(), o));
    }
    for (int i = 0; i < 3; ++i) {
      sessions[i]->context().spawn(rounds(locks[i].get(), &sessions[i]->context(), 4, &sh),
                                   "rounds");
    }
    loop.run_until([&] { return sh.rounds_done + sh.errors == 12; }, 60000);
    EXPECT_EQ(sh.rounds_done, 12);
    EXPECT_EQ(sh.errors, 0);
    EXPECT_EQ(sh.max_inside, 1);
    for (size_t i = 1; i < sh.tokens.size(); ++i) EXPECT_LT(sh.tokens[i - 1], sh.tokens[i]);
    auto left =
        real::run_task(loop, sessions[0]->context(), count_ephemerals(sessions[0].get(), o.path));
    ASSERT_TRUE(left.has_value());
    EXPECT_EQ(*left, 0) << "contender nodes left behind";
    locks.clear();
    for (auto& s : sessions) (void)real::await_future(loop, s->context(), s->close());
  }
}

TEST(RealRecipes, ExpiredHolderLearnsItLostAndTheWaiterIsGranted) {
  // S7 on the real server: the holder's session is expired by a second handle; the holder's
  // state turns kLost and the waiting session is granted.
  auto cluster = start_cluster();
  ASSERT_TRUE(cluster);
  EventLoop loop;
  RealSession a(loop, session_options(*cluster, 1));
  RealSession b(loop, session_options(*cluster, 2));
  LockOptions o;
  o.path = "/real/expiry";
  o.client_name = "a";
  auto la = find_recipe("fair-mutex")->make(a, o);
  o.client_name = "b";
  auto lb = find_recipe("fair-mutex")->make(b, o);
  auto ga = real::run_task(loop, a.context(), acquire_once(la.get(), loop.now() + zk::seconds(20)));
  ASSERT_TRUE(ga.has_value());
  ASSERT_EQ(ga->error, zk::Error::kOk);
  auto gb = std::make_shared<std::optional<zk::Result<Grant>>>();
  b.context().spawn(
      [](Lock* l, zk::Time d,
         std::shared_ptr<std::optional<zk::Result<Grant>>> out) -> zk::Task<void> {
        out->emplace(co_await l->acquire(d));
      }(lb.get(), loop.now() + zk::seconds(30), gb),
      "waiter");
  loop.run_for(zk::milliseconds(300));
  EXPECT_FALSE(gb->has_value());
  ASSERT_GT(real::expire_session(*cluster, cluster->connect_string(), a.credentials()), 0);
  loop.run_until([&] { return gb->has_value() && la->state() == LockState::kLost; }, 20000);
  ASSERT_TRUE(gb->has_value());
  EXPECT_EQ((*gb)->error, zk::Error::kOk);
  EXPECT_GT((*gb)->value.fencing_token, ga->value.fencing_token);
  EXPECT_EQ(la->state(), LockState::kLost);
  EXPECT_TRUE(lb->holds());
}

}  // namespace
}  // namespace lockstep::recipes
