// lockstep recipes: S1, the exclusive lock of seed 001 §1 — every contender races to create the
// one ephemeral node "<dir>/lock"; the winner holds; a loser watches the node (exists with a
// watch) and races again when it is deleted.
//
// Correct version (ExclusiveLock): a create whose outcome is unknown is resolved with a sync and
// exists(): a node owned by our session is ours (adopted). A release whose delete has an unknown
// outcome re-checks the same way before deleting again. The sync matters more here than for the
// queue recipes: the name is fixed, so a stale "the node is (not) ours" from a server that lags
// the lost write deletes another client's node or forgets our own (broken/no-sync-recheck).
// The grant's fencing token is the node's czxid.
// It is herd-prone by nature (every loser watches the one node) and not fair (no queue).
//
// Seed 001 as written (seed001_as_written = true), translated line by line from the post's Java:
//   CountDownLatch latch = new CountDownLatch(1);         // once, outside the retry loop
//   while (true) { try { createEphemeral(path); break; }
//     catch (NodeExists) { if (exists(path)) subscribeDataChanges(path, listener(latch));
//                          else latch.countDown(); }
//     latch.await(); }
// ZkClient's subscribeDataChanges arms its watch with a second exists(path, true) and re-arms it
// after every event; the listener counts the latch down on a delete. Two bugs follow:
//   (a) exists-then-subscribe is not atomic: a delete between the two arms a creation watch, and
//       the waiter sleeps while the lock is free until some other client creates and deletes it
//       (a lost wake-up: with no other contender, forever);
//   (b) the latch is never renewed: once counted down, await() returns at once, so a waiter that
//       loses the next race spins create/exists/subscribe without waiting (a request storm,
//       adding one more watch per turn).
//
// Where coroutines resume: on the session's context's executor. Single-threaded.
#pragma once

#include <string>

#include "recipes/lock_base.h"

namespace lockstep::recipes {

class ExclusiveLock final : public LockBase {
 public:
  // `recheck_without_sync` is broken/no-sync-recheck: after an ambiguous create or delete the
  // node is re-checked with a plain exists(), which a lagging server answers from the past.
  ExclusiveLock(zk::Session& session, LockOptions options, std::string recipe_name,
                bool seed001_as_written = false, bool recheck_without_sync = false);

  std::string node_path() const { return dir() + "/lock"; }

 protected:
  zk::Task<zk::Result<Held>> attempt(zk::Time deadline) override;

 private:
  zk::Task<zk::Result<Held>> attempt_correct(zk::Time deadline);
  zk::Task<zk::Result<Held>> attempt_seed001(zk::Time deadline);
  // Waits on a watch of the holder's node until it is deleted (kOk), the session reconnects
  // (kOk: race again) or the wait fails (timeout, cancellation, expiry).
  zk::Task<zk::Status> wait_for_delete(zk::Watch w, zk::Time deadline);

  bool seed001_;
};

}  // namespace lockstep::recipes
