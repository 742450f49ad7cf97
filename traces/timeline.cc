// Timelines of traces: lane states, the text rendering and the HTML/SVG page (traces/timeline.h).
#include "traces/timeline.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "properties/belief.h"
#include "traces/directory.h"
#include "traces/record.h"

namespace lockstep::traces {
namespace {

using properties::Event;
using properties::Op;
using properties::Type;

std::string error_of(const Event& e) { return zk::error_name(e.error); }

std::string op_label(const Event& e);

// With shared callers the lane is the client's and the label names the caller ("t2: HOLDS").
std::string history_label(const Event& e) {
  if (e.task == 0) return op_label(e);
  return "t" + std::to_string(e.task) + ": " + op_label(e);
}

std::string op_label(const Event& e) {
  const std::string token = " token=" + std::to_string(e.token);
  switch (e.op) {
    case Op::kAcquire:
      if (e.type == Type::kInvoke) {
        return e.role == recipes::Role::kExclusive
                   ? "acquire..."
                   : std::string("acquire ") + (e.role == recipes::Role::kRead ? "read" : "write") +
                         "...";
      }
      if (e.type == Type::kOk) {
        return e.hold_count > 1 ? "re-acquired depth=" + std::to_string(e.hold_count)
                                : "HOLDS" + token;
      }
      return "acquire failed " + error_of(e);
    case Op::kRelease:
      if (e.type == Type::kInvoke) return "release (depth " + std::to_string(e.hold_count) + ")";
      if (e.type == Type::kOk) return std::string("released, ") + recipes::to_string(e.state);
      return "release failed " + error_of(e);
    case Op::kStrayRelease:
      if (e.type == Type::kInvoke) return "stray release";
      return e.type == Type::kOk ? "stray release ok?!" : "stray release: " + error_of(e);
    case Op::kEnter:
      if (e.type == Type::kInvoke) return "enter" + token;
      return e.type == Type::kOk ? "enter" + token : "enter REJECTED" + token;
    case Op::kLeave:
      if (e.type == Type::kInvoke) return "leave" + token;
      return e.type == Type::kOk ? "leave" + token : "leave REJECTED" + token;
    case Op::kLost: return std::string("LOST lock (") + recipes::to_string(e.state) + ")";
    case Op::kProbe: return "probe: " + (e.text.empty() ? std::string("no nodes") : e.text);
    case Op::kReopen: return "new session";
    case Op::kGiveUp: return "gives up";
    case Op::kDone: return "done";
    case Op::kCrash: return "CRASHED";
    case Op::kFault: return "FAULT " + e.text;
    case Op::kSession: return "session " + zk::to_string(e.session_state);
    case Op::kReport: return "announces " + e.text;
    case Op::kCapacity: return "CAPACITY set to " + std::to_string(e.token);
  }
  return "?";
}

RowMark history_mark(const Event& e) {
  if (e.op == Op::kFault || e.op == Op::kCrash || e.op == Op::kCapacity) return RowMark::kFault;
  if (e.op == Op::kLost) return RowMark::kLost;
  if ((e.op == Op::kEnter || e.op == Op::kLeave) && e.type == Type::kFail) {
    return RowMark::kRejected;
  }
  return RowMark::kNone;
}

// The simulator events a reader of a lock's story needs; everything else stays in the log.
bool wanted(const sim::LoggedEvent& e) {
  return e.kind == "expire" || e.kind == "expired" || e.kind == "fault-end" || e.kind == "watch" ||
         e.kind == "close-session";
}

// Short labels: a lane column is narrow. The full line stays in the event log.
std::string sim_label(const sim::LoggedEvent& e) {
  if (e.kind == "expire") return "server EXPIRED session";
  if (e.kind == "expired") return "learns it expired";
  if (e.kind == "fault-end") return "fault ends: " + e.text;
  if (e.kind == "close-session") return "server closes its session";
  if (e.kind == "watch") {
    // "deleted /lockstep/lock/_c_c1-...-lock-0000000003 zxid=6" -> "woke: deleted 0000000003"
    const size_t space = e.text.find(' ');
    const size_t slash = e.text.rfind('/');
    const size_t end = e.text.find(' ', slash == std::string::npos ? 0 : slash);
    if (space != std::string::npos && slash != std::string::npos && slash > space) {
      std::string node = e.text.substr(slash + 1, end == std::string::npos ? end : end - slash - 1);
      if (node.size() > 10) node = node.substr(node.size() - 10);
      return "woke: " + e.text.substr(0, space) + " " + node;
    }
    return "woke: " + e.text;
  }
  return e.kind + " " + e.text;
}

// "session 0x1f2e (timeout)" -> 0x1f2e.
uint64_t session_of_expire(const std::string& text) {
  unsigned long long v = 0;
  if (std::sscanf(text.c_str(), "session 0x%llx", &v) != 1) return 0;
  return v;
}

// For herd-free the proof is the watch notifications of one delete: "(zxid N)" in the message.
int64_t herd_zxid(const Trace& t) {
  const properties::Verdict* v = t.violation();
  if (v == nullptr || v->property != properties::Property::kHerdFree) return -1;
  const size_t at = v->message.find("(zxid ");
  if (at == std::string::npos) return -1;
  long long z = -1;
  if (std::sscanf(v->message.c_str() + at, "(zxid %lld)", &z) != 1) return -1;
  return z;
}

char glyph(LaneState s) {
  switch (s) {
    case LaneState::kIdle: return ' ';
    case LaneState::kWaiting: return ':';
    case LaneState::kHolding: return '#';
    case LaneState::kExpiredBelief: return '!';
    case LaneState::kGone: return ' ';
  }
  return '?';
}

// Overview priority: the most alarming state of a column wins.
int severity(LaneState s) {
  switch (s) {
    case LaneState::kExpiredBelief: return 4;
    case LaneState::kHolding: return 3;
    case LaneState::kWaiting: return 2;
    case LaneState::kIdle: return 1;
    case LaneState::kGone: return 0;
  }
  return 0;
}

std::string fit(std::string s, size_t width) {
  if (s.size() > width) {
    s.resize(width > 1 ? width - 1 : width);
    if (width > 1) s += '~';
  }
  s.resize(width, ' ');
  return s;
}

std::string time_text(zk::Time t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld.%06lld", static_cast<long long>(t.us / 1000000),
                static_cast<long long>(t.us % 1000000));
  return buf;
}

}  // namespace

