// `lockstep check`: the flags, the one table printer, the one JSON schema and the exit codes of
// the check engine (properties/check.h) on either backend — the simulator (the main job) or,
// with --real / --ensemble, Debian's ZooKeeper server, which the command starts on 127.0.0.1
// and stops by process id (properties/real_backend.h).
//
// The table and the JSON are cli/check_report.h's, which `lockstep merge` prints too.
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
// The JSON (--json), the same schema on both backends and for `lockstep merge` (cli/README.md
// lists every key): {ok, exit_code, backend, server, first_seed, last_seed (the seeds this run
// covers: its shard's block when sharded), options {recipes, seed, first_seed, seeds, faults,
// jobs, shard, save_traces, shrink_traces, trace_dir}, reproduce (the command that runs it
// again), interrupted, interrupted_by, seconds, cpu_seconds, seeds_per_second,
// seeds_per_cpu_second, results: [{recipe, expected, verdict (pass | violated | not-provokable |
// error), as_expected, expected_violation, properties {name: pass | violated | not-judged |
// not-claimed}, violations [{property, kind (caught | also | violated), seed, message,
// reproduce, trace}], judged {name: seeds}, demonstrations, seed, reproduce, first_seed,
// last_seed, seeds_run, requests, complete, trace, not_provokable_reason, error}]}; fields a
// backend has no value for are null (server on the simulator, trace on a real server).
//
// Shards (--shard I/N, or JOB_COMPLETION_INDEX with LOCKSTEP_SHARDS): the run covers the I-th of
// N contiguous blocks of the sweep (cli/check_report.h); `lockstep merge` (cli/cmd_merge.cc)
// combines the shards' reports into the single run's. Simulator only, not with --seed, and at
// least one seed per shard.
//
// JUnit (--junit FILE, written atomically): one <testsuite> per recipe, one <testcase
// classname=RECIPE name=PROPERTY> per property. A correct recipe's violation is a <failure>
// (message, seed, reproduce command, trace); a broken variant's expected property is a <failure>
// when the complete run never violated it, and its violations are passes with the catch in
// <system-out>; a harness error is an <error> on each property not violated; unclaimed, not
// judged, not provokable and (interrupted) unfinished properties are <skipped>.
//
// Exit codes (cli/cli.h): 0 every recipe as expected (a variant a real server cannot provoke
// does not fail the run), 1 a correct recipe failed, a broken variant was not caught or the
// real harness failed, 2 usage error (also a trace directory or --junit file that cannot be
// written), 3 no server can be started (--real / --ensemble), 130 interrupted (the verdicts then
// cover, per recipe, the seeds fully run, and the command to go on is printed).
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
