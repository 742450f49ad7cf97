// lockstep simulator tests: helpers to await contract futures from plain test code.
//
// quiet() gives the options of a world whose event log no test reads; run_until() steps the
// world until a condition holds, within a limit of virtual time.
//
// await_result() spawns a tiny root task on the client that awaits the future, then steps the
// world until the task finished (or `limit` of virtual time passed: the result is then empty).
// Everything runs on the test's thread in virtual time.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

#include "sim/world.h"
#include "zk/session.h"

namespace lockstep::sim::testing {

template <class R>
zk::Task<void> store_result(zk::Future<R> f, std::optional<R>* out) {
  out->emplace(co_await std::move(f));
}

template <class R>
zk::Task<void> store_task(zk::Task<R> t, std::optional<R>* out) {
  out->emplace(co_await std::move(t));
}

// Options for a world whose event log a test does not read: seed `seed`, no log recorded.
inline WorldOptions quiet(uint64_t seed = 1) {
  WorldOptions o;
  o.seed = seed;
  o.record_log = false;
  return o;
}

// Steps until `pred` holds or `limit` of virtual time passed; returns pred().
template <class Pred>
bool run_until(World& w, Pred pred, Duration limit = zk::seconds(30)) {
  const Time end = w.now() + limit;
  while (!pred() && w.now() <= end && w.step()) {
  }
  return pred();
}

inline void run_while_empty(World& w, const bool* done, Duration limit) {
  run_until(
      w, [done] { return *done; }, limit);
}

// Awaits `f` on client `c`; empty if it did not complete within `limit`.
template <class R>
std::optional<R> await_result(World& w, Client& c, zk::Future<R> f,
                              Duration limit = zk::seconds(60)) {
  std::optional<R> out;
  bool done = false;
  struct Flag {
    static zk::Task<void> run(zk::Future<R> f, std::optional<R>* out, bool* done) {
      out->emplace(co_await std::move(f));
      *done = true;
    }
  };
  c.spawn(Flag::run(std::move(f), &out, &done), "test-await");
  run_while_empty(w, &done, limit);
  return out;
}

// Awaits a watch on client `c`; empty if nothing arrived within `limit`.
inline std::optional<zk::Result<zk::WatchEvent>> await_watch(World& w, Client& c,
                                                             const zk::Watch& watch,
                                                             Duration limit = zk::seconds(60)) {
  std::optional<zk::Result<zk::WatchEvent>> out;
  bool done = false;
  struct Flag {
    static zk::Task<void> run(zk::Watch watch, std::optional<zk::Result<zk::WatchEvent>>* out,
                              bool* done) {
      out->emplace(co_await watch.wait());
      *done = true;
    }
  };
  c.spawn(Flag::run(watch, &out, &done), "test-watch");
  run_while_empty(w, &done, limit);
  return out;
}

// Takes the next session event of a subscription; empty if none arrived within `limit`.
inline std::optional<zk::Result<zk::WatchEvent>> await_event(World& w, Client& c,
                                                             zk::SessionEvents events,
                                                             Duration limit = zk::seconds(60)) {
  std::optional<zk::Result<zk::WatchEvent>> out;
  bool done = false;
  struct Flag {
    static zk::Task<void> run(zk::SessionEvents events,
                              std::optional<zk::Result<zk::WatchEvent>>* out, bool* done) {
      out->emplace(co_await events.next());
      *done = true;
    }
  };
  c.spawn(Flag::run(std::move(events), &out, &done), "test-events");
  run_while_empty(w, &done, limit);
  return out;
}

// Steps until the client is connected (or the limit passes); returns whether it is.
inline bool wait_connected(World& w, Client& c, Duration limit = zk::seconds(10)) {
  return run_until(
      w, [&c] { return c.state() == zk::SessionState::kConnected; }, limit);
}

// kLaggingFollower: server `server` applies committed writes `extra` late for `duration`.
inline Fault lagging(uint32_t server, Time at, Duration duration, Duration extra) {
  Fault f;
  f.kind = FaultKind::kLaggingFollower;
  f.at = at;
  f.server = server;
  f.duration = duration;
  f.extra = extra;
  return f;
}

}  // namespace lockstep::sim::testing