const char* to_string(LaneState s) {
  switch (s) {
    case LaneState::kIdle: return "idle";
    case LaneState::kWaiting: return "waiting";
    case LaneState::kHolding: return "holding";
    case LaneState::kExpiredBelief: return "expired-belief";
    case LaneState::kGone: return "gone";
  }
  return "?";
}

namespace {

using properties::Belief;
using properties::BeliefTracker;

// A watch a client armed and has not seen fire (nor lost with its session).
struct ArmedWatch {
  uint32_t client = 0;
  uint64_t session = 0;
  std::string path;
  WatchKind kind = WatchKind::kData;
};

std::string zxid_text(int64_t zxid) { return "(zxid " + std::to_string(zxid) + ")"; }

std::string client_text(uint32_t c) { return "c" + std::to_string(c); }

// "expiry deletes 01,03 (zxid 22)": the nodes a session's end took with it.
std::string session_end_label(const DirNode& n, const std::string& names) {
  return std::string(n.deleted_by == "session closed" ? "close" : "expiry") + " deletes " + names +
         " " + zxid_text(n.deleted_zxid);
}

// How a lane's state and detail read in the directory column: " #x2 w02".
std::string client_marks(LaneState s, const LaneDetail& d) {
  std::string out;
  if (s == LaneState::kHolding) out += " #";
  if (s == LaneState::kExpiredBelief) out += " !";
  if ((s == LaneState::kHolding || s == LaneState::kExpiredBelief) && d.depth > 1) {
    out += "x" + std::to_string(d.depth);
  }
  if (s == LaneState::kWaiting) out += " :";
  if (!d.watch.empty()) out += " w" + d.watch;
  return out;
}

// Builds the rows: the history merged with the simulator events a reader needs (the lock
// directory's changes among them, traces/directory.h), keeping each client's beliefs with the
// checkers' own rule (properties/belief.h), its pending acquires, and the directory's state.
class Builder {
 public:
  Builder(const Trace& t, Timeline* tl)
      : t_(t),
        tl_(*tl),
        clients_(t.scenario.workload.clients),
        dir_(read_directory(t.events, t.scenario.workload.lock_path, clients_)),
        grant_(clients_ + 1),
        gone_(clients_ + 1, false),
        holding_session_(clients_ + 1, 0) {
    tl_.lock_dir = t.scenario.workload.lock_path;
    tl_.nodes = dir_.nodes;
    if (const properties::Verdict* v = t.violation()) {
      proof_.assign(t.history.size(), false);
      for (uint64_t i : v->history_indexes) {
        if (i < proof_.size()) proof_[i] = true;
      }
    }
    herd_zxid_ = herd_zxid(t);
  }

  // Merges by time; at one instant the simulator's events come first (the workload reacts to
  // them), and each source keeps its own order.
  void run() {
    const auto& hist = t_.history.events();
    size_t h = 0;
    size_t s = 0;
    for (size_t guard = 0; guard < hist.size() + t_.events.size(); ++guard) {
      while (s < t_.events.size() && !wanted(t_.events[s]) && changes_at(s).empty()) ++s;
      const bool take_sim =
          s < t_.events.size() && (h >= hist.size() || t_.events[s].at <= hist[h].at);
      if (!take_sim && h >= hist.size()) break;
      TimelineRow row = take_sim ? sim_row(s++) : history_row(hist[h++]);
      finish_row(&row);
      tl_.rows.push_back(std::move(row));
    }
  }

 private:
  // The directory changes the simulator event at `s` makes (they are in event order).
  std::vector<const DirChange*> changes_at(size_t s) {
    while (next_change_ < dir_.changes.size() && dir_.changes[next_change_].event < s) {
      ++next_change_;
    }
    std::vector<const DirChange*> out;
    for (size_t i = next_change_; i < dir_.changes.size() && dir_.changes[i].event == s; ++i) {
      out.push_back(&dir_.changes[i]);
    }
    return out;
  }

