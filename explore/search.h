// lockstep explore: the deterministic search core — small scopes, one run of a scope under a
// strategy, bounded exhaustive search, and seeded random / PCT sampling.
//
// A Scope is one recipe, its claims and one fixed Scenario (clients, rounds, timing, faults at
// fixed times). The simulator's choice function is the only thing a search varies: each run
// builds a fresh world (properties::run_in_sim) and hands it a strategy (explore/strategies.h).
//
// Exhaustive search is stateless re-execution with iterative preemption bounding (CHESS): a
// schedule is the list of its non-zero answers (picks); level k holds the schedules that spend k
// of the bound. A run of a schedule answers 0 after its last pick; every choice point it meets
// after that pick (below the depth bound, of a kind that branches) spawns the schedules that
// answer 1..n-1 there. Levels are explored in order, each as a DFS stack, so the first violating
// level gives the counterexamples with the fewest picks; that level is finished and its
// shortest violation (fewest decisions, then fewest simulator events) is the answer.
//
// What a pick costs: by default every pick spends one unit of the bound. With order_free, the
// order of events (kNextEvent) is explored completely and only the data choices (latency,
// ambiguous outcome, ping phase, server, child order) spend the bound.
//
// Reductions:
//   - kSleepSets (sound; implies order_free): Godefroid's sleep sets over the events of a
//     kNextEvent choice. After the alternatives 0..a-1 of a choice were explored, alternative a
//     starts with them asleep; an event that runs wakes every sleeper it depends on; a sleeping
//     event is never branched to, and a run whose next event is asleep (as the default or the
//     only candidate) is blocked: nothing after it branches, and the run itself stops there
//     (ScheduleStrategy::set_sleep; its truncated outcome is not counted). Independence
//     (dependent()) is conservative and comes from the footprints the scheduler observed
//     (sim::EventInfo): two events are independent only when they belong to two different, known
//     clients, at most one of them touches the ensemble's shared state, not both run application
//     code that wrote the workload's history or fenced resource at that instant (user_code_wrote),
//     and neither is a fault. The bound must not depend on the order of independent events, which
//     is why sleep sets need order_free: the number of data picks is the same in every interleaving
//     of the same events, while the number of reordered kNextEvent answers is not (preemption
//     bounding and sleep sets do not compose: Coons, Musuvathi, McKinley, "Bounded partial-order
//     reduction", OOPSLA 2013). A depth bound counts choice indexes, which also differ between
//     equivalent interleavings: it is not used with sleep sets. Scopes with a partition fault are
//     searched with every pair dependent (a partitioned client can drop a session's watches without
//     the scheduler seeing it); the reduction then only prunes nothing.
//   - kStateHash (unsound, opt-in): a choice point whose (index, state) was already branched
//     from with at least the same remaining budget is not branched again, nor is anything after
//     it in that run. The state (ChoicePoint::state) covers the server, the network and what the
//     recipes show through their Locks, not the coroutines' own frames (a recipe's local
//     variables) nor the workload's history, so this pruning can still hide schedules.
//
// Distinct states: at every choice point after a schedule's last pick (the states before it were
// met by the run that spawned the schedule), the state is hashed: the world's digest
// (sim::World::state_digest: trees, sessions, connections and messages in flight, client
// libraries, pending events by their time from now) mixed with the probe's recipe-level hash
// (explore/probe.h). The search counts the distinct ones over every run (states_visited), per
// bound level (new_states_per_level: a finished level that found none is saturation) and in the
// last 1,000 runs (new_states_recent). Random and PCT sampling count them too, through a
// StateRecorder around each run's strategy (every choice point: a sampled run has no parent). Apart
// from those, a world-level hash of each run's final state (the lock directory's nodes: path,
// ephemeral owner and whether its session is alive, czxid; every client's last lock state, held
// node and recipe counters; whether the workload finished) counts distinct final states.
//
// No clocks and no threads: the same scope and options give the same result.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "explore/coverage.h"
#include "explore/strategies.h"
#include "properties/checkers.h"
#include "properties/claims.h"
#include "properties/scenario.h"
#include "recipes/registry.h"
#include "sim/world.h"

