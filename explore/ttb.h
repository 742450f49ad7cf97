// lockstep explore: the time-to-bug table — for every deliberately broken variant in the
// registry, how many runs and how much wall time each search strategy needs until the variant's
// first violation, and the size of the shortest counterexample found.
//
//   check: random   `lockstep check`'s search: run i derives a scenario from seed base+i
//                   (properties::generate_scenario, the variant's focus faults) and runs it with
//                   the seeded random strategy;
//   check: pct-d3   the same scenarios, scheduled by PCT with depth 3 (explore/strategies.h);
//   scope: random / pct-d3
//                   one small fixed scope per variant (explore/search.h make_scope; its focus
//                   faults at 0..9 ms after the workload's start, run i using offset i mod 10):
//                   only the schedule varies;
//   scope: exhaustive
//                   the same scopes, exhaustive with iterative preemption bounding (every
//                   offset at bound 0, then at bound 1, ...);
//   scope: sleep sets
//                   the same scopes, exhaustive with sleep sets: the bound counts data choices
//                   only and every event order is explored (explore/search.h).
// The sampled strategies are repeated for --trials trials from different seed bases; the table
// gives the median over trials of runs and of wall milliseconds to the first violation of the
// variant's must-violate property ("-" when no trial found it within --budget runs), and in
// brackets how many trials found it. Exhaustive is deterministic: one trial.
//
// The wall clock is read here, for the table only. Exit: 0 when every variant was found by at
// least one strategy, 1 otherwise, 2 on a usage error.
#pragma once

#include <iosfwd>

namespace lockstep::explore {

// Flags: [--trials T] [--budget N] [--bound K] [--recipe NAME]
int ttb_main(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace lockstep::explore
