#include "fidelity/sequence.h"

#include <array>
#include <map>
#include <sstream>
#include <vector>

#include "zk/random.h"

namespace lockstep::fidelity {
namespace {

// The path space: a small tree, so that creates, deletes and watches collide often.
constexpr std::array<const char*, 5> kPaths = {"/d", "/d/a", "/d/b", "/d/a/x", "/d/b/y"};
// Prefixes of sequential creates (their parents are /d and /d/a).
constexpr std::array<const char*, 2> kSequentialPrefixes = {"/d/q-", "/d/a/q-"};
constexpr std::array<const char*, 3> kData = {"", "x", "yy"};

std::string parent_of(const std::string& path) { return path.substr(0, path.rfind('/')); }

// What the generator believes the tree holds, to aim most operations at nodes that exist (or,
// for a create, at a free name under an existing parent), so that they change something rather
// than meet ZNONODE. A guess, not an oracle: it follows every operation's intended effect (a
// lost request is not applied, a lost reply is) and forgets a slot's ephemerals when its
// session ends; the comparison never reads it.
class Model {
 public:
  struct Node {
    int owner = -1;  // the slot owning an ephemeral, -1 for persistent
    zk::Version version = 0;
  };

  bool has(const std::string& path) const { return nodes_.count(path) != 0; }
  bool has_children(const std::string& path) const {
    for (const auto& [p, n] : nodes_) {
      if (p != path && p.size() > path.size() && p.compare(0, path.size() + 1, path + "/") == 0) {
        return true;
      }
    }
    return false;
  }

  // A path for a read, delete or set_data: usually one that exists.
  std::string pick_existing(zk::Prng& rng) const {
    std::vector<std::string> candidates;
    for (const char* p : kPaths) {
      if (has(p)) candidates.push_back(p);
    }
    if (has(last_)) candidates.push_back("$last");
    if (candidates.empty() || rng.chance(1, 4)) {
      if (rng.chance(1, 6)) return "$last";
      return kPaths[rng.below(kPaths.size())];
    }
    return candidates[rng.below(candidates.size())];
  }

  // A name for a plain create: usually free, under an existing persistent parent.
  std::string pick_free(zk::Prng& rng) const {
    std::vector<std::string> candidates;
    for (const char* p : kPaths) {
      const std::string parent = parent_of(p);
      if (!has(p) && (parent.empty() || persistent(parent))) candidates.push_back(p);
    }
    if (candidates.empty() || rng.chance(1, 4)) return kPaths[rng.below(kPaths.size())];
    return candidates[rng.below(candidates.size())];
  }

  // A prefix for a sequential create: usually under an existing persistent parent.
  std::string pick_prefix(zk::Prng& rng) const {
    std::vector<std::string> candidates;
    for (const char* p : kSequentialPrefixes) {
      if (persistent(parent_of(p))) candidates.push_back(p);
    }
    if (candidates.empty() || rng.chance(1, 4)) {
      return kSequentialPrefixes[rng.below(kSequentialPrefixes.size())];
    }
    return candidates[rng.below(candidates.size())];
  }

  void apply(const Op& op, const std::array<bool, kSlots>& ended) {
    if (op.kind == OpKind::kClose || op.kind == OpKind::kExpire) return end(op.slot);
    if (op.kind == OpKind::kRestart || op.kind == OpKind::kCut || op.kind == OpKind::kReopen) {
      return;
    }
    if (ended[op.slot] || op.lose == Lose::kRequest) return;  // never reached the server
    const std::string path = op.path == "$last" ? last_ : op.path;
    switch (op.kind) {
      case OpKind::kCreate: {
        const std::string parent = parent_of(op.path);
        if (!(parent.empty() || persistent(parent))) return;
        std::string name = path;
        if (zk::is_sequential(op.mode)) {
          name = op.path + "#" + std::to_string(++serial_);  // the real name is the server's
          last_ = name;
        } else if (has(name)) {
          return;
        }
        nodes_[name] = Node{zk::is_ephemeral(op.mode) ? op.slot : -1, 0};
        return;
      }
      case OpKind::kDelete: {
        auto it = nodes_.find(path);
        if (it == nodes_.end() || has_children(path)) return;
        if (op.version != zk::kAnyVersion && op.version != it->second.version) return;
        nodes_.erase(it);
        return;
      }
      case OpKind::kSetData: {
        auto it = nodes_.find(path);
        if (it == nodes_.end()) return;
        if (op.version != zk::kAnyVersion && op.version != it->second.version) return;
        ++it->second.version;
        return;
      }
      default: return;
    }
  }

