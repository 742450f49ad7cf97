// lockstep recipes: what every lock recipe shares — hold counting, release that never forgets
// its node, the S7 grant monitor, and the retry helpers for the contract's ambiguous errors.
//
// A recipe derives from LockBase and implements attempt(): one acquisition that ends either with
// a node the recipe holds (a Held) or with an error after which the recipe has removed its own
// node (a broken variant may deliberately not). LockBase turns that into the Lock interface:
//   - re-entrancy: the Lock object is the holder; acquire() on a held lock adds one to the hold
//     count and returns the same grant (same node, same fencing token);
//   - shared callers (LockOptions::shared_callers, for a recipe that opts in with per_task_):
//     each caller task (zk::this_task) is its own holder, as Curator's InterProcessMutex keeps
//     its lock data per thread: its own phase, hold count, grant, try flag and grant monitor.
//     A second task's acquire queues behind the first's grant; re-entrancy is per task; a
//     release by a task that holds nothing answers kNothing. state() and lost() then speak
//     for the task that last called acquire or release; state_of / lost_of name the task;
//   - release(): the last release deletes the node, retrying through connection loss and
//     cancellation until the delete is done or the session is gone (S5); a release by a Lock
//     that holds nothing returns kNothing;
//   - safety (S7): state() is computed on each call from the session (kConnecting => kSuspended,
//     expired/closed/replaced => kLost) and from what the grant monitor learnt. The monitor is a
//     root task spawned on the session's context at each grant; it reads the session's events
//     through session.subscribe() (taken synchronously at the grant, so nothing is missed):
//     kConnecting => kSuspended; kConnected => an exists() on the grant node, kHeld again if it
//     still exists with our session id, else kLost; kExpired / kClosed => kLost. lost() waiters
//     are completed at each transition to kSuspended / kLost. The monitor arms no watch, so it
//     adds nothing to the herd figures; it is cancelled at release.
//
// Where coroutines resume: on the session's context's executor. Single-threaded.
// REQUIRES: the Lock outlives its pending operations, or the session's context is destroyed
// first (which destroys the suspended frames).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "recipes/lock.h"
#include "zk/context.h"
#include "zk/session.h"

namespace lockstep::recipes {

// Counters a recipe keeps about itself, for tests and reports. Never used for decisions.
struct RecipeStats {
  uint64_t attempts = 0;             // fresh acquisitions started (not re-entrant ones)
  uint64_t creates = 0;              // create requests sent for contender nodes
  uint64_t ambiguous_creates = 0;    // creates whose outcome was unknown (loss, timeout, cancel)
  uint64_t adopted = 0;              // nodes found again after an ambiguous create (S6)
  uint64_t relists = 0;              // get_children calls while queued
  uint64_t watches_armed = 0;        // watch requests sent while waiting
  uint64_t predecessor_gone = 0;     // the node to watch was gone before the watch was set
  uint64_t wakeups = 0;              // node events that woke a waiting acquire
  uint64_t session_wakeups = 0;      // session events that woke a waiting acquire
  uint64_t restarts = 0;             // our node vanished while queued: started over
  uint64_t cleanups = 0;             // own node removed after a timeout or a cancellation
  uint64_t remove_retries = 0;       // deletes retried after an ambiguous outcome
  uint64_t monitor_transitions = 0;  // suspended / lost / resumed transitions seen by the monitor
};

// The node a successful attempt holds.
struct Held {
  std::string path;
  zk::Zxid czxid;
  zk::SessionId session;
};

namespace detail {

// Shared between a LockBase and its grant monitor task (which may outlive a grant).
struct GrantWatch {
  uint64_t generation = 0;  // bumped at every grant and release; a stale monitor exits
  bool suspended = false;   // the monitor saw kConnecting and has not re-verified the node
  bool lost = false;        // the monitor saw expiry, or the node gone after a reconnect
  std::vector<zk::Promise<zk::Status>> waiters;  // pending lost() calls
  // Announcements (LockBase::announce_leadership): the listener, and what it was last told.
  std::function<void(RecipeEvent)> report;
  bool leader = false;

