// lockstep properties: the real-server backend of the check engine (`lockstep check --real` and
// `--ensemble`, cli/cmd_check.cc).
//
// RealBackend runs each seed of a recipe against a running real::Cluster (Debian's ZooKeeper
// server, standalone or a 3-server ensemble, which the command starts on 127.0.0.1 and stops by
// process id): the same Workload (properties/workload.h) and the same checkers as the simulator,
// through the same engine (properties/check.h), giving the same RecipeResult. What differs from
// the simulator, honestly:
//   - Scenarios are derived from the seed (generate_real_scenario: the one generator of
//     properties/generator.h with Backend::kRealServer and the project's PRNG): the
//     seed reproduces the workload's shape and the fault plan, not the schedule, which belongs
//     to the real server, network and OS. A violating seed's report is kept
//     (RecipeResult::first_report), and its command may need a few tries to show it again.
//   - Faults are those the real fault driver injects (real/faults.h: real_fault_kinds()). Each
//     client reaches every server through its own proxies, so a fault hits one client alone.
//   - Herd-freedom is not judged (the real server has no herd counters), and the lost-wake-up
//     grace of liveness is kRealLivenessGrace (wall-clock scheduling noise), not 20 ms; it is
//     judged from 200 ms after the faults heal (plus a session timeout after a partition).
//   - A broken variant whose bug needs what a real server cannot be made to do is declined
//     (unsupported(): not_provokable_on_real gives the reason), never shown as a pass: the herd
//     variant (needs herd counters), the signed-sort variant (needs the sequence counter near
//     2^31, which only the simulator can set) and seed 001's exclusive lock as written (its
//     missed wake-up needs a delete inside one round trip; no delay fault here).
//   - A correct recipe runs a few scenarios (kRealDefaultSeeds by default); a broken variant is
//     hunted for at least kRealBrokenSeeds (CheckOptions::min_broken_seeds) and stops at the
//     first that catches it.
//
// Threads and time: everything here runs on the calling thread; waiting, wall-clock limits and
// the server live in real/ (EventLoop::run_until, Cluster); signals in host_progress.h
// (StopSignals: stopped() is true once SIGINT, SIGTERM or SIGHUP arrived while the caller's
// guard lives).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "properties/check.h"
#include "properties/claims.h"
#include "properties/scenario.h"
#include "properties/suite.h"
#include "recipes/registry.h"
#include "sim/world.h"

namespace lockstep::real {
class Cluster;
}

namespace lockstep::properties {

inline constexpr uint64_t kRealDefaultSeeds = 3;
inline constexpr uint64_t kRealBrokenSeeds = 6;
// kRealLivenessGrace: properties/generator.h (the generator sizes long holds by it).

// The fault kinds the real backend injects (real::FaultDriver::kinds()), in FaultKind order.
std::vector<sim::FaultKind> real_fault_kinds();
bool real_fault_supported(sim::FaultKind k);

// Why `recipe` cannot be provoked on a real server, or "" when it can.
std::string not_provokable_on_real(const recipes::RecipeInfo& recipe, const Claims& claims);

// The scenario of `seed` for `recipe` on a real server (servers = 3 with `ensemble`), with a
// fault plan of real kinds only, restricted to `allowed` when that is not empty. Deterministic.
Scenario generate_real_scenario(uint64_t seed, const recipes::RecipeInfo& recipe,
                                const Claims& claims, bool ensemble,
                                const std::set<sim::FaultKind>& allowed = {});

struct RealOutcome {
  SeedOutcome outcome;  // scenario, run (history, final tree; no herd, no event log), verdicts
  std::string error;    // the harness failed (no connection, interrupted): nothing was judged
};

// Runs `s` on `cluster` (which must be up) and judges it like judge() does, without
// herd-freedom and with kRealLivenessGrace. Every fault of s.faults must be a real kind.
RealOutcome run_real_scenario(real::Cluster& cluster, const recipes::RecipeInfo& recipe,
                              const Claims& claims, const Scenario& s);

// The engine's backend on `cluster` (which must be up and outlive it). Each seed gets a lock
// directory of its own; between seeds every server is brought back and a leader awaited.
class RealBackend final : public CheckBackend {
 public:
  RealBackend(real::Cluster* cluster, bool ensemble);
  std::string unsupported(const recipes::RecipeInfo& recipe, const Claims& claims) const override;
  bool run(const recipes::RecipeInfo& recipe, const Claims& claims, uint64_t seed,
           const std::set<sim::FaultKind>& faults, SeedOutcome* out, std::string* error) override;
  bool stopped() const override;
  bool keeps_reports() const override { return true; }

 private:
  real::Cluster* cluster_;
  bool ensemble_;
  uint64_t serial_ = 0;  // distinct lock directories within one server's life
};

}  // namespace lockstep::properties
