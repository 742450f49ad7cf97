// lockstep simulator: the public surface of the deterministic fake ZooKeeper.
//
// A World is one simulated run: an ensemble of 1 (standalone) or more servers, any number of
// clients (each a zk::Session with its own zk::Context), virtual time, one event queue ordered
// by (time, insertion number), and one scheduler whose choose() every nondeterministic decision
// goes through. Same WorldOptions, same clients, same faults, same coroutines => same event log,
// byte for byte (EventLog::hash()).
//
// Ownership and threads: the World owns its clients, servers and every coroutine frame spawned
// on a client's context. Single-threaded; nothing here uses a wall clock, a thread or an
// unseeded random source. There are no globals: two Worlds never share state.
//
// Faults are data (Fault): a test or a generated scenario schedules them with inject(). Every
// fault, choice and message is written to the event log.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/words.h"
#include "zk/faults.h"
#include "zk/invariant.h"
#include "zk/random.h"
#include "zk/session.h"
#include "zk/types.h"

namespace lockstep::sim {

using zk::Duration;
using zk::Time;

// ---------------------------------------------------------------------------------------------
// Choices. Every nondeterministic decision of a run is one call of Scheduler::choose(kind, n),
// answered by the Strategy. Decisions with n == 1 are not asked and not recorded.
enum class ChoiceKind : uint8_t {
  kNextEvent,         // which of the events due at the current instant runs first
  kLatency,           // a message's network latency, as a bucket in [0, latency_buckets)
  kAmbiguousOutcome,  // on a connection loss: 1 = an in-flight request reaches the server
  kPingPhase,         // how long before a heartbeat stopped its last ping went out
  kServer,            // which server a (re)connecting client picks
  kChildOrder,        // salt of a parent's hash-set child order (drawn once per world)
  kStall,             // a `stall` fault is armed and its task resumes: 1 = hold it here
  kCount,
};
const char* to_string(ChoiceKind k);

struct Decision {
  ChoiceKind kind;
  uint32_t n;       // number of options
  uint32_t chosen;  // in [0, n)
  bool operator==(const Decision&) const = default;
};

// What a strategy may know about one event the scheduler runs or may run next (the candidates
// of a kNextEvent choice, and every event once it ran). Identity and footprint are conservative
// and computed by the scheduler from the event and what it observed while events ran; the
// simulator's internals stay private.
enum Footprint : uint32_t {
  kTouchesClient = 1u << 0,  // the state of client process `client` (its library, its coroutines)
  kRunsUserCode = 1u << 1,   // resumes application / recipe code of `client`: it may touch state
                             // the clients share outside the simulator (a workload's history, a
                             // fenced resource), so two such events of different clients conflict
  kTouchesServer = 1u << 2,  // the ensemble's shared state: data trees, sessions, watches, zxids,
                             // connection and session ids (every server-side event; a client event
                             // that opened or closed a connection, or made a server-side choice)
  kTouchesWorld = 1u << 3,   // anything (a fault starting or ending): conflicts with every event
};

struct EventInfo {
  uint64_t seq = 0;        // insertion number: unique in a run, and the same in every run that
                           // shares the prefix up to the moment the event was queued
  uint32_t client = 0;     // the client process it belongs to (a request delivery: the client that
                           // sent it, when the scheduler has seen that connection used); 0 = none
  uint8_t tag = 0;         // sim::EventTag (sim/scheduler.h) as an integer
  uint64_t conn = 0;       // the connection of a message delivery, 0 for other events
  uint32_t task = 0;       // stable task identity: one per client process (2 * client), one per
                           // client's request stream into the ensemble (2 * client + 1), one per
                           // server's follower applies, one for expiries and one for faults
  uint32_t footprint = 0;  // Footprint bits: static for a candidate; for an event that ran, the
                           // static bits plus what the scheduler observed while it ran
  Time at{};               // the instant it runs (every candidate of a choice runs now)
};
const char* event_tag_name(uint8_t tag);

class World;

// Plug-in point for search strategies (seeded random, PCT, exhaustive, replay).
class Strategy {
 public:
  virtual ~Strategy() = default;
  // REQUIRES: n >= 2. Returns a value in [0, n).
  virtual uint32_t choose(ChoiceKind kind, uint32_t n) = 0;
  virtual std::string name() const = 0;
  // True once a replay strategy met a request that does not match its recording.
  virtual bool diverged() const { return false; }
  // Names the first divergent request ("" when none).
  virtual std::string divergence() const { return {}; }

