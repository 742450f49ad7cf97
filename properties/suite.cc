#include "properties/suite.h"

#include <algorithm>
#include <set>
#include <utility>

namespace lockstep::properties {

const Verdict* SeedOutcome::first_violation() const {
  for (const Verdict& v : verdicts) {
    if (!v.ok) return &v;
  }
  return nullptr;
}

const Verdict* SeedOutcome::verdict(Property p) const {
  for (const Verdict& v : verdicts) {
    if (v.property == p) return &v;
  }
  return nullptr;
}

namespace {

// Does the scenario hold a fault after which a holder cannot know at once that its session died?
// A pause or a server-side expiry; or a stall, which holds one of the holder's tasks (its lost()
// listener, the recipe's grant monitor, its event thread) as a pause holds them all.
bool belief_faults(const Scenario& s) {
  for (const sim::Fault& f : s.faults) {
    if (breaks_belief(f.kind) || f.kind == sim::FaultKind::kStall) return true;
  }
  return false;
}

}  // namespace

std::vector<Verdict> judge(const recipes::RecipeInfo& recipe, const Claims& claims,
                           const Scenario& s, const RunResult& run) {
  std::vector<Verdict> out;
  // A client one of whose tasks a stall may hold: that its session watcher was told the session
  // ended is no evidence that the task acting on the belief (the lost() listener, the grant
  // monitor, the caller) was. Belief-level judgements (informed exclusion, reported state) see
  // its session's end as a disconnect: its beliefs are judged as untold ones.
  std::set<uint32_t> stalled;
  for (const sim::Fault& f : s.faults) {
    if (f.kind == sim::FaultKind::kStall) stalled.insert(f.client);
  }
  History untold;
  if (!stalled.empty()) {
    untold.reserve(run.history.size());
    for (Event e : run.history.events()) {
      if (e.op == Op::kSession && stalled.count(e.client) != 0 &&
          (e.session_state == zk::SessionState::kExpired ||
           e.session_state == zk::SessionState::kClosed)) {
        e.session_state = zk::SessionState::kConnecting;  // still a session event
      }
      untold.add(std::move(e));
    }
  }
  const History& beliefs = stalled.empty() ? run.history : untold;
  for (int i = 0; i < kPropertyCount; ++i) {
    const auto p = static_cast<Property>(i);
    if (!judged(p, claims, s)) continue;
    switch (p) {
      case Property::kMutualExclusion: {
        // (Without a belief fault there is no stall either: the beliefs are the run's history.)
        if (!belief_faults(s)) {
          out.push_back(check_mutual_exclusion(run.history, recipe.kind, s.workload.max_leases));
          break;
        }
        Verdict v;
        Verdict full;  // without informed_only: what the faults excuse, shown beside v
        if (stalled.empty()) {
          // The beliefs are the run's own history: one pass judges it both ways.
          InformedExclusion both =
              check_informed_exclusion(run.history, recipe.kind, s.workload.max_leases);
          v = std::move(both.informed);
          full = std::move(both.uninformed);
        } else {
          v = check_mutual_exclusion(beliefs, recipe.kind, s.workload.max_leases, true);
          if (v.ok) {
            full = check_mutual_exclusion(run.history, recipe.kind, s.workload.max_leases, false);
          }
        }
        bool deleted = false;  // an operator deleted lock nodes behind the clients
        for (const sim::Fault& f : s.faults) {
          deleted = deleted || f.kind == sim::FaultKind::kDeleteNode ||
                    f.kind == sim::FaultKind::kDeleteDir;
        }
        if (v.ok && !full.ok) {
          // Show what the faults excuse: the stale belief beside the next holder.
          v.demonstration =
              full.message +
              (deleted
                   ? " (expected: a paused or expired holder cannot know at once that its "
                     "session died, nor a holder that its node was deleted behind its back; "
                     "fencing tokens, not beliefs, keep the resource safe)"
                   : " (expected: a paused or expired holder cannot know at once that its "
                     "session died; fencing tokens, not beliefs, keep the resource safe)");
        }
        out.push_back(std::move(v));
        break;
      }
      case Property::kFencedSafety: out.push_back(check_fenced_safety(run.history)); break;
      case Property::kFifo: out.push_back(check_fifo(run.history)); break;
      case Property::kLiveness: {
        LivenessOptions lo;
        lo.heal_at = run.heal_at;
        lo.bound = liveness_bound_for(s, claims.properties.count(Property::kFifo) != 0);
        lo.quiet_at = run.heal_at + s.session_timeout * 2 + zk::milliseconds(200);
        lo.grace = zk::milliseconds(20);
        lo.capacity = recipe.kind == recipes::Kind::kSemaphore   ? s.workload.max_leases
                      : recipe.kind == recipes::Kind::kReadWrite ? 0
                                                                 : 1;
        out.push_back(check_liveness(run.history, lo, run.tree, &run.server));
        break;
      }
      case Property::kNoOrphans: out.push_back(check_no_orphans(run.history, run.tree)); break;
      case Property::kHerdFree:
        out.push_back(check_herd_free(run.herd, s.workload.lock_path, run.history, &run.server));
        break;
      case Property::kReentrancy: out.push_back(check_reentrancy(run.history)); break;
      case Property::kTimeoutCleanup: out.push_back(check_timeout_cleanup(run.history)); break;
      case Property::kBoundedLoad:
        if (!run.server.observed) break;
        out.push_back(check_bounded_load(run.history, run.server));
        break;
      case Property::kProgress:
        if (!run.server.observed) break;
        out.push_back(
            check_progress(run.history, run.server, run.heal_at, claims.nodes_per_acquire));
        break;
      case Property::kErrorContract: out.push_back(check_error_contract(run.history)); break;
      case Property::kReportedState:
        if (!run.server.observed) break;
        out.push_back(check_reported_state(beliefs, run.server, belief_faults(s)));
        break;
      case Property::kNoLeakedWatches:
        if (!run.server.observed) break;
        out.push_back(check_no_leaked_watches(run.history, run.server));
        break;
      case Property::kServerExclusion:
        if (!run.server.observed) break;
        out.push_back(check_server_exclusion(run.history, run.server, recipe.kind,
                                             s.workload.max_leases));
        break;
    }
  }
  return out;
}

SeedOutcome run_scenario(const recipes::RecipeInfo& recipe, const Claims& claims, Scenario s,
                         Keep keep) {
  SeedOutcome o;
  o.scenario = std::move(s);
  o.run = run_in_sim(recipe.make, o.scenario, keep);
  o.verdicts = judge(recipe, claims, o.scenario, o.run);
  return o;
}

SeedOutcome run_seed(const recipes::RecipeInfo& recipe, const Claims& claims, uint64_t seed,
                     const std::set<sim::FaultKind>& allowed, Keep keep) {
  return run_scenario(recipe, claims,
                      generate_scenario(seed, generate_options(recipe, claims, allowed)), keep);
}

std::string report(const recipes::RecipeInfo& recipe, const SeedOutcome& o) {
  std::string out = "recipe " + recipe.name + " (" + recipes::to_string(recipe.expected) +
                    ")\nscenario " + describe(o.scenario) + "\n";
  out += "run: " + std::to_string(o.run.history.size()) + " history events, " +
         std::to_string(o.run.sim_events) + " simulator events, " + std::to_string(o.run.requests) +
         " requests, ended " + format_time(o.run.end) +
         (o.run.finished ? "" : " (clients unfinished at the limit)") + "\n";
  for (const Verdict& v : o.verdicts) {
    out += std::string("  ") + to_string(v.property) + ": " + (v.ok ? "pass" : "VIOLATED") + "\n";
  }
  const Verdict* bad = o.first_violation();
  if (bad == nullptr) return out;
  out += "\n" + std::string(to_string(bad->property)) + " violated: " + bad->message + "\n";
  if (!bad->history_indexes.empty()) {
    // The named events, with the events of the same clients around them.
    const uint64_t first = bad->history_indexes.front() >= 8 ? bad->history_indexes.front() - 8 : 0;
    const uint64_t last =
        std::min<uint64_t>(bad->history_indexes.back() + 4, o.run.history.size() - 1);
    out += "history #" + std::to_string(first) + "..#" + std::to_string(last) + ":\n";
    for (uint64_t i = first; i <= last; ++i) {
      const bool named = std::find(bad->history_indexes.begin(), bad->history_indexes.end(), i) !=
                         bad->history_indexes.end();
      out += (named ? "  >> " : "     ") + describe(o.run.history[i]) + "\n";
    }
  }
  return out;
}

}  // namespace lockstep::properties
