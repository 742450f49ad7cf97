// The lock directory read back from an event log (traces/directory.h).
#include "traces/directory.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

namespace lockstep::traces {
namespace {

// "0x1f2e" anywhere after `key` in `text` -> 0x1f2e; 0 when absent.
uint64_t hex_after(const std::string& text, const char* key) {
  const size_t at = text.find(key);
  if (at == std::string::npos) return 0;
  unsigned long long v = 0;
  if (std::sscanf(text.c_str() + at + std::strlen(key), "0x%llx", &v) != 1) return 0;
  return v;
}

// Splits "a b c" into words.
std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = std::min(text.find(' ', at), text.size());
    if (end > at) out.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

// The sequence suffix of a node's name: 10 digits, or "-2147483648"-style after a wrap; "" none.
std::string sequence_of(const std::string& name) {
  if (name.size() < 10) return {};
  for (size_t i = name.size() - 10; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return {};
  }
  const size_t start = name.size() - 10;
  const bool negative = start >= 2 && name[start - 1] == '-' && name[start - 2] == '-';
  return negative ? name.substr(start - 1) : name.substr(start);
}

DirChange change(size_t event, DirChangeKind kind, uint32_t client) {
  DirChange c;
  c.event = event;
  c.kind = kind;
  c.client = client;
  return c;
}

bool under(const std::string& path, const std::string& dir) {
  return path.size() > dir.size() + 1 && path.compare(0, dir.size(), dir) == 0 &&
         path[dir.size()] == '/';
}

// A create the client sent and the server has not answered yet.
struct PendingCreate {
  size_t event = 0;
  uint32_t client = 0;
  std::string path;  // as sent (a sequential create: the prefix)
  bool sequential = false;
  bool ephemeral = false;
  uint64_t session = 0;
};

bool fits(const PendingCreate& p, const std::string& created) {
  if (!p.sequential) return created == p.path;
  return created.size() > p.path.size() && created.compare(0, p.path.size(), p.path) == 0 &&
         sequence_of(created).size() == created.size() - p.path.size();
}

// A read that asked for a watch and is not answered yet.
struct PendingRead {
  std::string op;
  std::string path;
};

class Reader {
 public:
  Reader(const std::string& lock_dir, uint32_t clients)
      : lock_dir_(lock_dir), clients_(clients), session_(clients + 1, 0), reads_(clients + 1) {}

  void read(const sim::LoggedEvent& e) {
    if (e.client > clients_) return;
    if (e.kind == "new-session") on_new_session(e);
    if (e.kind == "send") on_send(e);
    if (e.kind == "reply") on_reply(e);
    if (e.kind == "disconnect") reads_[e.client].clear();
    if (e.kind == "apply") on_apply(e);
    if (e.kind == "watch") on_watch(e);
    if (e.kind == "foreign-create" || e.kind == "foreign-delete" || e.kind == "reap") {
      const std::vector<std::string> w = words(e.text);
      if (w.size() == 2 && w[1] == "ZOK") outside_[w[0]] = e.kind;
    }
    if (e.kind == "close-session") closed_.insert(hex_after(e.text, "session "));
  }

  Directory finish() {
    // Creates whose owner was never settled by a reply: the earliest sender.
    while (!unsettled_.empty()) {
      const auto first = unsettled_.begin();
      const PendingCreate earliest = first->second.front();  // settle() erases the entry
      settle(first->first, earliest);
    }
    return std::move(dir_);
  }

 private:
  bool mine(const std::string& path) const { return path == lock_dir_ || under(path, lock_dir_); }

  void on_new_session(const sim::LoggedEvent& e) {
    if (e.client == 0) return;
    session_[e.client] = hex_after(e.text, "session ");
    // Requests still pending now go out on the new session (a client queues them while it
    // connects); the old session's connection is gone, so none is applied under it any more.
    for (PendingCreate& p : creates_) {
      if (p.client == e.client) p.session = session_[e.client];
    }
  }

