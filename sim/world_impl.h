// lockstep simulator: World::Impl, the hub that owns every part of a run.
//
// It owns the scheduler, the log, the servers, the sessions table, the connections and the
// clients, and it is the EventFilter the scheduler consults. Its member functions are split by
// concern: world.cc (run loop, dispatch, inspection), network.cc (connections and channels),
// server.cc (requests, the leader, applies, watches, sessions and expiry), faults.cc.
// Clients (client.cc) call back into it to send, log and choose.
//
// Invariants: a session in sessions_ is alive on the ensemble; a session's conn, when set, is
// an open (server side) connection on sessions_[id].server; connections are erased only at the
// end of a step (bury), so references taken during a step stay valid.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/data_tree.h"
#include "sim/id_index.h"
#include "sim/messages.h"
#include "sim/scheduler.h"
#include "sim/server.h"
#include "sim/world.h"

namespace lockstep::sim {

class ClientImpl;

class World::Impl final : public EventFilter {
 public:
  // EventFilter: whose state classify() reads, and who changed (dispositions_changed).
  uint32_t owner(const Event& e) override;
  void take_changes(std::vector<uint32_t>* owners) override { owners->swap(changed_); }
  void dispositions_changed(uint32_t owner) {
    if (changed_.empty() || changed_.back() != owner) changed_.push_back(owner);
  }
  // A client was crashed, paused or partitioned / given an extra delay (see impaired_).
  void note_impaired() { impaired_ = true; }
  void note_delayed() { delayed_ = true; }
  Impl(WorldOptions options, std::unique_ptr<Strategy> strategy);
  ~Impl();

  // ---- world.cc ----
  const WorldOptions& options() const { return opt_; }
  Time now() const { return sched_.now(); }
  uint32_t choose(ChoiceKind kind, uint32_t n) { return sched_.choose(kind, n); }
  void push(Event e) { sched_.push(e); }
  template <class TextFn>
  void log(uint32_t client, std::string_view kind, uint64_t a, uint64_t b, std::string_view s,
           TextFn&& text) {
    log_.add_compact(now(), client, kind, a, b, s, text);
  }
  bool recording() const { return log_.recording(); }
  bool step(Time limit);
  Disposition classify(const Event& e) override;
  void defer(const Event& e) override;
  Client& add_client(ClientOptions options);
  ClientImpl& client(uint32_t index) { return *clients_[index - 1]; }
  uint32_t client_count() const { return static_cast<uint32_t>(clients_.size()); }
  // Server `server`'s copy (1-based); 0: the committed state (committed()).
  std::optional<NodeView> node_on(uint32_t server, std::string_view path) const;
  std::vector<WatchView> server_watches(zk::SessionId session) const;
  void set_sequence_counter(std::string_view parent, int32_t next);
  bool session_alive(zk::SessionId id) const { return find_session(id.value) != nullptr; }
  zk::Zxid last_zxid() const { return zxid_; }
  EventLog& event_log() { return log_; }
  Strategy& strategy() { return *strategy_; }
  const std::vector<Decision>& decisions() const { return sched_.decisions(); }
  const std::vector<HerdRecord>& herd() const { return herd_; }
  uint64_t requests_total() const { return requests_total_; }
  Time armed_fault_fired_at() const { return armed_fault_fired_at_; }
  const std::vector<size_t>& started_faults() const { return started_faults_; }
  void armed_fault_fired() { armed_fault_fired_at_ = now(); }
  uint64_t events_executed() const { return events_executed_; }
  void run_until(Time t);
  bool run_until_idle(Time limit);
  // Herd accounting (see HerdRecord): a client received a notification / sent a request.
  void herd_notified(ClientImpl& c, zk::Zxid zxid);
  void herd_request(zk::Zxid zxid);
  void count_request(uint32_t client, std::string_view op, std::string_view path) {
    ++requests_total_;
    if (observer_ != nullptr) observer_->request_sent(client, op, path);
  }
  void observe_notification(uint32_t client) {
    if (observer_ != nullptr) observer_->notified(client);
  }
  void observe_requests_failed(uint32_t client) {
    if (observer_ != nullptr) observer_->requests_failed(client);
  }
  void observe_session_event(uint32_t client) {
    if (observer_ != nullptr) observer_->session_event(client);
  }
  void set_observer(Observer* o) { observer_ = o; }
  uint64_t state_digest() const;  // World::state_digest

