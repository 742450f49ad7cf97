// The workload and the checkers against Debian's real ZooKeeper server (label "real"): the
// same Workload code that runs in the simulator drives every correct recipe of the registry on
// a standalone server, and the same checkers judge the recorded history; a broken variant is
// caught there too.
#include "properties/real_run.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "properties/real_backend.h"
#include "properties/suite.h"
#include "real/server.h"

namespace lockstep::properties {
namespace {

class RealWorkload : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    real::ClusterOptions co;
    co.tick_ms = 200;
    real::Cluster::StartResult r = real::Cluster::start(co);
    ASSERT_NE(r.cluster, nullptr) << r.error;
    cluster_ = r.cluster.release();
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }

  // A scenario for the real server: `clients` x `rounds` of `kind` under `lock_path`, with a
  // session timeout of 4 s and a liveness bound of 20 s (the server's expiry and a 2-core CI
  // machine's pace, not the simulator's).
  static Scenario real_scenario(recipes::Kind kind, uint32_t clients, uint32_t rounds,
                                std::string lock_path) {
    Scenario s;
    s.workload.kind = kind;
    s.workload.clients = clients;
    s.workload.rounds = rounds;
    s.workload.lock_path = std::move(lock_path);
    s.session_timeout = zk::seconds(4);
    s.liveness_bound = zk::seconds(20);
    return s;
  }

  // Runs a small workload with `recipe` and judges every property but herd-freedom (the real
  // server has no herd counters).
  static std::vector<Verdict> run(const recipes::RecipeInfo& recipe, uint32_t clients,
                                  std::string lock_path, RunResult* result = nullptr) {
    const Claims claims = claims_for(recipe);
    Scenario s = real_scenario(recipe.kind, clients, 4, std::move(lock_path));
    s.workload.think_max = zk::milliseconds(3);
    s.workload.hold_min = zk::milliseconds(1);
    s.workload.hold_max = zk::milliseconds(5);
    s.workload.timed_percent = 20;
    s.workload.acquire_timeout = zk::milliseconds(30);
    s.workload.reentrant_percent = 30;
    s.workload.stray_release_percent = 10;
    if (recipe.kind == recipes::Kind::kSemaphore) s.workload.max_leases = 2;
    RealRunOptions o;
    o.hosts = cluster_->connect_string();
    o.session_timeout = s.session_timeout;
    RunResult r = run_on_real(recipe.make, s.workload, o);
    EXPECT_TRUE(r.finished) << recipe.name << ": the workload did not finish\n"
                            << r.history.to_text();
    std::vector<Verdict> out;
    for (Verdict& v : judge(recipe, claims, s, r)) {
      if (v.property != Property::kHerdFree) out.push_back(std::move(v));
    }
    if (result != nullptr) *result = std::move(r);
    return out;
  }

  static real::Cluster* cluster_;
};

real::Cluster* RealWorkload::cluster_ = nullptr;

// Every correct recipe keeps every property it claims (but herd-freedom) on a real server with
// three clients taking the lock four times each, with timed, re-entrant and stray operations.
TEST_F(RealWorkload, CorrectRecipesPassOnARealServer) {
  int n = 0;
  for (const recipes::RecipeInfo& r : recipes::registry()) {
    if (r.expected != recipes::Expected::kCorrect) continue;
    RunResult result;
    const std::vector<Verdict> verdicts = run(r, 3, "/real-run/" + std::to_string(++n), &result);
    EXPECT_FALSE(verdicts.empty()) << r.name;
    for (const Verdict& v : verdicts) {
      EXPECT_TRUE(v.ok) << r.name << " " << to_string(v.property) << ": " << v.message << "\n"
                        << result.history.to_text();
    }
    size_t grants = 0;
    for (const Event& e : result.history.events()) {
      grants += e.op == Op::kAcquire && e.type == Type::kOk ? 1 : 0;
    }
    EXPECT_GT(grants, 0u) << r.name << ": no acquire succeeded";
  }
}

// A broken variant whose readers ignore earlier writers is caught by mutual exclusion on the
// real server too (within a few runs: real schedules are not reproducible).
TEST_F(RealWorkload, BrokenVariantIsCaughtOnARealServer) {
  const recipes::RecipeInfo* r = recipes::find_recipe("broken/reader-ignores-writers");
  ASSERT_NE(r, nullptr);
  bool caught = false;
  for (int attempt = 0; attempt < 5 && !caught; ++attempt) {
    for (const Verdict& v : run(*r, 4, "/real-broken/" + std::to_string(attempt))) {
      caught = caught || (v.property == Property::kMutualExclusion && !v.ok);
    }
  }
  EXPECT_TRUE(caught) << "a reader never held beside a writer in 5 runs";
}

// A lost reply armed while the only client holds the lock is taken at its release's delete, long
// after the plan's heal; the run's heal is when the proxy dropped it, so nothing after the plan's
// heal is judged as healed while the fault still acts (the simulator's ArmedFaults test, end to
// end through the real backend's proxy and fault driver).
TEST_F(RealWorkload, ALostReplyTakenAfterThePlansHealMovesTheRunsHeal) {
  const recipes::RecipeInfo* r = recipes::find_recipe("fair-mutex");
  ASSERT_NE(r, nullptr);
  Scenario s = real_scenario(r->kind, 1, 1, "/real-armed");
  s.seed = 3;
  s.workload.think_max = zk::microseconds(1);
  s.workload.hold_min = s.workload.hold_max = zk::milliseconds(600);
  sim::Fault lost;
  lost.kind = sim::FaultKind::kLoseNextReply;
  lost.at = zk::Time{} + zk::milliseconds(200);  // the client holds from its first round trips
  lost.client = 1;
  s.faults.push_back(lost);
  finish_scenario(&s);
  ASSERT_EQ(s.heal_at, zk::Time{} + zk::milliseconds(201));
  const RealOutcome o = run_real_scenario(*cluster_, *r, claims_for(*r), s);
  ASSERT_TRUE(o.error.empty()) << o.error;
  const RunResult& run = o.outcome.run;
  ASSERT_TRUE(run.finished) << run.history.to_text();
  const zk::Time plan_heal = run.start + (s.heal_at - zk::Time{});
  zk::Time released{};
  for (const Event& e : run.history.events()) {
    if (e.op == Op::kRelease && e.type == Type::kInvoke) released = e.at;
  }
  ASSERT_GT(released, plan_heal + zk::milliseconds(200)) << run.history.to_text();
  // The release's delete is the request whose reply the proxy drops: after the release began.
  EXPECT_GT(run.heal_at, released) << run.history.to_text();
  for (const Verdict& v : o.outcome.verdicts) {
    EXPECT_TRUE(v.ok) << to_string(v.property) << ": " << v.message << "\n"
                      << run.history.to_text();
  }
}

}  // namespace
}  // namespace lockstep::properties