  TimelineRow sim_row(size_t s) {
    const sim::LoggedEvent& e = t_.events[s];
    TimelineRow row;
    row.id = "s" + std::to_string(e.index);
    row.at = e.at;
    row.client = e.client <= clients_ ? e.client : 0;
    row.label = sim_label(e);
    row.mark = e.kind == "expire" ? RowMark::kExpire : RowMark::kNone;
    const std::string suffix = "zxid=" + std::to_string(herd_zxid_);
    const bool ends_with_zxid =
        e.text.size() >= suffix.size() &&
        e.text.compare(e.text.size() - suffix.size(), suffix.size(), suffix) == 0;
    row.violation = herd_zxid_ >= 0 && e.kind == "watch" && ends_with_zxid;
    if (e.kind == "expire" || e.kind == "close-session") {
      const uint64_t session = session_of_expire(e.text);
      if (e.kind == "expire") expired_.insert(session);
      std::erase_if(watches_, [&](const ArmedWatch& w) { return w.session == session; });
    }
    const std::vector<const DirChange*> changes = changes_at(s);
    if (!changes.empty()) apply_changes(e, changes, &row);
    return row;
  }

  TimelineRow history_row(const Event& e) {
    TimelineRow row;
    row.id = "h" + std::to_string(e.index);
    row.at = e.at;
    row.client = e.client <= clients_ ? e.client : 0;
    row.label = history_label(e);
    row.mark = history_mark(e);
    row.violation = e.index < proof_.size() && proof_[e.index];
    if (row.client == 0) return row;
    const bool fresh = tracker_.is_fresh_grant(e);
    tracker_.apply(e);
    const uint32_t c = e.client;
    if (fresh) {
      grant_[c] = e.text;
      holding_session_[c] = e.session.value;
      if (!e.text.empty()) {
        row.label = (e.task == 0 ? "" : "t" + std::to_string(e.task) + ": ") + "HOLDS " +
                    short_node_name(e.text, tl_.lock_dir) + " token=" + std::to_string(e.token);
      }
    }
    const properties::Holder holder{c, e.task};
    if (e.op == Op::kAcquire && e.type == Type::kInvoke) {
      acquiring_.insert(holder);
      gone_[c] = false;
    }
    if (e.op == Op::kAcquire && e.type != Type::kInvoke) acquiring_.erase(holder);
    if (e.op == Op::kRelease && e.type == Type::kInvoke) releasing_.insert(holder);
    if (e.op == Op::kRelease && e.type != Type::kInvoke) releasing_.erase(holder);
    if (properties::client_wide(e.op) && e.op != Op::kSession) {
      const auto of_client = [&](const properties::Holder& h) { return h.first == c; };
      std::erase_if(acquiring_, of_client);
      std::erase_if(releasing_, of_client);
    }
    if (e.op == Op::kGiveUp || e.op == Op::kDone || e.op == Op::kCrash) gone_[c] = true;
    return row;
  }

  void apply_changes(const sim::LoggedEvent& e, const std::vector<const DirChange*>& changes,
                     TimelineRow* row) {
    std::vector<std::string> deleted;
    for (const DirChange* c : changes) {
      switch (c->kind) {
        case DirChangeKind::kCreate: on_create(*c, row); break;
        case DirChangeKind::kDelete:
          on_delete(*c, row);
          deleted.push_back(tl_.nodes[c->node].name);
          break;
        case DirChangeKind::kWatchArmed: on_armed(*c, row); break;
        case DirChangeKind::kWatchFired: on_fired(e, *c, row); break;
      }
    }
    if (deleted.size() > 1) {  // a session's end: every node of it in one transaction
      const DirNode& n = tl_.nodes[changes.front()->node];
      std::string names;
      for (const std::string& name : deleted) names += (names.empty() ? "" : ",") + name;
      row->label = session_end_label(n, names);
    }
  }

  void on_create(const DirChange& c, TimelineRow* row) {
    DirNode& n = tl_.nodes[c.node];
    n.created_row = static_cast<int64_t>(tl_.rows.size());
    live_.push_back(c.node);
    row->node = static_cast<int64_t>(c.node);
    row->client = n.foreign ? 0 : n.client;
    row->label = (n.foreign       ? "operator creates "
                  : n.client != 0 ? "creates "
                                  : "created ") +
                 n.name + " " + zxid_text(n.created_zxid);
  }

  void on_delete(const DirChange& c, TimelineRow* row) {
    DirNode& n = tl_.nodes[c.node];
    n.deleted_row = static_cast<int64_t>(tl_.rows.size());
    std::erase(live_, c.node);
    row->node = static_cast<int64_t>(c.node);
    const std::string whose =
        n.client != 0 && n.client != c.client ? client_text(n.client) + "'s " : "";
    const std::string zxid = " " + zxid_text(n.deleted_zxid);
    row->client = c.client;
    if (n.deleted_by == "operator") {
      row->client = 0;
      row->label =
          "operator deletes " + (n.ephemeral ? client_text(n.client) + "'s " : "") + n.name + zxid;
    } else if (n.deleted_by == "reaper") {
      row->client = 0;
      row->label = "server reaps " + n.name + zxid;
    } else if (n.deleted_by.rfind("session ", 0) == 0) {
      row->label = session_end_label(n, n.name);
    } else if (c.client != 0) {
      row->label = delete_verb(c.client) + " " + whose + n.name + zxid;
    } else {
      row->label = n.name + " deleted" + zxid;
    }
  }

