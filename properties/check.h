// lockstep properties: the check engine behind `lockstep check`, with two backends.
//
// The engine runs recipes of the registry through the property suite, seed after seed, and
// accumulates per recipe and property: judged how often, the first violating seed and its
// message (RecipeResult). A correct recipe must pass every property it claims; a broken variant
// must be caught by the property properties/claims.h expects of it (its search stops at the
// first seed that catches it). It knows nothing of flags, tables or JSON: cli/cmd_check.cc
// parses the command line into CheckOptions, picks the backend and prints the results.
//
// A backend (CheckBackend) runs and judges one seed of one recipe:
//   - SimBackend: the simulator (run_seed: the seed alone reproduces the run);
//   - RealBackend (properties/real_backend.h): Debian's ZooKeeper server, standalone or a
//     3-server ensemble (the seed reproduces the workload and the fault plan, not the schedule).
// The same runner (check_seeds, check_recipe), the same result type and the same trace saving
// serve both. A backend may decline a recipe it cannot provoke (unsupported(): the result says
// why and counts as expected, never as a pass), and a harness failure ends the recipe's run with
// RecipeResult::error (it counts as a failure).
//
// Failure traces (simulator): when the caller installs a TraceSaver (the CLI does:
// traces::save_check_failure; this library cannot link traces/, which depends on it), every
// distinct failing seed of every recipe is saved as a trace under CheckOptions::trace_dir after
// all recipes ran, in result order, so --jobs changes nothing (save_traces). The saved trace is
// the minimal one: the seed's scenario shrunk while the same property stays violated (unless
// shrink_traces is false). The saver names each file by recipe, seed and event-log hash, writes
// it atomically and never replaces a different file.
//
// Seeds at scale (simulator): check_recipes_forked (check_host.cc) cuts each recipe's seed
// range into contiguous chunks that forked workers take as they become free, and appends the
// chunks' results in seed order (append_seeds), so the results, the first violating seed of
// every property, the saved traces and the verdicts are those of one process running the seeds
// in order, whatever --jobs is.
//
// The engine and SimBackend are deterministic and single-threaded; the wall clock, signals and
// fork() live in properties/check_host.cc, outside the deterministic core.
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
#include "properties/claims.h"
#include "properties/suite.h"
#include "recipes/registry.h"
#include "sim/world.h"

namespace lockstep::properties {

// What to check: which recipes, which seeds, which faults (and, for the simulator, where traces go).
struct CheckOptions {
  std::vector<std::string> recipes;  // empty: the whole registry
  uint64_t seeds = 100;
  uint64_t first_seed = 1;          // the seeds run are first_seed .. first_seed + seeds - 1
  std::optional<uint64_t> seed;     // only this seed
  std::set<sim::FaultKind> faults;  // empty: each recipe's own fault kinds (see no_faults)
  bool no_faults = false;           // `--faults none`: scenarios without faults
  // A broken variant is hunted for at least this many seeds (the real backend: a few runs).
  uint64_t min_broken_seeds = 0;
  uint32_t jobs = 1;                          // simulator: forked worker processes
  std::string trace_dir = "traces/failures";  // where failing seeds' traces go
  bool save_traces = true;                    // false: --no-traces
  bool shrink_traces = true;                  // false: --no-shrink
  std::string program = "./lockstep";  // how reproduce lines call the tool (a user's own
                                       // binary, cli/user_main.h: its own name)

  // The seeds of `recipe`'s run: --seed, or first_seed and seeds (min_broken_seeds for a broken
  // variant).
  uint64_t first() const { return seed ? *seed : first_seed; }
  uint64_t count(recipes::Expected expected) const;
  // The fault restriction as run_seed and the generators take it (no_faults: one impossible
  // kind, which leaves nothing to draw).
  std::set<sim::FaultKind> fault_restriction() const;
};

// A failing seed the engine hands to its TraceSaver.
struct FailingSeed {
  const recipes::RecipeInfo* recipe = nullptr;
  uint64_t seed = 0;
  std::set<sim::FaultKind> faults;  // the --faults restriction the seed's scenario was derived with
  std::optional<Property> property;  // the property check reports violated at this seed
  std::string dir;                   // --trace-dir
  bool shrink = true;                // shrink the scenario before saving (--no-shrink: as run)
  bool demonstration = false;        // a passing seed saved as the example of what its faults
                                     // excuse (PropertyResult::demonstration), as run
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
  // Seeds where it held but showed what the faults excuse (Verdict::demonstration): belief-level
  // exclusion under pauses. Not failures; the first is reported (and saved) as the example.
  uint64_t demonstrated = 0;
  std::optional<uint64_t> demonstration_seed;
  std::string demonstration;
};

// The outcome for one recipe over the contiguous seeds first_seed .. first_seed + seeds_run - 1.
struct RecipeResult {
  std::string recipe;
  recipes::Expected expected = recipes::Expected::kCorrect;
  std::optional<Property> must_violate;
  std::set<Property> claimed;  // what the recipe's registration claims (claims_for); the rest
                               // is "unclaimed", never judged
  PropertyResult properties[kPropertyCount];
  uint64_t first_seed = 1;
  uint64_t seeds_run = 0;
  uint64_t requests = 0;                   // simulated requests over all seeds
  std::map<uint64_t, std::string> traces;  // failing (or demonstrating) seed -> saved trace
  std::string unsupported;  // why the backend cannot provoke this variant (nothing was run)
  std::string error;        // the backend's harness failed: the seeds after seeds_run were not run
  std::string first_report;  // report() of the first violating seed, when the backend keeps one

