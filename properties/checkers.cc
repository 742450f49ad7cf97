#include "properties/checkers.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <iterator>
#include <map>
#include <optional>
#include <set>

#include "properties/belief.h"
#include "zk/flat_map.h"

namespace lockstep::properties {

using zk::FlatMap;

namespace {

using recipes::LockState;
using recipes::Role;

std::string client_name(uint32_t c) { return "c" + std::to_string(c); }

std::string holder_name(Holder h) {
  return client_name(h.first) + (h.second != 0 ? ".t" + std::to_string(h.second) : "");
}
std::string holder_name(const Event& e) { return holder_name(holder_of(e)); }

// A semaphore's capacity over the run: `initial` (max_holders), then from each kCapacity event
// on, the count it set (history order is time order).
class Capacity {
 public:
  Capacity(const History& h, uint32_t initial) : initial_(std::max<uint32_t>(1, initial)) {
    for (const Event& e : h.events()) {
      if (e.op == Op::kCapacity && e.token > 0) {
        changes_.emplace_back(e.at, static_cast<uint32_t>(std::min<int64_t>(e.token, INT32_MAX)));
      }
    }
  }
  // In force at `t` (a change at `t` included).
  uint32_t at(zk::Time t) const {
    uint32_t c = initial_;
    for (const auto& [when, n] : changes_) {
      if (when > t) break;
      c = n;
    }
    return c;
  }
  // The largest count in force at any instant of [from, to]: what a grant decided in that span
  // may have read.
  uint32_t max_during(zk::Time from, zk::Time to) const {
    uint32_t c = at(from);
    for (const auto& [when, n] : changes_) {
      if (when > from && when <= to) c = std::max(c, n);
    }
    return c;
  }
  bool changes() const { return !changes_.empty(); }

