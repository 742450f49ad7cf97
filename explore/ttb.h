// lockstep explore: the time-to-bug table — for every deliberately broken variant in the
// registry, how many runs and how much wall time each search strategy needs until the variant's
// first violation, and the size of the shortest counterexample found.
//
//   random      `lockstep check`'s search: run i derives a scenario from seed i
//               (properties::generate_scenario, the variant's focus faults) and runs it with the
//               seeded random strategy;
//   pct         the same scenarios, scheduled by PCT with depth 3 (explore/strategies.h);
//   exhaustive  one small fixed scope per variant (explore/search.h make_scope; the variant's
//               focus faults at the workload's start), exhaustive with preemption bounding.
// Random and PCT are repeated for --trials trials from different seed bases; the table gives the
// median over trials of runs and of wall milliseconds to the first violation ("-" when a trial
// found nothing within --budget runs). Exhaustive is deterministic: one trial.
//
// The wall clock is read here, for the table only. Exit: 0 when every variant was found by at
// least one strategy, 1 otherwise, 2 on a usage error.
#pragma once

#include <iosfwd>

namespace lockstep::explore {

// Flags: [--trials T] [--budget N] [--bound K] [--recipe NAME]
int ttb_main(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace lockstep::explore
