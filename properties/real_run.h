// lockstep properties: the real-server driver of the workload.
//
// run_on_real() runs the same Workload (properties/workload.h) as the simulator, unchanged,
// against a real ZooKeeper server: one real::RealSession per client, all on one real::EventLoop
// run on the calling thread, so every coroutine and every History write happens on that one
// thread (the History is not thread-safe and does not need to be). The final tree under the
// lock and the timed-out acquires' probes come from a real::TreeInspector (the C client's
// synchronous calls); on a real server an ephemeral node exists only while its session lives,
// so every ephemeral found counts as owned by a live session. There are no herd counters.
//
// The run is not deterministic (real time, real network); the checkers judge its history the
// same way. Faults are not injected here (the real/ harness offers expiry, proxies and server
// restarts to tests that drive them).
#pragma once

#include <cstdint>
#include <string>

#include "properties/scenario.h"
#include "properties/workload.h"
#include "recipes/registry.h"

namespace lockstep::properties {

struct RealRunOptions {
  std::string hosts;  // "127.0.0.1:port[,...]"
  zk::Duration session_timeout = zk::seconds(4);
  int64_t limit_ms = 60000;  // wall-clock hang guard for the whole run
};

// Runs `workload` with locks made by `factory`. RunResult::finished is false when the hang
// guard fired first. REQUIRES: a server answers at o.hosts.
RunResult run_on_real(const recipes::LockFactory& factory, const WorkloadOptions& workload,
                      const RealRunOptions& o);

}  // namespace lockstep::properties
