// Tests of the shrinker (traces/shrink.cc): a client anywhere can go, delta debugging drops the
// faults a violation does not need, the schedule-shrunk trace replays exactly, the saved trace
// headlines the property `lockstep check` printed, and every broken variant's catch shrinks to at
// most 40 history events with its property still violated (DESIGN §6).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "properties/check.h"
#include "properties/claims.h"
#include "properties/suite.h"
#include "traces/record.h"
#include "traces/test_util.h"
#include "traces/trace.h"

namespace lockstep::traces {
namespace {

using properties::Property;
using properties::Scenario;
using recipes::Role;
using testing::run_command;
using testing::TempDir;

const recipes::RecipeInfo& recipe_named(const std::string& name) {
  const recipes::RecipeInfo* r = recipes::find_recipe(name);
  if (r == nullptr) std::abort();
  return *r;
}

// Whether `s`, run as `lockstep check` runs it (the seed's random strategy), violates `p`.
bool violates(const recipes::RecipeInfo& r, const Scenario& s, Property p) {
  const properties::SeedOutcome o = properties::run_scenario(r, properties::claims_for(r), s);
  const properties::Verdict* v = o.verdict(p);
  return v != nullptr && !v->ok;
}

sim::Fault fault(sim::FaultKind kind, uint32_t client, int64_t at_us) {
  sim::Fault f;
  f.kind = kind;
  f.client = client;
  f.at = zk::Time{at_us};
  f.duration = zk::microseconds(2000);
  f.extra = zk::microseconds(300);
  return f;
}

// Removing a client in the middle takes its faults and its role with it, moves the later clients'
// faults and roles down one, and keeps a fault on no client (0).
TEST(Shrink, WithoutClientRenumbersTheLaterClients) {
  Scenario s;
  s.workload.clients = 4;
  s.workload.roles = {Role::kRead, Role::kWrite, Role::kRead, Role::kWrite};
  s.faults = {fault(sim::FaultKind::kPause, 2, 10), fault(sim::FaultKind::kConnectionLoss, 3, 20),
              fault(sim::FaultKind::kExpireSession, 4, 30),
              fault(sim::FaultKind::kLaggingFollower, 0, 40)};
  const Scenario t = without_client(s, 2);
  EXPECT_EQ(t.workload.clients, 3u);
  EXPECT_EQ(t.workload.roles, (std::vector<Role>{Role::kRead, Role::kRead, Role::kWrite}));
  ASSERT_EQ(t.faults.size(), 3u);
  EXPECT_EQ(t.faults[0].kind, sim::FaultKind::kConnectionLoss);
  EXPECT_EQ(t.faults[0].client, 2u);
  EXPECT_EQ(t.faults[1].kind, sim::FaultKind::kExpireSession);
  EXPECT_EQ(t.faults[1].client, 3u);
  EXPECT_EQ(t.faults[2].kind, sim::FaultKind::kLaggingFollower);
  EXPECT_EQ(t.faults[2].client, 0u);
}

// Removing a client also removes its per-client knobs (streams, rounds, holds), and the later
// clients keep theirs: client 3's stream stays stream 3 when client 2 goes.
TEST(Shrink, WithoutClientKeepsTheOthersPerClientKnobs) {
  Scenario s;
  s.workload.clients = 3;
  s.workload.client_streams = {1, 2, 3};
  s.workload.client_rounds = {5, 1, 2};
  s.workload.client_holds = {zk::Duration{}, zk::microseconds(7), zk::microseconds(9)};
  const Scenario t = without_client(s, 2);
  EXPECT_EQ(t.workload.client_streams, (std::vector<uint32_t>{1, 3}));
  EXPECT_EQ(t.workload.client_rounds, (std::vector<uint32_t>{5, 2}));
  EXPECT_EQ(t.workload.client_holds,
            (std::vector<zk::Duration>{zk::Duration{}, zk::microseconds(9)}));
}

// A lost wake-up that a random run shows only after rounds of holds lining up (semaphore-watch-
// ahead: a waiter watches the node two places ahead, and the holder before it leaves first) is
// taken apart with the per-client knobs: one round per client, one client's hold long, in at most
// 40 history events, and the saved trace replays exactly.
TEST(Shrink, OneLongHolderShowsALostWakeUpInOneRound) {
  const recipes::RecipeInfo& r = *recipes::find_recipe("broken/semaphore-watch-ahead");
  const std::optional<VariantShrink> v = shrink_variant(r, 2000);
  ASSERT_TRUE(v.has_value());
  const Trace& t = v->shrunk.trace;
  EXPECT_TRUE(v->still_violated) << verdict_summary(t);
  EXPECT_EQ(t.scenario.workload.rounds, 1u) << properties::describe(t.scenario);
  EXPECT_EQ(t.scenario.workload.client_holds.size(), t.scenario.workload.clients);
  EXPECT_LE(t.history.size(), 40u);
  EXPECT_FALSE(replay_trace(t, r).divergence.has_value());
}

// broken/reader-ignores-writers needs one reader and one writer. In a scenario of two readers
// and then the writer, dropping the last client (all the old shrinker could do) loses the
// violation; the shrinker drops a reader in front instead and keeps it.
TEST(Shrink, DropsAClientInFrontAndKeepsTheViolation) {
  const recipes::RecipeInfo& r = recipe_named("broken/reader-ignores-writers");
  const Property p = Property::kMutualExclusion;
  std::optional<Scenario> start;
  for (uint64_t seed = 1; seed <= 50 && !start; ++seed) {
    Scenario s = check_scenario(r, seed);
    s.faults.clear();
    s.workload.clients = 3;
    s.workload.rounds = 2;
    s.workload.roles = {Role::kRead, Role::kRead, Role::kWrite};
    properties::finish_scenario(&s);
    if (violates(r, s, p)) start = s;
  }
  ASSERT_TRUE(start.has_value()) << "no seed in 1..50 makes the readers and the writer overlap";
  const Scenario shrunk = shrink_scenario(r, *start, p);
  EXPECT_EQ(shrunk.workload.clients, 2u) << properties::describe(shrunk);
  EXPECT_EQ(shrunk.workload.roles, (std::vector<Role>{Role::kRead, Role::kWrite}))
      << properties::describe(shrunk);
  EXPECT_TRUE(violates(r, shrunk, p)) << properties::describe(shrunk);
}

// broken/ignores-expiry's catch needs a fault (without any, nothing expires). Six delays on
// both clients are added to it; delta debugging over the faults removes every delay and keeps
// what the violation needs.
TEST(Shrink, DeltaDebuggingRemovesTheFaultsTheViolationDoesNotNeed) {
  const recipes::RecipeInfo& r = recipe_named("broken/ignores-expiry");
  const Property p = Property::kMutualExclusion;
  const std::optional<uint64_t> seed = first_failing_seed(r, 200);
  ASSERT_TRUE(seed.has_value());
  Scenario s = check_scenario(r, *seed);
  for (uint32_t i = 0; i < 6; ++i) {
    s.faults.push_back(fault(sim::FaultKind::kDelay, 1 + i % 2, 1000 + 3000 * i));
  }
  properties::finish_scenario(&s);
  ASSERT_TRUE(violates(r, s, p)) << properties::describe(s);
  const Scenario shrunk = shrink_scenario(r, s, p);
  EXPECT_TRUE(violates(r, shrunk, p)) << properties::describe(shrunk);
  EXPECT_FALSE(shrunk.faults.empty()) << properties::describe(shrunk);
  EXPECT_TRUE(std::none_of(shrunk.faults.begin(), shrunk.faults.end(),
                           [](const sim::Fault& f) { return f.kind == sim::FaultKind::kDelay; }))
      << properties::describe(shrunk);
  Scenario none = shrunk;
  none.faults.clear();
  properties::finish_scenario(&none);
  EXPECT_FALSE(violates(r, none, p)) << "the kept faults are needed";
}

size_t off_default(const std::vector<sim::Decision>& decisions) {
  return static_cast<size_t>(std::count_if(decisions.begin(), decisions.end(),
                                           [](const sim::Decision& d) { return d.chosen != 0; }));
}

// The schedule phase: broken/sort-by-name's shrunk catch answers fewer choices off the default
// (0) than the random run of the same scenario, is recorded with the "shrunk" strategy, replays
// exactly (replay_trace and `lockstep replay`, exit 0) and is deterministic.
TEST(Shrink, TheScheduleShrunkTraceReplaysExactly) {
  const recipes::RecipeInfo& r = recipe_named("broken/sort-by-name");
  const Property p = Property::kMutualExclusion;
  const std::optional<uint64_t> seed = first_failing_seed(r, 200);
  ASSERT_TRUE(seed.has_value());
  const ShrinkResult a = shrink_failure(r, check_scenario(r, *seed), p);
  ASSERT_TRUE(a.schedule_shrunk);
  const Trace& t = a.trace;
  EXPECT_EQ(t.strategy, kShrunkStrategy);
  ASSERT_NE(t.violation(), nullptr);
  EXPECT_EQ(t.violation()->property, p);
  EXPECT_LT(off_default(t.decisions), off_default(record_trace(r, t.scenario).decisions));
  EXPECT_LE(a.runs, ShrinkOptions{}.max_runs);
  const ReplayResult replay = replay_trace(t, r);
  EXPECT_FALSE(replay.divergence.has_value()) << replay.divergence->where << ": "
                                              << replay.divergence->expected << " / "
                                              << replay.divergence->actual;
  TempDir dir;
  std::string error;
  const std::string path = save_failure_trace(t, dir.path(), &error);
  ASSERT_FALSE(path.empty()) << error;
  const testing::CommandResult cmd = run_command("replay", {path});
  EXPECT_EQ(cmd.code, cli::kExitOk) << cmd.out << cmd.err;
  // recheck runs a shrunk trace's own schedule (leniently), which still fails.
  const testing::CommandResult again = run_command("recheck", {path});
  EXPECT_EQ(again.code, cli::kExitFailure) << again.out << again.err;
  EXPECT_NE(again.out.find("mutual-exclusion VIOLATED"), std::string::npos) << again.out;
  EXPECT_EQ(to_json_text(shrink_failure(r, check_scenario(r, *seed), p).trace), to_json_text(t));
}

// broken/timeout-leaves-node is caught by timeout-cleanup (what `lockstep check` prints) at a
// seed whose first violated property in Property order is no-orphans. The trace check saves,
// shrunk or as run, reports timeout-cleanup: in its verdict, in `show` and in `replay`.
TEST(Shrink, TheSavedTraceHeadlinesThePropertyCheckPrinted) {
  const recipes::RecipeInfo& r = recipe_named("broken/timeout-leaves-node");
  const Property p = *properties::claims_for(r).must_violate;
  ASSERT_EQ(p, Property::kTimeoutCleanup);
  const std::optional<uint64_t> seed = first_failing_seed(r, 200);
  ASSERT_TRUE(seed.has_value());
  const properties::SeedOutcome o = properties::run_seed(r, properties::claims_for(r), *seed);
  ASSERT_NE(o.first_violation(), nullptr);
  ASSERT_NE(o.first_violation()->property, p) << "the test needs a seed with an earlier violation";
  TempDir dir;
  for (const bool shrink : {false, true}) {
    SCOPED_TRACE(shrink ? "shrunk" : "as run");
    properties::FailingSeed f;
    f.recipe = &r;
    f.seed = *seed;
    f.property = p;
    f.dir = dir.file(shrink ? "shrunk" : "raw");
    f.shrink = shrink;
    std::string error;
    const std::string path = save_check_failure(f, &error);
    ASSERT_FALSE(path.empty()) << error;
    LoadError e;
    const std::optional<Trace> t = load_trace(path, &e);
    ASSERT_TRUE(t.has_value()) << e.message;
    ASSERT_NE(t->violation(), nullptr);
    EXPECT_EQ(t->violation()->property, p);
    EXPECT_EQ(t->reported, p);
    const testing::CommandResult show = run_command("show", {path});
    EXPECT_NE(show.out.find("timeout-cleanup VIOLATED"), std::string::npos) << show.out;
    const testing::CommandResult replay = run_command("replay", {path});
    EXPECT_EQ(replay.code, cli::kExitOk) << replay.out << replay.err;
    EXPECT_NE(replay.out.find("timeout-cleanup VIOLATED"), std::string::npos) << replay.out;
  }
}

// The shrink report's target (DESIGN §6): for every broken variant, the seed `lockstep check`
// catches it at first, shrunk as check saves it, still violates the variant's property, in at
// most 40 history events, and replays exactly. (bench/shrink_report prints the figures.)
TEST(Shrink, EveryBrokenVariantShrinksToAtMost40HistoryEvents) {
  size_t variants = 0;
  for (const recipes::RecipeInfo& r : recipes::registry()) {
    if (r.expected != recipes::Expected::kBroken) continue;
    SCOPED_TRACE(r.name);
    ++variants;
    const std::optional<VariantShrink> v = shrink_variant(r, 2000);
    ASSERT_TRUE(v.has_value()) << "not caught in seeds 1..2000";
    const Trace& t = v->shrunk.trace;
    EXPECT_TRUE(v->still_violated) << verdict_summary(t);
    EXPECT_LE(t.history.size(), 40u)
        << "seed " << v->seed << ", shrunk to " << properties::describe(t.scenario);
    EXPECT_LE(t.history.size(), v->as_run.history);
    const ReplayResult replay = replay_trace(t, r);
    EXPECT_FALSE(replay.divergence.has_value()) << replay.divergence->where;
  }
  EXPECT_GE(variants, 28u);
}

}  // namespace
}  // namespace lockstep::traces
