// lockstep properties: the one scenario generator.
//
// Every scenario a check runs comes from generate(): the seeded sweep of `lockstep check`
// (generate_scenario: draws from the project's PRNG, split from the seed), the RapidCheck suites
// (properties/rc_gen.h: draws from RapidCheck, so failures shrink), the real-server backend
// (Backend::kRealServer: wall-clock timings a JVM server and the C client can keep) and explore's
// small fixed scopes (fault_parameters with no draws: one typical instance of each kind). The
// generator is written once against Draws, a small interface of random draws; the callers
// configure it with GenerateOptions. The parameters of each fault kind are drawn in one place,
// fault_parameters(): a new kind with parameters adds its case there and nowhere else.
//
// Contract of a generated scenario:
//   1. Valid for its backend: clients in [max(2, min_clients), max_clients], rounds in
//      [min_rounds, max_rounds], fault clients and servers in range, durations non-negative.
//   2. Swarm style: each allowed fault kind is enabled with probability 1/2 (focus kinds always)
//      and an enabled kind fires a skewed number of times, so some scenarios hammer one kind and
//      others mix several.
//   3. Faults take effect in the fault phase and end before heal_at; the heal phase after it is
//      fault-free (finish_scenario, or its wall-clock version on a real server).
//   4. Under RapidCheck, shrinking goes toward small scenarios: every draw shrinks toward its low
//      end and every chance toward false, so fewer clients, rounds and faults, shorter timings.
// The seeded sweep is pinned (properties/generator_test.cc): a change here must not move one of
// its draws, or every recorded seed would mean another scenario.
//
// Deterministic: the draws are the only input besides the options; no globals.
#pragma once

#include <cstdint>
#include <set>

#include "properties/scenario.h"
#include "recipes/registry.h"
#include "sim/world.h"
#include "zk/random.h"

namespace lockstep::properties {

// The random draws a generator makes. Implementations: PrngDraws (the seeded sweep and the real
// backend), rcgen::RcDraws (properties/rc_gen.h).
class Draws {
 public:
  virtual ~Draws() = default;
  virtual int64_t between(int64_t lo, int64_t hi) = 0;  // in [lo, hi]; hi >= lo
  virtual uint64_t below(uint64_t bound) = 0;           // in [0, bound); bound >= 1
  virtual bool chance(uint64_t num, uint64_t den) = 0;  // true with probability num/den
  // A duration in [lo, max(lo, hi)], in whole microseconds.
  zk::Duration between(zk::Duration lo, zk::Duration hi) {
    return zk::microseconds(between(lo.us, hi.us < lo.us ? lo.us : hi.us));
  }
};

// Draws from the project's PRNG (zk/random.h), exactly as it answers.
class PrngDraws final : public Draws {
 public:
  explicit PrngDraws(zk::Prng rng) : rng_(rng) {}
  using Draws::between;
  int64_t between(int64_t lo, int64_t hi) override { return rng_.between(lo, hi); }
  uint64_t below(uint64_t bound) override { return rng_.below(bound); }
  bool chance(uint64_t num, uint64_t den) override { return rng_.chance(num, den); }

 private:
  zk::Prng rng_;
};

// Where the scenario runs: the timings and fault parameters differ (a real server and the C
// client run on the wall clock, a JVM restart takes seconds).
enum class Backend : uint8_t { kSimulator, kRealServer };

// The eras of the seeded sweep's draws. 0: as first pinned. 1: rounds that try once without
// waiting; a leader outage longer than the session timeout that sessions survive. 2: what issue
// 17 added (in-client stalls, nodes deleted behind the clients, capacity changes).
inline constexpr uint32_t kLatestDrawEra = 2;

struct GenerateOptions {
  Backend backend = Backend::kSimulator;
  recipes::Kind kind = recipes::Kind::kMutex;
  std::set<sim::FaultKind> faults;  // kinds a scenario may draw from (swarm: a random subset)
  std::set<sim::FaultKind> focus;   // kinds drawn more often and always enabled when allowed
  bool reentrant = false;           // the recipe is re-entrant: exercise it
  bool force_timeouts = false;      // timed acquires are common (every scenario has some)
  uint32_t wrap_percent = 10;       // scenarios that start the sequence near the signed wrap
  bool ensemble = true;  // simulator: may use 3 servers (always with lagging-follower);
                         // real server: the scenario runs on a 3-server ensemble
  uint32_t min_clients = 2;
  uint32_t max_clients = 5;
  uint32_t min_rounds = 1;
  uint32_t max_rounds = 8;
  // Real server: hunt a lost wake-up (holds well beyond the liveness grace, so that a waiter
  // that sleeps while the lock has room is seen sleeping).
  bool hunt_lost_wakeup = false;
  // Simulator: the sweep's draw era (kDrawEras). Each era's draws are taken after every earlier
  // era's, so with an older era a seed derives exactly the scenario it derived then: the
  // triaged corpus keeps the scenarios its seeds once failed in.
  uint32_t draw_era = kLatestDrawEra;
  // Stalls hold this task of the client (a broken variant's Exposure::stall_task); "": drawn.
  std::string stall_task;
  // Era 2. The recipe promises shared callers: a third of the scenarios (every one when
  // forced: a broken variant that needs them) run 2..3 caller tasks per client on one Lock.
  bool shared_callers = false;
  bool force_shared_callers = false;
  // Era 2. The recipe reads a capacity node (a semaphore): when set-capacity is allowed, half
  // the scenarios (every one when it is the focus) change the count 1..3 times.
  bool capacity_node = false;
};

// A scenario from `draws` and the options (the seed is the caller's to set).
Scenario generate(Draws& draws, const GenerateOptions& options);

// The seeded sweep's scenario: generate() with PrngDraws split from `seed` ("scenario").
Scenario generate_scenario(uint64_t seed, const GenerateOptions& options);

// The kinds the seeded sweep draws only in era 2 (GenerateOptions::draw_era, after every
// earlier draw: the operator's deletes, delete-node and delete-dir), never in the swarm loop.
bool drawn_in_era_2(sim::FaultKind k);

// Sets the parameters of fault `f` (its kind, client and time already set) for scenario `s`
// (workload, servers and session timeout already set): durations, servers, targets, tasks and
// paths. `serial` numbers the scenario's faults (a foreign child's name). With `draws` ==
// nullptr nothing is drawn: one typical instance of the kind (explore's fixed scopes).
void fault_parameters(Draws* draws, Backend backend, const Scenario& s, uint32_t serial,
                      const std::set<sim::FaultKind>& focus, sim::Fault* f);

// The slack a real server's run limit needs beyond the simulator's: a JVM restart takes seconds.
constexpr zk::Duration kRealRestartSlack = zk::seconds(8);
// The grace within which a waiter must wake once the lock has room, on a real server.
constexpr zk::Duration kRealLivenessGrace = zk::milliseconds(300);

}  // namespace lockstep::properties
