// The CI soak window: every correct recipe of the registry passes a fixed window of seeds with
// its default faults (issue "Trustworthy verdicts"). A false alarm that a fix brings back fails
// `./lockstep test` here, at the same seeds every time, with the command that reproduces it.
//
// The window is kSoakSeeds seeds per correct recipe (seeds 1..kSoakSeeds), split over two
// worker processes; LOCKSTEP_SOAK_SEEDS overrides the count (e.g. 1000000 for a release soak).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "properties/check.h"
#include "recipes/registry.h"

namespace lockstep::properties {
namespace {

constexpr uint64_t kSoakSeeds = 50000;

uint64_t soak_seeds() {
  const char* env = std::getenv("LOCKSTEP_SOAK_SEEDS");
  if (env == nullptr || *env == '\0') return kSoakSeeds;
  return std::strtoull(env, nullptr, 10);
}

// Every correct recipe passes every property it claims in each of the window's seeds, with the
// default fault mix (any violation prints the property, the message and the reproduce command,
// and fails).
TEST(Soak, EveryCorrectRecipePassesTheFixedSeedWindow) {
  CheckOptions o;
  o.seeds = soak_seeds();
  o.first_seed = 1;
  o.jobs = 2;
  std::vector<const recipes::RecipeInfo*> todo;
  for (const recipes::RecipeInfo& r : recipes::registry()) {
    if (r.expected == recipes::Expected::kCorrect) todo.push_back(&r);
  }
  ASSERT_GE(todo.size(), 7u);
  const HostRun run = check_recipes_forked(todo, o, nullptr);
  ASSERT_EQ(run.interrupted, nullptr);
  ASSERT_EQ(run.results.size(), todo.size());
  for (const RecipeResult& r : run.results) {
    EXPECT_EQ(r.seeds_run, o.seeds) << r.recipe;
    std::printf("%-16s %llu seeds: %s\n", r.recipe.c_str(),
                static_cast<unsigned long long>(r.seeds_run), r.as_expected() ? "pass" : "FAILED");
    for (int i = 0; i < kPropertyCount; ++i) {
      const PropertyResult& p = r.properties[i];
      EXPECT_FALSE(p.seed.has_value())
          << r.recipe << " " << to_string(static_cast<Property>(i)) << " at seed "
          << p.seed.value_or(0) << ": " << p.message
          << "\n  reproduce: ./lockstep check --recipe " << r.recipe << " --seed "
          << p.seed.value_or(0);
    }
  }
}

}  // namespace
}  // namespace lockstep::properties
