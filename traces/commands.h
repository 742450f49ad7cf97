// lockstep traces: the trace subcommands as library functions, for the CLI (cli/) to dispatch to
// and for tests to call directly. argv[0] is the subcommand's own name and is skipped; output
// goes to `out`, diagnostics to `err`. Exit statuses are traces/trace.h's kExit* (FORMAT.md).
//
//   replay FILE [--allow-changed]
//       Re-runs the recorded decisions and compares the run with the recording, strictly: the run
//       stops at the first event-log line that differs; prints the verdict. 0 reproduced exactly,
//       3 diverged (names the first divergent event: index, time, client, expected line, actual
//       line), 2 bad input, 4 the recipe changed since recording (--allow-changed replays anyway
//       and then reports 0 or 3).
//   recheck FILE...
//       Runs each trace's scenario and seed against the current code with the seeded random
//       strategy and prints the verdict now. 0 every trace passes now, 1 at least one still
//       fails, 2 at least one file is bad input (it is reported and the others still run).
//   show FILE [--html OUT] [--lane-width N] [--context N]
//       Prints the timeline (with --context only the rows within N rows of the violation); with
//       --html also writes the swim-lane page to OUT atomically.
//       0 shown, 2 bad input (OUT is then not touched).
//   corpus [--dir DIR] [--seeds N] [--recipe NAME]...
//       (Re)generates the regression corpus: for each broken variant (or each NAME), the first
//       seed in 1..N that violates the property the variant must be caught by (any property when
//       none is declared) is recorded and saved as DIR/<recipe>.json (default traces/corpus,
//       N = 200); and each triaged seed of DIR/triaged/SEEDS (traces/corpus.h; with --recipe,
//       those of the NAMEs) is recorded as it runs today and saved as
//       DIR/triaged/<recipe>-seed<S>.json. 0 every trace saved, 1 some variant was not caught,
//       some triaged seed violates a property now (not saved) or a trace file in DIR/triaged is
//       not in SEEDS, 2 usage error or a bad SEEDS (nothing is run).
//
// Deterministic apart from file I/O; single-threaded.
#pragma once

#include <iosfwd>

namespace lockstep::traces {

int replay_main(int argc, char** argv, std::ostream& out, std::ostream& err);
int recheck_main(int argc, char** argv, std::ostream& out, std::ostream& err);
int show_main(int argc, char** argv, std::ostream& out, std::ostream& err);
int corpus_main(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace lockstep::traces
