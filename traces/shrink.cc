// Shrinking a failing `lockstep check` scenario, and then its schedule, before it is saved
// (traces/record.h).
//
// Two phases, both greedy, in a fixed order, and bounded by one run budget:
//   1. The scenario (StructureShrinker): every change after which the property is still violated
//      is kept (drop every fault, chunks of faults and single faults — delta debugging —, a fault
//      moved to an earlier client, any client with its faults and role, rounds, callers, leases,
//      the optional workload behaviours, reopens, the ensemble, the local expiry, the sequence
//      wrap), then, kept only when the history gets no larger, shorter holds and earlier and
//      shorter faults; once a pass of those keeps nothing, the steps that use the per-client
//      knobs (WorkloadOptions::client_streams, client_rounds, client_holds): a client dropped
//      with the others keeping their random streams, one client's rounds cut, and one round for
//      every client with one long holder. First with the seed's random strategy alone
//      (shrink_scenario stops there); then each candidate also with the lenient strategy over the
//      current run's decisions and a few other random schedules, since a smaller scenario may show
//      the bug under another schedule than the seed's.
//   2. The schedule: delta debugging over the recorded decisions. A candidate answers some of
//      them 0 (the scheduler's default choice: the first due event, the first latency bucket,
//      ...) and is run with the lenient strategy, which follows a decision list by position
//      where kind and range match and answers 0 everywhere else; it is kept when the property is
//      still violated and the run is no larger (history events, then simulator events). After a
//      kept candidate the list is the run's own decisions.
// The result is recorded with the lenient strategy over the final list, so the trace's decisions
// are the ones its run made and strict replay reproduces it. Deterministic: no clock, no
// unseeded randomness; the same input gives the same trace.
#include <algorithm>
#include <cstdint>
#include <string>
#include <functional>
#include <utility>
#include <vector>

#include "properties/claims.h"
#include "properties/suite.h"
#include "traces/record.h"
#include "zk/invariant.h"

namespace lockstep::traces {
namespace {

using properties::Scenario;
using properties::WorkloadOptions;

// ---- the lenient strategy (record.h) ----

class LenientStrategy final : public sim::Strategy {
 public:
  explicit LenientStrategy(std::vector<sim::Decision> decisions)
      : decisions_(std::move(decisions)) {}
  uint32_t choose(sim::ChoiceKind kind, uint32_t n) override {
    const size_t i = asked_++;
    if (i >= decisions_.size()) return 0;
    const sim::Decision& d = decisions_[i];
    return d.kind == kind && d.n == n ? d.chosen : 0;
  }
  std::string name() const override { return kShrunkStrategy; }

