#include "real/session.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cassert>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>

#include "real/c_client.h"

namespace lockstep::real {

zk::Error error_from_c(int rc) {
  switch (rc) {
    case ZOK: return zk::Error::kOk;
    case ZSYSTEMERROR: return zk::Error::kSystemError;
    case ZRUNTIMEINCONSISTENCY: return zk::Error::kRuntimeInconsistency;
    case ZDATAINCONSISTENCY: return zk::Error::kDataInconsistency;
    case ZCONNECTIONLOSS: return zk::Error::kConnectionLoss;
    case ZMARSHALLINGERROR: return zk::Error::kMarshallingError;
    case ZUNIMPLEMENTED: return zk::Error::kUnimplemented;
    case ZOPERATIONTIMEOUT: return zk::Error::kOperationTimeout;
    case ZBADARGUMENTS: return zk::Error::kBadArguments;
    case ZINVALIDSTATE: return zk::Error::kInvalidState;
    case ZAPIERROR: return zk::Error::kApiError;
    case ZNONODE: return zk::Error::kNoNode;
    case ZNOAUTH: return zk::Error::kNoAuth;
    case ZBADVERSION: return zk::Error::kBadVersion;
    case ZNOCHILDRENFOREPHEMERALS: return zk::Error::kNoChildrenForEphemerals;
    case ZNODEEXISTS: return zk::Error::kNodeExists;
    case ZNOTEMPTY: return zk::Error::kNotEmpty;
    case ZSESSIONEXPIRED: return zk::Error::kSessionExpired;
    case ZINVALIDCALLBACK: return zk::Error::kInvalidCallback;
    case ZINVALIDACL: return zk::Error::kInvalidAcl;
    case ZAUTHFAILED: return zk::Error::kAuthFailed;
    case ZCLOSING: return zk::Error::kClosing;
    case ZNOTHING: return zk::Error::kNothing;
    case ZSESSIONMOVED: return zk::Error::kSessionMoved;
    default: return zk::Error::kSystemError;
  }
}

namespace {

zk::SessionState state_from_c(int state) {
  if (state == ZOO_CONNECTED_STATE || state == ZOO_READONLY_STATE) {
    return zk::SessionState::kConnected;
  }
  if (state == ZOO_EXPIRED_SESSION_STATE || state == ZOO_AUTH_FAILED_STATE) {
    return zk::SessionState::kExpired;
  }
  if (state == 0) return zk::SessionState::kClosed;
  return zk::SessionState::kConnecting;  // connecting, associating, not connected
}

int mode_to_c(zk::CreateMode m) {
  switch (m) {
    case zk::CreateMode::kPersistent: return ZOO_PERSISTENT;
    case zk::CreateMode::kEphemeral: return ZOO_EPHEMERAL;
    case zk::CreateMode::kPersistentSequential: return ZOO_PERSISTENT_SEQUENTIAL;
    case zk::CreateMode::kEphemeralSequential: return ZOO_EPHEMERAL_SEQUENTIAL;
    case zk::CreateMode::kContainer: return ZOO_CONTAINER;
    case zk::CreateMode::kPersistentWithTtl: return ZOO_PERSISTENT_WITH_TTL;
    case zk::CreateMode::kPersistentSequentialWithTtl: return ZOO_PERSISTENT_SEQUENTIAL_WITH_TTL;
  }
  return ZOO_PERSISTENT;
}

bool is_final(zk::SessionState s) {
  return s == zk::SessionState::kExpired || s == zk::SessionState::kClosed;
}

void log_line(const char* message) { std::fprintf(stderr, "zk-c: %s\n", message); }

}  // namespace

namespace detail {

zk::Stat stat_from_c(const struct Stat& s) {
  zk::Stat out;
  out.czxid = zk::Zxid{s.czxid};
  out.mzxid = zk::Zxid{s.mzxid};
  out.pzxid = zk::Zxid{s.pzxid};
  out.ctime_ms = s.ctime;
  out.mtime_ms = s.mtime;
  out.version = s.version;
  out.cversion = s.cversion;
  out.aversion = s.aversion;
  out.ephemeral_owner = zk::SessionId{static_cast<uint64_t>(s.ephemeralOwner)};
  out.data_length = s.dataLength;
  out.num_children = s.numChildren;
  return out;
}

void drop_c_log_line(const char*) {}

// The state of one C client handle. The C client's threads reach it through the handle's
// context pointer and the per-request data pointers; they only read the loop pointer and post
// closures (each holding a shared_ptr to the Core). Everything else is loop-thread state.
// A Core outlives its zhandle_t: the owner keeps a reference until zookeeper_close returned.
class Core : public std::enable_shared_from_this<Core> {
 public:
  explicit Core(EventLoop* loop, std::shared_ptr<std::vector<zk::SessionEvents>> subs,
                zk::Duration requested)
      : loop(loop), subscribers(std::move(subs)), timeout(requested) {}

