// lockstep simulator: a simulated client process — the zk::Session implementation, its
// zk::Executor and its client library (connection state machine, watch registry).
//
// The client is its own executor: schedule(h) queues a resume event for this client at the
// current instant and start_timer a timer event, so a caller task, watch handlers and
// session listeners of one client interleave under the scheduler's control. While the client
// is paused its events are deferred (the World hands them back here and they are re-queued on
// resume); once it has crashed none of them run.
//
// Client library behaviour (the C client's, measured on libzookeeper-mt 3.8.0: real/FINDINGS.md):
//   - requests are queued while connecting and sent in order once connected; when a connection
//     fails, registered watches and subscribers get kConnecting first, then every pending
//     request completes with the failure's code: kConnectionLoss when the connection was closed
//     or refused, kOperationTimeout when the client's own timer gave up (below);
//   - it notices a partition after 2/3 of the session timeout without hearing the server (the
//     read timeout); a connect attempt nobody answers is abandoned after 2/3 of the timeout;
//   - it reconnects to a server at least as new as its last seen zxid, re-registering its
//     watches (SetWatches), after a back-off: none after a handle's first connection failure,
//     session timeout / 60 after every later one (WorldOptions::reconnect_delay overrides);
//   - it learns of expiry only from a server ("expired" answer to a reconnect): pending
//     requests fail with kSessionExpired, watches and subscribers get kExpired, later calls
//     fail with kInvalidState. With local_session_expiry it also declares kExpired itself
//     after being disconnected for the session timeout.
// Owned by World::Impl. Coroutines resume only from run().
#pragma once

#include <array>
#include <coroutine>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "sim/messages.h"
#include "sim/scheduler.h"
#include "sim/world_impl.h"
#include "zk/context.h"
#include "zk/flat_map.h"

namespace lockstep::sim {

enum class ClientTimer : uint8_t { kReconnect, kConnectTimeout, kDetect, kLocalExpiry, kCount };

class ClientImpl final : public Client, public zk::Executor {
 public:
  ClientImpl(World::Impl& world, uint32_t index, ClientOptions options, uint64_t seed);
  ~ClientImpl() override;

  // zk::Session
  zk::Context& context() override { return ctx_; }
  zk::SessionId id() const override { return id_; }
  zk::SessionState state() const override { return state_; }
  Duration timeout() const override { return timeout_; }
  zk::Future<zk::Result<zk::Created>> create(std::string path, std::string data,
                                             zk::CreateMode mode, Duration ttl = {}) override;
  zk::Future<zk::Status> remove(std::string path, zk::Version version) override;
  zk::Future<zk::Result<zk::Stat>> exists(std::string path, zk::Watch* watch) override;
  zk::Future<zk::Result<zk::NodeData>> get_data(std::string path, zk::Watch* watch) override;
  zk::Future<zk::Result<zk::Stat>> set_data(std::string path, std::string data,
                                            zk::Version version) override;
  zk::Future<zk::Result<zk::Children>> get_children(std::string path, zk::Watch* watch) override;
  zk::Future<zk::Status> sync(std::string path) override;
  zk::SessionEvents subscribe() override;
  zk::Future<zk::Status> close() override;

  // Client
  uint32_t index() const override { return index_; }
  const std::string& name() const override { return opt_.name; }
  bool crashed() const override { return crashed_; }
  bool paused() const override { return paused_; }
  uint64_t requests_sent() const override { return requests_sent_; }
  void reopen() override;
  zk::TaskHandle spawn(zk::Task<void> task, std::string name) override;
  uint32_t server() const override;

  // zk::Executor
  Time now() const override;
  void schedule(std::coroutine_handle<> h) override;
  void schedule(std::coroutine_handle<> h, const zk::TaskContext* task) override;
  zk::TimerId start_timer(Time at, zk::TimerCallback* cb) override;
  void cancel_timer(zk::TimerId id) override {
    timers_.erase(id);
    w_.dispositions_changed(index_);
  }

  // ---- called by the world ----
  void start() { arm(ClientTimer::kReconnect, now()); }
  void run(const Event& e);
  bool live(const Event& e) const;
  void defer(const Event& e) { deferred_.push_back(e); }
  void on_message(Connection& c, DownMsg& m);
  bool partitioned() const { return partitioned_; }
  bool quiescent() const { return pending_.empty() && queued_resumes_ == 0; }
  Duration extra_delay(Time at) const;
  // The client library's state: session, connection, requests outstanding, watches registered,
  // fault flags (World::state_digest; not its coroutines or timer callbacks).
  uint64_t digest() const;
  zk::Zxid herd_zxid;  // the delete whose notification this client is reacting to (0: none)
  // Herd accounting: false when this client was already notified of the delete `zxid` (a
  // redelivery after failing over to a lagging server, see HerdRecord::redeliveries).
  bool note_herd_notification(zk::Zxid zxid);