 private:
  std::vector<sim::Decision> decisions_;
  size_t asked_ = 0;
};

// ---- scenario steps ----

// One way to make a scenario smaller: returns false when it does not apply to `s`.
using Step = std::function<bool(Scenario* s)>;

bool drop_all_faults(Scenario* s) {
  if (s->faults.empty()) return false;
  s->faults.clear();
  return true;
}

// Removes client `c` (1-based) with its faults, its role and its per-client knobs; the clients
// after it move down one, their faults, roles and knobs with them. Without client_streams the
// clients after it take the random streams of their new numbers.
bool drop_client(Scenario* s, uint32_t c) {
  WorkloadOptions& w = s->workload;
  if (w.clients <= 1 || c == 0 || c > w.clients) return false;
  if (w.roles.size() >= c) w.roles.erase(w.roles.begin() + (c - 1));
  if (w.client_streams.size() >= c) w.client_streams.erase(w.client_streams.begin() + (c - 1));
  if (w.client_rounds.size() >= c) w.client_rounds.erase(w.client_rounds.begin() + (c - 1));
  if (w.client_holds.size() >= c) w.client_holds.erase(w.client_holds.begin() + (c - 1));
  --w.clients;
  std::erase_if(s->faults, [c](const sim::Fault& f) { return f.client == c; });
  for (sim::Fault& f : s->faults) {
    if (f.client > c) --f.client;
  }
  return true;
}

// Drops client `c` as drop_client does, but the clients after it keep their random streams
// (WorkloadOptions::client_streams): their think and hold times and their rolls stay as they were.
bool drop_client_keeping_streams(Scenario* s, uint32_t c) {
  WorkloadOptions& w = s->workload;
  if (w.client_streams.empty()) {
    for (uint32_t i = 1; i <= w.clients; ++i) w.client_streams.push_back(i);
  }
  return drop_client(s, c);
}

// Client `c` (1-based) does `to(its rounds)` rounds, at least 1 (WorkloadOptions::client_rounds).
bool fewer_rounds_for(Scenario* s, uint32_t c, uint32_t (*to)(uint32_t)) {
  WorkloadOptions& w = s->workload;
  if (c == 0 || c > w.clients) return false;
  if (w.client_rounds.empty()) w.client_rounds.assign(w.clients, w.rounds);
  uint32_t& rounds = w.client_rounds[c - 1];
  rounds = std::min(rounds, w.rounds);
  const uint32_t next = std::max(1u, to(rounds));
  if (next >= rounds) return false;
  rounds = next;
  return true;
}

// The per-client knobs back to empty when they say what the default says, so that a scenario the
// shrinker could not take apart is written as it was generated.
void normalize_client_knobs(Scenario* s) {
  WorkloadOptions& w = s->workload;
  bool identity = true;
  for (uint32_t i = 0; i < w.client_streams.size(); ++i) identity &= w.client_streams[i] == i + 1;
  if (identity) w.client_streams.clear();
  bool all = true;
  for (uint32_t& r : w.client_rounds) {
    r = std::min(r, w.rounds);
    all &= r == w.rounds;
  }
  if (all) w.client_rounds.clear();
  bool drawn = true;
  for (const zk::Duration& d : w.client_holds) drawn &= d.us <= 0;
  if (drawn) w.client_holds.clear();
}

// One round for every client, client `c`'s hold long (`times` x WorkloadOptions::long_hold) and
// every other's short (hold_min): the shape of a bug that needs one holder to stay while the
// others come and go, which a run of many random rounds shows only where the rolls happen to
// line up. (A lost wake-up is judged only some time after the heal: twice the long hold may be
// needed to reach it. finish_scenario's bounds count the fixed holds, so a waiter behind the long
// holder is no violation by itself.)
bool one_round_one_long_holder(Scenario* s, uint32_t c, uint32_t times) {
  WorkloadOptions& w = s->workload;
  // Only for a scenario with long holds (once applied, long_hold_percent is 0).
  if (c == 0 || c > w.clients || w.clients < 2 || w.long_hold.us <= 0) return false;
  if (w.long_hold_percent == 0) return false;
  w.rounds = 1;
  w.client_rounds.clear();
  w.long_hold_percent = 0;
  const zk::Duration short_hold = w.hold_min.us > 0 ? w.hold_min : zk::microseconds(1);
  w.client_holds.assign(w.clients, short_hold);
  w.client_holds[c - 1] = w.long_hold * times;
  return true;
}

// Lowers `field` to `to(value)` when that is smaller than the value and at least `floor`.
Step lower(uint32_t WorkloadOptions::*field, uint32_t floor, uint32_t (*to)(uint32_t)) {
  return [=](Scenario* s) {
    const uint32_t now = s->workload.*field;
    const uint32_t next = std::max(floor, to(now));
    if (next >= now) return false;
    s->workload.*field = next;
    return true;
  };
}
uint32_t to_zero(uint32_t) { return 0; }
uint32_t halved(uint32_t v) { return v / 2; }
uint32_t one_less(uint32_t v) { return v == 0 ? 0 : v - 1; }

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

// Starts the sequence halfway closer to the signed wrap, so that fewer creates reach it.
bool wrap_sooner(Scenario* s) {
  if (!s->sequence_start || *s->sequence_start >= INT32_MAX - 1) return false;
  const int64_t start = *s->sequence_start;
  s->sequence_start = static_cast<int32_t>(start + (int64_t{INT32_MAX} - start + 1) / 2);
  return true;
}

bool no_wrap(Scenario* s) {
  if (!s->sequence_start) return false;
  s->sequence_start.reset();
  return true;
}

// Moves every fault to `num`/`den` of its time: after fewer rounds or clients the workload gets
// to the moment a fault was aimed at sooner.
void scale_fault_times(Scenario* s, uint32_t num, uint32_t den) {
  for (sim::Fault& f : s->faults) f.at.us = f.at.us / den * num + f.at.us % den * num / den;
}

// Fewer rounds (`to` gives the count), the faults sooner by as much.
Step fewer_rounds_sooner_faults(uint32_t (*to)(uint32_t)) {
  return [=](Scenario* s) {
    WorkloadOptions& w = s->workload;
    const uint32_t rounds = std::max(1u, to(w.rounds));
    if (rounds >= w.rounds || s->faults.empty()) return false;
    scale_fault_times(s, rounds, w.rounds);
    w.rounds = rounds;
    return true;
  };
}

// Fewer rounds with an optional behaviour made certain: the round that showed the bug may be a
// later one only because that behaviour (a long hold, a timed acquire, ...) came up there by
// chance; at 100% it comes up in every round. `to` gives the new round count.
Step fewer_rounds_every_time(uint32_t WorkloadOptions::*percent, uint32_t (*to)(uint32_t)) {
  return [=](Scenario* s) {
    WorkloadOptions& w = s->workload;
    const uint32_t rounds = std::max(1u, to(w.rounds));
    if (w.*percent == 0 || w.*percent == 100 || rounds >= w.rounds) return false;
    w.*percent = 100;
    w.rounds = rounds;
    return true;
  };
}

// Changes that make the scenario simpler: kept whenever the property stays violated.
std::vector<Step> structural_steps() {
  using W = WorkloadOptions;
  std::vector<Step> out = {lower(&W::rounds, 1, [](uint32_t) { return 1u; }),
          lower(&W::rounds, 1, halved),
          lower(&W::rounds, 1, one_less),
          lower(&W::callers, 1, [](uint32_t) { return 1u; }),
          lower(&W::callers, 1, one_less),
          lower(&W::stray_release_percent, 0, to_zero),
          lower(&W::reentrant_percent, 0, to_zero),
          lower(&W::long_hold_percent, 0, to_zero),
          lower(&W::give_up_percent, 0, to_zero),
          lower(&W::timed_percent, 0, to_zero),
          lower(&W::try_percent, 0, to_zero),
          lower(&W::max_reopens, 0, to_zero),
          lower(&W::max_reopens, 0, halved),
          lower(&W::max_leases, 1, one_less),
          standalone,
          no_local_expiry,
          no_wrap};
  out.push_back(fewer_rounds_sooner_faults(halved));
  out.push_back(fewer_rounds_sooner_faults(one_less));
  for (uint32_t W::*percent : {&W::long_hold_percent, &W::timed_percent, &W::give_up_percent,
                               &W::try_percent, &W::reentrant_percent, &W::stray_release_percent}) {
    out.push_back(fewer_rounds_every_time(percent, [](uint32_t) { return 1u; }));
    out.push_back(fewer_rounds_every_time(percent, one_less));
  }
  return out;
}

// Halves a duration; false when it is already 0.
bool halve(zk::Duration* d) {
  if (d->us <= 0) return false;
  d->us /= 2;
  return true;
}

// Changes that only tune the run: kept when the property stays violated and the run is no larger.
std::vector<Step> tuning_steps(const Scenario& s) {
  std::vector<Step> out = {
      [](Scenario* c) {
        WorkloadOptions& w = c->workload;
        if (w.hold_max <= w.hold_min) return false;
        w.hold_max = w.hold_min;
        return true;
      },
      [](Scenario* c) { return halve(&c->workload.think_max); },
      wrap_sooner};
  // An optional behaviour made certain: its roll still draws from the client's random stream, so
  // the rest of the client's run keeps its draws (turning it off would shift them all).
  for (uint32_t WorkloadOptions::*percent :
       {&WorkloadOptions::long_hold_percent, &WorkloadOptions::timed_percent,
        &WorkloadOptions::give_up_percent}) {
    out.push_back([percent](Scenario* c) {
      if (c->workload.*percent == 0 || c->workload.*percent == 100) return false;
      c->workload.*percent = 100;
      return true;
    });
  }
  for (size_t i = 0; i < s.faults.size(); ++i) {
    out.push_back([i](Scenario* c) { return halve(&c->faults[i].duration); });
    out.push_back([i](Scenario* c) { return halve(&c->faults[i].extra); });
    out.push_back([i](Scenario* c) {
      sim::Fault& f = c->faults[i];
      if (f.at.us <= 0) return false;
      f.at.us /= 2;
      return true;
    });
  }
  return out;
}

// The size of a failing run: smaller history first, then fewer simulator events.
struct Size {
  uint64_t history = 0;
  uint64_t sim_events = 0;
  bool operator<=(const Size& o) const {
    return history < o.history || (history == o.history && sim_events <= o.sim_events);
  }
};

// Runs candidates against one recipe and property, within one budget.
class Runner {
 public:
  Runner(const recipes::RecipeInfo& recipe, properties::Property property, uint32_t max_runs)
      : recipe_(recipe), claims_(properties::claims_for(recipe)), property_(property),
        max_runs_(max_runs) {}

