// lockstep recipes: the queue of ephemeral-sequential nodes every ordered recipe is built on —
// the fair mutex (S2/S5/S6/S7, Curator's InterProcessMutex), the naive mutex (S3), the
// read/write lock (S4), the semaphore (S10) and leader election (S8) — plus the flags that turn
// it into the broken variants of the zoo.
//
// One attempt (QueueLock::attempt):
//   1. create "<dir>/_c_<client>-<n>x<random>-<marker>" ephemeral-sequential. The per-attempt
//      tag (S6) lets a create whose outcome is unknown (connection loss, timeout, cancellation)
//      be resolved: sync, list the children, and adopt the node carrying our tag if its
//      ephemeral_owner is our session; create again only when there is none.
//   2. list the children; keep those that end in a known marker plus a sequence suffix the server
//      could have produced (foreign children are ignored); sort them by sequence as serial
//      numbers relative to our own (correct across the signed 32-bit wrap); never by name.
//   3. decide by policy whether we hold; otherwise arm a watch on the one node that blocks us
//      (get_data with a watch: a predecessor already gone gives kNoNode and we re-list), or on the
//      child list for the herd-prone policies, and wait. Every wake-up re-lists (step 2).
//      A watch survives a disconnect; it is reused while still armed, so a reconnect does not
//      register a second one. After expiry the attempt fails with kSessionExpired.
//   4. on timeout or cancellation the attempt deletes its own node (retrying through connection
//      loss until done or the session is gone) and returns the error.
// The grant's fencing token is the node's czxid (from create's Stat, or from exists() when an
// ambiguous create was resolved by adoption).
//
// Where coroutines resume: on the session's context's executor. Single-threaded.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "recipes/lock_base.h"

