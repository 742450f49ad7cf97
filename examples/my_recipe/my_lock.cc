#include "my_lock.h"

namespace example {

using lockstep::recipes::Held;
using zk::Error;

zk::Task<zk::Result<Held>> MyExclusiveLock::abandon(std::string path, Error why) {
  // The session's requests are FIFO, so this check runs after the server handled the create.
  // The session id is read only now: a session opened just before the create had no id yet.
  // The check is asked again until it answers: a check cut off by a lost connection says
  // nothing, and giving up then would leave our node behind for the session's life.
  for (int i = 0; i < lockstep::recipes::kMaxRetries; ++i) {
    zk::Result<zk::Stat> mine = co_await check_own(path, zk::kNever);
    if (mine.ok()) {
      (void)co_await remove_own(path, session().id());
      break;
    }
    if (mine.error == Error::kNoNode || !zk::is_ambiguous(mine.error)) break;
    zk::Status w = co_await wait_connected(zk::kNever);
    if (zk::is_session_fatal(w.error)) break;  // the node went with the session
  }
  co_return zk::Result<Held>::failure(why);
}

zk::Task<zk::Result<Held>> MyExclusiveLock::attempt(zk::Time deadline) {
  const std::string path = dir() + "/lock";
  for (int round = 0; round < lockstep::recipes::kMaxRounds; ++round) {
    if (session_dead()) co_return zk::Result<Held>::failure(Error::kSessionExpired);
    zk::Result<zk::Created> c =
        co_await session().create(path, node_data(), zk::CreateMode::kEphemeral).until(deadline);
    const zk::SessionId sid = session().id();  // known once the create has reached the server
    if (c.ok()) co_return zk::Result<Held>{Error::kOk, Held{c.value.path, c.value.stat.czxid, sid}};
    if (zk::is_session_fatal(c.error)) co_return zk::Result<Held>::failure(c.error);
    if (c.error == Error::kOperationTimeout || c.error == Error::kCancelled) {
      co_return co_await abandon(path, c.error);
    }
    if (c.error == Error::kNoNode) {
      zk::Status d = co_await ensure_dir(deadline);
      if (!d.ok() && !zk::is_ambiguous(d.error)) co_return zk::Result<Held>::failure(d.error);
      continue;
    }
    if (c.error == Error::kConnectionLoss) {
      zk::Status w = co_await wait_connected(deadline);
      if (!w.ok()) co_return co_await abandon(path, w.error);
    } else if (c.error != Error::kNodeExists) {
      co_return zk::Result<Held>::failure(c.error);
    }
    // The node exists (or may): it may be ours, from a create whose reply was lost (S6).
    zk::Result<zk::Stat> own = trust_node_exists_
                                   ? zk::Result<zk::Stat>::failure(Error::kNoNode)
                                   : co_await check_own(path, deadline);
    if (own.ok()) {
      co_return zk::Result<Held>{Error::kOk, Held{path, own.value.czxid, session().id()}};
    }
    if (own.error != Error::kNoNode) {
      // Unanswered: the node may still be ours.
      if (zk::is_session_fatal(own.error)) co_return zk::Result<Held>::failure(own.error);
      if (own.error == Error::kOperationTimeout || own.error == Error::kCancelled) {
        co_return co_await abandon(path, own.error);
      }
      continue;  // a lost connection: create again (kNodeExists if it is there) and ask again
    }
    // Someone else holds it: watch it and race again when it goes.
    zk::Watch watch;
    zk::Result<zk::Stat> e = co_await session().exists(path, &watch).until(deadline);
    if (e.error == Error::kNoNode) continue;
    if (e.error == Error::kOperationTimeout || e.error == Error::kCancelled) {
      co_return zk::Result<Held>::failure(e.error);
    }
    if (!e.ok()) {
      if (zk::is_session_fatal(e.error)) co_return zk::Result<Held>::failure(e.error);
      continue;  // connection loss: look again
    }
    // Wait for the holder only until wait_limit(): a try_acquire() gives up here.
    zk::Result<zk::WatchEvent> ev = co_await watch.wait(wait_limit(deadline));
    if (ev.error == Error::kOperationTimeout || ev.error == Error::kCancelled) {
      co_return zk::Result<Held>::failure(ev.error);
    }
    if (ev.ok() && ev.value.type == zk::EventType::kSession &&
        (ev.value.state == zk::SessionState::kExpired ||
         ev.value.state == zk::SessionState::kClosed)) {
      co_return zk::Result<Held>::failure(Error::kSessionExpired);
    }
  }
  co_return zk::Result<Held>::failure(Error::kConnectionLoss);
}

lockstep::recipes::RecipeInfo my_exclusive_info() {
  lockstep::recipes::RecipeInfo info;
  info.name = "example/my-exclusive";
  info.kind = lockstep::recipes::Kind::kMutex;
  info.expected = lockstep::recipes::Expected::kCorrect;
  info.description = "a user's S1 lock: one ephemeral node, losers watch it";
  info.seed = "example";
  info.make = [](zk::Session& s, const lockstep::recipes::LockOptions& o) {
    return std::unique_ptr<lockstep::recipes::Lock>(std::make_unique<MyExclusiveLock>(s, o));
  };
  // What it claims to survive: every fault kind but an operator's deletes. Its one fixed-name
  // node cannot tell its own from the next holder's after an operator deleted it (recipes/
  // README.md, "The directory behind the recipe's back"), so it does not promise that.
  for (const zk::FaultDescriptor& d : zk::kFaultDescriptors) {
    if (d.generated && d.kind != zk::FaultKind::kDeleteNode &&
        d.kind != zk::FaultKind::kDeleteDir) {
      info.promises.survives.insert(d.kind);
    }
  }
  return info;
}

lockstep::recipes::RecipeInfo my_broken_info() {
  lockstep::recipes::RecipeInfo info;
  info.name = "broken/example-trusts-node-exists";
  info.kind = lockstep::recipes::Kind::kMutex;
  info.expected = lockstep::recipes::Expected::kBroken;
  info.description =
      "a create that finds the node there never asks whether it is its own: after a lost reply "
      "the client waits on its own node forever";
  info.seed = "example";
  info.make = [](zk::Session& s, const lockstep::recipes::LockOptions& o) {
    return std::unique_ptr<lockstep::recipes::Lock>(
        std::make_unique<MyExclusiveLock>(s, o, /*trust_node_exists=*/true));
  };
  info.exposure = lockstep::recipes::Exposure{
      .caught_by = lockstep::recipes::Property::kLiveness,
      .focus = {zk::FaultKind::kLoseNextReply}};
  return info;
}

}  // namespace example