  bool spent() const { return used_ >= max_runs_; }
  // Lowers the budget to at most `more` runs from now.
  void limit(uint32_t more) { max_runs_ = std::min(max_runs_, used_ + more); }
  uint32_t used() const { return used_; }

  // Runs `s` with `strategy` (nullptr: the seed's random strategy). True when the property is
  // violated; *size and *decisions then describe the run.
  bool fails(const Scenario& s, std::unique_ptr<sim::Strategy> strategy, Size* size,
             std::vector<sim::Decision>* decisions) {
    ++used_;
    properties::RunResult r =
        properties::run_in_sim(recipe_.make, s, properties::Keep::kAudit, std::move(strategy));
    const std::vector<properties::Verdict> verdicts = properties::judge(recipe_, claims_, s, r);
    const auto v = std::find_if(verdicts.begin(), verdicts.end(), [&](const properties::Verdict& x) {
      return x.property == property_;
    });
    if (v == verdicts.end() || v->ok) return false;
    *size = Size{r.history.size(), r.sim_events};
    *decisions = std::move(r.decisions);
    return true;
  }

 private:
  const recipes::RecipeInfo& recipe_;
  const properties::Claims claims_;
  const properties::Property property_;
  uint32_t max_runs_;
  uint32_t used_ = 0;
};

// The smallest failing run found so far.
struct Failing {
  Scenario scenario;
  std::vector<sim::Decision> decisions;  // the decisions its run made
  Size size;
  bool random = true;  // made by the seed's random strategy (else by LenientStrategy)
};

// The strategy of a candidate's attempt `k`: 0 the seed's random strategy; with more attempts, 1
// the lenient strategy over the current run's decisions (a change late in the run leaves the
// schedule before it as it was) and 2.. random strategies seeded apart from the world's seed (the
// world keeps its seed; another schedule of the smaller scenario may show the bug where the
// seed's does not).
std::unique_ptr<sim::Strategy> attempt_strategy(uint32_t k, const Failing& best) {
  if (k == 0) return nullptr;
  if (k == 1) return std::make_unique<LenientStrategy>(best.decisions);
  uint64_t state = best.scenario.seed + k;
  return sim::make_random_strategy(zk::splitmix64(&state));
}

// Phase 1: greedy passes over the scenario steps until a pass keeps nothing or the budget is
// spent. Each candidate is run with up to `attempts` strategies (attempt_strategy) until one
// fails.
class StructureShrinker {
 public:
  StructureShrinker(Runner& runner, uint32_t attempts, Failing* best)
      : runner_(runner), attempts_(attempts), best_(best) {}