  // Tells the listener of a change (nothing when it already knows).
  void announce(RecipeEvent e) {
    const bool lead = e == RecipeEvent::kLeader;
    if (!report || lead == leader) return;
    leader = lead;
    report(e);
  }
  void notify(zk::Error e) {
    std::vector<zk::Promise<zk::Status>> w;
    w.swap(waiters);
    for (auto& p : w) p.fulfil(zk::Status::failure(e));
  }
};

}  // namespace detail

// Bounds on the recipes' loops (TIGER_STYLE: every loop has one). They are far above anything a
// correct run needs; reaching one is reported as kConnectionLoss ("could not recover").
inline constexpr int kMaxRounds = 100000;
inline constexpr int kMaxRetries = 10000;

class LockBase : public Lock {
 public:
  LockBase(zk::Session& session, LockOptions options, std::string recipe_name);
  ~LockBase() override;
  LockBase(const LockBase&) = delete;
  LockBase& operator=(const LockBase&) = delete;

  zk::Task<zk::Result<Grant>> acquire(zk::Time deadline = zk::kNever) final;
  zk::Task<zk::Result<Grant>> try_acquire() final;
  zk::Task<zk::Status> release() final;
  LockState state() const final;
  zk::Task<zk::Status> lost() final;
  LockState state_of(uint32_t task) const final;
  zk::Task<zk::Status> lost_of(uint32_t task) final;
  std::string name() const final { return recipe_name_; }

  // This recipe's counters (a recipe built of inner locks adds theirs).
  virtual RecipeStats stats() const { return stats_; }
  const LockOptions& options() const { return options_; }
  // The node of the current grant of the last caller ("" when not held).
  const std::string& held_node() const;

 protected:
  // One fresh acquisition. On error the recipe has cleaned up its own node. Every wait for
  // another holder (a watch) waits until wait_limit(deadline), so that try_acquire() gives up
  // instead of waiting; requests keep `deadline`.
  virtual zk::Task<zk::Result<Held>> attempt(zk::Time deadline) = 0;
  // How long attempt() may wait for another holder: `deadline`, or during try_acquire() not at
  // all (a time long past: the wait ends with kOperationTimeout at once).
  // These two speak for the last caller; a recipe that opts in to shared callers (per_task_)
  // names the caller task whose attempt asks (co_await zk::this_task()).
  zk::Time wait_limit(zk::Time deadline) const { return wait_limit(deadline, last_task_); }
  bool trying() const { return trying(last_task_); }
  zk::Time wait_limit(zk::Time deadline, uint32_t task) const {
    return trying(task) ? zk::Time{} : deadline;
  }
  bool trying(uint32_t task) const;
  // Gives up the node of a grant at the last release. The default deletes it, retrying through
  // ambiguous outcomes until done or the session is gone (remove_own).
  virtual zk::Task<zk::Status> drop(Held held);

  // Broken-variant hooks (the correct recipes leave them false).
  bool ignore_expiry_ = false;         // state() stays kHeld, lost() never fires (S7 broken)
  // Set by a recipe whose own state is per attempt (QueueLock, GatedSemaphore): with
  // LockOptions::shared_callers its grants are then kept per caller task. A recipe that leaves
  // it false keeps one holder per Lock object whatever the option says.
  bool per_task_ = false;
  bool release_forgets_node_ = false;  // a delete that meets connection loss is not retried
  bool recheck_without_sync_ = false;  // re-checks after an ambiguous outcome skip the barrier
  bool barrier_by_sync_ = false;       // the read barrier is a sync (no barrier on the leader)
  // Leadership is announced by the grant monitor after its own check of the node, not at the
  // grant, and without asking afterwards whether the grant it checked is still the current
  // one: a release by the caller's task that lands between the check and the announcement (the
  // monitor's task held at its "after-check" yield point) is not seen, and the monitor
  // announces kLeader for a node already gone.
  bool monitor_trusts_stale_check_ = false;

  // A recipe that announces leadership (LockOptions::report) calls this in its constructor:
  // LockBase then announces kLeader at each grant and when the S7 monitor re-verifies the node
  // after a reconnect, and kNotLeader when the grant is suspended, lost or released, or an
  // acquire fails.
  void announce_leadership();
  // Announces `e` now (recipes that announce only; nothing when the listener already knows).
  void announce(RecipeEvent e);
  // The last release passes the delete's NoNode on (a node deleted behind the holder) as its
  // failure, like a recipe calling delete and letting NoNodeException out.
  bool release_reports_missing_node_ = false;

