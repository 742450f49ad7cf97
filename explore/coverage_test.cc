// Tests of the lock-scenario coverage marks: derivation from hand-made histories and counters,
// and the CI budget check that every mark not declared rare is hit.
#include "explore/coverage.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <map>
#include <string>

#include "explore/search.h"
#include "properties/claims.h"
#include "properties/scenario.h"
#include "recipes/registry.h"

namespace lockstep::explore {
namespace {

using properties::Event;
using properties::Op;
using properties::Type;

Event ev(uint32_t client, Type type, Op op) {
  Event e;
  e.client = client;
  e.type = type;
  e.op = op;
  return e;
}

bool has(const MarkSet& m, Mark k) { return m[static_cast<size_t>(k)]; }

// A grant past the signed wrap, an acquire started while another client held, and a lost-lock
// notification are read from the history; the counters give the ambiguous create it recovered.
TEST(Coverage, MarksFromHistoryAndCounters) {
  properties::History h;
  Event g = ev(1, Type::kOk, Op::kAcquire);
  g.hold_count = 1;
  g.text = "/lockstep/lock/_c_c1-1x00-lock--2147483648";
  h.add(ev(1, Type::kInvoke, Op::kAcquire));
  h.add(g);
  h.add(ev(2, Type::kInvoke, Op::kAcquire));
  Event lost = ev(1, Type::kInfo, Op::kLost);
  lost.state = recipes::LockState::kLost;
  h.add(lost);
  std::map<uint32_t, recipes::RecipeStats> stats;
  stats[1].ambiguous_creates = 1;
  stats[2].predecessor_gone = 1;
  const MarkSet m = mark_run(h, stats, {});
  EXPECT_TRUE(has(m, Mark::kWrapCrossed));
  EXPECT_TRUE(has(m, Mark::kContendedAcquire));
  EXPECT_TRUE(has(m, Mark::kExpiryWhileHolding));
  EXPECT_TRUE(has(m, Mark::kAmbiguousCreate));
  EXPECT_TRUE(has(m, Mark::kAmbiguousCreateRecovered));  // client 1 was granted
  EXPECT_TRUE(has(m, Mark::kPredecessorGoneBeforeWatch));
  EXPECT_FALSE(has(m, Mark::kSuspendedWhileHolding));
  EXPECT_FALSE(has(m, Mark::kTimeoutCleanup));
}

// A quiet history hits nothing; a timed-out acquire with a cleanup counts as timeout cleanup.
TEST(Coverage, TimeoutCleanupNeedsBothTheFailureAndTheCleanup) {
  properties::History h;
  EXPECT_EQ(Coverage().missing().size(), static_cast<size_t>(kMarkCount));
  Event fail = ev(2, Type::kFail, Op::kAcquire);
  fail.error = zk::Error::kOperationTimeout;
  h.add(fail);
  std::map<uint32_t, recipes::RecipeStats> stats;
  EXPECT_FALSE(has(mark_run(h, stats, {}), Mark::kTimeoutCleanup));
  stats[2].cleanups = 1;
  EXPECT_TRUE(has(mark_run(h, stats, {}), Mark::kTimeoutCleanup));
}

// The CI seed budget (LOCKSTEP_COVERAGE_SEEDS per correct recipe, default 40) of
// `lockstep check`-style runs — generated scenarios with every fault kind, seeded random
// schedules — hits every mark that is not declared rare. (Verdicts are the property suites'
// business, not judged here.)
TEST(Coverage, CiBudgetHitsEveryMarkNotDeclaredRare) {
  uint64_t seeds = 40;
  if (const char* env = std::getenv("LOCKSTEP_COVERAGE_SEEDS"))
    seeds = std::strtoull(env, nullptr, 10);
  Coverage total;
  for (const recipes::RecipeInfo& r : recipes::registry()) {
    if (r.expected != recipes::Expected::kCorrect) continue;
    const properties::Claims claims = properties::claims_for(r);
    const properties::GenerateOptions go = properties::generate_options(r, claims, {});
    for (uint64_t seed = 1; seed <= seeds; ++seed) {
      const Scope scope{&r, claims, properties::generate_scenario(seed, go)};
      ScopeProgram program(scope);
      auto strategy = sim::make_random_strategy(seed);
      const RunReport rep = program.run(*strategy, nullptr);
      total.add(rep.marks);
    }
  }
  for (Mark m : total.missing()) {
    EXPECT_TRUE(is_rare(m)) << "mark " << to_string(m) << " was never hit by " << total.runs()
                            << " runs; coverage:\n"
                            << total.summary();
  }
  std::cout << "coverage over " << total.runs() << " runs:\n" << total.summary();
}

}  // namespace
}  // namespace lockstep::explore
