// lockstep properties: the workload — N clients taking a lock in rounds and using a protected
// resource — written once against zk::Session and recipes::Lock, so the same code runs in the
// simulator (properties/sim_run.h) and against a real ZooKeeper server.
//
// Each client runs one root task named "client" on its session's context. With shared callers
// (WorkloadOptions::callers > 1) a round runs 1..callers caller tasks on the client's one Lock:
// the "client" task is caller 1 and spawns callers 2.. ("caller"), each doing the steps below
// as its own holder (its events carry its caller number in Event::task), and joins them before
// the next round; thinking and reopening stay the client's, once per round. Per round it thinks,
// maybe makes a stray release (it holds nothing: the recipe must answer kNothing), acquires
// (with a deadline on some rounds), enters the ProtectedResource with its fencing token, maybe
// re-acquires and releases once (re-entrancy), holds, leaves and releases. While it holds, a
// second root task ("lost-watch") awaits Lock::lost(); when the lock reports kSuspended or
// kLost the client stops using the resource at once (its hold sleep is cancelled), records
// `info lost`, releases to clean up, and then either gives up or re-acquires in its next round.
// A client whose session died opens a new one through Environment::reopen() and builds a new
// Lock on it. A third root task per client ("session-watch") records every session state the
// client library reports (kSession events: the checkers use them to tell a holder that could
// not know its session had died from one that was told). Every step is recorded in the History
// (properties/history.h).
//
// Time and randomness come only from each client's zk::Context. Everything runs on the
// executor; nothing here is thread-safe. Ownership: the Workload owns the Locks and the
// resource; the caller owns the History and the Environment, which must outlive it. Locks are
// never destroyed while a task may still be suspended in them: they are kept until the
// Workload is destroyed, which must happen after the executor has stopped running its tasks.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "properties/history.h"
#include "recipes/lock.h"
#include "recipes/registry.h"
#include "zk/session.h"

namespace lockstep::properties {

// What the workload needs from the world it runs in (the simulator, or real sessions).
class Environment {
 public:
  virtual ~Environment() = default;
  // The current session of client `client` (1-based).
  virtual zk::Session& session(uint32_t client) = 0;
  // Replaces the client's expired or closed session by a new one; false when impossible.
  virtual bool reopen(uint32_t client) = 0;
  // Starts a root task on the client's context. The simulator's version also registers it by
  // name, so that a kCancel fault can find the task called "client".
  virtual zk::TaskHandle spawn(uint32_t client, zk::Task<void> task, std::string name) {
    return session(client).context().spawn(std::move(task), std::move(name));
  }
  // The nodes under `dir` (recursively) whose ephemeral owner is `owner`, sorted; used to prove
  // that a timed-out acquire cleaned up. An environment that cannot inspect returns false.
  virtual bool owned_nodes(zk::SessionId owner, const std::string& dir,
                           std::vector<std::string>* out) = 0;
};

struct WorkloadOptions {
  uint32_t clients = 3;
  uint32_t rounds = 5;
  std::string lock_path = "/lockstep/lock";
  recipes::Kind kind = recipes::Kind::kMutex;
  uint32_t max_leases = 1;           // semaphores
  std::vector<recipes::Role> roles;  // per client (read/write locks); empty = kind's default
  zk::Duration think_max = zk::milliseconds(5);
  zk::Duration hold_min = zk::milliseconds(1);
  zk::Duration hold_max = zk::milliseconds(10);
  uint32_t timed_percent = 0;  // rounds that acquire with a deadline
  // Rounds that try once without waiting for another holder (Lock::try_acquire): when the lock
  // is held elsewhere the recipe must fail with kOperationTimeout and leave no node;
  // timeout-cleanup judges it.
  uint32_t try_percent = 0;
  zk::Duration acquire_timeout = zk::milliseconds(30);
  uint32_t reentrant_percent = 0;      // holds that re-acquire once (re-entrant recipes only)
  uint32_t stray_release_percent = 0;  // rounds that start with a release of an unheld lock
  uint32_t long_hold_percent = 0;      // holds that last long_hold (past a session timeout)
  zk::Duration long_hold = zk::milliseconds(600);
  uint32_t give_up_percent = 0;  // after losing the lock or the session: stop for good
  uint32_t max_reopens = 8;      // bound on new sessions per client
  // Shared callers: each round a client runs 1..callers caller tasks at once on its one Lock
  // (made with LockOptions::shared_callers), each its own holder; 1 = one caller, as always.
  // Only for recipes whose promises say shared_callers.
  uint32_t callers = 1;
  // Per-client knobs for the shrinker (traces/shrink.cc); empty = every client as above, which
  // is how every generated scenario runs. With them a client can go, or do less, without
  // changing what the others draw from their random streams.
  // client_streams[i]: the identity of client i+1's random stream (the stream its zk::Context
  // draws think times, hold times and every optional behaviour's roll from, and the recipe its
  // node tags). The simulator derives client k's stream from the world's seed and k, so the
  // default is client_streams[i] == i+1; dropping client 2 of 3 keeps the third's draws with
  // {1, 3}. Only the simulator driver reads it (properties/sim_run.cc). REQUIRES: empty or
  // `clients` entries.
  std::vector<uint32_t> client_streams;
  // client_rounds[i]: the rounds client i+1 does (at most `rounds`, which bounds them all).
  // REQUIRES: empty or `clients` entries.
  std::vector<uint32_t> client_rounds;
  // client_holds[i]: when above 0, every hold of client i+1 lasts exactly this long (its hold
  // time and long-hold roll are still drawn, so its stream stays aligned); 0: drawn as above.
  // REQUIRES: empty or `clients` entries.
  std::vector<zk::Duration> client_holds;
  // Semaphores: the capacity node the recipe reads (LockOptions::capacity_path); the driver
  // creates it with max_leases before the run, and set-capacity faults change it. Empty: none.
  std::string capacity_path;
};

// The protected resource: it records every enter and leave with the caller's fencing token
// and, when fenced, rejects a token lower than the highest it has accepted (a paused holder's
// late write). Read/write locks and semaphores allow several holders, so their resource
// records without rejecting.
class ProtectedResource {
 public:
  ProtectedResource(History* history, bool fenced) : history_(history), fenced_(fenced) {}
  // Returns whether the token was accepted. `task`: the caller (Event::task; 0 for the only one).
  bool enter(zk::Time at, uint32_t client, uint32_t task, zk::SessionId session, int64_t token);
  bool leave(zk::Time at, uint32_t client, uint32_t task, zk::SessionId session, int64_t token);
  int64_t max_accepted() const { return max_accepted_; }

