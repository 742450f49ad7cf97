// lockstep real client: helpers shared by the real/ tests (not part of the library).
//
// Synchronous wrappers over a RealSession for test bodies that run on the EventLoop's owner
// thread: each drives the loop until the operation completes. A hang guard turns a lost
// completion into a test failure with kSystemError instead of a stuck test.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "real/event_loop.h"
#include "real/run.h"
#include "real/server.h"
#include "real/session.h"

namespace lockstep::real::testing {

// Starts a cluster or fails the test with the harness's message.
inline std::unique_ptr<Cluster> start_cluster(int servers) {
  ClusterOptions o;
  o.servers = servers;
  Cluster::StartResult r = Cluster::start(o);
  EXPECT_TRUE(r.cluster) << r.error;
  return std::move(r.cluster);
}

template <class T>
T get(EventLoop& loop, zk::Session& s, zk::Future<T> f) {
  std::optional<T> r = await_future(loop, s.context(), std::move(f));
  if (!r.has_value()) {
    ADD_FAILURE() << "operation did not complete";
    return T::failure(zk::Error::kSystemError);
  }
  return std::move(*r);
}

inline zk::Task<zk::Result<zk::WatchEvent>> wait_watch(zk::Watch w, zk::Time deadline) {
  co_return co_await w.wait(deadline);
}

inline zk::Task<zk::Result<zk::WatchEvent>> next_event(zk::SessionEvents events,
                                                       zk::Time deadline) {
  co_return co_await events.next(deadline);
}

// The watch's next event, or kOperationTimeout after `limit`.
inline zk::Result<zk::WatchEvent> wait_for(EventLoop& loop, zk::Session& s, const zk::Watch& w,
                                           zk::Duration limit = zk::seconds(10)) {
  auto r = run_task(loop, s.context(), wait_watch(w, loop.now() + limit));
  if (!r.has_value()) return zk::Result<zk::WatchEvent>::failure(zk::Error::kSystemError);
  return *r;
}

inline zk::Result<zk::WatchEvent> next_session_event(EventLoop& loop, zk::Session& s,
                                                     const zk::SessionEvents& events,
                                                     zk::Duration limit = zk::seconds(10)) {
  auto r = run_task(loop, s.context(), next_event(events, loop.now() + limit));
  if (!r.has_value()) return zk::Result<zk::WatchEvent>::failure(zk::Error::kSystemError);
  return *r;
}

// Runs the loop until the session reaches `state`; false after `limit_ms`.
inline bool wait_state(EventLoop& loop, zk::Session& s, zk::SessionState state,
                       int64_t limit_ms = 10000) {
  return loop.run_until([&] { return s.state() == state; }, limit_ms);
}

inline SessionOptions options_for(const std::string& hosts, zk::Duration timeout = zk::seconds(4)) {
  SessionOptions o;
  o.hosts = hosts;
  o.session_timeout = timeout;
  return o;
}

}  // namespace lockstep::real::testing
