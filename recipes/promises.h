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
};
constexpr int kPropertyCount = 8;
static_assert(static_cast<int>(Property::kTimeoutCleanup) + 1 == kPropertyCount,
              "kPropertyCount counts every Property");

const char* to_string(Property p);    // "mutual-exclusion", "fenced-safety", "fifo", ...
const char* column_name(Property p);  // at most 6 letters, for tables: "mutex", "fenced", ...
// Parses a name printed by to_string. Returns false for an unknown name.
bool parse_property(std::string_view name, Property* out);

}  // namespace lockstep::recipes
