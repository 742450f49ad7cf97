#include "explore/explore.h"

#include <cstdio>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "explore/flags.h"
#include "explore/search.h"
#include "explore/wall_clock.h"
#include "properties/checkers.h"
#include "recipes/registry.h"
#include "traces/record.h"
#include "traces/trace.h"

namespace lockstep::explore {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitViolation = 1;
constexpr int kExitUsage = 2;
constexpr int kExitIncomplete = 4;  // no violation in what was run, but the scope was not exhausted

constexpr const char* kUsage =
    "usage: lockstep explore --recipe NAME [--clients N] [--rounds N] [--faults LIST]\n"
    "                        [--bound K] [--strategy exhaustive|pct|random] [--runs N]\n"
    "                        [--pct-depth D] [--reduction sleep-sets|none] [--order-free]\n"
    "                        [--prune-states] [--depth-bound N] [--kinds LIST] [--seed N]\n"
    "                        [--stop-at-first] [--save-dir DIR] [--property P] [--no-save]\n"
    "\n"
    "Explores the schedules of a small scope (one recipe, N clients, N rounds, faults at fixed\n"
    "times) and reports schedules explored, distinct states, elapsed time, the coverage marks\n"
    "hit, and either \"no violation in this scope\" or the shortest counterexample, saved as a\n"
    "trace that `lockstep replay` and `lockstep show` accept.\n"
    "\n"
    "  --recipe NAME        a registry name (see `lockstep list`)\n"
    "  --clients N          clients, 1..8 (default 2)\n"
    "  --rounds N           rounds per client, 1..20 (default 2)\n"
    "  --faults LIST        comma-separated KIND[@MS][:cN], e.g. lost-reply@0:c1; MS after the\n"
    "                       workload's start, default 0 (default none)\n"
    "  --bound K            exhaustive: at most K non-default choices, 0..8 (default 2); with\n"
    "                       sleep sets or --order-free only data choices count\n"
    "                       (latency, ambiguous outcome, ping phase, server, child order) and\n"
    "                       the order of events is explored completely\n"
    "  --strategy S         exhaustive (default), pct or random\n"
    "  --runs N             pct/random: runs; exhaustive: at most N schedules (default 1000 /\n"
    "                       100000)\n"
    "  --pct-depth D        PCT bug depth, 1..10 (default 3)\n"
    "  --reduction R        exhaustive: none (default) or sleep-sets (sound; implies\n"
    "                       --order-free: the event order is explored completely)\n"
    "  --order-free         exhaustive without sleep sets: event order does not count toward\n"
    "                       --bound (the unreduced twin of the sleep-set search)\n"
    "  --prune-states       exhaustive: UNSOUND pruning by a recipe-level state hash (it does\n"
    "                       not see messages in flight, timers or the tree): may hide bugs\n"
    "  --depth-bound N      exhaustive, --reduction none: only the first N choice points branch\n"
    "  --kinds LIST         exhaustive: choice kinds that branch (next-event, latency,\n"
    "                       ambiguous-outcome, ping-phase, server, child-order; default all)\n"
    "  --seed N             the scenario's seed (default 1)\n"
    "  --stop-at-first      stop at the first violation instead of the shortest\n"
    "  --property P         count only violations of P (e.g. a broken variant's must-violate)\n"
    "  --save-dir DIR       where the counterexample trace goes (default traces/failures)\n"
    "  --no-save            do not save the counterexample\n"
    "\n"
    "Exit: 0 the scope was exhausted with no violation, 1 violation found, 2 usage error,\n"
    "      4 incomplete: no violation in what was run, but the search stopped before the scope\n"
    "        was exhausted (the --runs limit or the schedule queue was reached; pct and random\n"
    "        sample and never exhaust a scope; --prune-states skips schedules); the report says\n"
    "        what was covered and why it stopped.\n";

int usage(std::ostream& err, const std::string& message) {
  err << "lockstep explore: " << message << "\n"
      << "run `lockstep explore --help` for the flags\n";
  return kExitUsage;
}

bool parse_kind(const std::string& name, sim::ChoiceKind* out) {
  for (int k = 0; k < static_cast<int>(sim::ChoiceKind::kCount); ++k) {
    if (name == sim::to_string(static_cast<sim::ChoiceKind>(k))) {
      *out = static_cast<sim::ChoiceKind>(k);
      return true;
    }
  }
  return false;
}

std::string fault_list(const properties::Scenario& s) {
  if (s.faults.empty()) return "none";
  std::string out;
  for (const sim::Fault& f : s.faults) {
    if (!out.empty()) out += ", ";
    out += sim::describe(f) + " at " + properties::format_time(f.at);
  }
  return out;
}

// Saves the counterexample as a trace; returns the path or "" (and prints why).
std::string save_counterexample(const Scope& scope, const Counterexample& c,
                                const std::string& strategy, const std::string& dir,
                                std::ostream& out, std::ostream& err) {
  const traces::Trace t = traces::record_trace(
      *scope.recipe, scope.scenario, std::make_unique<ScheduleStrategy>(c.schedule, strategy));
  if (t.violation() == nullptr || t.decisions != c.decisions) {
    err << "lockstep explore: the recorded run did not reproduce the counterexample "
           "(a determinism bug); not saved\n";
    return {};
  }
  std::string error;
  const std::string path = traces::save_failure_trace(t, dir, &error);
  if (path.empty()) {
    err << "lockstep explore: could not save the trace: " << error << "\n";
    return {};
  }
  out << "saved: " << path << " (" << t.events.size() << " events, " << t.decisions.size()
      << " decisions)\n";
  traces::print_replay_command(out, path);
  return path;
}

struct Request {
  const recipes::RecipeInfo* recipe = nullptr;
  uint32_t clients = 2;
  uint32_t rounds = 2;
  uint64_t seed = 1;
  std::vector<std::string> faults;
  std::string strategy = "exhaustive";
  ExhaustiveOptions exhaustive;
  SampleOptions sample;
  bool save = true;
  std::string save_dir = "traces/failures";
};

// Parses the flags into *r; returns an exit code >= 0 to stop with (help, usage error).
int parse(int argc, char** argv, Request* r, std::ostream& out, std::ostream& err) {
  Flags flags({"recipe", "clients", "rounds", "faults", "bound", "strategy", "runs", "pct-depth",
               "depth-bound", "reduction", "kinds", "seed", "save-dir", "property"},
              {"stop-at-first", "no-save", "prune-states", "order-free"});
  if (!flags.parse(argc, argv)) return usage(err, flags.error());
  if (flags.has("help")) {
    out << kUsage;
    return kExitOk;
  }
  if (!flags.has("recipe")) return usage(err, "--recipe NAME is required (see `lockstep list`)");
  r->recipe = recipes::find_recipe(flags.get("recipe", ""));
  if (r->recipe == nullptr) {
    return usage(err, "unknown recipe '" + flags.get("recipe", "") +
                          "' (`lockstep list` names every recipe)");
  }
  const auto clients = flags.number("clients", 2, 1, 8);
  const auto rounds = flags.number("rounds", 2, 1, 20);
  const auto bound = flags.number("bound", 2, 0, 8);
  const auto pct_depth = flags.number("pct-depth", 3, 1, 10);
  const auto depth_bound = flags.number("depth-bound", UINT32_MAX, 1, UINT32_MAX);
  const auto seed = flags.number("seed", 1, 0, UINT64_MAX / 2);
  r->strategy = flags.get("strategy", "exhaustive");
  if (r->strategy != "exhaustive" && r->strategy != "pct" && r->strategy != "random") {
    return usage(err, "--strategy wants exhaustive, pct or random, got '" + r->strategy + "'");
  }
  const auto runs = flags.number("runs", r->strategy == "exhaustive" ? 100000 : 1000, 1, 100000000);
  if (!clients || !rounds || !bound || !pct_depth || !depth_bound || !seed || !runs) {
    return usage(err, flags.error());
  }
  r->clients = static_cast<uint32_t>(*clients);
  r->rounds = static_cast<uint32_t>(*rounds);
  r->seed = *seed;
  const std::string faults = flags.get("faults", "none");
  if (faults != "none") r->faults = split_list(faults);
  r->exhaustive.preemption_bound = static_cast<uint32_t>(*bound);
  r->exhaustive.depth_bound = static_cast<uint32_t>(*depth_bound);
  r->exhaustive.max_schedules = *runs;
  r->exhaustive.stop_at_first = flags.has("stop-at-first");
  const std::string reduction = flags.get("reduction", "none");
  if (reduction == "sleep-sets") {
    r->exhaustive.reduction = Reduction::kSleepSets;
  } else if (reduction == "state-hash") {
    return usage(err, "--reduction state-hash is gone: it is unsound; use --prune-states");
  } else if (reduction != "none") {
    return usage(err, "--reduction wants sleep-sets or none, got '" + reduction + "'");
  }
  if (flags.has("prune-states")) {
    if (r->exhaustive.reduction == Reduction::kSleepSets) {
      return usage(err, "--prune-states does not combine with --reduction sleep-sets");
    }
    r->exhaustive.reduction = Reduction::kStateHash;
  }
  r->exhaustive.order_free =
      r->exhaustive.reduction == Reduction::kSleepSets || flags.has("order-free");
  if (r->exhaustive.reduction == Reduction::kSleepSets && flags.has("depth-bound")) {
    return usage(err,
                 "--depth-bound does not combine with sleep sets (choice indexes differ "
                 "between equivalent interleavings)");
  }
  for (const std::string& k : split_list(flags.get("kinds", ""))) {
    sim::ChoiceKind kind;
    if (!parse_kind(k, &kind)) {
      return usage(err, "unknown choice kind '" + k +
                            "' (next-event, latency, ambiguous-outcome, ping-phase, server, "
                            "child-order)");
    }
    r->exhaustive.kinds.insert(kind);
  }
  if (flags.has("property")) {
    properties::Property p;
    if (!properties::parse_property(flags.get("property", ""), &p)) {
      return usage(err, "unknown property '" + flags.get("property", "") +
                            "' (mutual-exclusion, fenced-safety, fifo, liveness, no-orphans, "
                            "herd-free, reentrancy, timeout-cleanup)");
    }
    r->exhaustive.target = p;
    r->sample.target = p;
  }
  r->sample.seed = *seed;
  r->sample.runs = *runs;
  r->sample.stop_at_first = flags.has("stop-at-first");
  r->sample.pct_depth = static_cast<uint32_t>(*pct_depth);
  r->save = !flags.has("no-save");
  r->save_dir = flags.get("save-dir", "traces/failures");
  return -1;
}

// "" when a clean search covered the whole scope; otherwise why it did not, and what to do.
std::string why_incomplete(const Request& r, const SearchResult& res) {
  const std::string runs = std::to_string(r.exhaustive.max_schedules);
  if (r.strategy != "exhaustive") {
    return r.strategy + " sampling ran its " + std::to_string(res.schedules) +
           " runs (--runs); sampling never exhausts a scope: use --strategy exhaustive to cover it";
  }
  if (res.run_limit_reached) {
    return "the run limit was reached (--runs " + runs +
           "); raise --runs, or narrow the scope (--bound, --clients, --rounds, --kinds)";
  }
  if (res.queue_full) {
    return "the queue of schedules still to run filled up (4 x --runs = " +
           std::to_string(4 * r.exhaustive.max_schedules) +
           ") and schedules were dropped; raise --runs, or narrow the scope";
  }
  if (!res.complete) return "the search did not finish its bound levels";
  if (r.exhaustive.reduction == Reduction::kStateHash) {
    return "--prune-states is unsound: the branches it pruned were never run; run without it to "
           "cover the scope";
  }
  return {};
}

void print_result(const Scope& scope, const Request& r, const SearchResult& res, double elapsed_s,
                  std::ostream& out) {
  char line[256];
  out << "schedules explored: " << res.schedules;
  if (r.strategy == "exhaustive") {
    out << (res.levels_done == 0
                ? std::string(" (no bound level finished")
                : " (bound levels 0.." + std::to_string(res.levels_done - 1) + " done")
        << " of bound " << r.exhaustive.preemption_bound
        << (res.stopped_at_first    ? "; stopped at the first violation"
            : res.run_limit_reached ? "; cut at --runs"
            : res.queue_full        ? "; its queue of 4x --runs schedules filled"
                                    : "")
        << ")";
  }
  out << "\n";
  out << "distinct runs: " << res.distinct_runs << " (different event logs)\n";
  if (r.strategy == "exhaustive") {
    out << "distinct states: " << res.distinct_states
        << " (final server tree, sessions and clients' recipe states)\n";
    if (r.exhaustive.reduction == Reduction::kSleepSets) {
      out << "sleep sets: " << res.pruned << " sleeping alternatives not branched to, "
          << res.blocked << " runs blocked (" << res.stopped_early << " stopped there"
          << (res.unexplained_stops != 0
                  ? ", " + std::to_string(res.unexplained_stops) + " UNEXPLAINED: a bug"
                  : std::string())
          << ")"
          << (r.exhaustive.all_dependent ? " (partition in scope: every pair "
                                           "dependent)"
                                         : "")
          << "\n";
    } else if (r.exhaustive.reduction == Reduction::kStateHash) {
      out << "pruned branch points: " << res.pruned << " (" << res.probe_states
          << " recipe-level states; UNSOUND: schedules may have been hidden)\n";
    }
  }
  std::snprintf(line, sizeof line, "elapsed: %.3f s (%.0f schedules/s)\n", elapsed_s,
                elapsed_s > 0 ? static_cast<double>(res.schedules) / elapsed_s : 0.0);
  out << line;
  out << "coverage (runs hitting each mark):\n" << res.coverage.summary();
  (void)scope;
}

}  // namespace

