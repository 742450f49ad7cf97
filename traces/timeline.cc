// Timelines of traces: lane states, the text rendering and the HTML/SVG page (traces/timeline.h).
#include "traces/timeline.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

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
  return e.kind == "expire" || e.kind == "expired" || e.kind == "fault-end" || e.kind == "watch";
}

// Short labels: a lane column is narrow. The full line stays in the event log.
std::string sim_label(const sim::LoggedEvent& e) {
  if (e.kind == "expire") return "server EXPIRED session";
  if (e.kind == "expired") return "learns it expired";
  if (e.kind == "fault-end") return "fault ends: " + e.text;
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

struct ClientBelief {
  LaneState state = LaneState::kIdle;
  uint64_t holding_session = 0;
};

void apply_history(const Event& e, std::vector<ClientBelief>* lanes) {
  if (e.client == 0 || e.client > lanes->size()) return;
  ClientBelief& b = (*lanes)[e.client - 1];
  const bool holds = b.state == LaneState::kHolding || b.state == LaneState::kExpiredBelief;
  switch (e.op) {
    case Op::kAcquire:
      if (e.type == Type::kInvoke && !holds) b.state = LaneState::kWaiting;
      if (e.type == Type::kOk && !holds) {
        b.state = LaneState::kHolding;
        b.holding_session = e.session.value;
      }
      if (e.type == Type::kFail && !holds) b.state = LaneState::kIdle;
      break;
    case Op::kRelease:
      if (e.type == Type::kInvoke && e.hold_count <= 1) b.state = LaneState::kIdle;
      break;
    case Op::kLost:
    case Op::kReopen: b.state = LaneState::kIdle; break;
    case Op::kGiveUp:
    case Op::kDone:
    case Op::kCrash: b.state = LaneState::kGone; break;
    default: break;
  }
}

void apply_sim(const sim::LoggedEvent& e, std::vector<ClientBelief>* lanes) {
  if (e.kind != "expire" || e.client == 0 || e.client > lanes->size()) return;
  ClientBelief& b = (*lanes)[e.client - 1];
  if (b.state == LaneState::kHolding && b.holding_session == session_of_expire(e.text)) {
    b.state = LaneState::kExpiredBelief;
  }
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

Timeline build_timeline(const Trace& t) {
  Timeline tl;
  tl.title = t.recipe + " (" + t.recipe_kind + ", " + t.recipe_expected + ") seed " +
             std::to_string(t.scenario.seed) + ", strategy " + t.strategy;
  tl.verdict = verdict_summary(t);
  tl.scenario = properties::describe(t.scenario);
  tl.violated = t.violation() != nullptr;
  const uint32_t clients = t.scenario.workload.clients;
  for (uint32_t c = 1; c <= clients; ++c) tl.lanes.push_back("c" + std::to_string(c));

  std::vector<bool> proof(t.history.size(), false);
  if (const properties::Verdict* v = t.violation()) {
    for (uint64_t i : v->history_indexes) {
      if (i < proof.size()) proof[i] = true;
    }
  }
  const int64_t zxid = herd_zxid(t);
  const std::string zxid_suffix = "zxid=" + std::to_string(zxid);

  // Merge by time; at one instant the simulator's events come first (the workload reacts to
  // them), and each source keeps its own order.
  std::vector<ClientBelief> beliefs(clients);
  const auto& hist = t.history.events();
  size_t h = 0;
  size_t s = 0;
  for (size_t guard = 0; guard < hist.size() + t.events.size(); ++guard) {
    while (s < t.events.size() && !wanted(t.events[s])) ++s;
    const bool take_sim = s < t.events.size() && (h >= hist.size() || t.events[s].at <= hist[h].at);
    if (!take_sim && h >= hist.size()) break;
    TimelineRow row;
    if (take_sim) {
      const sim::LoggedEvent& e = t.events[s++];
      apply_sim(e, &beliefs);
      row.id = "s" + std::to_string(e.index);
      row.at = e.at;
      row.client = e.client <= clients ? e.client : 0;
      row.label = sim_label(e);
      row.mark = e.kind == "expire" ? RowMark::kExpire : RowMark::kNone;
      const bool ends_with_zxid =
          e.text.size() >= zxid_suffix.size() &&
          e.text.compare(e.text.size() - zxid_suffix.size(), zxid_suffix.size(), zxid_suffix) == 0;
      row.violation = zxid >= 0 && e.kind == "watch" && ends_with_zxid;
    } else {
      const Event& e = hist[h++];
      apply_history(e, &beliefs);
      row.id = "h" + std::to_string(e.index);
      row.at = e.at;
      row.client = e.client <= clients ? e.client : 0;
      row.label = history_label(e);
      row.mark = history_mark(e);
      row.violation = e.index < proof.size() && proof[e.index];
    }
    for (const ClientBelief& b : beliefs) row.lanes.push_back(b.state);
    tl.rows.push_back(std::move(row));
  }
  return tl;
}

std::string render_text(const Timeline& tl, const TextOptions& o) {
  std::string out;
  out += "lockstep trace: " + tl.title + "\n";
  out += "verdict: " + tl.verdict + "\n";
  out += "scenario: " + tl.scenario + "\n";
  out +=
      "legend: ':' waiting  '#' holding  '!' still believes it holds, but the server expired "
      "its session  '>>' proves the violation  'F' fault  'X' violation\n\n";

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
  header += "world";
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
    rows.push_back(row);
  }
  j["rows"] = rows;
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
)CSS";

constexpr const char* kScript = R"JS(
(function () {
  var data = JSON.parse(document.getElementById('trace-data').textContent);
  var SVG = 'http://www.w3.org/2000/svg';
  var step = 10, laneH = 26, left = 60, top = 20;
  var n = data.rows.length;
  function el(name, attrs, parent) {
    var e = document.createElementNS(SVG, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  var width = left + Math.max(1, n) * step + 20;
  var height = top + data.lanes.length * laneH + 10;
  var svg = el('svg', {width: width, height: height, id: 'lanes', role: 'img'});
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
  // The violation: one marker over every row that proves it.
  var proof = [];
  data.rows.forEach(function (row, r) { if (row.v) proof.push(r); });
  if (data.violated) {
    var mg = el('g', {id: 'violation-marker', 'class': 'violation'}, svg);
    var rows = proof.length ? proof : [n - 1];
    rows.forEach(function (r) {
      el('rect', {x: left + r * step, y: top - 4, width: step,
                  height: data.lanes.length * laneH + 6}, mg);
    });
    el('title', {}, mg).textContent = data.verdict;
  }
  document.getElementById('lanes-box').appendChild(svg);
  // The same rows as a table.
  var table = document.getElementById('rows');
  var head = table.insertRow();
  ['row', 'time', 'client', 'event'].concat(data.lanes).forEach(function (h) {
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
    row.lanes.forEach(function (s) {
      var td = tr.insertCell(); td.className = 'state'; td.textContent = data.states[s];
    });
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
      "violation</span></div>\n";
  out += "<div id=\"lanes-box\"></div>\n<table id=\"rows\"></table>\n";
  out +=
      "<noscript>This page draws its lanes with JavaScript; the rows are in the JSON "
      "below.</noscript>\n";
  out += "<script type=\"application/json\" id=\"trace-data\">" + page_data(tl) + "</script>\n";
  out += "<script>" + std::string(kScript) + "</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace lockstep::traces
