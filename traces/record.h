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
// `lockstep check` would (a shrunk trace: with its decisions, leniently).
//
// shrink_failure() (shrink.cc) makes the trace `lockstep check` saves: the failing scenario
// shrunk (faults, clients, rounds, workload options), then its schedule shrunk by delta debugging
// over the decisions, recorded with the lenient strategy so that strict replay reproduces it, and
// reporting the property check printed (Trace::reported).
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

// The verdicts of the trace's scenario run now with the seeded random strategy, or, for a trace
// whose strategy is kShrunkStrategy (its schedule is not the seed's), with the lenient strategy
// over its decisions (make_lenient_strategy).
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

// Shrinks a failing scenario toward the smallest one that still violates `property` for `recipe`,
// run with the seed's random strategy: greedily, in a fixed order, repeated until nothing more
// goes, it tries dropping all faults, chunks of faults and then single faults (delta debugging),
// moving a fault to an earlier client, any client (with its faults and role; the clients after it
// are renumbered; also with the faults moved sooner), rounds (also with the faults sooner, or an
// optional behaviour made certain), callers, leases, the workload's optional behaviours (stray
// releases, re-entry, long holds, giving up, timed and try acquires), reopens, the ensemble, the
// local expiry and the sequence wrap, and keeps every change after which the property is still
// violated; then shorter holds and think times, earlier and shorter faults and a sooner wrap, kept
// only when the run's history gets no larger. The world's seed stays. At most `max_runs` scenarios are run; *runs (when given) says how many were.
// Deterministic: the same input gives the same result. REQUIRES: `s` violates `property`.
properties::Scenario shrink_scenario(const recipes::RecipeInfo& recipe, properties::Scenario s,
                                     properties::Property property, uint32_t max_runs = 300,
                                     uint32_t* runs = nullptr);

// `s` without client `client` (1-based): its faults and its role go, the clients after it move
// down one with their faults and roles, and faults on no client (0) stay. A step of the shrinker,
// public for its tests. REQUIRES: 1 <= client <= s.workload.clients, and at least 2 clients.
properties::Scenario without_client(properties::Scenario s, uint32_t client);

// The strategy name of a trace whose decisions were shrunk (shrink_failure): a lenient replay of
// a decision list, which answers a recorded choice where its kind and range match and the
// scheduler's default (0) elsewhere. Replay needs nothing but the trace's own decisions.
constexpr const char* kShrunkStrategy = "shrunk";

// Answers the i-th choice it is asked with decisions[i] when that decision has the same kind and
// number of options, and with 0 (the scheduler's default) otherwise and after the list ends. It
// never diverges: it is how a shrunk decision list runs, and how `recheck` runs a shrunk trace
// against changed code. Its name is kShrunkStrategy.
std::unique_ptr<sim::Strategy> make_lenient_strategy(std::vector<sim::Decision> decisions);

struct ShrinkOptions {
  uint32_t max_runs = 2000;          // simulator runs for both phases together
  uint32_t max_schedule_runs = 400;  // of which at most this many for the schedule
  bool schedule = true;     // false: the scenario only, recorded with the random strategy
  // With `schedule`: a candidate scenario the seed's random strategy and the lenient strategy
  // over the current decisions do not fail is tried with this many other random schedules.
  uint32_t other_schedules = 12;
};

struct ShrinkResult {
  Trace trace;                 // the shrunk run, recorded; trace.reported is the property
  uint32_t runs = 0;           // runs used, both phases
  uint32_t scenario_runs = 0;  // of which the scenario phase
  bool schedule_shrunk = false;  // the decisions were shrunk (trace.strategy is kShrunkStrategy)
};

// Shrinks a failing scenario, then its schedule, and records the result. The scenario is shrunk as
// shrink_scenario does, and then again with each candidate also run under the lenient strategy over
// the current run's decisions and `other_schedules` other random schedules (and each client
// dropped with every fault at k/8 of its time, k = 1..12); then delta debugging runs over the decisions of its run: chunks of the
// non-zero decisions (all, halves, quarters, ... single ones, the last chunk first) are answered 0
// instead, and a candidate is kept when `property` is still violated and its run is no larger
// (fewer history events, or as many and no more simulator events); the list is then the kept run's
// own decisions. The result is recorded with the lenient strategy over the final list (strategy
// kShrunkStrategy; the random strategy when no decision was changed), so `lockstep replay`
// reproduces it exactly, and reports `property` (Trace::reported). One budget, options.max_runs,
// bounds both phases. Deterministic. REQUIRES: `s` violates `property`.
ShrinkResult shrink_failure(const recipes::RecipeInfo& recipe, properties::Scenario s,
                            properties::Property property, const ShrinkOptions& options = {});

// The size of a recorded run, as the shrink report prints it.
struct RunFigures {
  uint64_t history = 0;     // history events
  uint64_t sim_events = 0;  // simulator events (RunInfo::sim_events)
  uint32_t clients = 0;
  uint32_t rounds = 0;
  uint32_t faults = 0;
};
RunFigures figures_of(const Trace& t);

// One broken variant's catch, shrunk (the shrink report, bench/shrink_report.cc, and its test).
struct VariantShrink {
  uint64_t seed = 0;                // the first seed `lockstep check` catches it at
  properties::Property property{};  // the property that catches it (must_violate)
  RunFigures as_run;                // the seed's scenario as check ran it
  RunFigures scenario_only;         // shrink_failure with options.schedule false
  ShrinkResult shrunk;              // shrink_failure with `options`
  bool still_violated = false;      // shrunk.trace violates `property`
};

// Finds the first seed in [1, max_seed] that catches the broken variant `recipe`
// (first_failing_seed) and shrinks its scenario both ways; nullopt when no seed catches it or it
// declares no property to be caught by.
std::optional<VariantShrink> shrink_variant(const recipes::RecipeInfo& recipe, uint64_t max_seed,
                                            const ShrinkOptions& options = {});

// The TraceSaver `lockstep check` runs with (properties/check.h): derives the failing seed's
// scenario, shrinks it and its schedule (shrink_failure; unless !f.shrink) while f.property (the
// first violated property, when unset) stays violated, records it and saves it under f.dir. The
// trace reports f.property (Trace::reported), the property `check` printed. Returns the path, or
// "" with *error set. A demonstration (f.demonstration: a passing seed that shows what its faults
// excuse) is saved as run.
std::string save_check_failure(const properties::FailingSeed& f, std::string* error);

// One line: "herd-free VIOLATED: <message> (history events #3, #7)" (the trace's: the reported
// property's violation, else the first) or "every property held (7 judged)".
std::string verdict_summary(const Trace& trace);
std::string verdict_summary(const std::vector<properties::Verdict>& verdicts);

}  // namespace lockstep::traces
