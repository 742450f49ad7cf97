// World::state_digest and its parts: a read-only hash of a run's state at the current instant
// for search strategies. Nothing here changes the world, writes the event log or asks the
// strategy, so a run that is hashed makes the same event log as one that is not.
//
// What is in it: virtual time; every server's tree (each node's path, data, stat, sequence
// counter), its applied zxid, whether it is up and its watch tables; the leader's sessions and
// the transactions not yet applied everywhere (by type and zxid; an ensemble's committed state,
// World::Impl::committed(), is the leader's tree with those past its applied zxid, and is not
// hashed itself); every open connection with the messages in flight
// both ways and the requests a server has not answered; each client library's state; and the
// events still due (timers, deliveries, expiries, faults), by their time from now. What is left
// out: the coroutines' own frames (a recipe's local variables; explore adds what a recipe shows
// through its Lock), timer callbacks, instrumentation (herd records, counters, the log), and
// insertion numbers and coroutine addresses, which differ between runs that reach the same state.
#include "sim/digest.h"

#include "sim/client.h"
#include "sim/data_tree.h"
#include "sim/scheduler.h"
#include "sim/world_impl.h"

namespace lockstep::sim {
namespace {

void stat_words(Digest& d, const zk::Stat& s) {
  d.word(static_cast<uint64_t>(s.czxid.value)).word(static_cast<uint64_t>(s.mzxid.value));
  d.word(static_cast<uint64_t>(s.pzxid.value)).word(static_cast<uint64_t>(s.version));
  d.word(static_cast<uint64_t>(s.cversion)).word(s.ephemeral_owner.value);
  d.word(static_cast<uint64_t>(s.num_children));
}

void watch_table(Digest& d, const WatchTable& t) {
  d.word(t.size());
  for (const auto& [path, ids] : sorted_by_path(t)) {
    d.text(path).word(ids->size());
    for (uint64_t s : *ids) d.word(s);
  }
}

void request_words(Digest& d, const Request& r) {
  d.word(r.xid).word(static_cast<uint64_t>(r.op)).text(r.path).text(r.data);
  d.word(static_cast<uint64_t>(r.mode)).word(static_cast<uint64_t>(r.version));
  d.word((r.watch ? 1u : 0u) | (r.lose_reply ? 2u : 0u) | (r.lose_request ? 4u : 0u));
}

void connection_words(Digest& d, const Connection& c, Time now) {
  d.word(c.id).word(c.client).word(c.server).word(c.session.value);
  d.word((c.client_open ? 1u : 0u) | (c.server_open ? 2u : 0u));
  d.word(c.up.size());
  for (const UpMsg& m : c.up) {
    d.word(static_cast<uint64_t>(m.type)).word(m.seq);
    d.word(static_cast<uint64_t>((m.arrival - now).us));
    request_words(d, m.req);
    d.word(m.session.value).word(static_cast<uint64_t>(m.last_zxid.value));
  }
  d.word(c.down.size());
  for (const DownMsg& m : c.down) {
    d.word(static_cast<uint64_t>(m.type)).word(m.seq);
    d.word(static_cast<uint64_t>((m.arrival - now).us));
    d.word(m.xid).word(static_cast<uint64_t>(m.op)).word(static_cast<uint64_t>(m.err));
    d.word(static_cast<uint64_t>(m.zxid.value)).text(m.path).text(m.data);
    d.word(static_cast<uint64_t>(m.event)).word(m.children.size());
    for (const std::string& child : m.children) d.text(child);
  }
  d.word(c.pending.size());
  for (const ServerEntry& e : c.pending) {
    request_words(d, e.req);
    d.word(e.read ? 1 : 0).word(static_cast<uint64_t>(e.target.value));
  }
}

}  // namespace

uint64_t DataTree::digest() const {
  // nodes_ is a hash map: its iteration order is folded away.
  UnorderedDigest all;
  for (const auto& [path, node] : nodes_) {
    Digest d;
    d.text(path).text(node.data);
    stat_words(d, node.stat);
    d.word(static_cast<uint64_t>(node.next_sequence)).word(node.extended_type.value);
    all.add(d);
  }
  return all.value();
}

uint64_t Scheduler::pending_digest() const {
  UnorderedDigest all;
  auto add = [&](const Event& e) {
    Digest d;
    d.word(static_cast<uint64_t>((e.at - now_).us)).word(static_cast<uint64_t>(e.type));
    d.word(e.client);
    if (e.type != EventTag::kResume) d.word(e.a);  // a resume's `a` is a coroutine address
    d.word(e.b);
    all.add(d);
  };
  for (const Event& e : pending_) add(e);
  ready_.for_each(add);
  if (has_lone_) add(lone_);
  return all.value();
}

uint64_t ClientImpl::digest() const {
  Digest d;
  d.word(index_).word(static_cast<uint64_t>(state_)).word(id_.value);
  d.word(static_cast<uint64_t>(last_zxid_.value)).word(conn_).word(connecting_);
  d.word(next_xid_).word(failures_).word(queued_resumes_);
  for (uint64_t t : tokens_) d.word(t);
  d.word(pending_.size());
  for (const Pending& p : pending_) {
    request_words(d, p.req);
    d.word(p.sent ? 1 : 0);
  }
  for (const Registry* r : {&data_watches_, &exist_watches_, &child_watches_}) {
    d.word(r->size());
    for (const auto& [path, watches] : *r) d.text(path).word(watches.size());
  }
  d.word(subscribers_.size()).word(stalls_.size()).word(delays_.size());
  d.word((crashed_ ? 1u : 0u) | (paused_ ? 2u : 0u) | (partitioned_ ? 4u : 0u) |
         (lose_next_reply_ ? 8u : 0u) | (lose_next_request_ ? 16u : 0u));
  d.word(pause_depth_).word(partition_depth_).word(static_cast<uint32_t>(lose_reply_of_));
  return d.value();
}

uint64_t World::Impl::state_digest() const {
  const Time t = now();
  Digest d;
  d.word(static_cast<uint64_t>(t.us)).word(salt_).word(static_cast<uint64_t>(zxid_.value));
  for (const auto& s : servers_) {
    d.word(s->id).word(s->up ? 1 : 0).word(s->down_depth);
    d.word(static_cast<uint64_t>(s->applied.value)).word(s->tree.digest());
    watch_table(d, s->data_watches);
    watch_table(d, s->child_watches);
    d.word(s->blocked.size());
    for (uint64_t c : s->blocked) d.word(c);
  }
  d.word(sessions_.size());
  for (const auto& [id, s] : sessions_) {
    d.word(id).word(s.client).word(static_cast<uint64_t>(s.timeout.us)).word(s.conn);
    d.word(s.server).word(s.heard ? 1 : 0).word(static_cast<uint64_t>((s.last_packet - t).us));
    if (!s.heard) d.word(static_cast<uint64_t>((s.expires_at - t).us));
  }
  d.word(txlog_.size());
  for (const Txn& txn : txlog_) {
    d.word(static_cast<uint64_t>(txn.type)).word(static_cast<uint64_t>(txn.zxid.value));
  }
  for (const auto& c : conns_) {
    if (c != nullptr) connection_words(d, *c, t);
  }
  for (const auto& c : clients_) d.word(c->digest());
  d.word(sched_.pending_digest());
  return d.value();
}

uint64_t World::state_digest() const { return impl_->state_digest(); }

}  // namespace lockstep::sim