int explore_main(int argc, char** argv, std::ostream& out, std::ostream& err) {
  Request r;
  if (const int code = parse(argc, argv, &r, out, err); code >= 0) return code;
  Scope scope = make_scope(*r.recipe, r.clients, r.rounds, {}, r.seed);
  std::vector<sim::Fault> faults;
  for (const std::string& spec : r.faults) {
    sim::Fault f;
    std::string error;
    if (!parse_fault_spec(spec, scope.scenario, &f, &error)) return usage(err, error);
    faults.push_back(f);
  }
  scope = make_scope(*r.recipe, r.clients, r.rounds, faults, r.seed);

  out << "lockstep explore: " << r.recipe->name << " (" << recipes::to_string(r.recipe->expected)
      << "), " << r.clients << " clients, " << r.rounds
      << " rounds, faults: " << fault_list(scope.scenario) << "\n";
  out << "scenario: " << properties::describe(scope.scenario) << "\n";
  out << "strategy: " << r.strategy;
  if (r.strategy == "exhaustive") {
    r.exhaustive.all_dependent = needs_all_dependent(scope);
    out << ", bound " << r.exhaustive.preemption_bound
        << (r.exhaustive.order_free ? " data choices (event order free)" : " preemptions")
        << ", reduction " << to_string(r.exhaustive.reduction);
  } else {
    out << ", " << r.sample.runs << " runs from seed " << r.sample.seed;
    if (r.strategy == "pct") out << ", depth " << r.sample.pct_depth;
  }
  out << "\n";
  out.flush();

  ScopeProgram program(scope);
  const Stopwatch watch;  // for the report only
  SearchResult res = r.strategy == "exhaustive" ? explore_exhaustive(program, r.exhaustive)
                     : r.strategy == "pct"      ? explore_pct(program, r.sample)
                                                : explore_random(program, r.sample);
  const double elapsed_s = watch.elapsed_ms() / 1000.0;
  print_result(scope, r, res, elapsed_s, out);

  if (r.exhaustive.reduction == Reduction::kStateHash && r.strategy == "exhaustive") {
    out << "caveat: --prune-states is unsound; a clean result does not cover the scope\n";
  }
  const std::string incomplete = why_incomplete(r, res);
  if (!res.shortest) {
    if (incomplete.empty()) {
      out << "result: no violation in this scope\n";
      return kExitOk;
    }
    out << "result: INCOMPLETE: no violation in the " << res.schedules
        << " schedules run, but the scope was not exhausted\n"
        << "covered: " << res.schedules << " schedules";
    if (r.strategy == "exhaustive") {
      out << ", " << res.levels_done << " of " << r.exhaustive.preemption_bound + 1
          << " bound levels (0.." << r.exhaustive.preemption_bound << ") finished";
    }
    out << "\nstopped: " << incomplete << "\n";
    return kExitIncomplete;
  }
  Counterexample c = *res.shortest;
  if (r.strategy != "exhaustive" && !c.schedule.empty()) {
    // A sampled counterexample deviates from the default schedule almost everywhere: shrink it.
    uint64_t runs = 0;
    const size_t before = c.schedule.size();
    c = shrink(program, std::move(c), r.sample.target, 5000, &runs);
    out << "shrunk the counterexample from " << before << " to " << c.schedule.size()
        << " preemption" << (c.schedule.size() == 1 ? "" : "s") << " in " << runs << " runs\n";
  }
  out << "result: VIOLATION of " << properties::to_string(c.verdict.property) << ": "
      << c.verdict.message << "\n";
  if (r.strategy == "exhaustive" && !res.stopped_at_first && !incomplete.empty()) {
    out << "note: the search did not exhaust the scope, so a shorter counterexample may exist: "
        << incomplete << "\n";
  }
  out << "first violation at run " << res.first_violation_at << "; shortest counterexample: run "
      << c.found_at << ", " << c.schedule.size() << " preemption"
      << (c.schedule.size() == 1 ? "" : "s") << ", " << c.decisions.size() << " decisions, "
      << c.sim_events << " simulator events\n";
  if (r.save) save_counterexample(scope, c, res.strategy, r.save_dir, out, err);
  return kExitViolation;
}

}  // namespace lockstep::explore