  // Event-aware strategies (PCT over tasks, sleep sets) return true: the scheduler then answers
  // kNextEvent choices through choose_event() and reports every event that ran to executed().
  // The decision recorded and logged is the same as with choose(kNextEvent, n): the event log
  // does not depend on which of the two a strategy uses. Checked once, at World construction.
  virtual bool observes_events() const { return false; }
  // REQUIRES: candidates.size() >= 2, in the scheduler's insertion order. Returns an index.
  virtual uint32_t choose_event(const std::vector<EventInfo>& candidates) {
    return choose(ChoiceKind::kNextEvent, static_cast<uint32_t>(candidates.size()));
  }
  // An event finished running (reported when the scheduler picks the next one; the last event
  // of a run is never reported). `event.footprint` includes the observed bits.
  virtual void executed(const EventInfo& event) { (void)event; }
  // An event-aware strategy that has seen enough of this run (a search that knows the rest is
  // redundant) returns true: the scheduler then drops every pending event and runs nothing more,
  // so the World goes idle. What such a run produced is not a complete run.
  virtual bool stopped() const { return false; }
  // The World whose choices this strategy answers, for reading only (World::state_digest at a
  // choice point): given once the World is built (its first choice, the child-order salt, is
  // asked before) and taken back (nullptr) before it is destroyed. Reading it changes nothing.
  virtual void attach(const World* world) { (void)world; }
};

// Seeded random choices, one independent PRNG stream per ChoiceKind (STYLE rule 2).
std::unique_ptr<Strategy> make_random_strategy(uint64_t seed);
// Replays a recorded decision list. A request that does not match the next recorded decision
// (other kind or n) is a divergence: diverged() turns true and the strategy answers 0 from then.
std::unique_ptr<Strategy> make_replay_strategy(std::vector<Decision> decisions);

// ---------------------------------------------------------------------------------------------
// Event log: every message, reply, watch event, session event, fault and decision of a run.
// The hash covers every event whether or not text lines are kept.
struct LoggedEvent {
  uint64_t index;  // 0, 1, 2, ...
  Time at;
  uint32_t client;   // 0 for the servers / the world
  std::string kind;  // "send", "reply", "watch", "session", "fault", "apply", "expire", ...
  std::string text;  // one human-readable line of details
};

class EventLog {
 public:
  // REQUIRES: hashing() (a log that does not hash has no hash to give).
  uint64_t hash() const {
    LOCKSTEP_ASSERT_MSG(hashing_,
                        "the event log's hash was asked of a run that does not hash "
                        "(WorldOptions::audit is off)");
    return hash_;
  }
  bool hashing() const { return hashing_; }
  uint64_t size() const { return count_; }
  bool recording() const { return record_; }
  const std::vector<LoggedEvent>& events() const { return events_; }
  // "t=0.001200 c2 send create /lock/_c_..-lock- ephemeral-sequential", one per line.
  std::string to_text() const;

  // For the simulator (and workloads that add their own events, e.g. resource enter/leave).
  void add(Time at, uint32_t client, std::string_view kind, std::string_view text);
  void set_recording(bool on) { record_ = on; }
  // Off: the hash is not computed (text lines, when recording, are still kept). For a run whose
  // caller reads no hash (WorldOptions::audit); set before the first event.
  void set_hashing(bool on) { hashing_ = on; }

