// The property workload (properties/workload.h) and its checkers on Debian's real ZooKeeper
// server: the same recipe code, the same workload and the same judging as in the simulator,
// through the engine of `lockstep check --real` (properties/real_backend.h run_real_scenario),
// with faults written as data (sim::Fault) and made by the real harness (a proxy that loses a
// create's reply, forced expiry of a client cut off at its proxies, a leader kill and restart).
// Herd-freedom is not judged there (no herd counters on a real server).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "properties/real_backend.h"
#include "properties/claims.h"
#include "properties/scenario.h"
#include "properties/suite.h"
#include "real/server.h"
#include "recipes/registry.h"

namespace lockstep::real {
namespace {

namespace p = ::lockstep::properties;

p::Scenario scenario_for(const recipes::RecipeInfo& recipe, const p::Claims& claims,
                         const std::string& lock_path) {
  p::Scenario s;
  s.workload.clients = 3;
  s.workload.rounds = 4;
  s.workload.lock_path = lock_path;
  s.workload.kind = recipe.kind;
  s.workload.max_leases = recipe.kind == recipes::Kind::kSemaphore ? 2 : 1;
  s.workload.timed_percent = 20;
  s.workload.acquire_timeout = zk::milliseconds(200);
  s.workload.reentrant_percent = claims.reentrant ? 30 : 0;
  s.workload.stray_release_percent = 20;
  s.session_timeout = zk::seconds(1);
  s.liveness_bound = zk::seconds(10);
  s.run_limit = zk::seconds(30);
  return s;
}

sim::Fault fault(sim::FaultKind kind, zk::Duration at, uint32_t client,
                 zk::FaultRequests requests = zk::FaultRequests::kAny,
                 zk::FaultTarget target = zk::FaultTarget::kIndexed) {
  sim::Fault f;
  f.kind = kind;
  f.at = zk::Time{} + at;
  f.client = client;
  f.requests = requests;  // lost-reply: the next create or delete
  f.target = target;      // server-restart: the leader
  return f;
}

// Adds the faults and sets heal_at after the last one ends.
void plan(p::Scenario* s, std::vector<sim::Fault> faults) {
  zk::Time heal{};
  for (const sim::Fault& f : faults) heal = std::max(heal, f.at + f.duration);
  s->faults = std::move(faults);
  s->heal_at = heal + zk::milliseconds(1);
}

p::SeedOutcome run(Cluster& cluster, const recipes::RecipeInfo& recipe, const p::Scenario& s) {
  p::RealOutcome o = p::run_real_scenario(cluster, recipe, p::claims_for(recipe), s);
  EXPECT_EQ(o.error, "") << recipe.name;
  return std::move(o.outcome);
}

std::string failures(const p::SeedOutcome& o) {
  std::string out;
  for (const p::Verdict& v : o.verdicts) {
    if (!v.ok) out += std::string(p::to_string(v.property)) + ": " + v.message + "\n";
  }
  return out;
}

bool saw_state(const p::History& h, uint32_t client, zk::SessionState state) {
  for (const p::Event& e : h.events()) {
    if (e.client == client && e.op == p::Op::kSession && e.session_state == state) return true;
  }
  return false;
}

std::string lock_path_for(const std::string& recipe) {
  std::string out = "/lockstep/";
  for (char c : recipe) out += (c == '/') ? '-' : c;
  return out;
}

// Every correct recipe of the registry passes every property it claims (herd-freedom aside)
// on a real standalone server, with timed acquires, stray releases and re-entrant holds.
TEST(RealWorkload, EveryCorrectRecipePassesItsClaimsWithoutFaults) {
  auto r = Cluster::start(ClusterOptions{});
  ASSERT_TRUE(r.cluster) << r.error;
  int judged = 0;
  for (const recipes::RecipeInfo& recipe : recipes::registry()) {
    if (recipe.expected != recipes::Expected::kCorrect) continue;
    const p::SeedOutcome o =
        run(*r.cluster, recipe,
            scenario_for(recipe, p::claims_for(recipe), lock_path_for(recipe.name)));
    EXPECT_TRUE(o.run.finished) << recipe.name << ": the workload did not finish";
    EXPECT_FALSE(o.verdicts.empty()) << recipe.name;
    EXPECT_EQ(failures(o), "") << recipe.name;
    judged += static_cast<int>(o.verdicts.size());
  }
  EXPECT_GT(judged, 0);
}

// The first event of `client` with operation `op`, or nullptr.
const p::Event* first(const p::History& h, uint32_t client, p::Op op) {
  for (const p::Event& e : h.events()) {
    if (e.client == client && e.op == op) return &e;
  }
  return nullptr;
}

std::string when(const p::Event* e, zk::Time t0) {
  return e == nullptr ? "never" : "t0+" + zk::to_string(e->at - t0);
}

// The fair mutex keeps its claims on the real server when a waiter's create reply is lost
// (the proxy drops it and cuts the connection) and another client's session is expired
// mid-run (a second handle closes it while the client is cut off).
TEST(RealWorkload, FairMutexSurvivesALostCreateReplyAndAnExpiry) {
  auto r = Cluster::start(ClusterOptions{});
  ASSERT_TRUE(r.cluster) << r.error;
  const recipes::RecipeInfo* recipe = recipes::find_recipe("fair-mutex");
  ASSERT_NE(recipe, nullptr);
  p::Scenario s = scenario_for(*recipe, p::claims_for(*recipe), "/lockstep/fair-faults");
  s.workload.rounds = 6;
  // The expiry at 150 ms must meet client 3 with rounds still to do: a client that is done has
  // stopped watching its session, so it never reports kExpired, and the recipe never meets the
  // expiry. With drawn holds (1-10 ms) the whole workload ended 145-235 ms after t0 on an idle
  // 2-core machine, and the expiry often came after client 3's last round. Holds of 100 ms are
  // the event loop's own timers: client 3 cannot be done before t0 + 600 ms on any machine, and
  // the loop fires the expiry's timer (due at t0 + 150 ms) first.
  s.workload.client_holds = {zk::Duration{}, zk::Duration{}, zk::milliseconds(100)};
  plan(&s, {fault(sim::FaultKind::kLoseNextReply, zk::Duration{}, 2, zk::FaultRequests::kCreate),
            fault(sim::FaultKind::kExpireSession, zk::milliseconds(150), 3)});
  const p::SeedOutcome o = run(*r.cluster, *recipe, s);
  // Both faults bit: client 2 lost its connection (the dropped reply), client 3 was told its
  // session expired.
  EXPECT_TRUE(saw_state(o.run.history, 2, zk::SessionState::kConnecting));
  EXPECT_TRUE(saw_state(o.run.history, 3, zk::SessionState::kExpired))
      << "expiry of c3 at " << when(first(o.run.history, 3, p::Op::kFault), o.run.start)
      << ", c3 done at " << when(first(o.run.history, 3, p::Op::kDone), o.run.start);
  EXPECT_TRUE(o.run.finished);
  EXPECT_FALSE(o.verdicts.empty());
  EXPECT_EQ(failures(o), "");
}

// On a 3-server ensemble the fair mutex keeps its claims while the leader is killed and
// restarted mid-run: the clients connected to it are disconnected during the re-election and
// reconnect to another server with their sessions.
TEST(RealWorkload, FairMutexSurvivesALeaderRestartOnAnEnsemble) {
  ClusterOptions co;
  co.servers = 3;
  auto r = Cluster::start(co);
  ASSERT_TRUE(r.cluster) << r.error;
  ASSERT_TRUE(r.cluster->wait_for_leader(20000));
  const recipes::RecipeInfo* recipe = recipes::find_recipe("fair-mutex");
  ASSERT_NE(recipe, nullptr);
  p::Scenario s = scenario_for(*recipe, p::claims_for(*recipe), "/lockstep/fair-ensemble");
  s.workload.rounds = 8;
  s.session_timeout = zk::seconds(2);
  s.servers = 3;
  sim::Fault restart = fault(sim::FaultKind::kServerRestart, zk::milliseconds(100), 1,
                             zk::FaultRequests::kAny, zk::FaultTarget::kLeader);
  restart.duration = zk::milliseconds(800);
  plan(&s, {restart});
  const p::SeedOutcome o = run(*r.cluster, *recipe, s);
  int disconnects = 0;
  bool killed = false;
  for (const p::Event& e : o.run.history.events()) {
    if (e.op == p::Op::kSession && e.session_state == zk::SessionState::kConnecting) ++disconnects;
    killed = killed || (e.op == p::Op::kFault && e.text.find("kill -9") != std::string::npos);
  }
  std::printf("[observe] leader restart during the workload: %d client disconnect(s)\n",
              disconnects);
  EXPECT_TRUE(killed) << "no leader to kill";
  EXPECT_GT(disconnects, 0) << "the fault did not reach any client";
  EXPECT_TRUE(o.run.finished);
  EXPECT_FALSE(o.verdicts.empty());
  EXPECT_EQ(failures(o), "");
}

// The canary: the broken variant without the client's id in its node name is caught on the
// real server by the property the claims name (liveness) when its create reply is lost: it
// cannot recognise the node it created and waits behind it forever.
TEST(RealWorkload, BrokenNoIdInNameIsCaughtByALostCreateReply) {
  auto r = Cluster::start(ClusterOptions{});
  ASSERT_TRUE(r.cluster) << r.error;
  const recipes::RecipeInfo* recipe = recipes::find_recipe("broken/no-id-in-name");
  ASSERT_NE(recipe, nullptr);
  const p::Claims claims = p::claims_for(*recipe);
  ASSERT_TRUE(claims.must_violate.has_value());
  p::Scenario s = scenario_for(*recipe, claims, "/lockstep/no-id");
  s.liveness_bound = zk::seconds(2);
  s.run_limit = zk::seconds(4);
  plan(&s, {fault(sim::FaultKind::kLoseNextReply, zk::Duration{}, 2, zk::FaultRequests::kCreate)});
  const p::SeedOutcome o = run(*r.cluster, *recipe, s);
  const p::Verdict* caught = o.verdict(*claims.must_violate);
  ASSERT_NE(caught, nullptr) << "not judged: " << p::to_string(*claims.must_violate);
  ASSERT_FALSE(caught->ok) << "not caught by " << p::to_string(*claims.must_violate)
                           << "; verdicts:\n"
                           << failures(o);
  std::printf("[observe] %s caught: %s\n", recipe->name.c_str(), caught->message.c_str());
}

}  // namespace
}  // namespace lockstep::real