  void run() {
    const std::vector<Step> structural = structural_steps();
    aim_lost_replies();
    bool progress = true;
    while (progress && !runner_.spent()) {
      progress = attempt(drop_all_faults, false);
      progress = drop_fault_chunks() || progress;
      progress = move_faults_to_earlier_clients() || progress;
      progress = drop_clients() || progress;
      for (const Step& step : structural) {
        while (attempt(step, false)) progress = true;
      }
      for (const Step& step : tuning_steps(best_->scenario)) {
        while (attempt(step, true)) progress = true;
      }
      // The per-client knobs only once the steps above are done: they take a scenario apart
      // where those cannot, and before them would lead the greedy search elsewhere.
      if (!progress) progress = per_client_steps();
    }
  }

 private:
  // A lost reply aimed at the kind of request it needs (the next delete, the next create) keeps
  // hitting it when fewer rounds or clients move other requests in front of it.
  void aim_lost_replies() {
    for (size_t i = 0; i < best_->scenario.faults.size(); ++i) {
      for (zk::FaultRequests to : {zk::FaultRequests::kDelete, zk::FaultRequests::kCreate}) {
        const bool kept = attempt(
            [i, to](Scenario* s) {
              if (i >= s->faults.size()) return false;
              sim::Fault& f = s->faults[i];
              if (f.kind != sim::FaultKind::kLoseNextReply) return false;
              if (f.requests != zk::FaultRequests::kAny) return false;
              f.requests = to;
              return true;
            },
            false);
        if (kept) break;
      }
    }
  }

