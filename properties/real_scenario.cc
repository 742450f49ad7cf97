// The scenarios of `lockstep check --real`: generate_real_scenario (properties/real_backend.h).
#include <algorithm>

#include "properties/real_backend.h"
#include "zk/random.h"

namespace lockstep::properties {
namespace {

using sim::Fault;
using sim::FaultKind;
using zk::Duration;
using zk::milliseconds;

Duration between(zk::Prng& rng, Duration lo, Duration hi) {
  return zk::microseconds(rng.between(lo.us, std::max(lo.us, hi.us)));
}

// The real stand-in for a simulator-only focus kind of a broken variant.
FaultKind real_focus(FaultKind k) {
  return k == FaultKind::kAbandonSession ? FaultKind::kExpireSession : k;
}

}  // namespace

Scenario generate_real_scenario(uint64_t seed, const recipes::RecipeInfo& recipe,
                                const Claims& claims, bool ensemble,
                                const std::set<FaultKind>& allowed) {
  zk::Prng rng = zk::Prng(seed).split("real-scenario");
  Scenario s;
  s.seed = seed;
  s.servers = ensemble ? 3 : 1;
  WorkloadOptions& w = s.workload;
  w.kind = recipe.kind;
  const uint32_t min_clients = std::max<uint32_t>(2, claims.min_clients);
  w.clients = static_cast<uint32_t>(rng.between(min_clients, std::max<uint32_t>(min_clients, 4)));
  w.rounds = static_cast<uint32_t>(rng.between(3, 6));
  w.think_max = between(rng, Duration{}, milliseconds(5));
  w.hold_min = between(rng, milliseconds(1), milliseconds(3));
  w.hold_max = between(rng, w.hold_min, milliseconds(15));
  w.timed_percent = claims.needs_timeouts ? static_cast<uint32_t>(rng.between(30, 60))
                    : rng.chance(1, 2)    ? 0
                                          : static_cast<uint32_t>(rng.between(10, 40));
  w.acquire_timeout = between(rng, milliseconds(20), milliseconds(150));
  if (claims.needs_timeouts) {
    // A variant whose bug shows when an acquire times out: waits longer than the timeout are
    // made common (holds of up to 30 ms against timeouts of 3 to 15 ms).
    w.hold_min = between(rng, milliseconds(5), milliseconds(10));
    w.hold_max = between(rng, w.hold_min, milliseconds(30));
    w.acquire_timeout = between(rng, milliseconds(3), milliseconds(15));
  }
  w.reentrant_percent = claims.reentrant ? 30 : 0;
  w.stray_release_percent = 10;
  w.give_up_percent = rng.chance(1, 3) ? 30 : 0;
  if (recipe.kind == recipes::Kind::kSemaphore)
    w.max_leases = static_cast<uint32_t>(rng.between(2, 3));
  if (recipe.kind == recipes::Kind::kReadWrite) {
    for (uint32_t c = 0; c < w.clients; ++c) {
      w.roles.push_back(rng.chance(1, 2) ? recipes::Role::kRead : recipes::Role::kWrite);
    }
    // Readers and writers both, so that what read/write locks promise is exercised.
    if (std::all_of(w.roles.begin(), w.roles.end(),
                    [&](recipes::Role r) { return r == w.roles[0]; })) {
      w.roles.back() =
          w.roles[0] == recipes::Role::kRead ? recipes::Role::kWrite : recipes::Role::kRead;
    }
  }

  // Fault kinds: a broken variant's focus (as real kinds), a correct recipe's every real kind.
  std::set<FaultKind> kinds;
  std::set<FaultKind> focus;
  for (FaultKind k : claims.focus) focus.insert(real_focus(k));
  if (claims.must_violate) {
    kinds = focus;
  } else {
    for (FaultKind k : real_fault_kinds()) {
      if (claims.survives.count(k) != 0) kinds.insert(k);
    }
  }
  std::vector<FaultKind> enabled;
  for (FaultKind k : kinds) {
    if (!real_fault_supported(k) || (!allowed.empty() && allowed.count(k) == 0)) continue;
    if (focus.count(k) != 0 || rng.chance(1, 2)) enabled.push_back(k);
  }
  // A server restart does not expire sessions (the server restores them with fresh timers), so
  // one timeout fits every plan; shorter would make the C client drop connections on its own
  // timer (2/3 of it) on a loaded machine.
  s.session_timeout = zk::seconds(2);
  const bool expire_focus = focus.count(FaultKind::kExpireSession) != 0;
  // Holds that outlast a forced expiry (tens of milliseconds), so that a holder is told of its
  // expiry while it still holds; and, for a lost wake-up, holds well beyond the liveness grace,
  // so that a waiter that sleeps while the lock has room is seen sleeping.
  const bool lost_wakeup_hunt = claims.must_violate == Property::kLiveness && claims.focus.empty();
  w.long_hold_percent = expire_focus ? 50 : lost_wakeup_hunt ? 30 : 0;
  w.long_hold = lost_wakeup_hunt ? between(rng, kRealLivenessGrace * 2, kRealLivenessGrace * 4)
                                 : between(rng, milliseconds(300), milliseconds(700));

  const Duration per_op = w.hold_max + w.think_max + milliseconds(10);
  const Duration work = per_op * (w.clients * w.rounds);
  const Duration phase = std::clamp(work / 2, milliseconds(50), milliseconds(600));
  Duration restart_slack{};
  for (FaultKind k : enabled) {
    const uint64_t max_count = focus.count(k) != 0 ? 4 : 2;
    const uint64_t count = 1 + rng.below(max_count);
    for (uint64_t i = 0; i < count; ++i) {
      Fault f;
      f.kind = k;
      f.at = zk::Time{} + between(rng, milliseconds(1), phase);
      f.client = static_cast<uint32_t>(1 + rng.below(w.clients));
      if (k == FaultKind::kExpireSession && (expire_focus || rng.chance(1, 2))) {
        f.target = zk::FaultTarget::kHolder;
      }
      if (k == FaultKind::kPartition) {
        f.duration = rng.chance(1, 2) ? between(rng, milliseconds(50), s.session_timeout / 2)
                                      : between(rng, s.session_timeout + milliseconds(200),
                                                s.session_timeout + s.session_timeout / 2);
      }
      if (k == FaultKind::kServerRestart) {
        f.server = static_cast<uint32_t>(1 + rng.below(s.servers));
        if (ensemble && rng.chance(1, 2)) f.target = zk::FaultTarget::kLeader;
        f.duration = between(rng, milliseconds(50), milliseconds(400));
        restart_slack = restart_slack + zk::seconds(8);  // a JVM start on a loaded machine
      }
      if (k == FaultKind::kCancel) f.task = "client";
      if (k == FaultKind::kConnectionLoss || k == FaultKind::kLoseNextReply) {
        f.requests = rng.chance(1, 2) ? zk::FaultRequests::kCreate : zk::FaultRequests::kDelete;
      }
      s.faults.push_back(f);
      if (k == FaultKind::kServerRestart) break;  // one restart per run: each costs seconds
    }
  }
  std::stable_sort(s.faults.begin(), s.faults.end(),
                   [](const Fault& a, const Fault& b) { return a.at < b.at; });
  zk::Time heal{};
  for (const Fault& f : s.faults) heal = std::max(heal, f.at + f.duration);
  s.heal_at = heal + milliseconds(1);
  Duration per_client = per_op + milliseconds(30);
  if (w.long_hold_percent > 0) per_client = per_client + w.long_hold;
  // Wall-clock noise on a loaded machine: a few seconds beyond the simulator's bound.
  s.liveness_bound = s.session_timeout * 3 + per_client * w.clients + zk::seconds(3);
  s.run_limit = (s.heal_at - zk::Time{}) + s.liveness_bound + per_client * (w.clients * w.rounds) +
                restart_slack;
  return s;
}

}  // namespace lockstep::properties
