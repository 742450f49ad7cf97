// lockstep properties: the checkers. Each takes a finished History (and, where a property is
// about what is left behind, a snapshot of the final tree or the herd counters) and returns a
// Verdict naming the events that prove it.
//
// Checkers are pure functions of their inputs: no simulator, no session, no clock. They judge
// beliefs as the workload recorded them (properties/workload.h):
//   - a client believes it holds from its fresh `ok acquire` until it invokes the release of its
//     outermost hold, or reports `info lost`, crashes, reopens or gives up;
//   - re-entrant acquires (hold_count > 1) and inner releases change the depth, not the belief;
//   - the protected resource's `ok enter/leave` are accepted tokens, `fail` are rejections.
// Which checker applies to which recipe under which faults is decided by the suite
// (properties/claims.h), not here. Checkers never assert on their input: a malformed history
// is a violation with a message, so a broken recipe cannot crash the checker.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "properties/history.h"
#include "recipes/promises.h"
#include "recipes/registry.h"
#include "zk/types.h"

namespace lockstep::properties {

// The properties and their names (recipes/promises.h: the registry states which a recipe
// claims).
using recipes::column_name;
using recipes::kPropertyCount;
using recipes::parse_property;
using recipes::Property;
using recipes::to_string;

struct Verdict {
  Property property = Property::kMutualExclusion;
  bool ok = true;
  std::string message;  // empty when ok; otherwise what happened, in one paragraph
  std::vector<uint64_t> history_indexes;  // the events of the history that prove the violation

  static Verdict pass(Property p) { return Verdict{p, true, {}, {}}; }
};

// One node of the final tree under the lock's directory.
struct NodeSnapshot {
  std::string path;
  zk::SessionId owner;       // ephemeral owner; invalid for persistent nodes
  bool owner_alive = false;  // does the server still hold the owner's session?
  zk::Zxid czxid;
};

// The lock's directory at quiescence (every node below it, parents before children).
struct TreeSnapshot {
  std::string lock_dir;
  std::vector<NodeSnapshot> nodes;
};

// Watch notifications delivered by one delete transaction (copied from the simulator's herd
// counters, so checkers stay independent of sim/).
struct HerdSample {
  zk::Zxid zxid;
  std::string path;
  uint32_t notifications = 0;
  uint32_t requests_caused = 0;
};

// `max_holders` is the semaphore's lease count (ignored for the other kinds). With
// `informed_only` (scenarios with pauses or server-side expiry, where a holder cannot know at
// once that its session died) only beliefs held after the client was told its session expired
// or closed count: such a belief beside another holder's is a violation.
Verdict check_mutual_exclusion(const History& h, recipes::Kind kind, uint32_t max_holders,
                               bool informed_only = false);
Verdict check_fenced_safety(const History& h);
Verdict check_fifo(const History& h);
struct LivenessOptions {
  zk::Time heal_at;    // the faults have ended
  zk::Duration bound;  // each acquire / release completes within this after the heal
  // Lost wake-ups: from quiet_at on (every dead session gone), no waiter may wait longer than
  // `grace` while fewer than `capacity` clients believe they hold, counted from the last grant
  // to a client that was waiting before it (the queue ahead being served is progress).
  // capacity 0 = not checked.
  zk::Time quiet_at = zk::kNever;
  zk::Duration grace = zk::milliseconds(20);
  uint32_t capacity = 0;
};

// Every client that neither gave up nor crashed must have finished; every acquire and release
// must complete within `bound` after max(its invocation, heal_at); and no waiter sleeps while
// the lock has room (see LivenessOptions). A failure names the blocked clients and what each
// waits on (its nodes and the nodes before them in `tree`).
Verdict check_liveness(const History& h, const LivenessOptions& o, const TreeSnapshot& tree);
Verdict check_no_orphans(const History& h, const TreeSnapshot& tree);
// A waiter that gives up (timeout, cancellation, a dead session) cannot take back the watch it
// set on its predecessor (ZooKeeper 3.8 has no watch removal in the recipes' API), so a later
// delete of that node also notifies it. The bound is therefore 1 + the number of clients whose
// acquire failed in `h`; a recipe that watches the wrong node still exceeds it.
Verdict check_herd_free(const std::vector<HerdSample>& herd, std::string_view lock_dir,
                        const History& h);
Verdict check_reentrancy(const History& h);
// A probe taken while the session was disconnected is not judged (the node cannot be deleted
// before the session reconnects; no-orphans and liveness judge whether it was, later).
Verdict check_timeout_cleanup(const History& h);

}  // namespace lockstep::properties