  bool violated() const;
  std::optional<uint64_t> first_failing_seed() const;
  // Correct and clean, or broken and caught by its expected property (any, if none declared),
  // or a variant the backend cannot provoke; never when the harness failed.
  bool as_expected() const;
  // Nothing more to run: a broken variant that was caught, one the backend cannot provoke, or
  // a harness failure.
  bool search_over() const;
  // "pass", "violated", "not-provokable" or "error" (the JSON `verdict`).
  const char* verdict() const;
};

// One backend of the engine: runs and judges one seed of one recipe.
class CheckBackend {
 public:
  virtual ~CheckBackend() = default;
  // Why this backend cannot provoke `recipe`'s bug, or "" when it can.
  virtual std::string unsupported(const recipes::RecipeInfo& recipe, const Claims& claims) const;
  // Runs and judges `seed` (faults restricted to `faults` when not empty). Returns false with
  // *error set when the harness failed and nothing was judged.
  virtual bool run(const recipes::RecipeInfo& recipe, const Claims& claims, uint64_t seed,
                   const std::set<sim::FaultKind>& faults, SeedOutcome* out,
                   std::string* error) = 0;
  // Whether the run was asked to stop (an interrupt): no further seed is started.
  virtual bool stopped() const { return false; }
  // Whether a violating seed's report() is kept in RecipeResult::first_report (the real server:
  // its seed does not reproduce the schedule, so the report is all there is).
  virtual bool keeps_reports() const { return false; }
};

// The simulator: run_seed(), deterministic; `keep_event_log` keeps the event log in each outcome.
class SimBackend final : public CheckBackend {
 public:
  explicit SimBackend(bool keep_event_log = false) : keep_event_log_(keep_event_log) {}
  bool run(const recipes::RecipeInfo& recipe, const Claims& claims, uint64_t seed,
           const std::set<sim::FaultKind>& faults, SeedOutcome* out, std::string* error) override;

 private:
  bool keep_event_log_;
};

// Called with every seed's outcome as it is judged (a --seed report, for instance).
using OutcomeSink = std::function<void(const recipes::RecipeInfo& recipe, const SeedOutcome& o)>;

// " --faults LIST" (or " --faults none") for a fault restriction as fault_restriction() gives
// it, "" for none: how a reproduction command restricts a seed's scenario as the run did.
std::string faults_flag(const std::set<sim::FaultKind>& faults);

// A result with the recipe's identity (name, expected, must_violate) and no seeds run.
RecipeResult empty_result(const recipes::RecipeInfo& recipe);

// Runs seeds first .. first + count - 1 of one recipe (scenarios restricted to `faults`) on
// `backend`, in order; stops early once search_over() or the backend is stopped. Deterministic
// on the simulator: a chunk of a longer range gives what the same seeds gave inside the longer
// run.
RecipeResult check_seeds(const recipes::RecipeInfo& recipe, uint64_t first, uint64_t count,
                         const std::set<sim::FaultKind>& faults, CheckBackend& backend,
                         const OutcomeSink& sink = nullptr);
// The same on the simulator.
RecipeResult check_seeds(const recipes::RecipeInfo& recipe, uint64_t first, uint64_t count,
                         const std::set<sim::FaultKind>& faults);

// Runs one recipe over the seeds of `o` on `backend`, in this process. `progress`: where a
// progress line ("\r  NAME  k/n") goes, or nullptr.
RecipeResult check_recipe(const recipes::RecipeInfo& recipe, const CheckOptions& o,
                          CheckBackend& backend, std::ostream* progress,
                          const OutcomeSink& sink = nullptr);

// The same on the simulator (for a user's own recipe test, examples/).
RecipeResult check_recipe(const recipes::RecipeInfo& recipe, const CheckOptions& o,
                          std::ostream* progress = nullptr);

// Appends `next`, the result of the seeds that follow `acc`'s, to `acc`, giving what one run
// over both ranges gives: counts add up, each property keeps its lowest violating seed.
// REQUIRES: next.first_seed == acc->first_seed + acc->seeds_run, !acc->search_over(), both of
// the same recipe.
void append_seeds(RecipeResult* acc, const RecipeResult& next);

// Whether `r` covers every seed `o` asked for (an interrupted run may stop short).
bool complete(const RecipeResult& r, const CheckOptions& o);

// Saves a trace (through `save_trace`) for every distinct failing seed of every result, in
// order. `todo[i]` is the recipe of `(*results)[i]`. Returns one line per trace that could not
// be saved (the verdicts stand).
std::vector<std::string> save_traces(const std::vector<const recipes::RecipeInfo*>& todo,
                                     const CheckOptions& o, const TraceSaver& save_trace,
                                     std::vector<RecipeResult>* results);

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
