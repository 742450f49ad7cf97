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
// (properties/belief.h replays the first two rules; the timeline draws lanes with it too.)
// Which checker applies to which recipe under which faults is decided by the suite
// (properties/claims.h), not here. Checkers never assert on their input: a malformed history
// is a violation with a message, so a broken recipe cannot crash the checker.
#pragma once

#include <cstdint>
#include <optional>
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
  // Set on a passing verdict whose stronger form failed where the faults excuse it: belief-level
  // exclusion under pauses or server-side expiry (a holder that could not know its session had
  // died believes on beside the next holder; fencing is what keeps the resource safe). What
  // happened, in one paragraph; not a violation.
  std::string demonstration;

  static Verdict pass(Property p) { return Verdict{p, true, {}, {}, {}}; }
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

// What the server did and what each client sent, as the simulator observed it (sim::Observer),
// placed in the history: an entry's `position` is the number of history events recorded before
// it happened, so it came after event position-1 and before event `position`. Each list is
// recorded as it happens, so positions never decrease along `nodes` nor along `activity`
// (check_server_exclusion, check_reported_state and check_bounded_load rely on it). Only the
// simulator fills it (`observed`); a backend that cannot see the server leaves it empty and the
// properties that need it are not judged.
struct ServerView {
  struct NodeChange {
    uint64_t position = 0;
    uint32_t server = 1;  // the server that applied it (1: the leader, which applies first)
    zk::Zxid zxid;
    std::string path;      // under the lock's directory
    bool created = false;  // false: deleted
    zk::SessionId owner;   // created: the ephemeral owner (invalid: persistent)
    uint32_t client = 0;   // created: the workload client whose session owns it (0: none)
  };
  struct Activity {
    enum class Kind : uint8_t {
      kRequest,         // the client sent `request`
      kNotification,    // a watch notification reached it
      kRequestsFailed,  // its library failed its outstanding requests (connection loss, ...)
      kSessionEvent,    // its library delivered a session event to its watches and listeners
    };
    uint64_t position = 0;
    uint32_t client = 0;
    Kind kind = Kind::kRequest;
    std::string request;  // kRequest: its operation and path ("get_children /l")
    // When it happened (the simulator's recorder sets it): a fault is recorded in the history
    // after everything at its instant has run, so what a fault caused at that instant comes
    // before it in history order, and only the time tells.
    std::optional<zk::Time> at;
  };
  // A watch a server still held for a client at the end of the run (after the settle), for
  // each client whose session was alive then.
  struct WatchLeft {
    uint32_t client = 0;
    std::string path;
    bool children = false;  // a get_children watch; otherwise exists or get_data
    bool exists = false;    // the node existed on the leader at the end
  };
  bool observed = false;
  std::vector<NodeChange> nodes;     // in the order the servers applied them
  std::vector<Activity> activity;    // in the order it happened
  std::vector<WatchLeft> watches_at_end;
};

// `max_holders` is the semaphore's lease count (ignored for the other kinds). With
// `informed_only` (scenarios with pauses or server-side expiry, where a holder cannot know at
// once that its session died) only beliefs held after the client was told its session expired
// or closed count: such a belief beside another holder's is a violation.
Verdict check_mutual_exclusion(const History& h, recipes::Kind kind, uint32_t max_holders,
                               bool informed_only = false);
// Both verdicts of check_mutual_exclusion on one history, from one pass over it: with
// informed_only and without (the suite shows what the faults excuse beside the first).
struct InformedExclusion {
  Verdict informed;    // check_mutual_exclusion(h, kind, max_holders, true)
  Verdict uninformed;  // check_mutual_exclusion(h, kind, max_holders, false)
};
InformedExclusion check_informed_exclusion(const History& h, recipes::Kind kind,
                                           uint32_t max_holders);
Verdict check_fenced_safety(const History& h);
Verdict check_fifo(const History& h);
struct LivenessOptions {
  zk::Time heal_at;    // the faults have ended
  zk::Duration bound;  // each acquire / release completes within this after the heal
  // Lost wake-ups: from quiet_at on (every dead session gone), no waiter may wait longer than
  // `grace` while fewer than `capacity` holders believe they hold (a semaphore's capacity as
  // its count node says, from each Op::kCapacity on), counted from the last completion, granted
  // or failed, of an acquire by a holder that was waiting before it (the queue ahead being
  // served is progress). capacity 0 = not checked.
  zk::Time quiet_at = zk::kNever;
  zk::Duration grace = zk::milliseconds(20);
  uint32_t capacity = 0;
};

// Every client that neither gave up nor crashed must have finished; every acquire and release
// must complete within `bound` after max(its invocation, heal_at); and no waiter sleeps while
// the lock has room (see LivenessOptions). A failure names the blocked clients and the wait-for
// graph: the node each one waits on (what it watches in `server`'s watch tables at the end, when
// given and observed; otherwise the node just before its own in `tree`), whose session owns that
// node and what became of its client, and what ends each chain: a cycle of clients waiting on
// each other's nodes, or an orphan node, a watch on a node already gone, or no watch at all.
Verdict check_liveness(const History& h, const LivenessOptions& o, const TreeSnapshot& tree,
                       const ServerView* server = nullptr);
