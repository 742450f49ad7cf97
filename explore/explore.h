// lockstep explore: the `lockstep explore` command, as a library function the CLI dispatches to.
//
//   lockstep explore --recipe NAME [--clients N] [--rounds N] [--faults LIST] [--bound K]
//                    [--strategy exhaustive|pct|random] [--runs N] [--pct-depth D]
//                    [--depth-bound N] [--reduction none|state-hash] [--kinds LIST]
//                    [--seed N] [--stop-at-first] [--property P] [--save-dir DIR] [--no-save]
//
// It builds a small scope (explore/search.h make_scope), explores it with the chosen strategy,
// and reports the schedules explored, the distinct states met, the elapsed wall time, the
// coverage marks hit, and either "no violation in this scope" or the shortest counterexample
// found, which it saves as a trace (traces/ format) that `lockstep replay` and `lockstep show`
// accept. Exit codes: 0 no violation, 1 a violation was found, 2 a usage error (bad flag or
// value, unknown recipe or fault kind; the message says how to fix it).
//
// The wall clock is read here, for the report only; the search itself is deterministic.
#pragma once

#include <iosfwd>

namespace lockstep::explore {

// argv[0] is the command's name ("explore"); the flags follow.
int explore_main(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace lockstep::explore
