#include "fidelity/compare.h"

#include <algorithm>
#include <cstdlib>
#include <tuple>
#include <utility>

#include "zk/error.h"

namespace lockstep::fidelity {
namespace {

std::string strip(const std::string& path, const std::string& root) {
  if (path.compare(0, root.size(), root) == 0) return path.substr(root.size());
  return path;
}

std::string owner(zk::SessionId id, const RawOutcome& raw) {
  if (!id.valid()) return "none";
  for (size_t slot = 0; slot < raw.session_ids.size(); ++slot) {
    const auto& ids = raw.session_ids[slot];
    for (size_t gen = 0; gen < ids.size(); ++gen) {
      if (ids[gen] == id) return "s" + std::to_string(slot) + "#" + std::to_string(gen);
    }
  }
  return "other";
}

std::string stat_text(const zk::Stat& s, const RawOutcome& raw) {
  return "{v=" + std::to_string(s.version) + " cv=" + std::to_string(s.cversion) +
         " av=" + std::to_string(s.aversion) + " len=" + std::to_string(s.data_length) +
         " kids=" + std::to_string(s.num_children) + " owner=" + owner(s.ephemeral_owner, raw) +
         "}";
}

std::string event_text(const RawEvent& e, const std::string& root) {
  if (e.subscription) return "s" + std::to_string(e.slot) + " session:" + zk::to_string(e.state);
  std::string s = "s" + std::to_string(e.slot) + " " + zk::to_string(e.type);
  if (e.type == zk::EventType::kSession) s += "(" + zk::to_string(e.state) + ")";
  return s + " " + strip(e.path, root);
}

}  // namespace

bool timed(const Op& op) {
  return op.kind == OpKind::kCut || op.kind == OpKind::kPartition || op.lose != Lose::kNone;
}

Normalized normalize(const RawOutcome& raw, const std::string& root, bool timed) {
  Normalized n;
  n.error = zk::error_name(raw.error);
  if (raw.path) n.path = strip(*raw.path, root);
  if (raw.data) n.data = "'" + *raw.data + "'";
  if (raw.stat) n.stat = stat_text(*raw.stat, raw);
  if (raw.children) {
    std::vector<std::string> kids = *raw.children;
    std::sort(kids.begin(), kids.end());  // freedom 1
    n.children = "[";
    for (size_t i = 0; i < kids.size(); ++i) n.children += (i ? " " : "") + kids[i];
    n.children += "]";
  }
  if (raw.state) n.state = zk::to_string(*raw.state);
  // Freedom 6: per slot, the subscription's state changes in their order, then the watch
  // events as a sorted multiset.
  std::vector<std::tuple<int, int, size_t, std::string, int64_t>> texts;
  for (size_t i = 0; i < raw.events.size(); ++i) {
    const RawEvent& e = raw.events[i];
    texts.emplace_back(e.slot, e.subscription ? 0 : 1, e.subscription ? i : 0, event_text(e, root),
                       e.at.ms());
  }
  std::sort(texts.begin(), texts.end());
  for (size_t i = 0; i < texts.size(); ++i) {
    n.events += (i ? ", " : "") + std::get<3>(texts[i]);
    if (timed) n.event_ms.push_back(std::get<4>(texts[i]));
  }
  return n;
}

std::string to_string(const Normalized& n) {
  std::string s = n.error;
  auto add = [&s](const char* name, const std::string& v) {
    if (!v.empty()) s += std::string(" ") + name + "=" + v;
  };
  add("path", n.path);
  add("data", n.data);
  add("stat", n.stat);
  add("children", n.children);
  add("state", n.state);
  if (!n.events.empty()) s += " events=[" + n.events + "]";
  if (!n.event_ms.empty()) {
    s += " at=[";
    for (size_t i = 0; i < n.event_ms.size(); ++i) {
      s += (i ? " " : "") + std::to_string(n.event_ms[i]) + "ms";
    }
    s += "]";
  }
  return s;
}

std::vector<std::string> differences(const Normalized& sim, const Normalized& real) {
  std::vector<std::string> out;
  if (sim.error != real.error) out.push_back("error");
  if (sim.path != real.path) out.push_back("path");
  if (sim.data != real.data) out.push_back("data");
  if (sim.stat != real.stat) out.push_back("stat");
  if (sim.children != real.children) out.push_back("children");
  if (sim.state != real.state) out.push_back("state");
  if (sim.events != real.events) {
    out.push_back("events");
  } else if (sim.event_ms.size() == real.event_ms.size()) {
    for (size_t i = 0; i < sim.event_ms.size(); ++i) {
      if (std::abs(sim.event_ms[i] - real.event_ms[i]) > kTimingToleranceMs) {
        out.push_back("timing");
        break;
      }
    }
  }
  return out;
}

void add_skews(const Normalized& sim, const Normalized& real,
               std::map<std::string, int64_t>* skew) {
  if (sim.events != real.events || sim.event_ms.size() != real.event_ms.size()) return;
  // The event names in `events` order: "s0 session:connecting, s1 deleted /d/a" -> the part
  // after the slot and before the path.
  size_t start = 0;
  for (size_t i = 0; i < sim.event_ms.size(); ++i) {
    size_t end = sim.events.find(", ", start);
    if (end == std::string::npos) end = sim.events.size();
    std::string text = sim.events.substr(start, end - start);
    start = end + 2;
    const size_t a = text.find(' ');
    const size_t b = text.find(' ', a + 1);
    const std::string name = text.substr(a + 1, b == std::string::npos ? b : b - a - 1);
    const int64_t d = std::abs(sim.event_ms[i] - real.event_ms[i]);
    int64_t& m = (*skew)[name];
    m = std::max(m, d);
  }
}

}  // namespace lockstep::fidelity
