// lockstep properties: the `lockstep check` engine.
//
// check_main() runs every recipe and broken variant of the registry (or those named with
// --recipe) through the property suite in the simulator, seed after seed, and prints a table
// (recipe x property: pass, not judged, or the first violating seed), or with --json one object
// {results: [...], seeds_per_second}. A correct recipe must pass every property it claims; a
// broken variant must be caught by the property properties/claims.h expects of it (the search
// for a broken variant stops at the first seed that catches it). Every violation prints the
// command that reproduces it: `./lockstep check --recipe NAME --seed S`, followed by
// `--faults LIST` when the run had one (a seed's scenario depends on the recipe, the seed and
// the fault restriction, nothing else), which prints the scenario, the verdicts and the history
// around the violation. --json carries that command as each result's `reproduce`.
//
// Failure traces: when the caller installs a TraceSaver (the CLI does, cli/cmd_check.cc; this
// library cannot link traces/, which depends on it), every distinct failing seed of every recipe
// (each first violating seed of a correct recipe, the catching seed of a broken variant) is saved
// as a trace under --trace-dir (default traces/failures, relative to the working directory)
// after all recipes ran, in the parent process and in `todo` order, so --jobs changes nothing.
// The saved trace is the minimal one: the seed's scenario shrunk (fewer faults, clients, rounds,
// workload options) as long as the same property stays violated (--no-shrink saves the seed's
// scenario as run). The saver names each file by recipe, seed and event-log hash, writes it
// atomically and never replaces a different file. The table output prints each path with its
// `./lockstep replay` and
// `./lockstep show` commands; --json puts the path of the result's first failing seed in
// `trace`. A trace directory that cannot be created is a usage error found before any seed runs.
//
// Flags: --recipe NAME (repeatable), --seeds N (default 100), --first-seed S (default 1: the
// seeds run are S..S+N-1), --seed S (just that seed), --faults LIST (comma-separated fault names,
// see scenario.h; restricts every recipe's fault plans), --jobs N (N forked worker processes;
// 1 = in this process), --json, --log (with --seed: also print the simulator's event log),
// --trace-dir DIR, --no-traces, --no-shrink, --help.
// Exit status: 0 when every recipe behaved as expected, 1 when a correct recipe failed or a
// broken variant was not caught, 2 for a usage error (unknown flag or recipe, bad number, a trace
// directory that cannot be created), 130 when SIGINT, SIGTERM or SIGHUP stopped the run (it then
// prints, per recipe, the seed range that was fully run and the verdicts over it; no trace is
// saved).
//
// Seeds at scale: each recipe's seed range is cut into contiguous chunks that the workers take
// as they become free (so one recipe keeps every job busy), and the chunks' results are appended
// in seed order (append_seeds), so the table, the JSON, the first violating seed of every
// property, the saved traces and the exit status are those of one process running the seeds in
// order, whatever --jobs is. For a broken variant the result ends at its lowest catching seed.
//
// The engine itself is deterministic and single-threaded; the wall clock (for seeds per second,
// the progress line and its ETA), signals and fork() live in properties/check_host.cc, outside
// the deterministic core. `interactive` (the CLI passes whether stderr is a terminal) turns on a
// progress line on `err`: seeds done, seeds per second and the time left, a few times a second.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "properties/checkers.h"
#include "recipes/registry.h"
#include "sim/world.h"

namespace lockstep::properties {

struct CheckOptions {
  std::vector<std::string> recipes;  // empty: the whole registry
  uint64_t seeds = 100;
  uint64_t first_seed = 1;          // the seeds run are first_seed .. first_seed + seeds - 1
  std::optional<uint64_t> seed;     // only this seed, with a full report
  std::set<sim::FaultKind> faults;  // empty: each recipe's own fault kinds
  uint32_t jobs = 1;
  bool json = false;
  bool event_log = false;
  bool interactive = false;
  std::string trace_dir = "traces/failures";  // where failing seeds' traces go
  bool save_traces = true;                    // false: --no-traces
  bool shrink_traces = true;                  // false: --no-shrink
};

// A failing seed the engine hands to its TraceSaver.
struct FailingSeed {
  const recipes::RecipeInfo* recipe = nullptr;
  uint64_t seed = 0;
  std::set<sim::FaultKind> faults;  // the --faults restriction the seed's scenario was derived with
  std::optional<Property> property;  // the property check reports violated at this seed
  std::string dir;                   // --trace-dir
  bool shrink = true;                // shrink the scenario before saving (--no-shrink: as run)
};

// Records the failing seed's run (its scenario shrunk, while `property` stays violated, unless
// !shrink) and saves it as a trace under `dir`. Returns the path, or "" with *error set.
// Installed by the CLI: traces::save_check_failure (traces/record.h).
using TraceSaver = std::function<std::string(const FailingSeed& failure, std::string* error)>;

// The outcome for one property of one recipe over the seeds run.
struct PropertyResult {
  uint64_t judged = 0;           // seeds in which it was judged
  std::optional<uint64_t> seed;  // first violating seed
  std::string message;           // that violation's message
};

// The outcome for one recipe over the contiguous seeds first_seed .. first_seed + seeds_run - 1.
struct RecipeResult {
  std::string recipe;
  recipes::Expected expected = recipes::Expected::kCorrect;
  std::optional<Property> must_violate;
  PropertyResult properties[kPropertyCount];
  uint64_t first_seed = 1;
  uint64_t seeds_run = 0;
  uint64_t requests = 0;                   // simulated requests over all seeds
  std::map<uint64_t, std::string> traces;  // failing seed -> saved trace path