 private:
  uint32_t initial_;
  std::vector<std::pair<zk::Time, uint32_t>> changes_;
};

std::string at_ref(const Event& e) {
  return "#" + std::to_string(e.index) + " " + format_time(e.at);
}

Verdict violation(Property p, std::string message, std::vector<uint64_t> history_indexes) {
  std::sort(history_indexes.begin(), history_indexes.end());
  history_indexes.erase(std::unique(history_indexes.begin(), history_indexes.end()),
                        history_indexes.end());
  return Verdict{p, false, std::move(message), std::move(history_indexes), {}};
}

bool overlaps(recipes::Kind kind, uint32_t max_holders, Role incoming,
              const std::vector<const Belief*>& others) {
  switch (kind) {
    case recipes::Kind::kMutex:
    case recipes::Kind::kElection: return !others.empty();
    case recipes::Kind::kSemaphore: return others.size() + 1 > std::max<uint32_t>(1, max_holders);
    case recipes::Kind::kReadWrite:
      if (incoming != Role::kRead) return !others.empty();
      for (const Belief* b : others) {
        if (b->role != Role::kRead) return true;
      }
      return false;
  }
  return false;
}

// Sorts `items` unless they are in order already (the ServerView's lists and what is derived
// from them are recorded in position order: checking costs less than sorting).
template <class T>
void sort_unless_sorted(std::vector<T>* items) {
  if (!std::is_sorted(items->begin(), items->end())) std::sort(items->begin(), items->end());
}

// The elements of `items`, ordered by `position_of` (never decreasing), whose positions lie in
// (after, upto], or after `after` when there is no `upto`: [first, last).
template <class T, class Position>
std::pair<typename std::vector<T>::const_iterator, typename std::vector<T>::const_iterator>
in_positions(const std::vector<T>& items, uint64_t after, std::optional<uint64_t> upto,
             Position position_of) {
  const auto first = std::partition_point(items.begin(), items.end(),
                                          [&](const T& x) { return position_of(x) <= after; });
  const auto last = !upto ? items.end() : std::partition_point(first, items.end(), [&](const T& x) {
    return position_of(x) <= *upto;
  });
  return {first, last};
}

// The sequence suffix of a lock node's name, or nullopt (for ordering "what waits on what").
std::optional<int32_t> sequence_of(std::string_view path) {
  if (path.size() < 10) return std::nullopt;
  std::string_view tail = path.substr(path.size() - 10);
  zk::Sequence s;
  if (zk::parse_sequence_suffix(tail, &s)) return s.value;
  if (path.size() >= 11) {
    std::string_view neg = path.substr(path.size() - 11);
    if (neg.front() == '-' && zk::parse_sequence_suffix(neg, &s)) return s.value;
  }
  return std::nullopt;
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

// Which client used which session, and the last session of each client.
struct SessionMap {
  std::map<uint64_t, uint32_t> owner;    // session id -> client
  std::map<uint32_t, uint64_t> current;  // client -> its last session id
  explicit SessionMap(const History& h) {
    for (const Event& e : h.events()) {
      if (e.client == 0 || !e.session.valid()) continue;
      owner[e.session.value] = e.client;
      current[e.client] = e.session.value;
    }
  }
  std::string name(zk::SessionId s) const {
    auto it = owner.find(s.value);
    std::string out = "session " + hex(s.value);
    if (it != owner.end()) out += " (" + client_name(it->second) + ")";
    return out;
  }
};

enum class Status : uint8_t { kRunning, kDone, kGaveUp, kCrashed };

FlatMap<uint32_t, Status> final_status(const History& h) {
  // Indexed by client (numbered from 1) while reading every event, then the clients seen.
  std::vector<std::optional<Status>> by_client;
  for (const Event& e : h.events()) {
    if (e.client == 0) continue;
    if (e.client >= by_client.size()) by_client.resize(size_t{e.client} + 1);
    std::optional<Status>& s = by_client[e.client];
    if (!s) s = Status::kRunning;
    if (e.op == Op::kDone) s = Status::kDone;
    if (e.op == Op::kGiveUp) s = Status::kGaveUp;
    if (e.op == Op::kCrash) s = Status::kCrashed;
  }
  FlatMap<uint32_t, Status> out;
  for (uint32_t c = 1; c < by_client.size(); ++c) {
    if (by_client[c]) out[c] = *by_client[c];
  }
  return out;
}

}  // namespace

namespace {

// Every other holder that believes it holds, as (holder, belief).
std::vector<std::pair<Holder, const Belief*>> other_holders(const BeliefTracker& t, Holder holder) {
  std::vector<std::pair<Holder, const Belief*>> out;
  for (const auto& [c, b] : t.beliefs()) {
    if (c != holder && b.holds) out.emplace_back(c, &b);
  }
  return out;
}

std::string holders_text(const History& h,
                         const std::vector<std::pair<Holder, const Belief*>>& others,
                         std::vector<uint64_t>* ev) {
  std::string msg;
  for (size_t i = 0; i < others.size(); ++i) {
    const Event& g = h[others[i].second->since];
    msg += (i == 0 ? " " : ", ") + holder_name(others[i].first) + " believed it held it since " +
           at_ref(g) + " (token " + std::to_string(others[i].second->token) + ")";
    ev->push_back(g.index);
  }
  return msg;
}

bool overlaps_with(recipes::Kind kind, uint32_t max_holders, Role role,
                   const std::vector<std::pair<Holder, const Belief*>>& others) {
  std::vector<const Belief*> bs;
  for (const auto& o : others) bs.push_back(o.second);
  return overlaps(kind, max_holders, role, bs);
}

}  // namespace

namespace {

// The two ways a history breaks exclusion, each the first of its kind: a fresh grant beside
// holders that fill the lock (`granted`), and a belief held beside them after its holder was
// told that its session died (`told`).
struct ExclusionBreaches {
  std::optional<Verdict> granted;
  std::optional<Verdict> told;
};

// One pass over `h`. With `grants` false the fresh grants are not judged; with `to_end` the pass
// goes on past the first breach until it finds a `told` one (or the history ends), otherwise it
// stops at the first breach of either kind.
ExclusionBreaches exclusion_breaches(const History& h, recipes::Kind kind, uint32_t max_holders,
                                     bool grants, bool to_end) {
  const Property p = Property::kMutualExclusion;
  const Capacity capacity(h, max_holders);
  BeliefTracker tracker;
  FlatMap<Holder, uint64_t> invoked;  // holder -> its latest acquire invocation
  ExclusionBreaches out;
  for (const Event& e : h.events()) {
    if (e.op == Op::kAcquire && e.type == Type::kInvoke) invoked[holder_of(e)] = e.index;
    if (grants && !out.granted && tracker.is_fresh_grant(e)) {
      const auto others = other_holders(tracker, holder_of(e));
      // A semaphore's grant is held to the largest capacity in force during its acquire.
      auto inv = invoked.find(holder_of(e));
      const zk::Time from = inv != invoked.end() ? h[inv->second].at : e.at;
      const uint32_t allowed = capacity.max_during(from, e.at);
      if (overlaps_with(kind, allowed, e.role, others)) {
        std::vector<uint64_t> ev{e.index};
        std::string msg = holder_name(e) + " was granted the lock at " + at_ref(e) + " (token " +
                          std::to_string(e.token) + ") while" + holders_text(h, others, &ev);
        if (kind == recipes::Kind::kSemaphore && capacity.changes()) {
          msg += " (capacity " + std::to_string(allowed) + ", the most in force since its " +
                 "acquire was invoked at " + format_time(from) + ")";
        }
        out.granted = violation(p, msg, ev);
        if (!to_end) return out;
      }
    }
    tracker.apply(e);
    // A holder told that its session is dead must stop believing at that instant; later
    // than that, its belief beside another holder's is a violation even under pauses.
    if (tracker.noticed() == 0) continue;
    for (const auto& [holder, b] : tracker.beliefs()) {
      if (!b.holds || !b.noticed || h[*b.noticed].at >= e.at) continue;
      const auto others = other_holders(tracker, holder);
      const uint32_t allowed = capacity.max_during(h[b.since].at, e.at);
      if (!overlaps_with(kind, allowed, b.role, others)) continue;
      std::vector<uint64_t> ev{*b.noticed, b.since, e.index};
      std::string msg = holder_name(holder) + " still believed it held the lock at " + at_ref(e) +
                        ", after its session was reported " +
                        zk::to_string(h[*b.noticed].session_state) + " at " +
                        at_ref(h[*b.noticed]) + ", while" + holders_text(h, others, &ev);
      out.told = violation(p, msg, ev);
      return out;
    }
  }
  return out;
}

}  // namespace

Verdict check_mutual_exclusion(const History& h, recipes::Kind kind, uint32_t max_holders,
                               bool informed_only) {
  ExclusionBreaches b = exclusion_breaches(h, kind, max_holders, !informed_only, false);
  if (b.granted) return std::move(*b.granted);
  if (b.told) return std::move(*b.told);
  return Verdict::pass(Property::kMutualExclusion);
}

InformedExclusion check_informed_exclusion(const History& h, recipes::Kind kind,
                                           uint32_t max_holders) {
  ExclusionBreaches b = exclusion_breaches(h, kind, max_holders, true, true);
  const Property p = Property::kMutualExclusion;
  InformedExclusion out{Verdict::pass(p), Verdict::pass(p)};
  if (b.told) {
    out.informed = *b.told;
    // The uninformed check stops at the first breach: the grant's when it came first.
    out.uninformed = b.granted ? std::move(*b.granted) : std::move(*b.told);
  } else if (b.granted) {
    out.uninformed = std::move(*b.granted);
  }
  return out;
}

Verdict check_fenced_safety(const History& h) {
  const Property p = Property::kFencedSafety;
  // A lock whose grants all carry token 0 hands out no fencing token: say so, rather than
  // blame two holders for sharing a token they never had.
  bool granted = false;
  bool any_token = false;
  for (const Event& e : h.events()) {
    if (e.op != Op::kAcquire || e.type != Type::kOk) continue;
    granted = true;
    any_token = any_token || e.token != 0;
  }
  const std::string cause =
      granted && !any_token
          ? "no fencing token: every grant carried token 0, so the resource cannot tell a stale "
            "holder from the current one; "
          : "";
  int64_t max_token = INT64_MIN;
  uint64_t max_event = 0;
  FlatMap<int64_t, std::pair<Holder, uint64_t>> token_holder;  // token -> (holder, event)
  for (const Event& e : h.events()) {
    if ((e.op != Op::kEnter && e.op != Op::kLeave) || e.type != Type::kOk) continue;
    if (e.token < max_token) {
      return violation(p,
                       cause + "the resource accepted token " + std::to_string(e.token) + " from " +
                           holder_name(e) + " at " + at_ref(e) + " after accepting token " +
                           std::to_string(max_token) + " at " + at_ref(h[max_event]),
                       {max_event, e.index});
    }
    auto [it, fresh] = token_holder.try_emplace(e.token, std::make_pair(holder_of(e), e.index));
    if (!fresh && it->second.first != holder_of(e)) {
      return violation(p,
                       cause + "token " + std::to_string(e.token) +
                           " was accepted from two holders: " + holder_name(it->second.first) +
                           " at " + at_ref(h[it->second.second]) + " and " + holder_name(e) +
                           " at " + at_ref(e),
                       {it->second.second, e.index});
    }
    if (e.token > max_token) {
      max_token = e.token;
      max_event = e.index;
    }
  }
  return Verdict::pass(p);
}

Verdict check_fifo(const History& h) {
  const Property p = Property::kFifo;
  BeliefTracker tracker;
  std::optional<uint64_t> max_any;     // event of the highest token granted so far
  std::optional<uint64_t> max_writer;  // the same among exclusive grants
  for (const Event& e : h.events()) {
    if (tracker.is_fresh_grant(e)) {
      const bool exclusive = e.role != Role::kRead;
      const std::optional<uint64_t>& bar = exclusive ? max_any : max_writer;
      if (bar && h[*bar].token > e.token) {
        const Event& earlier = h[*bar];
        return violation(p,
                         holder_name(e) + " was granted at " + at_ref(e) + " with token " +
                             std::to_string(e.token) + " (node " + e.text + "), after " +
                             holder_name(earlier) + " was granted at " + at_ref(earlier) +
                             " with the later token " + std::to_string(earlier.token) + " (node " +
                             earlier.text + "): the earlier node was queued and was passed over",
                         {earlier.index, e.index});
      }
      if (!max_any || h[*max_any].token < e.token) max_any = e.index;
      if (exclusive && (!max_writer || h[*max_writer].token < e.token)) max_writer = e.index;
    }
    tracker.apply(e);
  }
  return Verdict::pass(p);
}

namespace {

// The lost wake-up clause of check_liveness. A waiter is judged from the last completion (a
// fresh grant, or a failure) of an acquire by a holder that was waiting since before it: a
// recipe that hands the free room out in arrival order (a gated semaphore serves its gate queue
// one attempt at a time, and an attempt takes longer than a short hold, or runs to its timeout
// and cleans up) keeps later waiters waiting while the room is free and the queue ahead of
// them is served; that is progress, not a lost wake-up. A waiter passed over by later arrivals,
// or waiting while nobody is granted, is still judged from when the room became free.
// Arrival is the order of the queue's nodes where the server's view says it (`server`
// observed): a holder invoked after the waiter whose client created its node before the
// waiter's client created the waiter's is ahead of it (two clients' concurrent acquires race to
// the server; semaphore-gated 163285: c2's callers queued ahead of c4's second caller, invoked
// earlier). With shared callers a client's nodes are not told apart by caller, so the waiter's
// node is taken to be its client's newest (none yet: the holder's is ahead), the reading that
// excuses more.
std::optional<Verdict> lost_wakeup(const History& h, const LivenessOptions& o,
                                   const ServerView* server) {
  // Each client's lock-node creations on the leader: (history position, the leader's apply
  // order). Creations with no history event between them share a position; the apply order
  // (ServerView::nodes lists the leader's in zxid order) says which queued first (semaphore-gated
  // seed 401705: c2's three gate nodes and the waiter's, all at one position, c2's first).
  using Created = std::pair<uint64_t, size_t>;
  constexpr Created kNone{UINT64_MAX, SIZE_MAX};
  std::vector<std::vector<Created>> created;  // indexed by client (numbered from 1)
  if (server != nullptr && server->observed) {
    for (size_t i = 0; i < server->nodes.size(); ++i) {
      const ServerView::NodeChange& n = server->nodes[i];
      if (!n.created || n.server != 1 || n.client == 0) continue;
      if (n.client >= created.size()) created.resize(size_t{n.client} + 1);
      created[n.client].push_back({n.position, i});
    }
  }
  for (std::vector<Created>& mine : created) sort_unless_sorted(&mine);
  // The creations of `client` whose positions lie in (after, upto].
  const auto created_in = [&](uint32_t client, uint64_t after, uint64_t upto) {
    static const std::vector<Created> kNoCreations;
    return in_positions(client < created.size() ? created[client] : kNoCreations, after, upto,
                        [](const Created& c) { return c.first; });
  };
  // Did `client` create a node in (after, upto] (by position): the first such, or kNone.
  auto first_created = [&](uint32_t client, uint64_t after, uint64_t upto) {
    const auto [first, last] = created_in(client, after, upto);
    return first != last ? *first : kNone;
  };
  // ... the last such, or kNone.
  auto last_created = [&](uint32_t client, uint64_t after, uint64_t upto) {
    const auto [first, last] = created_in(client, after, upto);
    return first != last ? *std::prev(last) : kNone;
  };
  if (o.capacity == 0) return std::nullopt;
  BeliefTracker tracker;
  struct Waiting {
    uint64_t inv = 0;                // its fresh acquire's invocation
    std::optional<zk::Time> served;  // the last completion of an earlier waiter's acquire since
  };
  FlatMap<Holder, Waiting> waiting;  // holder -> its wait (one lookup per holder, not two)
  // The event since which fewer than capacity hold (kNotFree: they do not).
  constexpr uint64_t kNotFree = UINT64_MAX;
  uint64_t free_since = kNotFree;
  uint32_t capacity = o.capacity;  // a semaphore's count node may change it (kCapacity)
  for (const Event& e : h.events()) {
    if (free_since != kNotFree && e.at >= o.quiet_at) {
      for (const auto& [holder, wait] : waiting) {
        const uint64_t inv = wait.inv;
        zk::Time start = std::max({h[free_since].at, h[inv].at, o.quiet_at});
        if (wait.served) start = std::max(start, *wait.served);
        if (e.at - start <= o.grace) continue;
        return violation(Property::kLiveness,
                         holder_name(holder) + " waited (acquire invoked at " + at_ref(h[inv]) +
                             ") from " + format_time(start) + " to " + at_ref(e) +
                             " while fewer than " + std::to_string(capacity) +
                             " clients held the lock (since " + at_ref(h[free_since]) +
                             "): a lost wake-up",
                         {inv, free_since, e.index});
      }
    }
    if (e.op == Op::kCapacity && e.token > 0) capacity = static_cast<uint32_t>(e.token);
    // An earlier waiter's acquire completing, granted or failed (a timed-out gate holder that
    // cleaned up and handed the gate on), is the queue ahead being served.
    if (tracker.is_fresh_grant(e) || (e.op == Op::kAcquire && e.type == Type::kFail)) {
      auto done = waiting.find(holder_of(e));
      // The served acquire's first node, asked once (it is the same for every waiter).
      std::optional<Created> first_theirs;
      for (auto& [holder, wait] : waiting) {
        if (done == waiting.end() || holder == done->first) continue;
        const uint64_t inv = wait.inv;
        bool ahead = inv > done->second.inv;  // invoked before the waiter
        if (!ahead) {                         // or queued before it at the server
          if (!first_theirs) first_theirs = first_created(e.client, done->second.inv, e.index);
          const Created theirs = *first_theirs;
          const Created mine = last_created(holder.first, inv, e.index);
          // (the waiter's client has no node yet: the holder's is ahead of it too)
          ahead = theirs != kNone && (mine == kNone || theirs < mine);
        }
        if (ahead) wait.served = e.at;
      }
    }
    if (e.op == Op::kAcquire && e.type == Type::kInvoke && !tracker.holds(holder_of(e))) {
      waiting[holder_of(e)] = Waiting{e.index, std::nullopt};
    }
    if (e.op == Op::kAcquire && e.type != Type::kInvoke) waiting.erase(holder_of(e));
    if (e.op == Op::kCrash || e.op == Op::kGiveUp) {
      for (auto it = waiting.begin(); it != waiting.end();) {
        it = it->first.first == e.client ? waiting.erase(it) : std::next(it);
      }
    }
    tracker.apply(e);
    if (tracker.holding() >= capacity) {
      free_since = kNotFree;
    } else if (free_since == kNotFree) {
      free_since = e.index;
    }
  }
  return std::nullopt;
}

}  // namespace

// The wait-for graph of the clients still blocked at the end of a run: each blocked client
// waits on the node it watches (the servers' watch tables after the settle, when the run was
// observed; otherwise the node ordered just before its own, inferred), that node's session
// belongs to a client, and that client is blocked too, finished, or gone. Following the edges
// from each blocked client ends at a cycle or at what no one will remove: an orphan node, a
// watch on a node that is already gone, no watch at all.
class WaitForGraph {
 public:
  WaitForGraph(const History& h, const TreeSnapshot& tree, const ServerView* server,
               const FlatMap<uint32_t, Status>& status, const FlatMap<Holder, uint64_t>& pending)
      : tree_(tree), sessions_(h), status_(status) {
    watched_ = server != nullptr && server->observed;
    for (const auto& [holder, index] : pending) blocked_.insert(holder.first);
    for (const auto& [client, st] : status) {
      if (st == Status::kRunning) edges_[client] = edges_of(client, server);
    }
    if (!watched_) return;
    // Clients whose last activity was a notification: they were told and did nothing (a session
    // event the library delivered after it is not something the client did).
    std::map<uint32_t, const ServerView::Activity*> last;
    for (const ServerView::Activity& a : server->activity) {
      if (a.kind != ServerView::Activity::Kind::kSessionEvent) last[a.client] = &a;
    }
    for (const auto& [client, a] : last) {
      if (a->kind == ServerView::Activity::Kind::kNotification) unanswered_[client] = a->position;
    }
  }