  // The simulator's hot path: hashes the compact fields (at, client, kind, a, b, s) and calls
  // text() for the line's details only when recording, so a run without text pays no
  // formatting. The hash does not depend on recording.
  // One step of the log's hash: the word v mixed into h.
  static uint64_t mix64(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 1099511628211ull;
  }
  // A scheduler decision: hashed as one packed word, text only when recording. Inline: a run
  // asks two or three per simulated request (every message's latency is one).
  void add_decision(Time at, uint64_t packed, ChoiceKind kind, uint32_t chosen, uint32_t n) {
    if (hashing_) hash_ = mix64(mix64(hash_, static_cast<uint64_t>(at.us)), packed);
    ++count_;
    if (record_) push_decision(at, kind, chosen, n);
  }

  template <class TextFn>
  void add_compact(Time at, uint32_t client, std::string_view kind, uint64_t a, uint64_t b,
                   std::string_view s, TextFn&& text) {
    if (hashing_) mix(at, client, kind, a, b, s);
    ++count_;
    if (record_) push(at, client, kind, text());
  }

  // Strict replay (traces/record.h): `expected` is the log a recording wrote. Every text line
  // appended from now on is compared with the expected event of the same index (at, client,
  // kind, text); at the first difference, or at an event past the expected end, the log keeps
  // that event as its last line, stops keeping lines and stopped() turns true, which makes the
  // World's run loop stop. Costs nothing when not set (the comparison runs only where a text
  // line is kept anyway). REQUIRES: recording(); `expected` outlives the run.
  void expect(const std::vector<LoggedEvent>* expected) { expected_ = expected; }
  bool stopped() const { return stopped_; }

 private:
  // Word at a time: the log hashes every event. Inline, so that a kind written as a literal
  // at the call is folded into a constant word.
  static uint64_t mix_bytes(uint64_t h, std::string_view s) {
    size_t i = 0;
    for (; i + 8 <= s.size(); i += 8) {
      uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      h = mix64(h, w);
    }
    return mix64(h, tail_word(s, i) ^ (static_cast<uint64_t>(s.size()) << 56));
  }
  void mix(Time at, uint32_t client, std::string_view kind, uint64_t a, uint64_t b,
           std::string_view s) {
    uint64_t h = mix64(hash_, static_cast<uint64_t>(at.us));
    h = mix64(h, client);
    h = mix_bytes(h, kind);
    h = mix64(h, a);
    h = mix64(h, b);
    hash_ = mix_bytes(h, s);
  }
  void push_decision(Time at, ChoiceKind kind, uint32_t chosen, uint32_t n);
  void push(Time at, uint32_t client, std::string_view kind, std::string text);

