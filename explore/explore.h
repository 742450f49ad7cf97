// lockstep explore: the `lockstep explore` command, as a library function the CLI dispatches to.
//
//   lockstep explore --recipe NAME [--clients N] [--rounds N] [--faults LIST] [--bound K]
//                    [--strategy exhaustive|pct|random] [--runs N] [--pct-depth D]
//                    [--depth-bound N] [--reduction none|sleep-sets] [--prune-states]
//                    [--order-free] [--kinds LIST]
//                    [--seed N] [--stop-at-first] [--property P] [--save-dir DIR] [--no-save]
//
// It builds a small scope (explore/search.h make_scope), explores it with the chosen strategy,
// and reports the schedules explored, the distinct states met, the elapsed wall time, the
// coverage marks hit, and one of: "no violation in this scope" (only when the search exhausted
// the scope), "INCOMPLETE" (no violation in what was run, but it stopped before the scope was
// exhausted: what it covered and why it stopped), or the shortest counterexample found, which it
// saves as a trace (traces/ format) that `lockstep replay` and `lockstep show` accept. Exit
// codes: 0 the scope was exhausted with no violation, 1 a violation was found, 2 a usage error
// (bad flag or value, unknown recipe or fault kind; the message says how to fix it), 4
// incomplete (the --runs limit or the schedule queue was reached, sampling with pct or random,
// or the unsound --prune-states).
//
// The wall clock is read here, for the report only; the search itself is deterministic.
#pragma once

#include <iosfwd>

namespace lockstep::explore {

// argv[0] is the command's name ("explore"); the flags follow.
int explore_main(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace lockstep::explore
