// `lockstep check`: see cli/check.h.
#include <algorithm>
#include <cstdio>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/check.h"
#include "properties/scenario.h"
#include "traces/record.h"
#ifdef LOCKSTEP_HAVE_REAL
#include "properties/host_progress.h"
#include "properties/real_backend.h"
#include "real/check_support.h"
#include "real/server.h"
#endif

namespace lockstep::cli {
namespace {

using properties::column_name;
using properties::CheckOptions;
using properties::kPropertyCount;
using properties::Property;
using properties::PropertyResult;
using properties::RecipeResult;
using properties::to_string;

constexpr uint64_t kMaxSeed = std::numeric_limits<uint64_t>::max() / 2;
#ifdef LOCKSTEP_HAVE_REAL
constexpr uint64_t kRealDefaultSeeds = properties::kRealDefaultSeeds;
#else
constexpr uint64_t kRealDefaultSeeds = 3;
#endif

// Where the seeds run: the simulator, one real server, or a real 3-server ensemble.
enum class Where { kSimulator, kStandalone, kEnsemble };

const char* backend_name(Where w) {
  switch (w) {
    case Where::kSimulator: return "simulator";
    case Where::kStandalone: return "standalone";
    case Where::kEnsemble: return "ensemble";
  }
  return "simulator";
}

// What one run of the command was asked, beyond the engine's options.
struct Request {
  CheckOptions o;
  Where where = Where::kSimulator;
  bool json = false;
  bool event_log = false;
};

// The command that reruns `seed` of `recipe` as this run ran it.
std::string repro(const Request& rq, const std::string& recipe, uint64_t seed) {
  std::string cmd = rq.o.program + " check";
  if (rq.where == Where::kStandalone) cmd += " --real";
  if (rq.where == Where::kEnsemble) cmd += " --ensemble";
  return cmd + " --recipe " + recipe + " --seed " + std::to_string(seed) +
         properties::faults_flag(rq.o.fault_restriction());
}

// The verdict column: an interrupted recipe is "stopped" unless a correct one already failed.
const char* outcome(const RecipeResult& r, const CheckOptions& o) {
  const bool correct = r.expected == recipes::Expected::kCorrect;
  if (!r.error.empty()) return "ERROR";
  if (!r.unsupported.empty()) return "not provokable";
  if (correct && r.violated()) return "FAILED";
  if (!properties::complete(r, o)) return "stopped";
  if (correct) return "ok";
  return r.as_expected() ? "caught" : "NOT CAUGHT";
}

// "seed S", "pass", "-" (claimed, but no seed judged it: its faults excluded it) or
// "unclaimed" (the recipe's registration does not claim it).
std::string cell(const RecipeResult& r, Property property) {
  const PropertyResult& p = r.properties[static_cast<int>(property)];
  if (p.seed) return "seed " + std::to_string(*p.seed);
  if (r.claimed.count(property) == 0) return "unclaimed";
  return p.judged == 0 ? "-" : "pass";
}

void print_table(const std::vector<RecipeResult>& results, const Request& rq, std::ostream& out) {
  size_t width = 6;
  for (const RecipeResult& r : results) width = std::max(width, r.recipe.size());
  char buf[64];
  out << "recipe" << std::string(width - 6 + 2, ' ') << "expected ";
  for (int i = 0; i < kPropertyCount; ++i) {
    std::snprintf(buf, sizeof buf, "%-10s", column_name(static_cast<Property>(i)));
    out << buf;
  }
  out << "seeds    result\n";
  for (const RecipeResult& r : results) {
    out << r.recipe << std::string(width - r.recipe.size() + 2, ' ');
    std::snprintf(buf, sizeof buf, "%-9s", recipes::to_string(r.expected));
    out << buf;
    for (int i = 0; i < kPropertyCount; ++i) {
      std::snprintf(buf, sizeof buf, "%-10s", cell(r, static_cast<Property>(i)).c_str());
      out << buf;
    }
    std::snprintf(buf, sizeof buf, "%-8llu ", static_cast<unsigned long long>(r.seeds_run));
    out << buf << outcome(r, rq.o) << "\n";
  }
  out << "columns: ";
  for (int i = 0; i < kPropertyCount; ++i) {
    const auto p = static_cast<Property>(i);
    out << (i ? ", " : "") << column_name(p) << "=" << to_string(p);
  }
  out << "; pass = held in every seed where it applies, - = claimed but not judged (the faults "
         "drawn exclude it), unclaimed = the recipe does not claim it"
      << (rq.where == Where::kSimulator ? "" : " (herd: never on a real server)")
      << ", seed S = first violating seed\n";
}

void print_failures(const std::vector<RecipeResult>& results, const Request& rq,
                    std::ostream& out) {
  for (const RecipeResult& r : results) {
    if (!r.error.empty()) out << "ERROR " << r.recipe << ": " << r.error << "\n";
    if (!r.unsupported.empty()) {
      out << "not provokable on a real server: " << r.recipe << " (" << r.unsupported
          << "); the simulator catches it: " << rq.o.program << " check --recipe " << r.recipe
          << "\n";
    }
    for (int i = 0; i < kPropertyCount; ++i) {
      const PropertyResult& p = r.properties[i];
      if (!p.seed) continue;
      const bool expected_hit = r.expected == recipes::Expected::kBroken &&
                                (!r.must_violate || *r.must_violate == static_cast<Property>(i));
      out << (expected_hit                               ? "caught   "
              : r.expected == recipes::Expected::kBroken ? "also     "
                                                         : "VIOLATED ")
          << r.recipe << " " << to_string(static_cast<Property>(i)) << " at seed " << *p.seed
          << ": " << p.message.substr(0, p.message.find('\n'))
          << "\n  reproduce: " << repro(rq, r.recipe, *p.seed) << "\n";
      if (auto t = r.traces.find(*p.seed); t != r.traces.end()) {
        out << "  trace:     " << t->second << "\n  replay:    " << rq.o.program << " replay "
            << t->second << "\n  show:      " << rq.o.program << " show " << t->second << "\n";
      }
    }
    for (int i = 0; i < kPropertyCount; ++i) {
      const PropertyResult& p = r.properties[i];
      if (!p.demonstration_seed || r.expected != recipes::Expected::kCorrect) continue;
      const PropertyResult& fenced = r.properties[static_cast<int>(Property::kFencedSafety)];
      out << "expected " << r.recipe << " " << to_string(static_cast<Property>(i)) << " in "
          << p.demonstrated << " seed(s), as its faults excuse (not a failure), first at seed "
          << *p.demonstration_seed << ": "
          << p.demonstration.substr(0, p.demonstration.find('\n')) << "\n"
          << (fenced.judged > 0 && !fenced.seed
                  ? "  fenced-safety held in every seed: the resource rejected the stale holder\n"
                  : "")
          << "  reproduce: " << repro(rq, r.recipe, *p.demonstration_seed) << "\n";
      if (auto t = r.traces.find(*p.demonstration_seed); t != r.traces.end()) {
        out << "  trace:     " << t->second << "\n  show:      " << rq.o.program << " show "
            << t->second << "\n";
      }
    }
    if (r.expected == recipes::Expected::kBroken && r.error.empty() && !r.as_expected() &&
        properties::complete(r, rq.o)) {
      out << "NOT CAUGHT " << r.recipe << ": "
          << (r.must_violate ? to_string(*r.must_violate) : "no property")
          << " was never violated in " << r.seeds_run << " seeds"
          << (rq.o.seed ? "" : " (try --seeds " + std::to_string(r.seeds_run * 10) + ")") << "\n";
    }
  }
  const bool saved = std::any_of(results.begin(), results.end(), [](const RecipeResult& r) {
    return std::any_of(std::begin(r.properties), std::end(r.properties),
                       [&](const PropertyResult& p) { return p.seed && r.traces.count(*p.seed); });
  });
  if (saved && rq.o.shrink_traces) {
    out << "(each trace holds its seed's run shrunk while the property stays violated: the "
           "fewest faults, clients and rounds, then the fewest scheduling choices off the "
           "default; --no-shrink saves it as run)\n";
  }
  // A real server's seed does not reproduce its schedule: the report is all there is.
  for (const RecipeResult& r : results) {
    if (!rq.o.seed && !r.first_report.empty() && r.expected == recipes::Expected::kCorrect) {
      out << "\n" << r.first_report;
    }
  }
}

nlohmann::json or_null(const std::string& s) {
  return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
}

// The one JSON schema of both backends (cli/check.h).
nlohmann::json to_json(const std::vector<RecipeResult>& results, const Request& rq,
                       const std::string& server, double seconds, double cpu_seconds,
                       bool interrupted) {
  nlohmann::json rs = nlohmann::json::array();
  uint64_t seeds = 0;
  for (const RecipeResult& r : results) {
    seeds += r.seeds_run;
    nlohmann::json props = nlohmann::json::object();
    for (int i = 0; i < kPropertyCount; ++i) {
      const PropertyResult& p = r.properties[i];
      const auto property = static_cast<Property>(i);
      props[to_string(property)] = p.seed                            ? "violated"
                                   : r.claimed.count(property) == 0 ? "not-claimed"
                                   : p.judged == 0                  ? "not-judged"
                                                                    : "pass";
    }
    nlohmann::json j;
    j["recipe"] = r.recipe;
    j["expected"] = recipes::to_string(r.expected);
    j["verdict"] = r.verdict();
    j["as_expected"] = r.as_expected();
    j["expected_violation"] =
        r.must_violate ? nlohmann::json(to_string(*r.must_violate)) : nlohmann::json(nullptr);
    j["properties"] = props;
    // What the faults excuse, shown, not failed (PropertyResult::demonstrated).
    nlohmann::json demos = nlohmann::json::object();
    for (int i = 0; i < kPropertyCount; ++i) {
      const PropertyResult& p = r.properties[i];
      if (!p.demonstration_seed) continue;
      demos[to_string(static_cast<Property>(i))] = {
          {"seeds", p.demonstrated},
          {"first_seed", *p.demonstration_seed},
          {"message", p.demonstration},
          {"trace", or_null(r.traces.count(*p.demonstration_seed) != 0
                                ? r.traces.at(*p.demonstration_seed)
                                : std::string())}};
    }
    j["demonstrations"] = demos;
    const std::optional<uint64_t> seed = r.first_failing_seed();
    j["seed"] = seed ? nlohmann::json(*seed) : nlohmann::json(nullptr);
    j["reproduce"] = seed ? nlohmann::json(repro(rq, r.recipe, *seed)) : nlohmann::json(nullptr);
    j["first_seed"] = r.first_seed;
    j["last_seed"] =
        r.seeds_run > 0 ? nlohmann::json(r.first_seed + r.seeds_run - 1) : nlohmann::json(nullptr);
    j["seeds_run"] = r.seeds_run;
    j["complete"] = properties::complete(r, rq.o);
    const auto trace = seed ? r.traces.find(*seed) : r.traces.end();
    j["trace"] = trace != r.traces.end() ? nlohmann::json(trace->second) : nlohmann::json(nullptr);
    j["not_provokable_reason"] = or_null(r.unsupported);
    j["error"] = or_null(r.error);
    rs.push_back(std::move(j));
  }
  nlohmann::json doc;
  doc["backend"] = backend_name(rq.where);
  doc["server"] = or_null(server);
  const uint64_t first = rq.o.first();
  doc["first_seed"] = first;
  doc["last_seed"] = rq.o.seed ? first : first + rq.o.seeds - 1;
  doc["interrupted"] = interrupted;
  doc["seconds"] = seconds;
  doc["seeds_per_second"] = seconds > 0 ? static_cast<double>(seeds) / seconds : 0.0;
  doc["seeds_per_cpu_second"] = cpu_seconds > 0 ? static_cast<double>(seeds) / cpu_seconds : 0.0;
  doc["results"] = std::move(rs);
  return doc;
}

// After an interrupted run: per recipe, the seeds fully run (the verdicts above cover exactly
// those) and the command that goes on from there.
void print_coverage(const std::vector<RecipeResult>& results, const Request& rq,
                    const char* signal, std::ostream& out) {
  const CheckOptions& o = rq.o;
  out << "INTERRUPTED (" << signal << "): the "
      << (rq.where == Where::kSimulator ? "workers were" : "servers were")
      << " stopped; the verdicts above cover, per recipe, only the seeds fully run (of "
      << o.first() << ".." << o.first() + o.seeds - 1 << "):\n";
  size_t width = 6;
  for (const RecipeResult& r : results) width = std::max(width, r.recipe.size());
  for (const RecipeResult& r : results) {
    out << "  " << r.recipe << std::string(width - r.recipe.size() + 2, ' ');
    if (r.seeds_run == 0) {
      out << "no seed fully run";
    } else {
      out << "seeds " << r.first_seed << ".." << r.first_seed + r.seeds_run - 1;
    }
    if (properties::complete(r, o)) {
      out << (r.search_over() ? " (caught: done)\n" : " (done)\n");
      continue;
    }
    std::string go_on = repro(rq, r.recipe, 0);
    go_on.erase(go_on.find(" --seed "));
    out << "  go on: " << go_on << " --first-seed " << r.first_seed + r.seeds_run << " --seeds "
        << o.count(r.expected) - r.seeds_run << properties::faults_flag(o.fault_restriction())
        << "\n";
  }
  out << "no trace was saved; each `reproduce:` line above re-runs its seed\n";
}

void print_summary(const std::vector<RecipeResult>& results, const Request& rq, double seconds,
                   double cpu, const char* interrupted, std::ostream& out) {
  uint64_t seeds = 0;
  uint64_t requests = 0;
  bool all_expected = true;
  for (const RecipeResult& r : results) {
    seeds += r.seeds_run;
    requests += r.requests;
    all_expected = all_expected && r.as_expected();
  }
  char buf[300];
  if (rq.where == Where::kSimulator) {
    const double per_second = seconds > 0 ? static_cast<double>(seeds) / seconds : 0;
    const double per_cpu_second = cpu > 0 ? static_cast<double>(seeds) / cpu : 0;
    std::snprintf(buf, sizeof buf,
                  "\n%zu recipes, %llu scenarios (%llu simulated requests) in %.2fs with %u "
                  "job(s): %.0f scenarios/s; %.2f CPU-s, %.0f scenarios per CPU-second\n",
                  results.size(), static_cast<unsigned long long>(seeds),
                  static_cast<unsigned long long>(requests), seconds, rq.o.jobs, per_second, cpu,
                  per_cpu_second);
  } else {
    std::snprintf(buf, sizeof buf, "\n%zu recipes, %llu scenarios in %.1fs on the %s\n",
                  results.size(), static_cast<unsigned long long>(seeds), seconds,
                  rq.where == Where::kEnsemble ? "3-server ensemble" : "standalone server");
  }
  out << buf;
  if (interrupted != nullptr) {
    print_coverage(results, rq, interrupted, out);
  } else if (all_expected) {
    out << "every recipe behaved as expected"
        << (rq.where == Where::kSimulator ? "" : " on the real server") << "\n";
  } else {
    out << "FAILED: a correct recipe failed, a broken variant was not caught"
        << (rq.where == Where::kSimulator ? "" : ", or the harness failed") << "\n";
  }
}

// Prints the results as the request asks and returns the exit code.
int finish(const std::vector<RecipeResult>& results, const Request& rq, const std::string& server,
           double seconds, double cpu, const char* interrupted, std::ostream& out,
           std::ostream& err) {
  if (rq.json) {
    out << to_json(results, rq, server, seconds, cpu, interrupted != nullptr).dump(2) << "\n";
    if (interrupted != nullptr) {
      err << "lockstep check: interrupted (" << interrupted
          << "); each result covers first_seed..last_seed\n";
    }
  } else {
    if (!rq.o.seed) {
      print_table(results, rq, out);
      out << "\n";
    }
    print_failures(results, rq, out);
    if (!rq.o.seed) print_summary(results, rq, seconds, cpu, interrupted, out);
  }
  if (interrupted != nullptr) return kExitInterrupted;
  const bool all_expected = std::all_of(results.begin(), results.end(),
                                        [](const RecipeResult& r) { return r.as_expected(); });
  return all_expected ? kExitOk : kExitFailure;
}

// The recipes the request names, or the whole registry.
std::vector<const recipes::RecipeInfo*> recipes_of(const CheckOptions& o) {
  std::vector<const recipes::RecipeInfo*> todo;
  if (o.recipes.empty()) {
    for (const recipes::RecipeInfo& r : recipes::registry()) todo.push_back(&r);
  } else {
    for (const std::string& name : o.recipes) todo.push_back(recipes::find_recipe(name));
  }
  return todo;
}

// The flags, checked: a usage error is printed (with how to fix it) and gives nullopt.
std::optional<Request> parse_request(const Command& self, const Args& args, std::ostream& err) {
  Request rq;
  CheckOptions& o = rq.o;
  if (args.has("real") && args.has("ensemble")) {
    usage_error(self, "give either --real or --ensemble, not both", err);
    return std::nullopt;
  }
  rq.where = args.has("ensemble") ? Where::kEnsemble
             : args.has("real")   ? Where::kStandalone
                                  : Where::kSimulator;
  if (rq.where != Where::kSimulator) {
    for (const char* flag : {"jobs", "log", "trace-dir", "no-traces", "no-shrink"}) {
      if (!args.has(flag)) continue;
      usage_error(self, std::string("--") + flag +
                            " is not available with --real/--ensemble (one server; event logs, "
                            "traces and shrinking belong to the simulator)", err);
      return std::nullopt;
    }
  }
  rq.json = args.has("json");
  rq.event_log = args.has("log");
  o.save_traces = !args.has("no-traces");
  o.shrink_traces = !args.has("no-shrink");
  if (args.has("trace-dir")) {
    o.trace_dir = args.get("trace-dir", "");
    if (o.trace_dir.empty()) {
      usage_error(self, "--trace-dir needs a directory", err);
      return std::nullopt;
    }
  }
  for (const std::string& name : args.all("recipe")) {
    if (recipes::find_recipe(name) == nullptr) {
      std::string known;
      for (const recipes::RecipeInfo& r : recipes::registry()) known += " " + r.name;
      usage_error(self, "unknown recipe '" + name + "'; known:" + known, err);
      return std::nullopt;
    }
    o.recipes.push_back(name);
  }
  const uint64_t default_seeds = rq.where == Where::kSimulator ? 100 : kRealDefaultSeeds;
  const auto seeds = parse_uint_flag(self, args, "seeds", default_seeds, 1, 100000000, err);
  const auto first = parse_uint_flag(self, args, "first-seed", 1, 0, kMaxSeed, err);
  const auto seed = parse_uint_flag(self, args, "seed", 0, 0, kMaxSeed, err);
  const auto jobs = parse_uint_flag(self, args, "jobs", 1, 1, 256, err);
  if (!seeds || !first || !seed || !jobs) return std::nullopt;
  o.seeds = *seeds;
  o.first_seed = *first;
  if (args.has("seed")) o.seed = *seed;
  o.jobs = static_cast<uint32_t>(*jobs);
  if (args.has("first-seed") && o.seed) {
    usage_error(self, "--first-seed starts a range of --seeds N and --seed S runs one seed; give "
                      "one", err);
    return std::nullopt;
  }
#ifdef LOCKSTEP_HAVE_REAL
  if (rq.where != Where::kSimulator) o.min_broken_seeds = properties::kRealBrokenSeeds;
#endif
  if (args.has("faults")) {
    const std::string list = args.get("faults", "");
    if (list == "none") {
      o.no_faults = true;
      return rq;
    }
    size_t start = 0;
    while (start <= list.size()) {
      const size_t comma = std::min(list.find(',', start), list.size());
      const std::string name = list.substr(start, comma - start);
      sim::FaultKind k{};
      bool known = properties::parse_fault_name(name, &k);
#ifdef LOCKSTEP_HAVE_REAL
      if (known && rq.where != Where::kSimulator && !properties::real_fault_supported(k)) {
        std::string real;
        for (sim::FaultKind r : properties::real_fault_kinds()) real += " " + std::string(zk::fault_name(r));
        usage_error(self, "fault kind '" + name + "' is simulator-only; on a real server:" + real +
                              " (or none)", err);
        return std::nullopt;
      }
#endif
      if (!known) {
        std::string all;
        for (sim::FaultKind f : properties::all_fault_kinds()) all += " " + std::string(zk::fault_name(f));
        usage_error(self, "unknown fault kind '" + name + "'; known:" + all + " (or none)", err);
        return std::nullopt;
      }
      o.faults.insert(k);
      start = comma + 1;
    }
  }
  return rq;
}

// ---- the simulator ----

int check_in_simulator(const Request& rq, std::ostream& out, std::ostream& err, bool interactive,
                       const properties::TraceSaver& save_trace) {
  const CheckOptions& o = rq.o;
  const std::vector<const recipes::RecipeInfo*> todo = recipes_of(o);
  if (save_trace && o.save_traces) {
    // Found before any seed runs, not after minutes of checking.
    if (const std::string problem = properties::host_dir_problem(o.trace_dir); !problem.empty()) {
      err << "lockstep check: cannot save failure traces in '" << o.trace_dir << "': " << problem
          << "\n  fix: pass --trace-dir DIR with a directory you can write (it is created when "
             "needed), or --no-traces\n";
      return kExitUsage;
    }
  }
  const double t0 = properties::host_seconds();
  const double cpu0 = properties::host_cpu_seconds();
  std::vector<RecipeResult> results;
  const char* interrupted = nullptr;
  if (o.seed) {
    // One seed of each recipe, in this process, with its full report.
    properties::SimBackend sim(rq.event_log);
    const properties::OutcomeSink print = [&](const recipes::RecipeInfo& recipe,
                                              const properties::SeedOutcome& so) {
      if (rq.json) return;
      out << properties::report(recipe, so);
      if (rq.event_log) out << "\nsimulator event log:\n" << so.run.event_log;
      out << "\n";
    };
    for (const recipes::RecipeInfo* r : todo) {
      results.push_back(properties::check_recipe(*r, o, sim, nullptr, print));
    }
  } else {
    properties::HostRun run =
        properties::check_recipes_forked(todo, o, interactive && !rq.json ? &err : nullptr);
    results = std::move(run.results);
    interrupted = run.interrupted;
  }
  const double seconds = properties::host_seconds() - t0;
  const double cpu = properties::host_cpu_seconds() - cpu0;
  // An interrupted run saves nothing: shrinking takes time the user just declined to spend.
  if (interrupted == nullptr) {
    for (const std::string& e : properties::save_traces(todo, o, save_trace, &results)) {
      err << "lockstep check: " << e << "\n";
    }
  }
  return finish(results, rq, "", seconds, cpu, interrupted, out, err);
}

// ---- a real server ----

int check_on_real(const Request& rq, std::ostream& out, std::ostream& err, bool interactive) {
#ifdef LOCKSTEP_HAVE_REAL
  const CheckOptions& o = rq.o;
  const bool ensemble = rq.where == Where::kEnsemble;
  real::ClusterOptions co;
  co.servers = ensemble ? 3 : 1;
  if (std::string missing = real::server_prerequisites(co); !missing.empty()) {
    err << "lockstep check: cannot start a ZooKeeper server: " << missing << "\n";
    return kExitNoServer;
  }
  properties::StopSignals guard;  // the one signal guard (properties/host_progress.h)
  const double t0 = properties::host_seconds();
  std::ostream* progress = interactive && !rq.json ? &err : nullptr;
  if (progress != nullptr) {
    *progress << "starting " << (ensemble ? "a 3-server ZooKeeper ensemble" : "a ZooKeeper server")
              << " on 127.0.0.1..." << std::flush;
  }
  real::Cluster::StartResult started = real::Cluster::start(co);
  if (!started.cluster) {
    err << "\nlockstep check: cannot start a ZooKeeper server: " << started.error << "\n";
    return kExitNoServer;
  }
  std::string server = ensemble ? "ensemble of 3" : "standalone";
  server += " at " + started.cluster->connect_string() + " (pid";
  for (int s = 1; s <= started.cluster->size(); ++s) {
    server += " " + std::to_string(started.cluster->pid(s));
  }
  server += ")";
  if (progress != nullptr) *progress << "\r" << std::string(60, ' ') << "\r" << std::flush;
  if (!rq.json) {
    out << "real ZooKeeper: " << server << "; ";
    if (o.seed) {
      out << "scenario " << *o.seed
          << " (the seed fixes the workload and the fault plan; the schedule belongs to the "
             "real server and may differ from run to run)\n";
    } else {
      out << "scenarios " << o.first() << ".." << o.first() + o.seeds - 1
          << " (broken variants: up to " << o.count(recipes::Expected::kBroken)
          << ", until caught)\n";
    }
  }
  properties::RealBackend backend(started.cluster.get(), ensemble);
  const properties::OutcomeSink print = [&](const recipes::RecipeInfo& recipe,
                                            const properties::SeedOutcome& so) {
    if (o.seed && !rq.json) out << properties::report(recipe, so) << "\n";
  };
  std::vector<RecipeResult> results;
  for (const recipes::RecipeInfo* r : recipes_of(o)) {
    if (backend.stopped()) break;
    results.push_back(properties::check_recipe(*r, o, backend, progress, print));
  }
  if (progress != nullptr) *progress << "\r" << std::string(70, ' ') << "\r" << std::flush;
  const double seconds = properties::host_seconds() - t0;
  started.cluster.reset();  // stops every server by pid and removes its directory
  const char* interrupted = properties::StopSignals::signal_name();
  return finish(results, rq, server, seconds, 0, interrupted, out, err);
#else
  (void)rq;
  (void)out;
  (void)interactive;
  err << "lockstep check: --real/--ensemble need the real ZooKeeper client, which this build "
         "leaves out (the installed lockstep::cli library, or a build configured with "
         "-DLOCKSTEP_REAL=OFF or without libzookeeper-mt-dev)\n";
  return kExitNoServer;
#endif
}

int run_check_command(const Command&, const Args& args, const Io& io) {
  return run_check(args, io.out, io.err, io.interactive, traces::save_check_failure, io.program);
}

}  // namespace

int run_check(const Args& args, std::ostream& out, std::ostream& err, bool interactive,
              const properties::TraceSaver& save_trace, const char* program) {
  std::optional<Request> rq = parse_request(kCheckCommand, args, err);
  if (!rq) return kExitUsage;
  rq->o.program = program;
  if (rq->where == Where::kSimulator) {
    return check_in_simulator(*rq, out, err, interactive, save_trace);
  }
  return check_on_real(*rq, out, err, interactive);
}

const Command kCheckCommand = {
    .name = "check",
    .summary =
        "Check every recipe and broken variant against the property suite (the main job): in "
        "the simulator, or with --real / --ensemble on Debian's ZooKeeper server, started here "
        "on 127.0.0.1. A correct recipe must pass every property it claims; a broken variant "
        "must be caught by its expected property.",
    .positional = "",
    .flags =
        {
            {"recipe", "NAME", "check only this recipe (repeatable; `lockstep list` names them)"},
            {"seeds", "N", "seeds per recipe (default 100; on a real server 3)"},
            {"first-seed", "S", "run seeds S..S+N-1 (default 1)"},
            {"seed", "S", "run only seed S and print its scenario, verdicts and history"},
            {"faults", "LIST",
             "comma-separated fault kinds to draw from (README \"Fault kinds\"), or none"},
            {"jobs", "N",
             "N worker processes (default 1); the output is that of --jobs 1 (simulator)"},
            {"json", "",
             "one JSON object, the same schema on both backends: {backend, server, results, "
             "first_seed, last_seed, interrupted, seconds, seeds_per_second, ...}"},
            {"log", "", "with --seed: also print the simulator's event log"},
            {"trace-dir", "DIR",
             "save every failing seed's trace, shrunk, under DIR (default traces/failures)"},
            {"no-traces", "", "save no traces"},
            {"no-shrink", "", "save the failing seeds' scenarios as they ran, unshrunk"},
            {"real", "",
             "run on one real ZooKeeper server started on 127.0.0.1 (needs java and the "
             "zookeeper package; herd-freedom is not judged there)"},
            {"ensemble", "", "run on a real 3-server ensemble started on 127.0.0.1"},
        },
    .run = run_check_command,
    .details =
        "exit: 0 every recipe behaved as expected (a variant a real server cannot provoke does\n"
        "      not fail the run), 1 a correct recipe failed, a broken variant was not caught or\n"
        "      the real harness failed, 2 usage error, 3 no server can be started (--real,\n"
        "      --ensemble), 130 interrupted (the verdicts cover the seeds fully run)\n",
};

}  // namespace lockstep::cli