  uint64_t hash_ = 1469598103934665603ull;
  uint64_t count_ = 0;
  bool record_ = true;
  bool hashing_ = true;
  bool stopped_ = false;
  const std::vector<LoggedEvent>* expected_ = nullptr;
  std::vector<LoggedEvent> events_;
};

// ---------------------------------------------------------------------------------------------
// Faults, as data. `at` is virtual time; `client` / `server` are 1-based indexes.
// The kinds, their names and which parameters each reads are the vocabulary's (zk/faults.h);
// what each does in the simulator:
//   kConnectionLoss   cut the client's connection now: every pending request fails with
//                     kConnectionLoss on the client; each in-flight request independently may
//                     or may not reach the server (ChoiceKind::kAmbiguousOutcome); replies in
//                     flight are lost. The client reconnects (same session) after its back-off
//                     (WorldOptions::reconnect_delay).
//   kLoseNextReply    the client's next mutating request (create/delete/set) is applied on the
//                     server, then the connection drops before its reply arrives: the ambiguous
//                     create / the lost delete reply, made certain. `requests` create or delete:
//                     the next request of that kind (the generator leaves it `any`; the shrinker
//                     aims it, so that a smaller run still loses the reply it needs).
//   kExpireSession    the server expires the client's session now (ephemerals deleted, others'
//                     watches fire); the client learns when it next reaches a server.
//   kAbandonSession   the client library gives up the session on its own timer: the client sees
//                     kExpired now while the server keeps the old session until it times out.
//   kPause            the client process stops for `duration`: no code runs, no heartbeats
//                     (a GC pause). Events for it wait until it resumes.
//   kPartition        the client cannot reach any server for `duration`, then heals. The
//                     client notices after 2/3 of its session timeout without a reply (pending
//                     requests fail with kOperationTimeout) and its connect attempts into the
//                     dead network give up after 2/3 of the timeout each (kOperationTimeout).
//   kDelay            every message to or from the client takes `extra` longer, for `duration`.
//   kLaggingFollower  server `server` applies committed writes `extra` late, for `duration`.
//                     Server 1, the leader of an ensemble, too: it commits (validates writes,
//                     replicates, answers nothing sooner) as before, but applies to its own
//                     copy late, so its clients read older data while a follower's clients may
//                     already have been answered; a sync on the leader does not wait for that
//                     copy (ZooKeeper 3.8, real/FINDINGS.md item 11). A standalone server
//                     applies each write as it commits it: there the fault changes nothing.
//   kServerRestart    server `server` goes down for `duration`, then restarts; its clients are
//                     disconnected. While the leader (server 1) is down no session expires (the
//                     timers restart with it); a follower's outage stops no timer.
//   kCancel           cancel the client's root task named `task` at its current await point
//                     (only tasks started with Client::spawn are known by name).
//   kForeignChild     an outside session creates persistent node `path` (a full path).
//   kDeleteNode       an outside session deletes the oldest ephemeral node (lowest czxid) at or
//                     under `path`: given the lock directory, the holder's node (the lowest
//                     sequence), whoever holds it. Nothing when there is none. The owner is not
//                     told (ZooKeeper tells only watchers): a holder has lost its lock unawares.
//   kDeleteDir        an outside session deletes `path` and every node below it, children first,
//                     one delete (one zxid) each, as zkCli's deleteall does; ephemerals included.
//   Both commit through the leader like a client's delete (replicated, watches fired); while
//   the leader is down they do nothing (logged).
//   kCrash            the client process dies for good: no more code, heartbeats or requests;
//                     the server expires its session after the timeout (S9).
//   kCloseSession     the client closes its session cleanly now (ephemerals deleted at once).
//   kLoseNextRequest  the client's next mutating request (create/delete/set) is lost on the way
//                     and the connection drops: the server never sees it, the client sees
//                     kConnectionLoss (the other side of kLoseNextReply's ambiguity; the real
//                     harness's Proxy::drop_request_to). Used by the differential tester
//                     (fidelity/); not drawn by the property generator.
//   kSetCapacity      an outside session sets node `path` to the decimal `count` (creating it,
//                     persistent, when missing): a semaphore's capacity node changes.
using FaultKind = zk::FaultKind;
// The vocabulary's name (zk::fault_name): the event log writes it.
const char* to_string(FaultKind k);

using Fault = zk::Fault;
// "expire c2", "pause c1 for 40ms", "cancel c1 client": the event log's text of a fault.
std::string describe(const Fault& f);

// ---------------------------------------------------------------------------------------------
struct WorldOptions {
  uint64_t seed = 1;
  uint32_t servers = 1;                          // 1 = standalone, 3 = an ensemble (server 1 leads)
  Duration tick = zk::milliseconds(100);         // the server's tickTime
  Duration latency_min = zk::microseconds(100);  // one-way network latency range
  Duration latency_max = zk::microseconds(900);
  uint32_t latency_buckets = 4;  // latency is chosen among this many evenly spaced values
  // Client back-off before a reconnect try. Unset: the C client's (measured on Debian's 3.8.0
  // client, one server address per handle): the first connection failure of a handle
  // reconnects at once, every later one after session timeout / 60.
  std::optional<Duration> reconnect_delay;
  // jute.maxbuffer (0xfffff): a request frame larger than this drops the connection.
  size_t packet_limit_bytes = (1 << 20) - 1;
  bool java_reply_limit = false;  // model Java clients: a reply over the limit is lost
  bool record_log = true;         // keep text lines (the hash is computed either way)
  // Hash the event log and keep the scheduler's decision list: what replay, shrinking, explore
  // and the self-check read. Off, a run that reads neither (a `lockstep check` scenario that is
  // judged and dropped, the benchmarks that stand for it) pays for neither; the run itself is the
  // same (both are outputs; nothing in the run reads them), and asking World::log().hash() or
  // World::decisions() of it is a bug (an assertion says so).
  bool audit = true;
  // znode.container.checkIntervalMs: how often the leader looks for containers and TTL nodes
  // to delete (ZooKeeper's default is 60 s; the real harness's server runs with 100 ms, and so
  // does the simulator by default). Checks run only while such a node exists.
  Duration container_check_interval = zk::milliseconds(100);
};

struct ClientOptions {
  std::string name;                           // default "c<index>"
  Duration session_timeout = zk::seconds(1);  // negotiated within [2, 20] ticks
  // Model a client library (Curator-like) that declares the session expired on its own timer
  // after being disconnected for the session timeout, while the server may still hold it.
  bool local_session_expiry = false;
  uint32_t server = 0;  // 0 = let the scheduler pick
};

// Watch-notification accounting for the herd effect, per delete transaction (a release, or an
// expiry/close that deleted ephemerals; `path` is then the first of them). `notifications`
// counts notification messages delivered to clients (one per session and path, as the server
// sends them). `requests_caused` is approximated at client level: after a client receives a
// notification from this delete, every request it sends is charged to it until the client next
// has nothing to do (no request outstanding and no coroutine ready to run), i.e. until it
// parks on a watch, a sleep or a join.
struct HerdRecord {
  zk::Zxid zxid;
  std::string path;            // the deleted node
  uint32_t notifications = 0;  // client sessions this delete's watch events woke
  // Notifications of this delete to a session it had already notified. ZooKeeper 3.8 sends a
  // notification with no zxid in its header (-1; clients advance their last seen zxid only on
  // replies), so a client notified by one server may fail over to a follower that has not
  // applied the delete yet, re-register its watch there and be notified again when that
  // follower applies it. One waiter woken twice is not a herd; it is counted here instead.
  uint32_t redeliveries = 0;
  uint32_t requests_caused = 0;  // requests those clients sent before they waited again
};

struct NodeView {
  std::string path;
  std::string data;
  zk::Stat stat;
  std::vector<std::string> children;  // sorted by name (inspection only)
};

// A watch a server holds for a session (World::server_watches).
struct WatchView {
  uint32_t server = 1;    // the server holding it (the one the session is connected to)
  std::string path;
  bool children = false;  // a get_children watch; otherwise exists (either way) or get_data
};

// Instrumentation for checkers that judge what the server did rather than what clients
// believed (properties/sim_run.cc records it): each server's node creations and deletions, each
// request a client sends, each watch notification and session event its library delivers to it
// and each time the library fails its requests, at the moment they happen.
// Called synchronously from inside a step; an observer only records, it never calls into the
// World, so observing a run does not change it (same seed, same event log).
class Observer {
 public:
  virtual ~Observer() = default;
  // Server `server` (1-based; 1 is the leader) applied the creation of `path` (owner: its
  // ephemeral owner, or invalid). Every server reports its own applies: a follower's come later.
  // The leader's are reported as it commits them (its own copy may apply later: see
  // kLaggingFollower).
  virtual void node_created(uint32_t server, zk::Zxid zxid, std::string_view path,
                            zk::SessionId owner) = 0;
  // Server `server` applied the deletion of `path` (a delete, or a session's expiry or close).
  virtual void node_deleted(uint32_t server, zk::Zxid zxid, std::string_view path) = 0;
  // Client `client` (1-based) sent a request: its operation ("create", "get_children", ...)
  // and path.
  virtual void request_sent(uint32_t client, std::string_view op, std::string_view path) = 0;
  virtual void notified(uint32_t client) = 0;  // a watch notification reached the client
  // The client library failed the client's outstanding requests (the connection was lost, a
  // connect attempt timed out, the session ended).
  virtual void requests_failed(uint32_t client) = 0;
  // The client library delivered a session event (disconnected, connected, expired, closed) to
  // the client's watches and listeners: when it happened, whether or not the task that records
  // it in the history runs then.
  virtual void session_event(uint32_t client) = 0;
};

// A simulated client process: a zk::Session plus simulator-only introspection.
class Client : public zk::Session {
 public:
  virtual uint32_t index() const = 0;
  virtual const std::string& name() const = 0;
  virtual bool crashed() const = 0;
  virtual bool paused() const = 0;
  virtual uint64_t requests_sent() const = 0;
  // Replaces an expired or closed session with a new one on the same client process (the
  // application's "new handle"). Spawned tasks keep running on the same context.
  virtual void reopen() = 0;
  // Spawns a root task on this client's context and remembers it by name, so that a
  // FaultKind::kCancel fault can find it (the newest unfinished task of that name). Tasks
  // spawned directly on context() run the same but cannot be cancelled by a fault.
  virtual zk::TaskHandle spawn(zk::Task<void> task, std::string name) = 0;
  // The server (1-based) this client is connected to, 0 when not connected.
  virtual uint32_t server() const = 0;
};

class World {
 public:
  explicit World(WorldOptions options, std::unique_ptr<Strategy> strategy = nullptr);
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  const WorldOptions& options() const;