  // Tries `change` with up to min(attempts, tries) strategies; keeps it when the property is
  // still violated (and, when `tuning`, the run is no larger).
  bool attempt(const Step& change, bool tuning, uint32_t tries = UINT32_MAX) {
    if (runner_.spent()) return false;
    Scenario candidate = best_->scenario;
    if (!change(&candidate)) return false;
    normalize_client_knobs(&candidate);
    properties::finish_scenario(&candidate);
    for (uint32_t k = 0; k < std::min(attempts_, tries) && !runner_.spent(); ++k) {
      Size got;
      std::vector<sim::Decision> made;
      if (!runner_.fails(candidate, attempt_strategy(k, *best_), &got, &made)) continue;
      if (tuning && !(got <= best_->size)) continue;
      *best_ = Failing{std::move(candidate), std::move(made), got, k == 0};
      return true;
    }
    return false;
  }

  // Delta debugging over the faults: chunks of half, a quarter, ... down to single faults, last
  // chunk first (so an erase leaves the indexes before it valid).
  bool drop_fault_chunks() {
    bool kept = false;
    for (size_t chunk = std::max<size_t>(1, best_->scenario.faults.size() / 2); chunk >= 1;
         chunk /= 2) {
      for (size_t end = best_->scenario.faults.size(); end > 0;) {
        const size_t begin = end > chunk ? end - chunk : 0;
        kept = attempt(
                   [begin, end](Scenario* c) {
                     if (end > c->faults.size()) return false;
                     c->faults.erase(c->faults.begin() + static_cast<std::ptrdiff_t>(begin),
                                     c->faults.begin() + static_cast<std::ptrdiff_t>(end));
                     return true;
                   },
                   false) ||
               kept;
        end = begin;
      }
    }
    return kept;
  }

  // Each fault on the client before its own: a fault the bug needs on a later client may do on
  // an earlier one, and the later client can then go.
  bool move_faults_to_earlier_clients() {
    bool kept = false;
    for (size_t i = 0; i < best_->scenario.faults.size(); ++i) {
      kept = attempt(
                 [i](Scenario* x) {
                   if (i >= x->faults.size() || x->faults[i].client <= 1) return false;
                   --x->faults[i].client;
                   return true;
                 },
                 false) ||
             kept;
    }
    return kept;
  }

  // Any client, last first (so the numbers before it stay valid): as it is; then, with more than
  // one attempt, with every fault at k/8 of its time (k = 1..12: the clients left may reach the
  // moment a fault was aimed at sooner or later), each tried with three schedules; then with the
  // faults sooner by the client's share, with every schedule.
  bool drop_clients() {
    bool kept = false;
    for (uint32_t c = best_->scenario.workload.clients; c >= 1; --c) {
      if (attempt([c](Scenario* x) { return drop_client(x, c); }, false)) {
        kept = true;
        continue;
      }
      for (uint32_t k = 1; k <= 12 && attempts_ > 1 && !best_->scenario.faults.empty(); ++k) {
        if (k == 8) continue;  // the time it has
        if (attempt([c, k](Scenario* x) { return drop_client(x, c) && scale(x, k, 8); }, false,
                    3)) {
          kept = true;
          break;
        }
      }
    }
    for (uint32_t c = best_->scenario.workload.clients; c >= 1; --c) {
      kept = attempt(
                 [c](Scenario* x) {
                   const uint32_t n = x->workload.clients;
                   return !x->faults.empty() && drop_client(x, c) && scale(x, n - 1, n);
                 },
                 false) ||
             kept;
    }
    return kept;
  }