  void on_armed(const DirChange& c, TimelineRow* row) {
    watches_.push_back(ArmedWatch{c.client, c.session, c.path, c.watch});
    row->client = c.client;
    const std::string name = short_node_name(c.path, tl_.lock_dir);
    if (c.watch == WatchKind::kChildren) {
      row->label = "watches " + name + " children";
      return;
    }
    if (c.watch == WatchKind::kCreation) {
      row->label = "watches " + name + " to appear";
      return;
    }
    row->label = "watches " + name;
    for (size_t i : live_) {
      const DirNode& n = tl_.nodes[i];
      if (n.path == c.path && n.client != 0 && n.client != c.client) {
        row->label += " (" + client_text(n.client) + ")";
      }
    }
  }

  void on_fired(const sim::LoggedEvent& e, const DirChange& c, TimelineRow* row) {
    std::erase_if(watches_, [&](const ArmedWatch& w) {
      if (w.client != c.client || w.path != c.path) return false;
      if (c.fired == "deleted") return true;
      if (c.fired == "children-changed") return w.kind == WatchKind::kChildren;
      return w.kind != WatchKind::kChildren;
    });
    const size_t at = e.text.rfind(" zxid=");
    const std::string zxid = at == std::string::npos ? "" : " (zxid " + e.text.substr(at + 6) + ")";
    row->label = "woke: " + short_node_name(c.path, tl_.lock_dir) + " " + c.fired + zxid;
  }

  // A client's delete, by what it is in the middle of: a release "releases" the node, an
  // acquire (a timeout's cleanup, a restart) "withdraws" it; otherwise it "deletes" it.
  std::string delete_verb(uint32_t c) const {
    const auto of_client = [&](const properties::Holder& h) { return h.first == c; };
    if (std::any_of(releasing_.begin(), releasing_.end(), of_client)) return "releases";
    if (std::any_of(acquiring_.begin(), acquiring_.end(), of_client)) return "withdraws";
    return "deletes";
  }

  LaneState state_of(uint32_t c, uint32_t* depth) const {
    *depth = 0;
    bool holds = false;
    for (const auto& [holder, belief] : tracker_.beliefs()) {
      if (holder.first != c || !belief.holds) continue;
      holds = true;
      *depth = std::max(*depth, belief.depth);
    }
    if (holds) {
      return expired_.count(holding_session_[c]) != 0 ? LaneState::kExpiredBelief
                                                      : LaneState::kHolding;
    }
    const bool waiting = std::any_of(acquiring_.begin(), acquiring_.end(),
                                     [&](const properties::Holder& h) { return h.first == c; });
    if (waiting) return LaneState::kWaiting;
    return gone_[c] ? LaneState::kGone : LaneState::kIdle;
  }

  LaneDetail detail_of(uint32_t c, LaneState s, uint32_t depth) const {
    LaneDetail d;
    const bool holds = s == LaneState::kHolding || s == LaneState::kExpiredBelief;
    if (holds) d.depth = depth;
    if (holds && !grant_[c].empty()) {
      d.node = short_node_name(grant_[c], tl_.lock_dir);
    } else {
      for (auto it = live_.rbegin(); it != live_.rend() && d.node.empty(); ++it) {
        if (tl_.nodes[*it].client == c && tl_.nodes[*it].ephemeral) d.node = tl_.nodes[*it].name;
      }
    }
    // Newest first: a watch that never fired (a leak) stays listed behind the current one.
    std::set<std::string> listed;
    for (auto it = watches_.rbegin(); it != watches_.rend(); ++it) {
      if (it->client != c) continue;
      const std::string name =
          short_node_name(it->path, tl_.lock_dir) + (it->kind == WatchKind::kCreation ? "?" : "");
      if (!listed.insert(name).second) continue;
      d.watch += (d.watch.empty() ? "" : ",") + name;
    }
    return d;
  }

  // "[01 c3 : w02] [02 c2 #] [03 c1 #x2]", then clients with no live node that wait, hold or
  // watch: "c4 : wlock".
  std::string snapshot(const TimelineRow& row) const {
    std::string out;
    std::vector<bool> placed(clients_ + 1, false);
    for (size_t i : live_) {
      const DirNode& n = tl_.nodes[i];
      if (!n.ephemeral && !n.sequential && !n.foreign) continue;  // the directories
      out += out.empty() ? "[" : " [";
      out += n.name + " " + (n.foreign ? "op" : n.client != 0 ? client_text(n.client) : "?");
      if (n.client != 0 && !placed[n.client] && row.details[n.client - 1].node == n.name) {
        out += client_marks(row.lanes[n.client - 1], row.details[n.client - 1]);
        placed[n.client] = true;
      }
      out += "]";
    }
    for (uint32_t c = 1; c <= clients_; ++c) {
      const LaneState s = row.lanes[c - 1];
      const LaneDetail& d = row.details[c - 1];
      const std::string marks = client_marks(s, d);
      if (placed[c] || marks.empty()) continue;
      out += (out.empty() ? "" : " ") + client_text(c) + marks;
      if (!d.node.empty() && s != LaneState::kWaiting) out += " on deleted " + d.node;
    }
    return out.empty() ? "(empty)" : out;
  }

