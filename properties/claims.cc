#include "properties/claims.h"

#include <string_view>

namespace lockstep::properties {
namespace {

using sim::FaultKind;
using P = Property;

std::set<FaultKind> every_fault() {
  std::vector<FaultKind> all = all_fault_kinds();
  return {all.begin(), all.end()};
}

// What every recipe of a kind promises; the table below adds to it.
std::set<Property> kind_defaults(recipes::Kind kind) {
  std::set<Property> p{P::kMutualExclusion, P::kLiveness, P::kNoOrphans, P::kReentrancy,
                       P::kTimeoutCleanup};
  if (kind == recipes::Kind::kMutex || kind == recipes::Kind::kElection) {
    p.insert(P::kFencedSafety);
  }
  return p;
}

struct CorrectRow {
  std::string_view name;
  std::set<Property> extra;  // beyond the kind's defaults
};

// Correct recipes: what they add to their kind's defaults. All claim every fault kind.
const CorrectRow kCorrect[] = {
    {"exclusive", {}},  // S1: unfair, and every loser watches the one node (herd)
    {"fair-mutex", {P::kFifo, P::kHerdFree}},
    {"naive-mutex", {P::kFifo}},  // S3: fair, but every waiter watches the child list
    {"read-write", {P::kFifo}},   // readers share a release's notification by design
    {"semaphore", {}},
    {"election", {P::kFifo, P::kHerdFree}},
};

struct BrokenRow {
  std::string_view name;
  Property must_violate;
  std::set<FaultKind> focus;
  bool needs_timeouts = false;
  bool needs_wrap = false;
  uint32_t min_clients = 2;
};

// Broken variants: the property that must catch each, and what exposes it.
const BrokenRow kBroken[] = {
    {"broken/no-id-in-name", P::kLiveness, {FaultKind::kLoseNextReply}},
    {"broken/timeout-leaves-node", P::kTimeoutCleanup, {}, true},
    {"broken/no-relist", P::kMutualExclusion, {FaultKind::kCancel}, true, false, 3},
    {"broken/ignores-expiry", P::kMutualExclusion, {FaultKind::kAbandonSession}},
    {"broken/watch-first", P::kHerdFree, {}, false, false, 3},
    {"broken/seed001-exclusive", P::kLiveness, {}},
    {"broken/sort-by-name", P::kMutualExclusion, {}},
    {"broken/rw-sort-by-name", P::kMutualExclusion, {}},
    {"broken/sort-signed", P::kMutualExclusion, {}, false, true},
    {"broken/reader-ignores-writers", P::kMutualExclusion, {}},
    {"broken/semaphore-watch-ahead", P::kLiveness, {}, false, false, 4},
    {"broken/release-forgets-node", P::kLiveness, {FaultKind::kConnectionLoss}},
    // A lost delete reply, then a reconnect to a follower that has not applied the delete.
    {"broken/no-sync-recheck",
     P::kMutualExclusion,
     {FaultKind::kLoseNextReply, FaultKind::kLaggingFollower},
     false,
     false,
     3},
};

}  // namespace

bool breaks_belief(FaultKind k) { return k == FaultKind::kPause || k == FaultKind::kExpireSession; }

Claims claims_for(const recipes::RecipeInfo& recipe) {
  Claims c;
  c.properties = kind_defaults(recipe.kind);
  c.reentrant = true;  // every registry recipe derives from LockBase, which is re-entrant
  if (recipe.expected == recipes::Expected::kCorrect) {
    c.survives = every_fault();
    for (const CorrectRow& row : kCorrect) {
      if (row.name == recipe.name) c.properties.insert(row.extra.begin(), row.extra.end());
    }
    return c;
  }
  c.survives = every_fault();
  for (const BrokenRow& row : kBroken) {
    if (row.name != recipe.name) continue;
    c.must_violate = row.must_violate;
    c.properties.insert(row.must_violate);
    c.focus = row.focus;
    c.needs_timeouts = row.needs_timeouts;
    c.needs_wrap = row.needs_wrap;
    c.min_clients = row.min_clients;
  }
  return c;
}

bool judged(Property p, const Claims& claims, const Scenario& s) {
  if (claims.properties.count(p) == 0) return false;
  for (const sim::Fault& f : s.faults) {
    if (claims.survives.count(f.kind) == 0) return false;
    // Under pauses and server-side expiry, exclusion is judged in its informed form only
    // (see check_mutual_exclusion), and FIFO not at all: a stale waiter may act on an old read.
    if (p == P::kFifo && breaks_belief(f.kind)) return false;
  }
  return true;
}

GenerateOptions generate_options(const recipes::RecipeInfo& recipe, const Claims& claims,
                                 const std::set<FaultKind>& allowed) {
  GenerateOptions o;
  o.kind = recipe.kind;
  o.reentrant = claims.reentrant;
  o.force_timeouts = claims.needs_timeouts;
  o.wrap_percent = claims.needs_wrap ? 100 : 10;
  o.min_clients = claims.min_clients;
  // A broken variant is hunted with the faults that expose it; a correct recipe is tried
  // under every kind it claims.
  o.faults = claims.must_violate ? claims.focus : claims.survives;
  o.focus = claims.focus;
  if (!allowed.empty()) {
    std::set<FaultKind> kept;
    for (FaultKind k : o.faults) {
      if (allowed.count(k) != 0) kept.insert(k);
    }
    o.faults = kept;
    std::set<FaultKind> focus;
    for (FaultKind k : o.focus) {
      if (allowed.count(k) != 0) focus.insert(k);
    }
    o.focus = focus;
  }
  return o;
}

}  // namespace lockstep::properties
