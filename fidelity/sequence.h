// lockstep fidelity: random operation sequences for the differential tester (issue 18).
//
// A Sequence is a list of ZooKeeper operations over a small path space, issued by one of two
// session slots (0 and 1), generated from one seed with the project's own PRNG (zk/random.h),
// so the same seed gives the same sequence on every platform. Paths are relative to a root the
// runner chooses per sequence ("/d" means "<root>/d"); the special path "$last" names the last
// sequential node this run created (or "/d/none" before there is one), so later operations can
// touch nodes whose names only the server knows.
//
// Generator contract:
//   1. Deterministic: generate(seed, n) depends only on (seed, n).
//   2. Exactly n operations; the first creates /d (persistent, sometimes ephemeral).
//   3. kReopen is generated only for a slot whose session ended (an earlier kClose or kExpire)
//      and was not yet reopened (reopening a live handle differs between backends by design: the
//      simulator abandons the session, the C client closes it), and such a slot is reopened soon.
//   4. With GenerateOptions::faults, about one operation in 14 is a fault, always on a slot
//      whose session is alive: a mutation whose request or reply is lost (Op::lose), a cut
//      connection, a forced expiry, a partition (short: nobody notices; long: the session
//      expires), or a server restart. Both backends can inject every one of them: the simulator
//      through sim::FaultKind, the real server through real/proxy.h (one proxy per slot) and
//      real/server.h (expire_session, stop and restart).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "zk/types.h"

namespace lockstep::fidelity {

enum class OpKind : uint8_t {
  kCreate,
  kDelete,
  kSetData,
  kGetData,
  kExists,
  kGetChildren,
  kSync,
  kClose,
  kReopen,
  // Faults.
  kCut,        // the slot's connection is cut; the session survives (reconnect)
  kExpire,     // the server expires the slot's session now; it learns at its reconnect
  kPartition,  // the slot cannot reach its server for `duration`, then heals
  kRestart,    // server `server` goes down for `duration` and restarts (data and sessions persist)
};

// A mutation's message lost on the way (OpKind kCreate, kDelete, kSetData only).
enum class Lose : uint8_t {
  kNone,
  kReply,    // applied by the server, the reply lost with the connection
  kRequest,  // never reached the server, the connection lost with it
};

struct Op {
  OpKind kind = OpKind::kExists;
  int slot = 0;                                       // which session issues it: 0 or 1
  std::string path;                                   // relative to the sequence's root, or "$last"
  std::string data;                                   // create, set_data
  zk::CreateMode mode = zk::CreateMode::kPersistent;  // create
  zk::Version version = zk::kAnyVersion;              // delete, set_data
  bool watch = false;                                 // get_data, exists, get_children
  Lose lose = Lose::kNone;                            // create, delete, set_data
  zk::Duration duration{};                            // partition, restart
  int server = 1;  // restart: 1-based, in the simulator's numbering (1 leads an ensemble)
};

using Sequence = std::vector<Op>;

inline constexpr int kSlots = 2;

struct GenerateOptions {
  bool faults = true;
  int servers = 1;  // 3: an ensemble; slot i is connected to server i+1, restarts hit followers
  // The session timeout both backends request: a long partition outlasts it with a margin, a
  // short one stays well inside the client's ping interval (timeout / 3).
  zk::Duration session_timeout = zk::seconds(2);
};

Sequence generate(uint64_t seed, size_t ops, const GenerateOptions& options = {});

// "s1 create /d/a 'x' ephemeral", "s0 delete $last v=0 !lost-reply", "s1 exists /d watch",
// "s0 partition 300ms", "restart server 1 for 1s", ...
std::string to_string(const Op& op);

// Whether `op` is a fault (generator rule 4): a lost request or reply, cut, expire, partition,
// restart.
bool is_fault(const Op& op);

// The slot whose session `op` ends (close, expire, a partition longer than the timeout, on an
// ensemble a restart of the slot's server longer than the timeout), or -1.
int ends_session(const Op& op, int servers, zk::Duration session_timeout);

// The inverse of to_string (a saved conformance case holds its operations as these lines).
// On failure returns false and says why in *error.
bool parse_op(const std::string& text, Op* out, std::string* error);

// Whether `seq` keeps the generator's rules 3 and 4 (a reopen only after the slot's session
// ended; a fault only on a live slot; a restart names a server of `servers`): what the shrinker
// keeps true while it removes operations. On failure *error names the operation.
bool valid(const Sequence& seq, int servers, zk::Duration session_timeout, std::string* error);

}  // namespace lockstep::fidelity
