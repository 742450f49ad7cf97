// lockstep simulator tests: helpers to await contract futures from plain test code.
//
// await_result() spawns a tiny root task on the client that awaits the future, then steps the
// world until the task finished (or `limit` of virtual time passed: the result is then empty).
// Everything runs on the test's thread in virtual time.
#pragma once

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

inline void run_while_empty(World& w, const bool* done, Duration limit) {
  const Time end = w.now() + limit;
  while (!*done && w.now() <= end && w.step()) {
  }
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
  const Time end = w.now() + limit;
  while (c.state() != zk::SessionState::kConnected && w.now() <= end && w.step()) {
  }
  return c.state() == zk::SessionState::kConnected;
}

}  // namespace lockstep::sim::testing