namespace lockstep::recipes {

enum class QueuePolicy : uint8_t {
  kMutex,      // S2: the lowest node holds; a waiter watches its immediate predecessor
  kNaive,      // S3: the lowest node holds; every waiter watches the child list (herd)
  kReadWrite,  // S4: readers wait for the nearest earlier writer, writers for the nearest node
  kSemaphore,  // S10: the N lowest nodes hold; waiters watch the child list (see README)
};

// Deliberate bugs; every field false / kSequence is the correct recipe.
struct QueueFlaws {
  bool no_attempt_id = false;             // name "lock-" only; an ambiguous create is re-sent blind
  bool leave_node_on_timeout = false;     // a timed-out acquire returns without deleting its node
  bool deletion_means_grant = false;      // the predecessor's delete event is taken as the grant
  bool ignore_expiry = false;             // the holder never learns its session died
  bool watch_first_node = false;          // every waiter watches the lowest node (herd)
  SortOrder sort = SortOrder::kSequence;  // kFullName / kSignedValue are broken orders
  bool reader_ignores_writers = false;    // a reader holds at once, whatever is queued before it
  bool watch_lease_ahead = false;         // semaphore waiter watches only the node N places ahead
  bool release_forgets_node = false;      // a delete that meets connection loss is not retried
  // The waiter names its predecessor by arithmetic, our marker + (own sequence - 1), instead of
  // taking the name from the list: that path does not exist (another client's id prefix, or a
  // gap), the watch read answers NoNode, and it re-lists at once: it polls while it waits.
  bool predecessor_by_arithmetic = false;
  // A predecessor found gone when the waiter goes to watch it (NoNode: it left between the list
  // and the watch) is answered by deleting our node and creating a new one, as if starting over:
  // to the back of the queue, where the next waiter may find our node gone in turn.
  bool restart_when_predecessor_gone = false;
  // A waiter that has waited this long takes the lock, assuming the holder died (0: never).
  zk::Duration steal_after{};
  // A connection loss while listing is thrown to the caller as an exception (a Java recipe that
  // lets KeeperException.ConnectionLossException out), instead of waiting for the reconnect.
  bool throw_on_connection_loss = false;
  // The waiter watches its predecessor with exists() instead of get_data(): when the predecessor
  // left between the list and the watch, exists() answers NoNode and arms a creation watch on a
  // sequential name that is never handed out again. It re-lists like the correct recipe, so only
  // the server's watch table shows it: one watch leaked per miss, for the session's life.
  bool watch_with_exists = false;
  // The waiter announces leadership (LockOptions::report) as soon as the node it watches is
  // deleted, before it re-lists: a candidate ahead that gave up is not a leader that resigned.
  // Its acquire still re-lists and waits, so only the announcement is wrong.
  bool announce_on_predecessor_delete = false;
  // Not a flaw: the waiter is woken by a watch callback on the client's event dispatcher
  // (zk/dispatcher.h), the way a Java recipe's Watcher is, instead of awaiting the watch itself.
  bool wait_on_event_thread = false;
  // With wait_on_event_thread: the watch callback, told of a disconnect, waits on the event
  // thread until a session listener on the same thread says the client reconnected (ZkClient's
  // waitUntilConnected() called from a watcher). The listener's callback is queued behind the
  // blocked one, so it never runs: the client's event thread is stuck for good, and the waiter
  // never hears its predecessor go.
  bool block_event_thread = false;
  // LockBase::monitor_trusts_stale_check_: leadership is announced by the grant monitor after
  // its own check, even when the caller released meanwhile (kLeader for a node gone).
  bool monitor_trusts_stale_check = false;
  // The node of the current attempt is kept in one member of the Lock, not per caller task
  // (a Java recipe with an `ourPath` field used from several threads): with shared callers a
  // second task's create overwrites the first's, and the first task's release deletes the
  // second task's node, leaving its own behind.
  bool one_node_member = false;
  // Semaphores with LockOptions::capacity_path: the count is read once, at the first attempt,
  // and cached for good (never re-read, never watched): a lowered count is never obeyed.
  bool cache_capacity = false;
  // The lock directory is made once, at the first acquire, and trusted from then on: when it is
  // gone (an operator deleted it), a create's or a list's NoNode is the acquire's failure.
  bool dir_created_once = false;
  // The lock directory is a container node (ZooKeeper 3.5+, what Curator's
  // creatingParentContainersIfNeeded makes), ensured (exists, create if missing) before each
  // create: when the server reaps it, empty, between the ensure and the create, the create's
  // NoNode is the acquire's failure instead of a reason to ensure it again.
  bool container_dir = false;
  // The last release is one delete whose NoNode (the node was deleted behind the holder) is
  // the release's failure, like a recipe letting KeeperException.NoNodeException out.
  bool release_reports_missing_node = false;
  // Contender nodes are persistent-sequential TTL nodes with this TTL instead of ephemeral ones
  // ("a crashed client's lock frees itself"): the server deletes a holder's node once it has gone
  // unmodified for longer than the TTL, while the holder still holds (0: ephemeral, correct).
  zk::Duration ttl_nodes{};
  // The read barrier before re-reading after an ambiguous outcome (LockBase::read_barrier) is a
  // sync, as the ZooKeeper documentation suggests: on the leader it waits for nothing, so after
  // a lost create reply and a reconnect to a leader that has not yet applied the create, the
  // search for our node misses it, and a second create leaves the first an orphan that our
  // own new node then waits behind.
  bool barrier_by_sync = false;
};

class QueueLock : public LockBase {
 public:
  // `marker` is the base of our node names ("lock-", "lease-", "candidate-"); the read/write
  // policy uses "read-" / "write-" by role instead.
  QueueLock(zk::Session& session, LockOptions options, std::string recipe_name, QueuePolicy policy,
            QueueFlaws flaws = {}, std::string marker = "lock-");

 protected:
  zk::Task<zk::Result<Held>> attempt(zk::Time deadline) override;
  zk::Task<zk::Status> drop(Held held) override;

  // The markers of every contender this recipe's nodes compete with.
  const std::vector<std::string>& markers() const { return markers_; }

 private:
  bool dir_made_ = false;  // QueueFlaws::dir_created_once: the one ensure happened
  struct Node {
    std::string path;
    std::string name;
    zk::Sequence seq;
    zk::Zxid czxid;
    zk::SessionId session;
  };
  // What the sorted queue means for us.
  struct Verdict {
    bool holds = false;
    bool watch_children = false;
    std::string watch;  // child name to watch when !holds && !watch_children
  };

