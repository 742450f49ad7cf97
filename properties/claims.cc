#include "properties/claims.h"

#include <algorithm>
#include <string_view>

namespace lockstep::properties {
namespace {

using sim::FaultKind;
using P = Property;

std::set<FaultKind> every_fault() {
  std::vector<FaultKind> all = all_fault_kinds();
  return {all.begin(), all.end()};
}

}  // namespace

// An operator's delete of the holder's node (delete-node, delete-dir) is a server-side loss the
// holder is never told of (ZooKeeper notifies watchers, not owners): like an expiry it has not
// heard of yet, its belief outlives its node, and fencing keeps the resource safe.
bool breaks_belief(FaultKind k) {
  return k == FaultKind::kPause || k == FaultKind::kExpireSession ||
         k == FaultKind::kDeleteNode || k == FaultKind::kDeleteDir;
}

Claims claims_for(const recipes::RecipeInfo& recipe) {
  const recipes::Promises& promises = recipe.promises;
  Claims c;
  c.properties = recipes::kind_promises(recipe.kind);
  c.properties.insert(promises.claims.begin(), promises.claims.end());
  c.nodes_per_acquire = std::max<uint32_t>(1, promises.nodes_per_acquire);
  c.reentrant = true;  // every registry recipe derives from LockBase, which is re-entrant
  c.shared_callers = promises.shared_callers;
  c.capacity_node = promises.capacity_node;
  c.survives = promises.survives.empty()
                   ? every_fault()
                   : std::set<FaultKind>(promises.survives.begin(), promises.survives.end());
  // A semaphore that reads its capacity node obeys its changes.
  if (promises.capacity_node) c.survives.insert(FaultKind::kSetCapacity);
  if (recipe.exposure) {
    const recipes::Exposure& e = *recipe.exposure;
    c.must_violate = e.caught_by;
    c.properties.insert(e.caught_by);
    c.focus = e.focus;
    c.needs_timeouts = e.needs_timeouts;
    c.needs_wrap = e.needs_wrap;
    c.min_clients = e.min_clients;
    c.stall_task = e.stall_task;
    c.needs_shared_callers = e.needs_shared_callers;
    c.needs_long_holds = e.needs_long_holds;
  }
  return c;
}

bool judged(Property p, const Claims& claims, const Scenario& s) {
  if (claims.properties.count(p) == 0) return false;
  for (const sim::Fault& f : s.faults) {
    if (claims.survives.count(f.kind) == 0) return false;
    // Under pauses and server-side expiry, exclusion is judged in its informed form only
    // (see check_mutual_exclusion), and FIFO not at all: a stale waiter may act on an old read.
    // A stall holds one of a client's tasks as a pause holds them all: a stalled waiter may act
    // on an old read too.
    if (p == P::kFifo && (breaks_belief(f.kind) || f.kind == FaultKind::kStall)) return false;
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
  o.stall_task = claims.stall_task;
  o.shared_callers = claims.shared_callers;
  o.force_shared_callers = claims.needs_shared_callers;
  o.capacity_node = claims.capacity_node;
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
