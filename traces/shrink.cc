// Shrinking a failing `lockstep check` scenario before it is saved (traces/record.h).
#include <algorithm>
#include <functional>
#include <utility>
#include <vector>

#include "properties/claims.h"
#include "properties/suite.h"
#include "traces/record.h"

namespace lockstep::traces {
namespace {

using properties::Scenario;

// One way to make a scenario smaller: returns false when it does not apply to `s`.
using Step = std::function<bool(Scenario* s)>;

bool drop_all_faults(Scenario* s) {
  if (s->faults.empty()) return false;
  s->faults.clear();
  return true;
}

// Removes the last client: its faults and its role go with it.
bool drop_client(Scenario* s) {
  properties::WorkloadOptions& w = s->workload;
  if (w.clients <= 2) return false;
  const uint32_t gone = w.clients--;
  if (w.roles.size() > w.clients) w.roles.resize(w.clients);
  std::erase_if(s->faults, [&](const sim::Fault& f) { return f.client == gone; });
  return true;
}

bool halve_rounds(Scenario* s) {
  if (s->workload.rounds <= 1) return false;
  s->workload.rounds /= 2;
  return true;
}

bool one_round_less(Scenario* s) {
  if (s->workload.rounds <= 1) return false;
  --s->workload.rounds;
  return true;
}

// Turns an optional workload behaviour off.
Step zero(uint32_t properties::WorkloadOptions::*field) {
  return [field](Scenario* s) {
    if (s->workload.*field == 0) return false;
    s->workload.*field = 0;
    return true;
  };
}

bool standalone(Scenario* s) {
  if (s->servers == 1) return false;
  for (const sim::Fault& f : s->faults) {
    if (f.server > 1) return false;  // the fault needs the ensemble
  }
  s->servers = 1;
  return true;
}

bool no_local_expiry(Scenario* s) {
  if (!s->local_session_expiry) return false;
  s->local_session_expiry = false;
  return true;
}

// One caller task fewer per client (shared callers), down to one.
bool fewer_callers(Scenario* s) {
  if (s->workload.callers <= 1) return false;
  --s->workload.callers;
  return true;
}

bool no_wrap(Scenario* s) {
  if (!s->sequence_start) return false;
  s->sequence_start.reset();
  return true;
}

std::vector<Step> steps() {
  using W = properties::WorkloadOptions;
  return {drop_all_faults,
          drop_client,
          halve_rounds,
          one_round_less,
          zero(&W::stray_release_percent),
          zero(&W::reentrant_percent),
          zero(&W::long_hold_percent),
          zero(&W::give_up_percent),
          zero(&W::timed_percent),
          zero(&W::try_percent),
          fewer_callers,
          standalone,
          no_local_expiry,
          no_wrap};
}

}  // namespace

Scenario shrink_scenario(const recipes::RecipeInfo& recipe, Scenario s,
                         properties::Property property, uint32_t max_runs, uint32_t* runs) {
  const properties::Claims claims = properties::claims_for(recipe);
  uint32_t used = 0;
  auto still_fails = [&](const Scenario& candidate) {
    ++used;
    const properties::SeedOutcome o = properties::run_scenario(recipe, claims, candidate);
    const properties::Verdict* v = o.verdict(property);
    return v != nullptr && !v->ok;
  };
  // Tries `change`; keeps it when the property is still violated.
  auto attempt = [&](const std::function<bool(Scenario*)>& change) {
    if (used >= max_runs) return false;
    Scenario candidate = s;
    if (!change(&candidate)) return false;
    properties::finish_scenario(&candidate);
    if (!still_fails(candidate)) return false;
    s = std::move(candidate);
    return true;
  };
  const std::vector<Step> all = steps();
  bool progress = true;
  while (progress && used < max_runs) {
    progress = false;
    for (const Step& step : all) {
      while (attempt(step)) progress = true;
    }
    // Each fault on its own, last first (so indexes stay valid after an erase).
    for (size_t i = s.faults.size(); i-- > 0;) {
      if (i >= s.faults.size()) continue;
      progress = attempt([i](Scenario* c) {
                   c->faults.erase(c->faults.begin() + static_cast<std::ptrdiff_t>(i));
                   return true;
                 }) ||
                 progress;
    }
  }
  if (runs != nullptr) *runs = used;
  return s;
}

std::string save_check_failure(const properties::FailingSeed& f, std::string* error) {
  properties::Scenario s = check_scenario(*f.recipe, f.seed, f.faults);
  if (f.demonstration) return save_failure_trace(record_trace(*f.recipe, s), f.dir, error);
  std::optional<properties::Property> property = f.property;
  if (!property) {
    const properties::SeedOutcome o =
        properties::run_scenario(*f.recipe, properties::claims_for(*f.recipe), s);
    if (const properties::Verdict* v = o.first_violation()) property = v->property;
  }
  if (f.shrink && property) s = shrink_scenario(*f.recipe, std::move(s), *property);
  return save_scenario_failure(*f.recipe, s, f.dir, error);
}

}  // namespace lockstep::traces