 private:
  bool use(Op op, zk::Time at, uint32_t client, uint32_t task, zk::SessionId session,
           int64_t token);
  History* history_;
  bool fenced_;
  int64_t max_accepted_ = INT64_MIN;
};

class Workload {
 public:
  Workload(WorkloadOptions options, recipes::LockFactory factory, Environment* env,
           History* history);
  ~Workload();
  Workload(const Workload&) = delete;
  Workload& operator=(const Workload&) = delete;

  // Spawns every client's task. Call once.
  void start();
  // True when every client has finished, given up, or been marked crashed.
  bool finished() const;
  // The client process died (a crash fault): record it; its tasks never run again.
  void mark_crashed(uint32_t client, zk::Time at);

  const WorkloadOptions& options() const { return options_; }
  ProtectedResource& resource() { return resource_; }

 private:
  struct ClientState;
  struct CallerState;
  static zk::Task<void> client_main(Workload* w, uint32_t client);
  // One caller's round on the client's Lock: stray release, acquire, hold, release. Sets
  // *gave_up when the caller stops the client (a lost lock or dead session it gives up after,
  // or an exception out of the recipe).
  static zk::Task<void> caller_round(Workload* w, uint32_t client, uint32_t caller,
                                     bool* gave_up);
  static zk::Task<void> spawned_round(Workload* w, uint32_t client, uint32_t caller,
                                      bool* gave_up);
  static zk::Task<void> hold(Workload* w, uint32_t client, uint32_t caller, recipes::Grant grant);
  static zk::Task<void> lost_watch(Workload* w, uint32_t client, uint32_t caller,
                                   recipes::Lock* lock, uint64_t generation);
  static zk::Task<void> session_watch(Workload* w, uint32_t client, zk::SessionEvents events);
  Event event(uint32_t client, Type type, Op op);
  // An operation's event of caller `caller` (its Event::task with shared callers).
  Event event(uint32_t client, uint32_t caller, Type type, Op op);
  // The lock's state for caller `caller` (state_of its task with shared callers).
  recipes::LockState state_for(uint32_t client, uint32_t caller, const recipes::Lock* lock) const;
  recipes::Role role_of(uint32_t client) const;
  uint32_t rounds_of(uint32_t client) const;
  bool renew_lock(uint32_t client);
  // The client is done for good (finished its rounds, gave up or crashed); once per client.
  void mark_finished(ClientState& cs);
  void watch_session(uint32_t client);
  bool roll(uint32_t client, uint32_t percent);

  WorkloadOptions options_;
  recipes::LockFactory factory_;
  Environment* env_;
  History* history_;
  ProtectedResource resource_;
  std::vector<std::unique_ptr<ClientState>> clients_;
  // Clients marked finished: the driver asks finished() after every simulator step.
  size_t finished_clients_ = 0;
};

}  // namespace lockstep::properties
