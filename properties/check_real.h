// lockstep properties: `lockstep check --real` and `lockstep check --ensemble` — the check
// table (recipe x property) against Debian's real ZooKeeper server.
//
// check_real_main() starts a server itself through the real/ harness (a standalone server for
// --real, a 3-server ensemble for --ensemble; 127.0.0.1, free ports, a temporary directory),
// runs every recipe and broken variant of the registry (or each --recipe) through the same
// Workload (properties/workload.h) and the same checkers as the simulator, and prints the same
// table. The server is stopped by process id when the command ends, also on failure and on
// Ctrl-C (real::InterruptGuard: the current run stops, the cluster is torn down, exit 130).
//
// What differs from the simulator, honestly:
//   - Scenarios are derived from the seed (generate_real_scenario, the project's PRNG): the
//     seed reproduces the workload's shape and the fault plan, not the schedule, which belongs
//     to the real server, network and OS. A violation prints the command that re-runs its
//     scenario, which may need a few tries to show it again.
//   - Faults are those the real harness can make (real_fault_kinds()): connection-loss (the
//     client's next create/delete under the lock is lost before the server and its connection
//     is cut: the not-applied side of an ambiguous request), lost-reply (the same request is
//     applied and its reply lost), expire (forced expiry by a second handle while the client
//     is cut off at its proxies; target holder = whoever holds then), partition (the client's
//     proxies black-hole everything for a while), server-restart (kill -9 and restart of a
//     server, or of the ensemble's current leader: target leader), cancel (the client's
//     "client" task is cancelled at its await point). Each client reaches every server
//     through its own proxies.
//   - Herd-freedom is not judged (the real server has no herd counters), and the lost-wake-up
//     grace of liveness is kRealLivenessGrace (wall-clock scheduling noise), not 20 ms; it is
//     judged from 200 ms after the faults heal (plus a session timeout after a partition).
//   - A broken variant whose bug needs what a real server cannot be made to do is shown as
//     "not provokable on real" with the reason (not_provokable_on_real), never as a pass: the
//     herd variant (needs herd counters), the signed-sort variant (needs the sequence
//     counter near 2^31, which only the simulator can set) and seed 001's exclusive lock as
//     written (its missed wake-up needs a delete inside one round trip; no delay fault here).
//   - A correct recipe runs --seeds scenarios (default kRealDefaultSeeds); a broken variant is
//     hunted for up to max(--seeds, kRealBrokenSeeds) scenarios and stops at the first that
//     catches it by its expected property.
//
// Flags: --real | --ensemble, --recipe NAME (repeatable), --seeds N, --seed S (that scenario
// only, with its report), --faults LIST (real kinds only), --json, --help. --jobs and --log
// are refused (one server, no simulator event log). Exit status: 0 when every recipe behaved as
// expected (not-provokable rows do not fail the run), 1 when a correct recipe failed or a
// provokable broken variant was not caught, 2 for a usage error, 3 when the server cannot be
// started (java or the zookeeper package missing: the message says how to install them),
// 130 when interrupted.
//
// Threads and time: everything here runs on the calling thread; waiting, wall-clock limits and
// signals live in real/ (EventLoop::run_until, Cluster, InterruptGuard). The wall-clock figure
// of the summary comes from host_seconds() (properties/check_host.cc).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <set>
#include <string>
#include <vector>

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
inline constexpr zk::Duration kRealLivenessGrace = zk::milliseconds(300);

// The fault kinds the real harness injects (zk::kRealServer in zk/faults.h), in FaultKind order.
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

int check_real_main(int argc, char** argv, std::ostream& out, std::ostream& err,
                    bool interactive = false);

}  // namespace lockstep::properties
