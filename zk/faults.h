// lockstep contract: the one fault vocabulary, below both backends.
//
// A fault kind has one name, used by the CLI (`--faults`), the trace format (a scenario's
// `faults[].kind`), the simulator's event log and the docs, and one descriptor here: what it does,
// which backends inject it, which typed parameters of a Fault it reads, and whether the property
// generator draws it. Everything that lists fault kinds reads kFaultDescriptors; nothing keeps
// its own table of names.
//
// A Fault is a plain value (faults are data, STYLE rule 5): the simulator injects it
// (sim::World::inject), the real server's driver injects it with proxies and server restarts
// (real::FaultDriver, real/faults.h), traces store it (traces/FORMAT.md). Recipes never include this
// header.
//
// Adding a fault kind: an enumerator and kFaultKindCount, its descriptor below (checked against
// the enum at compile time), the simulator's implementation (sim/faults.cc), and, when the real
// server can be made to do it, the real driver's case (real/faults.cc); and its row in
// README.md's "Fault kinds" table (sim_test checks the table against kFaultDescriptors).
//
// Invariants (checked at compile time): kFaultDescriptors has one entry per kind, in FaultKind
// order; names are non-empty and distinct; every kind can be injected by at least one backend.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>

#include "zk/types.h"

namespace zk {

// `client` / `server` of a Fault are 1-based indexes.
enum class FaultKind : uint8_t {
  kConnectionLoss,   // connection-loss
  kLoseNextReply,    // lost-reply
  kExpireSession,    // expire
  kAbandonSession,   // abandon
  kPause,            // pause
  kPartition,        // partition
  kDelay,            // delay
  kLaggingFollower,  // lagging-follower
  kServerRestart,    // server-restart
  kCancel,           // cancel
  kForeignChild,     // foreign-child
  kCrash,            // crash
  kCloseSession,     // close
  kLoseNextRequest,  // lost-request
  kStall,            // stall
  kSetCapacity,      // set-capacity
  kDeleteNode,       // delete-node
  kDeleteDir,        // delete-dir
};
inline constexpr int kFaultKindCount = 18;

// Who a fault hits when it is not the indexed client or server: the real driver resolves these
// when the fault takes effect (the simulator uses the indexes).
enum class FaultTarget : uint8_t {
  kIndexed,  // Fault::client / Fault::server as given
  kHolder,   // expire: whichever client holds the lock then
  kLeader,   // server-restart: the ensemble's leader then
};
inline constexpr int kFaultTargetCount = 3;

// Which of the client's next requests under the lock directory a lost request or reply hits
// (the real driver; the simulator's lost reply hits the next mutating request of this kind, any
// type for kAny).
enum class FaultRequests : uint8_t {
  kAny,     // create or delete
  kCreate,  // the next create
  kDelete,  // the next delete
};
inline constexpr int kFaultRequestsCount = 3;

// The backends that can inject a kind (bits of FaultDescriptor::backends).
enum FaultBackend : uint8_t {
  kSimulator = 1u << 0,   // sim::World::inject (sim/faults.cc)
  kRealServer = 1u << 1,  // real::FaultDriver (real/faults.cc)
};

// The typed parameters of a Fault a kind reads (bits of FaultDescriptor::params), besides `at`.
enum FaultParam : uint16_t {
  kParamClient = 1u << 0,    // client: the client it hits (1-based)
  kParamServer = 1u << 1,    // server: the server it hits (1-based)
  kParamDuration = 1u << 2,  // duration: how long it lasts
  kParamExtra = 1u << 3,     // extra: the added latency or lag
  kParamTarget = 1u << 4,    // target: indexed, or holder / leader resolved when it takes effect
  kParamRequests = 1u << 5,  // requests: any, create or delete
  kParamTask = 1u << 6,      // task: the name of the client's task to cancel
  kParamPath = 1u << 7,      // path: the full path of the node to create, set, delete or clear
  kParamCount = 1u << 8,     // count: the number to write (a semaphore's capacity)
};

struct FaultDescriptor {
  FaultKind kind;
  const char* name;     // the one spelling: CLI, trace, event log, docs
  const char* summary;  // one line of what it does
  uint8_t backends;     // FaultBackend bits
  uint16_t params;      // FaultParam bits
  bool generated;       // drawn by the property generator (properties/scenario.h)
};

inline constexpr FaultDescriptor kFaultDescriptors[] = {
    {FaultKind::kConnectionLoss, "connection-loss",
     "cut the client's connection: pending requests fail with connection loss, each in-flight "
     "one may or may not reach the server; the client reconnects to the same session",
     kSimulator | kRealServer, kParamClient | kParamRequests, true},
    {FaultKind::kLoseNextReply, "lost-reply",
     "the client's next mutating request is applied, then the connection drops before its reply "
     "arrives (the ambiguous create, the lost delete reply)",
     kSimulator | kRealServer, kParamClient | kParamRequests, true},
    {FaultKind::kExpireSession, "expire",
     "the server expires the client's session now; the client learns when it next reaches a "
     "server",
     kSimulator | kRealServer, kParamClient | kParamTarget, true},
    {FaultKind::kAbandonSession, "abandon",
     "the client library gives up the session on its own timer while the server keeps it until "
     "it times out",
     kSimulator, kParamClient, true},
    {FaultKind::kPause, "pause",
     "the client process stops for a while: no code runs, no heartbeats (a GC pause)", kSimulator,
     kParamClient | kParamDuration, true},
    {FaultKind::kPartition, "partition",
     "the client cannot reach any server for a while, then the network heals",
     kSimulator | kRealServer, kParamClient | kParamDuration, true},
    {FaultKind::kDelay, "delay", "every message to or from the client takes longer, for a while",
     kSimulator, kParamClient | kParamDuration | kParamExtra, true},
    {FaultKind::kLaggingFollower, "lagging-follower",
     "a server applies committed writes late, for a while; the leader of an ensemble too: its "
     "clients read older data, and a sync there waits for nothing",
     kSimulator, kParamServer | kParamDuration | kParamExtra, true},
    {FaultKind::kServerRestart, "server-restart",
     "a server goes down for a while, then restarts; its clients are disconnected; no session "
     "expires while the leader (or the standalone server) is down, a follower's outage stops "
     "no timer",
     kSimulator | kRealServer, kParamServer | kParamDuration | kParamTarget, true},
    {FaultKind::kCancel, "cancel", "cancel one of the client's named tasks at its await point",
     kSimulator | kRealServer, kParamClient | kParamTask, true},
    {FaultKind::kForeignChild, "foreign-child",
     "an outside session creates a persistent node (under the lock directory)", kSimulator,
     kParamPath, true},
    {FaultKind::kCrash, "crash",
     "the client process dies for good; the server expires its session after the timeout",
     kSimulator, kParamClient, true},
    {FaultKind::kCloseSession, "close", "the client closes its session cleanly now", kSimulator,
     kParamClient, true},
    {FaultKind::kLoseNextRequest, "lost-request",
     "the client's next mutating request is lost on the way and the connection drops: the server "
     "never sees it (the differential tester's; the real side is fidelity/'s proxy)",
     kSimulator, kParamClient, false},
    {FaultKind::kStall, "stall",
     "for `duration`, one task of the client (its name in `task`; `NAME@POINT` only at that "
     "explicit yield point) may be held at one of its resumes, for `duration`, while the "
     "client's other tasks and its library run on; the scheduler chooses at which resume (a "
     "choice point, so explore and PCT pick it)",
     kSimulator, kParamClient | kParamTask | kParamDuration, true},
    {FaultKind::kSetCapacity, "set-capacity",
     "an outside session sets a semaphore's capacity node (LockOptions::capacity_path) to a new "
     "lease count, creating it if missing; drawn only for recipes that read one",
     kSimulator, kParamPath | kParamCount, true},
    {FaultKind::kDeleteNode, "delete-node",
     "an outside session deletes the oldest ephemeral node at or under `path` (in the lock "
     "directory: the lowest sequence, the holder's node) behind its owner's back",
     kSimulator | kRealServer, kParamPath, true},
    {FaultKind::kDeleteDir, "delete-dir",
     "an outside session deletes `path` (the lock directory) and every node below it, children "
     "first, one delete each (zkCli's deleteall)",
     kSimulator | kRealServer, kParamPath, true},
};

namespace detail {
constexpr bool fault_table_ok() {
  if (std::size(kFaultDescriptors) != static_cast<size_t>(kFaultKindCount)) return false;
  for (int i = 0; i < kFaultKindCount; ++i) {
    const FaultDescriptor& d = kFaultDescriptors[i];
    if (static_cast<int>(d.kind) != i || std::string_view(d.name).empty()) return false;
    if (std::string_view(d.summary).empty() || d.backends == 0) return false;
    for (int j = 0; j < i; ++j) {
      if (std::string_view(kFaultDescriptors[j].name) == d.name) return false;
    }
  }
  return true;
}
}  // namespace detail
static_assert(detail::fault_table_ok(),
              "kFaultDescriptors: one entry per FaultKind, in enum order, with distinct names");
static_assert(static_cast<int>(FaultKind::kDeleteDir) + 1 == kFaultKindCount,
              "kFaultKindCount counts every FaultKind");

// REQUIRES: k is a FaultKind enumerator.
constexpr const FaultDescriptor& descriptor(FaultKind k) {
  return kFaultDescriptors[static_cast<int>(k)];
}
constexpr const char* fault_name(FaultKind k) { return descriptor(k).name; }
constexpr bool injects(FaultKind k, FaultBackend b) { return (descriptor(k).backends & b) != 0; }
constexpr bool takes(FaultKind k, FaultParam p) { return (descriptor(k).params & p) != 0; }

// Any kind, by its name. False (and *out untouched) for an unknown name.
constexpr bool parse_fault_kind(std::string_view name, FaultKind* out) {
  for (const FaultDescriptor& d : kFaultDescriptors) {
    if (name == d.name) {
      *out = d.kind;
      return true;
    }
  }
  return false;
}

constexpr const char* fault_target_name(FaultTarget t) {
  switch (t) {
    case FaultTarget::kIndexed: return "indexed";
    case FaultTarget::kHolder: return "holder";
    case FaultTarget::kLeader: return "leader";
  }
  return "?";
}
constexpr const char* fault_requests_name(FaultRequests r) {
  switch (r) {
    case FaultRequests::kAny: return "any";
    case FaultRequests::kCreate: return "create";
    case FaultRequests::kDelete: return "delete";
  }
  return "?";
}

// One fault, as data. `at` is the time it takes effect (virtual in the simulator; from the
// workload's start on the real server). A kind reads only the parameters its descriptor names;
// the others keep their defaults.
struct Fault {
  FaultKind kind = FaultKind::kConnectionLoss;
  Time at{};
  uint32_t client = 0;
  uint32_t server = 0;
  Duration duration{};
  Duration extra{};
  FaultTarget target = FaultTarget::kIndexed;
  FaultRequests requests = FaultRequests::kAny;
  std::string task;  // cancel
  std::string path;  // foreign-child, set-capacity, delete-node, delete-dir
  uint32_t count = 0;  // set-capacity: the new lease count
};

}  // namespace zk