  void on_send(const sim::LoggedEvent& e) {
    const std::vector<std::string> w = words(e.text);
    if (e.client == 0 || w.size() < 2 || !mine(w[1])) return;
    if (w[0] == "create" && w.size() >= 3) {
      creates_.push_back(PendingCreate{e.index, e.client, w[1],
                                       w[2].find("sequential") != std::string::npos,
                                       w[2].rfind("ephemeral", 0) == 0, session_[e.client]});
    } else if (w[0] == "delete") {
      deletes_[w[1]] = e.client;
    } else if (w.back() == "watch") {
      reads_[e.client].push_back(PendingRead{w[0], w[1]});
    }
  }

  void on_reply(const sim::LoggedEvent& e) {
    const std::vector<std::string> w = words(e.text);
    if (e.client == 0 || w.size() < 3) return;
    const std::string& op = w[0];
    const std::string& err = w[1];
    const std::string& path = w[2];
    if (op == "delete") {
      if (auto d = deletes_.find(path); d != deletes_.end() && d->second == e.client) {
        deletes_.erase(d);
      }
      return;
    }
    if (op == "create") {
      if (err == "ZOK") claim(path, e.client);
      std::erase_if(creates_, [&](const PendingCreate& p) {
        return p.client == e.client && (p.path == path || fits(p, path));
      });
      return;
    }
    std::vector<PendingRead>& reads = reads_[e.client];
    for (auto it = reads.begin(); it != reads.end(); ++it) {
      if (it->op != op || it->path != path) continue;
      reads.erase(it);
      const bool armed = err == "ZOK" || (op == "exists" && err == "ZNONODE");
      if (!armed) return;
      DirChange c = change(e.index, DirChangeKind::kWatchArmed, e.client);
      c.session = session_[e.client];
      c.path = path;
      c.watch = op == "get_children" ? WatchKind::kChildren
                : err == "ZNONODE"   ? WatchKind::kCreation
                                     : WatchKind::kData;
      dir_.changes.push_back(std::move(c));
      return;
    }
  }

  void on_watch(const sim::LoggedEvent& e) {
    const std::vector<std::string> w = words(e.text);
    if (e.client == 0 || w.size() < 2 || !mine(w[1])) return;
    DirChange c = change(e.index, DirChangeKind::kWatchFired, e.client);
    c.session = session_[e.client];
    c.path = w[1];
    c.fired = w[0];
    dir_.changes.push_back(std::move(c));
  }

  void on_apply(const sim::LoggedEvent& e) {
    // "s1 zxid=7 create /lockstep/lock/x", "s1 zxid=22 kill-session 0x34ea796a85d976c"
    const std::vector<std::string> w = words(e.text);
    long long zxid = 0;
    if (w.size() != 4 || std::sscanf(w[1].c_str(), "zxid=%lld", &zxid) != 1) return;
    if (zxid <= last_zxid_) return;  // a follower applying a committed transaction
    last_zxid_ = zxid;
    if (w[2] == "create" && mine(w[3])) on_create(e, zxid, w[3]);
    if (w[2] == "delete" && mine(w[3])) on_delete(e, zxid, w[3]);
    if (w[2] == "kill-session") on_session_end(e, zxid, hex_after(w[3], ""));
  }

  void on_create(const sim::LoggedEvent& e, int64_t zxid, const std::string& path) {
    DirNode n;
    n.path = path;
    n.name = short_node_name(path, lock_dir_);
    n.sequential = !sequence_of(path).empty();
    n.created_zxid = zxid;
    n.foreign = outside_.count(path) != 0 && outside_[path] == "foreign-create";
    outside_.erase(path);
    const size_t index = dir_.nodes.size();
    live_[path] = index;
    dir_.nodes.push_back(std::move(n));
    DirChange c = change(e.index, DirChangeKind::kCreate, 0);
    c.node = index;
    dir_.changes.push_back(std::move(c));
    std::vector<PendingCreate> candidates;
    for (const PendingCreate& p : creates_) {
      if (fits(p, path)) candidates.push_back(p);
    }
    std::set<uint32_t> senders;
    for (const PendingCreate& p : candidates) senders.insert(p.client);
    if (senders.size() == 1) {
      settle(index, candidates.front());
    } else if (!candidates.empty()) {
      unsettled_[index] = candidates;
    }
  }

