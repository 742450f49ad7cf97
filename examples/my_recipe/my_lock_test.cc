// A user's own test: the lockstep property suite, run on the user's recipe in the simulator.
#include "my_lock.h"

#include <gtest/gtest.h>

#include "properties/check.h"
#include "properties/checkers.h"

namespace {

using lockstep::properties::CheckOptions;
using lockstep::properties::kPropertyCount;
using lockstep::properties::Property;
using lockstep::sim::FaultKind;

// MyExclusiveLock keeps mutual exclusion, fenced safety, liveness, no orphans, re-entrancy and
// timeout cleanup over 100 generated scenarios with connection loss, lost replies, server-side
// expiry, pauses, crashes, partitions and delays.
TEST(MyExclusiveLock, PassesTheLockstepPropertySuite) {
  const lockstep::recipes::RecipeInfo info = example::my_exclusive_info();
  CheckOptions o;
  o.seeds = 100;
  o.faults = {FaultKind::kConnectionLoss, FaultKind::kLoseNextReply, FaultKind::kExpireSession,
              FaultKind::kPause,          FaultKind::kCrash,         FaultKind::kPartition,
              FaultKind::kDelay};
  const lockstep::properties::RecipeResult r = lockstep::properties::check_recipe(info, o, nullptr);
  EXPECT_EQ(r.seeds_run, 100u);
  for (int i = 0; i < kPropertyCount; ++i) {
    const auto& p = r.properties[i];
    EXPECT_FALSE(p.seed.has_value()) << to_string(static_cast<Property>(i)) << " violated at seed "
                                     << p.seed.value_or(0) << ": " << p.message;
  }
  EXPECT_GT(r.properties[static_cast<int>(Property::kMutualExclusion)].judged, 0u);
  EXPECT_TRUE(r.as_expected());
}

}  // namespace
