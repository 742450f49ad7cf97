// lockstep conformance: small helpers shared by the suite's test bodies (internal to the suite).
//
// Everything here is written against the contract only. Helpers that await take their
// arguments by value or pointer (they are coroutines; nothing may dangle across a suspension).
// Deadlines come from the awaiting session's context, so they are virtual on the simulator.
#pragma once

#include <algorithm>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "zk/session.h"
#include "zk/task.h"
#include "zk/types.h"
#include "zk/watch.h"

namespace lockstep::conformance {

// How long a body waits for something that must happen (an event after a forced expiry, a
// watch after another session's write). Generous: reached only when the rule is broken.
inline constexpr zk::Duration kEventWait = zk::seconds(20);

inline std::string child_path(std::string_view parent, std::string_view name) {
  std::string out(parent);
  out += '/';
  out += name;
  return out;
}

// The name after the last '/'.
inline std::string last_component(std::string_view path) {
  const size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

// The suffix the server appended to `created` for a create of `requested` ("" if `created`
// does not start with `requested`).
inline std::string sequence_suffix(std::string_view created, std::string_view requested) {
  if (created.substr(0, requested.size()) != requested) return "";
  return std::string(created.substr(requested.size()));
}

inline bool is_sorted_by_name(const std::vector<std::string>& names) {
  return std::is_sorted(names.begin(), names.end());
}

inline std::vector<std::string> sorted(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  return names;
}

// Waits for a watch until `kEventWait` of `on`'s time has passed.
inline auto wait_event(const zk::Watch& w, zk::Session* on) {
  return w.wait(on->context().now() + kEventWait);
}

// A path whose parent never exists: a create of it fails at the leader (kNoNode).
inline constexpr const char* kBarrierPath = "/lockstep-conformance-no-such-parent/barrier";

// Makes `s`'s server as new as the leader before a read that must see another session's write
// (on an ensemble the session's server may lag). The barrier is a write that fails: ZooKeeper
// commits it as an error transaction in order (EveryFailedWriteTakesAZxid), and its reply, like
// any write's, comes once the session's server has applied everything committed before it. A
// sync would not do: the leader answers its own clients' syncs without waiting
// (real/FINDINGS.md item 11), and a read after one missed a write in 2-3% of one test's runs on
// the real ensemble. Failing is a test failure; returns whether it succeeded. A create cut off by
// the session's connection (lost, or declared dead by the C client's own timer:
// kOperationTimeout after 2/3 of the session timeout with nothing heard, which a real ensemble
// on a loaded 2-core machine once caused in CI) is sent again, twice at most, and each retry is
// printed: it changes nothing, and the session's server catching up is what is asked for, not
// that one connection lasts. The session itself must survive.
inline zk::Task<bool> catch_up(zk::Session* s) {
  zk::Error e = (co_await s->create(kBarrierPath, "", zk::CreateMode::kPersistent)).error;
  for (int retry = 1;
       retry <= 2 && (e == zk::Error::kConnectionLoss || e == zk::Error::kOperationTimeout);
       ++retry) {
    std::printf("[catch_up] the barrier's create failed with %s; retry %d\n", zk::error_name(e),
                retry);
    e = (co_await s->create(kBarrierPath, "", zk::CreateMode::kPersistent)).error;
  }
  EXPECT_EQ(e, zk::Error::kNoNode) << "the barrier, a create under a missing parent";
  co_return e == zk::Error::kNoNode;
}

// A round trip on `s`: its reply comes after every reply and watch event the session's FIFO
// ordered before it. Returns the round trip's error (kOk, or kNoNode for a missing path).
inline zk::Task<zk::Error> barrier(zk::Session* s, std::string path) {
  zk::Result<zk::Stat> r = co_await s->exists(std::move(path));
  co_return r.error;
}

}  // namespace lockstep::conformance