  zk::Task<zk::Result<Node>> create_contender(std::string prefix, zk::Time deadline);
  // kOk with our node carrying `prefix`, kNoNode when there is none.
  zk::Task<zk::Result<Node>> find_own(std::string prefix);
  // Ends an attempt that owns `node` with error `why`, deleting the node unless the session is
  // gone (or a flaw says to leave it). `node` is copied before the first await; it is taken by
  // reference because GCC gives every temporary that lives across a co_await its own slot in
  // the frame: attempt() has eight exits through here, and a by-value Node made each of them a
  // copy in every waiting contender's frame (704 of its 3,280 bytes).
  zk::Task<zk::Result<Held>> give_up(const Node& node, zk::Error why);
  // What the contender with `ahead` before it does: hold, or watch one node or the children.
  Verdict decide(detail::Ahead& ahead, uint32_t capacity) const;
  std::string our_marker() const;
  static std::vector<std::string> markers_of(QueuePolicy policy, const std::string& marker);

  using Inbox = zk::Mailbox<zk::Result<zk::WatchEvent>>;
  // wait_on_event_thread: registers `w`'s callback on the client's dispatcher, passing each of
  // its events to a fresh *inbox.
  void hand_to_event_thread(const zk::Watch& w, Inbox* inbox);

  QueuePolicy policy_;
  QueueFlaws flaws_;
  // block_event_thread: opened by the session listener when the client reconnects.
  std::shared_ptr<zk::Condition> reconnected_ = std::make_shared<zk::Condition>();
  std::string marker_;
  std::vector<std::string> markers_;  // markers_of(policy_, marker_)
  Held last_node_;  // flaws_.one_node_member: the node this Lock created last, for any task
  // The semaphore's capacity read from LockOptions::capacity_path (cache_capacity: once).
  std::optional<uint32_t> cached_capacity_;
  // Reads the capacity (see LockOptions::capacity_path), arming *watch on the count node when
  // `watch` is set (a creation watch when it is missing). Errors of the sync or the read.
  zk::Task<zk::Result<uint32_t>> read_capacity(zk::Time deadline, zk::Watch* watch);
};

// S8: leader election on the fair mutex. acquire() = become leader (blocks while another
// candidate leads), release() = resign, holds() = "I am the leader", lost() = "I must step down"
// (session suspended or expired). A leader whose session expires loses its node and the next
// candidate is elected.
class ElectionCandidate final : public QueueLock {
 public:
  // Announces leadership to LockOptions::report (LockBase::announce_leadership).
  ElectionCandidate(zk::Session& session, LockOptions options, std::string recipe_name,
                    QueueFlaws flaws = {});
  // The current leader's client name, read from the lowest candidate node (kNoNode: none).
  zk::Task<zk::Result<std::string>> leader();
};

// S10 without the herd (Curator's InterProcessSemaphoreV2): a contender first takes a fair
// mutex, the gate, at "<path>/locks"; holding it, it creates its lease node under
// "<path>/leases" and waits, watching the lease list, until its lease is among the max_leases
// lowest; then it releases the gate. Leases are created only by the gate holder, so only the
// gate holder ever watches the lease list: one notification per lease release (plus the gate's
// own hand-off, also one), and FIFO through the gate. Timeouts and cancellations clean both
// nodes; the grant's node (watched by the S7 monitor) is the lease. The gate is released after
// the lease is won, and that release may wait through a partition until the session expires:
// a lease lost meanwhile is released and the attempt fails with kSessionExpired.
class GatedSemaphore final : public LockBase {
 public:
  GatedSemaphore(zk::Session& session, LockOptions options, std::string recipe_name);
  RecipeStats stats() const override;

 protected:
  zk::Task<zk::Result<Held>> attempt(zk::Time deadline) override;
  zk::Task<zk::Status> drop(Held held) override;

 private:
  static LockOptions under(LockOptions o, const std::string& leaf);
  QueueLock gate_;
  QueueLock leases_;
};

}  // namespace lockstep::recipes
