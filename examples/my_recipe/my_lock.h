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
  MyExclusiveLock(zk::Session& session, lockstep::recipes::LockOptions options)
      : LockBase(session, std::move(options), "example/my-exclusive") {}

 protected:
  zk::Task<zk::Result<lockstep::recipes::Held>> attempt(zk::Time deadline) override;

 private:
  // After a create whose outcome is unknown (timeout, cancellation): removes the node if the
  // create did make it ours, then reports `why`.
  zk::Task<zk::Result<lockstep::recipes::Held>> abandon(std::string path, zk::Error why);
};

// The registry entry a user's tests hand to lockstep (properties::check_recipe).
lockstep::recipes::RecipeInfo my_exclusive_info();

}  // namespace example
