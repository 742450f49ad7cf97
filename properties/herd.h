// lockstep properties: the herd report's engine. One recipe, N waiters queued behind one holder
// in the simulator with no faults, then the holder releases and each next holder releases in
// turn; for each release it measures what the release cost: the watch notifications its delete
// delivered (sim::HerdRecord) and the requests every client sent until all of them waited again,
// by operation. DESIGN §6: a herd-free recipe costs one notification per release whatever N is;
// the naive lock costs N, so a whole run of N releases costs ~N^2/2 notifications.
//
// Measuring every release of a large N is what the naive lock makes expensive (each release
// sends every waiter a child list of N names), so `releases` bounds the releases measured: the
// first K, each with the longest queues of the run. The whole run's total is then a projection,
// marked as such (HerdResult::total_measured).
//
// Deterministic: the same recipe, options and seed give the same result (one seeded world, no
// clocks). Single-threaded. The engine returns values; `lockstep herd` (cli/cmd_herd.cc) prints
// them and traces/herd_page.h plots them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "recipes/registry.h"

namespace lockstep::properties {

struct HerdOptions {
  uint32_t waiters = 10;  // queued behind the first holder
  uint32_t releases = 0;  // releases measured, the first ones; 0 = every release with a waiter
  uint64_t seed = 1;      // the world's seed (latencies, child order, session ids)
};

// What one release cost.
struct ReleaseCost {
  uint32_t index = 0;            // 1-based, in release order
  uint32_t waiting = 0;          // clients queued behind the holder when it released
  uint32_t notifications = 0;    // watch notifications its delete delivered (distinct sessions)
  uint32_t requests_caused = 0;  // requests the notified clients sent before they waited again
  // Requests every client sent from the release until all of them waited again (the release's
  // own delete included), total and by operation ("create", "get_children", ...).
  uint32_t requests = 0;
  std::map<std::string, uint32_t> requests_by_op;
};

struct HerdResult {
  std::string recipe;
  uint32_t waiters = 0;
  uint32_t releases_in_run = 0;       // releases with a waiter queued: one per waiter
  std::vector<ReleaseCost> measured;  // the first ones, in order
  // Over the measured releases.
  uint64_t notifications = 0;
  uint64_t requests = 0;
  double notifications_per_release = 0;
  double requests_per_release = 0;
  // The whole run (every release): measured when every release was, otherwise projected: a
  // release's cost fitted as a + b x waiting (least squares over the measured releases) and
  // summed over the queue lengths N, N-1, ..., 1 of the run's releases.
  bool total_measured = false;
  uint64_t total_notifications = 0;
  uint64_t total_requests = 0;
  // Queueing the waiters before the first release (not part of any release).
  uint64_t setup_notifications = 0;
  uint64_t setup_requests = 0;
  // "" when every waiter was granted in queue order and each measured release handed the lock
  // on; otherwise what went wrong (a recipe that does not hand over, a deadlock).
  std::string error;
};

HerdResult measure_herd(const recipes::RecipeInfo& recipe, const HerdOptions& options);

}  // namespace lockstep::properties