  // Adds a client process and starts connecting its session (connection completes in virtual
  // time; operations issued before that are queued, as in the C client).
  Client& add_client(ClientOptions options = {});
  Client& client(uint32_t index);  // 1-based
  uint32_t client_count() const;
  zk::SessionId client_id(uint32_t index) const;  // the client's current session (0: none yet)

  void inject(Fault fault);  // REQUIRES: fault.at >= now()
  // The faults started so far, as their indexes in inject() order (0 the first injected), in
  // the order they started: faults due at one instant start in the order the scheduler chose,
  // which need not be the order they were injected in.
  const std::vector<size_t>& started_faults() const;

  Time now() const;
  bool step();             // runs one event; false when the queue is empty
  void run_until(Time t);  // runs every event due at or before t; now() becomes t
  void run_for(Duration d);
  // Runs until nothing is queued or `limit`; true when it went idle first.
  bool run_until_idle(Time limit);
  uint64_t events_executed() const;

  // Inspection of the committed state, without the network: every write the leader has
  // committed (in an ensemble the leader's own copy, what its clients read, may lag behind it;
  // node_on(1, ...) shows that copy).
  std::optional<NodeView> node(std::string_view path) const;
  bool session_alive(zk::SessionId id) const;  // does the server still hold this session?
  // Sets the next sequence number a parent will hand out (to test the signed wrap).
  void set_sequence_counter(std::string_view parent, int32_t next);