namespace lockstep::explore {

struct Scope {
  const recipes::RecipeInfo* recipe = nullptr;
  properties::Claims claims;
  properties::Scenario scenario;
};

// A scope with a fault on a server past the first, or a lagging-follower fault on any, runs on an
// ensemble of this many servers (server 1 leads it); else on one server.
inline constexpr uint32_t kScopeServers = 3;

// A small, quiet scenario for `recipe`: `clients` clients, `rounds` rounds, short holds, no
// think time variety, no stray or re-entrant rounds; what the recipe's claims say exposes a
// broken variant (timed acquires, the sequence wrap, long holds under expiry faults, read and
// write roles alternating, two caller tasks sharing one Lock) is switched on. `faults` are
// taken as given (times from the workload's start).

Scope make_scope(const recipes::RecipeInfo& recipe, uint32_t clients, uint32_t rounds,
                 std::vector<sim::Fault> faults, uint64_t seed = 1);

// Parses one fault of a --faults list: "KIND[@MS][:cN][:sN][=TASK]" with KIND a name of
// properties::fault_name ("lost-reply", "connection-loss", ...), MS the milliseconds after the
// workload's start (default 0: the first request), :cN the client (default 1), :sN the server of
// a kind that hits one (lagging-follower, server-restart; 1..kScopeServers, s1 the leader;
// default the kind's typical one), TASK the task a stall holds or a cancel hits
// ("lock-monitor", "client@POINT"). Durations and names are otherwise one typical instance of
// the kind (properties::fault_parameters with nothing drawn: the generator's one place for
// them). False (and *error) on a bad spec.
bool parse_fault_spec(std::string_view spec, const properties::Scenario& s, sim::Fault* out,
                      std::string* error);

// What one run of a scope produced.
struct RunReport {
  std::vector<sim::Decision> decisions;         // what the world recorded
  std::vector<properties::Verdict> violations;  // every violated property, in Property order
  uint64_t sim_events = 0;
  uint64_t log_hash = 0;
  uint64_t final_state = 0;  // the world-level final-state hash (see "Distinct states")
  // (virtual time in us, client) of every history entry: application code of that client at
  // that instant may have written the workload's shared history (see user_code_wrote()).
  std::set<std::pair<int64_t, uint32_t>> history_writes;
  MarkSet marks{};
  bool diverged = false;
  std::string divergence;
};

// Something a search can run again and again: a scope in the simulator, or a synthetic choice
// tree in tests.
class Program {
 public:
  virtual ~Program() = default;
  // Runs once; every choice goes to `strategy`. When `probe` is not null it is given a state
  // hash function for the duration of the run (StateHashing::set_probe).
  virtual RunReport run(sim::Strategy& strategy, StateHashing* probe) = 0;
};

class ScopeProgram final : public Program {
 public:
  explicit ScopeProgram(const Scope& scope) : scope_(scope) {}
  RunReport run(sim::Strategy& strategy, StateHashing* probe) override;

