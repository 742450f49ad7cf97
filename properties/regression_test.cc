// Seeds at which a correct recipe once failed, each triaged (issue "Trustworthy verdicts"): the
// recipe now passes every property it claims there. The table says what the cause was; the
// simulator-level and checker-level pins are named beside each row.
#include <gtest/gtest.h>

#include <string>

#include "properties/claims.h"
#include "properties/suite.h"
#include "recipes/registry.h"

namespace lockstep::properties {
namespace {

struct TriagedSeed {
  const char* recipe;
  uint64_t seed;
  const char* cause;
};

// Simulator infidelities are pinned in sim/session_fidelity_test.cc, checker errors here and in
// properties/checkers_test.cc, recipe bugs in tests/recipes/ and by a broken variant.
const TriagedSeed kTriaged[] = {
    {"fair-mutex", 376732, "sim: a session created while its client was paused never expired"},
    {"election", 376732, "sim: a session created while its client was paused never expired"},
    {"naive-mutex", 98964, "sim: a session created while its client was paused never expired"},
    {"semaphore", 29625, "sim: a session created while its client was paused never expired"},
    {"read-write", 369107, "sim: a session created while its client was paused never expired"},
    {"fair-mutex", 83118, "sim herd instrument: a redelivered notification counted as a waiter"},
    {"exclusive", 2888, "checker: FIFO's bounded wait applied to an unfair lock"},
    {"exclusive", 1142, "recipe: release re-checked its node on a lagging follower unsynced"},
    {"exclusive", 9212, "recipe: an ambiguous create re-checked on a lagging follower unsynced"},
    {"exclusive", 52494, "recipe: an ambiguous create re-checked on a lagging follower unsynced"},
    {"exclusive", 182560, "recipe: an ambiguous create re-checked on a lagging follower unsynced"},
    {"semaphore-gated", 10578, "recipe: a lease lost while the gate was released was granted"},
    {"semaphore-gated", 19544, "checker: a served queue ahead reported as a lost wake-up"},
    {"semaphore-gated", 203740, "sim: a session created while its client was paused never expired"},
};

class TriagedSeedTest : public ::testing::TestWithParam<TriagedSeed> {};

// The recipe passes every property it claims at the seed that once failed.
TEST_P(TriagedSeedTest, PassesEveryClaimedProperty) {
  const TriagedSeed& t = GetParam();
  const recipes::RecipeInfo* recipe = recipes::find_recipe(t.recipe);
  ASSERT_NE(recipe, nullptr) << t.recipe;
  const SeedOutcome o = run_seed(*recipe, claims_for(*recipe), t.seed, {});
  const Verdict* v = o.first_violation();
  EXPECT_EQ(v, nullptr) << t.recipe << " seed " << t.seed << " (" << t.cause
                        << "): " << (v != nullptr ? v->message : "");
  EXPECT_FALSE(o.verdicts.empty());
}

INSTANTIATE_TEST_SUITE_P(Triaged, TriagedSeedTest, ::testing::ValuesIn(kTriaged),
                         [](const ::testing::TestParamInfo<TriagedSeed>& info) {
                           std::string name;
                           for (const char* c = info.param.recipe; *c != '\0'; ++c) {
                             name += std::isalnum(static_cast<unsigned char>(*c)) ? *c : '_';
                           }
                           return name + "_" + std::to_string(info.param.seed);
                         });

// A recipe that promises FIFO is bounded by one pass of every other client; one that does not
// (an unfair lock) may be passed by every other client's every round, and its bound covers that.
TEST(LivenessBound, UnfairLocksMayBePassedByTheWholeWorkload) {
  Scenario s;
  s.workload.clients = 5;
  s.workload.rounds = 7;
  s.workload.hold_max = zk::milliseconds(10);
  s.workload.think_max = zk::milliseconds(2);
  s.workload.long_hold_percent = 0;
  finish_scenario(&s);
  EXPECT_EQ(liveness_bound_for(s, true), s.liveness_bound);
  const zk::Duration per_grant = zk::milliseconds(10 + 2 + 30);
  EXPECT_EQ(liveness_bound_for(s, false), s.session_timeout * 3 + per_grant * (5 * 7));
  EXPECT_GT(liveness_bound_for(s, false), s.liveness_bound);
}

}  // namespace
}  // namespace lockstep::properties
