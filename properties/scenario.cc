#include "properties/scenario.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <utility>

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

// One fault of kind `k`, taking effect in [0, phase).
Fault make_fault(zk::Prng& rng, FaultKind k, const Scenario& s, Duration phase, uint32_t serial) {
  Fault f;
  f.kind = k;
  f.at = zk::Time{} + between(rng, milliseconds(1), phase);
  f.client = static_cast<uint32_t>(1 + rng.below(s.workload.clients));
  const Duration timeout = s.session_timeout;
  switch (k) {
    case FaultKind::kPause:
      // Half short (the holder survives), half beyond the session timeout (it expires).
      f.duration = rng.chance(1, 2) ? between(rng, milliseconds(1), timeout / 2)
                                    : between(rng, timeout + milliseconds(50), timeout * 2);
      break;
    case FaultKind::kPartition:
      f.duration = rng.chance(1, 2) ? between(rng, milliseconds(1), timeout / 2)
                                    : between(rng, timeout, timeout * 2);
      break;
    case FaultKind::kDelay:
      f.duration = between(rng, milliseconds(5), milliseconds(200));
      f.extra = between(rng, milliseconds(1), milliseconds(20));
      break;
    case FaultKind::kLaggingFollower:
      f.server = static_cast<uint32_t>(1 + rng.below(s.servers));
      f.duration = between(rng, milliseconds(10), milliseconds(300));
      f.extra = between(rng, milliseconds(1), milliseconds(50));
      break;
    case FaultKind::kServerRestart:
      f.server = static_cast<uint32_t>(1 + rng.below(s.servers));
      f.duration = between(rng, milliseconds(5), timeout / 2);
      break;
    case FaultKind::kCancel: f.task = "client"; break;
    case FaultKind::kForeignChild:
      f.path = s.workload.lock_path + "/foreign-" + std::to_string(serial);
      break;
    default: break;
  }
  return f;
}

}  // namespace

bool parse_fault_name(std::string_view name, FaultKind* out) {
  FaultKind k{};
  if (!zk::parse_fault_kind(name, &k) || !zk::descriptor(k).generated) return false;
  *out = k;
  return true;
}

std::vector<FaultKind> all_fault_kinds() {
  std::vector<FaultKind> out;
  for (const zk::FaultDescriptor& d : zk::kFaultDescriptors) {
    if (d.generated) out.push_back(d.kind);
  }
  return out;
}

std::string describe(const Scenario& s) {
  const WorkloadOptions& w = s.workload;
  char buf[512];
  std::snprintf(
      buf, sizeof buf,
      "seed=%" PRIu64
      " clients=%u rounds=%u servers=%u session_timeout=%s "
      "local_expiry=%d think_max=%s hold=[%s,%s] timed=%u%% timeout=%s "
      "reentrant=%u%% stray=%u%% give_up=%u%% long_holds=%u%% leases=%u heal_at=%s bound=%s",
      s.seed, w.clients, w.rounds, s.servers, zk::to_string(s.session_timeout).c_str(),
      s.local_session_expiry ? 1 : 0, zk::to_string(w.think_max).c_str(),
      zk::to_string(w.hold_min).c_str(), zk::to_string(w.hold_max).c_str(), w.timed_percent,
      zk::to_string(w.acquire_timeout).c_str(), w.reentrant_percent, w.stray_release_percent,
      w.give_up_percent, w.long_hold_percent, w.max_leases, format_time(s.heal_at).c_str(),
      zk::to_string(s.liveness_bound).c_str());
  std::string out = buf;
  if (s.sequence_start) out += " sequence_start=" + std::to_string(*s.sequence_start);
  for (const Fault& f : s.faults) {
    out += "\n  fault at " + format_time(f.at) + ": " + sim::describe(f);
  }
  return out;
}

// The longest one client can keep the lock and think before the next grant: the bounds are
// multiples of it.
static Duration per_grant(const WorkloadOptions& w) {
  Duration d = w.hold_max + w.think_max + zk::milliseconds(30);
  if (w.long_hold_percent > 0) d = d + w.long_hold;
  return d;
}

