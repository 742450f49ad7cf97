// lockstep conformance: the seam between the conformance suite and a ZooKeeper implementation.
//
// The conformance suite (conformance/suite.h) is written once, against zk::Session only, and
// runs unchanged on every Backend: the simulator (conformance/sim_conformance_test.cc) and
// Debian's real ZooKeeper server (real/, which implements this interface). A Backend owns the
// sessions it opens and whatever drives them (a sim::World; a server process, proxies and one
// event loop). One Backend object serves one test: the suite makes a fresh one per test through a
// BackendFactory, so tests never see each other's sessions. Tests may share a server, because
// every test works only under its own fresh_root().
//
// Driving model. Test bodies are coroutines (zk::Task<void>). The test's thread calls
// run(on, body, limit); the backend spawns `body` on `on.context()` and drives everything (every
// session, the server, timers) until the body finishes or `limit` passes. A body may await the
// operations of SEVERAL sessions of this backend in one coroutine: a zk::Future resumes on the
// AWAITING task's executor (zk/wait.h, Waiter uses task->executor), so a body spawned on session
// A that awaits session B's reply resumes on A's executor. That is safe because:
//   - simulator: one thread, one event queue for the whole World;
//   - real server: ALL sessions of one Backend share ONE event loop, run on one thread (real/
//     runs it on the test's own thread inside run()), and every coroutine (the body, tasks it
//     spawns on any session's context, watch and session deliveries) resumes there. run()
//     returns only when the body is done or the limit passed.
// A body may spawn more root tasks on any session's context and join them.
// Sessions, watches and subscriptions are touched ONLY inside bodies (on the backend's thread);
// the test's thread uses nothing but Backend's own methods, and never while run() is active.
//
// Invariants every Backend keeps:
//   1. open() returns a session that is kConnected, with a valid id. Sessions live until the
//      Backend is destroyed (also after close or expiry: the handle stays valid, calls fail
//      with kInvalidState).
//   2. After run() returns (true or false), `body` never runs again: on a timeout the backend
//      stops driving it and destroys it (or leaves it suspended until the backend dies) without
//      resuming it. A timed-out body must not touch freed test state.
//   3. expire(s) returns once the SERVER has dropped the session (its ephemerals are deleted and
//      other sessions' watches have fired or are on their way), while the victim's client may
//      not know yet: it learns when it next reaches a server (a later run() delivers kExpired).
//      Expiry must look like a real timeout expiry to the victim: the victim's OWN watches must
//      not fire node events (a real session times out while its connection is down, and the
//      server drops a connection's watches with it). On the real server, forcing expiry with a
//      second handle on the victim's id+password races with the victim's reconnect (DESIGN §4);
//      the real backend should keep the victim away from the server (its proxy) until the
//      session is gone, so the victim is not connected when its ephemerals are deleted.
//   4. fresh_root() returns a new persistent node's path ("/conformance-7", ...) that exists
//      when it returns and that no other test uses. Its children start from an empty history
//      (sequence counter 0, cversion 0).
//   5. Deterministic on the simulator: same factory, same test => same event log.
#pragma once

#include <cassert>
#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "zk/error.h"
#include "zk/session.h"
#include "zk/task.h"
#include "zk/types.h"

namespace lockstep::conformance {

// Capabilities a backend may lack. A test that needs one checks supports() and skips itself with
// GTEST_SKIP and a reason when it is missing: a skip is visible in the report, never silent.
enum class Feature : uint8_t {
  // set_sequence_counter(): jump a parent's sequence counter (to test the signed 32-bit wrap
  // without 2^31 creates). Simulator only.
  kSetSequenceCounter,
  // WatchEvent::zxid of a node event names the transaction that fired it. The C client's
  // watcher callback does not carry a zxid, so the real backend may leave it 0.
  kWatchEventZxid,
};
const char* to_string(Feature f);

class Backend {
 public:
  virtual ~Backend() = default;

  // For test names and messages: "sim", "real-standalone", ...
  virtual std::string name() const = 0;
  virtual bool supports(Feature f) const = 0;

  // Opens a new client session with the requested timeout and drives until it is connected.
  // The backend owns it (invariant 1). Failing to connect is a harness failure: the backend
  // records a gtest failure (the test fails) and still returns the unconnected session.
  virtual zk::Session& open(zk::Duration session_timeout) = 0;

  // Spawns `body` on `on.context()` and drives every session of this backend until the body
  // has finished (returns true) or `limit` of the backend's time has passed (returns false;
  // invariant 2). Virtual time on the simulator, the monotonic clock on the real server.
  // REQUIRES: `on` was returned by this backend's open(); not called from inside a body.
  virtual bool run(zk::Session& on, zk::Task<void> body, zk::Duration limit) = 0;

  // Lets `d` of the backend's time pass while driving everything (heartbeats, deliveries).
  virtual void idle(zk::Duration d) = 0;

  // Forces server-side expiry of `victim` (invariant 3). REQUIRES: the server holds it.
  virtual void expire(zk::Session& victim) = 0;

  // Closes `s` cleanly (as zk::Session::close) and drives until the close completed.
  // Returns the close's result.
  virtual zk::Error close(zk::Session& s) = 0;

  // A unique persistent path for this test's nodes (invariant 4). Not from inside a body.
  virtual std::string fresh_root() = 0;

  // Feature kSetSequenceCounter: the next sequence number `parent` hands out becomes `next`.
  // REQUIRES: supports(Feature::kSetSequenceCounter); `parent` exists.
  virtual void set_sequence_counter(std::string_view parent, int32_t next) = 0;

  // ---- optional capabilities added after the first version (defaults: unsupported) ----
  // They are virtuals with defaults rather than Feature values so that adding one never breaks
  // a backend's build (a switch over Feature without the new case fails under -Werror).

  // Whether partition() works.
  virtual bool supports_partition() const { return false; }
  // Cuts `s`'s client off from every server for `d` of the backend's time, starting now: no
  // request, reply or heartbeat passes and no connection is closed (the client notices only by
  // its own read timeout); then the network heals by itself. Returns at once; the partition
  // plays out while run() / idle() drive time. Simulator: FaultKind::kPartition. Real server:
  // the session's proxy in black-hole mode, lifted by a timer on the loop.
  // REQUIRES: supports_partition().
  virtual void partition(zk::Session& s, zk::Duration d) {
    (void)s;
    (void)d;
    assert(false && "partition() on a backend that does not support it");
  }
};

// How the suite makes one Backend per test. `name` becomes part of the gtest name
// (letters, digits and '_' only).
struct BackendFactory {
  std::string name;
  std::function<std::unique_ptr<Backend>()> make;
};

// gtest prints parameters; print the factory by name.
inline std::ostream& operator<<(std::ostream& os, const BackendFactory& f) { return os << f.name; }

}  // namespace lockstep::conformance
