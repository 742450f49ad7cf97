// lockstep properties: the history of one workload run, in the Jepsen style.
//
// A History is the ordered list of everything the checkers may look at: each client operation
// as an invocation and its completion (kInvoke, then kOk or kFail), and facts that are not
// operations (kInfo: a lock-lost notification, a new session, a fault taking effect, a client
// giving up or finishing, a probe of the tree). Every event carries the virtual (or monotonic)
// time, the 1-based client index (0 = the world) and the client's session id at that moment;
// with shared callers, an operation also names its caller task (`task`): a holder is a
// (client, task) pair.
//
// Order: events are appended in the order they happened on the single executor thread, and
// `index` is that order. Checkers reason in index order, never by time alone (several events
// share an instant in the simulator). A History is a plain value: it is built by the workload
// (properties/workload.h), by a test by hand, or loaded from a trace, and never changes after
// the run. Not thread-safe: one writer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "recipes/lock.h"
#include "zk/error.h"
#include "zk/types.h"

namespace lockstep::properties {

enum class Type : uint8_t {
  kInvoke,  // an operation started
  kOk,      // it completed successfully
  kFail,    // it completed with an error (`error`); for the resource: the token was rejected
  kInfo,    // a fact that is not an operation
};

enum class Op : uint8_t {
  kAcquire,       // invoke / ok (token, node, hold_count) / fail (error, state after)
  kRelease,       // invoke (hold_count = depth before) / ok or fail (state after)
  kStrayRelease,  // a release by a client that holds nothing: must fail with kNothing
  kEnter,         // the protected resource: ok = token accepted, fail = token rejected
  kLeave,         // the protected resource, as kEnter
  kLost,          // info: the lock reported kSuspended or kLost (state) to its holder
  kProbe,         // info: the nodes the session owns under the lock after a failed acquire;
                  // error = kConnectionLoss when the session was not connected (it could not
                  // have deleted them yet)
  kReopen,        // info: the client replaced its dead session by a new one
  kGiveUp,        // info: the client stops for good (it is no longer a waiter)
  kDone,          // info: the client finished all its rounds
  kCrash,         // info: the client process died (its beliefs end with it)
  kFault,         // info: a planned fault took effect (`text` describes it)
  kSession,       // info: the client library reported a session state (`session_state`)
  kReport,        // info: the recipe announced a state change (`text`: "leader", "not-leader";
                  // recipes/lock.h RecipeEvent)
  kCapacity,      // info (client 0): the semaphore's capacity node was set to `token` leases,
                  // at the leader, at `at` (a set-capacity fault)
};

const char* to_string(Type t);
const char* to_string(Op op);

struct Event {
  uint64_t index = 0;
  zk::Time at;
  uint32_t client = 0;
  // The caller task within the client (1-based) when the client runs several caller tasks on one
  // Lock (shared callers): each task is its own holder. 0 for a client's only caller and for
  // facts about the whole client (session, reopen, give-up, done, crash, fault).
  uint32_t task = 0;
  zk::SessionId session;
  Type type = Type::kInfo;
  Op op = Op::kFault;
  zk::Error error = zk::Error::kOk;
  int64_t token = 0;        // fencing token (acquire ok, enter, leave)
  uint32_t hold_count = 0;  // acquire ok: depth after; release invoke: depth before
  recipes::Role role = recipes::Role::kExclusive;
  recipes::LockState state = recipes::LockState::kIdle;  // lock state after (fail, release, lost)
  zk::SessionState session_state = zk::SessionState::kConnected;  // kSession events
  std::string text;  // acquire ok: the grant's node; probe: the nodes found; fault: description
};

class History {
 public:
  // Appends `e`, assigning its index. Returns the index.
  uint64_t add(Event e);
  // Room for `n` events, so that a run's appends do not move the ones before.
  void reserve(size_t n) { events_.reserve(n); }
  const std::vector<Event>& events() const { return events_; }
  size_t size() const { return events_.size(); }
  const Event& operator[](uint64_t index) const { return events_[index]; }

  // One line per event: "#12 t=0.012300 c2 s=0x1f ok acquire token=7 node=/l/lock-0000000003".
  std::string to_text() const;

 private:
  std::vector<Event> events_;
};

std::string describe(const Event& e);
// "t=0.012300" (seconds, microsecond precision).
std::string format_time(zk::Time t);

}  // namespace lockstep::properties