void finish_scenario(Scenario* s) {
  const WorkloadOptions& w = s->workload;
  zk::Time heal{};
  for (const Fault& f : s->faults) heal = std::max(heal, f.at + f.duration);
  s->heal_at = heal + zk::milliseconds(1);
  // A waiter may queue behind every other client's hold, and behind a dead session's expiry.
  const Duration per_client = per_grant(w);
  s->liveness_bound = s->session_timeout * 3 + per_client * w.clients;
  s->run_limit =
      (s->heal_at - zk::Time{}) + per_client * (w.clients * w.rounds) + s->session_timeout * 4;
}

zk::Duration liveness_bound_for(const Scenario& s, bool fifo) {
  if (fifo) return s.liveness_bound;
  const WorkloadOptions& w = s.workload;
  return s.session_timeout * 3 + per_grant(w) * (w.clients * w.rounds);
}

Scenario generate_scenario(uint64_t seed, const GenerateOptions& o) {
  zk::Prng rng = zk::Prng(seed).split("scenario");
  Scenario s;
  s.seed = seed;
  WorkloadOptions& w = s.workload;
  w.kind = o.kind;
  const uint32_t min_clients = std::max<uint32_t>(2, o.min_clients);
  w.clients = static_cast<uint32_t>(rng.between(min_clients, std::max(min_clients, o.max_clients)));
  w.rounds = static_cast<uint32_t>(rng.between(1, std::max<uint32_t>(1, o.max_rounds)));
  w.think_max = between(rng, zk::Duration{}, milliseconds(5));
  w.hold_min = between(rng, zk::Duration{}, milliseconds(2));
  w.hold_max = between(rng, w.hold_min, milliseconds(15));
  w.timed_percent =
      rng.chance(1, 2) && !o.force_timeouts ? 0 : static_cast<uint32_t>(rng.between(10, 50));
  w.acquire_timeout = between(rng, milliseconds(2), milliseconds(60));
  w.reentrant_percent = o.reentrant ? 30 : 0;
  w.stray_release_percent = 10;
  w.give_up_percent = rng.chance(1, 3) ? 30 : 0;
  // A few holds outlast the session timeout: a holder that is not told it lost the lock
  // would still believe it holds when the next client is granted.
  w.long_hold_percent = rng.chance(1, 3) ? 10 : 0;
  w.long_hold = between(rng, s.session_timeout + milliseconds(100), s.session_timeout * 2);
  if (o.kind == recipes::Kind::kSemaphore) w.max_leases = static_cast<uint32_t>(rng.between(2, 3));
  if (o.kind == recipes::Kind::kReadWrite) {
    for (uint32_t c = 0; c < w.clients; ++c) {
      w.roles.push_back(rng.chance(1, 2) ? recipes::Role::kRead : recipes::Role::kWrite);
    }
  }
  // Swarm: each allowed kind is on with probability 1/2 (focus kinds always), and an enabled
  // kind fires a skewed number of times.
  std::vector<FaultKind> enabled;
  for (FaultKind k : o.faults) {
    if (o.focus.count(k) != 0 || rng.chance(1, 2)) enabled.push_back(k);
  }
  const bool lagging =
      std::find(enabled.begin(), enabled.end(), FaultKind::kLaggingFollower) != enabled.end();
  s.servers = o.ensemble && (lagging || rng.chance(1, 4)) ? 3 : 1;
  s.local_session_expiry = rng.chance(1, 4);
  if (rng.below(100) < o.wrap_percent) {
    s.sequence_start = INT32_MAX - static_cast<int32_t>(rng.below(2 * w.clients));
  }
  const Duration work = (w.hold_max + w.think_max + milliseconds(3)) * (w.clients * w.rounds);
  const Duration phase = std::clamp(work / 2, milliseconds(50), milliseconds(800));
  uint32_t serial = 0;
  bool crashed = false;
  for (FaultKind k : enabled) {
    const uint64_t max_count = o.focus.count(k) != 0 ? 6 : 3;
    const uint64_t count = 1 + (rng.below(max_count) * rng.below(max_count)) / max_count;
    for (uint64_t i = 0; i < count; ++i) {
      if (k == FaultKind::kCrash && crashed) break;
      s.faults.push_back(make_fault(rng, k, s, phase, serial++));
      crashed = crashed || k == FaultKind::kCrash;
    }
  }
  std::stable_sort(s.faults.begin(), s.faults.end(),
                   [](const Fault& a, const Fault& b) { return a.at < b.at; });
  finish_scenario(&s);
  return s;
}

}  // namespace lockstep::properties
