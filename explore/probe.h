// lockstep explore: a window into one simulated run from outside the simulator — the recipes'
// own counters and an abstract state hash — without changing recipes/ or sim/.
//
// RunProbe wraps a recipe's LockFactory: every Lock the workload builds is handed out inside a
// forwarding ProbedLock that registers the client's Lock and session with the probe and, when
// the workload destroys it (after the world has stopped), adds the recipe's RecipeStats to the
// client's totals. state_hash() hashes what the probe can see at the current instant: the
// virtual time, and per client (in index order) its session's id and state, its lock's state,
// held node and RecipeStats. It does not see messages in flight or the server's tree: the
// search mixes it with the world's own digest (sim::World::state_digest, which does) into the
// state of a choice point (explore/strategies.h ChoicePoint::state).
//
// Ownership: the probe must outlive the run (run_in_sim destroys the Locks before it returns).
// Single-threaded; the hash uses only ordered data, never pointer values.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "recipes/lock_base.h"
#include "recipes/registry.h"
#include "zk/session.h"

namespace lockstep::explore {

// FNV-1a-style hashing of 64-bit words and strings (state hashes; never over pointer values).
class Hasher {
 public:
  // A whole word at a time (this runs at every choice point of an exhaustive search).
  void word(uint64_t v) {
    h_ ^= v;
    h_ *= 1099511628211ull;
    h_ ^= h_ >> 32;
  }
  void text(std::string_view s) {
    word(s.size());
    for (char c : s) byte(static_cast<uint8_t>(c));
  }
  uint64_t value() const { return h_; }

 private:
  void byte(uint8_t b) {
    h_ ^= b;
    h_ *= 1099511628211ull;
  }
  uint64_t h_ = 1469598103934665603ull;
};

class RunProbe {
 public:
  RunProbe() = default;
  RunProbe(const RunProbe&) = delete;
  RunProbe& operator=(const RunProbe&) = delete;

  // A factory that builds `inner`'s Locks wrapped so that this probe sees them.
  recipes::LockFactory wrap(recipes::LockFactory inner);

  uint64_t state_hash() const;
  // After the run (every Lock destroyed): a hash of each client's last Lock as it was destroyed
  // (the node it held, "" when none) and of its RecipeStats totals, in client order.
  uint64_t final_hash() const;
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
  struct Final {
    std::string held;
  };
  std::map<uint32_t, Live> live_;
  std::map<uint32_t, Final> finals_;  // the client's last destroyed Lock
  std::map<uint32_t, recipes::RecipeStats> totals_;
};

// Adds every counter of `b` to `a`.
void add_stats(recipes::RecipeStats* a, const recipes::RecipeStats& b);

}  // namespace lockstep::explore