  // The slot's session ended: its ephemerals are gone.
  void end(int slot) {
    std::erase_if(nodes_, [slot](const auto& entry) { return entry.second.owner == slot; });
  }

 private:
  bool persistent(const std::string& path) const {
    auto it = nodes_.find(path);
    return it != nodes_.end() && it->second.owner < 0;
  }

  std::map<std::string, Node> nodes_;
  std::string last_ = "$none";
  uint64_t serial_ = 0;
};

zk::Version pick_version(zk::Prng& rng) {
  if (rng.chance(1, 2)) return zk::kAnyVersion;
  return static_cast<zk::Version>(rng.below(3));
}

// A create, delete or set_data on the path space.
Op mutation(zk::Prng& rng, const Model& model, int slot, uint64_t r) {
  Op op;
  op.slot = slot;
  if (r < 32) {
    op.kind = OpKind::kCreate;
    op.mode = static_cast<zk::CreateMode>(rng.below(4));
    op.path = zk::is_sequential(op.mode) && rng.chance(3, 4) ? model.pick_prefix(rng)
                                                             : model.pick_free(rng);
    op.data = kData[rng.below(kData.size())];
  } else if (r < 46) {
    op.kind = OpKind::kDelete;
    op.path = model.pick_existing(rng);
    op.version = pick_version(rng);
  } else {
    op.kind = OpKind::kSetData;
    op.path = model.pick_existing(rng);
    op.data = kData[rng.below(kData.size())];
    op.version = pick_version(rng);
  }
  return op;
}

// A fault on `slot` (alive), drawn from its own stream.
Op fault(zk::Prng& rng, const Model& model, int slot, const GenerateOptions& o) {
  const uint64_t r = rng.below(100);
  if (r < 45) {  // a mutation with a lost message: the ambiguity the recipes must survive
    Op op = mutation(rng, model, slot, rng.below(55));
    op.lose = rng.chance(1, 2) ? Lose::kReply : Lose::kRequest;
    return op;
  }
  Op op;
  op.slot = slot;
  if (r < 70) {
    op.kind = OpKind::kCut;
  } else if (r < 86) {
    op.kind = OpKind::kExpire;
  } else if (r < 95) {
    op.kind = OpKind::kPartition;
    // Short: inside the ping interval (timeout / 3), nobody notices. Medium: the client gives
    // the connection up (2/3 of the timeout without a reply) and its reconnect attempt gets
    // through when the network heals, before the server would expire the session (after the
    // timeout). Long: the server expires the session well before the partition heals.
    const uint64_t which = rng.below(5);
    op.duration = which < 2   ? o.session_timeout / 8
                  : which < 4 ? o.session_timeout * 4 / 5
                              : o.session_timeout * 2;
  } else {
    op.kind = OpKind::kRestart;
    op.slot = 0;  // a restart belongs to no slot (its text names none)
    // Standalone: the server, for 1 s or twice the timeout; no session expires while it is
    // down, however long (the timers restart with it). Ensemble: a
    // follower (a leader restart is an election, whose timing the comparison does not model).
    // Server 3 serves no one. Server 2 serves slot 1, whose session the leader expires unless
    // it reconnects within the timeout: a real server takes 1-3 s to start again, too close to
    // the timeout to compare, so server 2 stays down twice the timeout and the session expires.
    op.server = o.servers == 1 ? 1 : 2 + static_cast<int>(rng.below(2));
    const bool long_outage = o.servers == 1 ? rng.chance(1, 2) : op.server == 2;
    op.duration = long_outage ? o.session_timeout * 2 : zk::seconds(1);
  }
  return op;
}

}  // namespace

bool is_fault(const Op& op) {
  return op.kind == OpKind::kCut || op.kind == OpKind::kExpire || op.kind == OpKind::kPartition ||
         op.kind == OpKind::kRestart || op.lose != Lose::kNone;
}

int ends_session(const Op& op, int servers, zk::Duration session_timeout) {
  if (op.kind == OpKind::kClose || op.kind == OpKind::kExpire) return op.slot;
  if (op.kind == OpKind::kPartition && op.duration > session_timeout) return op.slot;
  // On an ensemble slot i talks to server i + 1 only; the leader (1) is never restarted.
  if (op.kind == OpKind::kRestart && servers > 1 && op.server >= 2 && op.server - 1 < kSlots &&
      op.duration > session_timeout) {
    return op.server - 1;
  }
  return -1;
}

Sequence generate(uint64_t seed, size_t ops, const GenerateOptions& options) {
  zk::Prng rng = zk::Prng(seed).split("fidelity-sequence");
  zk::Prng frng = zk::Prng(seed).split("fidelity-faults");
  Sequence out;
  out.reserve(ops);
  std::array<bool, kSlots> closed{};
  Model model;
  auto add = [&](const Op& op) {
    model.apply(op, closed);
    const int ended = ends_session(op, options.servers, options.session_timeout);
    if (ended >= 0) {
      closed[ended] = true;
      model.end(ended);
    }
    if (op.kind == OpKind::kReopen) closed[op.slot] = false;
    out.push_back(op);
  };
  if (ops > 0) {
    // Most sequences start with /d in place (persistent, or someone's ephemeral), so that the
    // rest of the sequence works inside the tree rather than against missing parents.
    Op first;
    first.kind = OpKind::kCreate;
    first.slot = static_cast<int>(rng.below(kSlots));
    first.path = "/d";
    first.mode = rng.chance(3, 4) ? zk::CreateMode::kPersistent : zk::CreateMode::kEphemeral;
    add(first);
  }
  while (out.size() < ops) {
    if (options.faults && frng.chance(1, 14)) {
      const int slot = static_cast<int>(frng.below(kSlots));
      if (!closed[slot]) {
        add(fault(frng, model, slot, options));
        continue;
      }
    }
    Op op;
    op.slot = static_cast<int>(rng.below(kSlots));
    if (closed[op.slot] && rng.chance(2, 3)) {
      op.kind = OpKind::kReopen;
      add(op);
      continue;
    }
    const uint64_t r = rng.below(100);
    if (r < 55) {
      op = mutation(rng, model, op.slot, r);
    } else if (r < 65) {
      op.kind = OpKind::kGetData;
      op.path = model.pick_existing(rng);
      op.watch = rng.chance(1, 2);
    } else if (r < 77) {
      op.kind = OpKind::kExists;
      op.path = model.pick_existing(rng);
      op.watch = rng.chance(1, 2);
    } else if (r < 91) {
      op.kind = OpKind::kGetChildren;
      op.path = rng.chance(1, 2) ? "/d" : model.pick_existing(rng);
      op.watch = rng.chance(1, 2);
    } else if (r < 96) {
      op.kind = OpKind::kSync;
      op.path = model.pick_existing(rng);
    } else {
      op.kind = OpKind::kClose;
    }
    add(op);
  }
  return out;
}

std::string to_string(const Op& op) {
  std::string s = "s" + std::to_string(op.slot) + " ";
  auto version = [&] {
    return op.version == zk::kAnyVersion ? std::string() : " v=" + std::to_string(op.version);
  };
  const std::string watch = op.watch ? " watch" : "";
  const std::string lose = op.lose == Lose::kReply     ? " !lost-reply"
                           : op.lose == Lose::kRequest ? " !lost-request"
                                                       : "";
  switch (op.kind) {
    case OpKind::kCreate:
      return s + "create " + op.path + " '" + op.data + "' " + zk::to_string(op.mode) + lose;
    case OpKind::kDelete: return s + "delete " + op.path + version() + lose;
    case OpKind::kSetData:
      return s + "set_data " + op.path + " '" + op.data + "'" + version() + lose;
    case OpKind::kGetData: return s + "get_data " + op.path + watch;
    case OpKind::kExists: return s + "exists " + op.path + watch;
    case OpKind::kGetChildren: return s + "get_children " + op.path + watch;
    case OpKind::kSync: return s + "sync " + op.path;
    case OpKind::kClose: return s + "close";
    case OpKind::kReopen: return s + "reopen";
    case OpKind::kCut: return s + "cut";
    case OpKind::kExpire: return s + "expire";
    case OpKind::kPartition: return s + "partition " + zk::to_string(op.duration);
    case OpKind::kRestart:
      return "restart server " + std::to_string(op.server) + " for " + zk::to_string(op.duration);
  }
  return s + "?";
}

namespace {

bool parse_duration(const std::string& t, zk::Duration* out) {
  size_t digits = 0;
  while (digits < t.size() && t[digits] >= '0' && t[digits] <= '9') ++digits;
  if (digits == 0 || digits > 9) return false;
  const int64_t n = std::stoll(t.substr(0, digits));
  const std::string unit = t.substr(digits);
  if (unit == "s")
    *out = zk::seconds(n);
  else if (unit == "ms")
    *out = zk::milliseconds(n);
  else if (unit == "us")
    *out = zk::microseconds(n);
  else
    return false;
  return true;
}

// Splits on spaces, keeping a '...' token (data, possibly empty) whole.
bool tokens_of(const std::string& text, std::vector<std::string>* out) {
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] == ' ') {
      ++i;
      continue;
    }
    if (text[i] == '\'') {
      const size_t end = text.find('\'', i + 1);
      if (end == std::string::npos) return false;
      out->push_back(text.substr(i, end - i + 1));
      i = end + 1;
      continue;
    }
    const size_t end = std::min(text.find(' ', i), text.size());
    out->push_back(text.substr(i, end - i));
    i = end;
  }
  return true;
}

