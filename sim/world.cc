// World: construction, the run loop, event dispatch, and inspection.
#include <algorithm>

#include "sim/client.h"
#include "sim/world_impl.h"
#include "zk/invariant.h"

namespace lockstep::sim {

World::Impl::Impl(WorldOptions options, std::unique_ptr<Strategy> strategy)
    : opt_(std::move(options)),
      strategy_(strategy ? std::move(strategy) : make_random_strategy(opt_.seed)),
      sched_(strategy_.get(), &log_),
      ids_(zk::Prng(opt_.seed).split("session-ids")) {
  LOCKSTEP_ASSERT(opt_.servers >= 1 && opt_.servers < 256);
  log_.set_recording(opt_.record_log);
  log_.set_hashing(opt_.audit);
  sched_.set_keep_decisions(opt_.audit);
  salt_ = choose(ChoiceKind::kChildOrder, UINT32_MAX);
  for (uint32_t i = 1; i <= opt_.servers; ++i) {
    servers_.push_back(std::make_unique<Server>(i, salt_));
  }
  if (opt_.servers > 1) committed_ = std::make_unique<DataTree>(salt_);
}

// Clients go first: destroying their contexts destroys suspended coroutine frames, which may
// still reach into the client's own timer table but never into the rest of the world.
World::Impl::~Impl() { clients_.clear(); }

Client& World::Impl::add_client(ClientOptions options) {
  const uint32_t index = client_count() + 1;
  const uint64_t seed = zk::Prng(opt_.seed).split("client-" + std::to_string(index)).seed();
  clients_.push_back(std::make_unique<ClientImpl>(*this, index, std::move(options), seed));
  clients_.back()->start();
  return *clients_.back();
}

Disposition World::Impl::classify(const Event& e) {
  // Until a client has been impaired, none is crashed, paused or partitioned: its flags need
  // not be read (impaired_).
  if (e.client != 0 && impaired_) {
    const ClientImpl& c = client(e.client);
    if (c.crashed()) return Disposition::kDrop;
    if (c.paused()) return Disposition::kDefer;
  }
  const auto cut_off = [&](const Connection& c) {
    return impaired_ && client(c.client).partitioned();
  };
  switch (e.type) {
    case EventTag::kTimer:
    case EventTag::kClientTimer:
      return client(e.client).live(e) ? Disposition::kRun : Disposition::kDrop;
    case EventTag::kToServer: {
      const Connection* c = conn(e.a);
      const bool ok = c != nullptr && c->server_open && !cut_off(*c);
      return ok ? Disposition::kRun : Disposition::kDrop;
    }
    case EventTag::kToClient: {
      const Connection* c = conn(e.a);
      const bool ok = c != nullptr && c->client_open && !cut_off(*c);
      return ok ? Disposition::kRun : Disposition::kDrop;
    }
    case EventTag::kExpire: {
      const SessionRec* rec = find_session(e.a);
      const bool ok = rec != nullptr && rec->token == e.b && !rec->heard;
      return ok ? Disposition::kRun : Disposition::kDrop;
    }
    default: return Disposition::kRun;
  }
}

uint32_t World::Impl::owner(const Event& e) {
  if (e.client != 0) return e.client;
  if (e.type == EventTag::kToServer) {
    const Connection* c = conn(e.a);
    return c != nullptr ? c->client : 0;
  }
  return 0;
}

void World::Impl::defer(const Event& e) { client(e.client).defer(e); }

void World::Impl::dispatch(const Event& e) {
  switch (e.type) {
    case EventTag::kResume:
    case EventTag::kTimer:
    case EventTag::kClientTimer: client(e.client).run(e); break;
    case EventTag::kToServer: deliver_up(e.a, e.b); break;
    case EventTag::kToClient: deliver_down(e.a, e.b); break;
    case EventTag::kApply:
      apply_logged(static_cast<uint32_t>(e.a), zk::Zxid{static_cast<int64_t>(e.b)});
      break;
    case EventTag::kExpire: expire_event(e); break;
    case EventTag::kFault: start_fault(e.a); break;
    case EventTag::kFaultEnd: end_fault(e.a); break;
    case EventTag::kReap: reap(); break;
  }
  if (e.client != 0) {
    ClientImpl& c = client(e.client);
    if (c.herd_zxid.value != 0 && c.quiescent()) c.herd_zxid = zk::Zxid{};
  }
}

void World::Impl::bury() {
  for (uint64_t id : graveyard_) {
    Connection* c = conn(id);
    if (c != nullptr && !c->client_open && !c->server_open) conns_[id].reset();
  }
  graveyard_.clear();
}

bool World::Impl::step(Time limit) {
  Event e;
  if (log_.stopped()) return false;  // strict replay diverged (EventLog::expect): stop here
  if (!sched_.next(*this, limit, &e)) return false;
  dispatch(e);
  ++events_executed_;
  if (!graveyard_.empty()) bury();
  if (now() >= next_check_) {
    check_sessions();
    next_check_ = now() + opt_.tick;
  }
  return true;
}

void World::Impl::run_until(Time t) {
  while (step(t)) {
  }
  if (sched_.now() < t && !log_.stopped()) sched_.advance_to(t);
  check_sessions();
}

bool World::Impl::run_until_idle(Time limit) {
  while (step(limit)) {
  }
  check_sessions();
  return sched_.idle();
}

// Herd accounting, approximated at client level: a notification from a delete transaction
// attributes the client's following requests to that delete until the client next has
// nothing to do (no request outstanding and no coroutine ready to run), i.e. it parked on a
// watch or a sleep.
void World::Impl::herd_notified(ClientImpl& c, zk::Zxid zxid) {
  HerdRecord* r = herd_record(zxid);
  if (r == nullptr) return;
  if (c.note_herd_notification(zxid)) {
    r->notifications++;
  } else {
    r->redeliveries++;
  }
  c.herd_zxid = zxid;
}

void World::Impl::herd_request(zk::Zxid zxid) {
  if (HerdRecord* r = herd_record(zxid)) r->requests_caused++;
}

HerdRecord* World::Impl::herd_record(zk::Zxid zxid) {
  if (zxid.value == 0 || herd_.empty()) return nullptr;
  // Usually one of the latest deletes: looked for from the end before a search of the whole
  // record (which grows by one per delete for the whole run).
  const size_t recent = std::min<size_t>(herd_.size(), 8);
  for (size_t k = 1; k <= recent; ++k) {
    HerdRecord& r = herd_[herd_.size() - k];
    if (r.zxid == zxid) return &r;
    if (r.zxid < zxid) return nullptr;  // in zxid order: not recorded
  }
  auto it = std::lower_bound(herd_.begin(), herd_.end(), zxid,
                             [](const HerdRecord& r, zk::Zxid z) { return r.zxid < z; });
  return it != herd_.end() && it->zxid == zxid ? &*it : nullptr;
}

std::optional<NodeView> World::Impl::node_on(uint32_t server_id, std::string_view path) const {
  LOCKSTEP_ASSERT(server_id <= servers_.size());
  const DataTree& tree = server_id == 0 ? committed() : servers_[server_id - 1]->tree;
  const Node* n = tree.find(path);
  if (n == nullptr) return std::nullopt;
  NodeView v{std::string(path), n->data, n->stat, tree.children_in_order(*n).vector()};
  std::sort(v.children.begin(), v.children.end());
  return v;
}

std::vector<WatchView> World::Impl::server_watches(zk::SessionId session) const {
  std::vector<WatchView> out;
  for (const auto& s : servers_) {
    for (const WatchTable* table : {&s->data_watches, &s->child_watches}) {
      for (const auto& [path, ids] : sorted_by_path(*table)) {
        if (ids->count(session.value) != 0) {
          out.push_back(WatchView{s->id, std::string(path), table == &s->child_watches});
        }
      }
    }
  }
  return out;
}

void World::Impl::set_sequence_counter(std::string_view parent, int32_t next) {
  for (auto& s : servers_) s->tree.set_sequence_counter(parent, next);
  if (committed_) committed_->set_sequence_counter(parent, next);
}

// ---- World: the public surface forwards to Impl ----

World::World(WorldOptions options, std::unique_ptr<Strategy> strategy)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(strategy))) {
  impl_->strategy().attach(this);
}
World::~World() { impl_->strategy().attach(nullptr); }
const WorldOptions& World::options() const { return impl_->options(); }
Client& World::add_client(ClientOptions options) { return impl_->add_client(std::move(options)); }
Client& World::client(uint32_t index) {
  LOCKSTEP_ASSERT(index >= 1 && index <= impl_->client_count());
  return impl_->client(index);
}
uint32_t World::client_count() const { return impl_->client_count(); }
zk::SessionId World::client_id(uint32_t index) const {
  LOCKSTEP_ASSERT(index >= 1 && index <= impl_->client_count());
  return impl_->client(index).id();
}
void World::inject(Fault fault) { impl_->inject(std::move(fault)); }
const std::vector<size_t>& World::started_faults() const { return impl_->started_faults(); }
Time World::now() const { return impl_->now(); }
bool World::step() { return impl_->step(zk::kNever); }
void World::run_until(Time t) { impl_->run_until(t); }
void World::run_for(Duration d) { impl_->run_until(impl_->now() + d); }
bool World::run_until_idle(Time limit) { return impl_->run_until_idle(limit); }
uint64_t World::events_executed() const { return impl_->events_executed(); }
std::optional<NodeView> World::node(std::string_view path) const { return impl_->node_on(0, path); }
std::optional<NodeView> World::node_on(uint32_t server, std::string_view path) const {
  LOCKSTEP_ASSERT(server >= 1);
  return impl_->node_on(server, path);
}
std::vector<WatchView> World::server_watches(zk::SessionId session) const {
  return impl_->server_watches(session);
}
bool World::session_alive(zk::SessionId id) const { return impl_->session_alive(id); }
void World::set_sequence_counter(std::string_view parent, int32_t next) {
  impl_->set_sequence_counter(parent, next);
}
EventLog& World::log() { return impl_->event_log(); }
const std::vector<Decision>& World::decisions() const { return impl_->decisions(); }
bool World::diverged() const { return impl_->strategy().diverged(); }
std::string World::divergence() const { return impl_->strategy().divergence(); }
zk::Zxid World::last_zxid() const { return impl_->last_zxid(); }
const std::vector<HerdRecord>& World::herd() const { return impl_->herd(); }
uint64_t World::requests_total() const { return impl_->requests_total(); }
Time World::armed_fault_fired_at() const { return impl_->armed_fault_fired_at(); }
void World::set_observer(Observer* observer) { impl_->set_observer(observer); }

}  // namespace lockstep::sim
