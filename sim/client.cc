#include "sim/client.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "sim/data_tree.h"
#include "zk/invariant.h"

namespace lockstep::sim {

using zk::Error;
using zk::SessionState;

namespace {

Duration clamp_timeout(Duration requested, Duration tick) {
  return std::clamp(requested, tick * 2, tick * 20);
}

}  // namespace

ClientImpl::ClientImpl(World::Impl& world, uint32_t index, ClientOptions options, uint64_t seed)
    : w_(world),
      index_(index),
      opt_(std::move(options)),
      timeout_(clamp_timeout(opt_.session_timeout, world.options().tick)),
      ctx_(*this, seed) {
  if (opt_.name.empty()) opt_.name = "c" + std::to_string(index);
}

ClientImpl::~ClientImpl() = default;

Time ClientImpl::now() const { return w_.now(); }

uint32_t ClientImpl::server() const {
  const Connection* c = conn_ != 0 ? w_.conn(conn_) : nullptr;
  return c != nullptr ? c->server : 0;
}

// ---- executor ----

void ClientImpl::schedule(std::coroutine_handle<> h) { schedule(h, nullptr); }

void ClientImpl::schedule(std::coroutine_handle<> h, const zk::TaskContext* task) {
  if (crashed_) return;
  ++queued_resumes_;
  Time at = now();
  if (!stalls_.empty() && task != nullptr) {
    for (auto it = stalls_.begin(); it != stalls_.end(); ++it) {
      if (it->task != task->name) continue;
      if (!it->point.empty() && (task->yield_point == nullptr || it->point != task->yield_point)) {
        continue;
      }
      if (w_.choose(ChoiceKind::kStall, 2) == 0) continue;
      at = at + it->hold;
      w_.log(index_, "stall", task->id, static_cast<uint64_t>(it->hold.us), task->name, [&] {
        return "task " + task->name +
               (task->yield_point != nullptr ? std::string(" at ") + task->yield_point : "") +
               " held for " + zk::to_string(it->hold);
      });
      stalls_.erase(it);
      break;
    }
  }
  w_.push(Event{at, 0, EventTag::kResume, index_, reinterpret_cast<uintptr_t>(h.address()), 0});
}

void ClientImpl::disarm_stall(const std::string& target) {
  const size_t at = target.find('@');
  const std::string task = target.substr(0, at);
  const std::string point = at == std::string::npos ? std::string() : target.substr(at + 1);
  for (auto it = stalls_.begin(); it != stalls_.end(); ++it) {
    if (it->task == task && it->point == point) {
      stalls_.erase(it);
      return;
    }
  }
}

void ClientImpl::arm_stall(const std::string& target, Duration hold) {
  const size_t at = target.find('@');
  stalls_.push_back(Stall{target.substr(0, at),
                          at == std::string::npos ? std::string() : target.substr(at + 1), hold});
}

zk::TimerId ClientImpl::start_timer(Time at, zk::TimerCallback* cb) {
  const zk::TimerId id = ++next_timer_;
  timers_.try_emplace(id, cb);
  w_.push(Event{at, 0, EventTag::kTimer, index_, id, 0});
  return id;
}

void ClientImpl::arm(ClientTimer t, Time at) {
  const uint64_t token = ++tokens_[static_cast<size_t>(t)];
  w_.dispositions_changed(index_);  // the timer's earlier event, if any, is dead now
  w_.push(Event{at, 0, EventTag::kClientTimer, index_, static_cast<uint64_t>(t), token});
}

bool ClientImpl::live(const Event& e) const {
  if (e.type == EventTag::kTimer) return timers_.count(e.a) != 0;
  if (e.type == EventTag::kClientTimer) return tokens_[e.a] == e.b;
  return true;
}

void ClientImpl::run(const Event& e) {
  switch (e.type) {
    case EventTag::kResume:
      --queued_resumes_;
      std::coroutine_handle<>::from_address(reinterpret_cast<void*>(e.a)).resume();
      return;
    case EventTag::kTimer: {
      auto it = timers_.find(e.a);
      if (it == timers_.end()) return;
      zk::TimerCallback* cb = it->second;
      timers_.erase(it);
      w_.dispositions_changed(index_);
      cb->on_timer();
      return;
    }
    case EventTag::kClientTimer: on_client_timer(static_cast<ClientTimer>(e.a)); return;
    default: LOCKSTEP_ASSERT(false && "not a client event");
  }
}

zk::TaskHandle ClientImpl::spawn(zk::Task<void> task, std::string name) {
  std::erase_if(named_tasks_, [](const zk::TaskHandle& h) { return h.done(); });
  zk::TaskHandle h = ctx_.spawn(std::move(task), std::move(name));
  named_tasks_.push_back(h);
  return h;
}

bool ClientImpl::cancel_task(const std::string& name) {
  for (auto it = named_tasks_.rbegin(); it != named_tasks_.rend(); ++it) {
    if (!it->done() && it->name() == name) {
      it->cancel();
      return true;
    }
  }
  return false;
}

Duration ClientImpl::extra_delay(Time at) const {
  Duration d{};
  for (const Delay& x : delays_) {
    if (at < x.until) d = d + x.extra;
  }
  return d;
}

// ---- operations ----

template <class R>
zk::Future<R> ClientImpl::submit(Request&& req, zk::Watch* watch, zk::WatchKind kind) {
  if (state_ == SessionState::kExpired || state_ == SessionState::kClosed) {
    return zk::Future<R>::ready(R::failure(Error::kInvalidState));
  }
  const bool seq = req.op == Op::kCreate && zk::is_sequential(req.mode);
  if (!valid_path(req.path, seq)) {
    return zk::Future<R>::ready(R::failure(Error::kBadArguments));
  }
  zk::Promise<R> promise;
  zk::Future<R> f = promise.future();
  req.xid = next_xid_++;
  if (watch != nullptr) {
    *watch = zk::Watch::make(req.path, kind);
    req.watch = true;
  }
  ++requests_sent_;
  w_.count_request(index_, op_name(req.op), req.path);
  if (herd_zxid.value != 0) w_.herd_request(herd_zxid);
  log_send(req);
  pending_.emplace_back(std::move(req), false, std::move(promise),
                        watch != nullptr ? *watch : zk::Watch());
  if (conn_ != 0) send(pending_.back());
  return f;
}

void ClientImpl::log_send(const Request& r) {
  const uint64_t a = static_cast<uint64_t>(r.op) | static_cast<uint64_t>(r.mode) << 8 |
                     static_cast<uint64_t>(r.watch) << 16;
  w_.log(index_, "send", a, r.xid, r.path, [&] {
    std::string t = std::string(op_name(r.op)) + " " + r.path;
    if (r.op == Op::kCreate) t += " " + zk::to_string(r.mode);
    if (r.op == Op::kCreate && zk::has_ttl(r.mode)) t += " ttl " + zk::to_string(r.ttl);
    if (r.watch) t += " watch";
    return t;
  });
}

void ClientImpl::send(Pending& p) {
  const bool aimed = lose_reply_of_ == zk::FaultRequests::kAny ||
                     (lose_reply_of_ == zk::FaultRequests::kCreate && p.req.op == Op::kCreate) ||
                     (lose_reply_of_ == zk::FaultRequests::kDelete && p.req.op == Op::kDelete);
  if (lose_next_reply_ && is_mutation(p.req.op) && aimed) {
    lose_next_reply_ = false;
    p.req.lose_reply = true;
    w_.armed_fault_fired();
  }
  if (lose_next_request_ && is_mutation(p.req.op)) {
    lose_next_request_ = false;
    p.req.lose_request = true;
    w_.armed_fault_fired();
  }
  p.sent = true;
  Connection* c = w_.conn(conn_);
  LOCKSTEP_ASSERT(c != nullptr);
  // Moved into the message (op, xid and flags stay with `p`); the server echoes the path back.
  w_.send_request(*c, std::move(p.req));
}

zk::Future<zk::Result<zk::Created>> ClientImpl::create(std::string path, std::string data,
                                                       zk::CreateMode mode, Duration ttl) {
  // A TTL on a mode without one is the caller's mistake: refused before anything is sent.
  // (The TTL's range is the server's to judge: DataTree::prepare_create.)
  if (!zk::has_ttl(mode) && ttl.us != 0) {
    return zk::Future<zk::Result<zk::Created>>::ready(
        zk::Result<zk::Created>::failure(Error::kBadArguments));
  }
  Request r;
  r.ttl = ttl;
  r.op = Op::kCreate;
  r.path = std::move(path);
  r.data = std::move(data);
  r.mode = mode;
  return submit<zk::Result<zk::Created>>(std::move(r), nullptr, zk::WatchKind::kData);
}

zk::Future<zk::Status> ClientImpl::remove(std::string path, zk::Version version) {
  Request r;
  r.op = Op::kDelete;
  r.path = std::move(path);
  r.version = version;
  return submit<zk::Status>(std::move(r), nullptr, zk::WatchKind::kData);
}

zk::Future<zk::Result<zk::Stat>> ClientImpl::exists(std::string path, zk::Watch* watch) {
  Request r;
  r.op = Op::kExists;
  r.path = std::move(path);
  return submit<zk::Result<zk::Stat>>(std::move(r), watch, zk::WatchKind::kExists);
}

zk::Future<zk::Result<zk::NodeData>> ClientImpl::get_data(std::string path, zk::Watch* watch) {
  Request r;
  r.op = Op::kGetData;
  r.path = std::move(path);
  return submit<zk::Result<zk::NodeData>>(std::move(r), watch, zk::WatchKind::kData);
}

zk::Future<zk::Result<zk::Stat>> ClientImpl::set_data(std::string path, std::string data,
                                                      zk::Version version) {
  Request r;
  r.op = Op::kSetData;
  r.path = std::move(path);
  r.data = std::move(data);
  r.version = version;
  return submit<zk::Result<zk::Stat>>(std::move(r), nullptr, zk::WatchKind::kData);
}

zk::Future<zk::Result<zk::Children>> ClientImpl::get_children(std::string path, zk::Watch* watch) {
  Request r;
  r.op = Op::kGetChildren;
  r.path = std::move(path);
  return submit<zk::Result<zk::Children>>(std::move(r), watch, zk::WatchKind::kChildren);
}

zk::Future<zk::Status> ClientImpl::sync(std::string path) {
  Request r;
  r.op = Op::kSync;
  r.path = std::move(path);
  return submit<zk::Status>(std::move(r), nullptr, zk::WatchKind::kData);
}

zk::SessionEvents ClientImpl::subscribe() {
  // Subscriptions nobody holds any more can never be read: forget them, so that a client that
  // subscribes at every grant does not post each session event to all of its past grants.
  std::erase_if(subscribers_, [](const zk::SessionEvents& e) { return e.orphaned(); });
  subscribers_.emplace_back();
  return subscribers_.back();
}

zk::Future<zk::Status> ClientImpl::close() {
  if (state_ == SessionState::kExpired || state_ == SessionState::kClosed) {
    return zk::Future<zk::Status>::ready(zk::Status::failure(Error::kInvalidState));
  }
  if (conn_ == 0) {
    // Not connected: like zookeeper_close, drop the handle; the server keeps the session
    // until it times out.
    close_connections();
    fail_pending(Error::kClosing);
    state_ = SessionState::kClosed;
    session_event(SessionState::kClosed);
    return zk::Future<zk::Status>::ready(zk::Status{});
  }
  // Like the C client: requests still in flight at close fail with kClosing at once, although
  // the server may still apply them (measured on Debian's 3.8.0 server); unsent ones are dropped.
  // Their replies, if any come, are matched and ignored (on_reply).
  RingQueue<Pending> in_flight;
  for (Pending& p : pending_) {
    fail(p, Error::kClosing);
    if (p.sent) in_flight.push_back(std::move(p));
  }
  pending_ = std::move(in_flight);
  Request r;
  r.op = Op::kClose;
  r.path = "/";
  zk::Future<zk::Status> f = submit<zk::Status>(std::move(r), nullptr, zk::WatchKind::kData);
  state_ = SessionState::kClosed;
  session_event(SessionState::kClosed);
  return f;
}

void ClientImpl::reopen() {
  if (state_ == SessionState::kConnecting || state_ == SessionState::kConnected) {
    learn_expired("abandoned by reopen");
  }
  w_.log(index_, "session", 100, 0, {}, [] { return std::string("reopen"); });
  // The old handle's connection (a close may still be in flight on it) is dropped: nothing sent
  // on the new session may travel on it, and nothing pending on it completes later.
  close_connections(World::Impl::InFlight::kDelivered);  // a close on the wire still arrives
  fail_pending(Error::kClosing);
  id_ = zk::SessionId{};
  failures_ = 0;  // a new handle
  timeout_ = clamp_timeout(opt_.session_timeout, w_.options().tick);
  last_zxid_ = zk::Zxid{};
  data_watches_.clear();
  exist_watches_.clear();
  child_watches_.clear();
  state_ = SessionState::kConnecting;
  arm(ClientTimer::kReconnect, now());
}

// ---- completions ----

template <class R>
static void fail_one(const zk::Promise<R>& promise, Error e) {
  promise.fulfil(R::failure(e));
}

void ClientImpl::fail(Pending& p, Error e) {
  std::visit([e](const auto& promise) { fail_one(promise, e); }, p.promise);
}

void ClientImpl::fail_pending(Error e) {
  RingQueue<Pending> pending = std::move(pending_);
  pending_.clear();
  if (!pending.empty()) w_.observe_requests_failed(index_);
  for (Pending& p : pending) fail(p, e);
}

void ClientImpl::register_watch(Pending& p, Error err) {
  if (!p.watch.valid()) return;
  Registry* reg = nullptr;
  if (p.req.op == Op::kExists) {
    if (err == Error::kOk) reg = &data_watches_;
    if (err == Error::kNoNode) reg = &exist_watches_;
  } else if (err == Error::kOk) {
    reg = p.req.op == Op::kGetChildren ? &child_watches_ : &data_watches_;
  }
  if (reg == nullptr) return;
  auto it = reg->find(p.watch.path());
  if (it == reg->end()) it = reg->emplace(p.watch.path(), std::vector<zk::Watch>{}).first;
  it->second.push_back(p.watch);
  p.watch.set_armed(true);
}

void ClientImpl::complete(Pending& p, DownMsg& m) {
  // After close() every request but the close itself has already failed with kClosing: its
  // late reply must not arm a watch that would never hear of the closed session.
  if (state_ == SessionState::kClosed && p.req.op != Op::kClose) return;
  register_watch(p, m.err);
  if (m.err != Error::kOk) return fail(p, m.err);
  switch (p.req.op) {
    case Op::kCreate:
      std::get<zk::Promise<zk::Result<zk::Created>>>(p.promise).fulfil(
          {Error::kOk, zk::Created{std::move(m.path), m.stat}});
      return;
    case Op::kDelete:
    case Op::kSync:
    case Op::kClose: std::get<zk::Promise<zk::Status>>(p.promise).fulfil(zk::Status{}); return;
    case Op::kExists:
    case Op::kSetData:
      std::get<zk::Promise<zk::Result<zk::Stat>>>(p.promise).fulfil({Error::kOk, m.stat});
      return;
    case Op::kGetData:
      std::get<zk::Promise<zk::Result<zk::NodeData>>>(p.promise).fulfil(
          {Error::kOk, zk::NodeData{std::move(m.data), m.stat}});
      return;
    case Op::kGetChildren:
      std::get<zk::Promise<zk::Result<zk::Children>>>(p.promise).fulfil(
          {Error::kOk, zk::Children{std::move(m.children), m.stat}});
      return;
  }
}

void ClientImpl::on_reply(DownMsg& m) {
  if (w_.options().java_reply_limit && m.frame_bytes() > w_.options().packet_limit_bytes) {
    return lose_connection("reply over the packet limit");
  }
  const bool matches =
      !pending_.empty() && pending_.front().sent && pending_.front().req.xid == m.xid;
  LOCKSTEP_ASSERT(matches && "replies arrive in request order");
  if (!matches) return;  // never completes the wrong request, even without asserts
  // Completed where it lies, then dropped: complete() only registers the watch and fulfils the
  // promise, whose waiter is resumed later (an event) or whose callback only queues work
  // (zk::Dispatcher), so nothing is pushed onto pending_ before the pop.
  Pending& p = pending_.front();
  LOCKSTEP_ASSERT_MSG(m.zxid >= last_zxid_,
                      "c" + std::to_string(index_) + " read zxid " + std::to_string(m.zxid.value) +
                          " after it had seen " + std::to_string(last_zxid_.value));
  if (m.zxid > last_zxid_) last_zxid_ = m.zxid;
  w_.log(index_, "reply", static_cast<uint64_t>(m.op), static_cast<uint64_t>(m.err), m.path,
         [&] { return std::string(op_name(m.op)) + " " + zk::error_name(m.err) + " " + m.path; });
  complete(p, m);
  LOCKSTEP_ASSERT(&p == &pending_.front());
  pending_.pop_front();
}

void ClientImpl::on_notify(DownMsg& m) {
  w_.log(index_, "watch", static_cast<uint64_t>(m.event), static_cast<uint64_t>(m.zxid.value),
         m.path, [&] {
           return zk::to_string(m.event) + " " + m.path + " zxid=" + std::to_string(m.zxid.value);
         });
  w_.herd_notified(*this, m.zxid);
  w_.observe_notification(index_);
  const zk::WatchEvent ev{m.event, SessionState::kConnected, m.path, m.zxid, {}};
  auto take = [&](Registry& reg) {
    auto it = reg.find(m.path);
    if (it == reg.end()) return;
    std::vector<zk::Watch> ws = std::move(it->second);
    reg.erase(it);
    for (const zk::Watch& w : ws) {
      // A watch is one-shot: it is registered once and leaves the registry when it fires.
      LOCKSTEP_ASSERT_MSG(!w.fired(), "c" + std::to_string(index_) + ": a watch on " + m.path +
                                          " would fire a second time");
      w.deliver_node_event(ev);
    }
  };
  if (m.event != zk::EventType::kChildrenChanged) {
    take(data_watches_);
    take(exist_watches_);
  }
  if (m.event == zk::EventType::kChildrenChanged || m.event == zk::EventType::kDeleted) {
    take(child_watches_);
  }
}

void ClientImpl::session_event(SessionState s) {
  w_.log(index_, "session", static_cast<uint64_t>(s), id_.value, {}, [&] {
    char buf[32];
    std::snprintf(buf, sizeof buf, " id=0x%llx", static_cast<unsigned long long>(id_.value));
    return zk::to_string(s) + buf;
  });
  w_.observe_session_event(index_);
  for (Registry* reg : {&data_watches_, &exist_watches_, &child_watches_}) {
    for (const auto& [path, ws] : *reg) {
      for (const zk::Watch& w : ws) w.deliver_session_event(s);
    }
  }
  if (s == SessionState::kExpired || s == SessionState::kClosed) {
    data_watches_.clear();
    exist_watches_.clear();
    child_watches_.clear();
  }
  for (const zk::SessionEvents& sub : subscribers_) {
    sub.post(
        zk::Result<zk::WatchEvent>{Error::kOk,
                                   zk::WatchEvent{zk::EventType::kSession, s, "", {}, id_}});
  }
}

bool ClientImpl::note_herd_notification(zk::Zxid zxid) {
  std::erase_if(herd_notified_, [&](zk::Zxid z) { return z <= last_zxid_; });
  if (std::find(herd_notified_.begin(), herd_notified_.end(), zxid) != herd_notified_.end()) {
    return false;
  }
  herd_notified_.push_back(zxid);
  return true;
}

// ---- connection state machine ----

void ClientImpl::on_message(Connection& c, DownMsg& m) {
  if (c.id == connecting_) {
    if (m.type == DownType::kConnected) return on_connected(c, m);
    if (m.type == DownType::kExpired) return learn_expired("server says expired");
    if (m.type == DownType::kClose) return attempt_failed("connection refused");
    return;
  }
  if (c.id != conn_) return;
  switch (m.type) {
    case DownType::kReply: on_reply(m); return;
    case DownType::kNotify: on_notify(m); return;
    case DownType::kClose: lose_connection("server closed the connection"); return;
    default: return;
  }
}

void ClientImpl::on_connected(Connection& c, DownMsg& m) {
  connecting_ = 0;
  conn_ = c.id;
  disarm(ClientTimer::kConnectTimeout);
  disarm(ClientTimer::kLocalExpiry);
  if (state_ == SessionState::kClosed || state_ == SessionState::kExpired) {
    return close_connections();
  }
  if (!id_.valid()) {
    id_ = m.session;
    timeout_ = m.timeout;
  }
  state_ = SessionState::kConnected;
  session_event(SessionState::kConnected);
  for (Pending& p : pending_) {
    if (!p.sent) send(p);
  }
}

void ClientImpl::close_connections(World::Impl::InFlight in_flight) {
  for (uint64_t* id : {&conn_, &connecting_}) {
    if (*id == 0) continue;
    if (Connection* c = w_.conn(*id)) w_.client_close(*c, in_flight);
    *id = 0;
  }
}

// The C client's back-off (zookeeper_interest): after a failure it waits recv_timeout/60 before
// the next attempt when it has tried every address; with one address per handle that is every
// failure but the handle's first (measured: reconnected after 0-7 ms the first time, then after
// 23 ms at 1.2 s, 54 ms at 3 s and 69 ms at 4 s).
Time ClientImpl::reconnect_at() {
  const uint32_t failures = failures_++;
  if (w_.options().reconnect_delay) return now() + *w_.options().reconnect_delay;
  return failures == 0 ? now() : now() + timeout_ / 60;
}

// Like the C client's cleanup(): the kConnecting session event is queued before the pending
// requests are failed with the connection's error code.
void ClientImpl::lose_connection(std::string_view why, Error err) {
  w_.log(index_, "disconnect", static_cast<uint64_t>(-static_cast<int>(err)), 0, why,
         [&] { return std::string(why) + " (" + zk::error_name(err) + ")"; });
  close_connections();
  const bool was_connected = state_ == SessionState::kConnected;
  if (was_connected) {
    state_ = SessionState::kConnecting;
    session_event(SessionState::kConnecting);
  }
  fail_pending(err);
  if (!was_connected) return;
  disarm(ClientTimer::kDetect);
  if (opt_.local_session_expiry) arm(ClientTimer::kLocalExpiry, now() + timeout_);
  arm(ClientTimer::kReconnect, reconnect_at());
}

void ClientImpl::attempt_failed(std::string_view why, Error err) {
  w_.log(index_, "connect-failed", static_cast<uint64_t>(-static_cast<int>(err)), 0, why,
         [&] { return std::string(why) + " (" + zk::error_name(err) + ")"; });
  close_connections();
  fail_pending(err);
  disarm(ClientTimer::kConnectTimeout);
  if (state_ == SessionState::kConnecting) arm(ClientTimer::kReconnect, reconnect_at());
}

void ClientImpl::learn_expired(std::string_view why) {
  w_.log(index_, "expired", 0, 0, why, [&] { return std::string(why); });
  close_connections();
  for (ClientTimer t : {ClientTimer::kReconnect, ClientTimer::kConnectTimeout, ClientTimer::kDetect,
                        ClientTimer::kLocalExpiry}) {
    disarm(t);
  }
  fail_pending(Error::kSessionExpired);
  if (state_ == SessionState::kClosed || state_ == SessionState::kExpired) return;
  state_ = SessionState::kExpired;
  session_event(SessionState::kExpired);
}

WatchList ClientImpl::watch_list() const {
  WatchList l;
  for (const auto& [path, ws] : data_watches_) l.data.emplace_back(path);
  for (const auto& [path, ws] : exist_watches_) l.exist.emplace_back(path);
  for (const auto& [path, ws] : child_watches_) l.child.emplace_back(path);
  return l;
}

void ClientImpl::try_connect() {
  if (state_ != SessionState::kConnecting || crashed_) return;
  const Time give_up = now() + timeout_ * 2 / 3;  // the C client's recv timeout
  if (partitioned_) return arm(ClientTimer::kConnectTimeout, give_up);
  const std::vector<uint32_t> servers = w_.eligible_servers(last_zxid_, opt_.server);
  if (servers.empty()) return attempt_failed("no server available");
  const uint32_t pick =
      servers[w_.choose(ChoiceKind::kServer, static_cast<uint32_t>(servers.size()))];
  Connection& c = w_.open_connection(index_, pick);
  connecting_ = c.id;
  w_.log(index_, "connect", pick, id_.value, {}, [&] {
    char buf[40];
    std::snprintf(buf, sizeof buf, " session=0x%llx", static_cast<unsigned long long>(id_.value));
    return "s" + std::to_string(pick) + buf;
  });
  UpMsg m;
  m.type = UpType::kConnect;
  m.session = id_;
  m.timeout = timeout_;
  m.last_zxid = last_zxid_;
  m.watches = watch_list();
  w_.send_up(c, std::move(m));
  arm(ClientTimer::kConnectTimeout, give_up);
}

void ClientImpl::on_client_timer(ClientTimer t) {
  switch (t) {
    case ClientTimer::kReconnect: try_connect(); return;
    case ClientTimer::kConnectTimeout:
      attempt_failed("connect timeout", Error::kOperationTimeout);
      return;
    case ClientTimer::kDetect:
      if (partitioned_ && conn_ != 0) lose_connection("read timeout", Error::kOperationTimeout);
      return;
    case ClientTimer::kLocalExpiry:
      if (state_ == SessionState::kConnecting) learn_expired("local session timeout");
      return;
    case ClientTimer::kCount: return;
  }
}

// ---- faults ----

void ClientImpl::fault_connection_loss() {
  if (conn_ != 0) {
    if (Connection* c = w_.conn(conn_)) w_.client_close(*c, World::Impl::InFlight::kAmbiguous);
    conn_ = 0;
    lose_connection("connection loss");
  } else if (connecting_ != 0) {
    attempt_failed("connection loss");
  }
}

void ClientImpl::fault_abandon() {
  if (state_ == SessionState::kExpired || state_ == SessionState::kClosed) return;
  learn_expired("session abandoned by the client library");
}

void ClientImpl::set_paused(bool on) {
  if (on ? pause_depth_++ > 0 : --pause_depth_ > 0) return;  // nested in another pause
  paused_ = on;
  w_.note_impaired();
  w_.dispositions_changed(index_);
  w_.update_heard_of_client(index_);
  if (on) return;
  std::vector<Event> later = std::move(deferred_);
  deferred_.clear();
  for (Event e : later) {
    e.at = now();
    w_.push(e);
  }
}

void ClientImpl::set_partitioned(bool on) {
  if (on ? partition_depth_++ > 0 : --partition_depth_ > 0) return;  // nested
  partitioned_ = on;
  w_.note_impaired();
  w_.dispositions_changed(index_);
  w_.update_heard_of_client(index_);
  if (on) {
    if (conn_ != 0) arm(ClientTimer::kDetect, now() + timeout_ * 2 / 3);
    return;
  }
  disarm(ClientTimer::kDetect);
  w_.rearm_channels(index_);
  if (state_ == SessionState::kConnecting && connecting_ == 0) {
    // An attempt that was waiting on the dead network retries as soon as it heals.
    disarm(ClientTimer::kConnectTimeout);
    arm(ClientTimer::kReconnect, now());
  }
}

void ClientImpl::crash() {
  crashed_ = true;
  w_.note_impaired();
  w_.dispositions_changed(index_);
  close_connections();
  deferred_.clear();
  w_.update_heard_of_client(index_);
}

}  // namespace lockstep::sim
