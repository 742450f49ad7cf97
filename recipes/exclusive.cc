#include "recipes/exclusive.h"

#include <utility>

namespace lockstep::recipes {

using zk::Error;

namespace {

zk::Result<Held> fail(Error e) {
  return zk::Result<Held>::failure(zk::is_session_fatal(e) ? Error::kSessionExpired : e);
}

}  // namespace

ExclusiveLock::ExclusiveLock(zk::Session& session, LockOptions options, std::string recipe_name,
                             bool seed001_as_written, bool recheck_without_sync)
    : LockBase(session, std::move(options), std::move(recipe_name)), seed001_(seed001_as_written) {
  recheck_without_sync_ = recheck_without_sync;
}

zk::Task<zk::Result<Held>> ExclusiveLock::attempt(zk::Time deadline) {
  if (seed001_) {
    // The seed's namespace node is created up front, as the post's code does.
    zk::Status d = co_await ensure_dir(deadline);
    if (!d.ok()) co_return fail(d.error);
    co_return co_await attempt_seed001(deadline);
  }
  co_return co_await attempt_correct(deadline);
}

zk::Task<zk::Status> ExclusiveLock::wait_for_delete(zk::Watch w, zk::Time deadline) {
  for (int i = 0; i < kMaxRetries; ++i) {
    // A watch armed by a reply that arrived after the session died never hears of the death.
    if (session_dead()) co_return zk::Status::failure(Error::kSessionExpired);
    zk::Result<zk::WatchEvent> ev = co_await w.wait(wait_limit(deadline));
    if (!ev.ok()) {
      if (ev.error == Error::kNothing) co_return zk::Status{};  // never armed: race again
      co_return zk::Status::failure(ev.error);
    }
    if (ev.value.type != zk::EventType::kSession) {
      ++stats_.wakeups;
      co_return zk::Status{};
    }
    ++stats_.session_wakeups;
    const zk::SessionState s = ev.value.state;
    if (s == zk::SessionState::kExpired || s == zk::SessionState::kClosed) {
      co_return zk::Status::failure(Error::kSessionExpired);
    }
    if (s == zk::SessionState::kConnected) co_return zk::Status{};  // race again
    // kConnecting: the watch stays armed; keep waiting for the reconnect or the delete.
  }
  co_return zk::Status::failure(Error::kConnectionLoss);
}

zk::Task<zk::Result<Held>> ExclusiveLock::attempt_correct(zk::Time deadline) {
  const std::string path = node_path();
  bool unsure = false;       // a create of ours may have been applied
  Error abort = Error::kOk;  // timeout / cancellation seen while unsure: clean up, then report
  for (int round = 0; round < kMaxRounds; ++round) {
    if (unsure) {
      // No deadline: we must know. Synced: a lagging server could miss our node, or show the
      // one it replaced, and we would report a timeout while our node holds the lock.
      zk::Result<zk::Stat> e = co_await exists_synced(path, zk::kNever);
      if (e.ok() && e.value.ephemeral_owner == session().id()) {
        if (abort != Error::kOk) {
          ++stats_.cleanups;
          (void)co_await remove_own(path, session().id());
          co_return fail(abort);
        }
        ++stats_.adopted;
        co_return zk::Result<Held>{Error::kOk, Held{path, e.value.czxid, session().id()}};
      }
      if (e.ok() || e.error == Error::kNoNode) {
        unsure = false;
        if (abort != Error::kOk) co_return fail(abort);
      } else {
        if (zk::is_session_fatal(e.error)) co_return fail(e.error);
        if (e.error == Error::kCancelled && abort == Error::kOk) abort = Error::kCancelled;
        if (e.error == Error::kConnectionLoss) (void)co_await wait_connected(zk::kNever);
        continue;
      }
    }
    if (session().context().now() >= deadline) co_return fail(Error::kOperationTimeout);
    ++stats_.creates;
    zk::Result<zk::Created> c =
        co_await session().create(path, node_data(), zk::CreateMode::kEphemeral).until(deadline);
    if (c.ok()) {
      co_return zk::Result<Held>{Error::kOk, Held{path, c.value.stat.czxid, session().id()}};
    }
    if (c.error == Error::kNoNode) {
      zk::Status d = co_await ensure_dir(deadline);
      if (!d.ok()) co_return fail(d.error);
      continue;
    }
    if (zk::is_session_fatal(c.error)) co_return fail(c.error);
    if (zk::is_ambiguous(c.error)) {
      ++stats_.ambiguous_creates;
      unsure = true;
      if (c.error != Error::kConnectionLoss) {
        abort = c.error;
        continue;
      }
      zk::Status w = co_await wait_connected(deadline);
      if (zk::is_session_fatal(w.error)) co_return fail(w.error);
      if (!w.ok()) abort = w.error;
      continue;
    }
    if (c.error != Error::kNodeExists) co_return fail(c.error);

    // Lost the race: watch the holder's node and race again when it goes.
    zk::Watch w;
    ++stats_.watches_armed;
    zk::Result<zk::Stat> e = co_await session().exists(path, &w).until(deadline);
    if (e.ok()) {
      if (e.value.ephemeral_owner == session().id()) {  // ours after all (a late create)
        ++stats_.adopted;
        co_return zk::Result<Held>{Error::kOk, Held{path, e.value.czxid, session().id()}};
      }
      zk::Status s = co_await wait_for_delete(w, deadline);
      if (!s.ok()) co_return fail(s.error);  // we own no node: nothing to clean
      continue;
    }
    if (e.error == Error::kNoNode) {  // released in between: race again at once
      ++stats_.predecessor_gone;
      continue;
    }
    if (e.error != Error::kConnectionLoss) co_return fail(e.error);
    zk::Status cw = co_await wait_connected(deadline);
    if (!cw.ok()) co_return fail(cw.error);
  }
  co_return fail(Error::kConnectionLoss);
}

zk::Task<zk::Result<Held>> ExclusiveLock::attempt_seed001(zk::Time deadline) {
  const std::string path = node_path();
  bool latch_open = false;  // new CountDownLatch(1), created once, outside the loop
  for (int round = 0; round < kMaxRounds; ++round) {
    if (session().context().now() >= deadline) co_return fail(Error::kOperationTimeout);
    ++stats_.creates;
    zk::Result<zk::Created> c =
        co_await session().create(path, node_data(), zk::CreateMode::kEphemeral);
    if (c.ok()) {
      co_return zk::Result<Held>{Error::kOk, Held{path, c.value.stat.czxid, session().id()}};
    }
    if (c.error != Error::kNodeExists) {
      // ZkClient retries until connected; anything else is thrown to the caller.
      if (c.error != Error::kConnectionLoss) co_return fail(c.error);
      zk::Status w = co_await wait_connected(deadline);
      if (!w.ok()) co_return fail(w.error);
      continue;
    }
    // if (zkClient.exists(path)) subscribeDataChanges(...) else countDownLatch.countDown();
    zk::Result<zk::Stat> e = co_await session().exists(path);
    zk::Watch listener;
    if (e.ok()) {
      ++stats_.watches_armed;
      (void)co_await session().exists(path, &listener);  // ZkClient.watchForData
    } else {
      latch_open = true;
    }
    // countDownLatch.await(): returns at once once the latch is open — and it stays open.
    for (int j = 0; !latch_open && j < kMaxRetries; ++j) {
      zk::Result<zk::WatchEvent> ev = co_await listener.wait(wait_limit(deadline));
      if (!ev.ok() && ev.error != Error::kNothing) co_return fail(ev.error);
      if (ev.ok() && ev.value.type == zk::EventType::kDeleted) {
        ++stats_.wakeups;
        latch_open = true;  // handleDataDeleted: countDown()
        break;
      }
      if (ev.ok() && ev.value.type == zk::EventType::kSession) {
        ++stats_.session_wakeups;
        const zk::SessionState s = ev.value.state;
        if (s == zk::SessionState::kExpired || s == zk::SessionState::kClosed) {
          co_return fail(Error::kSessionExpired);
        }
        if (listener.armed()) continue;
      }
      // A creation or data event (or a watch that did not arm): ZkClient re-subscribes.
      zk::Watch again;
      ++stats_.watches_armed;
      (void)co_await session().exists(path, &again);
      listener = again;
    }
  }
  co_return fail(Error::kConnectionLoss);
}

}  // namespace lockstep::recipes
