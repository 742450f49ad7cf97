// lockstep properties: a scenario (a workload plus a fault plan, as data) and the simulator
// driver that runs it.
//
// A Scenario is a plain value: the world's seed, the workload's shape, and a fault plan of
// sim::Fault values that all take effect and end before `heal_at` (the fault phase); after it
// comes the heal phase, in which liveness is judged. (A lost reply or request is armed before
// `heal_at` and takes effect at its client's next mutating request, which may come later: the
// run's heal, RunResult::heal_at, is then when it did.) properties/generator.h generates them: from
// a seed with the project's PRNG (the `lockstep check` path: a seed alone reproduces it), with
// RapidCheck so failures shrink (properties/rc_gen.h), for a real server, or as explore's fixed
// scopes.
//
// run_in_sim() (properties/sim_run.cc, the simulator driver) builds a fresh sim::World, runs the
// workload (properties/workload.h) through the fault phase and the heal phase until every client
// finished or `run_limit`, lets the world settle for two session timeouts (so abandoned and crashed
// sessions expire), and returns the history, the final tree under the lock and the herd counters.
// Same recipe, same scenario => same history and same event-log hash. Single-threaded; no clocks.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "properties/checkers.h"
#include "properties/history.h"
#include "properties/workload.h"
#include "recipes/registry.h"
#include "sim/world.h"

namespace lockstep::properties {

struct Scenario {
  uint64_t seed = 1;
  WorkloadOptions workload;
  uint32_t servers = 1;
  zk::Duration session_timeout = zk::milliseconds(400);
  bool local_session_expiry = false;
  // When set, the lock directory's sequence counter starts here (to cross the signed wrap).
  std::optional<int32_t> sequence_start;
  // Every fault's time, heal_at and run_limit count from the workload's start (the driver
  // first creates the lock directory, then shifts them by the time that took).
  std::vector<sim::Fault> faults;  // every one ends before heal_at (armed ones: see above)
  zk::Time heal_at;
  zk::Duration liveness_bound = zk::seconds(2);
  zk::Duration run_limit = zk::seconds(30);  // virtual; the run stops there at the latest
};

// One line per field and fault, for reproduction reports.
std::string describe(const Scenario& s);

// The fault kinds the property generator draws from and the CLI's `--faults` accepts: those
// whose zk::FaultDescriptor says `generated`, in FaultKind order, by their one name
// (zk/faults.h). kFaultKindCount counts them.
constexpr int kFaultKindCount = [] {
  int n = 0;
  for (const zk::FaultDescriptor& d : zk::kFaultDescriptors) n += d.generated ? 1 : 0;
  return n;
}();
using zk::fault_name;  // every kind has its name, generated or not
// Only the generated kinds: false for an unknown name or one the generator does not draw.
bool parse_fault_name(std::string_view name, sim::FaultKind* out);
std::vector<sim::FaultKind> all_fault_kinds();

// Derives heal_at, liveness_bound and run_limit from the workload and the faults.
void finish_scenario(Scenario* s);

// The bound within which a waiter's acquire must complete after the heal, for a recipe that
// promises FIFO (`fifo`: a waiter queues behind each other client at most once, which is
// s.liveness_bound) or for one that does not: an unfair lock (S1's race to create one node) may
// let every other client's remaining rounds pass a waiter, so its bound covers the whole
// workload. Lost wake-ups (a waiter asleep while the lock is free) are judged apart, with a
// short grace, for both.
zk::Duration liveness_bound_for(const Scenario& s, bool fifo);

// What a simulated run keeps for its caller beyond what the judges read (the history, the tree,
// the server's view, the herd samples).
enum class Keep : uint8_t {
  kVerdicts,  // nothing more: the event log is not hashed and the decisions are not listed
              // (sim::WorldOptions::audit off): a `lockstep check` scenario, judged and dropped
  kAudit,     // the event log's hash and the decision list: replay, shrinking, explore
  kEventLog,  // those and the event log's text (RunResult::event_log and events)
};

struct RunResult {
  History history;
  TreeSnapshot tree;
  std::vector<HerdSample> herd;
  ServerView server;  // what the server did under the lock, and each client's requests
  std::optional<uint64_t> log_hash;  // sim::EventLog::hash(); none with Keep::kVerdicts
  uint64_t sim_events = 0;
  uint64_t requests = 0;
  zk::Time start;    // when the workload started (after the lock directory was made)
  // Scenario::heal_at, in the world's time; or, when an armed lost reply or request took effect
  // after it (sim::World::armed_fault_fired_at), 1 ms after that: when the faults ended.
  zk::Time heal_at;
  zk::Time end;
  bool finished = false;  // every client finished before run_limit
  std::string event_log;  // the simulator's text log, when asked for
  // What the world recorded, for traces and replay.
  std::vector<sim::Decision> decisions;  // World::decisions() at the end (Keep::kAudit or more)
  std::vector<sim::LoggedEvent> events;  // World::log().events(), with Keep::kEventLog
  std::string strategy;                  // Strategy::name() of the strategy used
  bool diverged = false;                 // a replay strategy left its recording
  std::string divergence;                // where, when diverged
};

// `keep`: what the result keeps beyond what is judged (by default the audit: the log's hash and
// the decisions). `strategy` == nullptr runs with sim::make_random_strategy(s.seed) (the seed
// reproduces the run); a replay or search strategy plugs in here. `expected_events` (strict
// replay, with Keep::kEventLog): the log a recording wrote; the run stops at the first event that
// differs from it (sim::EventLog::expect), which is then the last of `events`.
RunResult run_in_sim(const recipes::LockFactory& factory, const Scenario& s,
                     Keep keep = Keep::kAudit, std::unique_ptr<sim::Strategy> strategy = nullptr,
                     const std::vector<sim::LoggedEvent>* expected_events = nullptr);

}  // namespace lockstep::properties