 private:
  const Scope& scope_;
};

// What a search has done so far, handed to a RunObserver after every run.
struct SearchProgress {
  uint64_t schedules = 0;       // runs made
  uint64_t states_visited = 0;  // distinct states met at choice points so far
  uint64_t final_states = 0;    // distinct final states so far
  uint32_t level = 0;           // exhaustive: the bound level being run
};
// Called after every run (a progress line, a Ctrl-C). Returning false stops the search there:
// the result covers the runs made and says so (SearchResult::stopped_by_observer). The search
// reads nothing else from it, so a search that is not stopped gives the same result with or
// without one.
using RunObserver = std::function<bool(const SearchProgress&)>;

enum class Reduction : uint8_t { kNone, kSleepSets, kStateHash };
const char* to_string(Reduction r);

struct ExhaustiveOptions {
  uint32_t preemption_bound = 2;      // schedules with at most this many non-zero answers
  uint32_t depth_bound = UINT32_MAX;  // choice points at this index or later never branch
  Reduction reduction = Reduction::kNone;
  // kNextEvent picks do not spend the bound (implied by kSleepSets).
  bool order_free = false;
  // Treat every pair of events as dependent (for kSleepSets: scopes with partitions).
  bool all_dependent = false;
  uint64_t max_schedules = 100000;  // runs at most; the result says whether it was cut
  bool stop_at_first = false;       // stop at the first violating run (time to bug)
  // Only violations of this property count (a broken variant's must_violate); nullopt = any.
  std::optional<properties::Property> target;
  // Choice kinds that branch; empty = every kind.
  std::set<sim::ChoiceKind> kinds;
  // A choice point with more than this many non-default answers (the child-order salt: 2^32-1)
  // branches on this many, spread evenly over 1..n-1 (0 = all of them).
  uint32_t max_alternatives = 3;
  RunObserver observer;  // may be empty
};

// `e` as sleep sets see it after the run: the kRunsUserCode bit is kept only when the history
// has an entry of e's client at e's instant (the workload writes its shared history and the
// fenced resource, which records into the history, only from application code); an event of a
// client that wrote nothing at that instant shares nothing with other clients' code.
sim::EventInfo user_code_wrote(sim::EventInfo e, const RunReport& r);
// Scopes whose faults the footprints do not cover (a partition): search with all_dependent.
bool needs_all_dependent(const Scope& scope);

// The non-default answers a choice point with n options branches on (see max_alternatives).
std::vector<uint32_t> alternatives(uint32_t n, uint32_t max_alternatives);

struct Counterexample {
  Schedule schedule;
  std::vector<sim::Decision> decisions;
  properties::Verdict verdict;
  uint64_t sim_events = 0;
  uint64_t found_at = 0;  // 1-based number of the run that found it
};

struct SearchResult {
  std::string strategy;          // "exhaustive", "random", "pct-d3"
  uint64_t schedules = 0;        // runs made
  uint64_t distinct_states = 0;  // distinct final states (RunReport::final_state)
  // Distinct states met at choice points (ChoicePoint::state: the world's digest and the
  // clients' recipe states), over every run; a lower bound once `states_capped`.
  uint64_t states_visited = 0;
  bool states_capped = false;
  // Exhaustive, by bound level: the states (and final states) first met by a run of that level.
  // A finished level that met none is saturation: more of the same bound found nothing new.
  std::vector<uint64_t> new_states_per_level;
  std::vector<uint64_t> new_final_states_per_level;
  // The states first met by the last kRecentRuns runs (all runs when fewer): a search cut in the
  // middle of a level, or a sample, that still finds states at this rate is far from saturated.
  static constexpr uint64_t kRecentRuns = 1000;
  uint64_t new_states_recent = 0;
  uint64_t distinct_runs = 0;       // distinct event-log hashes among the runs
  uint64_t probe_states = 0;        // exhaustive: distinct (choice index, probe state) pairs
  uint64_t pruned = 0;              // state-hash: branch points skipped; sleep sets: sleeping
                                    // alternatives not branched to
  uint64_t blocked = 0;             // sleep sets: runs whose continuation was asleep
  uint64_t stopped_early = 0;       // sleep sets: blocked runs stopped as soon as they were
  uint64_t unexplained_stops = 0;   // sleep sets: stopped runs the analysis did not find blocked
                                    // (a bug: must stay 0)
  std::set<uint64_t> final_states;  // the distinct final states
  std::set<properties::Property> violated;  // every property some run violated
  uint32_t levels_done = 0;                 // exhaustive: preemption levels fully explored
  bool complete = false;                    // exhaustive: not cut by max_schedules
  bool run_limit_reached = false;           // exhaustive: stopped after max_schedules runs
  bool queue_full = false;  // exhaustive: children were dropped (the queue held 4x max_schedules)
  bool stopped_at_first = false;    // stop_at_first ended the search at a violation
  bool stopped_by_observer = false;  // the RunObserver stopped the search (an interrupt)
  uint64_t first_violation_at = 0;  // 1-based run number of the first violation, 0 = none
  std::optional<Counterexample> shortest;
  Coverage coverage;
};

SearchResult explore_exhaustive(Program& program, const ExhaustiveOptions& options);

struct SampleOptions {
  uint64_t seed = 1;  // run i uses seed + i
  uint64_t runs = 1000;
  bool stop_at_first = false;
  uint32_t pct_depth = 3;                      // PCT only
  std::optional<properties::Property> target;  // as ExhaustiveOptions::target
  RunObserver observer;                        // may be empty
};

// The verdict of the first violation in `r` that counts under `target`, or nullptr.
const properties::Verdict* counted_violation(const RunReport& r,
                                             const std::optional<properties::Property>& target);

// Seeded random strategy, runs with seeds seed, seed+1, ...
SearchResult explore_random(Program& program, const SampleOptions& options);
// PCT with depth pct_depth; the number of scheduling steps is measured on one run first.
SearchResult explore_pct(Program& program, const SampleOptions& options);

// Shrinks a counterexample towards the fewest preemptions: drops one pick at a time (last
// first) and keeps the result whenever the run still violates (counted under `target`),
// until no single drop does or `max_runs` runs. Every kept candidate is re-read from what the
// run actually decided, so the result replays exactly. Returns the runs spent in *runs.
Counterexample shrink(Program& program, Counterexample c,
                      const std::optional<properties::Property>& target, uint64_t max_runs,
                      uint64_t* runs = nullptr);

}  // namespace lockstep::explore
