// The scenarios of `lockstep check --real`: generate_real_scenario (properties/real_backend.h),
// the one generator (properties/generator.h) configured for a real server.
#include "properties/generator.h"
#include "properties/real_backend.h"

namespace lockstep::properties {
namespace {

using sim::FaultKind;

// The real stand-in for a simulator-only focus kind of a broken variant.
FaultKind real_focus(FaultKind k) {
  return k == FaultKind::kAbandonSession ? FaultKind::kExpireSession : k;
}

}  // namespace

Scenario generate_real_scenario(uint64_t seed, const recipes::RecipeInfo& recipe,
                                const Claims& claims, bool ensemble,
                                const std::set<FaultKind>& allowed) {
  GenerateOptions o;
  o.backend = Backend::kRealServer;
  o.kind = recipe.kind;
  o.reentrant = claims.reentrant;
  o.force_timeouts = claims.needs_timeouts;
  o.ensemble = ensemble;
  o.min_clients = claims.min_clients;
  o.max_clients = 4;
  o.min_rounds = 3;
  o.max_rounds = 6;
  o.hunt_lost_wakeup = claims.must_violate == Property::kLiveness && claims.focus.empty();
  // Fault kinds: a broken variant's focus (as real kinds), a correct recipe's every real kind
  // it survives; only those the real driver injects, and only the allowed ones.
  for (FaultKind k : claims.focus) o.focus.insert(real_focus(k));
  std::set<FaultKind> kinds;
  if (claims.must_violate) {
    kinds = o.focus;
  } else {
    for (FaultKind k : real_fault_kinds()) {
      if (claims.survives.count(k) != 0) kinds.insert(k);
    }
  }
  for (FaultKind k : kinds) {
    if (real_fault_supported(k) && (allowed.empty() || allowed.count(k) != 0)) o.faults.insert(k);
  }
  PrngDraws draws(zk::Prng(seed).split("real-scenario"));
  Scenario s = generate(draws, o);
  s.seed = seed;
  return s;
}

}  // namespace lockstep::properties
