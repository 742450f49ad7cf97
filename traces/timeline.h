// lockstep traces: a trace read as a timeline — one lane per client — for the terminal and as a
// self-contained HTML/SVG swim-lane page.
//
// build_timeline() merges the workload's history (every event) with the simulator events a
// reader needs to follow the story (the server expiring a session, a client learning of it, a
// fault ending, watch notifications) in time order, and derives each client's lane state after
// every row from the history alone, with the checkers' belief rules (properties/checkers.h):
//   waiting           from `invoke acquire` to its completion;
//   holding           from a fresh `ok acquire` until the outermost release is invoked, or the
//                     client reports `info lost`, crashes, reopens or gives up;
//   expired-belief    holding, while the server has already expired the session it holds with
//                     (the simulator's `expire` event for that session): the unsafe window that
//                     fencing tokens exist for;
//   idle / gone       not trying, or finished / crashed / given up.
// Rows named by the reported verdict (history indexes, and for herd-free the watch events of
// the offending delete) are marked as the violation.
//
// Rendering is a pure function of the Timeline; the HTML page embeds its data as JSON and draws
// the lanes with an inline script (no network, no external files).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "traces/trace.h"

namespace lockstep::traces {

enum class LaneState : uint8_t { kIdle, kWaiting, kHolding, kExpiredBelief, kGone };
const char* to_string(LaneState s);  // "idle", "waiting", "holding", "expired-belief", "gone"

enum class RowMark : uint8_t { kNone, kFault, kExpire, kLost, kRejected };

struct TimelineRow {
  std::string id;  // "h12" (history event 12) or "s345" (simulator event 345)
  zk::Time at;
  uint32_t client = 0;  // 1-based; 0 = the world (servers, foreign sessions)
  std::string label;    // what happened, short ("HOLDS token=7", "FAULT pause c2 500ms")
  RowMark mark = RowMark::kNone;
  bool violation = false;        // this row is evidence of the reported violation
  std::vector<LaneState> lanes;  // every client's state after this row (index client - 1)
};

struct Timeline {
  std::string title;     // "broken/watch-first (mutex, broken) seed 17"
  std::string verdict;   // verdict_summary()
  std::string scenario;  // properties::describe(Scenario)
  bool violated = false;
  std::vector<std::string> lanes;  // client names, "c1".."cN"
  std::vector<TimelineRow> rows;
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
// row with a column per client; violation rows start with ">>".
std::string render_text(const Timeline& timeline, const TextOptions& options = {});

// A complete HTML document: one <g class="lane"> per client drawn by the page's script, with
// state segments, event ticks, faults, and a marker with id "violation-marker" over the rows
// that prove the violation; below it the same rows as a table.
std::string render_html(const Timeline& timeline);

// `s` with <, >, & and " escaped, for HTML text and attribute values (every page traces/ renders).
std::string html_escape(const std::string& s);

}  // namespace lockstep::traces
