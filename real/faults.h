// lockstep real client: the real server's implementation of the fault vocabulary (zk/faults.h).
//
// FaultDriver injects a plan of zk::Fault values into a run against a real ZooKeeper server,
// on an EventLoop's timers: each fault takes effect at t0 + Fault::at, and a fault with a
// duration (partition, server-restart) ends duration later. The kinds it injects are those whose
// descriptor names zk::kRealServer (kinds(), injects()); how each one is made:
//   connection-loss  the client's next create/delete (Fault::requests) under the watched path is
//                    dropped by its proxy before the server, and the connection is cut: the
//                    not-applied side of an ambiguous request
//   lost-reply       the same request is applied and its reply dropped, and the connection cut
//   expire           forced expiry by a second handle while the client is cut off at its
//                    proxies (target holder: whoever the caller says holds the lock then)
//   partition        the client's proxies black-hole everything for the fault's duration
//                    (partitions of one client nest: it heals when the last one ends)
//   server-restart   kill -9 of a server (target leader: the ensemble's current leader) and a
//                    restart when the duration ends
//   cancel           the client's named task is cancelled at its await point
//   delete-node      an outside handle deletes the oldest ephemeral at or under Fault::path
//   delete-dir       an outside handle deletes Fault::path and everything below it, children
//                    first (again while a client's create makes a parent not empty)
// A fault of any other kind is recorded as unsupported and changes nothing.
//
// The driver knows nothing of workloads or histories: FaultTargets gives it the clients (their
// sessions and proxies), cancels tasks, names the current holder, and receives one line of text
// for every fault as it takes effect or ends. Runs on the EventLoop's thread; the wall clock and
// the waiting belong to the loop.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "real/event_loop.h"
#include "real/proxy.h"
#include "real/server.h"
#include "real/session.h"
#include "zk/faults.h"

namespace lockstep::real {

// What a FaultDriver acts on. Clients are numbered from 1.
class FaultTargets {
 public:
  virtual ~FaultTargets() = default;
  virtual uint32_t clients() const = 0;
  virtual RealSession& real_session(uint32_t client) = 0;
  // The proxies `client` reaches the servers through: only the one its connection goes through
  // when `connected_only` and it is connected, otherwise all of them.
  virtual std::vector<Proxy*> proxies(uint32_t client, bool connected_only) = 0;
  virtual void cancel(uint32_t client, const std::string& task) = 0;
  // The client that holds the lock now (for target holder), or 0 when none does.
  virtual uint32_t holder() = 0;
  // One line of what a fault did, as it happens (client 0: the servers).
  virtual void record(uint32_t client, const std::string& text) = 0;
};

class FaultDriver {
 public:
  // The fault kinds this backend injects, in FaultKind order.
  static std::vector<zk::FaultKind> kinds();
  static bool injects(zk::FaultKind kind);

  // `under`: the path prefix whose create/delete requests connection-loss and lost-reply hit.
  FaultDriver(Cluster* cluster, FaultTargets* targets, EventLoop* loop, std::string under);
  ~FaultDriver();
  FaultDriver(const FaultDriver&) = delete;
  FaultDriver& operator=(const FaultDriver&) = delete;

  // Arms every fault of `faults`, counting Fault::at from `t0`.
  void schedule(const std::vector<zk::Fault>& faults, zk::Time t0);
  // Every fault has taken effect and every fault with a duration has ended.
  bool healed() const { return pending_ == 0; }
  // When the last fault with a duration ended (the loop's time).
  zk::Time last_end() const { return last_end_; }
  // When a connection-loss or lost-reply fault last took effect (the loop's time; Time{} if
  // none has): each waits, armed in a proxy, for its client's next create or delete under the
  // path, which may come after every other fault ended. REQUIRES: the proxies are alive.
  zk::Time armed_fired_at() const;
  // The run stopped early: faults not yet begun never will, and what is still open is healed.
  void heal_all();

 private:
  struct Step;
  void add(std::unique_ptr<Step> step, zk::Time at);
  Step* start_of(const Step& end);
  std::string operator_delete(const zk::Fault& f);
  void apply(Step& step);
  void end(const Step& step);

  Cluster* cluster_;
  FaultTargets* targets_;
  EventLoop* loop_;
  std::string under_;
  std::vector<std::unique_ptr<Step>> steps_;
  int pending_ = 0;                      // steps not yet fired
  std::map<uint32_t, int> partitioned_;  // client -> partitions in progress
  std::set<Proxy*> armed_;               // proxies given a one-shot drop
  zk::Time last_end_{};
};

}  // namespace lockstep::real
