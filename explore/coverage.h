// lockstep explore: lock-scenario coverage — named situations ("marks") a run went through,
// such as an ambiguous create the recipe recovered from or a holder whose session expired.
//
// Marks are derived after a run from three sources, none of which needs a hook in recipes/ or
// sim/: the recipes' own counters (recipes::RecipeStats, collected by explore/probe.h), the
// workload's History (faults, session events, lost-lock notifications, grants and their nodes),
// and the herd counters. mark_run() is a pure function of those. A Coverage counts, per mark,
// the runs that hit it; the summary lists every mark with its count.
//
// Some marks need a fault plan or workload feature a small budget rarely produces; they are
// declared rare (is_rare) and the coverage test does not insist on them.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "properties/checkers.h"
#include "properties/history.h"
#include "recipes/lock_base.h"

namespace lockstep::explore {

enum class Mark : uint8_t {
  kContendedAcquire,            // an acquire started while another client held
  kAmbiguousCreate,             // a contender create's outcome was unknown (loss, cancel)
  kAmbiguousCreateRecovered,    // ... and that client was granted afterwards
  kLostReplyCreateAdopted,      // the recipe found its own node again after an ambiguous create
  kPredecessorGoneBeforeWatch,  // the node to watch was gone before the watch was set
  kQueueRestart,                // a waiter's own node vanished while queued: started over
  kExpiryWhileHolding,          // a holder was told its lock was lost (session expired)
  kSuspendedWhileHolding,       // a holder was told its lock is suspended (connection lost)
  kReconnectWithPendingWatch,   // a session event woke a waiting acquire
  kReleaseUnderConnectionLoss,  // a release's delete was retried after an ambiguous outcome
  kTimeoutCleanup,              // a timed-out acquire removed its own node
  kCancellationCleanup,         // a cancelled acquire removed its own node
  kForeignChildIgnored,         // a grant happened after a foreign child joined the directory
  kWrapCrossed,                 // a grant's node had a sequence past the signed 32-bit wrap
  kSessionReopened,             // a client replaced its dead session
  kHolderCrashHandover,         // a holder crashed and another client was granted afterwards
  kReleaseWokeMany,             // one release delivered more than one watch notification
  kGaveUp,                      // a client stopped for good after losing its lock or session
  kStrayReleaseRefused,         // a release by a non-holder was refused
  kReentrantAcquire,            // a holder acquired again (hold count > 1)
  kCount,
};
constexpr int kMarkCount = static_cast<int>(Mark::kCount);

const char* to_string(Mark m);  // "ambiguous-create-recovered", ...
// Marks a small seed budget is not expected to hit (they need a rare fault timing).
bool is_rare(Mark m);

using MarkSet = std::array<bool, kMarkCount>;

// The marks one finished run hit.
MarkSet mark_run(const properties::History& history,
                 const std::map<uint32_t, recipes::RecipeStats>& stats,
                 const std::vector<properties::HerdSample>& herd);

class Coverage {
 public:
  void add(const MarkSet& marks);
  uint64_t runs() const { return runs_; }
  uint64_t count(Mark m) const { return counts_[static_cast<size_t>(m)]; }
  // Marks hit by no run, in enum order.
  std::vector<Mark> missing() const;
  // One line per mark: "  ambiguous-create-recovered      12 runs".
  std::string summary() const;

 private:
  uint64_t runs_ = 0;
  std::array<uint64_t, kMarkCount> counts_{};
};

}  // namespace lockstep::explore
