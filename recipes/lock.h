// lockstep recipes: the one interface every lock recipe presents to workloads and tests.
//
// A Lock is one client's handle on one lock recipe instance (a mutex, one side of a read/write
// lock, a semaphore lease, or a candidacy in a leader election), bound to one zk::Session. It is
// written only against the contract (zk/): the same code runs in the simulator and on the real
// ZooKeeper client. All methods are called, and all coroutines resume, on the session's context's
// executor; a Lock is not thread-safe and is used by one task at a time (re-entrant acquire by
// the same holder is the exception the mutex documents) — unless it was made with
// LockOptions::shared_callers by a recipe that promises them (Promises::shared_callers): then
// several tasks of the client may use it at once and each caller task (zk::this_task) is its
// own holder, as Curator's InterProcessMutex, whose lock data is per thread, is used from
// several threads.
//
// Safety is reported, not assumed: a holder learns that its lock is no longer safe to use
// through state() / holds() and through lost(), which completes when the grant is suspended
// (connection lost: the lock may still be ours, but we cannot know) or lost (session expired,
// or the lock node is gone). A protected resource must check the fencing token, because a
// paused holder can act on a belief its session no longer backs.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "zk/context.h"
#include "zk/error.h"
#include "zk/session.h"
#include "zk/types.h"

namespace lockstep::recipes {

enum class LockState : uint8_t {
  kIdle,       // not held, not trying
  kAcquiring,  // acquire() in progress
  kHeld,       // granted and, as far as this client knows, still ours
  kSuspended,  // granted, but the connection is lost: not safe to act on until reconnected
  kLost,       // granted, then lost (session expired or node gone): never safe again
};
const char* to_string(LockState s);

// What a successful acquire returns.
struct Grant {
  // Monotonically increasing per grant of this lock (the lock node's czxid): a protected
  // resource rejects a token lower than one it has already accepted.
  int64_t fencing_token = 0;
  std::string node;         // the full path of the node that represents the grant
  uint32_t hold_count = 1;  // re-entrant depth after this acquire (1 for a fresh grant)
};

enum class Role : uint8_t { kExclusive, kRead, kWrite };
// "exclusive", "read", "write" (inline: the history and checkers use it without the library).
inline const char* to_string(Role r) {
  switch (r) {
    case Role::kExclusive: return "exclusive";
    case Role::kRead: return "read";
    case Role::kWrite: return "write";
  }
  return "?";
}

// A state change a recipe announces to its application, as a leader latch calls its listener
// ("isLeader" / "notLeader"). Recipes that announce say so in their registration; the workload
// records each announcement in the history, and reported-state judges it against the server:
// a client that announces kLeader must own a live node at the head of the queue then.
enum class RecipeEvent : uint8_t { kLeader, kNotLeader };
inline const char* to_string(RecipeEvent e) {
  return e == RecipeEvent::kLeader ? "leader" : "not-leader";
}

struct LockOptions {
  std::string path;              // the lock's directory (e.g. "/locks/orders"); created if missing
  Role role = Role::kExclusive;  // kRead / kWrite for read/write locks
  uint32_t max_leases = 1;       // semaphores: how many holders at once
  std::string client_name;       // for node names and logs ("c3")
  // Where the recipe announces its state changes (may be empty: nobody listens). Called on the
  // session's executor, synchronously, at the moment the recipe decides.
  std::function<void(RecipeEvent)> report;
  // Several tasks of the client use this Lock at once; each caller task is its own holder
  // (honoured by recipes whose promises say shared_callers; see the header comment).
  bool shared_callers = false;
  // Semaphores: a node whose data is the lease count as a decimal number (Curator's
  // SharedCount beside an InterProcessSemaphoreV2). When set, the recipe reads it, after a
  // sync, at every decision and watches it while it waits, so a new count takes effect for the
  // grants that follow (holders above a lowered count keep their leases). A missing node, or
  // data that is not a count in 1..2^31-1, means max_leases.
  std::string capacity_path;
};

class Lock {
 public:
  virtual ~Lock() = default;

  // Acquires, waiting until `deadline` at the latest. Errors: kOperationTimeout (deadline
  // passed; the recipe has removed its own node), kCancelled (the task was cancelled; node
  // removed), kSessionExpired / kInvalidState / kClosing (the session died or was closed: the
  // codes zk::is_session_fatal names), kConnectionLoss only if the recipe could not recover. On
  // success the grant carries the fencing token. Nothing else, and no exception
  // (error-contract judges both). In particular never kNoNode: a lock directory deleted behind
  // the recipe (an operator's delete, a reaped container) is created again.
  virtual zk::Task<zk::Result<Grant>> acquire(zk::Time deadline = zk::kNever) = 0;

  // Acquires only if no other holder must be waited for (Curator's acquire(0, ...)): the
  // recipe's requests run to completion, and when it would have to wait it removes its node and
  // fails with kOperationTimeout. Other errors as acquire(). The default calls acquire() with a
  // deadline already past, which a recipe may treat as "give up before asking"; LockBase's
  // recipes implement it (LockBase::wait_limit).
  virtual zk::Task<zk::Result<Grant>> try_acquire() { co_return co_await acquire(zk::Time{}); }

  // Releases one hold. The last release deletes the recipe's node; a connection loss during
  // that delete is retried until done or the session is gone — the node is never forgotten.
  // Errors: kNothing (see below), kCancelled, and the session-fatal codes.
  // Errors: kNothing when the caller does not hold the lock (release by a non-owner). A lost
  // grant (kLost) is released with kOk: its node went with the session. So is a grant whose
  // node was deleted behind the holder (an operator's delete): the lock was lost unawares.
  virtual zk::Task<zk::Status> release() = 0;

  virtual LockState state() const = 0;
  bool holds() const { return state() == LockState::kHeld; }

  // Completes (kOk) at the next transition of a held lock to kSuspended or kLost, or at once
  // when it is already in one of those states. Completes with kNothing when the lock is not
  // held, or is released while the call waits; kCancelled when the waiting task is cancelled.
  virtual zk::Task<zk::Status> lost() = 0;

  // With shared callers: the state of the grant of caller task `task` (the id co_await
  // zk::this_task() gave it), and lost() for that grant. A recipe without shared callers has
  // one holder, and these are state() and lost().
  virtual LockState state_of(uint32_t task) const {
    (void)task;
    return state();
  }
  virtual zk::Task<zk::Status> lost_of(uint32_t task) {
    (void)task;
    return lost();
  }

  // The recipe's name in the registry ("fair-mutex", ...).
  virtual std::string name() const = 0;
};

}  // namespace lockstep::recipes
