#include "fidelity/compare.h"

#include <algorithm>
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
  std::string s = "s" + std::to_string(e.slot) + " " + zk::to_string(e.type);
  if (e.type == zk::EventType::kSession) s += "(" + zk::to_string(e.state) + ")";
  return s + " " + strip(e.path, root);
}

}  // namespace

Normalized normalize(const RawOutcome& raw, const std::string& root) {
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
  // Freedom 6: per slot, a sorted multiset.
  std::vector<std::pair<int, std::string>> texts;
  for (const RawEvent& e : raw.events) texts.emplace_back(e.slot, event_text(e, root));
  std::sort(texts.begin(), texts.end());
  for (size_t i = 0; i < texts.size(); ++i) n.events += (i ? ", " : "") + texts[i].second;
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
  if (sim.events != real.events) out.push_back("events");
  return out;
}

}  // namespace lockstep::fidelity
