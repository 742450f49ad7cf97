// lockstep traces: a trace read as a timeline — one lane per client, and the lock directory — for
// the terminal and as a self-contained HTML/SVG swim-lane page.
//
// build_timeline() merges the workload's history (every event) with the simulator events a
// reader needs to follow the story (the server expiring or closing a session, a client learning
// of it, a fault ending, watch notifications, and the lock directory's changes) in time order.
// Each client's lane state after every row comes from the history alone, with the checkers'
// own belief rule (properties/belief.h, the one properties/checkers.cc judges with):
//   waiting           while one of its acquires is in progress and it holds nothing;
//   holding           from a fresh `ok acquire` until the outermost release is invoked, or the
//                     client reports `info lost`, crashes, reopens or gives up; a re-entrant
//                     acquire and an inner release change the depth (LaneDetail::depth), not
//                     the state;
//   expired-belief    holding, while the server has already expired the session it holds with
//                     (the simulator's `expire` event for that session): the unsafe window that
//                     fencing tokens exist for;
//   idle / gone       not trying, or finished / crashed / given up.
// The lock directory comes from the event log (traces/directory.h): each node the leader
// created under the lock (DirNode: sequence, owner client and session, create and delete zxid,
// who deleted it: its client, the operator, the reaper, or its session's end), each watch a
// client's read armed, each notification. Rows name them ("creates 03 (zxid 7)", "watches 02
// (c2)", "woke: 02 deleted (zxid 8)", "releases 02 (zxid 8)", "expiry deletes 01 (zxid 22)"); every
// row carries each client's node, watch and depth (LaneDetail) and the directory in creation order,
// the order of the server's queue ("[01 c3 : w02] [02 c2 #] [03 c1 #]"), so an ordering bug reads
// as a granted node behind a waiting one, and a lost watch as a waiter watching nothing (or a node
// that is gone).
// Rows named by the reported verdict (history indexes, and for herd-free the watch events of
// the offending delete) are marked as the violation.
//
// Rendering is a pure function of the Timeline (the same trace gives the same bytes); the HTML
// page embeds its data as JSON and draws the lanes, their node labels and the directory with an
// inline script (no network, no external files).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "traces/trace.h"

namespace lockstep::traces {

enum class LaneState : uint8_t { kIdle, kWaiting, kHolding, kExpiredBelief, kGone };
const char* to_string(LaneState s);  // "idle", "waiting", "holding", "expired-belief", "gone"

enum class RowMark : uint8_t { kNone, kFault, kExpire, kLost, kRejected };

// One node of the lock directory (or the directory itself), as the servers' leader committed it,
// read from the event log (traces/directory.h says how its owner and its deleter are found).
struct DirNode {
  std::string path;
  std::string name;      // short: the sequence ("03"), or the name below the lock ("lock")
  uint32_t client = 0;   // the workload client that created it; 0: the operator, or unknown
  uint64_t session = 0;  // its ephemeral owner (0: not ephemeral)
  bool ephemeral = false;
  bool sequential = false;  // its name ends with a sequence number
  bool foreign = false;     // the operator created it (a foreign-child fault)
  int64_t created_zxid = 0;
  int64_t deleted_zxid = 0;  // 0: still live at the end
  std::string deleted_by;    // "c2" (its delete), "operator", "reaper", "session expired"/"closed"
  int64_t created_row = -1;  // the timeline's rows that create and delete it (-1: none)
  int64_t deleted_row = -1;
};

// What one client has in the lock directory after a row.
struct LaneDetail {
  std::string node;    // the node it holds with (its grant's) or queues with (its newest), short
  std::string watch;   // the watches it has armed and not yet seen fire, newest first: "02" (a
                       // node), "02?" (a creation watch: for a node to appear), "dir" (the
                       // children); "21,12?": a watch on 21, and an older one on 12 to appear
  uint32_t depth = 0;  // while holding: the re-entrant depth, as the checkers count it
};

struct TimelineRow {
  std::string id;  // "h12" (history event 12) or "s345" (simulator event 345)
  zk::Time at;
  uint32_t client = 0;  // 1-based; 0 = the world (servers, foreign sessions)
  std::string label;    // what happened, short ("HOLDS 03 token=7", "creates 03 (zxid 7)")
  RowMark mark = RowMark::kNone;
  bool violation = false;           // this row is evidence of the reported violation
  std::vector<LaneState> lanes;     // every client's state after this row (index client - 1)
  std::vector<LaneDetail> details;  // every client's node, watch and depth after this row
  int64_t node = -1;                // the directory node this row creates or deletes (-1: none)
  // The lock directory after this row, in creation (zxid) order, as the text view prints it:
  // "[01 c3 :w02] [02 c2 #] [03 c1 #x2]"; directory_changed: it differs from the row before.
  std::string directory;
  bool directory_changed = false;
};

struct Timeline {
  std::string title;     // "broken/watch-first (mutex, broken) seed 17"
  std::string verdict;   // verdict_summary()
  std::string scenario;  // properties::describe(Scenario)
  bool violated = false;
  std::vector<std::string> lanes;  // client names, "c1".."cN"
  std::vector<TimelineRow> rows;
  std::string lock_dir;        // "/lockstep/lock"
  std::vector<DirNode> nodes;  // every node created under it (and it), in zxid order
};

Timeline build_timeline(const Trace& trace);

struct TextOptions {
  uint32_t lane_width = 28;      // characters per client column
  uint32_t overview_width = 96;  // columns of the overview strip
  // When > 0 and the trace has proving rows: print only the rows within this many rows of one
  // (elided stretches are marked "..."). 0 prints every row.
  uint32_t context_rows = 0;
};

// A header (recipe, verdict, scenario, legend), an overview strip per lane, then one line per
// row with a column per client and, where it changed (and after elided rows), the lock
// directory ("dir: [01 c3 : w02] [02 c2 #]"); violation rows start with ">>".
std::string render_text(const Timeline& timeline, const TextOptions& options = {});

// A complete HTML document: one <g class="lane"> per client drawn by the page's script, with
// state segments, event ticks, faults, <text class="node-label"> labels where a client's node,
// depth or watch changes ("03 x2 w02"), and a marker with id "violation-marker" over the rows
// that prove the violation; below the lanes <g id="directory-lane">: a <g class="dir-node"> track
// per node from its create to its delete, coloured while its owner queues or holds with it, and
// <line class="watch-arrow"> from a watcher's node to the node it watches; below it the same
// rows as a table, with each lane's node and watch and a lock-directory column.
std::string render_html(const Timeline& timeline);

// `s` with <, >, & and " escaped, for HTML text and attribute values (every page traces/ renders).
std::string html_escape(const std::string& s);

}  // namespace lockstep::traces