  // The client whose reply names `path` created it.
  void claim(const std::string& path, uint32_t client) {
    auto live = live_.find(path);
    if (live == live_.end()) return;
    auto it = unsettled_.find(live->second);
    if (it == unsettled_.end()) return;
    for (const PendingCreate& p : it->second) {
      if (p.client != client) continue;
      const PendingCreate mine = p;  // settle() erases the entry
      settle(it->first, mine);
      return;
    }
  }

  void settle(size_t index, const PendingCreate& p) {
    DirNode& n = dir_.nodes[index];
    n.client = p.client;
    n.ephemeral = p.ephemeral;
    n.session = p.ephemeral ? p.session : 0;
    for (DirChange& c : dir_.changes) {
      if (c.kind == DirChangeKind::kCreate && c.node == index) c.client = p.client;
    }
    std::erase_if(creates_, [&](const PendingCreate& q) { return q.event == p.event; });
    unsettled_.erase(index);
  }

  void on_delete(const sim::LoggedEvent& e, int64_t zxid, const std::string& path) {
    auto live = live_.find(path);
    if (live == live_.end()) return;
    DirNode& n = dir_.nodes[live->second];
    n.deleted_zxid = zxid;
    uint32_t by = 0;
    if (outside_.count(path) != 0) {
      n.deleted_by = outside_[path] == "reap" ? "reaper" : "operator";
      outside_.erase(path);
    } else if (auto d = deletes_.find(path); d != deletes_.end()) {
      by = d->second;
      n.deleted_by = "c" + std::to_string(by);
      deletes_.erase(d);
    }
    DirChange c = change(e.index, DirChangeKind::kDelete, by);
    c.node = live->second;
    dir_.changes.push_back(std::move(c));
    live_.erase(live);
  }

  void on_session_end(const sim::LoggedEvent& e, int64_t zxid, uint64_t session) {
    if (session == 0) return;
    const std::string why = closed_.count(session) != 0 ? "session closed" : "session expired";
    for (auto it = live_.begin(); it != live_.end();) {
      DirNode& n = dir_.nodes[it->second];
      if (!n.ephemeral || n.session != session) {
        ++it;
        continue;
      }
      n.deleted_zxid = zxid;
      n.deleted_by = why;
      DirChange c = change(e.index, DirChangeKind::kDelete, n.client);
      c.node = it->second;
      c.session = session;
      dir_.changes.push_back(std::move(c));
      it = live_.erase(it);
    }
  }

  std::string lock_dir_;
  uint32_t clients_;
  std::vector<uint64_t> session_;  // each client's newest session
  std::vector<std::vector<PendingRead>> reads_;
  std::vector<PendingCreate> creates_;
  std::map<std::string, uint32_t> deletes_;  // path -> the client that last sent its delete
  std::map<std::string, std::string>
      outside_;                         // path -> "foreign-create" / "foreign-delete" / "reap"
  std::map<std::string, size_t> live_;  // path -> node
  std::map<size_t, std::vector<PendingCreate>> unsettled_;
  std::set<uint64_t> closed_;
  int64_t last_zxid_ = 0;
  Directory dir_;
};

}  // namespace

std::string short_node_name(const std::string& path, const std::string& lock_dir) {
  if (path == lock_dir) return "dir";
  if (!under(path, lock_dir)) return path;
  const std::string rel = path.substr(lock_dir.size() + 1);
  const std::string seq = sequence_of(rel);
  if (seq.empty()) return rel;
  const size_t slash = rel.rfind('/');
  const std::string parent = slash == std::string::npos ? "" : rel.substr(0, slash + 1);
  const bool negative = seq[0] == '-';
  std::string digits = negative ? seq.substr(1) : seq;
  const size_t first = std::min(digits.find_first_not_of('0'), digits.size() - 2);
  digits = digits.substr(std::min(first, digits.size() - 2));
  return parent + (negative ? "-" : "") + digits;
}

Directory read_directory(const std::vector<sim::LoggedEvent>& events, const std::string& lock_dir,
                         uint32_t clients) {
  Reader reader(lock_dir, clients);
  for (const sim::LoggedEvent& e : events) reader.read(e);
  return reader.finish();
}

}  // namespace lockstep::traces