  // "wait-for graph (...):" then one line per edge and one per distinct end.
  std::string describe() const {
    std::string out = watched_ ? "wait-for graph (from the servers' watch tables at the end):"
                               : "wait-for graph (no watch table for this run: each client is "
                                 "taken to wait on the node just before its own):";
    std::vector<std::string> ends;
    for (const auto& [client, edges] : edges_) {
      if (edges.empty()) {
        out += "\n  " + client_name(client) +
               (watched_ ? " watches no lock node" : " has no node before its own");
      }
      for (const Edge& e : edges) out += "\n  " + client_name(client) + " -> " + edge_text(e);
      const std::string end = follow(client);
      if (std::find(ends.begin(), ends.end(), end) == ends.end()) ends.push_back(end);
    }
    for (const std::string& end : ends) out += "\n  " + end;
    return out;
  }

 private:
  struct Edge {
    std::string path;
    std::string how;  // "exists/data watch", "children watch on /l", "ordered after"
    const NodeSnapshot* node = nullptr;  // nullptr: not in the directory at the end
  };

  const NodeSnapshot* find(const std::string& path) const {
    for (const NodeSnapshot& n : tree_.nodes) {
      if (n.path == path) return &n;
    }
    return nullptr;
  }
  std::optional<uint64_t> session_of(uint32_t client) const {
    auto it = sessions_.current.find(client);
    if (it == sessions_.current.end()) return std::nullopt;
    return it->second;
  }
  // The lowest sequence among the client's own live nodes.
  std::optional<int32_t> own_sequence(uint32_t client) const {
    const std::optional<uint64_t> session = session_of(client);
    std::optional<int32_t> out;
    for (const NodeSnapshot& n : tree_.nodes) {
      if (!session || n.owner.value != *session) continue;
      const std::optional<int32_t> s = sequence_of(n.path);
      if (s && (!out || *s < *out)) out = s;
    }
    return out;
  }
  // The sequential node ordered just before sequence `own` (the first one when `first`).
  const NodeSnapshot* before(int32_t own, bool first) const {
    const NodeSnapshot* out = nullptr;
    std::optional<int32_t> best;
    for (const NodeSnapshot& n : tree_.nodes) {
      const std::optional<int32_t> s = sequence_of(n.path);
      if (!s || *s >= own) continue;
      if (!best || (first ? *s < *best : *s > *best)) {
        best = s;
        out = &n;
      }
    }
    return out;
  }

