// An example of a user's own lock recipe, tested with lockstep's property suite.
//
// MyExclusiveLock is the S1 lock ("race to create one ephemeral node; losers watch it and race
// again when it goes"), written against lockstep's contract only (zk::Session, zk::Context) on
// top of recipes::LockBase, which supplies re-entrancy, release-never-forgets-its-node and the
// lock-lost monitor: a recipe only implements attempt(). The same class runs in lockstep's
// simulator (my_lock_test.cc) and on a real ZooKeeper client.
//
// Where coroutines resume: on the session's context's executor. Single-threaded.
#pragma once

#include <memory>
#include <string>

#include "recipes/lock_base.h"
#include "recipes/registry.h"

namespace example {

class MyExclusiveLock final : public lockstep::recipes::LockBase {
 public:
  // `trust_node_exists`: the deliberate bug of broken/example-trusts-node-exists — after a
  // create that found the node there, never ask whether it is our own (from a create whose
  // reply was lost): the client then waits on its own node forever.
  MyExclusiveLock(zk::Session& session, lockstep::recipes::LockOptions options,
                  bool trust_node_exists = false)
      : LockBase(session, std::move(options),
                 trust_node_exists ? "broken/example-trusts-node-exists" : "example/my-exclusive"),
        trust_node_exists_(trust_node_exists) {}

 protected:
  zk::Task<zk::Result<lockstep::recipes::Held>> attempt(zk::Time deadline) override;

 private:
  // After a create whose outcome is unknown (timeout, cancellation): removes the node if the
  // create did make it ours, then reports `why`.
  zk::Task<zk::Result<lockstep::recipes::Held>> abandon(std::string path, zk::Error why);

  bool trust_node_exists_;
};

// The registry entry a user's tests hand to lockstep (properties::check_recipe) and the user's
// own `lockstep` binary registers (my_lockstep.cc): a correct mutex, judged on its kind's
// promises.
lockstep::recipes::RecipeInfo my_exclusive_info();

// The same lock with its deliberate bug, which liveness must catch under lost replies.
lockstep::recipes::RecipeInfo my_broken_info();

}  // namespace example
