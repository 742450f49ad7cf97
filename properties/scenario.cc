#include "properties/scenario.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <utility>

namespace lockstep::properties {

using sim::Fault;
using sim::FaultKind;
using zk::Duration;
using zk::milliseconds;

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
  if (w.try_percent != 0) out += " try=" + std::to_string(w.try_percent) + "%";
  if (w.callers > 1) out += " callers=" + std::to_string(w.callers);
  if (!w.capacity_path.empty()) out += " capacity_path=" + w.capacity_path;
  // The per-client knobs, only when set (a generated scenario has none): one value per client.
  auto per_client = [&out](const char* name, const std::vector<uint32_t>& values) {
    if (values.empty()) return;
    out += std::string(" ") + name + "=";
    for (size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + std::to_string(values[i]);
  };
  per_client("client_streams", w.client_streams);
  per_client("client_rounds", w.client_rounds);
  if (!w.client_holds.empty()) {
    out += " client_holds=";
    for (size_t i = 0; i < w.client_holds.size(); ++i) {
      out +=
          (i ? "," : "") + (w.client_holds[i].us > 0 ? zk::to_string(w.client_holds[i]) : "drawn");
    }
  }
  if (s.sequence_start) out += " sequence_start=" + std::to_string(*s.sequence_start);
  for (const Fault& f : s.faults) {
    out += "\n  fault at " + format_time(f.at) + ": " + sim::describe(f);
  }
  return out;
}

// The longest one client can keep the lock and think before the next grant: the bounds are
// multiples of it.
static Duration per_grant(const WorkloadOptions& w) {
  Duration hold = w.hold_max;
  for (const Duration& fixed : w.client_holds) hold = std::max(hold, fixed);  // the shrinker's
  Duration d = hold + w.think_max + zk::milliseconds(30);
  if (w.long_hold_percent > 0) d = d + w.long_hold;
  return d;
}

void finish_scenario(Scenario* s) {
  const WorkloadOptions& w = s->workload;
  zk::Time heal{};
  for (const Fault& f : s->faults) {
    // A stall may take hold until `duration` after it is armed, and then holds for `duration`.
    const Duration lasts = f.kind == sim::FaultKind::kStall ? f.duration * 2 : f.duration;
    heal = std::max(heal, f.at + lasts);
  }
  s->heal_at = heal + zk::milliseconds(1);
  // A waiter may queue behind every other holder's hold, and behind a dead session's expiry.
  // With shared callers every caller task of every client is a holder of its own, each with a
  // node in the queue (fair-mutex 104241: six long holds of other callers ahead of one waiter).
  const Duration per_client = per_grant(w);
  s->liveness_bound =
      s->session_timeout * 3 + per_client * (w.clients * std::max<uint32_t>(1, w.callers));
  s->run_limit =
      (s->heal_at - zk::Time{}) + per_client * (w.clients * w.rounds) + s->session_timeout * 4;
}

zk::Duration liveness_bound_for(const Scenario& s, bool fifo) {
  if (fifo) return s.liveness_bound;
  const WorkloadOptions& w = s.workload;
  return s.session_timeout * 3 + per_grant(w) * (w.clients * w.rounds);
}

}  // namespace lockstep::properties