  // The steps that use the per-client knobs (WorkloadOptions::client_streams, client_rounds,
  // client_holds).
  bool per_client_steps() {
    bool kept = drop_clients_keeping_streams();
    kept = fewer_rounds_per_client() || kept;
    for (uint32_t times : {1u, 2u}) {
      for (uint32_t c = 1; c <= best_->scenario.workload.clients; ++c) {
        kept = attempt([c, times](Scenario* x) { return one_round_one_long_holder(x, c, times); },
                       false) ||
               kept;
      }
    }
    return kept;
  }

  // Any client but the last (dropping the last renumbers nobody: drop_clients tried it), last
  // first, the others keeping their random streams.
  bool drop_clients_keeping_streams() {
    bool kept = false;
    for (uint32_t c = best_->scenario.workload.clients; c >= 1; --c) {
      if (c == best_->scenario.workload.clients &&
          best_->scenario.workload.client_streams.empty()) {
        continue;
      }
      kept = attempt([c](Scenario* x) { return drop_client_keeping_streams(x, c); }, false) || kept;
    }
    return kept;
  }

  // Each client alone does fewer rounds (one, half, one less): the client whose later rounds
  // the bug does not need stops early while the others go on as they were.
  bool fewer_rounds_per_client() {
    bool kept = false;
    for (uint32_t c = 1; c <= best_->scenario.workload.clients; ++c) {
      for (uint32_t (*to)(uint32_t) : {+[](uint32_t) { return 1u; }, &halved, &one_less}) {
        while (attempt([c, to](Scenario* x) { return fewer_rounds_for(x, c, to); }, false)) {
          kept = true;
        }
      }
    }
    return kept;
  }

  static bool scale(Scenario* s, uint32_t num, uint32_t den) {
    scale_fault_times(s, num, den);
    return true;
  }

