// lockstep traces: recording a run as a Trace, replaying a Trace, and re-judging its scenario.
//
// record_trace() runs one scenario of one recipe in the simulator (properties::run_in_sim) with
// the event log kept, takes the scheduler's decisions, the log, the history and the verdicts of
// every property the recipe's claims make applicable (properties::judge), and returns them as a
// Trace. replay_trace() runs the trace's scenario again with sim::make_replay_strategy over the
// recorded decisions and compares everything the run produced with the recording, strictly: each
// event-log line is compared as the simulator writes it and the run stops at the first one that
// differs (sim::EventLog::expect); then history, event count, hash and verdict are compared. The
// first difference is reported and nothing after it is judged. recheck_trace() ignores the
// decisions and runs the scenario with the seeded random strategy against the current code, as
// `lockstep check` would.
//
// Deterministic and single-threaded, like the simulator it drives; no file I/O here.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "properties/check.h"
#include "properties/checkers.h"
#include "properties/scenario.h"
#include "recipes/registry.h"
#include "sim/world.h"
#include "traces/trace.h"

namespace lockstep::traces {

// Runs `s` for `recipe` with `strategy` (nullptr: sim::make_random_strategy(s.seed), exactly
// what `lockstep check` runs) and records it.
Trace record_trace(const recipes::RecipeInfo& recipe, const properties::Scenario& s,
                   std::unique_ptr<sim::Strategy> strategy = nullptr);

// The decisions as the event log's "choose" lines name them ("choose latency 1/4").
std::vector<sim::Decision> decisions_from_log(const std::vector<sim::LoggedEvent>& events);

struct Divergence {
  std::string where;     // "event log", "history", "event count", "event-log hash", "verdict",
                         // "decisions", "strategy"
  uint64_t index = 0;    // the first differing event / history index (0 where meaningless)
  zk::Time at;           // "event log": the divergent event's time and client (the replayed
  uint32_t client = 0;   // one; the recorded one when the replay's log ended first)
  std::string expected;  // what the recording holds there
  std::string actual;    // what the replay produced there
  std::string detail;    // the replay strategy's own account, when it left the recording
};

// The first difference between a recording and a re-run, or nullopt when they are identical
// (event log line by line, history event by event, count, hash, the reported verdict).
std::optional<Divergence> first_divergence(const Trace& recorded, const Trace& replayed);

struct ReplayResult {
  Trace replayed;  // when stopped_early: the run up to and including the divergent event
  std::optional<Divergence> divergence;
  bool stopped_early = false;  // the run stopped at the first divergent event-log line
};

// REQUIRES: `recipe` is the trace's recipe.
ReplayResult replay_trace(const Trace& recorded, const recipes::RecipeInfo& recipe);

// The verdicts of the trace's scenario run now with the seeded random strategy.
std::vector<properties::Verdict> recheck_trace(const Trace& recorded,
                                               const recipes::RecipeInfo& recipe);

// The first seed in [1, max_seed] whose scenario (derived as `lockstep check` derives it)
// violates the property `recipe` must be caught by (any property when none is declared), or
// nullopt.
std::optional<uint64_t> first_failing_seed(const recipes::RecipeInfo& recipe, uint64_t max_seed);

// The scenario `lockstep check` derives from `seed` for `recipe` (faults restricted to
// `allowed` when not empty).
// `draw_era`: the scenario the seed derived in that era of the sweep (GenerateOptions::draw_era).
properties::Scenario check_scenario(const recipes::RecipeInfo& recipe, uint64_t seed,
                                    const std::set<sim::FaultKind>& allowed = {},
                                    uint32_t draw_era = properties::kLatestDrawEra);

// Records `s` for `recipe` and, when a property is violated, saves it under `dir`
// (save_failure_trace). Returns the path, or "" when every property held or the file could not be
// written (*error says which). For tests that found a counterexample (e.g. RapidCheck's shrunk
// scenario).
std::string save_scenario_failure(const recipes::RecipeInfo& recipe, const properties::Scenario& s,
                                  const std::string& dir, std::string* error = nullptr);

// Derives the scenario of `seed` the way `lockstep check` does (faults restricted to `allowed`
// when not empty), records it, and when a property is violated saves it under `dir`. Returns the
// path, or "" when the seed passes or the file could not be written (*error says which).
std::string save_seed_failure(const recipes::RecipeInfo& recipe, uint64_t seed,
                              const std::set<sim::FaultKind>& allowed, const std::string& dir,
                              std::string* error = nullptr);

// Shrinks a failing scenario toward the smallest one that still violates `property` for `recipe`:
// greedily, in a fixed order, it tries dropping all faults, each fault, a client (with its faults
// and role), rounds, the workload's optional behaviours (stray releases, re-entry, long holds,
// giving up, timed acquires), the ensemble, the local expiry and the sequence wrap, and keeps
// every change after which the property is still violated. The world's seed stays. At most
// `max_runs` scenarios are run; *runs (when given) says how many were. Deterministic: the same
// input gives the same result. REQUIRES: `s` violates `property`.
properties::Scenario shrink_scenario(const recipes::RecipeInfo& recipe, properties::Scenario s,
                                     properties::Property property, uint32_t max_runs = 300,
                                     uint32_t* runs = nullptr);

// The TraceSaver `lockstep check` runs with (properties/check.h): derives the failing seed's
// scenario, shrinks it (unless !f.shrink) while f.property (the first violated property, when
// unset) stays violated, records it and saves it under f.dir. Returns the path, or "" with
// *error set. A demonstration (f.demonstration: a passing seed that shows what its faults
// excuse) is saved as run.
std::string save_check_failure(const properties::FailingSeed& f, std::string* error);

// One line: "herd-free VIOLATED: <message> (history events #3, #7)" or "every property held
// (7 judged)".
std::string verdict_summary(const Trace& trace);
std::string verdict_summary(const std::vector<properties::Verdict>& verdicts);

}  // namespace lockstep::traces
