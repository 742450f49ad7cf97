// explore_ttb: the time-to-bug table — for every deliberately broken variant in the
// registry, how many runs and how much wall time each search strategy needs until the variant's
// first violation, and the size of the shortest counterexample found.
//
//   check: random   `lockstep check`'s search: run i derives a scenario from seed base+i
//                   (properties::generate_scenario, the variant's focus faults) and runs it with
//                   the seeded random strategy;
//   check: pct-d3   the same scenarios, scheduled by PCT with depth 3 (explore/strategies.h);
//   scope: random / pct-d3
//                   one small fixed scope per variant (explore/search.h make_scope; its focus
//                   faults at 0..9 ms after the workload's start, run i using offset i mod 10;
//                   a lag falls on a follower at even offsets, on the leader at odd ones):
//                   only the schedule varies;
//   scope: exhaustive
//                   the same scopes, exhaustive with iterative preemption bounding (every
//                   offset at bound 0, then at bound 1, ...);
//   scope: sleep sets
//                   the same scopes, exhaustive with sleep sets: the bound counts data choices
//                   only and every event order is explored (explore/search.h).
// The sampled strategies are repeated for --trials trials from different seed bases; the table
// gives the median over trials of runs and of wall milliseconds to the first violation of the
// variant's must-violate property ("-" when no trial found it within --budget runs), and in
// brackets how many trials found it. Exhaustive is deterministic: one trial.
//
// Flags (cli/cli.h's parser): [--trials T] [--budget N] [--bound K] [--recipe NAME]. The ctest
// `explore_ttb_small` runs it with a small budget; the `bench_ttb` target with more. The wall
// clock is read here, for the table only. Exit (cli/cli.h): 0 when every variant was found by at
// least one strategy, 1 otherwise, 2 on a usage error.
#include <algorithm>
#include <iostream>
#include <cstdio>
#include <limits>
#include <optional>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "cli/cli.h"
#include "explore/search.h"
#include "explore/wall_clock.h"
#include "properties/claims.h"
#include "recipes/registry.h"