  EventLoop* const loop;
  zhandle_t* zh = nullptr;  // set once after zookeeper_init; cleared when closed

  // ---- loop thread ----
  zk::SessionState state = zk::SessionState::kConnecting;
  Credentials creds;
  std::shared_ptr<std::vector<zk::SessionEvents>> subscribers;
  zk::Duration timeout;
  std::map<uint64_t, zk::Watch> armed;  // registered with the C client, not yet fired
  uint64_t next_watch_id = 1;

  void on_session_state(zk::SessionState s, Credentials c, int timeout_ms) {
    if (is_final(state)) return;
    if (s == zk::SessionState::kConnected) {
      creds = c;
      if (timeout_ms > 0) timeout = zk::milliseconds(timeout_ms);
    }
    if (s == state) return;
    set_state(s);
  }

  void set_state(zk::SessionState s) {
    state = s;
    for (auto& [id, w] : armed) w.deliver_session_event(s);
    if (is_final(s)) armed.clear();
    for (const auto& sub : *subscribers) {
      sub.post(zk::Result<zk::WatchEvent>{
          zk::Error::kOk,
          zk::WatchEvent{zk::EventType::kSession, s, std::string(), zk::Zxid{}, creds.id}});
    }
  }

  void on_node_event(uint64_t watch_id, zk::EventType type, std::string path) {
    auto it = armed.find(watch_id);
    if (it == armed.end()) return;
    zk::Watch w = it->second;
    armed.erase(it);
    w.deliver_node_event(zk::WatchEvent{type, state, std::move(path), zk::Zxid{}, {}});
  }
};

}  // namespace detail

namespace {

using detail::Core;

// ---- C callbacks (run on the C client's threads) ----

void global_watcher(zhandle_t* zh, int type, int state, const char*, void* ctx) {
  if (type != ZOO_SESSION_EVENT) return;
  auto* core = static_cast<Core*>(ctx);
  Credentials c;
  int timeout_ms = 0;
  if (state == ZOO_CONNECTED_STATE || state == ZOO_READONLY_STATE) {
    const clientid_t* id = zoo_client_id(zh);
    c.id = zk::SessionId{static_cast<uint64_t>(id->client_id)};
    std::memcpy(c.password.data(), id->passwd, c.password.size());
    timeout_ms = zoo_recv_timeout(zh);
  }
  const zk::SessionState s = state_from_c(state);
  core->loop->post([core = core->shared_from_this(), s, c, timeout_ms] {
    core->on_session_state(s, c, timeout_ms);
  });
}

void node_watcher(zhandle_t* zh, int type, int, const char* path, void* ctx) {
  zk::EventType t;
  if (type == ZOO_CREATED_EVENT) {
    t = zk::EventType::kCreated;
  } else if (type == ZOO_DELETED_EVENT) {
    t = zk::EventType::kDeleted;
  } else if (type == ZOO_CHANGED_EVENT) {
    t = zk::EventType::kDataChanged;
  } else if (type == ZOO_CHILD_EVENT) {
    t = zk::EventType::kChildrenChanged;
  } else {
    return;  // session events reach every watch through the global watcher
  }
  auto* core = static_cast<Core*>(const_cast<void*>(zoo_get_context(zh)));
  const auto watch_id = reinterpret_cast<uintptr_t>(ctx);
  core->loop->post([core = core->shared_from_this(), watch_id, t, p = std::string(path)] {
    core->on_node_event(watch_id, t, p);
  });
}

// One request in flight: owned by the C client between the call and its completion.
template <class T>
struct Op {
  std::shared_ptr<Core> core;
  zk::Promise<T> promise;
  zk::Watch watch;  // valid when a watch was requested
  uint64_t watch_id = 0;
  bool arms_on_no_node = false;  // exists() arms a creation watch on ZNONODE
};

// Completes `op` on the loop with `r` (called on the C client's thread; takes ownership).
template <class T>
void finish(const void* data, int rc, T r) {
  std::shared_ptr<Op<T>> op(static_cast<Op<T>*>(const_cast<void*>(data)));
  EventLoop* loop = op->core->loop;
  loop->post([op, rc, r = std::move(r)]() mutable {
    if (op->watch.valid()) {
      const bool armed = rc == ZOK || (rc == ZNONODE && op->arms_on_no_node);
      op->watch.set_armed(armed);
      if (armed && !is_final(op->core->state)) op->core->armed.emplace(op->watch_id, op->watch);
    }
    op->promise.fulfil(std::move(r));
  });
}

void on_create(int rc, const char* value, const struct Stat* stat, const void* data) {
  zk::Result<zk::Created> r;
  r.error = error_from_c(rc);
  if (rc == ZOK) {
    r.value.path = value != nullptr ? value : "";
    if (stat != nullptr) r.value.stat = detail::stat_from_c(*stat);
  }
  finish(data, rc, std::move(r));
}

void on_void(int rc, const void* data) { finish(data, rc, zk::Status{error_from_c(rc), {}}); }

void on_string(int rc, const char*, const void* data) {
  finish(data, rc, zk::Status{error_from_c(rc), {}});
}

void on_stat(int rc, const struct Stat* stat, const void* data) {
  zk::Result<zk::Stat> r;
  r.error = error_from_c(rc);
  if (rc == ZOK && stat != nullptr) r.value = detail::stat_from_c(*stat);
  finish(data, rc, std::move(r));
}

void on_data(int rc, const char* value, int len, const struct Stat* stat, const void* data) {
  zk::Result<zk::NodeData> r;
  r.error = error_from_c(rc);
  if (rc == ZOK) {
    if (value != nullptr && len > 0) r.value.data.assign(value, static_cast<size_t>(len));
    if (stat != nullptr) r.value.stat = detail::stat_from_c(*stat);
  }
  finish(data, rc, std::move(r));
}

void on_children(int rc, const struct String_vector* names, const struct Stat* stat,
                 const void* data) {
  zk::Result<zk::Children> r;
  r.error = error_from_c(rc);
  if (rc == ZOK) {
    if (names != nullptr) {
      std::vector<std::string> list;
      list.reserve(static_cast<size_t>(names->count));
      for (int32_t i = 0; i < names->count; ++i) list.emplace_back(names->data[i]);
      r.value.names = zk::Names(std::move(list));
    }
    if (stat != nullptr) r.value.stat = detail::stat_from_c(*stat);
  }
  finish(data, rc, std::move(r));
}

// Issues one request: `call(op_ptr, watcher, watcher_ctx)` returns the C call's rc. On a
// synchronous failure the C client calls no completion: the future completes at once.
template <class T, class Call>
zk::Future<T> issue(const std::shared_ptr<Core>& core, zk::Watch* watch, std::string path,
                    zk::WatchKind kind, Call call) {
  if (core->zh == nullptr || is_final(core->state)) {
    if (watch != nullptr) *watch = zk::Watch::make(std::move(path), kind);
    return zk::Future<T>::ready(T::failure(zk::Error::kInvalidState));
  }
  auto* op = new Op<T>();
  op->core = core;
  zk::Future<T> f = op->promise.future();
  watcher_fn wfn = nullptr;
  void* wctx = nullptr;
  if (watch != nullptr) {
    *watch = zk::Watch::make(path, kind);
    op->watch = *watch;
    op->watch_id = core->next_watch_id++;
    op->arms_on_no_node = kind == zk::WatchKind::kExists;
    wfn = &node_watcher;
    wctx = reinterpret_cast<void*>(static_cast<uintptr_t>(op->watch_id));
  }
  const int rc = call(op, wfn, wctx);
  if (rc != ZOK) {
    op->promise.fulfil(T::failure(error_from_c(rc)));
    delete op;
  }
  return f;
}

}  // namespace

// ---- RealSession ----

RealSession::RealSession(EventLoop& loop, SessionOptions options)
    : loop_(loop),
      options_(std::move(options)),
      own_context_(std::make_unique<zk::Context>(loop, options_.seed)),
      context_(own_context_.get()),
      subscribers_(std::make_shared<std::vector<zk::SessionEvents>>()) {
  open(options_.resume);
}

RealSession::RealSession(EventLoop& loop, zk::Context& context, SessionOptions options)
    : loop_(loop),
      options_(std::move(options)),
      context_(&context),
      subscribers_(std::make_shared<std::vector<zk::SessionEvents>>()) {
  assert(&context.executor() == &loop);
  open(options_.resume);
}

RealSession::~RealSession() {
  if (core_ && core_->zh != nullptr) {
    zhandle_t* zh = std::exchange(core_->zh, nullptr);
    zookeeper_close(zh);
  }
  for (auto& t : closers_) t.join();
  // The owned context (if any) is destroyed after this body: unfinished coroutines detach.
}

void RealSession::open(std::optional<Credentials> resume) {
  core_ = std::make_shared<Core>(&loop_, subscribers_, options_.session_timeout);
  clientid_t cid{};
  const clientid_t* cid_ptr = nullptr;
  if (resume.has_value()) {
    cid.client_id = static_cast<int64_t>(resume->id.value);
    std::memcpy(cid.passwd, resume->password.data(), sizeof cid.passwd);
    cid_ptr = &cid;
  }
  zhandle_t* zh = zookeeper_init2(
      options_.hosts.c_str(), &global_watcher, static_cast<int>(options_.session_timeout.ms()),
      cid_ptr, core_.get(), 0, options_.log_client ? &log_line : &detail::drop_c_log_line);
  core_->zh = zh;
  if (zh == nullptr) {
    // Bad host string or out of resources: the handle is dead from the start.
    core_->set_state(zk::SessionState::kClosed);
  }
}

void RealSession::reopen() {
  if (core_->zh != nullptr) {
    if (!is_final(core_->state)) core_->set_state(zk::SessionState::kClosed);
    zhandle_t* zh = std::exchange(core_->zh, nullptr);
    zookeeper_close(zh);
  }
  open(std::nullopt);
}

zk::SessionId RealSession::id() const { return core_->creds.id; }
zk::SessionState RealSession::state() const { return core_->state; }
zk::Duration RealSession::timeout() const { return core_->timeout; }

Credentials RealSession::credentials() const {
  assert(core_->creds.id.valid());
  return core_->creds;
}

std::string RealSession::connected_server() const {
  if (core_->zh == nullptr || core_->state != zk::SessionState::kConnected) return "";
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (zookeeper_get_connected_host(core_->zh, reinterpret_cast<sockaddr*>(&addr), &len) ==
      nullptr) {
    return "";
  }
  if (addr.ss_family != AF_INET) return "";
  const auto* in = reinterpret_cast<const sockaddr_in*>(&addr);
  char buf[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &in->sin_addr, buf, sizeof buf);
  return std::string(buf) + ":" + std::to_string(ntohs(in->sin_port));
}

zk::Future<zk::Result<zk::Created>> RealSession::create(std::string path, std::string data,
                                                        zk::CreateMode mode, zk::Duration ttl) {
  using T = zk::Result<zk::Created>;
  // As the simulator: a TTL on a mode without one is refused before anything is sent.
  if (!zk::has_ttl(mode) && ttl.us != 0) {
    return zk::Future<T>::ready(T::failure(zk::Error::kBadArguments));
  }
  zhandle_t* zh = core_->zh;
  const bool extended = zk::has_ttl(mode) || zk::is_container(mode);
  // zoo_acreate2_ttl for the extended types (a container takes ttl -1; the TTL's range is the
  // server's to judge), zoo_acreate2 for the others, as before.
  const int64_t ttl_ms = zk::has_ttl(mode) ? ttl.us / 1000 : -1;
  return issue<T>(core_, nullptr, path, zk::WatchKind::kData, [&](Op<T>* op, watcher_fn, void*) {
    if (extended) {
      return zoo_acreate2_ttl(zh, path.c_str(), data.data(), static_cast<int>(data.size()),
                              &ZOO_OPEN_ACL_UNSAFE, mode_to_c(mode), ttl_ms, &on_create, op);
    }
    return zoo_acreate2(zh, path.c_str(), data.data(), static_cast<int>(data.size()),
                        &ZOO_OPEN_ACL_UNSAFE, mode_to_c(mode), &on_create, op);
  });
}

zk::Future<zk::Status> RealSession::remove(std::string path, zk::Version version) {
  zhandle_t* zh = core_->zh;
  return issue<zk::Status>(core_, nullptr, path, zk::WatchKind::kData,
                           [&](Op<zk::Status>* op, watcher_fn, void*) {
                             return zoo_adelete(zh, path.c_str(), version, &on_void, op);
                           });
}

zk::Future<zk::Result<zk::Stat>> RealSession::exists(std::string path, zk::Watch* watch) {
  using T = zk::Result<zk::Stat>;
  zhandle_t* zh = core_->zh;
  return issue<T>(core_, watch, path, zk::WatchKind::kExists,
                  [&](Op<T>* op, watcher_fn wfn, void* wctx) {
                    return zoo_awexists(zh, path.c_str(), wfn, wctx, &on_stat, op);
                  });
}

zk::Future<zk::Result<zk::NodeData>> RealSession::get_data(std::string path, zk::Watch* watch) {
  using T = zk::Result<zk::NodeData>;
  zhandle_t* zh = core_->zh;
  return issue<T>(core_, watch, path, zk::WatchKind::kData,
                  [&](Op<T>* op, watcher_fn wfn, void* wctx) {
                    return zoo_awget(zh, path.c_str(), wfn, wctx, &on_data, op);
                  });
}

zk::Future<zk::Result<zk::Stat>> RealSession::set_data(std::string path, std::string data,
                                                       zk::Version version) {
  using T = zk::Result<zk::Stat>;
  zhandle_t* zh = core_->zh;
  return issue<T>(core_, nullptr, path, zk::WatchKind::kData, [&](Op<T>* op, watcher_fn, void*) {
    return zoo_aset(zh, path.c_str(), data.data(), static_cast<int>(data.size()), version, &on_stat,
                    op);
  });
}

zk::Future<zk::Result<zk::Children>> RealSession::get_children(std::string path, zk::Watch* watch) {
  using T = zk::Result<zk::Children>;
  zhandle_t* zh = core_->zh;
  return issue<T>(core_, watch, path, zk::WatchKind::kChildren,
                  [&](Op<T>* op, watcher_fn wfn, void* wctx) {
                    return zoo_awget_children2(zh, path.c_str(), wfn, wctx, &on_children, op);
                  });
}

zk::Future<zk::Status> RealSession::sync(std::string path) {
  zhandle_t* zh = core_->zh;
  return issue<zk::Status>(core_, nullptr, path, zk::WatchKind::kData,
                           [&](Op<zk::Status>* op, watcher_fn, void*) {
                             return zoo_async(zh, path.c_str(), &on_string, op);
                           });
}

zk::SessionEvents RealSession::subscribe() {
  zk::SessionEvents events;
  subscribers_->push_back(events);
  return events;
}

zk::Future<zk::Status> RealSession::close() {
  if (core_->zh == nullptr || core_->state == zk::SessionState::kClosed) {
    return zk::Future<zk::Status>::ready(zk::Status::failure(zk::Error::kInvalidState));
  }
  if (core_->state == zk::SessionState::kExpired) {
    // Like every call after expiry: kInvalidState. The dead handle is released all the same
    // (no round trip: the C client knows the session is gone).
    zookeeper_close(std::exchange(core_->zh, nullptr));
    return zk::Future<zk::Status>::ready(zk::Status::failure(zk::Error::kInvalidState));
  }
  core_->set_state(zk::SessionState::kClosed);
  zhandle_t* zh = std::exchange(core_->zh, nullptr);
  zk::Promise<zk::Status> promise;
  zk::Future<zk::Status> f = promise.future();
  // zookeeper_close waits for the server's reply: keep the loop free meanwhile.
  closers_.emplace_back([zh, core = core_, promise] {
    const int rc = zookeeper_close(zh);
    core->loop->post([promise, rc] { promise.fulfil(zk::Status{error_from_c(rc), {}}); });
  });
  return f;
}

}  // namespace lockstep::real