  // ---- helpers for recipes ----
  zk::Session& session() { return session_; }
  const std::string& dir() const { return options_.path; }
  // The payload of every node the recipe creates: the client's name (observability).
  std::string node_data() const;
  // A fresh per-attempt tag: "_c_<client>-<counter>x<random>-" (S6), followed by `then` (the
  // rest of the node's name prefix, so that the name is made in one piece).
  std::string attempt_tag(std::string_view then = {});
  bool session_dead() const;
  // Waits until the session is connected: kOk, kSessionExpired, kOperationTimeout, kCancelled.
  zk::Task<zk::Status> wait_connected(zk::Time deadline);
  // Creates the lock directory and its parents (persistent) if missing; the directory itself
  // with `mode` (a broken variant's container).
  zk::Task<zk::Status> ensure_dir(zk::Time deadline,
                                  zk::CreateMode mode = zk::CreateMode::kPersistent);
  // Deletes `path` (an ephemeral of session `sid`) if it is still ours, retrying through
  // ambiguous outcomes until done or the session is gone: kOk (deleted or already gone),
  // kSessionExpired (session gone: the server removes it, or already has).
  zk::Task<zk::Status> remove_own(std::string path, zk::SessionId sid);
  // Is `path` an ephemeral of the current session? kOk + stat, kNoNode when missing or foreign.
  // Answered as of now (exists_synced), since it is asked to resolve an ambiguous outcome.
  zk::Task<zk::Result<zk::Stat>> check_own(std::string path, zk::Time deadline);
  // exists(path) answered from the ensemble's present state: read_barrier() first. After a
  // reconnect the session's server may lag by writes the session never saw a reply for (a
  // create or a delete whose reply was lost: the client's last seen zxid is older), so a plain
  // exists can still show a node the lost delete removed, or miss one the lost create made.
  // Errors of the barrier are returned as they are.
  zk::Task<zk::Result<zk::Stat>> exists_synced(std::string path, zk::Time deadline);
  // A read barrier on whichever server the session is connected to: once it returns kOk, that
  // server has applied every write committed before the barrier reached the leader, so the
  // session's next reads see them. A sync is not that barrier everywhere: ZooKeeper 3.8 serves a
  // sync that reaches the leader itself like a read, and the leader applies a commit to its own
  // copy after it has sent it to the followers, so a sync and a read on the leader can miss a
  // write a follower has already answered for (real/FINDINGS.md item 11; ZOOKEEPER-1675). A
  // write is a barrier on every server: its reply comes once its server has applied it, and a
  // failed write is committed in order like any other. So the barrier is a create of the lock
  // directory: kNodeExists when it exists (the usual answer), created when it was missing (as
  // the next acquire would), kNoNode when a parent is missing; all three are kOk here.
  zk::Task<zk::Status> read_barrier(zk::Time deadline);

  RecipeStats stats_;

 private:
  enum class Phase : uint8_t { kIdle, kAcquiring, kHeld, kReleasing };
  // What one holder (the Lock, or one caller task with shared callers) has.
  struct Holder {
    Phase phase = Phase::kIdle;
    uint32_t hold_count = 0;
    Held held;
    bool trying = false;  // inside try_acquire()
    std::shared_ptr<detail::GrantWatch> gw = std::make_shared<detail::GrantWatch>();
    zk::TaskHandle monitor;
  };
  // The holder key of caller task `task`: the task with shared callers, else 0 (the Lock).
  uint32_t key(uint32_t task) const {
    return per_task_ && options_.shared_callers ? task : 0;
  }
  Holder& holder(uint32_t task) { return holders_[key(task)]; }
  const Holder* find(uint32_t task) const;
  // Forgets an idle holder (its monitor stopped): tasks come and go.
  void forget_if_idle(uint32_t task);
  // Announces `e` to the listener through `h`'s grant watch (recipes that announce only).
  void announce_to(Holder& h, RecipeEvent e);
  bool announces_ = false;  // announce_leadership()
  LockState state_of(const Holder& h) const;
  void start_monitor(Holder& h);
  void stop_monitor(Holder& h, zk::Error why);
  static zk::Task<void> monitor(std::shared_ptr<detail::GrantWatch> gw, zk::Session* session,
                                zk::SessionEvents events, std::string node, zk::SessionId sid,
                                uint64_t generation, RecipeStats* stats, bool trust_stale);

