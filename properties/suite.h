// lockstep properties: the property suite — one recipe, one scenario, every property that
// applies, judged by the checkers.
//
// run_seed() is the unit `lockstep check` and the RapidCheck properties are made of: derive (or
// take) a scenario, run it in the simulator, and judge every property the recipe's claims make
// applicable under the scenario's faults (properties/claims.h). Deterministic: the same recipe
// and scenario give the same verdicts and the same event-log hash.
#pragma once

#include <cstdint>
#include <set>
#include <vector>

#include "properties/checkers.h"
#include "properties/claims.h"
#include "properties/scenario.h"
#include "recipes/registry.h"

namespace lockstep::properties {

struct SeedOutcome {
  Scenario scenario;
  RunResult run;
  std::vector<Verdict> verdicts;  // one per judged property, in Property order

  // The first violated verdict, or nullptr.
  const Verdict* first_violation() const;
  // The verdict of `p`, or nullptr when it was not judged.
  const Verdict* verdict(Property p) const;
};

// Judges every property in `claims` that applies to `s`, on a finished run.
std::vector<Verdict> judge(const recipes::RecipeInfo& recipe, const Claims& claims,
                           const Scenario& s, const RunResult& run);

// Runs one scenario and judges it.
// `keep`: what the outcome's run keeps beyond what was judged (run_in_sim; by default nothing).
SeedOutcome run_scenario(const recipes::RecipeInfo& recipe, const Claims& claims, Scenario s,
                         Keep keep = Keep::kVerdicts);

// Derives the scenario of `seed` for this recipe (faults restricted to `allowed` when not
// empty), runs it and judges it.
SeedOutcome run_seed(const recipes::RecipeInfo& recipe, const Claims& claims, uint64_t seed,
                     const std::set<sim::FaultKind>& allowed = {}, Keep keep = Keep::kVerdicts);

// A readable report of one outcome: the scenario, each verdict, and for a violation the
// history events it names with a little context.
std::string report(const recipes::RecipeInfo& recipe, const SeedOutcome& o);

}  // namespace lockstep::properties