  std::vector<Edge> edges_of(uint32_t client, const ServerView* server) const {
    std::vector<Edge> out;
    const std::optional<int32_t> own = own_sequence(client);
    if (!watched_) {
      if (const NodeSnapshot* n = own ? before(*own, false) : nullptr) {
        out.push_back(Edge{n->path, "ordered just before its node", n});
      }
      return out;
    }
    for (const ServerView::WatchLeft& w : server->watches_at_end) {
      if (w.client != client) continue;
      if (w.children) {
        // A children watch waits for any change below the directory: the first node in the
        // queue is the one whose delete it needs.
        const NodeSnapshot* n = own ? before(*own, true) : nullptr;
        out.push_back(Edge{n != nullptr ? n->path : w.path, "children watch on " + w.path, n});
        continue;
      }
      out.push_back(Edge{w.path, "exists/data watch", w.exists ? find(w.path) : nullptr});
    }
    return out;
  }

  std::string owner_text(const NodeSnapshot& n) const {
    if (!n.owner.valid()) return "a persistent node";
    return "owned by " + sessions_.name(n.owner) + (n.owner_alive ? " (alive)" : " (dead)");
  }
  std::string edge_text(const Edge& e) const {
    if (e.node == nullptr) {
      return e.path + " (" + e.how + "), which is gone: no delete of it will come to wake it";
    }
    return e.path + " (" + e.how + "), " + owner_text(*e.node);
  }

  // Walks from `start` along each client's first edge to what ends the chain.
  std::string follow(uint32_t start) const {
    std::vector<uint32_t> path{start};
    uint32_t cur = start;
    for (;;) {
      auto it = edges_.find(cur);
      const std::string who = client_name(cur);
      if (it == edges_.end() || it->second.empty()) {
        if (!watched_) return "ends at " + who + ": it has no node before its own to wait on";
        auto heard = unanswered_.find(cur);
        if (heard != unanswered_.end()) {
          return "ends at " + who + ": a watch notification reached it (after history event #" +
                 std::to_string(heard->second) +
                 ") and it has sent nothing since: it never acted on it (is the thread that "
                 "delivers its events blocked?)";
        }
        return "ends at " + who +
               ": it watches no lock node, so nothing will wake it (a lost wake-up)";
      }
      const Edge& e = it->second.front();
      if (e.node == nullptr) {
        return "ends at " + e.path + ": " + who + " watches it, but it is gone and " + who +
               " was not woken (a lost wake-up)";
      }
      const NodeSnapshot& n = *e.node;
      const std::string node = n.path;
      if (!n.owner.valid()) return "ends at " + node + ": a persistent node nobody deletes";
      if (!n.owner_alive) {
        return "ends at " + node + ": its session is dead, yet the servers still hold the node";
      }
      auto owner = sessions_.owner.find(n.owner.value);
      if (owner == sessions_.owner.end()) {
        return "ends at " + node + ": owned by " + sessions_.name(n.owner) +
               ", which is no workload client's: nobody will delete it";
      }
      const uint32_t d = owner->second;
      const std::string dn = client_name(d);
      if (session_of(d) != n.owner.value) {
        return "ends at the orphan " + node + ": " + dn + " moved to a new session and left " +
               sessions_.name(n.owner) + " alive, owning it";
      }
      if (d == cur) {
        return "ends at the orphan " + node + ": " + who +
               " waits on a node its own session owns, which its recipe has lost track of (a "
               "create whose reply was lost, or a node name overwritten): nobody will delete it";
      }
      auto st = status_.find(d);
      if (st != status_.end() && st->second != Status::kRunning) {
        const char* did = st->second == Status::kDone     ? "finished its rounds"
                          : st->second == Status::kGaveUp ? "gave up"
                                                          : "crashed";
        return "ends at the orphan " + node + ": " + dn + " " + did +
               ", but its session still owns the node";
      }
      if (auto seen = std::find(path.begin(), path.end(), d); seen != path.end()) {
        std::string cycle;
        for (auto c = seen; c != path.end(); ++c) cycle += client_name(*c) + " -> ";
        return "cycle: " + cycle + dn + ": each waits for the next one's node to go";
      }
      if (blocked_.count(d) == 0) {
        return "ends at " + node + ": " + dn + " owns it and is not blocked in the lock, yet " +
               "never finished its rounds";
      }
      path.push_back(d);
      cur = d;
    }
  }

