// lockstep properties: RapidCheck generators for scenarios (header-only; link `rapidcheck`).
//
// Contract of the generators:
//   1. Every value is a valid Scenario for run_in_sim(): clients in [min_clients, max_clients],
//      rounds >= 1, fault clients and servers in range, durations non-negative.
//   2. Swarm style: a scenario enables a random subset of the allowed fault kinds, each with
//      its own weight, so some scenarios hammer one kind and others mix several.
//   3. Faults take effect in the fault phase and end before heal_at (finish_scenario derives
//      heal_at, the liveness bound and the run limit from the faults and the workload); the
//      heal phase after it is fault-free.
//   4. Shrinking goes toward small scenarios: fewer clients, rounds and faults, shorter
//      timings, seed toward 1 — a failure shrinks to something one can read.
// Generation draws only from RapidCheck's own random source; the simulator run it feeds is
// deterministic, so RapidCheck's printed reproduction string (RC_PARAMS="reproduce=...")
// replays the same run.
#pragma once

#include <rapidcheck.h>

#include <cstdint>
#include <vector>

#include "properties/scenario.h"
#include "sim/world.h"

namespace lockstep::properties::rcgen {

// A time span in [lo_ms, hi_ms] milliseconds (shrinks toward lo_ms).
inline zk::Duration millis(int64_t lo_ms, int64_t hi_ms) {
  return zk::milliseconds(*rc::gen::inRange<int64_t>(lo_ms, hi_ms + 1));
}

// One fault of kind `k` for scenario `s`, taking effect within `phase`.
inline sim::Fault fault(sim::FaultKind k, const Scenario& s, zk::Duration phase, uint32_t serial) {
  using sim::FaultKind;
  sim::Fault f;
  f.kind = k;
  f.at = zk::Time{} + millis(1, std::max<int64_t>(1, phase.ms()));
  f.client = *rc::gen::inRange<uint32_t>(1, s.workload.clients + 1);
  const int64_t timeout_ms = s.session_timeout.ms();
  switch (k) {
    case FaultKind::kPause:
    case FaultKind::kPartition: f.duration = millis(1, 2 * timeout_ms); break;
    case FaultKind::kDelay:
      f.duration = millis(5, 200);
      f.extra = millis(1, 20);
      break;
    case FaultKind::kLaggingFollower:
      f.server = *rc::gen::inRange<uint32_t>(1, s.servers + 1);
      f.duration = millis(10, 300);
      f.extra = millis(1, 50);
      break;
    case FaultKind::kServerRestart:
      f.server = *rc::gen::inRange<uint32_t>(1, s.servers + 1);
      f.duration = millis(5, timeout_ms / 2);
      break;
    case FaultKind::kCancel: f.task = "client"; break;
    case FaultKind::kForeignChild:
      f.path = s.workload.lock_path + "/foreign-" + std::to_string(serial);
      break;
    default: break;
  }
  return f;
}

// The kind whose cumulative weight range holds `r` (r in [0, total weight)).
inline sim::FaultKind pick(const std::vector<std::pair<int, sim::FaultKind>>& weighted, int r) {
  for (const auto& [weight, kind] : weighted) {
    if (r < weight) return kind;
    r -= weight;
  }
  return weighted.back().second;
}

// A whole scenario for a recipe of kind o.kind drawing faults from o.faults.
inline rc::Gen<Scenario> scenario(GenerateOptions o) {
  return rc::gen::exec([o]() {
    Scenario s;
    s.seed = *rc::gen::inRange<uint64_t>(1, 1u << 30);
    WorkloadOptions& w = s.workload;
    w.kind = o.kind;
    const uint32_t lo = std::max<uint32_t>(2, o.min_clients);
    w.clients = *rc::gen::inRange<uint32_t>(lo, std::max(lo, o.max_clients) + 1);
    w.rounds = *rc::gen::inRange<uint32_t>(1, std::max<uint32_t>(1, o.max_rounds) + 1);
    w.think_max = millis(0, 5);
    w.hold_min = millis(0, 2);
    w.hold_max = w.hold_min + millis(0, 13);
    w.timed_percent = o.force_timeouts ? 30 : *rc::gen::element(0u, 0u, 20u, 50u);
    w.acquire_timeout = millis(2, 60);
    w.reentrant_percent = o.reentrant ? 30 : 0;
    w.stray_release_percent = 10;
    w.give_up_percent = *rc::gen::element(0u, 0u, 30u);
    w.long_hold_percent = *rc::gen::element(0u, 0u, 10u);
    w.long_hold = s.session_timeout + millis(100, s.session_timeout.ms());
    if (o.kind == recipes::Kind::kSemaphore) w.max_leases = *rc::gen::inRange<uint32_t>(2, 4);
    if (o.kind == recipes::Kind::kReadWrite) {
      for (uint32_t c = 0; c < w.clients; ++c) {
        w.roles.push_back(*rc::gen::arbitrary<bool>() ? recipes::Role::kWrite
                                                      : recipes::Role::kRead);
      }
    }
    const bool lagging = o.faults.count(sim::FaultKind::kLaggingFollower) != 0;
    s.servers = o.ensemble && (lagging || *rc::gen::inRange(0, 4) == 0) ? 3 : 1;
    s.local_session_expiry = *rc::gen::inRange(0, 4) == 0;
    if (*rc::gen::inRange<uint32_t>(0, 100) < o.wrap_percent) {
      s.sequence_start = INT32_MAX - *rc::gen::inRange<int32_t>(0, 2 * w.clients);
    }
    // Swarm: a subset of the allowed kinds, each with its own weight.
    std::vector<std::pair<int, sim::FaultKind>> weighted;
    for (sim::FaultKind k : o.faults) {
      if (o.focus.count(k) != 0 || *rc::gen::arbitrary<bool>()) {
        weighted.emplace_back(*rc::gen::inRange(1, 9), k);
      }
    }
    if (!weighted.empty()) {
      const zk::Duration work =
          (w.hold_max + w.think_max + zk::milliseconds(3)) * (w.clients * w.rounds);
      const zk::Duration phase = std::clamp(work / 2, zk::milliseconds(50), zk::milliseconds(800));
      int total = 0;
      for (const auto& [weight, kind] : weighted) total += weight;
      const size_t count = *rc::gen::inRange<size_t>(0, 9);
      bool crashed = false;
      for (size_t i = 0; i < count; ++i) {
        const sim::FaultKind k = pick(weighted, *rc::gen::inRange(0, total));
        if (k == sim::FaultKind::kCrash && crashed) continue;
        crashed = crashed || k == sim::FaultKind::kCrash;
        s.faults.push_back(fault(k, s, phase, static_cast<uint32_t>(i)));
      }
      std::stable_sort(s.faults.begin(), s.faults.end(),
                       [](const sim::Fault& a, const sim::Fault& b) { return a.at < b.at; });
    }
    finish_scenario(&s);
    return s;
  });
}

}  // namespace lockstep::properties::rcgen

namespace rc {

// So that RapidCheck prints a counterexample readably.
template <>
struct Arbitrary<lockstep::properties::Scenario> {
  static Gen<lockstep::properties::Scenario> arbitrary() {
    return lockstep::properties::rcgen::scenario({});
  }
};

}  // namespace rc

namespace lockstep::properties {
inline void showValue(const Scenario& s, std::ostream& os) { os << describe(s); }
}  // namespace lockstep::properties
