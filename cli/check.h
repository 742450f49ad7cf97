// `lockstep check`: the flags, the one table printer, the one JSON schema and the exit codes of
// the check engine (properties/check.h) on either backend — the simulator (the main job) or,
// with --real / --ensemble, Debian's ZooKeeper server, which the command starts on 127.0.0.1
// and stops by process id (properties/real_backend.h).
//
// The table: one row per recipe (recipe, expected, one column per property: pass, - for claimed
// but not judged, unclaimed for a property the recipe's registration does not claim, or
// "seed S" for the first violating seed; the seeds run; the result: ok, caught,
// FAILED, NOT CAUGHT, stopped, ERROR, not provokable), then one line per violation with the
// command that reproduces it (`./lockstep check [--real|--ensemble] --recipe NAME --seed S
// [--faults LIST]`: a seed's scenario depends on the backend, the recipe, the seed and the
// fault restriction, nothing else) and, on the simulator, the saved trace with its replay and
// show commands.
//
// The JSON (--json), the same schema on both backends: {backend, server, first_seed, last_seed,
// interrupted, seconds, seeds_per_second, seeds_per_cpu_second, results: [{recipe, expected,
// verdict (pass | violated | not-provokable | error), as_expected, expected_violation,
// properties {name: pass | violated | not-judged | not-claimed}, seed, reproduce, first_seed,
// last_seed, seeds_run, complete, trace, not_provokable_reason, error}]}; fields a backend has
// no value for are null (server on the simulator, trace on a real server).
//
// Exit codes (cli/cli.h): 0 every recipe as expected (a variant a real server cannot provoke
// does not fail the run), 1 a correct recipe failed, a broken variant was not caught or the
// real harness failed, 2 usage error (also a trace directory that cannot be created), 3 no
// server can be started (--real / --ensemble), 130 interrupted (the verdicts then cover, per
// recipe, the seeds fully run, and the command to go on is printed).
#pragma once

#include <iosfwd>

#include "cli/cli.h"
#include "properties/check.h"

namespace lockstep::cli {

// Runs `lockstep check` with parsed `args`. `interactive`: draw a progress line on `err`.
// `save_trace`: how failing seeds become trace files (nullptr: none are saved).
// `program`: how the printed commands call the tool (Io::program).
int run_check(const Args& args, std::ostream& out, std::ostream& err, bool interactive,
              const properties::TraceSaver& save_trace, const char* program = "./lockstep");

}  // namespace lockstep::cli