  // ---- faults ----
  void fault_connection_loss();
  void fault_abandon();
  // The next mutating request of the kind `which` names (any: create, delete or set) loses its
  // reply.
  void fault_lose_next_reply(zk::FaultRequests which = zk::FaultRequests::kAny) {
    lose_next_reply_ = true;
    lose_reply_of_ = which;
  }
  void fault_lose_next_request() { lose_next_request_ = true; }
  void set_paused(bool on);
  void set_partitioned(bool on);
  void add_delay(Duration extra, Time until) {
    delays_.push_back({until, extra});
    w_.note_delayed();
  }
  void crash();
  bool cancel_task(const std::string& name);
  // FaultKind::kStall: from now on, each resume of the task named `target` ("NAME", or
  // "NAME@POINT" for its resumes from that explicit yield point) asks the scheduler whether to
  // hold it there (ChoiceKind::kStall); the first yes delays that resume by `hold` and disarms.
  void arm_stall(const std::string& target, Duration hold);
  // The stall's window closed without it taking hold (a stall that took hold is gone already).
  void disarm_stall(const std::string& target);

 private:
  using AnyPromise =
      std::variant<zk::Promise<zk::Result<zk::Created>>, zk::Promise<zk::Status>,
                   zk::Promise<zk::Result<zk::Stat>>, zk::Promise<zk::Result<zk::NodeData>>,
                   zk::Promise<zk::Result<zk::Children>>>;
  struct Pending {
    Request req;
    bool sent = false;
    AnyPromise promise;
    zk::Watch watch;  // valid when a watch was requested
  };
  // Path -> the watches registered on it. A key views the path held by its entry's first
  // watch (every watch on a path shares it), which lives as long as the entry: no string is
  // copied per registration.
  using Registry = std::map<std::string_view, std::vector<zk::Watch>, std::less<>>;
  struct Delay {
    Time until;
    Duration extra;
  };

  template <class R>
  zk::Future<R> submit(Request&& req, zk::Watch* watch, zk::WatchKind kind);
  void send(Pending& p);
  void log_send(const Request& r);
  static void fail(Pending& p, zk::Error e);
  void complete(Pending& p, DownMsg& m);
  void register_watch(Pending& p, zk::Error err);
  void on_reply(DownMsg& m);
  void on_notify(DownMsg& m);
  void on_connected(Connection& c, DownMsg& m);
  void fail_pending(zk::Error e);
  void session_event(zk::SessionState s);
  void lose_connection(std::string_view why, zk::Error err = zk::Error::kConnectionLoss);
  void attempt_failed(std::string_view why, zk::Error err = zk::Error::kConnectionLoss);
  Time reconnect_at();  // when the next connect attempt starts (counts a failure)
  void learn_expired(std::string_view why);
  void close_connections(World::Impl::InFlight in_flight = World::Impl::InFlight::kLost);
  void try_connect();
  WatchList watch_list() const;
  void arm(ClientTimer t, Time at);
  void disarm(ClientTimer t) {
    ++tokens_[static_cast<size_t>(t)];
    w_.dispositions_changed(index_);
  }
  void on_client_timer(ClientTimer t);

  World::Impl& w_;
  uint32_t index_;
  // Read for every event the scheduler classifies and every session check: kept in the
  // object's first cache line.
  bool crashed_ = false;
  bool paused_ = false;
  bool partitioned_ = false;
  ClientOptions opt_;
  zk::FlatMap<zk::TimerId, zk::TimerCallback*> timers_;  // live ones: a few at a time
  zk::TimerId next_timer_ = 0;
  uint64_t queued_resumes_ = 0;
  std::vector<Event> deferred_;
  std::array<uint64_t, static_cast<size_t>(ClientTimer::kCount)> tokens_{};

  zk::SessionState state_ = zk::SessionState::kConnecting;
  zk::SessionId id_;
  Duration timeout_;
  zk::Zxid last_zxid_;
  uint64_t conn_ = 0;        // the established connection
  uint64_t connecting_ = 0;  // a connect attempt in progress
  uint64_t next_xid_ = 1;
  uint32_t failures_ = 0;       // connection failures of this handle (the back-off depends on it)
  RingQueue<Pending> pending_;  // FIFO: unsent after sent
  Registry data_watches_, exist_watches_, child_watches_;
  std::vector<zk::SessionEvents> subscribers_;
  std::vector<zk::TaskHandle> named_tasks_;
  struct Stall {
    std::string task;
    std::string point;  // "" = at any await
    Duration hold{};
  };
  std::vector<Stall> stalls_;  // armed, not yet taken (arm_stall)
  std::vector<Delay> delays_;
  // Deletes this client was notified of that are newer than its last seen zxid: only those can
  // be notified again (a server it can still fail over to may not have applied them yet).
  std::vector<zk::Zxid> herd_notified_;
  uint64_t requests_sent_ = 0;
  // Pause and partition faults may overlap on one client: each starts one level and ends one;
  // the client resumes (heals) only when the last of them ends, and a fault that starts while
  // another is in force changes nothing (the read timeout still counts from the first).
  uint32_t pause_depth_ = 0;
  uint32_t partition_depth_ = 0;
  bool lose_next_reply_ = false;
  zk::FaultRequests lose_reply_of_ = zk::FaultRequests::kAny;
  bool lose_next_request_ = false;

  zk::Context ctx_;  // last: destroyed first, while the timer table above still exists
};

}  // namespace lockstep::sim
