#include "properties/check.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string_view>

#include "properties/scenario.h"
#include "properties/suite.h"

namespace lockstep::properties {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

// Short column headings for the table, in Property order.
constexpr const char* kColumns[kPropertyCount] = {"mutex",  "fenced", "fifo",  "live",
                                                  "orphan", "herd",   "reent", "tmout"};

const char* kUsage =
    "usage: lockstep check [--recipe NAME]... [--seeds N] [--seed S] [--faults LIST]\n"
    "                      [--jobs N] [--json] [--log] [--trace-dir DIR | --no-traces]\n"
    "                      [--no-shrink]\n"
    "  Runs every recipe and broken variant (or each --recipe) through the property suite in\n"
    "  the simulator. A correct recipe must pass every property it claims; a broken variant\n"
    "  must be caught by its expected property.\n"
    "  --recipe NAME  check only this recipe (repeatable; `lockstep list` names them)\n"
    "  --seeds N      seeds per recipe (default 100)\n"
    "  --seed S       run only seed S and print its scenario, verdicts and history\n"
    "  --faults LIST  comma-separated fault kinds to draw from: connection-loss, lost-reply,\n"
    "                 expire, abandon, pause, partition, delay, lagging-follower,\n"
    "                 server-restart, cancel, foreign-child, crash, close (or none)\n"
    "  --jobs N       split the recipes over N worker processes (default 1)\n"
    "  --json         one JSON object: {results: [...], seeds_per_second}; a result's\n"
    "                 `trace` is the saved trace of its first failing seed (or null)\n"
    "  --log          with --seed: also print the simulator's event log\n"
    "  --trace-dir DIR  save the trace of every failing seed under DIR (default\n"
    "                 traces/failures, created when needed; files are never replaced):\n"
    "                 `./lockstep replay FILE` re-runs it, `./lockstep show FILE` draws it;\n"
    "                 the seed's scenario is shrunk first (fewer faults, clients, rounds)\n"
    "                 while the same property stays violated\n"
    "  --no-shrink    save the failing seeds' scenarios as they ran, unshrunk\n"
    "  --no-traces    save no traces\n"
    "  --real | --ensemble  the same table against a real ZooKeeper server (standalone or a\n"
    "                 3-server ensemble) that the command starts on 127.0.0.1; see\n"
    "                 `lockstep check --real --help`\n"
    "exit: 0 every recipe as expected, 1 a correct recipe failed or a broken variant was not\n"
    "caught, 2 usage error (also: a trace directory that cannot be created)\n";

bool parse_u64(std::string_view s, uint64_t min, uint64_t max, uint64_t* out) {
  if (s.empty() || s.size() > 19) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v < min || v > max) return false;
  *out = v;
  return true;
}

