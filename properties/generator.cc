// The one scenario generator (properties/generator.h).
#include "properties/generator.h"

#include <algorithm>
#include <vector>

namespace lockstep::properties {
namespace {

using sim::Fault;
using sim::FaultKind;
using zk::Duration;
using zk::milliseconds;

// The workload's timings on the simulator: short holds and thinks in virtual time.
void simulator_timings(Draws& d, const GenerateOptions& o, Scenario* s) {
  WorkloadOptions& w = s->workload;
  w.think_max = d.between(Duration{}, milliseconds(5));
  w.hold_min = d.between(Duration{}, milliseconds(2));
  w.hold_max = d.between(w.hold_min, milliseconds(15));
  w.timed_percent =
      d.chance(1, 2) && !o.force_timeouts ? 0 : static_cast<uint32_t>(d.between(10, 50));
  w.acquire_timeout = d.between(milliseconds(2), milliseconds(60));
}

// On a real server: holds of at least a millisecond and acquire timeouts long enough for a
// loaded machine; a variant whose bug shows when an acquire times out gets waits longer than
// the timeout often (holds of up to 30 ms against timeouts of 3 to 15 ms).
void real_timings(Draws& d, const GenerateOptions& o, Scenario* s) {
  WorkloadOptions& w = s->workload;
  w.think_max = d.between(Duration{}, milliseconds(5));
  w.hold_min = d.between(milliseconds(1), milliseconds(3));
  w.hold_max = d.between(w.hold_min, milliseconds(15));
  w.timed_percent = o.force_timeouts ? static_cast<uint32_t>(d.between(30, 60))
                    : d.chance(1, 2) ? 0
                                     : static_cast<uint32_t>(d.between(10, 40));
  w.acquire_timeout = d.between(milliseconds(20), milliseconds(150));
  if (o.force_timeouts) {
    w.hold_min = d.between(milliseconds(5), milliseconds(10));
    w.hold_max = d.between(w.hold_min, milliseconds(30));
    w.acquire_timeout = d.between(milliseconds(3), milliseconds(15));
  }
}

// The time per operation a client spends, for the fault phase and the bounds.
Duration per_op(const GenerateOptions& o, const WorkloadOptions& w) {
  return w.hold_max + w.think_max + milliseconds(o.backend == Backend::kRealServer ? 10 : 3);
}

// heal_at, liveness_bound and run_limit on a real server: the simulator's bounds plus the wall
// clock's noise on a loaded machine, and seconds per server restart.
void finish_real_scenario(const GenerateOptions& o, Scenario* s) {
  const WorkloadOptions& w = s->workload;
  zk::Time heal{};
  Duration restart_slack{};
  for (const Fault& f : s->faults) {
    heal = std::max(heal, f.at + f.duration);
    if (f.kind == FaultKind::kServerRestart) restart_slack = restart_slack + kRealRestartSlack;
  }
  s->heal_at = heal + milliseconds(1);
  Duration per_client = per_op(o, w) + milliseconds(30);
  if (w.long_hold_percent > 0) per_client = per_client + w.long_hold;
  s->liveness_bound = s->session_timeout * 3 + per_client * w.clients + zk::seconds(3);
  s->run_limit = (s->heal_at - zk::Time{}) + s->liveness_bound +
                 per_client * (w.clients * w.rounds) + restart_slack;
}

// An operator's deletes behind the clients: the holder's node, or the whole lock directory
// (each on with probability 1/4, always when a variant's focus; once, or up to three times for
// a focus). The sweep draws them in era 2, a real server's scenario after every other draw.
void draw_operator_deletes(Draws& d, const GenerateOptions& o, Duration phase, uint32_t* serial,
                           Scenario* s) {
  for (FaultKind k : {FaultKind::kDeleteNode, FaultKind::kDeleteDir}) {
    if (o.faults.count(k) == 0) continue;
    const bool focus = o.focus.count(k) != 0;
    if (!focus && !d.chance(1, 4)) continue;
    const uint64_t count = focus ? 1 + d.below(3) : 1;
    for (uint64_t i = 0; i < count; ++i) {
      Fault f;
      f.kind = k;
      f.at = zk::Time{} + d.between(milliseconds(1), phase);
      fault_parameters(&d, o.backend, *s, (*serial)++, o.focus, &f);
      s->faults.push_back(f);
    }
  }
}

}  // namespace

bool drawn_in_era_2(FaultKind k) {
  return k == FaultKind::kDeleteNode || k == FaultKind::kDeleteDir || k == FaultKind::kStall ||
         k == FaultKind::kSetCapacity;
}

void fault_parameters(Draws* d, Backend backend, const Scenario& s, uint32_t serial,
                      const std::set<FaultKind>& focus, Fault* f) {
  const Duration timeout = s.session_timeout;
  const bool real = backend == Backend::kRealServer;
  switch (f->kind) {
    case FaultKind::kPause:
      // Half short (the holder survives), half beyond the session timeout (it expires).
      if (d == nullptr) {
        f->duration = timeout * 2;
      } else {
        f->duration = d->chance(1, 2) ? d->between(milliseconds(1), timeout / 2)
                                      : d->between(timeout + milliseconds(50), timeout * 2);
      }
      break;
    case FaultKind::kPartition:
      if (d == nullptr) {
        f->duration = timeout * 2;
      } else if (real) {
        // At least 50 ms, so the C client notices; a long one outlasts the session by 200 ms.
        f->duration = d->chance(1, 2)
                          ? d->between(milliseconds(50), timeout / 2)
                          : d->between(timeout + milliseconds(200), timeout + timeout / 2);
      } else {
        f->duration = d->chance(1, 2) ? d->between(milliseconds(1), timeout / 2)
                                      : d->between(timeout, timeout * 2);
      }
      break;
    case FaultKind::kDelay:
      f->duration = d == nullptr ? milliseconds(50) : d->between(milliseconds(5), milliseconds(200));
      f->extra = d == nullptr ? milliseconds(5) : d->between(milliseconds(1), milliseconds(20));
      break;
    case FaultKind::kLaggingFollower:
      if (d == nullptr) {
        f->server = 2;
        f->duration = milliseconds(100);
        f->extra = milliseconds(10);
      } else {
        f->server = static_cast<uint32_t>(1 + d->below(s.servers));
        f->duration = d->between(milliseconds(10), milliseconds(300));
        f->extra = d->between(milliseconds(1), milliseconds(50));
      }
      break;
    case FaultKind::kServerRestart:
      if (d == nullptr) {
        f->server = 1;
        f->duration = milliseconds(50);
      } else if (real) {
        f->server = static_cast<uint32_t>(1 + d->below(s.servers));
        if (s.servers > 1 && d->chance(1, 2)) f->target = zk::FaultTarget::kLeader;
        f->duration = d->between(milliseconds(50), milliseconds(400));
      } else {
        f->server = static_cast<uint32_t>(1 + d->below(s.servers));
        f->duration = d->between(milliseconds(5), timeout / 2);
      }
      break;
    case FaultKind::kExpireSession:
      // On a real server the forced expiry can aim at whoever holds the lock at that moment:
      // always when expiry is the focus, else half the time.
      if (real && d != nullptr &&
          (focus.count(FaultKind::kExpireSession) != 0 || d->chance(1, 2))) {
        f->target = zk::FaultTarget::kHolder;
      }
      break;
    case FaultKind::kConnectionLoss:
    case FaultKind::kLoseNextReply:
      // The real driver cuts the connection around a create or a delete (the two that matter).
      if (real && d != nullptr) {
        f->requests = d->chance(1, 2) ? zk::FaultRequests::kCreate : zk::FaultRequests::kDelete;
      }
      break;
    case FaultKind::kCancel: f->task = "client"; break;
    case FaultKind::kStall:
      // One of the workload's tasks of the client: the caller, its lost() listener and session
      // watcher, the recipe's grant monitor, the client's event thread (zk/dispatcher.h).
      if (d == nullptr) {
        f->task = "client";
        f->duration = milliseconds(50);
      } else {
        static constexpr const char* kTasks[] = {"client", "lost-watch", "session-watch",
                                                 "lock-monitor", "event-thread"};
        f->task = kTasks[d->below(std::size(kTasks))];
        f->duration = d->between(milliseconds(1), timeout + timeout / 2);
      }
      break;
    case FaultKind::kForeignChild:
      f->path = s.workload.lock_path + "/foreign-" + std::to_string(serial);
      break;
    case FaultKind::kSetCapacity: {
      f->path = s.workload.capacity_path.empty() ? s.workload.lock_path + "-capacity"
                                                 : s.workload.capacity_path;
      // Half of them lower the count to one, where a recipe that does not obey is seen; the
      // others anywhere from one to one above the starting count.
      const int64_t top = static_cast<int64_t>(s.workload.max_leases) + 1;
      f->count = d == nullptr || d->chance(1, 2) ? 1 : static_cast<uint32_t>(d->between(1, top));
      break;
    }
    case FaultKind::kDeleteNode:
    case FaultKind::kDeleteDir:
      // An operator's delete behind the clients: the holder's node (the oldest ephemeral under
      // the directory), or the whole lock directory.
      f->client = 0;
      f->path = s.workload.lock_path;
      break;
    default: break;
  }
}

Scenario generate(Draws& d, const GenerateOptions& o) {
  const bool real = o.backend == Backend::kRealServer;
  Scenario s;
  // A server restart does not expire sessions on a real server (it restores them with fresh
  // timers), so one timeout fits every plan; shorter would make the C client drop connections
  // on its own timer (2/3 of it) on a loaded machine.
  if (real) s.session_timeout = zk::seconds(2);
  WorkloadOptions& w = s.workload;
  w.kind = o.kind;
  const uint32_t min_clients = std::max<uint32_t>(2, o.min_clients);
  w.clients = static_cast<uint32_t>(d.between(min_clients, std::max(min_clients, o.max_clients)));
  const uint32_t min_rounds = std::max<uint32_t>(1, o.min_rounds);
  w.rounds = static_cast<uint32_t>(d.between(min_rounds, std::max(min_rounds, o.max_rounds)));
  if (real) {
    real_timings(d, o, &s);
  } else {
    simulator_timings(d, o, &s);
  }
  w.reentrant_percent = o.reentrant ? 30 : 0;
  w.stray_release_percent = 10;
  w.give_up_percent = d.chance(1, 3) ? 30 : 0;
  if (!real) {
    // A few holds outlast the session timeout: a holder that is not told it lost the lock
    // would still believe it holds when the next client is granted.
    w.long_hold_percent = d.chance(1, 3) ? 10 : 0;
    w.long_hold = d.between(s.session_timeout + milliseconds(100), s.session_timeout * 2);
  }
  if (o.kind == recipes::Kind::kSemaphore) w.max_leases = static_cast<uint32_t>(d.between(2, 3));
  if (o.kind == recipes::Kind::kReadWrite) {
    for (uint32_t c = 0; c < w.clients; ++c) {
      w.roles.push_back(d.chance(1, 2) ? recipes::Role::kRead : recipes::Role::kWrite);
    }
    // On a real server, where few seeds run, readers and writers both, so that what read/write
    // locks promise is exercised every time.
    if (real && std::all_of(w.roles.begin(), w.roles.end(),
                            [&](recipes::Role r) { return r == w.roles[0]; })) {
      w.roles.back() =
          w.roles[0] == recipes::Role::kRead ? recipes::Role::kWrite : recipes::Role::kRead;
    }
  }
  // Swarm: each allowed kind is on with probability 1/2 (focus kinds always), and an enabled
  // kind fires a skewed number of times.
  std::vector<FaultKind> enabled;
  for (FaultKind k : o.faults) {
    if (drawn_in_era_2(k)) continue;  // drawn below, after every earlier era's draws
    if (o.focus.count(k) != 0 || d.chance(1, 2)) enabled.push_back(k);
  }
  if (real) {
    s.servers = o.ensemble ? 3 : 1;
    // Holds that outlast a forced expiry (tens of milliseconds), so that a holder is told of
    // its expiry while it still holds; for a lost wake-up, holds well beyond the grace.
    w.long_hold_percent = o.focus.count(FaultKind::kExpireSession) != 0 ? 50
                          : o.hunt_lost_wakeup                          ? 30
                                                                        : 0;
    w.long_hold = o.hunt_lost_wakeup
                      ? d.between(kRealLivenessGrace * 2, kRealLivenessGrace * 4)
                      : d.between(milliseconds(300), milliseconds(700));
  } else {
    const bool lagging =
        std::find(enabled.begin(), enabled.end(), FaultKind::kLaggingFollower) != enabled.end();
    s.servers = o.ensemble && (lagging || d.chance(1, 4)) ? 3 : 1;
    s.local_session_expiry = d.chance(1, 4);
    if (d.below(100) < o.wrap_percent) {
      s.sequence_start = INT32_MAX - static_cast<int32_t>(d.below(2 * w.clients));
    }
  }
  const Duration work = per_op(o, w) * (w.clients * w.rounds);
  const Duration phase =
      std::clamp(work / 2, milliseconds(50), milliseconds(real ? 600 : 800));
  uint32_t serial = 0;
  bool crashed = false;
  for (FaultKind k : enabled) {
    const bool focus = o.focus.count(k) != 0;
    // Real: fewer faults per kind (each real one costs wall-clock time).
    const uint64_t max_count = real ? (focus ? 4 : 2) : (focus ? 6 : 3);
    const uint64_t count =
        real ? 1 + d.below(max_count) : 1 + (d.below(max_count) * d.below(max_count)) / max_count;
    for (uint64_t i = 0; i < count; ++i) {
      if (k == FaultKind::kCrash && crashed) break;
      Fault f;
      f.kind = k;
      f.at = zk::Time{} + d.between(milliseconds(1), phase);
      f.client = static_cast<uint32_t>(1 + d.below(w.clients));
      fault_parameters(&d, o.backend, s, serial++, o.focus, &f);
      s.faults.push_back(f);
      crashed = crashed || k == FaultKind::kCrash;
      if (real && k == FaultKind::kServerRestart) break;  // one restart per run: each costs seconds
    }
  }
  if (!real && o.draw_era >= 1) {
    // Drawn last, so that every earlier draw of a seed stays what it was. Some rounds try once
    // without waiting; and a long outage the session survives: the leader restarts for longer
    // than the session timeout (every client's connection drops and its reconnects fail until
    // it is back), and sessions get fresh timers when it is, as on a real server.
    w.try_percent = d.chance(1, 4) ? 20 : 0;
    if (o.faults.count(FaultKind::kServerRestart) != 0 && d.chance(1, 4)) {
      Fault f;
      f.kind = FaultKind::kServerRestart;
      f.at = zk::Time{} + d.between(milliseconds(1), phase);
      f.client = static_cast<uint32_t>(1 + d.below(w.clients));
      f.server = 1;
      f.duration = d.between(s.session_timeout, s.session_timeout * 2);
      s.faults.push_back(f);
    }
  }
  if (!real && o.draw_era >= 2) {
    // Era 2, drawn after every era-1 draw. Several caller tasks per client on one Lock.
    if (o.shared_callers && (o.force_shared_callers || d.chance(1, 3))) {
      w.callers = static_cast<uint32_t>(d.between(2, 3));
    }
    // A semaphore's capacity node, changed during the fault phase by an outside session.
    const bool capacity_focus = o.focus.count(FaultKind::kSetCapacity) != 0;
    if (o.capacity_node && o.kind == recipes::Kind::kSemaphore &&
        o.faults.count(FaultKind::kSetCapacity) != 0 && (capacity_focus || d.chance(1, 2))) {
      w.capacity_path = w.lock_path + "-capacity";
      const uint64_t changes = 1 + d.below(3);
      for (uint64_t i = 0; i < changes; ++i) {
        Fault f;
        f.kind = FaultKind::kSetCapacity;
        f.at = zk::Time{} + d.between(milliseconds(1), phase);
        f.client = 1;  // reads none; 1 keeps every fault's client in range
        fault_parameters(&d, o.backend, s, serial++, o.focus, &f);
        s.faults.push_back(f);
      }
    }
    // Stalls of a client's tasks (one; up to eight when they are the focus).
    const bool stall_focus = o.focus.count(FaultKind::kStall) != 0;
    if (o.faults.count(FaultKind::kStall) != 0 && (stall_focus || d.chance(1, 4))) {
      const uint64_t stalls = stall_focus ? 1 + d.below(8) : 1;
      for (uint64_t i = 0; i < stalls; ++i) {
        Fault f;
        f.kind = FaultKind::kStall;
        f.at = zk::Time{} + d.between(milliseconds(1), phase);
        f.client = static_cast<uint32_t>(1 + d.below(w.clients));
        fault_parameters(&d, o.backend, s, serial++, o.focus, &f);
        if (!o.stall_task.empty()) f.task = o.stall_task;
        s.faults.push_back(f);
      }
    }
    // Operator deletes, drawn last.
    draw_operator_deletes(d, o, phase, &serial, &s);
  }
  if (real) draw_operator_deletes(d, o, phase, &serial, &s);  // after every other real draw
  std::stable_sort(s.faults.begin(), s.faults.end(),
                   [](const Fault& a, const Fault& b) { return a.at < b.at; });
  if (real) {
    finish_real_scenario(o, &s);
  } else {
    finish_scenario(&s);
  }
  return s;
}

Scenario generate_scenario(uint64_t seed, const GenerateOptions& o) {
  PrngDraws draws(zk::Prng(seed).split("scenario"));
  Scenario s = generate(draws, o);
  s.seed = seed;
  return s;
}

}  // namespace lockstep::properties