namespace lockstep::explore {
namespace {

constexpr double kNotFound = std::numeric_limits<double>::infinity();

struct Trial {
  double runs = kNotFound;
  double wall_ms = kNotFound;
  std::optional<Scope> scope;       // where the counterexample was found
  std::optional<Counterexample> c;  // the counterexample
};

// Random or PCT: run i explores make_scope(i) with seed base + i, until the variant's
// must-violate property is violated or `budget` runs.
template <class MakeScope>
Trial sample_trial(const properties::Claims& claims, bool pct, uint64_t base, uint64_t budget,
                   MakeScope&& make_scope_for) {
  Trial t;
  const Stopwatch watch;
  uint32_t steps = 200;  // PCT's k: the previous run's scheduling steps
  for (uint64_t i = 0; i < budget; ++i) {
    const Scope scope = make_scope_for(i);
    ScopeProgram program(scope);
    std::unique_ptr<sim::Strategy> strategy;
    if (pct) {
      PctOptions po;
      po.seed = base + i;
      po.depth = 3;
      po.steps = steps;
      strategy = make_pct_strategy(po);
    } else {
      strategy = sim::make_random_strategy(base + i);
    }
    const RunReport r = program.run(*strategy, nullptr);
    steps = 1;
    for (const sim::Decision& d : r.decisions) steps += d.kind == sim::ChoiceKind::kNextEvent;
    if (counted_violation(r, claims.must_violate) != nullptr) {
      t.runs = static_cast<double>(i + 1);
      t.wall_ms = watch.elapsed_ms();
      t.scope = scope;
      t.c = Counterexample{schedule_of(r.decisions), r.decisions,
                           *counted_violation(r, claims.must_violate), r.sim_events, i + 1};
      return t;
    }
  }
  return t;
}

// The small fixed scope exhaustive search explores for a broken variant, with its focus faults
// `offset_ms` after the workload's start.
Scope variant_scope(const recipes::RecipeInfo& recipe, const properties::Claims& claims,
                    uint32_t offset_ms) {
  const uint32_t clients = std::max<uint32_t>(2, claims.min_clients);
  Scope probe = make_scope(recipe, clients, 2, {});
  std::vector<sim::Fault> faults;
  const std::string at = "@" + std::to_string(offset_ms);
  for (sim::FaultKind k : claims.focus) {
    // The middle waiter gives up; every other fault hits client 1 (the first holder). A lag
    // falls on a follower at even offsets and on the leader at odd ones: a follower's shows a
    // re-check that trusts a plain read (broken/no-sync-recheck), the leader's one that trusts
    // a sync (broken/sync-as-barrier, real/FINDINGS.md item 11).
    std::string spec =
        properties::fault_name(k) + at + (k == sim::FaultKind::kCancel ? ":c2" : ":c1");
    if (k == sim::FaultKind::kLaggingFollower) spec += offset_ms % 2 == 0 ? ":s2" : ":s1";
    // A stall holds the task the variant names (as lockstep check's scenarios do).
    if (k == sim::FaultKind::kStall && !claims.stall_task.empty()) spec += "=" + claims.stall_task;
    sim::Fault f;
    std::string error;
    if (parse_fault_spec(spec, probe.scenario, &f, &error)) faults.push_back(f);
  }
  return make_scope(recipe, clients, 2, faults);
}

// The fault start offsets (ms) a variant's scope is tried with: 0..9 when it has focus faults.
uint32_t offset_count(const properties::Claims& claims) { return claims.focus.empty() ? 1 : 10; }

// Exhaustive search with iterative preemption bounding; a variant with focus faults is
// explored with them at each of kOffsets start offsets (0..9 ms) per bound, since the fault's
// moment is part of the scope, not of the schedule.
Trial exhaustive_trial(const recipes::RecipeInfo& recipe, const properties::Claims& claims,
                       uint32_t bound, uint64_t budget, bool sleep_sets) {
  const uint32_t offsets = offset_count(claims);
  Trial t;
  uint64_t runs = 0;
  const Stopwatch watch;
  for (uint32_t b = 0; b <= bound && runs < budget; ++b) {
    for (uint32_t off = 0; off < offsets && runs < budget; ++off) {
      const Scope scope = variant_scope(recipe, claims, off);
      ScopeProgram program(scope);
      ExhaustiveOptions o;
      o.preemption_bound = b;
      o.max_schedules = budget - runs;
      o.stop_at_first = true;
      o.target = claims.must_violate;
      if (sleep_sets) {
        o.reduction = Reduction::kSleepSets;
        o.all_dependent = needs_all_dependent(scope);
      }
      const SearchResult res = explore_exhaustive(program, o);
      if (res.shortest) {
        t.runs = static_cast<double>(runs + res.first_violation_at);
        t.wall_ms = watch.elapsed_ms();
        t.scope = scope;
        t.c = res.shortest;
        return t;
      }
      runs += res.schedules;
    }
  }
  return t;
}

double median(std::vector<double> v) {
  if (v.empty()) return kNotFound;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string cell(const std::vector<Trial>& trials) {
  std::vector<double> runs;
  std::vector<double> ms;
  size_t found = 0;
  for (const Trial& t : trials) {
    runs.push_back(t.runs);
    ms.push_back(t.wall_ms);
    found += t.runs != kNotFound ? 1 : 0;
  }
  char buf[64];
  const double r = median(runs);
  if (r == kNotFound) {
    std::snprintf(buf, sizeof buf, "- (%zu/%zu)", found, trials.size());
  } else {
    std::snprintf(buf, sizeof buf, "%.0f / %.1f (%zu/%zu)", r, median(ms), found, trials.size());
  }
  return buf;
}

// The smallest counterexample among the trials: fewest decisions, then simulator events.
const Trial* smallest(const std::vector<Trial>& trials, const Trial* best) {
  for (const Trial& t : trials) {
    if (!t.c) continue;
    if (best == nullptr || t.c->decisions.size() < best->c->decisions.size() ||
        (t.c->decisions.size() == best->c->decisions.size() &&
         t.c->sim_events < best->c->sim_events)) {
      best = &t;
    }
  }
  return best;
}

// The smallest counterexample of the variant: the sampled strategies' smallest one shrunk to its
// fewest preemptions, or exhaustive search's (already minimal in preemptions) when that is
// smaller in (preemptions, decisions, simulator events). "decisions / events, P pre.".
std::string shrunk_size(const Trial* sampled, const Trial* exhaustive,
                        const properties::Claims& claims) {
  std::optional<Counterexample> best;
  if (sampled != nullptr) {
    ScopeProgram program(*sampled->scope);
    best = shrink(program, *sampled->c, claims.must_violate, 2000);
  }
  if (exhaustive != nullptr) {
    const Counterexample& e = *exhaustive->c;
    const auto key = [](const Counterexample& c) {
      return std::make_tuple(c.schedule.size(), c.decisions.size(), c.sim_events);
    };
    if (!best || key(e) < key(*best)) best = e;
  }
  if (!best) return "not found";
  return std::to_string(best->decisions.size()) + " / " + std::to_string(best->sim_events) + ", " +
         std::to_string(best->schedule.size()) + " pre.";
}

// Prints the table; kExitOk when every variant was found by at least one strategy.
int print_table(uint64_t trials, uint64_t budget, uint32_t bound, const std::string& only,
                std::ostream& out) {
  out << "time to first violation: median runs / wall ms over " << trials
      << " trial(s) (trials that found it), budget " << budget << " runs per trial\n"
      << "check: lockstep check's generated scenarios (one per run); scope: the variant's\n"
      << "small fixed scope, focus faults at 0..9 ms; exhaustive: preemption bound " << bound
      << ", one trial;\nsleep sets: the same scopes and bound on data choices only, every event "
         "order (sleep-set reduced);\nshortest: the smallest counterexample any strategy found, "
         "shrunk to its "
         "fewest "
         "preemptions:\ndecisions / simulator events, preemptions (non-default answers)\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-29s %-16s %-21s %-21s %-21s %-21s %-21s %-21s %s\n",
                "variant", "property", "check: random", "check: pct-d3", "scope: random",
                "scope: pct-d3", "scope: exhaustive", "scope: sleep sets", "shortest");
  out << line;
  bool all_found = true;
  for (const recipes::RecipeInfo& recipe : recipes::registry()) {
    if (recipe.expected != recipes::Expected::kBroken) continue;
    if (!properties::claims_for(recipe).must_violate) continue;
    if (!only.empty() && recipe.name != only) continue;
    const properties::Claims claims = properties::claims_for(recipe);
    const properties::GenerateOptions go = properties::generate_options(recipe, claims, {});
    auto generated = [&](uint64_t base) {
      return [&, base](uint64_t i) {
        return Scope{&recipe, claims, properties::generate_scenario(base + i, go)};
      };
    };
    auto fixed = [&](uint64_t i) {
      return variant_scope(recipe, claims, static_cast<uint32_t>(i % offset_count(claims)));
    };
    std::vector<Trial> random;
    std::vector<Trial> pct;
    std::vector<Trial> scope_random;
    std::vector<Trial> scope_pct;
    for (uint64_t t = 0; t < trials; ++t) {
      const uint64_t base = 1 + t * 1000003;
      random.push_back(sample_trial(claims, false, base, budget, generated(base)));
      pct.push_back(sample_trial(claims, true, base, budget, generated(base)));
      scope_random.push_back(sample_trial(claims, false, base, budget, fixed));
      scope_pct.push_back(sample_trial(claims, true, base, budget, fixed));
    }
    std::vector<Trial> exhaustive = {
        exhaustive_trial(recipe, claims, bound, budget, false)};
    std::vector<Trial> sleep = {
        exhaustive_trial(recipe, claims, bound, budget, true)};
    const Trial* sampled = nullptr;
    for (std::vector<Trial>* ts : {&random, &pct, &scope_random, &scope_pct}) {
      sampled = smallest(*ts, sampled);
    }
    const Trial* searched = smallest(sleep, smallest(exhaustive, nullptr));
    all_found = all_found && (sampled != nullptr || searched != nullptr);
    const std::string size = shrunk_size(sampled, searched, claims);
    std::snprintf(line, sizeof line, "%-29s %-16s %-21s %-21s %-21s %-21s %-21s %-21s %s\n",
                  recipe.name.c_str(),
                  claims.must_violate ? properties::to_string(*claims.must_violate) : "?",
                  cell(random).c_str(), cell(pct).c_str(), cell(scope_random).c_str(),
                  cell(scope_pct).c_str(), cell(exhaustive).c_str(), cell(sleep).c_str(),
                  size.c_str());
    out << line;
    out.flush();
  }
  return all_found ? cli::kExitOk : cli::kExitFailure;
}

int run_ttb(const cli::Command& self, const cli::Args& args, const cli::Io& io) {
  const auto trials = cli::parse_uint_flag(self, args, "trials", 5, 1, 1000, io.err);
  const auto budget = cli::parse_uint_flag(self, args, "budget", 2000, 1, 10000000, io.err);
  const auto bound = cli::parse_uint_flag(self, args, "bound", 2, 0, 8, io.err);
  if (!trials || !budget || !bound) return cli::kExitUsage;
  const std::string only = args.get("recipe", "");
  if (!only.empty() && recipes::find_recipe(only) == nullptr) {
    return cli::usage_error(self, "unknown recipe '" + only + "' (`lockstep list` names them)",
                            io.err);
  }
  return print_table(*trials, *budget, static_cast<uint32_t>(*bound), only, io.out);
}

const cli::Command kTtb = {
    .name = "explore_ttb",
    .summary =
        "Time to the first violation of every broken variant under random, PCT (d=3) and "
        "exhaustive search: median runs / wall ms over T trials (found/trials), and the shortest "
        "counterexample (decisions / simulator events).",
    .positional = "",
    .flags = {{"trials", "T", "trials per sampled strategy (default 5)"},
              {"budget", "N", "runs per trial (default 2000)"},
              {"bound", "K", "exhaustive search's preemption bound, 0..8 (default 2)"},
              {"recipe", "NAME", "only this broken variant"}},
    .run = run_ttb,
    .details = "exit: 0 every variant was found by some strategy, 1 otherwise, 2 usage error\n",
};

}  // namespace
}  // namespace lockstep::explore

int main(int argc, char** argv) {
  return lockstep::cli::run_program(lockstep::explore::kTtb, argc, argv);
}