std::string repro(const std::string& recipe, uint64_t seed) {
  return "./lockstep check --recipe " + recipe + " --seed " + std::to_string(seed);
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

std::string cell(const PropertyResult& p) {
  if (p.seed) return "seed " + std::to_string(*p.seed);
  return p.judged == 0 ? "-" : "pass";
}

void print_table(const std::vector<RecipeResult>& results, std::ostream& out) {
  size_t width = 6;
  for (const RecipeResult& r : results) width = std::max(width, r.recipe.size());
  char buf[64];
  out << std::string("recipe") + std::string(width - 6 + 2, ' ') << "expected ";
  for (const char* c : kColumns) {
    std::snprintf(buf, sizeof buf, "%-10s", c);
    out << buf;
  }
  out << "result\n";
  for (const RecipeResult& r : results) {
    out << r.recipe << std::string(width - r.recipe.size() + 2, ' ');
    std::snprintf(buf, sizeof buf, "%-9s", recipes::to_string(r.expected));
    out << buf;
    for (const PropertyResult& p : r.properties) {
      std::snprintf(buf, sizeof buf, "%-10s", cell(p).c_str());
      out << buf;
    }
    if (r.expected == recipes::Expected::kCorrect) {
      out << (r.as_expected() ? "ok" : "FAILED");
    } else if (r.as_expected()) {
      out << "caught";
    } else {
      out << "NOT CAUGHT";
    }
    out << "\n";
  }
  out << "columns: ";
  for (int i = 0; i < kPropertyCount; ++i) {
    out << (i ? ", " : "") << kColumns[i] << "=" << to_string(static_cast<Property>(i));
  }
  out << "; pass = held in every seed where it applies, - = not judged, seed S = first "
         "violating seed\n";
}

void print_failures(const std::vector<RecipeResult>& results, const CheckOptions& o,
                    std::ostream& out) {
  for (const RecipeResult& r : results) {
    for (int i = 0; i < kPropertyCount; ++i) {
      const PropertyResult& p = r.properties[i];
      if (!p.seed) continue;
      const bool expected_hit = r.expected == recipes::Expected::kBroken &&
                                (!r.must_violate || *r.must_violate == static_cast<Property>(i));
      out << (expected_hit                               ? "caught   "
              : r.expected == recipes::Expected::kBroken ? "also     "
                                                         : "VIOLATED ")
          << r.recipe << " " << to_string(static_cast<Property>(i)) << " at seed " << *p.seed
          << ": " << first_line(p.message) << "\n  reproduce: " << repro(r.recipe, *p.seed) << "\n";
      if (auto t = r.traces.find(*p.seed); t != r.traces.end()) {
        out << "  trace:     " << t->second << "\n  replay:    ./lockstep replay " << t->second
            << "\n  show:      ./lockstep show " << t->second << "\n";
      }
    }
    if (r.expected == recipes::Expected::kBroken && !r.as_expected()) {
      out << "NOT CAUGHT " << r.recipe << ": "
          << (r.must_violate ? to_string(*r.must_violate) : "no property")
          << " was never violated in " << r.seeds_run << " seeds"
          << (o.seed ? "" : " (try --seeds " + std::to_string(o.seeds * 10) + ")") << "\n";
    }
  }
  const bool saved = std::any_of(results.begin(), results.end(),
                                 [](const RecipeResult& r) { return !r.traces.empty(); });
  if (saved && o.shrink_traces) {
    out << "(each trace holds its seed's scenario shrunk to the fewest faults, clients and rounds "
           "that still violate the property; --no-shrink saves it as run)\n";
  }
}

nlohmann::json to_json(const std::vector<RecipeResult>& results, double seeds_per_second) {
  nlohmann::json rs = nlohmann::json::array();
  for (const RecipeResult& r : results) {
    nlohmann::json props = nlohmann::json::object();
    for (int i = 0; i < kPropertyCount; ++i) {
      const PropertyResult& p = r.properties[i];
      props[to_string(static_cast<Property>(i))] =
          p.seed ? "violated" : (p.judged == 0 ? "not-judged" : "pass");
    }
    nlohmann::json j;
    j["recipe"] = r.recipe;
    j["expected"] = recipes::to_string(r.expected);
    j["verdict"] = r.violated() ? "violated" : "pass";
    j["as_expected"] = r.as_expected();
    j["expected_violation"] =
        r.must_violate ? nlohmann::json(to_string(*r.must_violate)) : nlohmann::json(nullptr);
    j["properties"] = props;
    const std::optional<uint64_t> seed = r.first_failing_seed();
    j["seed"] = seed ? nlohmann::json(*seed) : nlohmann::json(nullptr);
    j["reproduce"] = seed ? nlohmann::json(repro(r.recipe, *seed)) : nlohmann::json(nullptr);
    j["seeds_run"] = r.seeds_run;
    const auto trace = seed ? r.traces.find(*seed) : r.traces.end();
    j["trace"] = trace != r.traces.end() ? nlohmann::json(trace->second) : nlohmann::json(nullptr);
    rs.push_back(std::move(j));
  }
  nlohmann::json doc;
  doc["results"] = std::move(rs);
  doc["seeds_per_second"] = seeds_per_second;
  return doc;
}

// Saves a trace for every distinct failing seed of every result, in order (deterministic
// whatever --jobs was). A trace that cannot be written is reported on `err`; the verdicts stand.
void save_traces(const std::vector<const recipes::RecipeInfo*>& todo, const CheckOptions& o,
                 const TraceSaver& save_trace, std::vector<RecipeResult>* results,
                 std::ostream& err) {
  if (!save_trace || !o.save_traces) return;
  for (size_t i = 0; i < todo.size(); ++i) {
    RecipeResult& r = (*results)[i];
    for (int k = 0; k < kPropertyCount; ++k) {
      const PropertyResult& p = r.properties[k];
      if (!p.seed || r.traces.count(*p.seed) != 0) continue;
      FailingSeed f;
      f.recipe = todo[i];
      f.seed = *p.seed;
      f.faults = o.faults;
      // A broken variant's trace keeps the property it must be caught by, when violated there.
      f.property = static_cast<Property>(k);
      if (r.must_violate && r.properties[static_cast<int>(*r.must_violate)].seed == p.seed) {
        f.property = r.must_violate;
      }
      f.dir = o.trace_dir;
      f.shrink = o.shrink_traces;
      std::string error;
      const std::string path = save_trace(f, &error);
      if (path.empty()) {
        err << "lockstep check: the trace of " << r.recipe << " seed " << *p.seed
            << " was not saved: " << error << "\n";
        continue;
      }
      r.traces[*p.seed] = path;
    }
  }
}

// --seed S: the full report of one seed for each selected recipe.
int run_single(const std::vector<const recipes::RecipeInfo*>& todo, const CheckOptions& o,
               const TraceSaver& save_trace, std::ostream& out, std::ostream& err) {
  bool all_expected = true;
  std::vector<RecipeResult> results;
  for (const recipes::RecipeInfo* r : todo) {
    const Claims claims = claims_for(*r);
    const SeedOutcome so = run_seed(*r, claims, *o.seed, o.faults, o.event_log);
    if (!o.json) {
      out << report(*r, so);
      if (o.event_log) out << "\nsimulator event log:\n" << so.run.event_log;
      out << "\n";
    }
    RecipeResult rr = check_recipe(*r, o, nullptr);
    all_expected = all_expected && rr.as_expected();
    results.push_back(std::move(rr));
  }
  save_traces(todo, o, save_trace, &results, err);
  if (o.json) {
    out << to_json(results, 0).dump(2) << "\n";
  } else {
    print_failures(results, o, out);
  }
  return all_expected ? kExitOk : kExitFailure;
}

}  // namespace

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
  if (expected == recipes::Expected::kCorrect) return !violated();
  if (must_violate) return properties[static_cast<int>(*must_violate)].seed.has_value();
  return violated();
}