  zk::Session& session_;
  LockOptions options_;
  std::string recipe_name_;
  std::map<uint32_t, Holder> holders_;  // by key(); absent = idle
  uint32_t last_task_ = 0;               // the task that last called acquire or release
  uint64_t attempt_counter_ = 0;
};

// Outcome of parsing one child name against the markers a recipe uses ("lock-", "read-", ...).
struct Contender {
  std::string name;
  zk::Sequence seq;
  size_t marker = 0;  // index into the markers
};

// Children that end in one of `markers` followed by a sequence suffix the server could have
// produced; foreign children are ignored. The marker is found by its last occurrence, since the
// suffix holds only digits and '-'.
std::vector<Contender> parse_contenders(const zk::Names& names,
                                        const std::vector<std::string>& markers);
std::vector<Contender> parse_contenders(const std::vector<std::string>& names,
                                        const std::vector<std::string>& markers);

// Sorts contenders in queue order. Sequences are compared as serial numbers relative to
// `reference` (our own), so the queue stays in creation order across the signed 32-bit wrap
// (2147483647 is followed by -2147483648), as long as live nodes span less than 2^31.
enum class SortOrder : uint8_t {
  kSequence,     // correct
  kFullName,     // broken: std::string order of the whole name
  kSignedValue,  // broken: plain int32 order (wrong across the wrap)
};
void sort_contenders(std::vector<Contender>* cs, zk::Sequence reference, SortOrder order);

namespace detail {
// parse_contenders / sort_contenders without copying the names (the recipes' hot path): the
// same contenders in the same order, each viewing its name in `names`, which must outlive them.
struct ContenderView {
  std::string_view name;
  zk::Sequence seq;
  size_t marker = 0;
};
void parse_contender_views(const zk::Names& names, const std::vector<std::string>& markers,
                           std::vector<ContenderView>* out);
void parse_contender_views(const std::vector<std::string>& names,
                           const std::vector<std::string>& markers,
                           std::vector<ContenderView>* out);
void sort_contender_views(std::vector<ContenderView>* cs, zk::Sequence reference, SortOrder order);

// The contenders ahead of ours in the queue, for a waiter that needs one of them (the nearest,
// the first, the nearest of a kind, the k-th) or how many there are up to a few, not the whole
// queue in order. Every answer is the contender sorting would have put at that place. Two ways:
//   - from a parsed listing (of(cs, ...)): one pass that moves those ahead to the front;
//   - from a listing's index by sequence suffix (of(names, ...), when the listing has one and
//     the order is SortOrder::kSequence): walking back from our node only as far as a question
//     needs, so the nearest node ahead costs O(log n) in a directory of n, not a read of all n
//     names (ten thousand waiters each re-reading ten thousand names was the simulator's cost).
// Both give the same answers for the same listing (tests/recipes/recipes_test.cc compares them).
class Ahead {
 public:
  // Moves the contenders ordered before the one named `mine` to the front of *cs (in no
  // particular order) and views them. nullopt when `mine` is not in *cs. *cs must outlive it.
  static std::optional<Ahead> of(std::vector<ContenderView>* cs, std::string_view mine,
                                 zk::Sequence reference, SortOrder order);
  // From a listing: its index when it has one and `order` is kSequence, else a parse of every
  // name into *scratch. nullopt when `mine` is not listed. `names`, `markers` and *scratch must
  // outlive it.
  static std::optional<Ahead> of(const zk::Names& names, const std::vector<std::string>& markers,
                                 std::string_view mine, zk::Sequence reference, SortOrder order,
                                 std::vector<ContenderView>* scratch);

  size_t size();                         // our place in the queue (0: first)
  size_t count_up_to(size_t limit);      // min(size(), limit), reading no further than needed
  const ContenderView& nearest();        // the last one ahead (REQUIRES: size() > 0)
  const ContenderView& first();          // the first in the queue (REQUIRES: size() > 0)
  // The last one ahead with this marker, or nullptr.
  const ContenderView* nearest_with_marker(size_t marker);
  // The one at place k of the queue (REQUIRES: k < size()); reorders those ahead.
  const ContenderView& at(size_t k);

 private:
  Ahead(std::vector<ContenderView>* cs, size_t size, zk::Sequence reference, SortOrder order)
      : cs_(cs), size_(size), reference_(reference), order_(order) {}
  bool before(const ContenderView& a, const ContenderView& b) const;
  // Walking mode: *cs_ holds those found so far, nearest first; reads until `enough` says so
  // for the last one added, or none are left.
  template <class Enough>
  void walk(Enough enough);
  void walk_all();

  std::vector<ContenderView>* cs_;
  size_t size_;  // parsed mode: those ahead, at the front of *cs_
  zk::Sequence reference_;
  SortOrder order_;
  // Walking mode (names_ set): the listing, its markers, our name, whether the walk ended.
  const zk::Names* names_ = nullptr;
  const std::vector<std::string>* markers_ = nullptr;
  std::string_view mine_;
  bool walked_ = false;
};
}  // namespace detail

}  // namespace lockstep::recipes