  bool violated() const;
  std::optional<uint64_t> first_failing_seed() const;
  // Correct and clean, or broken and caught by its expected property (any, if none declared).
  bool as_expected() const;
  // A broken variant that was caught: its search stops, later seeds are not run.
  bool search_over() const;
};

// Parses the flags (argv[0] is the command's own name and is skipped). On a usage error writes
// it to `err` and returns nullopt.
std::optional<CheckOptions> parse_check_args(int argc, char** argv, std::ostream& err);

// A result with the recipe's identity (name, expected, must_violate) and no seeds run.
RecipeResult empty_result(const recipes::RecipeInfo& recipe);

// Runs one recipe over the seeds of `o` (its --seed, or --first-seed and --seeds). Deterministic.
RecipeResult check_recipe(const recipes::RecipeInfo& recipe, const CheckOptions& o,
                          std::ostream* progress);

// Runs seeds first .. first + count - 1 of one recipe (scenarios restricted to `faults`), in
// order; a broken variant stops at the first seed that catches it. Deterministic: a chunk of a
// longer range gives what the same seeds gave inside the longer run.
RecipeResult check_seeds(const recipes::RecipeInfo& recipe, uint64_t first, uint64_t count,
                         const std::set<sim::FaultKind>& faults);

// Appends `next`, the result of the seeds that follow `acc`'s, to `acc`, giving what one run
// over both ranges gives: counts add up, each property keeps its lowest violating seed.
// REQUIRES: next.first_seed == acc->first_seed + acc->seeds_run, !acc->search_over(), both of
// the same recipe.
void append_seeds(RecipeResult* acc, const RecipeResult& next);

// `save_trace`: how failing seeds become trace files (nullptr: none are saved).
int check_main(int argc, char** argv, std::ostream& out, std::ostream& err,
               bool interactive = false, const TraceSaver& save_trace = nullptr);

// ---- check_host.cc: the non-deterministic host side ----
// Seconds on a monotonic host clock (only for the seeds-per-second report).
double host_seconds();
// CPU seconds used by this process and its finished children (per-core throughput).
double host_cpu_seconds();

// What check_recipes_forked covered.
struct HostRun {
  // In `todo`'s order. Each covers seeds o.first_seed .. first_seed + seeds_run - 1: all of
  // o.seeds (a broken variant: up to its catching seed), or when interrupted the longest prefix
  // of them that was fully run.
  std::vector<RecipeResult> results;
  const char* interrupted = nullptr;  // "SIGINT", "SIGTERM" or "SIGHUP" when one stopped the run
};

// Runs o.seeds seeds from o.first_seed for each recipe in `todo`: each recipe's range is cut
// into contiguous chunks handed out, in todo order and seed order, to o.jobs forked workers as
// they become free (chunks beyond a broken variant's known catch are skipped), and the chunks'
// results are appended in seed order, so the results equal check_recipe's whatever o.jobs is.
// Runs in this process when o.jobs <= 1 or fork fails, and runs a chunk itself when its worker
// died. While it runs, SIGINT, SIGTERM and SIGHUP stop it (workers ignore SIGINT and are sent
// SIGTERM, then reaped) instead of killing the process. `progress`: where the progress line goes
// (at most four times a second; cleared at the end), or nullptr.
HostRun check_recipes_forked(const std::vector<const recipes::RecipeInfo*>& todo,
                             const CheckOptions& o, std::ostream* progress);
// "" when files can be written under `dir`: it is a writable directory, or the nearest part of
// it that exists is one (so it can be created). Otherwise what is in the way. It tries: it makes
// the first missing directory (or a probe inside `dir`) and removes it, so nothing is left behind.
std::string host_dir_problem(const std::string& dir);

}  // namespace lockstep::properties