std::optional<CheckOptions> parse_check_args(int argc, char** argv, std::ostream& err) {
  CheckOptions o;
  auto fail = [&](const std::string& msg) -> std::optional<CheckOptions> {
    err << "lockstep check: " << msg << "\n(run `lockstep check --help` for usage)\n";
    return std::nullopt;
  };
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool has_value = false;
    if (const size_t eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    auto take = [&]() -> bool {
      if (has_value) return true;
      if (i + 1 >= argc) return false;
      value = argv[++i];
      return true;
    };
    const bool boolean = arg == "--json" || arg == "--log" || arg == "--no-traces" ||
                         arg == "--no-shrink" || arg == "--help" || arg == "-h";
    if (boolean && has_value) return fail("flag " + arg + " takes no value");
    if (arg == "--help" || arg == "-h") {
      err << kUsage;
      return std::nullopt;
    } else if (arg == "--json") {
      o.json = true;
    } else if (arg == "--log") {
      o.event_log = true;
    } else if (arg == "--no-traces") {
      o.save_traces = false;
    } else if (arg == "--no-shrink") {
      o.shrink_traces = false;
    } else if (arg == "--trace-dir") {
      if (!take() || value.empty()) return fail("--trace-dir needs a directory");
      o.trace_dir = value;
    } else if (arg == "--recipe") {
      if (!take()) return fail("--recipe needs a NAME");
      if (recipes::find_recipe(value) == nullptr) {
        std::string known;
        for (const recipes::RecipeInfo& r : recipes::registry()) known += " " + r.name;
        return fail("unknown recipe '" + value + "'; known:" + known);
      }
      o.recipes.push_back(value);
    } else if (arg == "--seeds") {
      if (!take() || !parse_u64(value, 1, 100000000, &o.seeds)) {
        return fail("--seeds needs a number in [1, 100000000], got '" + value + "'");
      }
    } else if (arg == "--seed") {
      uint64_t s = 0;
      if (!take() || !parse_u64(value, 0, UINT64_MAX / 2, &s)) {
        return fail("--seed needs a non-negative number, got '" + value + "'");
      }
      o.seed = s;
    } else if (arg == "--jobs") {
      uint64_t j = 0;
      if (!take() || !parse_u64(value, 1, 256, &j)) {
        return fail("--jobs needs a number in [1, 256], got '" + value + "'");
      }
      o.jobs = static_cast<uint32_t>(j);
    } else if (arg == "--faults") {
      if (!take()) return fail("--faults needs a comma-separated LIST");
      if (value == "none") {
        // An impossible restriction that leaves no kind: encoded as a set with every kind
        // removed, which the generator reads as "no faults".
        o.faults.clear();
        o.faults.insert(static_cast<sim::FaultKind>(255));
        continue;
      }
      size_t start = 0;
      while (start <= value.size()) {
        const size_t comma = std::min(value.find(',', start), value.size());
        const std::string name = value.substr(start, comma - start);
        sim::FaultKind k;
        if (!parse_fault_name(name, &k)) {
          std::string known;
          for (sim::FaultKind f : all_fault_kinds()) known += std::string(" ") + fault_name(f);
          return fail("unknown fault kind '" + name + "'; known:" + known + " (or none)");
        }
        o.faults.insert(k);
        start = comma + 1;
      }
    } else {
      return fail("unknown argument '" + arg + "'");
    }
  }
  return o;
}

