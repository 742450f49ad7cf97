// Tests of the search core: exhaustive enumeration on hand-countable trees and on the
// simulator, the shortest counterexample of a broken variant, "no violation" for the fair mutex,
// PCT. The `explore` command's tests are cli/explore_test.cc.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "explore/search.h"
#include "explore/strategies.h"
#include "recipes/registry.h"
#include "traces/record.h"
#include "traces/trace.h"

namespace lockstep::explore {
namespace {

using sim::ChoiceKind;

// A synthetic program with a hand-countable choice tree: next-event/3; answer 2 ends the run,
// otherwise latency/2 then ambiguous-outcome/2. Leaves: 2*2*2 + 1 = 9. It "violates" on the
// path (1, 1, 1) and records every leaf it reached.
class TreeProgram final : public Program {
 public:
  RunReport run(sim::Strategy& s, StateHashing* /*probe*/) override {
    RunReport r;
    std::vector<uint32_t> path;
    const uint32_t a = s.choose(ChoiceKind::kNextEvent, 3);
    r.decisions.push_back({ChoiceKind::kNextEvent, 3, a});
    path.push_back(a);
    if (a != 2) {
      const uint32_t b = s.choose(ChoiceKind::kLatency, 2);
      r.decisions.push_back({ChoiceKind::kLatency, 2, b});
      const uint32_t c = s.choose(ChoiceKind::kAmbiguousOutcome, 2);
      r.decisions.push_back({ChoiceKind::kAmbiguousOutcome, 2, c});
      path.push_back(b);
      path.push_back(c);
    }
    if (bad(path)) {
      properties::Verdict v;
      v.property = properties::Property::kMutualExclusion;
      v.ok = false;
      v.message = "path 1,1,1";
      r.violations.push_back(v);
    }
    leaves.push_back(path);
    return r;
  }
  std::vector<std::vector<uint32_t>> leaves;
  std::function<bool(const std::vector<uint32_t>&)> bad = [](const std::vector<uint32_t>& p) {
    return p == std::vector<uint32_t>{1, 1, 1};
  };
};

size_t distinct(const std::vector<std::vector<uint32_t>>& leaves) {
  return std::set<std::vector<uint32_t>>(leaves.begin(), leaves.end()).size();
}

// Unbounded exhaustive search visits each of the 9 leaves of the hand-made tree exactly once.
TEST(Exhaustive, EnumeratesEveryLeafOfAHandCountableTree) {
  TreeProgram p;
  ExhaustiveOptions o;
  o.preemption_bound = 3;
  const SearchResult r = explore_exhaustive(p, o);
  EXPECT_EQ(r.schedules, 9u);
  EXPECT_EQ(p.leaves.size(), 9u);
  EXPECT_EQ(distinct(p.leaves), 9u);
  EXPECT_TRUE(r.complete);
}

// The observer sees every run in order (schedules 1, 2, ...) and an observer that says stop after
// the fourth run ends the search there: 4 runs, stopped_by_observer, not complete. One that never
// stops leaves the result as it is without one (exhaustive and random).
TEST(Observer, SeesEveryRunAndStopsTheSearchWhenItSaysSo) {
  TreeProgram p;
  ExhaustiveOptions o;
  o.preemption_bound = 3;
  std::vector<uint64_t> seen;
  o.observer = [&](const SearchProgress& at) {
    seen.push_back(at.schedules);
    EXPECT_LE(at.final_states, at.schedules);
    return at.schedules < 4;
  };
  const SearchResult stopped = explore_exhaustive(p, o);
  EXPECT_EQ(seen, (std::vector<uint64_t>{1, 2, 3, 4}));
  EXPECT_EQ(stopped.schedules, 4u);
  EXPECT_TRUE(stopped.stopped_by_observer);
  EXPECT_FALSE(stopped.complete);

  o.observer = [](const SearchProgress&) { return true; };
  const SearchResult watched = explore_exhaustive(p, o);
  o.observer = nullptr;
  const SearchResult plain = explore_exhaustive(p, o);
  EXPECT_FALSE(watched.stopped_by_observer);
  EXPECT_EQ(watched.schedules, plain.schedules);
  EXPECT_EQ(watched.complete, plain.complete);
  EXPECT_EQ(watched.first_violation_at, plain.first_violation_at);

  SampleOptions so;
  so.runs = 20;
  so.observer = [](const SearchProgress& at) { return at.schedules < 7; };
  const SearchResult sampled = explore_random(p, so);
  EXPECT_EQ(sampled.schedules, 7u);
  EXPECT_TRUE(sampled.stopped_by_observer);
}

// A preemption bound keeps exactly the leaves with at most that many non-zero answers:
// bound 1 -> 1 + 2 + 1 + 1 = 5, bound 2 -> 9 minus the leaf (1,1,1) = 8.
TEST(Exhaustive, PreemptionBoundKeepsTheCountedLeaves) {
  for (const auto& [bound, expected] :
       std::vector<std::pair<uint32_t, size_t>>{{0, 1}, {1, 5}, {2, 8}}) {
    TreeProgram p;
    ExhaustiveOptions o;
    o.preemption_bound = bound;
    const SearchResult r = explore_exhaustive(p, o);
    EXPECT_EQ(r.schedules, expected) << "bound " << bound;
    EXPECT_EQ(distinct(p.leaves), expected) << "bound " << bound;
  }
}

// The violating leaf (1,1,1) needs three preemptions: found at level 3 and not before, and
// stop_at_first stops right there.
TEST(Exhaustive, FindsTheViolatingLeafAtItsLevel) {
  TreeProgram p;
  ExhaustiveOptions o;
  o.preemption_bound = 2;
  EXPECT_FALSE(explore_exhaustive(p, o).shortest.has_value());
  o.preemption_bound = 3;
  o.stop_at_first = true;
  TreeProgram q;
  const SearchResult r = explore_exhaustive(q, o);
  ASSERT_TRUE(r.shortest.has_value());
  EXPECT_EQ(r.shortest->schedule, (Schedule{{0, 1}, {1, 1}, {2, 1}}));
  EXPECT_EQ(r.schedules, 9u);  // it is the last leaf in level order
  EXPECT_TRUE(r.stopped_at_first);
}

// A depth bound lets only the first choice points branch: with depth 1 only next-event/3 does,
// giving the zero schedule and its two alternatives.
TEST(Exhaustive, DepthBoundLimitsWhereSchedulesBranch) {
  TreeProgram p;
  ExhaustiveOptions o;
  o.preemption_bound = 3;
  o.depth_bound = 1;
  EXPECT_EQ(explore_exhaustive(p, o).schedules, 3u);
  TreeProgram q;
  o.depth_bound = UINT32_MAX;
  o.kinds = {ChoiceKind::kLatency};  // only latency/2 branches
  EXPECT_EQ(explore_exhaustive(q, o).schedules, 2u);
}

// Shrinking drops every pick the violation does not need: with "latency answered 1" as the bug,
// the three-pick counterexample shrinks to the one pick at index 1.
TEST(Shrink, DropsPicksTheViolationDoesNotNeed) {
  TreeProgram p;
  p.bad = [](const std::vector<uint32_t>& path) { return path.size() == 3 && path[1] == 1; };
  Counterexample c;
  c.schedule = {{0, 1}, {1, 1}, {2, 1}};
  uint64_t runs = 0;
  const Counterexample s = shrink(p, c, std::nullopt, 100, &runs);
  EXPECT_EQ(s.schedule, (Schedule{{1, 1}}));
  EXPECT_EQ(s.decisions.size(), 3u);
  EXPECT_GE(runs, 2u);
  // A counterexample that needs every pick stays as it is.
  TreeProgram q;
  EXPECT_EQ(shrink(q, c, std::nullopt, 100).schedule, c.schedule);
}

// Choice points with huge n (the child-order salt) branch on a few spread answers only.
TEST(Exhaustive, AlternativesAreCappedAndSpread) {
  EXPECT_EQ(alternatives(4, 3), (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_EQ(alternatives(2, 3), (std::vector<uint32_t>{1}));
  const std::vector<uint32_t> big = alternatives(4294967295u, 3);
  ASSERT_EQ(big.size(), 3u);
  EXPECT_EQ(big[0], 1u);
  EXPECT_LT(big[1], big[2]);
  EXPECT_LT(big[2], 4294967295u);
}

const recipes::RecipeInfo& recipe(const char* name) {
  const recipes::RecipeInfo* r = recipes::find_recipe(name);
  EXPECT_NE(r, nullptr) << name;
  return *r;
}

// On the simulator, bound 1 without reduction runs the all-zero schedule plus one schedule per
// alternative answer of each of its choice points: 1 + sum |alternatives(n_i)|.
TEST(Exhaustive, SimulatorBoundOneCountMatchesTheZeroRun) {
  const Scope scope = make_scope(recipe("fair-mutex"), 2, 1, {});
  ScopeProgram program(scope);
  ScheduleStrategy zero({});
  program.run(zero, &zero);
  uint64_t expected = 1;
  for (const ChoicePoint& p : zero.points()) expected += alternatives(p.n, 3).size();
  ExhaustiveOptions o;
  o.preemption_bound = 1;
  const SearchResult r = explore_exhaustive(program, o);
  EXPECT_EQ(r.schedules, expected);
  EXPECT_GT(r.schedules, 10u);
  // Different answers make different runs (a latency or an order changes the event log).
  EXPECT_GT(r.distinct_runs, r.schedules / 2);
  EXPECT_LE(r.distinct_runs, r.schedules);
  EXPECT_FALSE(r.shortest.has_value());
}

// broken/sort-by-name with 2 clients and 1 round is wrong only when c2's node is created first:
// the all-zero schedule passes, one preemption breaks it, and the reported counterexample is the
// shortest among every violating one-preemption schedule (checked here by brute force).
TEST(Exhaustive, FindsTheShortestCounterexampleOfSortByName) {
  const recipes::RecipeInfo& r = recipe("broken/sort-by-name");
  const Scope scope = make_scope(r, 2, 1, {}, 1);
  ScopeProgram program(scope);
  ScheduleStrategy zero({});
  ASSERT_TRUE(program.run(zero, &zero).violations.empty());

  ExhaustiveOptions o;
  o.preemption_bound = 2;
  const SearchResult res = explore_exhaustive(program, o);
  ASSERT_TRUE(res.shortest.has_value());
  EXPECT_EQ(res.shortest->schedule.size(), 1u);
  EXPECT_EQ(res.shortest->verdict.property, properties::Property::kMutualExclusion);
  EXPECT_EQ(res.levels_done, 2u);  // level 1 finished, level 2 never started

  size_t best = SIZE_MAX;
  for (size_t i = 0; i < zero.points().size(); ++i) {
    for (uint32_t a : alternatives(zero.points()[i].n, 3)) {
      ScheduleStrategy s({{static_cast<uint32_t>(i), a}});
      const RunReport rep = program.run(s, nullptr);
      if (!rep.violations.empty()) best = std::min(best, rep.decisions.size());
    }
  }
  EXPECT_EQ(res.shortest->decisions.size(), best);

  // The recorded decisions replay to the same violation.
  auto replay = sim::make_replay_strategy(res.shortest->decisions);
  const RunReport again = program.run(*replay, nullptr);
  EXPECT_FALSE(replay->diverged()) << replay->divergence();
  ASSERT_FALSE(again.violations.empty());
  EXPECT_EQ(again.violations.front().message, res.shortest->verdict.message);
}

// The fair mutex with 2 clients, 2 rounds and no faults has no violating schedule with at most
// one preemption, nor (with the recipe-level state-hash reduction) with two.
TEST(Exhaustive, FairMutexHasNoViolationInASmallScope) {
  const Scope scope = make_scope(recipe("fair-mutex"), 2, 2, {});
  ScopeProgram program(scope);
  ExhaustiveOptions o;
  o.preemption_bound = 1;
  SearchResult r = explore_exhaustive(program, o);
  EXPECT_FALSE(r.shortest.has_value()) << r.shortest->verdict.message;
  EXPECT_TRUE(r.complete);
  EXPECT_GT(r.schedules, 100u);
  o.preemption_bound = 2;
  o.reduction = Reduction::kStateHash;
  r = explore_exhaustive(program, o);
  EXPECT_FALSE(r.shortest.has_value()) << r.shortest->verdict.message;
  EXPECT_TRUE(r.complete);
  EXPECT_GT(r.pruned, 0u);
}

// A fault spec names the server of a kind that hits one (:sN, s1 the leader), in either order
// with the client; a bad or misplaced selector is refused with what to write instead.
TEST(FaultSpec, NamesTheServerOfAKindThatHitsOne) {
  const Scope probe = make_scope(recipe("fair-mutex"), 2, 1, {});
  sim::Fault f;
  std::string error;
  ASSERT_TRUE(parse_fault_spec("lagging-follower", probe.scenario, &f, &error)) << error;
  EXPECT_EQ(f.server, 2u);  // the kind's typical instance: a follower
  ASSERT_TRUE(parse_fault_spec("lagging-follower@3:s1", probe.scenario, &f, &error)) << error;
  EXPECT_EQ(f.kind, sim::FaultKind::kLaggingFollower);
  EXPECT_EQ(f.server, 1u);
  EXPECT_EQ(f.at, zk::Time{} + zk::milliseconds(3));
  ASSERT_TRUE(parse_fault_spec("server-restart:s3:c2", probe.scenario, &f, &error)) << error;
  EXPECT_EQ(f.server, 3u);
  EXPECT_EQ(f.client, 2u);
  ASSERT_TRUE(parse_fault_spec("lost-reply:c2", probe.scenario, &f, &error)) << error;
  EXPECT_EQ(f.client, 2u);
  for (const char* bad : {"lagging-follower:s0", "lagging-follower:s4", "lagging-follower:s",
                          "lost-reply:s1", "lagging-follower:s1:s2", "lost-reply:c1:c2",
                          "lost-reply:x1", "lost-reply:c3", "lost-reply:"}) {
    error.clear();
    EXPECT_FALSE(parse_fault_spec(bad, probe.scenario, &f, &error)) << bad;
    EXPECT_NE(error.find(bad), std::string::npos) << bad << ": " << error;
  }
}

// Exhaustive search at `bound` preemptions: `broken`'s scope violates `property`, and
// `correct`'s is exhausted with no violation. Returns the correct scope's search.
SearchResult expect_caught_and_passed(const Scope& broken, properties::Property property,
                                      const Scope& correct, uint32_t bound) {
  ExhaustiveOptions o;
  o.preemption_bound = bound;
  ScopeProgram broken_program(broken);
  const SearchResult caught = explore_exhaustive(broken_program, o);
  EXPECT_TRUE(caught.shortest.has_value()) << broken.recipe->name << " was not caught";
  if (caught.shortest) EXPECT_EQ(caught.shortest->verdict.property, property);
  ScopeProgram correct_program(correct);
  SearchResult passed = explore_exhaustive(correct_program, o);
  EXPECT_FALSE(passed.shortest.has_value()) << passed.shortest->verdict.message;
  EXPECT_TRUE(passed.complete);
  return passed;
}

// The leader's lag as a focused scope (real/FINDINGS.md item 11): a create applied on a follower
// whose reply is lost, then a reconnect to the leader that has not applied it yet. Trusting a
// sync as the read barrier deadlocks behind the node it did not find (liveness); the fair mutex,
// whose barrier is a write, passes every schedule of the same scope with two preemptions. A lag
// runs the scope on an ensemble even when it names the leader.
TEST(Exhaustive, TheLeadersLagCatchesSyncAsBarrierAndTheFairMutexPasses) {
  const Scope probe = make_scope(recipe("fair-mutex"), 1, 1, {});
  std::vector<sim::Fault> faults(2);
  std::string error;
  ASSERT_TRUE(parse_fault_spec("lagging-follower@0:s1", probe.scenario, &faults[0], &error))
      << error;
  ASSERT_TRUE(parse_fault_spec("lost-reply@0:c1", probe.scenario, &faults[1], &error)) << error;
  const Scope broken = make_scope(recipe("broken/sync-as-barrier"), 1, 1, faults);
  EXPECT_EQ(broken.scenario.servers, kScopeServers);
  const SearchResult passed = expect_caught_and_passed(
      broken, properties::Property::kLiveness, make_scope(recipe("fair-mutex"), 1, 1, faults), 2);
  EXPECT_GT(passed.schedules, 1000u);
}

// A variant that shared callers expose gets two caller tasks on each client's Lock in its scope
// and is caught at once; the fair mutex, which promises shared callers, passes the same
// two-caller scope with one preemption, and its own scope keeps one caller.
TEST(Exhaustive, SharedCallersCatchSharedLockStateAndTheFairMutexPasses) {
  const Scope broken = make_scope(recipe("broken/shared-lock-state"), 2, 1, {});
  EXPECT_EQ(broken.scenario.workload.callers, 2u);
  Scope correct = make_scope(recipe("fair-mutex"), 2, 1, {});
  EXPECT_EQ(correct.scenario.workload.callers, 1u);
  correct.scenario.workload.callers = 2;
  properties::finish_scenario(&correct.scenario);
  const SearchResult passed =
      expect_caught_and_passed(broken, properties::Property::kLiveness, correct, 1);
  EXPECT_GT(passed.schedules, 100u);
}

// A variant only a long hold exposes gets a first client that holds for twice the session
// timeout in its scope: a TTL contender node is deleted under its holder (mutual exclusion),
// and a semaphore waiter asleep on the lease two ahead stays asleep while the lease behind it
// is left (liveness). The correct recipes pass the same long-hold scopes exhaustively; their
// own scopes keep the drawn holds.
TEST(Exhaustive, LongHoldsCatchTtlNodesAndWatchAheadAndTheCorrectRecipesPass) {
  const auto with_holds_of = [](const Scope& broken, const char* name) {
    Scope correct = make_scope(recipe(name), broken.scenario.workload.clients,
                               broken.scenario.workload.rounds, {});
    EXPECT_TRUE(correct.scenario.workload.client_holds.empty()) << name;
    correct.scenario.workload.client_holds = broken.scenario.workload.client_holds;
    properties::finish_scenario(&correct.scenario);
    return correct;
  };
  const Scope ttl = make_scope(recipe("broken/ttl-lock-nodes"), 2, 1, {});
  ASSERT_EQ(ttl.scenario.workload.client_holds.size(), 2u);
  EXPECT_EQ(ttl.scenario.workload.client_holds[0], ttl.scenario.session_timeout * 2);
  EXPECT_EQ(ttl.scenario.workload.client_holds[1], zk::Duration{});
  const SearchResult mutex_passed = expect_caught_and_passed(
      ttl, properties::Property::kMutualExclusion, with_holds_of(ttl, "fair-mutex"), 1);
  EXPECT_GT(mutex_passed.schedules, 10u);

  const Scope ahead = make_scope(recipe("broken/semaphore-watch-ahead"), 4, 2, {});
  const SearchResult semaphore_passed = expect_caught_and_passed(
      ahead, properties::Property::kLiveness, with_holds_of(ahead, "semaphore"), 1);
  EXPECT_GT(semaphore_passed.schedules, 10u);
}

// The recipe-level state-hash reduction prunes branch points and still finds sort-by-name's
// one-preemption counterexample.
TEST(Exhaustive, StateHashReductionStillFindsSortByName) {
  const Scope scope = make_scope(recipe("broken/sort-by-name"), 2, 1, {}, 1);
  ScopeProgram program(scope);
  ExhaustiveOptions o;
  o.preemption_bound = 2;
  o.reduction = Reduction::kStateHash;
  const SearchResult r = explore_exhaustive(program, o);
  ASSERT_TRUE(r.shortest.has_value());
  EXPECT_EQ(r.shortest->schedule.size(), 1u);
  EXPECT_GT(r.pruned, 0u);
}

// The same search twice gives the same counts and the same counterexample (no clock, no
// unordered iteration).
TEST(Exhaustive, IsDeterministic) {
  const Scope scope = make_scope(recipe("broken/sort-by-name"), 2, 1, {}, 3);
  ScopeProgram program(scope);
  ExhaustiveOptions o;
  o.preemption_bound = 1;
  o.reduction = Reduction::kStateHash;
  const SearchResult a = explore_exhaustive(program, o);
  const SearchResult b = explore_exhaustive(program, o);
  EXPECT_EQ(a.schedules, b.schedules);
  EXPECT_EQ(a.distinct_states, b.distinct_states);
  EXPECT_EQ(a.states_visited, b.states_visited);
  EXPECT_GT(a.states_visited, 0u);
  EXPECT_EQ(a.new_states_per_level, b.new_states_per_level);
  ASSERT_TRUE(a.shortest && b.shortest);
  EXPECT_EQ(a.shortest->decisions, b.shortest->decisions);
}

std::vector<sim::EventInfo> tasks(std::vector<uint32_t> ids) {
  std::vector<sim::EventInfo> out;
  for (uint32_t id : ids) {
    sim::EventInfo e;
    e.seq = out.size() + 1;
    e.task = id;
    out.push_back(e);
  }
  return out;
}

// PCT is a function of its seed, answers within range, and with depth 1 (no change point)
// always runs the same task's event, wherever that event stands in the candidate list.
TEST(Pct, PrefersTheSameTaskWhereverItStands) {
  PctOptions po;
  po.seed = 7;
  po.depth = 1;
  auto a = make_pct_strategy(po);
  auto b = make_pct_strategy(po);
  ASSERT_TRUE(a->observes_events());
  const std::vector<sim::EventInfo> forward = tasks({2, 3, 4, 5});
  const std::vector<sim::EventInfo> backward = tasks({5, 4, 3, 2});
  std::set<uint32_t> winners;
  for (uint32_t i = 0; i < 50; ++i) {
    const std::vector<sim::EventInfo>& c = i % 2 == 0 ? forward : backward;
    const uint32_t x = a->choose_event(c);
    EXPECT_EQ(x, b->choose_event(c));
    ASSERT_LT(x, c.size());
    winners.insert(c[x].task);
    EXPECT_LT(a->choose(ChoiceKind::kLatency, 4), 4u);
    b->choose(ChoiceKind::kLatency, 4);
  }
  EXPECT_EQ(winners.size(), 1u);
}

// Sleep sets' independence: events of two different clients commute unless both touch the
// ensemble, both run application code, one is a fault or one's owner is unknown.
TEST(SleepSets, DependenceIsConservative) {
  auto ev = [](uint32_t client, uint32_t footprint) {
    sim::EventInfo e;
    e.client = client;
    e.footprint = footprint;
    return e;
  };
  using sim::kRunsUserCode;
  using sim::kTouchesClient;
  using sim::kTouchesServer;
  using sim::kTouchesWorld;
  EXPECT_FALSE(dependent(ev(1, kTouchesClient), ev(2, kTouchesClient)));
  EXPECT_FALSE(dependent(ev(1, kTouchesClient | kRunsUserCode), ev(2, kTouchesServer)));
  EXPECT_TRUE(dependent(ev(1, kTouchesClient), ev(1, kTouchesClient)));
  EXPECT_TRUE(dependent(ev(1, kTouchesServer), ev(2, kTouchesClient | kTouchesServer)));
  EXPECT_TRUE(dependent(ev(1, kTouchesClient | kRunsUserCode), ev(2, kRunsUserCode)));
  EXPECT_TRUE(dependent(ev(1, kTouchesClient), ev(2, kTouchesWorld)));
  EXPECT_TRUE(dependent(ev(0, kTouchesServer), ev(2, kTouchesClient)));
}

// The scheduler tells an event-aware strategy who owns each event and what it touched: the
// connect timers open connections (shared ids: server state), request deliveries belong to the
// client that sent them (task 2c+1), and plain resumes of application code stay client-local.
TEST(SleepSets, SchedulerReportsOwnersTasksAndFootprints) {
  const Scope scope = make_scope(recipe("fair-mutex"), 2, 1, {});
  ScopeProgram program(scope);
  ScheduleStrategy s({});
  program.run(s, nullptr);
  uint32_t connects = 0;
  uint32_t deliveries = 0;
  uint32_t local_resumes = 0;
  for (const RanEvent& r : s.ran()) {
    const sim::EventInfo& e = r.info;
    const std::string tag = sim::event_tag_name(e.tag);
    if (tag == "client-timer" && e.seq <= 2) {
      ++connects;
      EXPECT_NE(e.footprint & sim::kTouchesServer, 0u) << e.seq;
    }
    if (tag == "to-server") {
      ++deliveries;
      EXPECT_GE(e.client, 1u);
      EXPECT_EQ(e.task, 2 * e.client + 1);
      EXPECT_EQ(e.footprint, sim::kTouchesServer);
    }
    if (tag == "resume") {
      EXPECT_EQ(e.task, 2 * e.client);
      if ((e.footprint & sim::kTouchesServer) == 0) ++local_resumes;
    }
  }
  EXPECT_EQ(connects, 2u);
  EXPECT_GT(deliveries, 4u);
  EXPECT_GT(local_resumes, 4u);
}

// An event-aware strategy (candidates and footprints) makes the same run as a plain one: the
// decisions replayed by the plain replay strategy give the same event log.
TEST(SleepSets, EventAwareRunsLogLikePlainOnes) {
  const Scope scope = make_scope(recipe("fair-mutex"), 2, 2, {});
  ScopeProgram program(scope);
  ScheduleStrategy aware({{5, 1}, {9, 1}});
  const RunReport a = program.run(aware, nullptr);
  ASSERT_FALSE(aware.candidates().empty());
  ASSERT_FALSE(aware.ran().empty());
  auto replay = sim::make_replay_strategy(a.decisions);
  ASSERT_FALSE(replay->observes_events());
  const RunReport b = program.run(*replay, nullptr);
  EXPECT_FALSE(replay->diverged()) << replay->divergence();
  EXPECT_EQ(a.log_hash, b.log_hash);
  EXPECT_EQ(a.final_state, b.final_state);
}

// Soundness on a small scope: the no-id-in-name variant with an ambiguous create, every event
// order at the default latencies. Sleep sets reach exactly the final states and the violated
// properties the unreduced search reaches, with fewer runs.
TEST(SleepSets, ReachTheSameStatesAndViolationsAsTheUnreducedSearch) {
  const Scope probe = make_scope(recipe("broken/no-id-in-name"), 2, 1, {});
  sim::Fault f;
  std::string error;
  ASSERT_TRUE(parse_fault_spec("lost-reply@0:c1", probe.scenario, &f, &error)) << error;
  const Scope scope = make_scope(recipe("broken/no-id-in-name"), 2, 1, {f});
  ScopeProgram program(scope);
  ExhaustiveOptions o;
  o.preemption_bound = 0;
  o.order_free = true;
  const SearchResult full = explore_exhaustive(program, o);
  o.reduction = Reduction::kSleepSets;
  const SearchResult reduced = explore_exhaustive(program, o);
  ASSERT_TRUE(full.complete);
  ASSERT_TRUE(reduced.complete);
  EXPECT_EQ(reduced.final_states, full.final_states);
  EXPECT_GE(full.final_states.size(), 2u);
  EXPECT_EQ(reduced.violated, full.violated);
  EXPECT_FALSE(full.violated.empty());
  EXPECT_LT(reduced.schedules * 2, full.schedules);
  EXPECT_GT(reduced.blocked, 0u);
  EXPECT_GT(reduced.stopped_early, 0u);
  EXPECT_EQ(reduced.unexplained_stops, 0u);
}

// A run given a sleeping event that is about to run stops there (nothing more is scheduled),
// and a run with nothing asleep runs to the end.
TEST(SleepSets, ARunStopsWhenASleepingEventRuns) {
  const Scope scope = make_scope(recipe("fair-mutex"), 2, 1, {});
  ScopeProgram program(scope);
  ScheduleStrategy whole({});
  whole.set_sleep({}, false);
  const RunReport full = program.run(whole, nullptr);
  EXPECT_FALSE(whole.stopped());
  // Put the first event that runs to sleep from the start: nothing can wake it before it runs,
  // so the run stops right after it.
  ASSERT_GT(whole.ran().size(), 20u);
  ScheduleStrategy cut({});
  cut.set_sleep({whole.ran()[0].info}, false);
  const RunReport part = program.run(cut, nullptr);
  EXPECT_TRUE(cut.stopped());
  EXPECT_LT(part.sim_events, full.sim_events / 10);
  EXPECT_EQ(cut.ran().size(), 1u);
}

// A broken variant's violation is still found with sleep sets on: reader-ignores-writers lets a
// reader in beside the writer in some event order.
TEST(SleepSets, StillFindReaderIgnoresWriters) {
  const Scope scope = make_scope(recipe("broken/reader-ignores-writers"), 2, 1, {});
  ScopeProgram program(scope);
  ExhaustiveOptions o;
  o.preemption_bound = 0;
  o.reduction = Reduction::kSleepSets;
  o.stop_at_first = true;
  const SearchResult r = explore_exhaustive(program, o);
  ASSERT_TRUE(r.shortest.has_value());
  EXPECT_EQ(r.shortest->verdict.property, properties::Property::kMutualExclusion);
  auto replay = sim::make_replay_strategy(r.shortest->decisions);
  const RunReport again = program.run(*replay, nullptr);
  EXPECT_FALSE(replay->diverged()) << replay->divergence();
  EXPECT_FALSE(again.violations.empty());
}

// The first choice point of `s`'s run after the events `a` and `b` (insertion numbers) ran one
// right after the other, in either order; -1 when they did not.
int64_t point_after_pair(const ScheduleStrategy& s, uint64_t a, uint64_t b) {
  const std::vector<RanEvent>& ran = s.ran();
  for (size_t k = 0; k + 1 < ran.size(); ++k) {
    const uint64_t x = ran[k].info.seq;
    const uint64_t y = ran[k + 1].info.seq;
    if ((x == a && y == b) || (x == b && y == a)) return ran[k + 1].points_before;
  }
  return -1;
}

// Two independent events of different clients (dependent() false, neither touching the
// ensemble) commute: running them in
// either order reaches one state (the world's digest and the recipes' states), so the pair counts
// once. Provoked at every such two-way choice of a fair-mutex run; it fails when the state hashes
// anything that differs between the orders (insertion numbers, coroutine addresses, the order of
// the events due) or misses the run's real state (then every state would be equal: checked below).
TEST(DistinctStates, CommutingEventsReachTheSameState) {
  const Scope scope = make_scope(recipe("fair-mutex"), 2, 1, {});
  ScopeProgram program(scope);
  ScheduleStrategy a({});
  const RunReport report = program.run(a, &a);
  std::map<uint64_t, sim::EventInfo> ran;  // as sleep sets see them after the run
  for (const RanEvent& e : a.ran()) ran[e.info.seq] = user_code_wrote(e.info, report);
  uint32_t pairs = 0;
  for (uint32_t i = 0; i < a.points().size() && pairs < 5; ++i) {
    const ChoicePoint& p = a.points()[i];
    if (p.kind != sim::ChoiceKind::kNextEvent || p.n != 2) continue;
    const sim::EventInfo& c0 = ran[a.candidates()[p.first_candidate].seq];
    const sim::EventInfo& c1 = ran[a.candidates()[p.first_candidate + 1].seq];
    if (dependent(c0, c1) || ((c0.footprint | c1.footprint) & sim::kTouchesServer) != 0) continue;
    ScheduleStrategy b({{i, 1}});
    program.run(b, &b);
    const int64_t ja = point_after_pair(a, c0.seq, c1.seq);
    const int64_t jb = point_after_pair(b, c0.seq, c1.seq);
    // Only pairs that ran back to back in both orders, with a choice point after them.
    if (ja < 0 || jb < 0 || static_cast<size_t>(ja) >= a.points().size() ||
        static_cast<size_t>(jb) >= b.points().size()) {
      continue;
    }
    EXPECT_EQ(a.points()[ja].state, b.points()[jb].state) << "choice " << i;
    EXPECT_NE(a.points()[i].state, a.points()[ja].state) << "the pair changed nothing";
    ++pairs;
  }
  EXPECT_GE(pairs, 1u);
}

// Events that do not commute (two clients' creates reaching the server in either order: the
// sequence numbers and zxids swap) reach two states; a scope with faults and preemptions meets
// many more states than one run has choice points, and several final states.
TEST(DistinctStates, RealDifferencesCountMoreThanOne) {
  const Scope probe = make_scope(recipe("fair-mutex"), 2, 2, {});
  sim::Fault f;
  std::string error;
  ASSERT_TRUE(parse_fault_spec("connection-loss@1:c1", probe.scenario, &f, &error)) << error;
  const Scope scope = make_scope(recipe("fair-mutex"), 2, 2, {f});
  ScopeProgram program(scope);
  ScheduleStrategy one({});
  program.run(one, &one);
  ExhaustiveOptions o;
  o.preemption_bound = 1;
  const SearchResult r = explore_exhaustive(program, o);
  ASSERT_TRUE(r.complete);
  EXPECT_GT(r.states_visited, one.points().size());
  EXPECT_GE(r.distinct_states, 2u);
  ASSERT_EQ(r.new_states_per_level.size(), 2u);
  EXPECT_GT(r.new_states_per_level[1], 0u);
  EXPECT_EQ(r.new_states_per_level[0] + r.new_states_per_level[1], r.states_visited);
  // Level 0 is the one default run: each of its choice points is a state of its own (time moves
  // or something changes between two choices).
  EXPECT_EQ(r.new_states_per_level[0], one.points().size());
  // Fewer than 1,000 runs: the recent window is the whole search.
  ASSERT_LT(r.schedules, SearchResult::kRecentRuns);
  EXPECT_EQ(r.new_states_recent, r.states_visited);
}

// The states the last 1,000 runs found are counted apart: in a search whose last level ran more
// than 1,000 schedules they are some of that level's new states, not all of them.
TEST(DistinctStates, CountsWhatTheLastThousandRunsFound) {
  const Scope scope = make_scope(recipe("fair-mutex"), 2, 1, {});
  ScopeProgram program(scope);
  ExhaustiveOptions o;
  o.preemption_bound = 2;
  const SearchResult r = explore_exhaustive(program, o);
  ASSERT_TRUE(r.complete);
  ASSERT_GT(r.schedules, 2 * SearchResult::kRecentRuns);
  EXPECT_GT(r.new_states_recent, 0u);
  EXPECT_LT(r.new_states_recent, r.new_states_per_level[2]);
}

// Hashing the state at every choice point only reads the world: the run logs the same events.
TEST(DistinctStates, HashingDoesNotChangeTheRun) {
  const Scope scope = make_scope(recipe("fair-mutex"), 2, 2, {});
  ScopeProgram program(scope);
  ScheduleStrategy hashed({{5, 1}});
  ScheduleStrategy plain({{5, 1}});
  const RunReport a = program.run(hashed, &hashed);
  const RunReport b = program.run(plain, nullptr);
  EXPECT_EQ(a.log_hash, b.log_hash);
  EXPECT_NE(hashed.points().back().state, 0u);
  EXPECT_EQ(plain.points().back().state, 0u);
}

// Sampling counts states too: a random run recorded through StateRecorder makes the same run as
// without it, and the same sample twice gives the same counts, many states beyond one run's.
TEST(DistinctStates, SamplingCountsStatesWithoutChangingRuns) {
  const Scope scope = make_scope(recipe("fair-mutex"), 2, 1, {});
  ScopeProgram program(scope);
  auto plain = sim::make_random_strategy(5);
  auto inner = sim::make_random_strategy(5);
  StateRecorder recorded(inner.get());
  const RunReport a = program.run(*plain, nullptr);
  const RunReport b = program.run(recorded, &recorded);
  EXPECT_EQ(a.log_hash, b.log_hash);
  EXPECT_EQ(recorded.states().size(), b.decisions.size());
  SampleOptions o;
  o.runs = 50;
  const SearchResult x = explore_random(program, o);
  const SearchResult y = explore_random(program, o);
  EXPECT_EQ(x.states_visited, y.states_visited);
  EXPECT_EQ(x.new_states_recent, x.states_visited);  // 50 runs: all recent
  EXPECT_GT(x.states_visited, recorded.states().size());
}

// PCT finds broken/sort-by-name's violation (which needs c2's create to reach the server first)
// within a small number of runs.
TEST(Pct, FindsABrokenVariant) {
  const Scope scope = make_scope(recipe("broken/sort-by-name"), 2, 1, {}, 1);
  ScopeProgram program(scope);
  SampleOptions o;
  o.runs = 200;
  o.stop_at_first = true;
  o.pct_depth = 2;
  const SearchResult r = explore_pct(program, o);
  ASSERT_TRUE(r.shortest.has_value());
  // Two holders: the server's queue shows it at the grant, the beliefs at once after.
  const properties::Property p = r.shortest->verdict.property;
  EXPECT_TRUE(p == properties::Property::kServerExclusion ||
              p == properties::Property::kMutualExclusion)
      << properties::to_string(p);
  EXPECT_LE(r.schedules, 200u);
}

}  // namespace
}  // namespace lockstep::explore
