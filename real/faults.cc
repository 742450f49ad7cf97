#include "real/faults.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <utility>
#include <vector>

#include "real/c_client.h"
#include "real/inspect.h"

namespace lockstep::real {
namespace {

using zk::Fault;
using zk::FaultKind;

constexpr int kExpireTries = 4;  // forced expiry: each try may wait seconds

// connection-loss and lost-reply hit the client's next request of one type under the watched
// path: Fault::requests create or delete (a waiter's or holder's next one is its delete, so an
// untyped drop would almost never meet a create).
std::set<int32_t> request_types(const Fault& f) {
  switch (f.requests) {
    case zk::FaultRequests::kCreate: return {kOpCreate, kOpCreate2};
    case zk::FaultRequests::kDelete: return {kOpDelete};
    case zk::FaultRequests::kAny: break;
  }
  return {kOpCreate, kOpCreate2, kOpDelete};
}

std::string request_name(const Fault& f) {
  return f.requests == zk::FaultRequests::kAny ? "create or delete"
                                               : zk::fault_requests_name(f.requests);
}

std::string client_name(uint32_t c) { return "c" + std::to_string(c); }

}  // namespace

struct FaultDriver::Step final : zk::TimerCallback {
  Step(FaultDriver* d, Fault f, bool end) : driver(d), fault(std::move(f)), end(end) {}
  void on_timer() override {
    if (fired) return;
    fired = true;
    began = true;
    --driver->pending_;
    driver->apply(*this);
  }
  FaultDriver* driver;
  Fault fault;
  bool end;
  bool fired = false;
  bool began = false;  // a start step that took effect (not dropped by heal_all)
  zk::TimerId timer{};
  int server = 0;  // server-restart: the server that was killed
};

std::vector<FaultKind> FaultDriver::kinds() {
  std::vector<FaultKind> out;
  for (const zk::FaultDescriptor& d : zk::kFaultDescriptors) {
    if ((d.backends & zk::kRealServer) != 0) out.push_back(d.kind);
  }
  return out;
}

bool FaultDriver::injects(FaultKind kind) { return zk::injects(kind, zk::kRealServer); }

FaultDriver::FaultDriver(Cluster* cluster, FaultTargets* targets, EventLoop* loop,
                         std::string under)
    : cluster_(cluster), targets_(targets), loop_(loop), under_(std::move(under)) {}

FaultDriver::~FaultDriver() {
  for (auto& s : steps_) {
    if (!s->fired) loop_->cancel_timer(s->timer);
  }
}

void FaultDriver::schedule(const std::vector<Fault>& faults, zk::Time t0) {
  for (const Fault& f : faults) {
    add(std::make_unique<Step>(this, f, false), t0 + (f.at - zk::Time{}));
    if (f.kind == FaultKind::kPartition || f.kind == FaultKind::kServerRestart) {
      add(std::make_unique<Step>(this, f, true), t0 + (f.at - zk::Time{}) + f.duration);
    }
  }
}

zk::Time FaultDriver::armed_fired_at() const {
  zk::Time out{};
  const auto now = std::chrono::steady_clock::now();
  for (const Proxy* p : armed_) {
    const auto matched = p->last_drop_matched();
    if (!matched) continue;
    const auto ago = std::chrono::duration_cast<std::chrono::microseconds>(now - *matched);
    out = std::max(out, loop_->now() - zk::microseconds(ago.count()));
  }
  return out;
}

void FaultDriver::heal_all() {
  for (auto& t : steps_) {
    if (t->fired) continue;
    loop_->cancel_timer(t->timer);
    if (t->end) {
      t->on_timer();
    } else {
      t->fired = true;
      --pending_;
    }
  }
}

void FaultDriver::add(std::unique_ptr<Step> step, zk::Time at) {
  ++pending_;
  step->timer = loop_->start_timer(at, step.get());
  steps_.push_back(std::move(step));
}

FaultDriver::Step* FaultDriver::start_of(const Step& end) {
  for (auto& t : steps_) {
    if (!t->end && t->fault.kind == end.fault.kind && t->fault.at == end.fault.at &&
        t->fault.client == end.fault.client) {
      return t.get();
    }
  }
  return nullptr;
}

void FaultDriver::apply(Step& step) {
  if (step.end) {
    end(step);
    return;
  }
  const Fault& f = step.fault;
  uint32_t c = std::clamp<uint32_t>(f.client, 1, targets_->clients());
  const std::string name = client_name(c);
  switch (f.kind) {
    case FaultKind::kConnectionLoss:
      targets_->record(c, "connection-loss " + name + ": next " + request_name(f) +
                              " under the lock lost");
      for (Proxy* p : targets_->proxies(c, true)) {
        p->drop_request_to(request_types(f), under_);
        armed_.insert(p);
      }
      break;
    case FaultKind::kLoseNextReply:
      targets_->record(c, "lost-reply " + name + ": next " + request_name(f) +
                              " under the lock applied, its reply lost");
      for (Proxy* p : targets_->proxies(c, true)) {
        p->drop_reply_to(request_types(f), under_);
        armed_.insert(p);
      }
      break;
    case FaultKind::kExpireSession: {
      if (f.target == zk::FaultTarget::kHolder) {
        if (const uint32_t h = targets_->holder(); h != 0) c = h;
      }
      const std::string victim = client_name(c);
      if (!targets_->real_session(c).id().valid()) {
        targets_->record(c, "expire " + victim + ": skipped (no session yet)");
        break;
      }
      if (cluster_->leader() == 0) {
        // A second handle cannot reach a server that is down (a server-restart in progress).
        targets_->record(c, "expire " + victim + ": skipped (no server leads)");
        break;
      }
      targets_->record(
          c, "expire " + victim + (f.target == zk::FaultTarget::kHolder ? " (the holder)" : ""));
      const std::vector<Proxy*> all = targets_->proxies(c, false);
      for (Proxy* p : all) {
        p->set_blackhole(true);
        p->cut();
      }
      const int tries = expire_session(*cluster_, cluster_->connect_string(),
                                       targets_->real_session(c).credentials(), nullptr, kExpireTries);
      if (tries == 0) targets_->record(c, "expire " + victim + ": the session survived");
      if (partitioned_[c] == 0) {
        for (Proxy* p : all) p->set_blackhole(false);
      }
      break;
    }
    case FaultKind::kPartition:
      targets_->record(c, "partition " + name + " for " + zk::to_string(f.duration));
      ++partitioned_[c];
      for (Proxy* p : targets_->proxies(c, false)) p->set_blackhole(true);
      break;
    case FaultKind::kServerRestart: {
      step.server = f.target == zk::FaultTarget::kLeader
                        ? cluster_->leader()
                        : std::clamp<int>(static_cast<int>(f.server), 1, cluster_->size());
      if (step.server == 0 || !cluster_->running(step.server)) {
        targets_->record(0, "server-restart: skipped (no such server running)");
        step.server = 0;
        break;
      }
      targets_->record(0, "server-restart: kill -9 server " + std::to_string(step.server) +
                              (f.target == zk::FaultTarget::kLeader ? " (the leader)" : "") +
                              " for " + zk::to_string(f.duration));
      cluster_->kill(step.server);
      break;
    }
    case FaultKind::kCancel:
      targets_->record(c, "cancel " + name + " task " + f.task);
      targets_->cancel(c, f.task);
      break;
    case FaultKind::kDeleteNode:
    case FaultKind::kDeleteDir: targets_->record(0, operator_delete(f)); break;
    default:
      targets_->record(c, std::string("unsupported on real: ") + zk::fault_name(f.kind));
      break;
  }
}

// delete-node and delete-dir: an outside session (its own handle, synchronous calls) reads the
// tree under the path from the leader's present state (sync) and deletes, as an operator's
// zkCli would. Returns the line to record.
std::string FaultDriver::operator_delete(const Fault& f) {
  const std::string what = std::string(zk::fault_name(f.kind)) + " " + f.path;
  if (cluster_->leader() == 0) return what + ": skipped (no server leads)";
  TreeInspector admin(cluster_->connect_string(), 5000);
  if (!admin.connected()) return what + ": skipped (the outside session could not connect)";
  // A few rounds for delete-dir: a client may create a node between the walk and the deletes.
  constexpr int kRounds = 5;
  std::string done;
  for (int round = 0; round < kRounds; ++round) {
    (void)admin.sync_path(f.path);
    std::vector<std::pair<std::string, zk::Stat>> nodes;  // parents before children
    if (!admin.walk(f.path, [&](const std::string& p, const zk::Stat& st) {
          nodes.emplace_back(p, st);
        })) {
      return what + ": the tree could not be read";
    }
    if (f.kind == FaultKind::kDeleteNode) {
      const std::pair<std::string, zk::Stat>* oldest = nullptr;
      for (const auto& n : nodes) {
        if (!zk::is_session_owner(n.second.ephemeral_owner)) continue;
        if (oldest == nullptr || n.second.czxid < oldest->second.czxid) oldest = &n;
      }
      if (oldest == nullptr) return what + ": no ephemeral node";
      const int rc = admin.remove(oldest->first);
      return what + ": deleted " + oldest->first + (rc == ZOK ? "" : " (" + std::string(zerror(rc)) + ")");
    }
    if (nodes.empty()) return what + (done.empty() ? ": no such node" : ": deleted" + done);
    bool again = false;
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
      const int rc = admin.remove(it->first);
      if (rc == ZOK) done += " " + it->first;
      if (rc == ZNOTEMPTY) again = true;
    }
    if (!again) return what + ": deleted" + done;
  }
  return what + ": still not empty after " + std::to_string(kRounds) + " rounds";
}

void FaultDriver::end(const Step& step) {
  const Fault& f = step.fault;
  const uint32_t c = std::clamp<uint32_t>(f.client, 1, targets_->clients());
  if (f.kind == FaultKind::kPartition) {
    const Step* start = start_of(step);
    if (start == nullptr || !start->began) return;
    if (--partitioned_[c] == 0) {
      for (Proxy* p : targets_->proxies(c, false)) p->set_blackhole(false);
    }
    targets_->record(c, "partition " + client_name(c) + " healed");
  } else if (f.kind == FaultKind::kServerRestart) {
    const Step* start = start_of(step);
    const int server = start != nullptr ? start->server : 0;
    if (server != 0) {
      const std::string e = cluster_->restart(server);
      targets_->record(0, "server-restart: server " + std::to_string(server) +
                              (e.empty() ? " is back" : " did not come back: " + e));
    }
  }
  last_end_ = std::max(last_end_, loop_->now());
}

}  // namespace lockstep::real
