// Seeds at which a correct recipe once failed, each triaged (issue "Trustworthy verdicts"): the
// recipe now passes every property it claims there. The manifest says what the cause was and
// where each kind of cause is pinned.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "properties/claims.h"
#include "properties/suite.h"
#include "recipes/registry.h"
#include "traces/corpus.h"

namespace lockstep::properties {
namespace {

// The one list of triaged seeds is the corpus manifest traces/corpus/triaged/SEEDS
// (traces/corpus.h); `lockstep corpus` records each as a trace that traces_test replays.
// Simulator infidelities are pinned in sim/session_fidelity_test.cc, checker errors here and in
// properties/checkers_test.cc, recipe bugs in tests/recipes/ and by a broken variant.
using traces::TriagedSeed;
const std::string kManifest = std::string(LOCKSTEP_SOURCE_DIR) + "/traces/corpus/" +
                              traces::kTriagedDir + "/" + traces::kTriagedManifest;

std::vector<TriagedSeed> triaged_seeds() {
  return traces::load_triaged_seeds(kManifest, nullptr).value_or(std::vector<TriagedSeed>{});
}

// The manifest parses (every recipe known and correct, no row twice) and lists the seeds of the
// issue, so an unreadable or emptied manifest cannot pass as "no triaged seeds".
TEST(TriagedManifest, ParsesAndListsTheTriagedSeeds) {
  std::string why;
  const std::optional<std::vector<TriagedSeed>> rows = traces::load_triaged_seeds(kManifest, &why);
  ASSERT_TRUE(rows.has_value()) << why;
  EXPECT_GE(rows->size(), 14u) << kManifest;
}

class TriagedSeedTest : public ::testing::TestWithParam<TriagedSeed> {};

// The recipe passes every property it claims at the seed that once failed.
TEST_P(TriagedSeedTest, PassesEveryClaimedProperty) {
  const TriagedSeed& t = GetParam();
  const recipes::RecipeInfo* recipe = recipes::find_recipe(t.recipe);
  ASSERT_NE(recipe, nullptr) << t.recipe;
  // The scenario the seed failed in (TriagedSeed::draw_era).
  const Claims claims = claims_for(*recipe);
  GenerateOptions go = generate_options(*recipe, claims, {});
  go.draw_era = t.draw_era;
  const SeedOutcome o = run_scenario(*recipe, claims, generate_scenario(t.seed, go));
  const Verdict* v = o.first_violation();
  EXPECT_EQ(v, nullptr) << t.recipe << " seed " << t.seed << " (" << t.cause
                        << "): " << (v != nullptr ? v->message : "");
  EXPECT_FALSE(o.verdicts.empty());
}

INSTANTIATE_TEST_SUITE_P(Triaged, TriagedSeedTest, ::testing::ValuesIn(triaged_seeds()),
                         [](const ::testing::TestParamInfo<TriagedSeed>& info) {
                           return traces::triaged_id(info.param);
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
