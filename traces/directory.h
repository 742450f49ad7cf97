// lockstep traces: the lock directory read back from a trace's event log, for the timeline
// (traces/timeline.h). What the servers' leader created and deleted under the lock (with zxid,
// owner client and session, and who deleted it), which watch each client's reads armed, and
// which notifications reached it. Internal to traces/; a pure function of the event log.
//
// The event log names each transaction once per server; the leader applies a zxid first, so the
// first `apply` line of each zxid is the commit. A create's line names no owner: the node belongs
// to the client whose outstanding `send create` it completes (the path it sent, plus a sequence
// suffix when the mode is sequential); when several clients' outstanding creates fit (recipes
// that share a name), to the one whose `reply create ZOK` names the node, and when no such reply
// comes (a lost reply), to the earliest sender. A delete belongs to the client that sent it,
// unless the operator (a `foreign-delete` line) or the leader's reaper (`reap`) did it; a
// session's end (`kill-session`) deletes the live ephemerals of that session. A read armed a
// watch when its `send` asked for one and its reply is ZOK (or ZNONODE for exists: a creation
// watch); a `watch` line is the notification reaching the client.
//
// Invariants of a Directory returned by read_directory():
//   1. changes are in event order (change.event never decreases);
//   2. every change's node indexes a node of `nodes`; nodes are in commit (zxid) order;
//   3. a node has at most one kDelete change, after its kCreate.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/world.h"
#include "traces/timeline.h"

namespace lockstep::traces {

enum class DirChangeKind : uint8_t { kCreate, kDelete, kWatchArmed, kWatchFired };
enum class WatchKind : uint8_t { kData, kCreation, kChildren };

struct DirChange {
  size_t event = 0;  // index into Trace::events
  DirChangeKind kind = DirChangeKind::kCreate;
  size_t node = 0;       // kCreate / kDelete: the node (index into Directory::nodes)
  uint32_t client = 0;   // the client that acted (created, deleted, watches, was notified); 0: none
  uint64_t session = 0;  // kWatchArmed: the watcher's session; a session's end: that session
  std::string path;      // kWatchArmed / kWatchFired: the watched path
  WatchKind watch = WatchKind::kData;  // kWatchArmed
  std::string fired;                   // kWatchFired: the event ("deleted", "children-changed")
};

struct Directory {
  std::vector<DirNode> nodes;
  std::vector<DirChange> changes;
};

// Reads the lock directory `lock_dir` (and its own creation and deletion) from `events`.
// `clients`: the workload's client count (lines of other clients are ignored).
Directory read_directory(const std::vector<sim::LoggedEvent>& events, const std::string& lock_dir,
                         uint32_t clients);

// A path as the timeline names it: below `lock_dir`, a sequential node by its sequence with
// leading zeros dropped down to two digits ("03", "leases/12", "-2147483648"), another node by
// its name ("lock", "foreign-7"); `lock_dir` itself is "dir"; any other path is itself.
std::string short_node_name(const std::string& path, const std::string& lock_dir);

}  // namespace lockstep::traces
