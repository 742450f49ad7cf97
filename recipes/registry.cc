#include "recipes/registry.h"

#include <algorithm>
#include <utility>

#include "recipes/exclusive.h"
#include "recipes/queue_lock.h"

namespace lockstep::recipes {

const char* to_string(Kind k) {
  switch (k) {
    case Kind::kMutex: return "mutex";
    case Kind::kReadWrite: return "read-write";
    case Kind::kSemaphore: return "semaphore";
    case Kind::kElection: return "election";
  }
  return "?";
}

std::set<Property> kind_promises(Kind kind) {
  std::set<Property> p{Property::kMutualExclusion, Property::kLiveness,
                       Property::kNoOrphans,       Property::kReentrancy,
                       Property::kTimeoutCleanup,  Property::kBoundedLoad,
                       Property::kProgress,        Property::kServerExclusion,
                       Property::kErrorContract,   Property::kNoLeakedWatches};
  if (kind == Kind::kMutex || kind == Kind::kElection) p.insert(Property::kFencedSafety);
  if (kind == Kind::kElection) p.insert(Property::kReportedState);
  return p;
}

const char* to_string(Expected e) {
  switch (e) {
    case Expected::kCorrect: return "correct";
    case Expected::kBroken: return "broken";
  }
  return "?";
}

namespace {

// A factory for a QueueLock with `policy` and `flaws`, named `name`.
LockFactory queue(std::string name, QueuePolicy policy, QueueFlaws flaws = {},
                  std::string marker = "lock-") {
  return [=](zk::Session& s, const LockOptions& o) -> std::unique_ptr<Lock> {
    return std::make_unique<QueueLock>(s, o, name, policy, flaws, marker);
  };
}

LockFactory exclusive(std::string name, bool seed001, bool recheck_without_sync = false) {
  return [=](zk::Session& s, const LockOptions& o) -> std::unique_ptr<Lock> {
    return std::make_unique<ExclusiveLock>(s, o, name, seed001, recheck_without_sync);
  };
}

QueueFlaws flaw(bool QueueFlaws::*field) {
  QueueFlaws f;
  f.*field = true;
  return f;
}

QueueFlaws sorted_by(SortOrder order) {
  QueueFlaws f;
  f.sort = order;
  return f;
}

RecipeInfo entry(std::string name, Kind kind, Expected expected, std::string description,
                 std::string seed, LockFactory make) {
  RecipeInfo r;
  r.name = std::move(name);
  r.kind = kind;
  r.expected = expected;
  r.description = std::move(description);
  r.seed = std::move(seed);
  r.make = std::move(make);
  return r;
}

// A correct recipe that promises `claims` beyond its kind's (and creates `nodes_per_acquire`
// lock nodes per acquire).
RecipeInfo claiming(std::set<Property> claims, uint32_t nodes_per_acquire, RecipeInfo r) {
  r.promises.claims = std::move(claims);
  r.promises.nodes_per_acquire = nodes_per_acquire;
  return r;
}
RecipeInfo claiming(std::set<Property> claims, RecipeInfo r) {
  return claiming(std::move(claims), 1, std::move(r));
}

// A recipe whose Lock several tasks of a client may use at once (Promises::shared_callers).
RecipeInfo shared(RecipeInfo r) {
  r.promises.shared_callers = true;
  return r;
}

// A semaphore that reads its capacity node (Promises::capacity_node).
RecipeInfo counted(RecipeInfo r) {
  r.promises.capacity_node = true;
  return r;
}

// A broken variant and how it is caught.
RecipeInfo caught(Exposure e, RecipeInfo r) {
  r.exposure = std::move(e);
  return r;
}

// Correct recipes first, then broken variants, each group by name.
void sort_registry(std::vector<RecipeInfo>* r) {
  std::stable_sort(r->begin(), r->end(), [](const RecipeInfo& a, const RecipeInfo& b) {
    if (a.expected != b.expected) return a.expected == Expected::kCorrect;
    return a.name < b.name;
  });
}

std::vector<RecipeInfo> build() {
  using P = Property;
  using F = zk::FaultKind;
  constexpr Expected ok = Expected::kCorrect;
  constexpr Expected bad = Expected::kBroken;
  std::vector<RecipeInfo> r;
  // ---- correct recipes ----
  // S1: unfair, and every loser watches the one node (herd): only its kind's promises.
  r.push_back(entry("exclusive", Kind::kMutex, ok,
                    "race to create one ephemeral node; losers watch it and race again on delete "
                    "(herd-prone, not fair)",
                    "S1, 001 §1", exclusive("exclusive", false)));
  // The queue recipes keep every fact of an attempt per caller task: shared callers.
  r.push_back(shared(
      claiming({P::kFifo, P::kHerdFree},
               entry("fair-mutex", Kind::kMutex, ok,
                     "Curator InterProcessMutex: ephemeral-sequential queue, watch the immediate "
                     "predecessor, re-entrant, timed, cancellable, id in the name",
                     "S2 S5 S6 S7 S9, 000 002 003 004", queue("fair-mutex", QueuePolicy::kMutex)))));
  // The same queue written the callback way: the waiter's watch callback runs on the client's
  // event dispatcher and passes the event on (zk/dispatcher.h).
  r.push_back(claiming(
      {P::kFifo, P::kHerdFree},
      entry("fair-mutex-callbacks", Kind::kMutex, ok,
            "the fair mutex with its waits written as a Java Watcher: the predecessor's watch "
            "callback runs on the client's ordered event thread and hands the event to the "
            "waiting acquire, never blocking that thread",
            "S2 S9, 000 003",
            queue("fair-mutex-callbacks", QueuePolicy::kMutex,
                  flaw(&QueueFlaws::wait_on_event_thread)))));
  // S3: fair, but every waiter watches the child list.
  r.push_back(shared(claiming(
      {P::kFifo}, entry("naive-mutex", Kind::kMutex, ok,
                        "ephemeral-sequential queue, every waiter watches the whole child list "
                        "(correct, herd effect)",
                        "S3, 004", queue("naive-mutex", QueuePolicy::kNaive)))));
  // FIFO; not herd-free: readers share a release's notification by design.
  r.push_back(shared(
      claiming({P::kFifo},
               entry("read-write", Kind::kReadWrite, ok,
                     "shared lock: a reader waits for the nearest earlier writer, a writer for the "
                     "nearest earlier node (role from LockOptions)",
                     "S4, 001 §2", queue("read-write", QueuePolicy::kReadWrite)))));
  r.push_back(shared(counted(entry(
      "semaphore", Kind::kSemaphore, ok,
      "up to max_leases holders (or the count in its capacity node): the N lowest nodes hold, "
      "waiters watch the child list and the count (herd traded for liveness when holders leave "
      "out of order)",
      "S10, 003", queue("semaphore", QueuePolicy::kSemaphore, {}, "lease-")))));
  // Herd-free: only the gate's holder waits on the lease list, and the gate is the fair mutex.
  // One acquire creates two nodes: its place in the gate's queue, then its lease.
  r.push_back(shared(counted(
      claiming({P::kHerdFree}, 2,
               entry("semaphore-gated", Kind::kSemaphore, ok,
                     "Curator InterProcessSemaphoreV2: take a fair gate mutex, create the lease, "
                     "wait on the lease list (and the capacity node) until among max_leases (or "
                     "its count), release the gate (herd-free)",
                     "S10, 003", [](zk::Session& s, const LockOptions& o) -> std::unique_ptr<Lock> {
                       return std::make_unique<GatedSemaphore>(s, o, "semaphore-gated");
                     })))));
  r.push_back(
      claiming({P::kFifo, P::kHerdFree},
               entry("election", Kind::kElection, ok,
                     "leader election on the fair mutex: acquire = become leader, release = "
                     "resign, lost() = step down",
                     "S8, 004", [](zk::Session& s, const LockOptions& o) -> std::unique_ptr<Lock> {
                       return std::make_unique<ElectionCandidate>(s, o, "election");
                     })));
  // ---- deliberately broken variants ----
  r.push_back(caught(
      {.caught_by = P::kLiveness, .focus = {F::kLoseNextReply}},
      entry("broken/no-id-in-name", Kind::kMutex, bad,
            "node name carries no client id: after an ambiguous create the client "
            "creates again and its first node is an orphan it waits behind forever",
            "S6, 004",
            queue("broken/no-id-in-name", QueuePolicy::kMutex, flaw(&QueueFlaws::no_attempt_id)))));
  r.push_back(
      caught({.caught_by = P::kTimeoutCleanup, .needs_timeouts = true},
             entry("broken/timeout-leaves-node", Kind::kMutex, bad,
                   "a timed-out acquire returns without deleting its node: the orphan blocks "
                   "every later waiter while its session lives",
                   "S5, 003",
                   queue("broken/timeout-leaves-node", QueuePolicy::kMutex,
                         flaw(&QueueFlaws::leave_node_on_timeout)))));
  r.push_back(
      caught({.caught_by = P::kMutualExclusion,
              .focus = {F::kCancel},
              .needs_timeouts = true,
              .min_clients = 3},
             entry("broken/no-relist", Kind::kMutex, bad,
                   "a waiter takes its predecessor's deletion as the grant without re-listing: "
                   "when a middle waiter gives up, two clients hold",
                   "S2, 000 003",
                   queue("broken/no-relist", QueuePolicy::kMutex,
                         flaw(&QueueFlaws::deletion_means_grant)))));
  r.push_back(caught(
      {.caught_by = P::kMutualExclusion, .focus = {F::kAbandonSession}},
      entry(
          "broken/ignores-expiry", Kind::kMutex, bad,
          "the holder never learns its session expired: it keeps believing while the "
          "next client holds",
          "S7, 004",
          queue("broken/ignores-expiry", QueuePolicy::kMutex, flaw(&QueueFlaws::ignore_expiry)))));
  r.push_back(caught({.caught_by = P::kHerdFree, .min_clients = 3},
                     entry("broken/watch-first", Kind::kMutex, bad,
                           "every waiter watches the lowest node instead of its predecessor: each "
                           "release wakes all waiters (herd)",
                           "S2, 004",
                           queue("broken/watch-first", QueuePolicy::kMutex,
                                 flaw(&QueueFlaws::watch_first_node)))));
  r.push_back(
      caught({.caught_by = P::kLiveness},
             entry("broken/seed001-exclusive", Kind::kMutex, bad,
                   "seed 001 §1 as written: latch made once outside the loop (a loser that "
                   "loses again spins) and exists-then-subscribe (a delete in between is missed "
                   "and the waiter sleeps while the lock is free)",
                   "S1, 001 §1", exclusive("broken/seed001-exclusive", true))));
  r.push_back(caught(
      {.caught_by = P::kMutualExclusion},
      entry("broken/sort-by-name", Kind::kMutex, bad,
            "children sorted by full name, not sequence: a later contender whose name "
            "sorts first believes it holds beside the holder",
            "S2, 000",
            queue("broken/sort-by-name", QueuePolicy::kMutex, sorted_by(SortOrder::kFullName)))));
  r.push_back(
      caught({.caught_by = P::kMutualExclusion},
             entry("broken/rw-sort-by-name", Kind::kReadWrite, bad,
                   "read/write lock sorting by full name: \"read-\" and \"write-\" prefixes "
                   "reorder the queue, a writer and a reader hold together",
                   "S4, 001 §2",
                   queue("broken/rw-sort-by-name", QueuePolicy::kReadWrite,
                         sorted_by(SortOrder::kFullName)))));
  r.push_back(caught(
      {.caught_by = P::kMutualExclusion, .needs_wrap = true},
      entry("broken/sort-signed", Kind::kMutex, bad,
            "sequences compared as plain int32: past 2147483647 the next node "
            "(-2147483648) sorts first and holds beside the holder",
            "S2, DESIGN §2 wrap",
            queue("broken/sort-signed", QueuePolicy::kMutex, sorted_by(SortOrder::kSignedValue)))));
  r.push_back(
      caught({.caught_by = P::kMutualExclusion},
             entry("broken/reader-ignores-writers", Kind::kReadWrite, bad,
                   "a reader holds at once without waiting for earlier writers: a reader and a "
                   "writer hold together",
                   "S4, 001 §2",
                   queue("broken/reader-ignores-writers", QueuePolicy::kReadWrite,
                         flaw(&QueueFlaws::reader_ignores_writers)))));
  r.push_back(
      caught({.caught_by = P::kLiveness, .min_clients = 4, .needs_long_holds = true},
             entry("broken/semaphore-watch-ahead", Kind::kSemaphore, bad,
                   "a waiter watches only the node N places ahead (Curator's maxLeases driver): "
                   "when holders leave out of order it sleeps while a lease is free",
                   "S10, 003",
                   queue("broken/semaphore-watch-ahead", QueuePolicy::kSemaphore,
                         flaw(&QueueFlaws::watch_lease_ahead), "lease-"))));
  r.push_back(
      caught({.caught_by = P::kMutualExclusion,
              // a lost delete reply, then a reconnect to a follower that has not applied it
              .focus = {F::kLoseNextReply, F::kLaggingFollower},
              .min_clients = 3},
             entry("broken/no-sync-recheck", Kind::kMutex, bad,
                   "the exclusive lock re-checks its node without sync after a lost reply: a "
                   "lagging server still shows the node its lost delete removed, and the "
                   "second delete removes the next holder's node",
                   "S1 S5 S6, DESIGN §2 ensemble view",
                   exclusive("broken/no-sync-recheck", false, true))));
  r.push_back(caught(
      {.caught_by = P::kLiveness,
       // a lost create reply, a reconnect to the leader, and a leader that applies late
       .focus = {F::kLoseNextReply, F::kLaggingFollower, F::kServerRestart}},
      entry("broken/sync-as-barrier", Kind::kMutex, bad,
            "after a lost create reply the fair lock looks for its node after a sync: on the "
            "leader a sync waits for nothing (ZooKeeper 3.8), so a leader that has not applied "
            "the create yet shows no node, the lock creates a second one and waits behind its "
            "own orphan",
            "S6, DESIGN §2 ensemble view",
            queue("broken/sync-as-barrier", QueuePolicy::kMutex,
                  flaw(&QueueFlaws::barrier_by_sync)))));
  r.push_back(caught({.caught_by = P::kLiveness, .focus = {F::kConnectionLoss}},
                     entry("broken/release-forgets-node", Kind::kMutex, bad,
                           "a release whose delete meets connection loss forgets the node: if the "
                           "delete was lost, the orphan blocks every waiter",
                           "S5, 004",
                           queue("broken/release-forgets-node", QueuePolicy::kMutex,
                                 flaw(&QueueFlaws::release_forgets_node)))));
  r.push_back(caught(
      {.caught_by = P::kBoundedLoad},
      entry("broken/predecessor-by-arithmetic", Kind::kMutex, bad,
            "the waiter names its predecessor lock-(own sequence - 1) instead of reading it "
            "from the list: that path does not exist (ids prefix the names, sequences have "
            "gaps), the read answers NoNode and it re-lists at once, polling while it waits",
            "S2, 000 002",
            queue("broken/predecessor-by-arithmetic", QueuePolicy::kMutex,
                  flaw(&QueueFlaws::predecessor_by_arithmetic)))));
  r.push_back(caught(
      {.caught_by = P::kProgress},
      entry("broken/restart-when-predecessor-gone", Kind::kMutex, bad,
            "a waiter that finds its predecessor gone when it goes to watch it (NoNode) deletes "
            "its own node and creates a new one, starting over at the back of the queue: the "
            "waiter behind may find that node gone in turn, and the restarts chain",
            "S2, 000 002",
            queue("broken/restart-when-predecessor-gone", QueuePolicy::kMutex,
                  flaw(&QueueFlaws::restart_when_predecessor_gone)))));
  r.push_back(caught(
      {.caught_by = P::kErrorContract, .focus = {F::kConnectionLoss}},
      entry("broken/throws-on-connection-loss", Kind::kMutex, bad,
            "a connection loss while listing escapes acquire as an exception (a Java recipe "
            "letting KeeperException out) instead of an error code after the reconnect",
            "S2, 000 004",
            queue("broken/throws-on-connection-loss", QueuePolicy::kMutex,
                  flaw(&QueueFlaws::throw_on_connection_loss)))));
  r.push_back(caught(
      {.caught_by = P::kNoLeakedWatches, .min_clients = 3},
      entry("broken/exists-watch-leak", Kind::kMutex, bad,
            "a waiter watches its predecessor with exists() instead of getData(): when the "
            "predecessor already left, exists() arms a creation watch on a sequential name that "
            "is never created again (the leak Curator's LockInternals comment warns of)",
            "003",
            queue("broken/exists-watch-leak", QueuePolicy::kMutex,
                  flaw(&QueueFlaws::watch_with_exists)))));
  QueueFlaws blocking;
  blocking.wait_on_event_thread = true;
  blocking.block_event_thread = true;
  r.push_back(caught(
      {.caught_by = P::kLiveness, .focus = {F::kConnectionLoss}},
      entry("broken/blocks-event-thread", Kind::kMutex, bad,
            "the waiter's watch callback, told of a disconnect, waits on the event thread until "
            "a session listener on that same thread says it reconnected (waitUntilConnected() "
            "in a Watcher): that listener is queued behind it, so the client's event thread is "
            "stuck and the waiter never hears its predecessor go",
            "S9, 000",
            queue("broken/blocks-event-thread", QueuePolicy::kMutex, blocking))));
  QueueFlaws trusting;
  trusting.monitor_trusts_stale_check = true;
  r.push_back(caught(
      {.caught_by = P::kReportedState,
       .focus = {F::kStall},
       .stall_task = "lock-monitor@after-check"},
      entry("broken/stale-monitor-announces", Kind::kElection, bad,
            "leadership is announced from the background grant monitor after its own check of "
            "the node (LeaderLatch's checkLeadership in a callback), without asking again "
            "whether the caller resigned meanwhile: when that task is held after the check "
            "while the caller's task releases, it announces leader for a node already deleted",
            "S7 S8, 004",
            [trusting](zk::Session& s, const LockOptions& o) -> std::unique_ptr<Lock> {
              return std::make_unique<ElectionCandidate>(s, o, "broken/stale-monitor-announces",
                                                         trusting);
            })));
  QueueFlaws hasty;
  hasty.announce_on_predecessor_delete = true;
  r.push_back(caught(
      {.caught_by = P::kReportedState, .needs_timeouts = true, .min_clients = 3},
      entry("broken/announces-on-delete", Kind::kElection, bad,
            "a candidate tells its listener it is leader as soon as the candidate it watches is "
            "deleted, before it re-lists: when that candidate gave up (a timeout), the leader "
            "ahead of it still holds; the acquire itself re-lists and stays correct",
            "S8, 004",
            [hasty](zk::Session& s, const LockOptions& o) -> std::unique_ptr<Lock> {
              return std::make_unique<ElectionCandidate>(s, o, "broken/announces-on-delete",
                                                         hasty);
            })));
  r.push_back(shared(caught(
      {.caught_by = P::kLiveness, .needs_shared_callers = true},
      entry("broken/shared-lock-state", Kind::kMutex, bad,
            "claims shared callers but keeps the node of an attempt in one member of the Lock: "
            "a second task's create overwrites the first's, the first task's release deletes "
            "the second task's node, and its own node stays: the second task re-queues behind "
            "it and waits forever",
            "S2 S5, 003 (Curator's per-thread lock data)",
            queue("broken/shared-lock-state", QueuePolicy::kMutex,
                  flaw(&QueueFlaws::one_node_member))))));
  r.push_back(counted(caught(
      {.caught_by = P::kMutualExclusion, .focus = {F::kSetCapacity}, .min_clients = 3},
      entry("broken/semaphore-cached-capacity", Kind::kSemaphore, bad,
            "reads its capacity node once, at its first acquire, and keeps the count for good: "
            "after the count is lowered it still grants up to the old count",
            "S10, 003 (Curator's SharedCountReader)",
            queue("broken/semaphore-cached-capacity", QueuePolicy::kSemaphore,
                  flaw(&QueueFlaws::cache_capacity), "lease-")))));
  r.push_back(caught(
      {.caught_by = P::kErrorContract, .focus = {F::kDeleteDir}},
      entry("broken/no-dir-recreate", Kind::kMutex, bad,
            "the lock directory is made once, at the first acquire, and trusted from then on: "
            "after an operator deletes it, every acquire fails with NoNode instead of making it "
            "again",
            "S2, 000 004",
            queue("broken/no-dir-recreate", QueuePolicy::kMutex,
                  flaw(&QueueFlaws::dir_created_once)))));
  r.push_back(caught(
      // a lagging follower still shows the reaped directory to the ensure, and a delay
      // stretches the time between the ensure and the create
      {.caught_by = P::kErrorContract, .focus = {F::kLaggingFollower, F::kDelay}},
      entry("broken/container-dir-race", Kind::kMutex, bad,
            "the lock directory is a container node, ensured before each create: when the "
            "server reaps it (empty, after its last child went) between the ensure and the "
            "create, the create's NoNode fails the acquire instead of ensuring it again",
            "S2, 003 (Curator's creatingParentContainersIfNeeded)",
            // Its queue is a container below the lock's directory (which the workload makes,
            // persistent), as Curator makes a lock's path below an application's namespace.
            [](zk::Session& s, const LockOptions& o) -> std::unique_ptr<Lock> {
              LockOptions below = o;
              below.path += "/queue";
              return std::make_unique<QueueLock>(s, below,
                                                 "broken/container-dir-race", QueuePolicy::kMutex,
                                                 flaw(&QueueFlaws::container_dir));
            })));
  r.push_back(caught(
      {.caught_by = P::kErrorContract, .focus = {F::kDeleteNode}},
      entry("broken/release-requires-node", Kind::kMutex, bad,
            "the last release is one delete whose NoNode is the release's failure: a holder "
            "whose node an operator deleted (it lost the lock unawares) reports an error a "
            "release may not (NoNodeException let out)",
            "S5 S7, 003 004",
            queue("broken/release-requires-node", QueuePolicy::kMutex,
                  flaw(&QueueFlaws::release_reports_missing_node)))));
  QueueFlaws ttl;
  ttl.ttl_nodes = zk::milliseconds(100);
  r.push_back(caught(
      {.caught_by = P::kMutualExclusion, .needs_long_holds = true},
      entry("broken/ttl-lock-nodes", Kind::kMutex, bad,
            "contender nodes are persistent TTL nodes (100 ms) instead of ephemeral ones, so that "
            "a crashed client's lock frees itself: the server deletes a holder's node once it "
            "has gone unmodified for longer than the TTL, and the next waiter holds beside it",
            "S2 S9, 003", queue("broken/ttl-lock-nodes", QueuePolicy::kMutex, ttl))));
  QueueFlaws impatient;
  impatient.steal_after = zk::milliseconds(100);
  r.push_back(caught(
      {.caught_by = P::kServerExclusion, .focus = {F::kPause}},
      entry("broken/steals-after-patience", Kind::kMutex, bad,
            "a waiter that has waited 100 ms assumes the holder died and takes the lock while "
            "the holder's node is still live: under a pause the paused holder's belief is "
            "excused (fencing rejects its writes); the server's queue shows the second grant",
            "S7, 004",
            queue("broken/steals-after-patience", QueuePolicy::kMutex, impatient))));
  sort_registry(&r);
  return r;
}

// The table, and whether anyone has read it (then it no longer changes).
struct Table {
  std::vector<RecipeInfo> recipes = build();
  bool read = false;
};

Table& table() {
  static Table t;
  return t;
}

}  // namespace

const std::vector<RecipeInfo>& registry() {
  // Built once and immutable once read: a constant table, not mutable global state.
  Table& t = table();
  t.read = true;
  return t.recipes;
}

std::string add_recipes(std::vector<RecipeInfo> recipes) {
  Table& t = table();
  if (t.read) return "the registry was read already: add recipes before anything else runs";
  std::vector<RecipeInfo> all = t.recipes;
  for (RecipeInfo& r : recipes) {
    const bool named_broken = r.name.rfind("broken/", 0) == 0;
    if (r.name.empty()) return "a recipe without a name";
    for (const RecipeInfo& other : all) {
      if (other.name == r.name) return "the name '" + r.name + "' is taken";
    }
    if (named_broken != (r.expected == Expected::kBroken)) {
      return "'" + r.name + "': a broken variant's name starts with \"broken/\", and only its";
    }
    if ((r.expected == Expected::kBroken) != r.exposure.has_value()) {
      return "'" + r.name +
             "': a broken variant says what catches it (RecipeInfo::exposure), "
             "and a correct recipe has no exposure";
    }
    if (!r.make) return "'" + r.name + "' has no factory (RecipeInfo::make)";
    all.push_back(std::move(r));
  }
  sort_registry(&all);
  t.recipes = std::move(all);
  return {};
}

const RecipeInfo* find_recipe(std::string_view name) {
  for (const RecipeInfo& r : registry()) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

}  // namespace lockstep::recipes
