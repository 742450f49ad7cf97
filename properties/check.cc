#include "properties/check.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string_view>

#include "properties/scenario.h"
#include "properties/suite.h"
#include "zk/invariant.h"

namespace lockstep::properties {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;
constexpr int kExitInterrupted = 130;

// Short column headings for the table, in Property order.
constexpr const char* kColumns[kPropertyCount] = {"mutex",  "fenced", "fifo",  "live",
                                                  "orphan", "herd",   "reent", "tmout"};

const char* kUsage =
    "usage: lockstep check [--recipe NAME]... [--seeds N] [--first-seed S] [--seed S]\n"
    "                      [--faults LIST] [--jobs N] [--json] [--log]\n"
    "                      [--trace-dir DIR | --no-traces] [--no-shrink]\n"
    "  Runs every recipe and broken variant (or each --recipe) through the property suite in\n"
    "  the simulator. A correct recipe must pass every property it claims; a broken variant\n"
    "  must be caught by its expected property.\n"
    "  --recipe NAME  check only this recipe (repeatable; `lockstep list` names them)\n"
    "  --seeds N      seeds per recipe (default 100)\n"
    "  --first-seed S run seeds S..S+N-1 (default 1)\n"
    "  --seed S       run only seed S and print its scenario, verdicts and history\n"
    "  --faults LIST  comma-separated fault kinds to draw from: connection-loss, lost-reply,\n"
    "                 expire, abandon, pause, partition, delay, lagging-follower,\n"
    "                 server-restart, cancel, foreign-child, crash, close (or none)\n"
    "  --jobs N       N worker processes (default 1); each recipe's seeds are cut into\n"
    "                 chunks the workers share, and the results are those of --jobs 1\n"
    "  --json         one JSON object: {results: [...], first_seed, last_seed, interrupted,\n"
    "                 seeds_per_second}; a result carries the seeds it covered (first_seed,\n"
    "                 last_seed, seeds_run), its `reproduce` command and `trace`, the saved\n"
    "                 trace of its first failing seed (or null)\n"
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
    "  On a terminal a progress line (seeds done, seeds/s, time left) is kept on stderr.\n"
    "  Ctrl-C (SIGINT) or SIGTERM stops the workers and prints, for each recipe, the seed range\n"
    "  that was fully run and the verdicts over it (no trace is saved), and how to go on.\n"
    "exit: 0 every recipe as expected, 1 a correct recipe failed or a broken variant was not\n"
    "caught, 2 usage error (also: a trace directory that cannot be created), 130 interrupted\n";

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

// The --faults flag that restricts scenarios as `faults` does ("" when it does not).
std::string faults_flag(const std::set<sim::FaultKind>& faults) {
  if (faults.empty()) return "";
  std::string list;
  for (sim::FaultKind k : faults) {
    // parse_check_args encodes `--faults none` as one kind past the table.
    if (static_cast<int>(k) >= zk::kFaultKindCount) return " --faults none";
    list += (list.empty() ? "" : ",") + std::string(fault_name(k));
  }
  return " --faults " + list;
}

// Every option that shapes a seed's scenario: the recipe, the seed and the fault restriction.
std::string repro(const std::string& recipe, uint64_t seed,
                  const std::set<sim::FaultKind>& faults) {
  return "./lockstep check --recipe " + recipe + " --seed " + std::to_string(seed) +
         faults_flag(faults);
}

// A violated REQUIRES of this engine is a programmer error: reported and aborted in every build.
void require(bool ok, const char* what) {
  LOCKSTEP_ASSERT_MSG(ok, std::string("lockstep check: ") + what);
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// Whether `r` covers every seed `o` asked for (an interrupted run may stop short).
bool complete(const RecipeResult& r, const CheckOptions& o) {
  return o.seed || r.seeds_run == o.seeds || r.search_over();
}

// The verdict column: an interrupted recipe is "stopped" unless a correct one already failed.
const char* outcome(const RecipeResult& r, const CheckOptions& o) {
  const bool correct = r.expected == recipes::Expected::kCorrect;
  if (correct && r.violated()) return "FAILED";
  if (!complete(r, o)) return "stopped";
  if (correct) return "ok";
  return r.as_expected() ? "caught" : "NOT CAUGHT";
}

std::string cell(const PropertyResult& p) {
  if (p.seed) return "seed " + std::to_string(*p.seed);
  return p.judged == 0 ? "-" : "pass";
}

void print_table(const std::vector<RecipeResult>& results, const CheckOptions& o,
                 std::ostream& out) {
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
    out << outcome(r, o) << "\n";
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
          << ": " << first_line(p.message)
          << "\n  reproduce: " << repro(r.recipe, *p.seed, o.faults) << "\n";
      if (auto t = r.traces.find(*p.seed); t != r.traces.end()) {
        out << "  trace:     " << t->second << "\n  replay:    ./lockstep replay " << t->second
            << "\n  show:      ./lockstep show " << t->second << "\n";
      }
    }
    if (r.expected == recipes::Expected::kBroken && !r.as_expected() && complete(r, o)) {
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

nlohmann::json to_json(const std::vector<RecipeResult>& results, const CheckOptions& o,
                       double seeds_per_second, bool interrupted) {
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
    j["reproduce"] =
        seed ? nlohmann::json(repro(r.recipe, *seed, o.faults)) : nlohmann::json(nullptr);
    j["first_seed"] = r.first_seed;
    j["last_seed"] =
        r.seeds_run > 0 ? nlohmann::json(r.first_seed + r.seeds_run - 1) : nlohmann::json(nullptr);
    j["seeds_run"] = r.seeds_run;
    j["complete"] = complete(r, o);
    const auto trace = seed ? r.traces.find(*seed) : r.traces.end();
    j["trace"] = trace != r.traces.end() ? nlohmann::json(trace->second) : nlohmann::json(nullptr);
    rs.push_back(std::move(j));
  }
  nlohmann::json doc;
  doc["results"] = std::move(rs);
  const uint64_t first = o.seed ? *o.seed : o.first_seed;
  doc["first_seed"] = first;
  doc["last_seed"] = o.seed ? first : first + o.seeds - 1;
  doc["interrupted"] = interrupted;
  doc["seeds_per_second"] = seeds_per_second;
  return doc;
}

// After an interrupted run: per recipe, the seeds fully run (the verdicts above cover exactly
// those) and the command that goes on from there.
void print_coverage(const std::vector<RecipeResult>& results, const CheckOptions& o,
                    const char* signal, std::ostream& out) {
  out << "INTERRUPTED (" << signal << "): the workers were stopped; the verdicts above cover, per "
      << "recipe, only the seeds fully run (of " << o.first_seed << ".."
      << o.first_seed + o.seeds - 1 << "):\n";
  size_t width = 6;
  for (const RecipeResult& r : results) width = std::max(width, r.recipe.size());
  for (const RecipeResult& r : results) {
    out << "  " << r.recipe << std::string(width - r.recipe.size() + 2, ' ');
    if (r.seeds_run == 0) {
      out << "no seed fully run";
    } else {
      out << "seeds " << r.first_seed << ".." << r.first_seed + r.seeds_run - 1;
    }
    if (complete(r, o)) {
      out << (r.search_over() ? " (caught: done)\n" : " (done)\n");
      continue;
    }
    out << "  go on: ./lockstep check --recipe " << r.recipe << " --first-seed "
        << r.first_seed + r.seeds_run << " --seeds " << o.seeds - r.seeds_run
        << faults_flag(o.faults) << "\n";
  }
  out << "no trace was saved; each `reproduce:` line above re-runs its seed\n";
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
    out << to_json(results, o, 0, false).dump(2) << "\n";
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

bool RecipeResult::search_over() const {
  return expected == recipes::Expected::kBroken && as_expected();
}

std::optional<CheckOptions> parse_check_args(int argc, char** argv, std::ostream& err) {
  CheckOptions o;
  auto fail = [&](const std::string& msg) -> std::optional<CheckOptions> {
    err << "lockstep check: " << msg << "\n(run `lockstep check --help` for usage)\n";
    return std::nullopt;
  };
  bool first_seed_given = false;
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
    } else if (arg == "--first-seed") {
      if (!take() || !parse_u64(value, 0, UINT64_MAX / 2, &o.first_seed)) {
        return fail("--first-seed needs a non-negative number below 2^63, got '" + value + "'");
      }
      first_seed_given = true;
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
  if (first_seed_given && o.seed) {
    return fail("--first-seed starts a range of --seeds N and --seed S runs one seed; give one");
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
  if (progress == nullptr) {
    return check_seeds(recipe, o.seed ? *o.seed : o.first_seed, o.seed ? 1 : o.seeds, o.faults);
  }
  // One chunk at a time, so the progress line moves (the result is the same: append_seeds).
  const uint64_t first = o.seed ? *o.seed : o.first_seed;
  const uint64_t count = o.seed ? 1 : o.seeds;
  constexpr uint64_t kChunk = 16;
  RecipeResult rr = check_seeds(recipe, first, std::min(count, kChunk), o.faults);
  while (rr.seeds_run < count && !rr.search_over()) {
    *progress << "\r  checking " << recipe.name << "  " << rr.seeds_run << "/" << count << "   "
              << std::flush;
    append_seeds(&rr, check_seeds(recipe, first + rr.seeds_run,
                                  std::min(count - rr.seeds_run, kChunk), o.faults));
  }
  return rr;
}

RecipeResult check_seeds(const recipes::RecipeInfo& recipe, uint64_t first, uint64_t count,
                         const std::set<sim::FaultKind>& faults) {
  const Claims claims = claims_for(recipe);
  RecipeResult rr = empty_result(recipe);
  rr.first_seed = first;
  for (uint64_t seed = first; seed < first + count; ++seed) {
    // An invariant of the simulator or a checker that fires in this seed prints how to rerun it.
    const InvariantContext context(
        [&] { return "reproduce: " + repro(recipe.name, seed, faults); });
    const SeedOutcome so = run_seed(recipe, claims, seed, faults);
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
    if (rr.search_over()) break;
  }
  return rr;
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
  }
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
  HostRun run = check_recipes_forked(todo, o, progress);
  std::vector<RecipeResult>& results = run.results;
  const double elapsed = host_seconds() - t0;
  const double cpu = host_cpu_seconds() - cpu0;
  // An interrupted run saves nothing: shrinking takes time the user just declined to spend.
  if (run.interrupted == nullptr) save_traces(todo, o, save_trace, &results, err);
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
    nlohmann::json doc = to_json(results, o, per_second, run.interrupted != nullptr);
    doc["seeds_per_cpu_second"] = per_cpu_second;
    out << doc.dump(2) << "\n";
    if (run.interrupted != nullptr) {
      err << "lockstep check: interrupted (" << run.interrupted
          << "); each result covers first_seed..last_seed\n";
    }
  } else {
    print_table(results, o, out);
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
    if (run.interrupted != nullptr) {
      print_coverage(results, o, run.interrupted, out);
    } else {
      out << (all_expected
                  ? "every recipe behaved as expected\n"
                  : "FAILED: a correct recipe failed or a broken variant was not caught\n");
    }
  }
  if (run.interrupted != nullptr) return kExitInterrupted;
  return all_expected ? kExitOk : kExitFailure;
}

}  // namespace lockstep::properties