bool parse_mode(const std::string& t, zk::CreateMode* out) {
  for (int m = 0; m < 4; ++m) {
    if (zk::to_string(static_cast<zk::CreateMode>(m)) == t) {
      *out = static_cast<zk::CreateMode>(m);
      return true;
    }
  }
  return false;
}

}  // namespace

bool parse_op(const std::string& text, Op* out, std::string* error) {
  std::vector<std::string> t;
  auto fail = [&](const std::string& why) {
    *error = "\"" + text + "\": " + why;
    return false;
  };
  if (!tokens_of(text, &t)) return fail("a quoted data value is not closed");
  if (t.empty()) return fail("empty operation");
  Op op;
  if (t[0] == "restart") {
    if (t.size() != 5 || t[1] != "server" || t[3] != "for") {
      return fail("expected \"restart server N for DURATION\"");
    }
    if (t[2].size() != 1 || t[2][0] < '1' || t[2][0] > '3') return fail("a server is 1, 2 or 3");
    op.kind = OpKind::kRestart;
    op.server = t[2][0] - '0';
    if (!parse_duration(t[4], &op.duration) || op.duration.us <= 0) {
      return fail("expected a duration (1s, 500ms)");
    }
    *out = op;
    return true;
  }
  if (t[0].size() != 2 || t[0][0] != 's' || t[0][1] < '0' || t[0][1] >= '0' + kSlots) {
    return fail("expected a slot (s0 or s1) first");
  }
  if (t.size() < 2) return fail("expected an operation after the slot");
  op.slot = t[0][1] - '0';
  const std::string& name = t[1];
  size_t next = 2;
  auto take_path = [&]() -> bool {
    if (next >= t.size() || (t[next][0] != '/' && t[next] != "$last")) return false;
    op.path = t[next++];
    return true;
  };
  auto take_data = [&]() -> bool {
    if (next >= t.size() || t[next].size() < 2 || t[next][0] != '\'') return false;
    op.data = t[next].substr(1, t[next].size() - 2);
    ++next;
    return true;
  };
  if (name == "create") {
    op.kind = OpKind::kCreate;
    if (!take_path() || !take_data()) return fail("expected \"create PATH 'DATA' MODE\"");
    if (next >= t.size() || !parse_mode(t[next++], &op.mode)) {
      return fail(
          "expected a mode: persistent, ephemeral, persistent-sequential or "
          "ephemeral-sequential");
    }
  } else if (name == "delete" || name == "set_data") {
    op.kind = name == "delete" ? OpKind::kDelete : OpKind::kSetData;
    if (!take_path()) return fail("expected a path (/d... or $last)");
    if (op.kind == OpKind::kSetData && !take_data()) return fail("expected 'DATA'");
    if (next < t.size() && t[next].rfind("v=", 0) == 0) {
      const std::string v = t[next++].substr(2);
      if (v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos) {
        return fail("a version is v=N");
      }
      op.version = static_cast<zk::Version>(std::stoi(v));
    }
  } else if (name == "get_data" || name == "exists" || name == "get_children") {
    op.kind = name == "get_data" ? OpKind::kGetData
              : name == "exists" ? OpKind::kExists
                                 : OpKind::kGetChildren;
    if (!take_path()) return fail("expected a path (/d... or $last)");
    if (next < t.size() && t[next] == "watch") {
      op.watch = true;
      ++next;
    }
  } else if (name == "sync") {
    op.kind = OpKind::kSync;
    if (!take_path()) return fail("expected a path (/d... or $last)");
  } else if (name == "close" || name == "reopen" || name == "cut" || name == "expire") {
    op.kind = name == "close"    ? OpKind::kClose
              : name == "reopen" ? OpKind::kReopen
              : name == "cut"    ? OpKind::kCut
                                 : OpKind::kExpire;
  } else if (name == "partition") {
    op.kind = OpKind::kPartition;
    if (next >= t.size() || !parse_duration(t[next++], &op.duration) || op.duration.us <= 0) {
      return fail("expected a duration (250ms, 4s)");
    }
  } else {
    return fail("unknown operation \"" + name +
                "\" (create, delete, set_data, get_data, exists, get_children, sync, close, "
                "reopen, cut, expire, partition, restart)");
  }
  if (next < t.size() && (t[next] == "!lost-reply" || t[next] == "!lost-request")) {
    if (op.kind != OpKind::kCreate && op.kind != OpKind::kDelete && op.kind != OpKind::kSetData) {
      return fail("only create, delete and set_data can lose a message");
    }
    op.lose = t[next] == "!lost-reply" ? Lose::kReply : Lose::kRequest;
    ++next;
  }
  if (next != t.size()) return fail("unexpected \"" + t[next] + "\"");
  *out = op;
  return true;
}

bool valid(const Sequence& seq, int servers, zk::Duration session_timeout, std::string* error) {
  std::array<bool, kSlots> ended{};
  for (size_t i = 0; i < seq.size(); ++i) {
    const Op& op = seq[i];
    auto fail = [&](const char* why) {
      *error = "op #" + std::to_string(i) + " " + to_string(op) + ": " + why;
      return false;
    };
    if (op.kind == OpKind::kRestart) {
      if (op.server < 1 || op.server > servers) return fail("no such server");
      if (servers > 1 && op.server == 1) return fail("a leader restart is not modelled");
    } else {
      if (is_fault(op) && ended[op.slot]) return fail("a fault on a slot whose session ended");
      if (op.kind == OpKind::kReopen) {
        if (!ended[op.slot]) return fail("a reopen of a live session");
        ended[op.slot] = false;
      }
    }
    const int ends = ends_session(op, servers, session_timeout);
    if (ends >= 0) ended[ends] = true;
  }
  return true;
}

}  // namespace lockstep::fidelity
