// Recording, replaying and re-judging runs (traces/record.h).
#include "traces/record.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "properties/claims.h"
#include "properties/suite.h"

namespace lockstep::traces {
namespace {

using properties::Event;
using properties::RunResult;
using properties::Verdict;

Divergence diverge(std::string where, uint64_t index, std::string expected, std::string actual) {
  Divergence d;
  d.where = std::move(where);
  d.index = index;
  d.expected = std::move(expected);
  d.actual = std::move(actual);
  return d;
}

bool same_event(const Event& a, const Event& b) {
  return a.at == b.at && a.client == b.client && a.session == b.session && a.type == b.type &&
         a.op == b.op && a.error == b.error && a.token == b.token && a.hold_count == b.hold_count &&
         a.role == b.role && a.state == b.state && a.session_state == b.session_state &&
         a.text == b.text;
}

bool same_log_event(const sim::LoggedEvent& a, const sim::LoggedEvent& b) {
  return a.at == b.at && a.client == b.client && a.kind == b.kind && a.text == b.text;
}

std::string verdict_line(const Verdict* v) {
  if (v == nullptr) return "every property held";
  std::string out = std::string(properties::to_string(v->property)) + " VIOLATED: " + v->message;
  if (!v->history_indexes.empty()) {
    out += " (history events";
    for (size_t i = 0; i < v->history_indexes.size(); ++i) {
      out += (i == 0 ? " #" : ", #") + std::to_string(v->history_indexes[i]);
    }
    out += ")";
  }
  return out;
}

const Verdict* first_violation(const std::vector<Verdict>& verdicts) {
  for (const Verdict& v : verdicts) {
    if (!v.ok) return &v;
  }
  return nullptr;
}

Trace record(const recipes::RecipeInfo& recipe, const properties::Scenario& s,
             std::unique_ptr<sim::Strategy> strategy, std::string* strategy_divergence,
             const std::vector<sim::LoggedEvent>* expected_events);

}  // namespace

std::vector<sim::Decision> decisions_from_log(const std::vector<sim::LoggedEvent>& events) {
  std::vector<sim::Decision> out;
  for (const sim::LoggedEvent& e : events) {
    if (e.kind != "choose") continue;
    char name[32] = {};
    unsigned chosen = 0;
    unsigned n = 0;
    if (std::sscanf(e.text.c_str(), "%31s %u/%u", name, &chosen, &n) != 3) continue;
    for (int k = 0; k < static_cast<int>(sim::ChoiceKind::kCount); ++k) {
      if (std::string(name) == sim::to_string(static_cast<sim::ChoiceKind>(k))) {
        out.push_back(sim::Decision{static_cast<sim::ChoiceKind>(k), n, chosen});
      }
    }
  }
  return out;
}

Trace record_trace(const recipes::RecipeInfo& recipe, const properties::Scenario& s,
                   std::unique_ptr<sim::Strategy> strategy) {
  return record(recipe, s, std::move(strategy), nullptr, nullptr);
}

namespace {
Trace record(const recipes::RecipeInfo& recipe, const properties::Scenario& s,
             std::unique_ptr<sim::Strategy> strategy, std::string* strategy_divergence,
             const std::vector<sim::LoggedEvent>* expected_events) {
  Trace t;
  t.recipe = recipe.name;
  t.recipe_kind = recipes::to_string(recipe.kind);
  t.recipe_expected = recipes::to_string(recipe.expected);
  t.recipe_fingerprint = recipe_fingerprint(recipe);
  t.scenario = s;
  t.strategy = strategy ? strategy->name() : "random";
  RunResult r = properties::run_in_sim(recipe.make, s, properties::Keep::kEventLog,
                                       std::move(strategy), expected_events);
  t.decisions = std::move(r.decisions);
  t.events = std::move(r.events);
  t.event_count = t.events.size();
  t.log_hash = r.log_hash.value();
  t.run = RunInfo{r.start, r.heal_at, r.end, r.finished, r.sim_events, r.requests};
  t.verdicts = properties::judge(recipe, properties::claims_for(recipe), s, r);
  t.history = std::move(r.history);
  if (strategy_divergence != nullptr && r.diverged) *strategy_divergence = r.divergence;
  return t;
}
}  // namespace

std::optional<Divergence> first_divergence(const Trace& rec, const Trace& now) {
  const size_t n = std::min(rec.events.size(), now.events.size());
  for (size_t i = 0; i < n; ++i) {
    if (!same_log_event(rec.events[i], now.events[i])) {
      Divergence d = diverge("event log", i, event_line(rec.events[i]), event_line(now.events[i]));
      d.at = now.events[i].at;
      d.client = now.events[i].client;
      return d;
    }
  }
  if (rec.events.size() != now.events.size()) {
    Divergence d = diverge("event log", n,
                           n < rec.events.size() ? event_line(rec.events[n]) : "(end of the log)",
                           n < now.events.size() ? event_line(now.events[n]) : "(end of the log)");
    const sim::LoggedEvent& e = n < now.events.size() ? now.events[n] : rec.events[n];
    d.at = e.at;
    d.client = e.client;
    return d;
  }
  const auto& rh = rec.history.events();
  const auto& nh = now.history.events();
  const size_t m = std::min(rh.size(), nh.size());
  for (size_t i = 0; i < m; ++i) {
    if (!same_event(rh[i], nh[i])) {
      return diverge("history", i, properties::describe(rh[i]), properties::describe(nh[i]));
    }
  }
  if (rh.size() != nh.size()) {
    return diverge("history", m, m < rh.size() ? properties::describe(rh[m]) : "(end)",
                   m < nh.size() ? properties::describe(nh[m]) : "(end)");
  }
  if (rec.event_count != now.event_count) {
    return diverge("event count", 0, std::to_string(rec.event_count),
                   std::to_string(now.event_count));
  }
  if (rec.log_hash != now.log_hash) {
    char a[24];
    char b[24];
    std::snprintf(a, sizeof a, "0x%016llx", static_cast<unsigned long long>(rec.log_hash));
    std::snprintf(b, sizeof b, "0x%016llx", static_cast<unsigned long long>(now.log_hash));
    return diverge("event-log hash", 0, a, b);
  }
  const Verdict* rv = rec.violation();
  const Verdict* nv = now.violation();
  const bool same_verdict =
      (rv == nullptr && nv == nullptr) ||
      (rv != nullptr && nv != nullptr && rv->property == nv->property &&
       rv->message == nv->message && rv->history_indexes == nv->history_indexes);
  if (!same_verdict) return diverge("verdict", 0, verdict_line(rv), verdict_line(nv));
  return std::nullopt;
}

ReplayResult replay_trace(const Trace& recorded, const recipes::RecipeInfo& recipe) {
  ReplayResult out;
  std::string strategy_divergence;
  // Strict: the run is compared event by event as it is written and stops at the first event
  // that leaves the recording (sim::EventLog::expect); the rest is compared afterwards.
  out.replayed = record(recipe, recorded.scenario, sim::make_replay_strategy(recorded.decisions),
                        &strategy_divergence, &recorded.events);
  // The replay reports what the recording reports: the same property, when it named one.
  out.replayed.reported = recorded.reported;
  // The log keeps lines up to and including the first divergent one, so the run stopped early
  // exactly when its last line is not the recording's line at that index.
  const std::vector<sim::LoggedEvent>& got = out.replayed.events;
  out.stopped_early =
      !got.empty() && (got.size() > recorded.events.size() ||
                       !same_log_event(got.back(), recorded.events[got.size() - 1]));
  out.divergence = first_divergence(recorded, out.replayed);
  if (out.divergence) out.divergence->detail = strategy_divergence;
  if (!out.divergence && out.replayed.decisions != recorded.decisions) {
    // Same log but other decisions cannot happen while every decision is logged; say so if it
    // ever does rather than call it reproduced.
    out.divergence = diverge("decisions", 0, std::to_string(recorded.decisions.size()),
                             std::to_string(out.replayed.decisions.size()));
  }
  return out;
}

std::vector<Verdict> recheck_trace(const Trace& recorded, const recipes::RecipeInfo& recipe) {
  const properties::Claims claims = properties::claims_for(recipe);
  if (recorded.strategy != kShrunkStrategy) {
    return properties::run_scenario(recipe, claims, recorded.scenario).verdicts;
  }
  const RunResult r =
      properties::run_in_sim(recipe.make, recorded.scenario, properties::Keep::kVerdicts,
                             make_lenient_strategy(recorded.decisions));
  return properties::judge(recipe, claims, recorded.scenario, r);
}

std::optional<uint64_t> first_failing_seed(const recipes::RecipeInfo& recipe, uint64_t max_seed) {
  const properties::Claims claims = properties::claims_for(recipe);
  for (uint64_t seed = 1; seed <= max_seed; ++seed) {
    const properties::SeedOutcome o = properties::run_seed(recipe, claims, seed);
    const Verdict* v = claims.must_violate ? o.verdict(*claims.must_violate) : o.first_violation();
    if (v != nullptr && !v->ok) return seed;
  }
  return std::nullopt;
}

properties::Scenario check_scenario(const recipes::RecipeInfo& recipe, uint64_t seed,
                                    const std::set<sim::FaultKind>& allowed, uint32_t draw_era) {
  properties::GenerateOptions o =
      properties::generate_options(recipe, properties::claims_for(recipe), allowed);
  o.draw_era = draw_era;
  return properties::generate_scenario(seed, o);
}

std::string save_scenario_failure(const recipes::RecipeInfo& recipe, const properties::Scenario& s,
                                  const std::string& dir, std::string* error) {
  const Trace t = record_trace(recipe, s);
  if (t.violation() == nullptr) {
    if (error) *error = recipe.name + " seed " + std::to_string(s.seed) + " violates nothing";
    return {};
  }
  return save_failure_trace(t, dir, error);
}

std::string save_seed_failure(const recipes::RecipeInfo& recipe, uint64_t seed,
                              const std::set<sim::FaultKind>& allowed, const std::string& dir,
                              std::string* error) {
  return save_scenario_failure(recipe, check_scenario(recipe, seed, allowed), dir, error);
}

std::string verdict_summary(const Trace& trace) {
  if (const Verdict* v = trace.violation()) return verdict_line(v);
  return verdict_summary(trace.verdicts);
}

std::string verdict_summary(const std::vector<Verdict>& verdicts) {
  const Verdict* v = first_violation(verdicts);
  if (v != nullptr) return verdict_line(v);
  std::string out = "every property held (" + std::to_string(verdicts.size()) + " judged)";
  for (const Verdict& d : verdicts) {
    if (!d.demonstration.empty()) {
      out += "; expected under its faults, " + std::string(properties::to_string(d.property)) +
             " in its belief-level form: " + d.demonstration;
    }
  }
  return out;
}

}  // namespace lockstep::traces