RecipeResult empty_result(const recipes::RecipeInfo& recipe) {
  RecipeResult rr;
  rr.recipe = recipe.name;
  rr.expected = recipe.expected;
  rr.must_violate = claims_for(recipe).must_violate;
  return rr;
}

RecipeResult check_recipe(const recipes::RecipeInfo& recipe, const CheckOptions& o,
                          std::ostream* progress) {
  const Claims claims = claims_for(recipe);
  RecipeResult rr = empty_result(recipe);
  const uint64_t first = o.seed ? *o.seed : 1;
  const uint64_t count = o.seed ? 1 : o.seeds;
  for (uint64_t seed = first; seed < first + count; ++seed) {
    const SeedOutcome so = run_seed(recipe, claims, seed, o.faults);
    ++rr.seeds_run;
    rr.requests += so.run.requests;
    for (const Verdict& v : so.verdicts) {
      PropertyResult& p = rr.properties[static_cast<int>(v.property)];
      ++p.judged;
      if (!v.ok && !p.seed) {
        p.seed = seed;
        p.message = v.message;
      }
    }
    if (progress != nullptr && (seed - first) % 16 == 0) {
      *progress << "\r  checking " << recipe.name << "  " << (seed - first + 1) << "/" << count
                << "   " << std::flush;
    }
    if (recipe.expected == recipes::Expected::kBroken && rr.as_expected()) break;
  }
  return rr;
}

int check_main(int argc, char** argv, std::ostream& out, std::ostream& err, bool interactive,
               const TraceSaver& save_trace) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--help" || a == "-h") {
      out << kUsage;
      return kExitOk;
    }
  }
  std::optional<CheckOptions> parsed = parse_check_args(argc, argv, err);
  if (!parsed) return kExitUsage;
  CheckOptions o = std::move(*parsed);
  o.interactive = interactive;
  std::vector<const recipes::RecipeInfo*> todo;
  if (o.recipes.empty()) {
    for (const recipes::RecipeInfo& r : recipes::registry()) todo.push_back(&r);
  } else {
    for (const std::string& name : o.recipes) todo.push_back(recipes::find_recipe(name));
  }
  if (save_trace && o.save_traces) {
    // Found before any seed runs, not after minutes of checking.
    if (const std::string problem = host_dir_problem(o.trace_dir); !problem.empty()) {
      err << "lockstep check: cannot save failure traces in '" << o.trace_dir << "': " << problem
          << "\n  fix: pass --trace-dir DIR with a directory you can write (it is created when "
             "needed), or --no-traces\n";
      return kExitUsage;
    }
  }
  if (o.seed) return run_single(todo, o, save_trace, out, err);

  std::ostream* progress = o.interactive && !o.json ? &err : nullptr;
  const double t0 = host_seconds();
  const double cpu0 = host_cpu_seconds();
  std::vector<RecipeResult> results = check_recipes_forked(todo, o, progress);
  const double elapsed = host_seconds() - t0;
  const double cpu = host_cpu_seconds() - cpu0;
  if (progress != nullptr) *progress << "\r" << std::string(60, ' ') << "\r" << std::flush;
  save_traces(todo, o, save_trace, &results, err);
  uint64_t seeds = 0;
  uint64_t requests = 0;
  bool all_expected = true;
  for (const RecipeResult& r : results) {
    seeds += r.seeds_run;
    requests += r.requests;
    all_expected = all_expected && r.as_expected();
  }
  const double per_second = elapsed > 0 ? static_cast<double>(seeds) / elapsed : 0;
  const double per_cpu_second = cpu > 0 ? static_cast<double>(seeds) / cpu : 0;
  if (o.json) {
    nlohmann::json doc = to_json(results, per_second);
    doc["seeds_per_cpu_second"] = per_cpu_second;
    out << doc.dump(2) << "\n";
  } else {
    print_table(results, out);
    out << "\n";
    print_failures(results, o, out);
    char buf[300];
    std::snprintf(buf, sizeof buf,
                  "\n%zu recipes, %llu scenarios (%llu simulated requests) in %.2fs with %u "
                  "job(s): %.0f scenarios/s; %.2f CPU-s, %.0f scenarios per CPU-second\n",
                  results.size(), static_cast<unsigned long long>(seeds),
                  static_cast<unsigned long long>(requests), elapsed, o.jobs, per_second, cpu,
                  per_cpu_second);
    out << buf;
    out << (all_expected ? "every recipe behaved as expected\n"
                         : "FAILED: a correct recipe failed or a broken variant was not caught\n");
  }
  return all_expected ? kExitOk : kExitFailure;
}

}  // namespace lockstep::properties