  const TreeSnapshot& tree_;
  const SessionMap sessions_;
  const FlatMap<uint32_t, Status>& status_;
  bool watched_ = false;
  std::map<uint32_t, uint64_t> unanswered_;      // client -> the position of its last notification,
                                                 // when it sent nothing after it
  std::set<uint32_t> blocked_;                   // clients blocked in acquire or release
  std::map<uint32_t, std::vector<Edge>> edges_;  // each running client's wait edges
};

Verdict check_liveness(const History& h, const LivenessOptions& o, const TreeSnapshot& tree,
                       const ServerView* server) {
  const Property p = Property::kLiveness;
  const zk::Time heal_at = o.heal_at;
  const zk::Duration bound = o.bound;

  // 1. Every completed acquire / release finished within the bound after the heal.
  FlatMap<Holder, uint64_t> pending;  // holder -> its open invocation
  for (const Event& e : h.events()) {
    if (e.op != Op::kAcquire && e.op != Op::kRelease) continue;
    if (e.type == Type::kInvoke) {
      pending[holder_of(e)] = e.index;
      continue;
    }
    auto it = pending.find(holder_of(e));
    if (it == pending.end()) continue;
    const Event& inv = h[it->second];
    pending.erase(it);
    const zk::Time start = std::max(inv.at, heal_at);
    if (e.at - start > bound) {
      return violation(
          p,
          holder_name(e) + "'s " + to_string(e.op) + " invoked at " + at_ref(inv) +
              " completed only at " + at_ref(e) + ", more than " + zk::to_string(bound) +
              " after " +
              (inv.at > heal_at ? "its invocation" : "the heal at " + format_time(heal_at)),
          {inv.index, e.index});
    }
  }
  // 2. Every client that is still a waiter at the end is blocked.
  const FlatMap<uint32_t, Status> status = final_status(h);
  std::optional<SessionMap> sessions;  // only to describe a blocked client
  std::string msg;
  std::vector<uint64_t> ev;
  for (const auto& [client, st] : status) {
    if (st != Status::kRunning) continue;
    if (!sessions) sessions.emplace(h);
    std::string what;
    for (const auto& [holder, index] : pending) {
      if (holder.first != client) continue;
      const Event& inv = h[index];
      what += std::string(what.empty() ? "" : ", ") +
              (holder.second != 0 ? "caller t" + std::to_string(holder.second) + " " : "") +
              "is blocked in " + to_string(inv.op) + " since " + at_ref(inv);
      ev.push_back(inv.index);
    }
    if (what.empty()) what = "never finished its rounds";
    auto cur = sessions->current.find(client);
    std::string own;
    for (const NodeSnapshot& n : tree.nodes) {
      if (cur != sessions->current.end() && n.owner.value == cur->second) {
        own += (own.empty() ? "" : ", ") + n.path;
      }
    }
    what += own.empty() ? "; its session owns no lock node" : "; its node(s): " + own;
    // The client library's last word on the session tells a dead handle from a live one.
    for (auto it = h.events().rbegin(); it != h.events().rend(); ++it) {
      if (it->client == client && it->op == Op::kSession) {
        what += "; its session was last reported " + zk::to_string(it->session_state) + " at " +
                at_ref(*it);
        break;
      }
    }
    msg += (msg.empty() ? "" : "\n") + client_name(client) + " " + what;
  }
  if (!msg.empty()) {
    msg += "\n" + WaitForGraph(h, tree, server, status, pending).describe();
    return violation(
        p, msg + "\n(at the end of the run; faults healed at " + format_time(heal_at) + ")", ev);
  }
  if (std::optional<Verdict> v = lost_wakeup(h, o, server)) return *v;
  return Verdict::pass(p);
}

Verdict check_no_orphans(const History& h, const TreeSnapshot& tree) {
  const Property p = Property::kNoOrphans;
  // Only a node a live session owns can be an orphan: without one there is nothing to judge.
  const auto live_owner = [](const NodeSnapshot& n) { return n.owner.valid() && n.owner_alive; };
  if (std::none_of(tree.nodes.begin(), tree.nodes.end(), live_owner)) return Verdict::pass(p);
  const FlatMap<uint32_t, Status> status = final_status(h);
  const SessionMap sessions(h);
  // A client still waiting in acquire (in any of its callers) knows about its own node.
  std::map<Holder, bool> acquiring;
  for (const Event& e : h.events()) {
    if (e.op == Op::kAcquire) acquiring[holder_of(e)] = e.type == Type::kInvoke;
  }
  std::map<uint32_t, bool> waiting;
  for (const auto& [holder, open] : acquiring) {
    waiting[holder.first] = waiting[holder.first] || open;
  }
  std::string msg;
  for (const NodeSnapshot& n : tree.nodes) {
    if (!live_owner(n)) continue;
    auto own = sessions.owner.find(n.owner.value);
    if (own != sessions.owner.end()) {
      const uint32_t c = own->second;
      const bool current = sessions.current.at(c) == n.owner.value;
      auto st = status.find(c);
      if (current && st != status.end() && st->second == Status::kRunning && waiting[c]) {
        continue;
      }
    }
    msg += (msg.empty() ? "" : "\n") + n.path + " (czxid " + std::to_string(n.czxid.value) +
           ") is held by live " + sessions.name(n.owner) + ", whose client does not know of it";
  }
  if (!msg.empty()) return violation(p, "at quiescence:\n" + msg, {});
  return Verdict::pass(p);
}

Verdict check_herd_free(const std::vector<HerdSample>& herd, std::string_view lock_dir,
                        const History& h, const ServerView* server) {
  const Property p = Property::kHerdFree;
  // Clients that abandoned a wait: an acquire that failed, or one that never completed (the
  // client was cancelled or crashed in it).
  std::set<Holder> abandoned;
  std::map<Holder, bool> open;  // holder -> an acquire invoked and not completed
  for (const Event& e : h.events()) {
    if (e.op != Op::kAcquire) continue;
    if (e.type == Type::kInvoke) {
      open[holder_of(e)] = true;
      continue;
    }
    open[holder_of(e)] = false;
    if (e.type == Type::kFail) abandoned.insert(holder_of(e));
  }
  for (const auto& [client, waiting] : open) {
    if (waiting) abandoned.insert(client);
  }
  // An operator's delete (delete-node, delete-dir) takes a node from a client that is not told:
  // it believes on in a place the recipe keeps for one (a holder, the gate's holder, a lease's
  // waiter), with the watch it set there, while another client takes the place and sets its own.
  // A delete-dir takes every client's node at once (semaphore-gated seed 938611: the gate's
  // holder and a lease's waiter both went on past the gate beside the next gate holder).
  // path -> the client that created it (the leader's), built at the first delete-dir: most runs
  // have none.
  std::optional<std::map<std::string, uint32_t>> creator;
  uint32_t operator_deletes = 0;
  for (const Event& e : h.events()) {
    if (e.op != Op::kFault) continue;
    if (e.text.rfind("delete-node", 0) != 0 && e.text.rfind("delete-dir", 0) != 0) continue;
    uint32_t taken = 0;  // clients' nodes the leader deleted as the fault took effect
    if (server != nullptr && server->observed && e.text.rfind("delete-dir", 0) == 0) {
      if (!creator) {
        creator.emplace();
        for (const ServerView::NodeChange& n : server->nodes) {
          if (n.server == 1 && n.created) (*creator)[n.path] = n.client;
        }
      }
      for (const ServerView::NodeChange& n : server->nodes) {
        if (n.server != 1 || n.created || n.position != e.index) continue;
        auto c = creator->find(n.path);
        if (c != creator->end() && c->second != 0) ++taken;
      }
    }
    operator_deletes += std::max<uint32_t>(1, taken);
  }
  const uint32_t bound = 1 + static_cast<uint32_t>(abandoned.size()) + operator_deletes;
  const std::string prefix = std::string(lock_dir) + "/";
  for (const HerdSample& s : herd) {
    if (s.path.compare(0, prefix.size(), prefix) != 0) continue;
    if (s.notifications > bound) {
      return violation(p,
                       "deleting " + s.path + " (zxid " + std::to_string(s.zxid.value) +
                           ") delivered " + std::to_string(s.notifications) +
                           " watch notifications (bound " + std::to_string(bound) +
                           "), which caused " + std::to_string(s.requests_caused) + " requests",
                       {});
    }
  }
  return Verdict::pass(p);
}

Verdict check_reentrancy(const History& h) {
  const Property p = Property::kReentrancy;
  BeliefTracker tracker;
  FlatMap<Holder, uint64_t> release_invoke;  // holder -> index of its open release
  for (const Event& e : h.events()) {
    if (e.op == Op::kAcquire && e.type == Type::kOk) {
      const Belief* b = tracker.of(e);
      const bool holds = b != nullptr && b->holds;
      if (!holds && e.hold_count != 1) {
        return violation(p,
                         holder_name(e) + "'s fresh grant at " + at_ref(e) +
                             " reported hold_count " + std::to_string(e.hold_count) +
                             " instead of 1",
                         {e.index});
      }
      if (holds && (e.hold_count != b->depth + 1 || e.token != b->token)) {
        return violation(p,
                         holder_name(e) + " re-acquired at " + at_ref(e) +
                             " while holding at depth " + std::to_string(b->depth) +
                             " with token " + std::to_string(b->token) +
                             ", but the grant says hold_count " + std::to_string(e.hold_count) +
                             " and token " + std::to_string(e.token),
                         {b->since, e.index});
      }
    }
    if (e.op == Op::kRelease && e.type == Type::kInvoke) release_invoke[holder_of(e)] = e.index;
    if (e.op == Op::kRelease && e.type == Type::kOk) {
      auto it = release_invoke.find(holder_of(e));
      const uint32_t depth_before = it == release_invoke.end() ? 0 : h[it->second].hold_count;
      const bool inner = depth_before > 1;
      // A fault may suspend or lose the lock meanwhile; only an idle lock was given up.
      if (inner && e.state == LockState::kIdle) {
        return violation(p,
                         holder_name(e) + "'s inner release at " + at_ref(e) + " (depth " +
                             std::to_string(depth_before) + ") gave up the lock: its state is idle",
                         {it->second, e.index});
      }
      if (!inner && depth_before == 1 && e.state == LockState::kHeld) {
        return violation(p,
                         holder_name(e) + "'s last release at " + at_ref(e) + " left the lock held",
                         {it->second, e.index});
      }
    }
    if (e.op == Op::kStrayRelease && e.type != Type::kInvoke && e.error != zk::Error::kNothing) {
      return violation(p,
                       holder_name(e) + " released a lock it did not hold at " + at_ref(e) +
                           " and got " +
                           (e.type == Type::kOk ? std::string("success")
                                                : std::string(zk::error_name(e.error))) +
                           " instead of ZNOTHING",
                       {e.index});
    }
    tracker.apply(e);
  }
  return Verdict::pass(p);
}

Verdict check_timeout_cleanup(const History& h) {
  const Property p = Property::kTimeoutCleanup;
  FlatMap<Holder, uint64_t> gave_up;  // holder -> its timed-out / cancelled acquire
  for (const Event& e : h.events()) {
    if (e.op == Op::kAcquire && e.type == Type::kFail &&
        (e.error == zk::Error::kOperationTimeout || e.error == zk::Error::kCancelled)) {
      if (e.state != LockState::kIdle) {
        return violation(p,
                         holder_name(e) + "'s acquire failed with " + zk::error_name(e.error) +
                             " at " + at_ref(e) + " but the lock's state is not idle",
                         {e.index});
      }
      gave_up[holder_of(e)] = e.index;
    }
    if (e.op == Op::kProbe) {
      auto it = gave_up.find(holder_of(e));
      if (it == gave_up.end()) continue;
      const uint64_t failed = it->second;
      gave_up.erase(it);
      // Disconnected, the recipe cannot delete yet: no-orphans and liveness judge the rest.
      if (!e.text.empty() && e.error == zk::Error::kOk) {
        return violation(p,
                         holder_name(e) + "'s acquire failed with " +
                             zk::error_name(h[failed].error) + " at " + at_ref(h[failed]) +
                             " but its session still owns " + e.text,
                         {failed, e.index});
      }
    }
  }
  return Verdict::pass(p);
}

namespace {

// One acquire: its invocation, its completion (or none when it never completed), and whether
// its client's session or lock changed under it (a session event, a reopen, a lost lock).
struct AcquireSpan {
  uint64_t invoke = 0;
  std::optional<uint64_t> done;
  bool disturbed = false;
  // Other acquires of the same client (its other callers, with shared callers) whose spans
  // overlap this one: the client's requests and creates inside it may be theirs.
  uint32_t overlapping = 0;
};

std::vector<AcquireSpan> acquire_spans(const History& h) {
  std::vector<AcquireSpan> out;
  FlatMap<Holder, size_t> open;  // holder -> its open span
  for (const Event& e : h.events()) {
    if (e.op == Op::kAcquire && e.type == Type::kInvoke) {
      open[holder_of(e)] = out.size();
      out.push_back(AcquireSpan{e.index, std::nullopt, false, 0});
      continue;
    }
    if (e.op == Op::kAcquire) {
      auto it = open.find(holder_of(e));
      if (it == open.end()) continue;
      out[it->second].done = e.index;
      open.erase(it);
    } else if (e.op == Op::kSession || e.op == Op::kReopen || e.op == Op::kLost ||
               e.op == Op::kCrash || e.op == Op::kFault) {
      // A fact about the client (or, for kLost, one caller) disturbs each of its open acquires.
      for (const auto& [holder, span] : open) {
        if (holder.first == e.client && (e.op != Op::kLost || holder == holder_of(e))) {
          out[span].disturbed = true;
        }
      }
    }
  }
  // Overlap is symmetric, and each client's spans are in invocation order, each ending after it
  // starts: a later span overlaps an earlier one exactly when it starts before that one ends.
  std::vector<std::vector<size_t>> by_client;  // indexed by client (numbered from 1)
  for (size_t i = 0; i < out.size(); ++i) {
    const uint32_t client = h[out[i].invoke].client;
    if (client >= by_client.size()) by_client.resize(size_t{client} + 1);
    by_client[client].push_back(i);
  }
  for (const std::vector<size_t>& spans : by_client) {
    for (size_t x = 0; x < spans.size(); ++x) {
      AcquireSpan& a = out[spans[x]];
      const uint64_t end = a.done ? *a.done : h.size();
      for (size_t y = x + 1; y < spans.size() && out[spans[y]].invoke < end; ++y) {
        ++a.overlapping;
        ++out[spans[y]].overlapping;
      }
    }
  }
  return out;
}

// Positions (see ServerView) inside the span: after its invocation, up to its completion.
bool inside(const AcquireSpan& a, uint64_t position) {
  return position > a.invoke && (!a.done || position <= *a.done);
}

// The elements of `items`, ordered by `position_of` (never decreasing), whose positions are
// inside the span: [first, last).
template <class T, class Position>
std::pair<typename std::vector<T>::const_iterator, typename std::vector<T>::const_iterator>
inside_range(const std::vector<T>& items, const AcquireSpan& a, Position position_of) {
  return in_positions(items, a.invoke, a.done, position_of);
}

uint64_t position_itself(uint64_t position) { return position; }

}  // namespace

Verdict check_bounded_load(const History& h, const ServerView& v, uint32_t max_repeats) {
  const Property p = Property::kBoundedLoad;
  if (!v.observed) return Verdict::pass(p);
  using Activity = ServerView::Activity;
  // Each client's activity, indexed by client (a run's clients are numbered from 1).
  uint32_t max_client = 0;
  for (const Activity& a : v.activity) max_client = std::max(max_client, a.client);
  std::vector<std::vector<const Activity*>> by_client(size_t{max_client} + 1);
  for (const Activity& a : v.activity) by_client[a.client].push_back(&a);
  const std::vector<const Activity*> none;
  const auto activity_position = [](const Activity* a) { return a->position; };
  // Node changes under the lock are stimuli for every client.
  std::vector<uint64_t> changes;
  changes.reserve(v.nodes.size());
  for (const ServerView::NodeChange& n : v.nodes) changes.push_back(n.position);
  sort_unless_sorted(&changes);
  // So are the faults that hit a client (a cancellation starts its cleanup): each client's, by
  // history index; indexed by client. A fault counts for a request after it in the history, and
  // for one at the same instant or later (the history records a fault after everything at its
  // instant has run, the requests it caused then included: the cancellation that sent an
  // example recipe's cleanup check again, seed 26292). Its session events are stimuli as its
  // library delivered them (activity), not as the history has them: the workload's session listener
  // records them there, late when that task is held (a `stall` of session-watch) while the recipe's
  // watch heard of the disconnection at once (exclusive, seed 9776769).
  std::vector<std::vector<uint64_t>> hits;
  for (const Event& e : h.events()) {
    if (e.op != Op::kFault) continue;
    if (e.client >= hits.size()) hits.resize(size_t{e.client} + 1);
    hits[e.client].push_back(e.index);
  }
  std::vector<std::pair<std::string_view, uint32_t>> sent;  // request -> times sent in the span
  for (const AcquireSpan& a : acquire_spans(h)) {
    const Event& inv = h[a.invoke];
    // Stimuli inside the span, as positions: node changes; the faults that hit the client, an
    // event at index i counting from i + 1; its activity other than requests (notifications,
    // failed requests, session events). Each source is in position order, so the stimuli at or
    // before each request (in order) are counted by advancing through the three.
    auto [changed, changes_end] = inside_range(changes, a, position_itself);
    std::vector<uint64_t>::const_iterator hit{}, hits_end{};  // none when the client has none
    if (inv.client < hits.size()) {
      const std::vector<uint64_t>& mine = hits[inv.client];
      hit = std::upper_bound(mine.cbegin(), mine.cend(), a.invoke);
      hits_end = std::lower_bound(hit, mine.cend(), a.done ? *a.done : h.size());
    }
    const auto [first, last] = inside_range(
        inv.client < by_client.size() ? by_client[inv.client] : none, a, activity_position);
    auto other = first;  // the next activity to count if it is not a request
    // A reaction may come late (a waiter handles queued session events one by one), so the
    // budget of a request grows with every stimulus since the acquire began.
    sent.clear();
    size_t seen = 0;  // stimuli at or before the current request
    for (auto it = first; it != last; ++it) {
      const Activity* act = *it;
      if (act->kind != Activity::Kind::kRequest) continue;
      auto s = std::find_if(sent.begin(), sent.end(),
                            [&](const auto& r) { return r.first == act->request; });
      if (s == sent.end()) s = sent.insert(s, {act->request, 0});
      const uint32_t count = ++s->second;
      // Within the budget of no stimulus at all (most requests): `seen` is not needed yet. It
      // counts what lies at or before a position, so it is brought up to date only when asked,
      // from where it last stopped: the node changes (every client's, on every server: most of
      // what a span holds) by a binary search, the rest by stepping.
      if (count <= uint64_t{max_repeats} * (1 + a.overlapping)) continue;
      const auto changed_upto = std::upper_bound(changed, changes_end, act->position);
      seen += static_cast<size_t>(changed_upto - changed);
      changed = changed_upto;
      for (; hit != hits_end && (*hit + 1 <= act->position || (act->at && h[*hit].at <= *act->at));
           ++hit) {
        ++seen;
      }
      for (; other != last && (*other)->position <= act->position; ++other) {
        seen += (*other)->kind != Activity::Kind::kRequest ? 1 : 0;
      }
      const uint64_t budget = uint64_t{max_repeats} * (1 + seen) * (1 + a.overlapping);
      if (count <= budget) continue;
      std::vector<uint64_t> ev{inv.index};
      if (a.done) ev.push_back(*a.done);
      const uint64_t at = act->position == 0 ? 0 : act->position - 1;
      return violation(
          p,
          client_name(inv.client) + "'s acquire invoked at " + at_ref(inv) + " sent \"" +
              act->request + "\" " + std::to_string(count) + " times, the last after " +
              at_ref(h[at]) + ", while only " + std::to_string(seen) +
              " thing(s) had changed since it began (watch notifications, nodes created or "
              "deleted under the lock on any server, session events, failed requests; bound " +
              std::to_string(max_repeats) +
              " per change, and per start): the waiter polls instead of waiting on a watch",
          ev);
    }
  }
  return Verdict::pass(p);
}

Verdict check_progress(const History& h, const ServerView& v, zk::Time heal_at,
                       uint32_t nodes_per_acquire) {
  const Property p = Property::kProgress;
  if (!v.observed) return Verdict::pass(p);
  // Each client's lock-node creations on the leader, by position.
  std::map<uint32_t, std::vector<uint64_t>> created_at;
  for (const ServerView::NodeChange& n : v.nodes) {
    if (n.server == 1 && n.created) created_at[n.client].push_back(n.position);
  }
  for (auto& [client, positions] : created_at) sort_unless_sorted(&positions);
  for (const AcquireSpan& a : acquire_spans(h)) {
    const Event& inv = h[a.invoke];
    if (inv.at < heal_at || a.disturbed) continue;
    auto mine = created_at.find(inv.client);
    if (mine == created_at.end()) continue;
    const auto [first, last] = inside_range(mine->second, a, position_itself);
    const auto created = static_cast<uint64_t>(last - first);
    if (created <= uint64_t{nodes_per_acquire} * (1 + a.overlapping)) continue;
    std::string paths;
    for (const ServerView::NodeChange& n : v.nodes) {
      if (n.server != 1 || !n.created || n.client != inv.client || !inside(a, n.position)) {
        continue;
      }
      paths +=
          (paths.empty() ? "" : ", ") + n.path + " (zxid " + std::to_string(n.zxid.value) + ")";
    }
    std::vector<uint64_t> ev{inv.index};
    if (a.done) ev.push_back(*a.done);
    return violation(p,
                     client_name(inv.client) + "'s acquire invoked at " + at_ref(inv) +
                         ", after the faults ended at " + format_time(heal_at) + ", created " +
                         std::to_string(created) + " lock nodes (bound " +
                         std::to_string(nodes_per_acquire) + "): " + paths +
                         (a.done ? "; it completed at " + at_ref(h[*a.done])
                                 : std::string("; it never completed")),
                     ev);
  }
  return Verdict::pass(p);
}

namespace {

std::string_view parent_dir(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string_view{} : path.substr(0, slash);
}

}  // namespace

Verdict check_server_exclusion(const History& h, const ServerView& v, recipes::Kind kind,
                               uint32_t max_holders) {
  const Property p = Property::kServerExclusion;
  if (!v.observed) return Verdict::pass(p);
  struct Live {
    const std::string* path = nullptr;  // its creation's, in `v`
    zk::Zxid czxid;
    uint32_t client = 0;
    Role role = Role::kExclusive;
    bool sequential = false;  // its name ends in a sequence suffix
    size_t dir_size = 0;      // its path's parent_dir() is the path's first dir_size characters
  };
  // The live nodes, each path once, in no order: a lock has a few, and a node is made and
  // dropped at nearly every acquire, so a search of a short vector costs less than a tree that
  // keeps a copy of each path. (Its creation's zxid orders what a violation names.)
  std::vector<Live> live;
  const auto find_live = [&live](std::string_view path) {
    return std::find_if(live.begin(), live.end(), [&](const Live& l) { return *l.path == path; });
  };
  FlatMap<uint32_t, Role> acquiring;  // client -> role of its open acquire
  FlatMap<uint32_t, Role> last_role;  // client -> role of its latest acquire
  // holder -> its fresh grant (history index) and the granting positions it was allowed: for
  // a semaphore, the largest capacity in force during its acquire (see check_mutual_exclusion)
  FlatMap<Holder, std::pair<uint64_t, uint32_t>> granted;
  FlatMap<Holder, uint64_t> invoked;  // holder -> its latest acquire invocation
  const Capacity capacity(h, max_holders);
  BeliefTracker tracker;
  size_t next_change = 0;

  // Is every live granted node in a granting position? `when()` says at what point of the run
  // (asked only for a violation's message).
  auto judge = [&](const auto& when) -> std::optional<Verdict> {
    for (const auto& [holder, grant_positions] : granted) {
      const auto [grant, positions] = grant_positions;
      const Event& g = h[grant];
      const auto self = find_live(g.text);
      if (self == live.end() || !self->sequential) continue;
      const std::string_view dir = std::string_view(g.text).substr(0, self->dir_size);
      // Is `n` an earlier live sibling that blocks the grant? (The cheap tests first: this runs
      // at every node change and grant, and most live nodes are later ones.)
      const auto blocks = [&](const Live& n) {
        if (n.czxid >= self->czxid || n.client == 0 || !n.sequential) return false;
        if (kind == recipes::Kind::kReadWrite && g.role == Role::kRead && n.role == Role::kRead) {
          return false;  // readers share: only an earlier writer blocks a reader
        }
        return std::string_view(*n.path).substr(0, n.dir_size) == dir;
      };
      const uint32_t allowed =
          kind == recipes::Kind::kReadWrite && g.role == Role::kRead ? 0 : positions - 1;
      const auto blocking = static_cast<size_t>(std::count_if(live.begin(), live.end(), blocks));
      if (blocking <= allowed) continue;
      std::vector<const Live*> before;  // the earlier live siblings, for the message
      for (const Live& n : live) {
        if (blocks(n)) before.push_back(&n);
      }
      // (No two live nodes share a zxid: each create is its own transaction.)
      std::sort(before.begin(), before.end(),
                [](const Live* a, const Live* b) { return a->czxid < b->czxid; });
      std::string ahead;
      std::vector<uint64_t> ev{grant};
      for (const Live* n : before) {
        ahead +=
            (ahead.empty() ? "" : ", ") + *n->path + " (" + client_name(n->client) +
            (kind == recipes::Kind::kReadWrite ? std::string(", ") + recipes::to_string(n->role)
                                               : std::string()) +
            ", created at zxid " + std::to_string(n->czxid.value) + ")";
      }
      return violation(
          p,
          holder_name(holder) + " holds the grant of " + at_ref(g) + " on " + g.text +
              " (created at zxid " + std::to_string(self->czxid.value) + ", still live) " + when() +
              ", but the server's queue has " + std::to_string(before.size()) +
              " live node(s) ahead of it that " +
              (kind == recipes::Kind::kReadWrite && g.role == Role::kRead
                   ? "a reader must wait for"
                   : "fill the " + std::to_string(positions) + " granting position(s)") +
              ": " + ahead,
          ev);
    }
    return std::nullopt;
  };

  for (uint64_t pos = 0; pos <= h.size(); ++pos) {
    bool changed = false;
    for (; next_change < v.nodes.size() && v.nodes[next_change].position <= pos; ++next_change) {
      const ServerView::NodeChange& n = v.nodes[next_change];
      if (n.server != 1) continue;
      const auto known = find_live(n.path);
      if (!n.created) {
        if (known != live.end()) {
          *known = live.back();
          live.pop_back();
        }
        continue;
      }
      Live l;
      l.path = &n.path;
      l.czxid = n.zxid;
      l.client = n.client;
      l.sequential = sequence_of(n.path).has_value();
      l.dir_size = parent_dir(n.path).size();
      auto role = acquiring.find(n.client);
      if (role != acquiring.end()) {
        l.role = role->second;
      } else if (auto last = last_role.find(n.client); last != last_role.end()) {
        l.role = last->second;
      }
      if (known != live.end()) {
        *known = l;
      } else {
        live.push_back(l);
      }
      changed = true;
    }
    if (changed) {
      const ServerView::NodeChange& last = v.nodes[next_change - 1];
      const auto when = [&] {
        return "when zxid " + std::to_string(last.zxid.value) + " (" + last.path +
               " created) was applied" +
               (pos < h.size() ? ", before " + at_ref(h[pos]) : std::string());
      };
      if (std::optional<Verdict> bad = judge(when)) return *bad;
    }
    if (pos == h.size()) break;
    const Event& e = h[pos];
    if (e.op == Op::kAcquire && e.type == Type::kInvoke) {
      acquiring[e.client] = e.role;
      last_role[e.client] = e.role;
      invoked[holder_of(e)] = e.index;
    } else if (e.op == Op::kAcquire) {
      acquiring.erase(e.client);
    }
    const bool fresh = tracker.is_fresh_grant(e);
    const uint64_t moves = tracker.moves();
    tracker.apply(e);
    // Grants whose holder stopped believing it holds leave; no belief moved, none left.
    for (auto it = granted.begin(); tracker.moves() != moves && it != granted.end();) {
      const Belief* b = tracker.of(it->first);
      it = b == nullptr || !b->holds ? granted.erase(it) : std::next(it);
    }
    if (fresh) {
      uint32_t positions = 1;
      if (kind == recipes::Kind::kSemaphore) {
        auto inv = invoked.find(holder_of(e));
        positions = capacity.max_during(inv != invoked.end() ? h[inv->second].at : e.at, e.at);
      }
      granted[holder_of(e)] = {e.index, positions};
      const auto when = [&] { return "at " + holder_name(e) + "'s grant"; };
      if (std::optional<Verdict> bad = judge(when)) return *bad;
    }
  }
  return Verdict::pass(p);
}

Verdict check_no_leaked_watches(const History& h, const ServerView& v) {
  const Property p = Property::kNoLeakedWatches;
  // Clients that finished (or gave up) and did not crash: their recipe is no longer waiting.
  std::map<uint32_t, uint64_t> finished;  // client -> the index of its done / give-up event
  std::set<uint32_t> crashed;
  for (const Event& e : h.events()) {
    if (e.type != Type::kInfo) continue;
    if (e.op == Op::kDone || e.op == Op::kGiveUp) finished.emplace(e.client, e.index);
    if (e.op == Op::kCrash) crashed.insert(e.client);
  }
  for (const ServerView::WatchLeft& w : v.watches_at_end) {
    if (w.children || w.exists || crashed.count(w.client) != 0) continue;
    auto fin = finished.find(w.client);
    if (fin == finished.end()) continue;
    const std::optional<int32_t> seq = sequence_of(w.path);
    if (!seq) continue;
    // Handed out already: the node itself was created in the run, or a sibling at least as high.
    const ServerView::NodeChange* used = nullptr;
    for (const ServerView::NodeChange& c : v.nodes) {
      if (!c.created || parent_dir(c.path) != parent_dir(w.path)) continue;
      const std::optional<int32_t> s = sequence_of(c.path);
      if (c.path == w.path || (s && *s >= *seq)) {
        used = &c;
        if (c.path == w.path) break;
      }
    }
    if (used == nullptr) continue;
    std::string why = used->path == w.path
                          ? "that node existed in the run and was deleted"
                          : "sequence " + std::to_string(*seq) + " was already handed out (" +
                                used->path + " was created)";
    return violation(p,
                     client_name(w.client) + " finished (" + at_ref(h[fin->second]) +
                         ") with a watch left on the server on " + w.path + ", which no longer " +
                         "exists: " + why + ", and ZooKeeper never hands a sequence out twice, " +
                         "so the watch can never fire (exists() on a node already gone arms a " +
                         "creation watch)",
                     {fin->second});
  }
  return Verdict::pass(p);
}

Verdict check_reported_state(const History& h, const ServerView& v, bool informed_only) {
  const Property p = Property::kReportedState;
  if (!v.observed) return Verdict::pass(p);
  struct Live {
    zk::Zxid czxid;
    uint32_t client = 0;
  };
  std::map<std::string, Live> live;
  std::set<uint32_t> told_dead;  // clients told their session expired or closed (until reopened)
  std::set<uint32_t> released;   // clients whose last grant was released (until the next grant)
  size_t next_change = 0;
  for (const Event& e : h.events()) {
    if (e.op == Op::kSession && (e.session_state == zk::SessionState::kExpired ||
                                 e.session_state == zk::SessionState::kClosed)) {
      told_dead.insert(e.client);
    }
    if (e.op == Op::kReopen) told_dead.erase(e.client);
    if (e.op == Op::kRelease && e.type == Type::kInvoke && e.hold_count == 1) {
      released.insert(e.client);
    }
    if (e.op == Op::kAcquire && e.type == Type::kInvoke) released.erase(e.client);
    for (; next_change < v.nodes.size() && v.nodes[next_change].position <= e.index;
         ++next_change) {
      const ServerView::NodeChange& n = v.nodes[next_change];
      if (n.server != 1) continue;
      if (n.created) {
        live[n.path] = Live{n.zxid, n.client};
      } else {
        live.erase(n.path);
      }
    }
    if (e.op != Op::kReport || e.text != recipes::to_string(recipes::RecipeEvent::kLeader)) {
      continue;
    }
    const std::string* mine = nullptr;
    for (const auto& [path, n] : live) {
      if (n.client == e.client && sequence_of(path) &&
          (mine == nullptr || live.at(*mine).czxid < n.czxid)) {
        mine = &path;
      }
    }
    if (mine == nullptr) {
      // As stale as its belief, unless it was told, or gave the node up itself.
      if (informed_only && told_dead.count(e.client) == 0 && released.count(e.client) == 0) {
        continue;
      }
      return violation(p,
                       client_name(e.client) + " announced leader at " + at_ref(e) +
                           " while its session owned no live node under the lock" +
                           (released.count(e.client) != 0
                                ? " (it had released its last grant: a stale announcement)"
                                : ""),
                       {e.index});
    }
    const Live& self = live.at(*mine);
    std::vector<std::pair<zk::Zxid, const std::string*>> ahead;
    for (const auto& [path, n] : live) {
      if (path == *mine || n.client == 0 || parent_dir(path) != parent_dir(*mine) ||
          !sequence_of(path) || n.czxid >= self.czxid) {
        continue;
      }
      ahead.emplace_back(n.czxid, &path);
    }
    if (ahead.empty()) continue;
    std::sort(ahead.begin(), ahead.end());
    const Live& head = live.at(*ahead.front().second);
    return violation(p,
                     client_name(e.client) + " announced leader at " + at_ref(e) + " while " +
                         std::to_string(ahead.size()) + " live node(s) were ahead of its " + *mine +
                         " (zxid " + std::to_string(self.czxid.value) +
                         ") in the server's queue, the first " + *ahead.front().second + " (" +
                         client_name(head.client) + ", zxid " + std::to_string(head.czxid.value) +
                         ")",
                     {e.index});
  }
  return Verdict::pass(p);
}

Verdict check_error_contract(const History& h) {
  const Property p = Property::kErrorContract;
  using E = zk::Error;
  for (const Event& e : h.events()) {
    if (e.type == Type::kInvoke) continue;
    if (e.text.rfind("exception: ", 0) == 0) {
      return violation(p,
                       holder_name(e) + "'s " + to_string(e.op) + " threw at " + at_ref(e) + " (" +
                           e.text +
                           "): a recipe returns errors (recipes/lock.h), it does not throw",
                       {e.index});
    }
    if (e.type != Type::kFail) continue;
    std::vector<E> allowed;
    switch (e.op) {
      case Op::kAcquire:
        allowed = {E::kOperationTimeout, E::kCancelled, E::kSessionExpired,
                   E::kInvalidState,     E::kClosing,   E::kConnectionLoss};
        break;
      case Op::kRelease:
      case Op::kStrayRelease:
        allowed = {E::kNothing, E::kCancelled, E::kSessionExpired, E::kInvalidState, E::kClosing};
        break;
      default: continue;
    }
    if (std::find(allowed.begin(), allowed.end(), e.error) != allowed.end()) continue;
    std::string list;
    for (E a : allowed) list += (list.empty() ? "" : ", ") + std::string(zk::error_name(a));
    return violation(p,
                     holder_name(e) + "'s " + to_string(e.op) + " failed with " +
                         zk::error_name(e.error) + " at " + at_ref(e) + ", which its contract " +
                         "does not list (" + list + ")",
                     {e.index});
  }
  return Verdict::pass(p);
}

}  // namespace lockstep::properties