  // ---- network.cc ----
  Duration latency(uint32_t client);
  Connection* conn(uint64_t id);
  Connection& open_connection(uint32_t client, uint32_t server);
  void send_up(Connection& c, UpMsg&& m);
  // send_up of a request, the message made where it waits in the channel (one move less).
  void send_request(Connection& c, Request&& r);
  // Sends c.down's last message `m`, made in place by the caller: its latency (a choice), seq
  // and arrival, and its delivery. REQUIRES: c.client_open.
  void dispatch_down(Connection& c, DownMsg& m);
  // A new last message on c's up channel, its seq and arrival set and its delivery scheduled
  // (the caller fills in the rest before anything runs). REQUIRES: both ends open.
  UpMsg& enqueue_up(Connection& c);
  void send_down(Connection& c, DownMsg&& m);
  // What becomes of the requests still in flight when the client closes its end.
  enum class InFlight : uint8_t {
    kLost,       // the connection died: they never arrive
    kAmbiguous,  // each reaches the server or not (ChoiceKind::kAmbiguousOutcome)
    kDelivered,  // an orderly close: they were on the wire and arrive before the close
  };
  // The client closes its end; the server learns at once.
  void client_close(Connection& c, InFlight in_flight);
  // The server closes its end; with `tell_client` the client learns when a kClose arrives.
  void server_close(Connection& c, bool tell_client, std::string_view why);
  void rearm_channels(uint32_t client);  // a partition healed: deliver what was held

  // ---- server.cc ----
  Server& server(uint32_t id) { return *servers_[id - 1]; }
  Server& leader() { return *servers_[0]; }
  // The committed state: what the leader validates a write against (ZooKeeper's
  // PrepRequestProcessor checks its outstanding changes over its tree) and what an outside
  // session, the session tracker and the container manager's deletes act on. A standalone
  // server applies each write as it commits it, so it is the leader's tree. In an ensemble it is
  // a tree of its own, applied at every commit, because the leader's own copy, the one its
  // clients read, may apply later (kLaggingFollower on server 1: ZooKeeper's leader sends
  // COMMIT to the followers before its own CommitProcessor applies the write).
  DataTree& committed() { return committed_ ? *committed_ : leader().tree; }
  const DataTree& committed() const { return committed_ ? *committed_ : servers_[0]->tree; }
  bool serving(const Server& s) const;
  // Sessions are tracked by the leader (ZooKeeper's SessionTracker runs there): while it is
  // down no session expires, and its restart restarts every unheard session's timer. A
  // follower's outage stops no timer: its clients' sessions expire on the leader's clock unless
  // they reconnect in time (measured on a real 3-server ensemble by the differential tester,
  // fidelity/). Not modelled: quorum loss (the leader keeps leading with both followers down).
  bool sessions_frozen() const;
  std::vector<uint32_t> eligible_servers(zk::Zxid last_seen, uint32_t only) const;
  void update_heard(zk::SessionId id);
  // A client's reachability changed (pause, partition, crash): every session it holds on the
  // ensemble is re-judged, not only the one it knows the id of (a session the server created
  // while the client was paused is not known to the client yet).
  void update_heard_of_client(uint32_t client);
  // The session-table invariants (server.cc); aborts on a violation. Each call checks the
  // sessions after the last checked (in the order of session_index_'s slots, wrapping; an entry
  // the table moves back past the cursor waits one more sweep), one for every kEventsPerCheck
  // events run since the previous call, or all of them when that covers the table: every tick
  // and at every run_* return. So the checks cost a fixed share of the run at every scale: a
  // run of a hundred clients (about 1,000 events a tick) checks every session every tick, one
  // of 10,000 clients each session every 40 ticks. (A fixed 1,024 a tick made them a fifth of
  // the memory traffic of a 10,000-client run, and its cost per grant grow with the clients.)
  static constexpr uint64_t kEventsPerCheck = 4;
  void check_sessions();
  void check_session(uint64_t id, const SessionRec& rec);
  void expire(zk::SessionId id, std::string_view why);
  zk::Zxid commit(Txn txn);
  // A write that failed at the leader with an error other than connection loss is committed as
  // a kError transaction (ZooKeeper's ErrorTxn takes a zxid: measured, real/FINDINGS.md item 11):
  // its zxid.
  zk::Zxid commit_failed(const std::string& path);
  // commit(txn) when `err` is kOk, else commit_failed(path).
  zk::Zxid commit_outcome(zk::Error err, Txn txn, const std::string& path) {
    return err == zk::Error::kOk ? commit(std::move(txn)) : commit_failed(path);
  }
  void server_restart_begin(uint32_t server_id);
  void server_restart_end(uint32_t server_id);
  void foreign_create(const std::string& path);
  // An outside session's set_data of `path` (created, persistent, when missing).
  void foreign_set(const std::string& path, const std::string& data);
  // An outside session deletes `path` (kAnyVersion); the error it met (logged).
  zk::Error foreign_delete(const std::string& path);
  // delete-node: the oldest ephemeral (lowest czxid) at or under `path`, if any.
  void foreign_delete_oldest(const std::string& path);
  // delete-dir: `path` and everything below it, children first, one delete each.
  void foreign_delete_tree(const std::string& path);
  // The leader's ContainerManager: schedule its next check if a container or TTL node exists;
  // run one check (server.cc).
  void schedule_reap();
  void reap();

  // ---- faults.cc ----
  void inject(Fault f);

