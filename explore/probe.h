// lockstep explore: a window into one simulated run from outside the simulator — the recipes'
// own counters and an abstract state hash — without changing recipes/ or sim/.
//
// RunProbe wraps a recipe's LockFactory: every Lock the workload builds is handed out inside a
// forwarding ProbedLock that registers the client's Lock and session with the probe and, when
// the workload destroys it (after the world has stopped), adds the recipe's RecipeStats to the
// client's totals. state_hash() hashes what the probe can see at the current instant: the
// virtual time, and per client (in index order) its session's id and state, its lock's state,
// held node and RecipeStats. It does not see messages in flight or the server's tree, so two
// prefixes with the same hash may still differ: pruning by it is a heuristic reduction (see
// explore/search.h), named as such in every report.
//
// Ownership: the probe must outlive the run (run_in_sim destroys the Locks before it returns).
// Single-threaded; the hash uses only ordered data, never pointer values.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "recipes/lock_base.h"
#include "recipes/registry.h"
#include "zk/session.h"

namespace lockstep::explore {

class RunProbe {
 public:
  RunProbe() = default;
  RunProbe(const RunProbe&) = delete;
  RunProbe& operator=(const RunProbe&) = delete;

  // A factory that builds `inner`'s Locks wrapped so that this probe sees them.
  recipes::LockFactory wrap(recipes::LockFactory inner);

  uint64_t state_hash() const;
  // RecipeStats per client (1-based index), summed over every Lock the client had, for the
  // Locks destroyed so far (all of them once run_in_sim has returned).
  const std::map<uint32_t, recipes::RecipeStats>& stats() const { return totals_; }

  // For ProbedLock.
  struct Live {
    const recipes::LockBase* lock = nullptr;  // nullptr for a recipe not derived from LockBase
    const recipes::Lock* any = nullptr;
    zk::Session* session = nullptr;  // for its id, state and clock (read only)
  };
  void attach(uint32_t client, Live live);
  void detach(uint32_t client, const recipes::Lock* lock);

 private:
  std::map<uint32_t, Live> live_;
  std::map<uint32_t, recipes::RecipeStats> totals_;
};

// Adds every counter of `b` to `a`.
void add_stats(recipes::RecipeStats* a, const recipes::RecipeStats& b);

}  // namespace lockstep::explore
