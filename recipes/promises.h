// lockstep recipes: the properties a recipe can promise, named once for the registry (which
// states each recipe's promises) and for properties/ (which judges them: properties/checkers.h).
#pragma once

#include <cstdint>
#include <string_view>

namespace lockstep::recipes {

enum class Property : uint8_t {
  kMutualExclusion,  // belief level: mutex/election one holder, rw: a writer overlaps nobody,
                     // semaphore: at most max_leases
  kFencedSafety,     // the resource never accepts a token lower than one it accepted, and a
                     // token names one holder
  kFifo,             // fresh grants follow queue (node creation) order among queued clients
  kLiveness,         // after the heal phase every waiter acquires (or finishes) within a bound
  kNoOrphans,        // at quiescence no lock node of a live session its owner does not know of
  kHerdFree,         // at most one watch notification per release
  kReentrancy,       // hold counts, owner-only release
  kTimeoutCleanup,   // a timed-out or cancelled acquire leaves no node and an idle lock
  kBoundedLoad,      // a waiter sends a bounded number of requests per thing that changed
                     // (a watch notification, a node created or deleted under the lock, a
                     // session event): it waits on watches, it does not poll
  kProgress,         // once faults stop, one acquire creates a bounded number of lock nodes
                     // (Promises::nodes_per_acquire): no delete-and-re-create livelock
  kServerExclusion,  // server level: a granted node that is still live is always among the
                     // granting positions of the live nodes (the lowest; the lowest N for a
                     // semaphore; no earlier writer for a reader), whatever the holders believe
  kErrorContract,    // every operation fails only with an error its contract (recipes/lock.h)
                     // lists, and no exception leaves the recipe
  kNoLeakedWatches,  // at quiescence no finished client has a watch left on the server that
                     // can never fire (a creation watch on a sequential name already used)
  kReportedState,    // a recipe that announces leadership (RecipeEvent) announces kLeader only
                     // while the server's queue has its live node at the head
};
constexpr int kPropertyCount = 14;
static_assert(static_cast<int>(Property::kReportedState) + 1 == kPropertyCount,
              "kPropertyCount counts every Property");

const char* to_string(Property p);    // "mutual-exclusion", "fenced-safety", "fifo", ...
const char* column_name(Property p);  // at most 6 letters, for tables: "mutex", "fenced", ...
// Parses a name printed by to_string. Returns false for an unknown name.
bool parse_property(std::string_view name, Property* out);

}  // namespace lockstep::recipes
