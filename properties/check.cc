#include "properties/check.h"

#include <algorithm>
#include <ostream>
#include <set>

#include "properties/scenario.h"
#include "zk/invariant.h"

namespace lockstep::properties {
namespace {

// A violated REQUIRES of this engine is a programmer error: reported and aborted in every build.
void require(bool ok, const char* what) {
  LOCKSTEP_ASSERT_MSG(ok, std::string("lockstep check: ") + what);
}

// One impossible kind past the table: a restriction that leaves the generators nothing to draw.
constexpr auto kNoFaultKind = static_cast<sim::FaultKind>(255);

}  // namespace

std::string faults_flag(const std::set<sim::FaultKind>& faults) {
  if (faults.empty()) return "";
  std::string list;
  for (sim::FaultKind k : faults) {
    if (k == kNoFaultKind) return " --faults none";
    list += (list.empty() ? "" : ",") + std::string(fault_name(k));
  }
  return " --faults " + list;
}

uint64_t CheckOptions::count(recipes::Expected expected) const {
  if (seed) return 1;
  return expected == recipes::Expected::kBroken ? std::max(seeds, min_broken_seeds) : seeds;
}

std::set<sim::FaultKind> CheckOptions::fault_restriction() const {
  if (no_faults) return {kNoFaultKind};
  return faults;
}

bool RecipeResult::violated() const {
  return std::any_of(std::begin(properties), std::end(properties),
                     [](const PropertyResult& p) { return p.seed.has_value(); });
}

std::optional<uint64_t> RecipeResult::first_failing_seed() const {
  std::optional<uint64_t> best;
  for (const PropertyResult& p : properties) {
    if (p.seed && (!best || *p.seed < *best)) best = p.seed;
  }
  return best;
}

bool RecipeResult::as_expected() const {
  if (!error.empty()) return false;
  if (!unsupported.empty()) return true;
  if (expected == recipes::Expected::kCorrect) return !violated();
  if (must_violate) return properties[static_cast<int>(*must_violate)].seed.has_value();
  return violated();
}

bool RecipeResult::search_over() const {
  if (!error.empty() || !unsupported.empty()) return true;
  return expected == recipes::Expected::kBroken && as_expected();
}

const char* RecipeResult::verdict() const {
  if (!error.empty()) return "error";
  if (!unsupported.empty()) return "not-provokable";
  return violated() ? "violated" : "pass";
}

std::string CheckBackend::unsupported(const recipes::RecipeInfo&, const Claims&) const {
  return "";
}

bool SimBackend::run(const recipes::RecipeInfo& recipe, const Claims& claims, uint64_t seed,
                     const std::set<sim::FaultKind>& faults, SeedOutcome* out, std::string*) {
  *out =
      run_seed(recipe, claims, seed, faults, keep_event_log_ ? Keep::kEventLog : Keep::kVerdicts);
  return true;
}

RecipeResult empty_result(const recipes::RecipeInfo& recipe) {
  RecipeResult rr;
  rr.recipe = recipe.name;
  rr.expected = recipe.expected;
  const Claims claims = claims_for(recipe);
  rr.must_violate = claims.must_violate;
  rr.claimed = claims.properties;
  return rr;
}

RecipeResult check_seeds(const recipes::RecipeInfo& recipe, uint64_t first, uint64_t count,
                         const std::set<sim::FaultKind>& faults, CheckBackend& backend,
                         const OutcomeSink& sink) {
  const Claims claims = claims_for(recipe);
  RecipeResult rr = empty_result(recipe);
  rr.first_seed = first;
  rr.unsupported = backend.unsupported(recipe, claims);
  if (!rr.unsupported.empty()) return rr;
  for (uint64_t seed = first; seed < first + count && !backend.stopped(); ++seed) {
    // An invariant of the simulator or a checker that fires in this seed prints how to rerun it.
    const InvariantContext context([&] {
      return "reproduce: ./lockstep check --recipe " + recipe.name + " --seed " +
             std::to_string(seed) + faults_flag(faults);
    });
    SeedOutcome so;
    if (!backend.run(recipe, claims, seed, faults, &so, &rr.error)) break;
    if (sink) sink(recipe, so);
    ++rr.seeds_run;
    rr.requests += so.run.requests;
    for (const Verdict& v : so.verdicts) {
      PropertyResult& p = rr.properties[static_cast<int>(v.property)];
      ++p.judged;
      if (!v.demonstration.empty()) {
        ++p.demonstrated;
        if (!p.demonstration_seed) {
          p.demonstration_seed = seed;
          p.demonstration = v.demonstration;
        }
      }
      if (!v.ok && !p.seed) {
        p.seed = seed;
        p.message = v.message;
        if (backend.keeps_reports() && rr.first_report.empty()) {
          rr.first_report = report(recipe, so);
        }
      }
    }
    if (rr.search_over()) break;
  }
  return rr;
}

RecipeResult check_seeds(const recipes::RecipeInfo& recipe, uint64_t first, uint64_t count,
                         const std::set<sim::FaultKind>& faults) {
  SimBackend sim;
  return check_seeds(recipe, first, count, faults, sim);
}

RecipeResult check_recipe(const recipes::RecipeInfo& recipe, const CheckOptions& o,
                          CheckBackend& backend, std::ostream* progress, const OutcomeSink& sink) {
  const uint64_t first = o.first();
  const uint64_t count = o.count(recipe.expected);
  const std::set<sim::FaultKind> faults = o.fault_restriction();
  if (progress == nullptr) return check_seeds(recipe, first, count, faults, backend, sink);
  // A few seeds at a time, so the progress line moves (the result is the same: append_seeds).
  const uint64_t chunk = std::max<uint64_t>(1, std::min<uint64_t>(16, count / 64));
  RecipeResult rr = empty_result(recipe);
  rr.first_seed = first;
  while (rr.seeds_run < count && !rr.search_over() && !backend.stopped()) {
    *progress << "\r  checking " << recipe.name << "  " << rr.seeds_run << "/" << count << "   "
              << std::flush;
    RecipeResult next = check_seeds(recipe, first + rr.seeds_run,
                                    std::min(count - rr.seeds_run, chunk), faults, backend, sink);
    const std::string unsupported = std::move(next.unsupported);
    const std::string error = std::move(next.error);
    next.unsupported.clear();
    next.error.clear();
    append_seeds(&rr, next);
    rr.unsupported = unsupported;
    rr.error = error;
    if (next.seeds_run == 0) break;  // declined, failed or stopped
  }
  return rr;
}

RecipeResult check_recipe(const recipes::RecipeInfo& recipe, const CheckOptions& o,
                          std::ostream* progress) {
  SimBackend sim;
  return check_recipe(recipe, o, sim, progress);
}

void append_seeds(RecipeResult* acc, const RecipeResult& next) {
  require(next.first_seed == acc->first_seed + acc->seeds_run, "append_seeds: not the next seeds");
  require(!acc->search_over(), "append_seeds: the search was over");
  require(next.recipe == acc->recipe, "append_seeds: another recipe");
  acc->seeds_run += next.seeds_run;
  acc->requests += next.requests;
  for (int i = 0; i < kPropertyCount; ++i) {
    PropertyResult& p = acc->properties[i];
    p.judged += next.properties[i].judged;
    if (!p.seed && next.properties[i].seed) {
      p.seed = next.properties[i].seed;
      p.message = next.properties[i].message;
    }
    p.demonstrated += next.properties[i].demonstrated;
    if (!p.demonstration_seed && next.properties[i].demonstration_seed) {
      p.demonstration_seed = next.properties[i].demonstration_seed;
      p.demonstration = next.properties[i].demonstration;
    }
  }
  if (acc->first_report.empty()) acc->first_report = next.first_report;
  if (acc->error.empty()) acc->error = next.error;
}

bool complete(const RecipeResult& r, const CheckOptions& o) {
  return r.seeds_run == o.count(r.expected) || r.search_over();
}

std::vector<std::string> save_traces(const std::vector<const recipes::RecipeInfo*>& todo,
                                     const CheckOptions& o, const TraceSaver& save_trace,
                                     std::vector<RecipeResult>* results) {
  std::vector<std::string> errors;
  if (!save_trace || !o.save_traces) return errors;
  for (size_t i = 0; i < todo.size() && i < results->size(); ++i) {
    RecipeResult& r = (*results)[i];
    // Saves `f` (its recipe, seed and the run's fault restriction filled in here) once per seed.
    std::set<uint64_t> tried;  // a seed that violates several properties is saved once
    auto save = [&](FailingSeed f) {
      if (!tried.insert(f.seed).second) return;
      f.recipe = todo[i];
      f.faults = o.fault_restriction();
      f.dir = o.trace_dir;
      std::string error;
      const std::string path = save_trace(f, &error);
      if (path.empty()) {
        errors.push_back("the trace of " + r.recipe + " seed " + std::to_string(f.seed) +
                         " was not saved: " + error);
        return;
      }
      r.traces[f.seed] = path;
    };
    for (int k = 0; k < kPropertyCount; ++k) {
      const PropertyResult& p = r.properties[k];
      if (!p.seed) continue;
      FailingSeed f;
      f.seed = *p.seed;
      // A broken variant's trace keeps the property it must be caught by, when violated there.
      f.property = static_cast<Property>(k);
      if (r.must_violate && r.properties[static_cast<int>(*r.must_violate)].seed == p.seed) {
        f.property = r.must_violate;
      }
      f.shrink = o.shrink_traces;
      save(f);
    }
    // The first demonstration of each property, as run (nothing is violated to shrink toward).
    for (const PropertyResult& p : r.properties) {
      if (!p.demonstration_seed) continue;
      FailingSeed f;
      f.seed = *p.demonstration_seed;
      f.shrink = false;
      f.demonstration = true;
      save(f);
    }
  }
  return errors;
}

}  // namespace lockstep::properties