  EventLog& log();
  const std::vector<Decision>& decisions() const;
  // True when a replay strategy diverged from its recording; divergence() names where.
  bool diverged() const;
  std::string divergence() const;
  // Inspection of server `server`'s (1-based) copy of the tree (a follower may lag).
  std::optional<NodeView> node_on(uint32_t server, std::string_view path) const;
  // The watches the servers hold for `session` now, by server then path (none while it is not
  // connected: a client library re-registers its watches when it reconnects).
  std::vector<WatchView> server_watches(zk::SessionId session) const;
  // The last zxid the leader committed.
  zk::Zxid last_zxid() const;
  const std::vector<HerdRecord>& herd() const;
  uint64_t requests_total() const;  // requests every client sent
  // When an armed one-shot fault (kLoseNextReply, kLoseNextRequest) last took effect, at its
  // client's next mutating request: that may come long after the fault was injected (a client
  // waiting in a queue sends none), even after a scenario's heal. Time{} while none has.
  Time armed_fault_fired_at() const;
  // A hash of the run's state now, for search strategies that count the distinct states they
  // visit (sim/digest.cc lists what it covers: trees, sessions, connections and messages in
  // flight, client libraries, the events still due by their time from now; not coroutine frames
  // or instrumentation). Equal states give equal digests in any run of any World; reading it
  // changes nothing (same event log).
  uint64_t state_digest() const;
  // Reports to `observer` from now on (nullptr: nobody). The observer must outlive the World
  // or be unset first.
  void set_observer(Observer* observer);

  // Opaque outside sim/*.cc (declared in sim/world_impl.h).
  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace lockstep::sim
