// lockstep fidelity: running one Sequence on one backend, one operation at a time.
//
// A Driver owns kSlots sessions of one backend (a sim::World's clients, or RealSessions on one
// EventLoop connected to a harness-started server) and drives them on the caller's thread until
// a body coroutine finishes. run_sequence() spawns ONE body that, for each operation: issues it
// on its slot's session, awaits the reply, then settles (one exists() round trip on every
// connected session) so that every watch event the operation caused has reached its client
// before the next operation starts, and records a RawOutcome. Watch events are recorded by one
// task per watch, in the order the client delivers them, and attributed to the operation during
// whose reply or settle they arrived. The settle ends with a 1 ms sleep, so that every recorder
// woken during it has run before the body reads the log (the simulator's scheduler may resume a
// client's ready coroutines in any order).
//
// Nothing is normalized here: RawOutcome keeps the stat and the session ids as the backend gave
// them; compare.h decides what is comparable.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fidelity/sequence.h"
#include "zk/session.h"
#include "zk/task.h"

namespace lockstep::fidelity {

class Driver {
 public:
  virtual ~Driver() = default;
  virtual std::string name() const = 0;
  // REQUIRES: 0 <= slot < kSlots. Valid for the Driver's lifetime (also after close/reopen).
  virtual zk::Session& session(int slot) = 0;
  // Replaces the slot's (closed) handle with a new session on the same object.
  virtual void reopen(int slot) = 0;
  // Drives every session until `body` finished (true) or `limit` of the backend's time passed.
  virtual bool run(zk::Task<void> body, zk::Duration limit) = 0;
  // 1 (standalone) or 3 (an ensemble: slot i is connected to server i + 1 only, server 1
  // leads; a real ensemble's servers are renumbered so that its leader is 1).
  virtual int servers() const = 0;

  // ---- faults (sequence.h), called from the body; each puts the fault in place and returns.
  // The simulator's take effect at its next event, so the runner lets its clock move (a
  // sleep) before it relies on one; the real ones act at once (expire and restart block the
  // calling thread until done).
  // The slot's next mutation loses its reply (Lose::kReply) or its request (Lose::kRequest),
  // and the connection with it.
  virtual void lose(int slot, Lose what) = 0;
  virtual void cut(int slot) = 0;
  virtual void expire(int slot) = 0;
  // on = true: the slot can no longer reach its server, for `duration`; the simulator heals it
  // by itself then, the real proxy when partition(slot, false, ...) is called.
  virtual void partition(int slot, bool on, zk::Duration duration) = 0;
  // Server `server` (1-based, simulator numbering) goes down; restart_end(server), called
  // `down` later, starts it again. The simulator's server is back `down` after it went down;
  // the real one when restart_end returns (its JVM takes another 1-3 s to start).
  virtual void restart_begin(int server, zk::Duration down) = 0;
  virtual void restart_end(int server) = 0;
};

// One delivered event, as the client saw it: a watch's event, or a session state change from
// the slot's subscription (zk::Session::subscribe, taken when the run starts).
struct RawEvent {
  int slot = 0;
  zk::EventType type = zk::EventType::kSession;
  zk::SessionState state = zk::SessionState::kConnected;
  std::string path;           // absolute; "" for a subscription's event
  bool subscription = false;  // from subscribe(), not from a watch
  zk::Duration at{};          // when, after the operation started (the backend's clock)
};

struct RawOutcome {
  zk::Error error = zk::Error::kOk;
  std::optional<std::string> path;  // create: the created path (absolute)
  std::optional<std::string> data;  // get_data
  std::optional<zk::Stat> stat;     // create, exists, get_data, set_data, get_children (parent)
  std::optional<std::vector<std::string>> children;  // get_children, in the server's order
  std::optional<zk::SessionState> state;             // reopen: the state it reached
  std::vector<RawEvent> events;  // watch events delivered during this op and its settle
  // Every session id each slot has had so far (index = generation), to name ephemeral owners.
  std::vector<std::vector<zk::SessionId>> session_ids;
};

struct RunResult {
  bool completed = false;            // false: the body did not finish within the limit
  std::vector<RawOutcome> outcomes;  // one per operation run (all of them when completed)
  // Why it did not complete (empty when it did): its sessions never connected, the root could
  // not be made, or the body ran past the limit, with how many operations had finished. Said in
  // a report so that a run cut short tells which way it stopped.
  std::string stopped;
};

// Runs `seq` under `root` (an absolute path that does not exist yet; created first as a
// persistent node by slot 0, not recorded). REQUIRES: both slots connected.
// A fault operation's outcome is what the slot saw: the lost mutation's reply
// (kConnectionLoss), and for cut / expire / partition / restart the state the slot reached once
// it reconnected (or learned its session's end); its session events are in `events`. After a
// fault the runner waits until every affected slot has seen the disconnect and left
// kConnecting (up to 10 s of the backend's time).
RunResult run_sequence(Driver& driver, const Sequence& seq, const std::string& root);

}  // namespace lockstep::fidelity
