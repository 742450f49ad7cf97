// The ensemble: requests, the leader, applies, watches, sessions and their expiry.
#include <algorithm>
#include <cstdio>
#include <optional>

#include "sim/client.h"
#include "sim/world_impl.h"
#include "zk/invariant.h"

namespace lockstep::sim {

using zk::Error;
using EventType = zk::EventType;

namespace {

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

const char* txn_name(TxnType t) {
  switch (t) {
    case TxnType::kCreate: return "create";
    case TxnType::kDelete: return "delete";
    case TxnType::kSetData: return "set_data";
    case TxnType::kKillSession: return "kill-session";
    case TxnType::kError: return "error";
  }
  return "?";
}

}  // namespace

bool World::Impl::serving(const Server& s) const { return s.up && servers_[0]->up; }

bool World::Impl::sessions_frozen() const { return !servers_[0]->up; }

std::vector<uint32_t> World::Impl::eligible_servers(zk::Zxid last_seen, uint32_t only) const {
  std::vector<uint32_t> out;
  for (const auto& s : servers_) {
    if (only != 0 && s->id != only) continue;
    if (serving(*s) && s->applied >= last_seen) out.push_back(s->id);
  }
  return out;
}

zk::SessionId World::Impl::new_session_id(uint32_t server_id) {
  for (;;) {
    const uint64_t id = (static_cast<uint64_t>(server_id) << 56) | (ids_.next() >> 8);
    if (id != 0 && find_session(id) == nullptr) return zk::SessionId{id};
  }
}

// ---- requests ----

void World::Impl::server_receive(Connection& c, UpMsg& m) {
  Server& s = server(c.server);
  if (!serving(s)) return server_close(c, true, "server not serving");
  if (m.type == UpType::kConnect) return server_connect(c, m);
  // Lost on the way, and the connection with it: the server never sees the request (nor does
  // the session count it as a sign of life).
  if (m.req.lose_request) return server_close(c, true, "the request is lost with the connection");
  if (m.req.frame_bytes() > opt_.packet_limit_bytes) {
    return server_close(c, true, "request over the packet limit");
  }
  SessionRec* session = c.session.valid() ? find_session(c.session.value) : nullptr;
  if (session == nullptr) return server_close(c, true, "no session");
  session->last_packet = now();  // every request touches the session, like a ping
  ServerEntry e;
  e.req = std::move(m.req);
  e.read = !goes_to_leader(e.req.op);
  if (!e.read) forward(c, e);
  c.pending.push_back(std::move(e));
  pump(c);
}

void World::Impl::server_connect(Connection& c, UpMsg& m) {
  zk::SessionId id = m.session;
  if (!id.valid()) {
    id = new_session_id(c.server);
    SessionRec rec;
    rec.id = id;
    rec.client = c.client;
    rec.timeout = std::clamp(m.timeout, opt_.tick * 2, opt_.tick * 20);
    rec.last_packet = now();
    // A new session starts unheard with its expiry armed from this connect: if its client is
    // already paused or unreachable, nothing else would ever arm it (update_heard only acts
    // on a change), and the server would keep it, and its ephemerals, forever.
    arm_expiry(add_session(id.value, rec), now());
    log(c.client, "new-session", id.value, rec.timeout.us, {}, [&] {
      return "s" + std::to_string(c.server) + " session " + hex(id.value) + " timeout " +
             zk::to_string(rec.timeout);
    });
  }
  SessionRec* found = find_session(id.value);
  DownMsg reply;
  if (found == nullptr) {
    reply.type = DownType::kExpired;
    send_down(c, std::move(reply));
    c.server_open = false;
    dispositions_changed(c.client);
    graveyard_.push_back(c.id);
    return;
  }
  SessionRec& rec = *found;
  if (rec.conn != 0 && rec.conn != c.id) {
    if (Connection* old = conn(rec.conn)) server_close(*old, true, "session moved");
  }
  attach(rec, c);
  rec.last_packet = now();
  reply.type = DownType::kConnected;
  reply.session = id;
  reply.timeout = rec.timeout;
  reply.zxid = server(c.server).applied;
  send_down(c, std::move(reply));
  set_watches(server(c.server), c, m);
  update_heard(id);
}

void World::Impl::attach(SessionRec& s, Connection& c) {
  s.conn = c.id;
  s.server = c.server;
  c.session = s.id;
}

void World::Impl::detach(Connection& c) {
  if (!c.session.valid()) return;
  SessionRec* rec = find_session(c.session.value);
  if (rec == nullptr || rec->conn != c.id) return;
  rec->conn = 0;
  rec->server = 0;
  drop_watches(server(c.server), c.session.value);
  update_heard(c.session);
}

// ZooKeeper's DataTree.setWatches: a watch whose node changed after the client's last seen
// zxid fires at once; the others are registered on this server.
void World::Impl::set_watches(Server& s, Connection& c, const UpMsg& m) {
  const uint64_t sid = c.session.value;
  const zk::Zxid rel = m.last_zxid;
  for (const std::string& p : m.watches.data) {
    const Node* n = s.tree.find(p);
    if (n == nullptr) {
      notify(s, sid, p, EventType::kDeleted, zk::Zxid{});
    } else if (n->stat.mzxid > rel) {
      notify(s, sid, p, EventType::kDataChanged, zk::Zxid{});
    } else {
      s.data_watches[p].insert(sid);
    }
  }
  for (const std::string& p : m.watches.exist) {
    if (s.tree.find(p) != nullptr) {
      notify(s, sid, p, EventType::kCreated, zk::Zxid{});
    } else {
      s.data_watches[p].insert(sid);
    }
  }
  for (const std::string& p : m.watches.child) {
    const Node* n = s.tree.find(p);
    if (n == nullptr) {
      notify(s, sid, p, EventType::kDeleted, zk::Zxid{});
    } else if (n->stat.pzxid > rel) {
      notify(s, sid, p, EventType::kChildrenChanged, zk::Zxid{});
    } else {
      s.child_watches[p].insert(sid);
    }
  }
}

// ---- the leader ----

void World::Impl::forward(Connection& c, ServerEntry& e) {
  Request& r = e.req;
  e.reply = std::make_unique<DownMsg>();
  DownMsg& rep = *e.reply;
  rep.type = DownType::kReply;
  rep.xid = r.xid;
  rep.op = r.op;
  e.target = zxid_;
  if (r.op == Op::kSync || r.op == Op::kClose) rep.path = std::move(r.path);
  if (r.op == Op::kSync) {
    // ZooKeeper 3.8 serves a sync that reaches the leader itself like a read (its
    // CommitProcessor holds back only the syncs a follower forwards): answered in the session's
    // order without waiting for the leader's own copy to apply what it committed
    // (real/FINDINGS.md item 11). A follower answers once it has applied everything committed
    // when the sync reached the leader.
    if (committed_ && c.server == 1) e.target = zk::Zxid{};
    return;
  }
  Txn txn;
  if (r.op == Op::kClose) {
    committed().prepare_kill(c.session, &txn);
    erase_session(c.session.value);
    dispositions_changed(0);  // kExpire events read sessions_
    log(c.client, "close-session", c.session.value, 0, {},
        [&] { return "session " + hex(c.session.value) + " closed"; });
    e.target = commit(std::move(txn));
    return;
  }
  forward_mutation(c, e, &txn);
}

void World::Impl::forward_mutation(Connection& c, ServerEntry& e, Txn* txn) {
  const Request& r = e.req;
  const DataTree& tree = committed();
  Error err = Error::kOk;
  switch (r.op) {
    // The client validated the path before sending it (ClientImpl::submit).
    case Op::kCreate:
      err = tree.prepare_create(r.path, r.data, r.mode, c.session, txn, true, r.ttl);
      break;
    case Op::kDelete: err = tree.prepare_delete(r.path, r.version, txn, true); break;
    case Op::kSetData: err = tree.prepare_set(r.path, r.data, r.version, txn, true); break;
    default: LOCKSTEP_ASSERT(false && "not a mutation");
  }
  DownMsg& rep = *e.reply;
  rep.err = err;
  if (err != Error::kOk) {
    // Answered once the session's server has applied the failed write's own transaction, like
    // any write's reply.
    e.target = commit_failed(e.req.path);
    rep.path = std::move(e.req.path);
    return;
  }
  rep.path = txn->path;
  e.target = commit(std::move(*txn));
  const Node* n = committed().find(rep.path);
  if (n != nullptr) rep.stat = n->stat;
}

zk::Zxid World::Impl::commit(Txn txn) {
  LOCKSTEP_ASSERT_MSG(
      txn.type != TxnType::kCreate || !zk::is_session_owner(txn.session) ||
          find_session(txn.session.value) != nullptr,
      "an ephemeral create of session " + hex(txn.session.value) + ", which is not alive");
  zxid_.value++;
  txn.zxid = zxid_;
  txn.time = now();
  if (txn.type != TxnType::kKillSession && txn.type != TxnType::kError) hash_paths(&txn);
  if (txn.type == TxnType::kDelete || (txn.type == TxnType::kKillSession && !txn.paths.empty())) {
    herd_.push_back(
        HerdRecord{zxid_, txn.type == TxnType::kDelete ? txn.path : txn.paths[0], 0, 0});
  }
  const bool reapable =
      txn.type == TxnType::kCreate && txn.session.valid() && !zk::is_session_owner(txn.session);
  if (!committed_) {
    apply_at(leader(), txn);
    if (reapable) schedule_reap();  // a container or TTL node: the ContainerManager has work
    return zxid_;
  }
  apply_committed(txn);
  txlog_.push_back(std::move(txn));
  schedule_applies(zxid_, reapable);
  return zxid_;
}

zk::Zxid World::Impl::commit_failed(const std::string& path) {
  Txn txn;
  txn.type = TxnType::kError;
  txn.path = path;
  return commit(std::move(txn));
}

void World::Impl::apply_committed(const Txn& txn) {
  triggers_.clear();
  committed_->apply(txn, &triggers_);
  if (observer_ != nullptr) report_applied(1, txn);
}

void World::Impl::report_applied(uint32_t server_id, const Txn& txn) {
  for (const Trigger& t : triggers_) {
    if (t.type == zk::EventType::kCreated) {
      observer_->node_created(server_id, txn.zxid, t.path(), txn.session);
    }
    if (t.type == zk::EventType::kDeleted) observer_->node_deleted(server_id, txn.zxid, t.path());
  }
}

void World::Impl::schedule_applies(zk::Zxid zxid, bool reapable) {
  Server& l = leader();
  const bool lagging = now() < l.lag_until;
  if (!lagging && l.applied.value + 1 == zxid.value) {
    apply_at(l, txlog_.back());
  } else {
    l.apply_last = std::max(now() + (lagging ? l.lag : Duration{}), l.apply_last);
    push(Event{l.apply_last, 0, EventTag::kApply, 0, l.id, static_cast<uint64_t>(zxid.value)});
  }
  if (reapable) schedule_reap();  // a container or TTL node: the ContainerManager has work
  for (size_t i = 1; i < servers_.size(); ++i) {
    Server& f = *servers_[i];
    Duration d = latency(0);
    if (now() < f.lag_until) d = d + f.lag;
    f.apply_last = std::max(now() + d, f.apply_last);
    push(Event{f.apply_last, 0, EventTag::kApply, 0, f.id, static_cast<uint64_t>(zxid.value)});
  }
}

void World::Impl::apply_logged(uint32_t server_id, zk::Zxid upto) {
  Server& f = server(server_id);
  if (!f.up) return;
  while (f.applied < upto && !txlog_.empty()) {
    const int64_t index = f.applied.value + 1 - txlog_.front().zxid.value;
    LOCKSTEP_ASSERT(index >= 0 && index < static_cast<int64_t>(txlog_.size()));
    apply_at(f, txlog_[static_cast<size_t>(index)]);
  }
  trim_log();
}

void World::Impl::trim_log() {
  zk::Zxid low = zxid_;
  for (const auto& server : servers_) low = std::min(low, server->applied);
  while (!txlog_.empty() && txlog_.front().zxid <= low) txlog_.pop_front();
}

void World::Impl::apply_at(Server& s, const Txn& txn) {
  log(0, "apply", s.id, static_cast<uint64_t>(txn.zxid.value),
      txn.type == TxnType::kKillSession ? std::string_view{} : std::string_view{txn.path}, [&] {
        return "s" + std::to_string(s.id) + " zxid=" + std::to_string(txn.zxid.value) + " " +
               txn_name(txn.type) + " " +
               (txn.type == TxnType::kKillSession ? hex(txn.session.value) : txn.path);
      });
  LOCKSTEP_ASSERT_MSG(txn.zxid.value == s.applied.value + 1,
                      "s" + std::to_string(s.id) + " applies zxid " +
                          std::to_string(txn.zxid.value) + " after " +
                          std::to_string(s.applied.value));  // zxids only grow, none skipped
  if (txn.type == TxnType::kKillSession) drop_watches(s, txn.session.value);
  triggers_.clear();
  s.tree.apply(txn, &triggers_);
  s.applied = txn.zxid;
  LOCKSTEP_ASSERT_MSG(txn.type != TxnType::kKillSession ||
                          s.tree.ephemeral_count(txn.session) == 0,
                      std::to_string(s.tree.ephemeral_count(txn.session)) +
                          " ephemeral node(s) outlive session " + hex(txn.session.value) +
                          " on s" + std::to_string(s.id));
  // The leader's creations and deletions are reported as it commits them (apply_committed):
  // in an ensemble its own copy may apply later.
  if (observer_ != nullptr && !(committed_ && s.id == 1)) report_applied(s.id, txn);
  for (const Trigger& t : triggers_) fire(s, t, txn.zxid);    // fire() never applies
  if (s.blocked.empty()) return;
  std::vector<uint64_t> blocked(s.blocked.begin(), s.blocked.end());
  for (uint64_t id : blocked) {
    if (Connection* c = conn(id)) pump(*c);
  }
}

// ---- watches ----

void World::Impl::fire(Server& s, const Trigger& t, zk::Zxid zxid) {
  // The sessions watching, each once, in ascending id order (both tables may name one).
  std::vector<uint64_t>& who = fired_;
  who.clear();
  auto take = [&](WatchTable& table) {
    const std::optional<IdSet> ids = table.extract(t.where);
    if (ids) who.insert(who.end(), ids->begin(), ids->end());
  };
  if (t.type != EventType::kChildrenChanged) take(s.data_watches);
  if (t.type == EventType::kChildrenChanged || t.type == EventType::kDeleted) {
    take(s.child_watches);
  }
  std::sort(who.begin(), who.end());
  who.erase(std::unique(who.begin(), who.end()), who.end());
  for (uint64_t sid : who) notify(s, sid, t.path(), t.type, zxid);
}

void World::Impl::notify(Server& s, uint64_t session, std::string_view path, EventType type,
                         zk::Zxid zxid) {
  const SessionRec* rec = find_session(session);
  if (rec == nullptr || rec->server != s.id || rec->conn == 0) return;
  Connection* c = conn(rec->conn);
  if (c == nullptr || !c->server_open) return;
  DownMsg m;
  m.type = DownType::kNotify;
  m.path = std::string(path);
  m.event = type;
  m.zxid = zxid;
  send_down(*c, std::move(m));
}

std::vector<std::pair<std::string_view, const IdSet*>> sorted_by_path(const WatchTable& t) {
  std::vector<std::pair<std::string_view, const IdSet*>> out;
  out.reserve(t.size());
  for (const auto& [path, ids] : t) out.emplace_back(path, &ids);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

void World::Impl::drop_watches(Server& s, uint64_t session) {
  std::vector<std::string> emptied;
  for (WatchTable* table : {&s.data_watches, &s.child_watches}) {
    emptied.clear();
    for (auto [path, ids] : *table) {
      ids.erase(session);
      if (ids.empty()) emptied.emplace_back(path);
    }
    for (const std::string& path : emptied) table->erase(path);
  }
}

// ---- replies ----

void World::Impl::pump(Connection& c) {
  Server& s = server(c.server);
  while (c.server_open && !c.pending.empty()) {
    ServerEntry& e = c.pending.front();
    if (!e.read && s.applied < e.target) {
      s.blocked.insert(c.id);
      return;
    }
    const bool lose = e.req.lose_reply;
    const bool closing = e.req.op == Op::kClose;
    if (lose || !c.client_open) {
      // Nothing travels, but a read still ran (its watch is set).
      if (e.read) {
        DownMsg unsent;
        execute_read(s, c, e.req, &unsent);
      }
      c.pending.pop_front();
      if (lose) return server_close(c, true, "the reply is lost with the connection");
    } else {
      // The reply is made where it waits in the channel; no choice is made before its
      // latency's, as when it was made first and then sent.
      DownMsg& reply = c.down.emplace_back();
      if (e.read) {
        execute_read(s, c, e.req, &reply);
      } else {
        reply = std::move(*e.reply);
      }
      reply.zxid = s.applied;
      c.pending.pop_front();
      dispatch_down(c, reply);
    }
    if (closing) return server_close(c, true, "session closed");
  }
  s.blocked.erase(c.id);
}

void World::Impl::execute_read(Server& s, const Connection& c, Request& r, DownMsg* m) {
  m->type = DownType::kReply;
  m->xid = r.xid;
  m->op = r.op;
  const Node* n = s.tree.find(r.path);
  if (n == nullptr) {
    m->err = Error::kNoNode;
    if (r.watch && r.op == Op::kExists) s.data_watches[r.path].insert(c.session.value);
  } else {
    m->stat = n->stat;
    if (r.op == Op::kGetData) m->data = n->data;
    if (r.op == Op::kGetChildren) m->children = s.tree.children_in_order(*n);
    if (r.watch) {
      WatchTable& t = r.op == Op::kGetChildren ? s.child_watches : s.data_watches;
      t[r.path].insert(c.session.value);
    }
  }
  m->path = std::move(r.path);
}

// ---- sessions ----

bool World::Impl::is_heard(const SessionRec& s) {
  if (s.conn == 0) return false;
  const Connection* c = conn(s.conn);
  if (c == nullptr || !c->server_open || !server(s.server).up) return false;
  if (!impaired_) return true;  // no client was ever crashed, paused or partitioned
  const ClientImpl& cl = client(s.client);
  return !cl.paused() && !cl.partitioned() && !cl.crashed();
}

// Heartbeats are modelled lazily: a session is heard while its client is connected, running
// and reachable. When that stops at time t, its last ping went out ping_phase earlier (chosen
// in [0, timeout/3] in four steps), but never before its last request (every request touches
// the session), and the session expires at the next tick boundary after that + timeout, like
// ZooKeeper's ExpiryQueue.
void World::Impl::update_heard(zk::SessionId id) {
  SessionRec* rec = find_session(id.value);
  if (rec == nullptr) return;
  SessionRec& s = *rec;
  const bool heard = is_heard(s);
  if (heard == s.heard) return;
  s.heard = heard;
  ++s.token;
  dispositions_changed(0);  // kExpire events read sessions_
  s.expires_at = Time{};
  if (heard) return;
  const uint32_t phase = choose(ChoiceKind::kPingPhase, 4);
  arm_expiry(s, std::max(now() - s.timeout / 3 * phase / 3, s.last_packet));
}

void World::Impl::arm_expiry(SessionRec& s, Time last_heard) {
  LOCKSTEP_ASSERT(last_heard <= now());
  LOCKSTEP_ASSERT(!s.heard);
  const int64_t tick = opt_.tick.us;
  const Time deadline = last_heard + s.timeout;
  const Time at{(deadline.us / tick + 1) * tick};
  LOCKSTEP_ASSERT(at <= last_heard + s.timeout + opt_.tick);
  s.expires_at = at;
  push(Event{at, 0, EventTag::kExpire, 0, s.id.value, s.token});
}

void World::Impl::update_heard_of_client(uint32_t client) {
  for (auto& [id, rec] : sessions_) {
    if (rec.client == client) update_heard(rec.id);
  }
}

// Invariants of the ensemble's session table, checked as the run goes (STYLE rule 11):
//   - the lazy heartbeat model is consistent: a session is marked heard exactly when its client
//     is connected to it, running and reachable;
//   - a session nobody hears is expired by the server no later than its last heartbeat plus the
//     timeout plus one tick (while the leader is up: its restart defers expiry);
//   - every ephemeral node on the leader belongs to a live session. Checked where it could break
//     rather than by a sweep: commit() refuses an ephemeral create of a session not in
//     sessions_, and a session leaves sessions_ only with a kill transaction (close, expire),
//     whose apply asserts that no ephemeral of it is left (apply_at). The sweep of the leader's
//     owner table this replaces was the largest cost of a 10,000-client run (a tree walk of 1,024
//     scattered nodes every tick).
void World::Impl::check_sessions() {
  const uint64_t budget = (events_executed_ - checked_at_events_) / kEventsPerCheck;
  if (budget == 0) return;
  checked_at_events_ += budget * kEventsPerCheck;
  const size_t slots = session_index_.slot_count();
  if (slots == 0) return;
  const size_t mask = slots - 1;  // a power of two
  // A sweep of the index's slots, not of sessions_: walking a tree of thousands of sessions is
  // a chain of loads each waiting for the last (a node's successor is read from the node), while
  // the slots lie in one array and each session's loads are its own. Those loads (the slot,
  // the session, the connection table's entry it names, the connection) are asked for in
  // stages, slots ahead of the check, so that it finds them in the cache: at 10,000 clients
  // every session is cold, and the sweep moves a few slots a tick.
  constexpr size_t kIndexAhead = 32;
  constexpr size_t kRecAhead = 24;
  constexpr size_t kSlotAhead = 16;
  constexpr size_t kConnAhead = 8;
  auto fetch = [&](size_t i) {
    session_index_.prefetch_slot((i + kIndexAhead) & mask);
    if (const SessionRec* rec = session_index_.at_slot((i + kRecAhead) & mask)) {
      __builtin_prefetch(rec);
    }
    const SessionRec* rec = session_index_.at_slot((i + kSlotAhead) & mask);
    if (rec != nullptr && rec->conn < conns_.size()) __builtin_prefetch(&conns_[rec->conn]);
    rec = session_index_.at_slot((i + kConnAhead) & mask);
    if (rec != nullptr && rec->conn < conns_.size()) __builtin_prefetch(conns_[rec->conn].get());
  };
  // Every slot once when the budget covers the table; else `budget` sessions from the cursor.
  const uint64_t want = budget >= session_index_.size() ? session_index_.size() : budget;
  size_t i = check_cursor_ & mask;
  uint64_t checked = 0;
  for (size_t walked = 0; walked < slots && checked < want; ++walked, i = (i + 1) & mask) {
    fetch(i);
    if (const SessionRec* rec = session_index_.at_slot(i)) {
      check_session(rec->id.value, *rec);
      ++checked;
    }
  }
  check_cursor_ = i;
}

void World::Impl::check_session(uint64_t id, const SessionRec& rec) {
  LOCKSTEP_ASSERT_MSG(rec.heard == is_heard(rec),
                      "session " + hex(id) + " of c" + std::to_string(rec.client) +
                          (rec.heard ? " is marked heard but its client cannot reach it"
                                     : " is marked unheard but its client is connected"));
  // Expiry is timed: it cannot be due while the leader is down (its restart defers it) or once
  // a search strategy ended the run and dropped the pending expiry events.
  if (rec.heard || sessions_frozen() || sched_.stopped_by_strategy()) return;
  LOCKSTEP_ASSERT_MSG(rec.expires_at != Time{}, "session " + hex(id) + " of c" +
                                                    std::to_string(rec.client) +
                                                    " is unheard and no expiry is armed for it");
  LOCKSTEP_ASSERT_MSG(now() <= rec.expires_at,
                      "session " + hex(id) + " of c" + std::to_string(rec.client) +
                          " should have expired at t=" + std::to_string(rec.expires_at.us) +
                          "us" + " and is still alive at t=" + std::to_string(now().us) + "us");
}

void World::Impl::expire_event(const Event& e) {
  if (sessions_frozen()) return;  // re-armed when the leader is back
  expire(zk::SessionId{e.a}, "timeout");
}

void World::Impl::expire(zk::SessionId id, std::string_view why) {
  const SessionRec* found = find_session(id.value);
  if (found == nullptr) return;
  const SessionRec rec = *found;
  log(rec.client, "expire", id.value, 0, why,
      [&] { return "session " + hex(id.value) + " (" + std::string(why) + ")"; });
  if (rec.conn != 0) {
    if (Connection* c = conn(rec.conn)) server_close(*c, true, "session expired");
  }
  Txn txn;
  committed().prepare_kill(id, &txn);
  erase_session(id.value);
  dispositions_changed(0);  // kExpire events read sessions_
  commit(std::move(txn));
}

void World::Impl::server_restart_begin(uint32_t server_id) {
  Server& s = server(server_id);
  if (s.down_depth++ > 0) return;  // already down: it comes back when the last outage ends
  s.up = false;
  for (auto& c : conns_) {
    if (c != nullptr && c->server_open && !serving(server(c->server))) {
      server_close(*c, true, "server down");
    }
  }
}

void World::Impl::server_restart_end(uint32_t server_id) {
  Server& s = server(server_id);
  LOCKSTEP_ASSERT(s.down_depth > 0 && !s.up);
  if (--s.down_depth > 0) return;
  s.up = true;
  if (server_id != 1) {
    // A follower's outage stopped no session timer (they run on the leader).
    apply_logged(server_id, zxid_);
    return;
  }
  // Commits made while it was down (outside sessions' writes) wait for it (apply_logged).
  if (committed_ && s.applied < zxid_) apply_logged(server_id, zxid_);
  for (auto& [id, rec] : sessions_) {
    if (rec.heard) continue;
    ++rec.token;
    dispositions_changed(0);  // kExpire events read sessions_
    arm_expiry(rec, now());
  }
}

void World::Impl::foreign_create(const std::string& path) {
  Txn txn;
  const Error err =
      committed().prepare_create(path, "", zk::CreateMode::kPersistent, zk::SessionId{}, &txn);
  log(0, "foreign-create", static_cast<uint64_t>(err), 0, path,
      [&] { return path + " " + zk::error_name(err); });
  commit_outcome(err, std::move(txn), path);
}

void World::Impl::foreign_set(const std::string& path, const std::string& data) {
  Txn txn;
  Error err = committed().prepare_set(path, data, zk::kAnyVersion, &txn);
  if (err == Error::kNoNode) {
    err =
        committed().prepare_create(path, data, zk::CreateMode::kPersistent, zk::SessionId{}, &txn);
  }
  log(0, "foreign-set", static_cast<uint64_t>(err), 0, path,
      [&] { return path + " = " + data + " " + zk::error_name(err); });
  commit_outcome(err, std::move(txn), path);
}

namespace {

// `path` and every node below it on `tree`, parents before children (children in the tree's
// own order, which is seeded and stable).
std::vector<std::string> subtree(const DataTree& tree, const std::string& path) {
  std::vector<std::string> out;
  if (tree.find(path) == nullptr) return out;
  out.push_back(path);
  for (size_t i = 0; i < out.size(); ++i) {
    const Node* n = tree.find(out[i]);
    const std::string base = out[i] == "/" ? "" : out[i];
    for (const std::string& name : tree.children_in_order(*n)) out.push_back(base + "/" + name);
  }
  return out;
}

}  // namespace

// An outside session's delete, as ZooKeeper would run it: validated and committed by the
// leader, replicated, and firing watches like any client's delete. While the leader is down
// no outside session can write: the fault changes nothing.
Error World::Impl::foreign_delete(const std::string& path) {
  Txn txn;
  const Error err = !serving(leader()) ? Error::kConnectionLoss
                                       : committed().prepare_delete(path, zk::kAnyVersion, &txn);
  log(0, "foreign-delete", static_cast<uint64_t>(err), 0, path,
      [&] { return path + " " + zk::error_name(err); });
  if (err != Error::kConnectionLoss) commit_outcome(err, std::move(txn), path);
  return err;
}

void World::Impl::foreign_delete_oldest(const std::string& path) {
  const DataTree& tree = committed();
  std::string victim;
  zk::Zxid oldest{INT64_MAX};
  for (const std::string& p : subtree(tree, path)) {
    const Node* n = tree.find(p);
    if (n->stat.ephemeral_owner.valid() && n->stat.czxid < oldest) {
      oldest = n->stat.czxid;
      victim = p;
    }
  }
  if (victim.empty()) {
    log(0, "foreign-delete", static_cast<uint64_t>(Error::kNoNode), 0, path,
        [&] { return path + " has no ephemeral node"; });
    return;
  }
  (void)foreign_delete(victim);
}

void World::Impl::foreign_delete_tree(const std::string& path) {
  std::vector<std::string> nodes = subtree(committed(), path);
  // Children before their parents; the server's own nodes are never deleted.
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    if (*it == "/" || *it == "/zookeeper" || it->rfind("/zookeeper/", 0) == 0) continue;
    (void)foreign_delete(*it);
  }
  if (nodes.empty()) (void)foreign_delete(path);  // logged: kNoNode
}

// ---- containers and TTL nodes (ZooKeeper's ContainerManager, on the leader) ----

// The check runs at every multiple of the interval of virtual time (a fixed-rate timer), only
// while some container or TTL node exists: a world that never creates one schedules nothing.
void World::Impl::schedule_reap() {
  if (reap_scheduled_ || committed().reapable().empty()) return;
  const int64_t every = opt_.container_check_interval.us;
  LOCKSTEP_ASSERT(every > 0);
  push(Event{Time{(now().us / every + 1) * every}, 0, EventTag::kReap, 0, 0, 0});
  reap_scheduled_ = true;
}

// ContainerManager.getCandidates, then a delete of each: a container that has had a child
// (cversion > 0) and has none now; a TTL node without children whose mtime is more than its
// TTL ago. A container that never had a child is kept (znode.container.maxNeverUsedIntervalMs
// is 0 by default). While the leader is down nothing is checked.
void World::Impl::reap() {
  reap_scheduled_ = false;
  if (serving(leader())) {
    const DataTree& tree = leader().tree;
    std::vector<std::string> victims;
    for (const std::string& path : tree.reapable()) {
      const Node* n = tree.find(path);
      LOCKSTEP_ASSERT(n != nullptr);
      if (n->child_count() != 0) continue;
      const zk::SessionId owner = n->extended_type;
      if (owner == zk::kContainerOwner) {
        if (n->stat.cversion > 0) victims.push_back(path);
        continue;
      }
      const int64_t ttl_ms = static_cast<int64_t>(owner.value & ~zk::kTtlOwnerMark);
      if (ttl_ms != 0 && now().us / 1000 - n->stat.mtime_ms > ttl_ms) victims.push_back(path);
    }
    for (const std::string& path : victims) {
      Txn txn;
      const Error err = committed().prepare_delete(path, zk::kAnyVersion, &txn);
      log(0, "reap", static_cast<uint64_t>(err), 0, path,
          [&] { return path + " " + zk::error_name(err); });
      commit_outcome(err, std::move(txn), path);
    }
  }
  schedule_reap();
}

}  // namespace lockstep::sim