  void finish_row(TimelineRow* row) {
    for (uint32_t c = 1; c <= clients_; ++c) {
      uint32_t depth = 0;
      const LaneState s = state_of(c, &depth);
      row->lanes.push_back(s);
      row->details.push_back(detail_of(c, s, depth));
    }
    row->directory = snapshot(*row);
    row->directory_changed = tl_.rows.empty() || tl_.rows.back().directory != row->directory;
  }

  const Trace& t_;
  Timeline& tl_;
  const uint32_t clients_;
  const Directory dir_;
  size_t next_change_ = 0;
  std::vector<bool> proof_;
  int64_t herd_zxid_ = -1;
  BeliefTracker tracker_;
  std::set<properties::Holder> acquiring_;  // holders whose acquire is in progress
  std::set<properties::Holder> releasing_;  // holders whose release is in progress
  std::vector<std::string> grant_;          // each client's newest fresh grant's node
  std::vector<bool> gone_;
  std::vector<uint64_t> holding_session_;
  std::set<uint64_t> expired_;  // sessions the server expired
  std::vector<size_t> live_;    // live nodes, in creation order
  std::vector<ArmedWatch> watches_;
};

}  // namespace

Timeline build_timeline(const Trace& t) {
  Timeline tl;
  tl.title = t.recipe + " (" + t.recipe_kind + ", " + t.recipe_expected + ") seed " +
             std::to_string(t.scenario.seed) + ", strategy " + t.strategy;
  tl.verdict = verdict_summary(t);
  tl.scenario = properties::describe(t.scenario);
  tl.violated = t.violation() != nullptr;
  for (uint32_t c = 1; c <= t.scenario.workload.clients; ++c) {
    tl.lanes.push_back("c" + std::to_string(c));
  }
  Builder(t, &tl).run();
  return tl;
}
std::string render_text(const Timeline& tl, const TextOptions& o) {
  std::string out;
  out += "lockstep trace: " + tl.title + "\n";
  out += "verdict: " + tl.verdict + "\n";
  out += "scenario: " + tl.scenario + "\n";
  out +=
      "legend: ':' waiting  '#' holding  '!' still believes it holds, but the server expired "
      "its session  '>>' proves the violation  'F' fault  'X' violation\n"
      "dir: the nodes under " +
      tl.lock_dir +
      " in creation (zxid) order, the server's queue: each by its\n"
      "sequence number and owner, and on its owner's node the client's state (':' '#' '!', 'x2'\n"
      "re-entrant depth as the checkers count it) and 'wNN' the nodes it watches, newest first\n"
      "('wNN?': for it to appear, 'wdir': the children); clients with no live node follow\n\n";

  // Overview: each column covers a run of consecutive rows; the most alarming state wins.
  const size_t n = tl.rows.size();
  const size_t width = std::max<size_t>(1, std::min<size_t>(o.overview_width, n));
  if (n > 0) {
    out += "overview (" + std::to_string(n) + " rows, ~" + std::to_string((n + width - 1) / width) +
           " per column):\n";
    for (size_t lane = 0; lane < tl.lanes.size(); ++lane) {
      std::string strip;
      for (size_t col = 0; col < width; ++col) {
        const size_t from = col * n / width;
        const size_t to = std::max(from + 1, (col + 1) * n / width);
        LaneState worst = LaneState::kGone;
        bool fault = false;
        bool violation = false;
        for (size_t r = from; r < to && r < n; ++r) {
          if (severity(tl.rows[r].lanes[lane]) > severity(worst)) worst = tl.rows[r].lanes[lane];
          const bool mine = tl.rows[r].client == lane + 1;
          fault = fault || (mine && tl.rows[r].mark == RowMark::kFault);
          violation = violation || (mine && tl.rows[r].violation);
        }
        strip += violation ? 'X' : fault ? 'F' : worst == LaneState::kIdle ? '.' : glyph(worst);
      }
      out += "  " + fit(tl.lanes[lane], 4) + "|" + strip + "|\n";
    }
    out += "\n";
  }

  const size_t lw = std::max<uint32_t>(8, o.lane_width);
  std::string header = "   row     time       ";
  for (const std::string& name : tl.lanes) header += fit(name, lw);
  header += "world; dir: the lock directory when it changes";
  out += header + "\n";
  // Rows to print: all, or those near a proving row.
  std::vector<bool> keep(tl.rows.size(), o.context_rows == 0);
  if (o.context_rows > 0) {
    bool any = false;
    for (size_t i = 0; i < tl.rows.size(); ++i) {
      if (!tl.rows[i].violation) continue;
      any = true;
      const size_t from = i >= o.context_rows ? i - o.context_rows : 0;
      for (size_t k = from; k < tl.rows.size() && k <= i + o.context_rows; ++k) keep[k] = true;
    }
    if (!any) keep.assign(tl.rows.size(), true);
  }
  for (size_t i = 0; i < tl.rows.size(); ++i) {
    if (!keep[i]) {
      if (i == 0 || keep[i - 1]) out += "   ...\n";
      continue;
    }
    const TimelineRow& r = tl.rows[i];
    std::string line = r.violation ? ">> " : "   ";
    line += fit(r.id, 7) + " " + fit(time_text(r.at), 11);
    for (size_t lane = 0; lane < tl.lanes.size(); ++lane) {
      const char g = glyph(r.lanes[lane]);
      if (r.client == lane + 1) {
        line += fit(std::string(1, g) + " " + r.label, lw - 1) + " ";
      } else {
        line += fit(std::string(1, g), lw);
      }
    }
    if (r.client == 0) line += r.label;
    // After elided rows the directory is printed again: it may have changed in them.
    if (r.directory_changed || (i > 0 && !keep[i - 1])) {
      line += std::string(r.client == 0 ? "  " : "") + "dir: " + r.directory;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  if (tl.violated) {
    out += "\n>> rows proving it:";
    bool any = false;
    for (const TimelineRow& r : tl.rows) {
      if (r.violation) {
        out += " " + r.id;
        any = true;
      }
    }
    if (!any) out += " (the verdict names no single event; see its message)";
    out += "\n";
  }
  return out;
}

namespace {

// The page's data, embedded as JSON inside a <script> element ("</" escaped).
std::string page_data(const Timeline& tl) {
  nlohmann::ordered_json j;
  j["title"] = tl.title;
  j["verdict"] = tl.verdict;
  j["scenario"] = tl.scenario;
  j["violated"] = tl.violated;
  j["lanes"] = tl.lanes;
  j["states"] = {"idle", "waiting", "holding", "expired-belief", "gone"};
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  static const char* kMarks[] = {"", "fault", "expire", "lost", "rejected"};
  for (const TimelineRow& r : tl.rows) {
    nlohmann::ordered_json row;
    row["id"] = r.id;
    row["t"] = time_text(r.at);
    row["c"] = r.client;
    row["label"] = r.label;
    row["mark"] = kMarks[static_cast<int>(r.mark)];
    row["v"] = r.violation;
    std::vector<int> lanes;
    for (LaneState s : r.lanes) lanes.push_back(static_cast<int>(s));
    row["lanes"] = lanes;
    nlohmann::ordered_json details = nlohmann::ordered_json::array();
    for (const LaneDetail& d : r.details) details.push_back({d.node, d.watch, d.depth});
    row["d"] = details;
    if (r.node >= 0) row["n"] = r.node;
    if (r.directory_changed) row["dir"] = r.directory;
    rows.push_back(row);
  }
  j["rows"] = rows;
  j["lock_dir"] = tl.lock_dir;
  nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
  for (const DirNode& n : tl.nodes) {
    nodes.push_back({{"name", n.name},
                     {"path", n.path},
                     {"c", n.client},
                     {"foreign", n.foreign},
                     {"created_zxid", n.created_zxid},
                     {"deleted_zxid", n.deleted_zxid},
                     {"deleted_by", n.deleted_by},
                     {"from", n.created_row},
                     {"to", n.deleted_row}});
  }
  j["nodes"] = nodes;
  std::string text = j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '<' && i + 1 < text.size() && text[i + 1] == '/') {
      out += "<\\/";
      ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

constexpr const char* kStyle = R"CSS(
body { font: 13px/1.4 system-ui, sans-serif; margin: 16px; color: #222; }
h1 { font-size: 17px; margin: 0 0 4px; }
.verdict { font-weight: 600; margin: 4px 0; }
.verdict.bad { color: #b00020; }
.scenario { white-space: pre-wrap; font: 12px monospace; color: #555; margin: 4px 0 12px; }
.legend span { display: inline-block; margin-right: 14px; }
.legend i { display: inline-block; width: 14px; height: 10px; margin-right: 4px; vertical-align: middle; }
#lanes-box { overflow-x: auto; border: 1px solid #ddd; margin: 8px 0 16px; }
.seg.waiting, i.waiting { fill: #f5d76e; background: #f5d76e; }
.seg.holding, i.holding { fill: #4a90d9; background: #4a90d9; }
.seg.expired-belief, i.expired-belief { fill: #e8743b; background: #e8743b; }
.tick { stroke: #333; stroke-width: 1; }
.fault { fill: #8e44ad; }
#violation-marker rect { fill: rgba(220, 0, 40, 0.18); stroke: #d40028; stroke-width: 1.5; }
.lane-name { font: 12px monospace; }
table { border-collapse: collapse; font: 12px monospace; }
td, th { padding: 1px 8px; text-align: left; white-space: nowrap; }
tr.violation td { background: #ffd6dc; font-weight: 600; }
tr.fault td { color: #8e44ad; }
td.state { color: #888; }
td.directory { color: #235; }
.node-label { font: 9px monospace; fill: #111; }
.dir-title { font: 11px sans-serif; fill: #555; }
.dir-node-label { font: 10px monospace; }
.dir-bar { fill: #ddd; }
.watch-arrow { stroke: #2a7; stroke-width: 1.2; }
.arrow-head { fill: #2a7; }
)CSS";

constexpr const char* kScript = R"JS(
(function () {
  var data = JSON.parse(document.getElementById('trace-data').textContent);
  var SVG = 'http://www.w3.org/2000/svg';
  var step = 10, laneH = 26, left = 110, top = 20, trackH = 14;
  var n = data.rows.length;
  function el(name, attrs, parent) {
    var e = document.createElementNS(SVG, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  var width = left + Math.max(1, n) * step + 20;
  // The lock directory below the lanes: a track per node (the directory itself excluded), in
  // creation order.
  var tracks = [];
  data.nodes.forEach(function (node) { if (node.path !== data.lock_dir) tracks.push(node); });
  var dirTop = top + data.lanes.length * laneH + 22;
  var height = dirTop + tracks.length * trackH + 10;
  var svg = el('svg', {width: width, height: height, id: 'lanes', role: 'img'});
  var marker = el('marker', {id: 'arrow', viewBox: '0 0 6 6', refX: 5, refY: 3, markerWidth: 6,
                             markerHeight: 6, orient: 'auto'}, el('defs', {}, svg));
  el('path', {d: 'M0 0 L6 3 L0 6 z', 'class': 'arrow-head'}, marker);
  // Time axis: a label every 20 rows.
  for (var r = 0; r < n; r += 20) {
    var t = el('text', {x: left + r * step, y: 12, 'class': 'axis', 'font-size': 10}, svg);
    t.textContent = 't=' + data.rows[r].t;
  }
  data.lanes.forEach(function (name, i) {
    var y = top + i * laneH;
    var g = el('g', {'class': 'lane', 'data-client': name}, svg);
    var label = el('text', {x: 4, y: y + 16, 'class': 'lane-name'}, g);
    label.textContent = name;
    el('line', {x1: left, y1: y + laneH - 2, x2: left + n * step, y2: y + laneH - 2,
                stroke: '#eee'}, g);
    // Runs of one state become one segment.
    var start = 0;
    for (var r = 1; r <= n; ++r) {
      var prev = data.rows[r - 1].lanes[i];
      if (r < n && data.rows[r].lanes[i] === prev) continue;
      var state = data.states[prev];
      if (state !== 'idle' && state !== 'gone') {
        var seg = el('rect', {x: left + start * step, y: y + 4, width: (r - start) * step,
                              height: laneH - 10, 'class': 'seg ' + state}, g);
        el('title', {}, seg).textContent = name + ' ' + state + ' from ' + data.rows[start].t +
                                           ' to ' + data.rows[r - 1].t;
      }
      start = r;
    }
    // The node the client queues or holds with, what it watches and its depth, where they change.
    var shown = '', lastEnd = 0;
    data.rows.forEach(function (row, r) {
      var state = data.states[row.lanes[i]], d = row.d[i];
      var text = (state === 'idle' || state === 'gone') ? '' :
          [d[0], d[2] > 1 ? 'x' + d[2] : '', d[1] ? 'w' + d[1] : ''].filter(Boolean).join(' ');
      if (text === shown) return;
      shown = text;
      var x = left + r * step + 1;
      if (text === '' || x < lastEnd) return;
      var t = el('text', {x: x, y: y + laneH - 10, 'class': 'node-label',
                          'data-client': name}, g);
      t.textContent = text;
      lastEnd = x + text.length * 5.5 + 4;
    });
    data.rows.forEach(function (row, r) {
      if (row.c !== i + 1) return;
      var x = left + r * step + step / 2;
      if (row.mark === 'fault' || row.mark === 'expire') {
        var f = el('path', {d: 'M' + x + ' ' + (y + 2) + ' l5 9 l-10 0 z', 'class': 'fault'}, g);
        el('title', {}, f).textContent = row.t + ' ' + row.label;
      } else {
        var tk = el('line', {x1: x, y1: y + 6, x2: x, y2: y + laneH - 8, 'class': 'tick'}, g);
        el('title', {}, tk).textContent = row.id + ' ' + row.t + ' ' + row.label;
      }
    });
  });
  var dg = el('g', {id: 'directory-lane'}, svg);
  var head = el('text', {x: 4, y: dirTop - 6, 'class': 'dir-title'}, dg);
  head.textContent = 'lock directory ' + data.lock_dir + ' (creation order)';
  function trackOf(name, r) {
    for (var k = 0; k < tracks.length; ++k) {
      var to = tracks[k].to < 0 ? n : tracks[k].to;
      if (tracks[k].name === name && tracks[k].from <= r && r <= to) return k;
    }
    return -1;
  }
  tracks.forEach(function (node, k) {
    var y = dirTop + k * trackH, from = Math.max(0, node.from), to = node.to < 0 ? n : node.to;
    var owner = node.foreign ? 'op' : node.c ? data.lanes[node.c - 1] : '?';
    var g = el('g', {'class': 'dir-node', 'data-node': node.name}, dg);
    el('text', {x: 4, y: y + 11, 'class': 'dir-node-label'}, g).textContent =
        node.name + ' ' + owner;
    var bar = el('rect', {x: left + from * step, y: y + 2, width: Math.max(1, to - from) * step,
                          height: trackH - 4, 'class': 'dir-bar'}, g);
    el('title', {}, bar).textContent = node.path + ' (' + owner + '), created zxid ' +
        node.created_zxid + (node.deleted_zxid ? ', deleted zxid ' + node.deleted_zxid + ' by ' +
        node.deleted_by : ', live at the end');
    // Its owner's state while this is the node it queues or holds with.
    if (!node.c) return;
    var start = -1, prev = '';
    for (var r = from; r <= to; ++r) {
      var row = data.rows[r];
      var state = r < to && row && row.d[node.c - 1][0] === node.name ?
          data.states[row.lanes[node.c - 1]] : '';
      if (state === 'idle' || state === 'gone') state = '';
      if (state === prev) continue;
      if (prev !== '') {
        el('rect', {x: left + start * step, y: y + 2, width: (r - start) * step,
                    height: trackH - 4, 'class': 'seg ' + prev}, g);
      }
      start = r;
      prev = state;
    }
  });
  // A watch armed: an arrow from the watcher's node to the node it watches.
  data.lanes.forEach(function (name, i) {
    var prev = '';
    data.rows.forEach(function (row, r) {
      var d = row.d[i], watch = d[1];
      if (watch === prev) return;
      prev = watch;
      if (!watch) return;
      var from = trackOf(d[0], r), to = trackOf(watch.split(',')[0].replace('?', ''), r);
      if (from < 0 || to < 0 || from === to) return;
      var x = left + r * step + step / 2;
      var a = el('line', {x1: x, y1: dirTop + from * trackH + trackH / 2, x2: x,
                          y2: dirTop + to * trackH + trackH / 2, 'class': 'watch-arrow',
                          'marker-end': 'url(#arrow)'}, dg);
      el('title', {}, a).textContent = row.t + ' ' + name + ' (' + d[0] + ') watches ' + watch;
    });
  });
  // The violation: one marker over every row that proves it.
  var proof = [];
  data.rows.forEach(function (row, r) { if (row.v) proof.push(r); });
  if (data.violated) {
    var mg = el('g', {id: 'violation-marker', 'class': 'violation'}, svg);
    var rows = proof.length ? proof : [n - 1];
    rows.forEach(function (r) {
      el('rect', {x: left + r * step, y: top - 4, width: step,
                  height: height - top}, mg);
    });
    el('title', {}, mg).textContent = data.verdict;
  }
  document.getElementById('lanes-box').appendChild(svg);
  // The same rows as a table.
  var table = document.getElementById('rows');
  var head = table.insertRow();
  ['row', 'time', 'client', 'event'].concat(data.lanes, ['lock directory']).forEach(function (h) {
    var th = document.createElement('th'); th.textContent = h; head.appendChild(th);
  });
  data.rows.forEach(function (row) {
    var tr = table.insertRow();
    tr.id = 'row-' + row.id;
    if (row.v) tr.className = 'violation';
    else if (row.mark === 'fault') tr.className = 'fault';
    [row.id, row.t, row.c ? data.lanes[row.c - 1] : 'world', row.label].forEach(function (v) {
      tr.insertCell().textContent = v;
    });
    row.lanes.forEach(function (s, i) {
      var td = tr.insertCell(); td.className = 'state';
      var d = row.d[i], state = data.states[s];
      td.textContent = state + (state === 'idle' || state === 'gone' || !d[0] ? '' : ' ' + d[0]) +
                       (d[2] > 1 ? ' x' + d[2] : '') + (d[1] ? ' w' + d[1] : '');
    });
    var dir = tr.insertCell(); dir.className = 'directory'; dir.textContent = row.dir || '';
  });
  document.body.setAttribute('data-rendered', 'ok');
})();
)JS";

}  // namespace

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string render_html(const Timeline& tl) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<title>lockstep trace: " + html_escape(tl.title) + "</title>\n";
  out += "<style>" + std::string(kStyle) + "</style>\n</head>\n<body>\n";
  out += "<h1>" + html_escape(tl.title) + "</h1>\n";
  out += std::string("<div class=\"verdict") + (tl.violated ? " bad" : "") + "\">" +
         html_escape(tl.verdict) + "</div>\n";
  out += "<div class=\"scenario\">" + html_escape(tl.scenario) + "</div>\n";
  out +=
      "<div class=\"legend\"><span><i class=\"waiting\"></i>waiting</span>"
      "<span><i class=\"holding\"></i>holding</span>"
      "<span><i class=\"expired-belief\"></i>believes it holds, session expired on the "
      "server</span><span>&#9650; fault / expiry</span><span style=\"color:#d40028\">&#9646; "
      "violation</span><span>lane labels: the client's node, xN re-entrant depth, wNN the node "
      "it watches</span><span>lock directory: a bar per node from its create to its delete, "
      "coloured while its owner queues or holds with it; <b style=\"color:#2a7\">&#8595;</b> a "
      "watch from the watcher's node to the watched one</span></div>\n";
  out += "<div id=\"lanes-box\"></div>\n<table id=\"rows\"></table>\n";
  out +=
      "<noscript>This page draws its lanes with JavaScript; the rows are in the JSON "
      "below.</noscript>\n";
  out += "<script type=\"application/json\" id=\"trace-data\">" + page_data(tl) + "</script>\n";
  out += "<script>" + std::string(kScript) + "</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace lockstep::traces
