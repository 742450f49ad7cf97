// `lockstep check`: see cli/check.h.
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <ostream>
#include <tuple>

#include "cli/check.h"
#include "cli/check_report.h"
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

using properties::CheckOptions;
using properties::RecipeResult;

constexpr uint64_t kMaxSeed = std::numeric_limits<uint64_t>::max() / 2;
#ifdef LOCKSTEP_HAVE_REAL
constexpr uint64_t kRealDefaultSeeds = properties::kRealDefaultSeeds;
#else
constexpr uint64_t kRealDefaultSeeds = 3;
#endif

using Request = CheckRequest;

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

// "I/N" as a shard: I from 0, below N, N from 1 to kMaxShards; nullopt for anything else.
std::optional<Shard> shard_from_text(const std::string& text) {
  const size_t slash = text.find('/');
  if (slash == std::string::npos) return std::nullopt;
  auto number = [](const std::string& digits) -> std::optional<uint64_t> {
    uint64_t v = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
    return v;
  };
  const std::optional<uint64_t> index = number(text.substr(0, slash));
  const std::optional<uint64_t> count = number(text.substr(slash + 1));
  if (!index || !count || *count < 1 || *count > kMaxShards || *index >= *count) {
    return std::nullopt;
  }
  return Shard{*index, *count};
}

// The run's shard: --shard I/N, or else JOB_COMPLETION_INDEX and LOCKSTEP_SHARDS from the
// environment (a Kubernetes Indexed Job sets the first). A sharded run covers its block of the
// sweep (shard_block). False after a usage error.
bool parse_shard(const Command& self, const Args& args, Request* rq, std::ostream& err) {
  std::optional<Shard> shard;
  std::string source;
  if (args.has("shard")) {
    source = "--shard " + args.get("shard", "");
    shard = shard_from_text(args.get("shard", ""));
    if (!shard) {
      usage_error(self,
                  "--shard wants I/N, shard I (counted from 0) of N shards, N from 1 to " +
                      std::to_string(kMaxShards) +
                      " and I below N (--shard 0/4 .. 3/4), "
                      "not '" +
                      args.get("shard", "") + "'",
                  err);
      return false;
    }
  } else {
    const char* index = std::getenv("JOB_COMPLETION_INDEX");
    const char* count = std::getenv("LOCKSTEP_SHARDS");
    if (index == nullptr && count == nullptr) return true;
    if (index == nullptr || count == nullptr) {
      usage_error(self,
                  std::string(index ? "JOB_COMPLETION_INDEX is set but LOCKSTEP_SHARDS is not"
                                    : "LOCKSTEP_SHARDS is set but JOB_COMPLETION_INDEX is not") +
                      ": a sharded run takes shard JOB_COMPLETION_INDEX of LOCKSTEP_SHARDS "
                      "from both (in a Kubernetes Indexed Job set LOCKSTEP_SHARDS to its "
                      "completions), or --shard I/N; unset it to run the whole sweep",
                  err);
      return false;
    }
    source = std::string("JOB_COMPLETION_INDEX=") + index + " with LOCKSTEP_SHARDS=" + count;
    shard = shard_from_text(std::string(index) + "/" + count);
    if (!shard) {
      usage_error(self,
                  source +
                      " is not a shard: LOCKSTEP_SHARDS wants a whole number from 1 "
                      "to " +
                      std::to_string(kMaxShards) + " and JOB_COMPLETION_INDEX one from 0 below it",
                  err);
      return false;
    }
  }
  std::string problem;
  if (rq->where != Where::kSimulator) {
    problem =
        "splits a simulator sweep; --real and --ensemble are not sharded (a real server's "
        "seed does not reproduce its schedule)";
  } else if (rq->o.seed) {
    problem = "splits a range of seeds and --seed S runs one; give one";
  } else if (rq->sweep_seeds < shard->count) {
    problem = "cuts --seeds " + std::to_string(rq->sweep_seeds) + " into " +
              std::to_string(shard->count) + " parts of at least one seed each; give --seeds " +
              std::to_string(shard->count) + " or more, or fewer shards";
  }
  if (!problem.empty()) {
    usage_error(self, source + " " + problem, err);
    return false;
  }
  rq->shard = shard;
  std::tie(rq->o.first_seed, rq->o.seeds) = shard_block(rq->sweep_first, rq->sweep_seeds, *shard);
  return true;
}

// --junit FILE: a file in a directory that exists and can be written (checked before any seed
// runs). False after a usage error.
bool parse_junit(const Command& self, const Args& args, Request* rq, std::ostream& err) {
  if (!args.has("junit")) return true;
  rq->junit = args.get("junit", "");
  if (const std::string problem = junit_file_problem(rq->junit); !problem.empty()) {
    usage_error(self, problem, err);
    return false;
  }
  return true;
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
  rq.sweep_first = o.first_seed;
  rq.sweep_seeds = o.seeds;
  if (!parse_shard(self, args, &rq, err) || !parse_junit(self, args, &rq, err)) return std::nullopt;
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
  CheckReport report{std::move(results), "", seconds, cpu, interrupted ? interrupted : ""};
  return finish(report, rq, "check", out, err);
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
  CheckReport report{std::move(results), server, seconds, 0, interrupted ? interrupted : ""};
  return finish(report, rq, "check", out, err);
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
            {"shard", "I/N",
             "run shard I (from 0) of N: a contiguous block of each recipe's seeds; without "
             "it, JOB_COMPLETION_INDEX and LOCKSTEP_SHARDS give the shard when both are set "
             "(`lockstep merge` combines the shards' --json reports)"},
            {"junit", "FILE", "also write a JUnit XML file: one testcase per recipe and property"},
            {"json", "",
             "one JSON object, the same schema on both backends: {ok, exit_code, backend, "
             "options, reproduce, first_seed, last_seed, interrupted, results: [{recipe, "
             "verdict, violations: [{property, seed, message, reproduce}], ...}], ...} "
             "(cli/README.md lists every key)"},
            {"log", "", "with --seed: also print the simulator's event log"},
            {"trace-dir", "DIR",
             "save every failing seed's trace, shrunk, under DIR (default traces/failures)"},
            {"no-traces", "", "save no traces"},
            {"no-shrink", "", "save the failing seeds' scenarios as they ran, unshrunk"},
            {"real", "",
             "run on one real ZooKeeper server started on 127.0.0.1 (needs java and the "
             "server's jar, libzookeeper-java; herd-freedom is not judged there)"},
            {"ensemble", "", "run on a real 3-server ensemble started on 127.0.0.1"},
        },
    .run = run_check_command,
    .details =
        "exit: 0 every recipe behaved as expected (a variant a real server cannot provoke does\n"
        "      not fail the run), 1 a correct recipe failed, a broken variant was not caught or\n"
        "      the real harness failed, 2 usage error (also a --trace-dir or --junit path that\n"
        "      cannot be written), 3 no server can be started (--real, --ensemble), 130\n"
        "      interrupted (the verdicts cover the seeds fully run)\n",
};

}  // namespace lockstep::cli