 private:
  // world.cc
  void dispatch(const Event& e);
  void bury();
  // network.cc
  void deliver_up(uint64_t conn_id, uint64_t seq);
  void deliver_down(uint64_t conn_id, uint64_t seq);
  void push_delivery(Connection& c, bool up, Time at, uint64_t seq);
  // server.cc
  void server_receive(Connection& c, UpMsg& m);
  void server_connect(Connection& c, UpMsg& m);
  void attach(SessionRec& s, Connection& c);
  void detach(Connection& c);
  void set_watches(Server& s, Connection& c, const UpMsg& m);
  void forward(Connection& c, ServerEntry& e);
  void forward_mutation(Connection& c, ServerEntry& e, Txn* txn);
  // Applies `txn` to the committed state (ensembles) and reports it to the observer as the
  // leader's (server 1's) creation or deletion.
  void apply_committed(const Txn& txn);
  // Tells the observer what applying `txn` on server `server_id` created and deleted (triggers_).
  void report_applied(uint32_t server_id, const Txn& txn);
  void apply_at(Server& s, const Txn& txn);
  // Server `server_id` applies the log up to `upto` (a kApply event; the leader's too).
  void apply_logged(uint32_t server_id, zk::Zxid upto);
  // The leader applies the commit it just made (the log's last) now, or later while it lags or
  // has earlier applies still scheduled; then every follower's apply is scheduled. `reapable`:
  // it created a container or TTL node (the leader's ContainerManager has work).
  void schedule_applies(zk::Zxid zxid, bool reapable);
  void trim_log();
  void fire(Server& s, const Trigger& t, zk::Zxid zxid);
  void notify(Server& s, uint64_t session, std::string_view path, zk::EventType type,
              zk::Zxid zxid);
  void drop_watches(Server& s, uint64_t session);
  void pump(Connection& c);
  // Serves read `r` into `m` (a fresh message): consumes r.path.
  void execute_read(Server& s, const Connection& c, Request& r, DownMsg* m);
  bool is_heard(const SessionRec& s);
  void arm_expiry(SessionRec& s, Time last_heard);
  void expire_event(const Event& e);
  zk::SessionId new_session_id(uint32_t server_id);
  // faults.cc
  void start_fault(size_t index);
  void end_fault(size_t index);

  WorldOptions opt_;
  std::unique_ptr<Strategy> strategy_;
  EventLog log_;
  Scheduler sched_;
  uint64_t salt_ = 0;
  zk::Prng ids_;
  std::vector<std::unique_ptr<Server>> servers_;
  std::map<uint64_t, SessionRec> sessions_;
  // The session of `id` in sessions_, or nullptr: through an index by id (every request,
  // notification and expiry check looks its session up, and a tree of thousands of sessions is
  // a chase of scattered nodes). Map nodes never move: an indexed pointer is good until
  // erase_session() erases both.
  SessionRec* find_session(uint64_t id) { return session_index_.find(id); }
  const SessionRec* find_session(uint64_t id) const { return session_index_.find(id); }
  SessionRec& add_session(uint64_t id, const SessionRec& rec) {
    SessionRec& added = sessions_.emplace(id, rec).first->second;
    session_index_.insert(id, &added);
    return added;
  }
  void erase_session(uint64_t id) {
    session_index_.erase(id);
    sessions_.erase(id);
  }
  IdIndex<SessionRec> session_index_;  // every session of sessions_
  zk::Zxid zxid_;
  std::deque<Txn> txlog_;  // committed, not yet applied by every server (ensembles only)
  std::unique_ptr<DataTree> committed_;             // ensembles only: see committed()
  std::vector<std::unique_ptr<Connection>> conns_;  // by id, in id order; closed ones null
  std::vector<uint64_t> graveyard_;
  std::vector<std::unique_ptr<ClientImpl>> clients_;
  std::vector<Fault> faults_;
  std::vector<size_t> started_faults_;  // see World::started_faults
  std::vector<HerdRecord> herd_;
  HerdRecord* herd_record(zk::Zxid zxid);  // by binary search: herd_ is in zxid order
  std::vector<Trigger> triggers_;          // scratch
  std::vector<uint64_t> fired_;            // scratch for fire(): notify() never fires
  uint64_t requests_total_ = 0;
  Time armed_fault_fired_at_{};  // see World::armed_fault_fired_at
  Observer* observer_ = nullptr;
  uint64_t events_executed_ = 0;
  bool reap_scheduled_ = false;  // a kReap event is queued
  // Has any client ever been crashed, paused or partitioned (impaired_), or given an extra delay
  // (delayed_)? Until then classify() and latency() need not read the client: a server's event
  // would otherwise touch a cold client object at 10,000 clients for flags that are all off.
  // Set for good once true; what they skip reads the same values either way.
  bool impaired_ = false;
  bool delayed_ = false;
  Time next_check_{};  // when step() next runs check_sessions() (every tick of virtual time)
  std::vector<uint32_t> changed_;  // owners changed since the scheduler last asked
  uint64_t check_cursor_ = 0;      // the slot of session_index_ check_sessions() looks at next
  uint64_t checked_at_events_ = 0;  // events_executed_ when check_sessions() last ran
};

}  // namespace lockstep::sim