Verdict check_no_orphans(const History& h, const TreeSnapshot& tree);
// A waiter that gives up (timeout, cancellation, a dead session) cannot take back the watch it
// set on its predecessor (ZooKeeper 3.8 has no watch removal in the recipes' API), so a later
// delete of that node also notifies it. The bound is therefore 1 + the number of clients whose
// acquire failed in `h` or never completed (cancelled or crashed in it) + the clients' nodes
// operator deletes took (delete-node, delete-dir faults: each node taken can leave a client, not
// told its node went, watching from a place another client then takes; a delete-dir takes every
// node under the lock at once). The nodes are counted from `server` when it observed the run,
// else each such fault counts one. A recipe that watches the wrong node still exceeds it.
Verdict check_herd_free(const std::vector<HerdSample>& herd, std::string_view lock_dir,
                        const History& h, const ServerView* server = nullptr);
Verdict check_reentrancy(const History& h);

// During one acquire a client sends the same request (operation and path) at most
// `kRepeatsPerStimulus` times per stimulus it has had since the acquire began, plus that many
// for the start. A stimulus is something a waiter may react to: a watch notification to the
// client, a node created or deleted under the lock's directory on any server (a follower's apply
// changes what its clients read), a session event its client library reported, or its library
// failing its outstanding requests, or a fault that hit the client (a cancellation). Reacting to one stimulus a correct waiter of any kind reads
// a thing once, and once more when a reply tells it the thing changed meanwhile (a re-list after
// its predecessor vanished); reactions may come late (queued session events are handled one by
// one), hence a budget that accumulates. A waiter that polls (re-lists or re-checks while
// nothing changes) exceeds it for as long as another client holds.
constexpr uint32_t kRepeatsPerStimulus = 2;
Verdict check_bounded_load(const History& h, const ServerView& v,
                           uint32_t max_repeats = kRepeatsPerStimulus);

// After `heal_at` (the faults are over), one acquire creates at most `nodes_per_acquire` lock
// nodes. An acquire is not judged when its client's session changed state (disconnected,
// expired, reopened) or it lost the lock during it: then a new node is the right answer. A
// recipe that answers a vanished predecessor by deleting and re-creating its own node goes to
// the back of the queue on each release ahead of it, and exceeds it.
Verdict check_progress(const History& h, const ServerView& v, zk::Time heal_at,
                       uint32_t nodes_per_acquire);

// At every point of the run, each node a client holds a fresh grant on (from the grant's node
// until its belief ends), while that node is live on the server, is among the granting
// positions of the live sequential nodes beside it, ordered by creation (zxid): the first one
// for a mutex or an election, the first `max_holders` for a semaphore, no earlier writer's node
// for a reader and the first one for a writer (a node's role is the role of the acquire during
// which its owner created it). Holders that believe too long are judged by
// check_mutual_exclusion; a paused holder whose session expired has no live node, so under
// pauses this property still holds for a correct recipe, and a recipe that grants beside a live
// earlier node is caught even when the earlier holder's belief is not.
Verdict check_server_exclusion(const History& h, const ServerView& v, recipes::Kind kind,
                               uint32_t max_holders);

// Every failed operation failed with an error its contract (recipes/lock.h) lists: acquire with
// kOperationTimeout, kCancelled, kConnectionLoss or a session-fatal code (kSessionExpired,
// kInvalidState, kClosing); release (and a stray release) with kNothing, kCancelled or a
// session-fatal code. And no
// operation threw: the workload records an exception out of the recipe as the operation's
// failure with text "exception: <what>" (properties/workload.cc).
Verdict check_error_contract(const History& h);
// At the end of the run, no client that finished its rounds (or gave up) and did not crash has a
// watch left on the server that can never fire: an exists or data watch on a missing node whose
// name carries a sequence suffix the directory has already handed out (the node itself existed
// in the run, or a sibling with a sequence at least as high was created). ZooKeeper never hands
// a sequence out twice, so such a watch stays in the server's table for the session's life: an
// exists() on a predecessor that is already gone arms exactly that creation watch. Watches of
// clients still waiting, and watches that can fire (a live node, a directory's children, a
// fixed name that may be created again) are not leaks.
Verdict check_no_leaked_watches(const History& h, const ServerView& v);

// Every "leader" announcement (Op::kReport, recipes/lock.h RecipeEvent) is true on the server at
// the moment it is made: the announcing client's newest live node under the lock has no live
// sequential node created before it beside it (the leader's server, in the order it applied the
// changes). A latch that tells its listener "leader" on a hunch (its predecessor's delete, a
// stale read) while another candidate is still at the head is caught even when its acquire is
// right. With `informed_only` (scenarios with pauses or server-side expiry, as for
// check_mutual_exclusion) an announcement by a client that owns no live node because the server
// ended its session counts only once the client was told its session expired or closed, or had
// released its last grant itself and not begun another acquire: before that, the announcement is as stale as the belief beside
// it, and as unavoidable.
Verdict check_reported_state(const History& h, const ServerView& v, bool informed_only);

// A probe taken while the session was disconnected is not judged (the node cannot be deleted
// before the session reconnects; no-orphans and liveness judge whether it was, later).
Verdict check_timeout_cleanup(const History& h);

}  // namespace lockstep::properties