  Runner& runner_;
  const uint32_t attempts_;
  Failing* best_;
};

// Phase 2: delta debugging over best->decisions.
void shrink_schedule(Runner& runner, Failing* best) {
  // Tries answering 0 at `zeroed` (indexes into the decisions); keeps it when still failing and
  // no larger.
  auto attempt = [&](const std::vector<size_t>& zeroed) {
    std::vector<sim::Decision> candidate = best->decisions;
    for (size_t i : zeroed) candidate[i].chosen = 0;
    Size got;
    std::vector<sim::Decision> made;
    if (!runner.fails(best->scenario, std::make_unique<LenientStrategy>(std::move(candidate)),
                      &got, &made) ||
        !(got <= best->size)) {
      return false;
    }
    best->decisions = std::move(made);
    best->size = got;
    best->random = false;
    return true;
  };
  // ddmin: the non-zero decisions cut into `parts` chunks; a chunk whose zeroing keeps the
  // violation is dropped and the cut is redone one part coarser; otherwise the grain doubles.
  size_t parts = 1;
  while (!runner.spent()) {
    std::vector<size_t> nonzero;
    for (size_t i = 0; i < best->decisions.size(); ++i) {
      if (best->decisions[i].chosen != 0) nonzero.push_back(i);
    }
    if (nonzero.empty() || parts > nonzero.size()) break;
    bool dropped = false;
    // Last chunk first: the tail of a schedule is the cheapest to lose.
    for (size_t k = parts; k-- > 0 && !runner.spent();) {
      const size_t begin = nonzero.size() * k / parts;
      const size_t end = nonzero.size() * (k + 1) / parts;
      if (begin == end) continue;
      if (attempt(std::vector<size_t>(nonzero.begin() + static_cast<std::ptrdiff_t>(begin),
                                      nonzero.begin() + static_cast<std::ptrdiff_t>(end)))) {
        dropped = true;
        break;
      }
    }
    if (dropped) {
      parts = std::max<size_t>(1, parts - 1);
    } else {
      if (parts == nonzero.size()) break;
      parts = std::min(nonzero.size(), parts * 2);
    }
  }
}

// The failing run of `s` under the seed's random strategy, or nullopt when `s` does not fail.
std::optional<Failing> first_run(Runner& runner, const Scenario& s) {
  Failing f{s, {}, {}, true};
  if (!runner.fails(s, nullptr, &f.size, &f.decisions)) return std::nullopt;
  return f;
}

}  // namespace

Scenario shrink_scenario(const recipes::RecipeInfo& recipe, Scenario s,
                         properties::Property property, uint32_t max_runs, uint32_t* runs) {
  Runner runner(recipe, property, max_runs);
  std::optional<Failing> best = first_run(runner, s);
  if (best) {
    StructureShrinker(runner, /*attempts=*/1, &*best).run();
    s = std::move(best->scenario);
  }
  if (runs != nullptr) *runs = runner.used();
  return s;
}

ShrinkResult shrink_failure(const recipes::RecipeInfo& recipe, Scenario s,
                            properties::Property property, const ShrinkOptions& options) {
  ShrinkResult out;
  Runner runner(recipe, property, options.max_runs);
  std::optional<Failing> best = first_run(runner, s);
  if (best) {
    // The seed's own schedule first (as shrink_scenario), then other schedules for what that
    // left.
    StructureShrinker(runner, 1, &*best).run();
    if (options.schedule) StructureShrinker(runner, 2 + options.other_schedules, &*best).run();
    out.scenario_runs = runner.used();
    if (options.schedule) {
      runner.limit(options.max_schedule_runs);
      shrink_schedule(runner, &*best);
    }
    s = best->scenario;
  }
  out.runs = runner.used();
  out.schedule_shrunk = best && !best->random;
  out.trace = record_trace(recipe, s,
                           out.schedule_shrunk
                               ? std::make_unique<LenientStrategy>(std::move(best->decisions))
                               : nullptr);
  out.trace.reported = property;
  return out;
}

std::unique_ptr<sim::Strategy> make_lenient_strategy(std::vector<sim::Decision> decisions) {
  return std::make_unique<LenientStrategy>(std::move(decisions));
}

Scenario without_client(Scenario s, uint32_t client) {
  const bool dropped = drop_client(&s, client);
  LOCKSTEP_ASSERT_MSG(dropped, "without_client(" + std::to_string(client) + ") of a scenario with " +
                                   std::to_string(s.workload.clients) + " clients");
  return s;
}

RunFigures figures_of(const Trace& t) {
  const WorkloadOptions& w = t.scenario.workload;
  return RunFigures{t.history.size(), t.run.sim_events, w.clients, w.rounds,
                    static_cast<uint32_t>(t.scenario.faults.size())};
}

std::optional<VariantShrink> shrink_variant(const recipes::RecipeInfo& recipe, uint64_t max_seed,
                                            const ShrinkOptions& options) {
  const std::optional<properties::Property> must = properties::claims_for(recipe).must_violate;
  const std::optional<uint64_t> seed = first_failing_seed(recipe, max_seed);
  if (!must || !seed) return std::nullopt;
  VariantShrink out;
  out.seed = *seed;
  out.property = *must;
  const Scenario s = check_scenario(recipe, *seed);
  out.as_run = figures_of(record_trace(recipe, s));
  ShrinkOptions scenario_only = options;
  scenario_only.schedule = false;
  out.scenario_only = figures_of(shrink_failure(recipe, s, *must, scenario_only).trace);
  out.shrunk = shrink_failure(recipe, s, *must, options);
  const properties::Verdict* v = out.shrunk.trace.violation();
  out.still_violated = v != nullptr && v->property == *must;
  return out;
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
  Trace t;
  if (f.shrink && property) {
    t = shrink_failure(*f.recipe, std::move(s), *property).trace;
  } else {
    t = record_trace(*f.recipe, s);
    t.reported = property;
  }
  if (t.violation() == nullptr) {
    if (error) *error = f.recipe->name + " seed " + std::to_string(f.seed) + " violates nothing";
    return {};
  }
  return save_failure_trace(t, f.dir, error);
}

}  // namespace lockstep::traces
