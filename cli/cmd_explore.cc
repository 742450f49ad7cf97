// `lockstep explore`: systematic schedule exploration of one small scope (explore/search.h:
// exhaustive search with preemption bounding or sleep sets, PCT, random sampling).
//
// It builds the scope (make_scope), explores it with the chosen strategy, and reports the
// schedules explored, the distinct states met, the elapsed wall time, the coverage marks hit,
// and one of: "no violation in this scope" (only when the search exhausted the scope),
// "INCOMPLETE" (no violation in what was run, but it stopped before the scope was exhausted:
// what it covered and why it stopped), or the shortest counterexample found, which it saves as a
// trace (traces/ format) that `lockstep replay` and `lockstep show` accept. Exit codes
// (cli/cli.h): 0 the scope was exhausted with no violation, 1 a violation was found, 2 a usage
// error, 4 incomplete (the --runs limit or the schedule queue was reached, sampling with pct or
// random, or the unsound --prune-states), 130 interrupted (a Ctrl-C stops the search after the
// run in progress; the report says what it covered). On a terminal a progress line is kept.
//
// The wall clock is read here, for the report only; the search itself is deterministic.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "explore/search.h"
#include "explore/wall_clock.h"
#include "properties/host_progress.h"
#include "properties/checkers.h"
#include "recipes/registry.h"
#include "traces/record.h"
#include "traces/trace.h"

namespace lockstep::cli {
namespace {

using explore::Counterexample;
using explore::ExhaustiveOptions;
using explore::Reduction;
using explore::SampleOptions;
using explore::ScheduleStrategy;
using explore::Scope;
using explore::ScopeProgram;
using explore::SearchResult;

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
                                const Io& io) {
  std::ostream& out = io.out;
  std::ostream& err = io.err;
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
  traces::print_replay_command(out, path, io.program);
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

// The flags, checked into *r; false after printing a usage error.
bool parse_request(const Command& self, const Args& args, Request* r, std::ostream& err) {
  const auto fail = [&](const std::string& message) {
    usage_error(self, message, err);
    return false;
  };
  if (!args.has("recipe")) return fail("--recipe NAME is required (see `lockstep list`)");
  r->recipe = recipes::find_recipe(args.get("recipe", ""));
  if (r->recipe == nullptr) {
    return fail("unknown recipe '" + args.get("recipe", "") +
                "' (`lockstep list` names every recipe)");
  }
  r->strategy = args.get("strategy", "exhaustive");
  if (r->strategy != "exhaustive" && r->strategy != "pct" && r->strategy != "random") {
    return fail("--strategy wants exhaustive, pct or random, got '" + r->strategy + "'");
  }
  const auto clients = parse_uint_flag(self, args, "clients", 2, 1, 8, err);
  const auto rounds = parse_uint_flag(self, args, "rounds", 2, 1, 20, err);
  const auto bound = parse_uint_flag(self, args, "bound", 2, 0, 8, err);
  const auto pct_depth = parse_uint_flag(self, args, "pct-depth", 3, 1, 10, err);
  const auto depth_bound =
      parse_uint_flag(self, args, "depth-bound", UINT32_MAX, 1, UINT32_MAX, err);
  const auto seed = parse_uint_flag(self, args, "seed", 1, 0, UINT64_MAX / 2, err);
  const auto runs = parse_uint_flag(self, args, "runs", r->strategy == "exhaustive" ? 100000 : 1000,
                                    1, 100000000, err);
  if (!clients || !rounds || !bound || !pct_depth || !depth_bound || !seed || !runs) return false;
  r->clients = static_cast<uint32_t>(*clients);
  r->rounds = static_cast<uint32_t>(*rounds);
  r->seed = *seed;
  const std::string faults = args.get("faults", "none");
  if (faults != "none") r->faults = split_list(faults);
  r->exhaustive.preemption_bound = static_cast<uint32_t>(*bound);
  r->exhaustive.depth_bound = static_cast<uint32_t>(*depth_bound);
  r->exhaustive.max_schedules = *runs;
  r->exhaustive.stop_at_first = args.has("stop-at-first");
  const std::string reduction = args.get("reduction", "none");
  if (reduction == "sleep-sets") {
    r->exhaustive.reduction = Reduction::kSleepSets;
  } else if (reduction == "state-hash") {
    return fail("--reduction state-hash is gone: it is unsound; use --prune-states");
  } else if (reduction != "none") {
    return fail("--reduction wants sleep-sets or none, got '" + reduction + "'");
  }
  if (args.has("prune-states")) {
    if (r->exhaustive.reduction == Reduction::kSleepSets) {
      return fail("--prune-states does not combine with --reduction sleep-sets");
    }
    r->exhaustive.reduction = Reduction::kStateHash;
  }
  r->exhaustive.order_free =
      r->exhaustive.reduction == Reduction::kSleepSets || args.has("order-free");
  if (r->exhaustive.reduction == Reduction::kSleepSets && args.has("depth-bound")) {
    return fail(
        "--depth-bound does not combine with sleep sets (choice indexes differ between "
        "equivalent interleavings)");
  }
  for (const std::string& k : split_list(args.get("kinds", ""))) {
    sim::ChoiceKind kind;
    if (!parse_kind(k, &kind)) {
      return fail("unknown choice kind '" + k +
                  "' (next-event, latency, ambiguous-outcome, ping-phase, server, child-order)");
    }
    r->exhaustive.kinds.insert(kind);
  }
  if (args.has("property")) {
    properties::Property p;
    if (!properties::parse_property(args.get("property", ""), &p)) {
      return fail("unknown property '" + args.get("property", "") +
                  "' (mutual-exclusion, fenced-safety, fifo, liveness, no-orphans, herd-free, "
                  "reentrancy, timeout-cleanup)");
    }
    r->exhaustive.target = p;
    r->sample.target = p;
  }
  r->sample.seed = *seed;
  r->sample.runs = *runs;
  r->sample.stop_at_first = args.has("stop-at-first");
  r->sample.pct_depth = static_cast<uint32_t>(*pct_depth);
  r->save = !args.has("no-save");
  r->save_dir = args.get("save-dir", "traces/failures");
  if (r->save_dir.empty()) return fail("--save-dir needs a directory");
  return true;
}
// "0: 812, 1: 2,301 new, 2: 0 (saturated: the last finished level found no new state)": the states
// first met in each bound level that ran, and what the last finished one says.
std::string states_by_level(const SearchResult& res) {
  std::string out;
  const size_t ran = std::min<size_t>(res.new_states_per_level.size(), res.levels_done + 1);
  for (size_t k = 0; k < ran; ++k) {
    out += (k == 0 ? "" : ", ") + std::to_string(k) + ": " +
           std::to_string(res.new_states_per_level[k]) +
           (k == res.levels_done ? " (level unfinished)" : "");
  }
  out += "; the last " + std::to_string(std::min(res.schedules, SearchResult::kRecentRuns)) +
         " schedules found " + std::to_string(res.new_states_recent);
  if (res.levels_done < 2) return out;  // one level says nothing about saturation
  const uint64_t last = res.new_states_per_level[res.levels_done - 1];
  out += last == 0 ? "; saturated: the last finished level found no new state"
                   : "; not saturated: the last finished level still found new states";
  return out;
}

// "" when a clean search covered the whole scope; otherwise why it did not, and what to do.
std::string why_incomplete(const Request& r, const SearchResult& res) {
  const std::string runs = std::to_string(r.exhaustive.max_schedules);
  if (res.stopped_by_observer) {
    return std::string("interrupted (") + properties::StopSignals::signal_name() +
           ") after the run in progress; the search is deterministic: the same flags run these "
           "schedules again, in the same order, and go on";
  }
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

// "covered: N schedules, L of B bound levels (0..B) finished, S distinct states (...)".
void print_covered(const Request& r, const SearchResult& res, std::ostream& out) {
  out << "covered: " << res.schedules << " schedules";
  if (r.strategy == "exhaustive") {
    out << ", " << res.levels_done << " of " << r.exhaustive.preemption_bound + 1
        << " bound levels (0.." << r.exhaustive.preemption_bound << ") finished, "
        << (res.states_capped ? "at least " : "") << res.states_visited
        << " distinct states (new by level: " << states_by_level(res) << ")";
  } else {
    out << " of " << r.sample.runs << " (--runs), " << (res.states_capped ? "at least " : "")
        << res.states_visited << " distinct states";
  }
  out << "\n";
}

// The progress line: "  exploring: 1200 schedules (bound level 1 of 2), 5400 distinct states,
// 950 schedules/s" (exhaustive) or "  exploring: 120 of 1000 runs, 5400 distinct states,
// 950 runs/s, ETA 1s" (sampling).
std::string progress_text(const Request& r, const explore::SearchProgress& at, double rate) {
  char buf[200];
  if (r.strategy == "exhaustive") {
    std::snprintf(buf, sizeof buf,
                  "  exploring: %llu schedules (bound level %u of %u), %llu distinct states, "
                  "%.0f schedules/s",
                  static_cast<unsigned long long>(at.schedules), at.level,
                  r.exhaustive.preemption_bound, static_cast<unsigned long long>(at.states_visited),
                  rate);
  } else {
    const uint64_t left = r.sample.runs - std::min(at.schedules, r.sample.runs);
    std::snprintf(buf, sizeof buf,
                  "  exploring: %llu of %llu runs, %llu distinct states, %.0f runs/s, ETA %s",
                  static_cast<unsigned long long>(at.schedules),
                  static_cast<unsigned long long>(r.sample.runs),
                  static_cast<unsigned long long>(at.states_visited), rate,
                  rate > 0 ? properties::human_seconds(static_cast<double>(left) / rate).c_str()
                           : "?");
  }
  return buf;
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
  out << "distinct states: " << (res.states_capped ? "at least " : "") << res.states_visited
      << " at choice points (server trees, sessions, connections and messages in flight, "
         "pending timers, clients' recipe states); "
      << res.distinct_states << " final states\n";
  if (r.strategy != "exhaustive") {
    out << "new states: the last " << std::min(res.schedules, SearchResult::kRecentRuns)
        << " runs found " << res.new_states_recent << "\n";
  }
  if (r.strategy == "exhaustive") {
    out << "new states by bound level: " << states_by_level(res) << "\n";
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
          << " (choice index, state) pairs branched from; UNSOUND: schedules may have been "
             "hidden)\n";
    }
  }
  std::snprintf(line, sizeof line, "elapsed: %.3f s (%.0f schedules/s)\n", elapsed_s,
                elapsed_s > 0 ? static_cast<double>(res.schedules) / elapsed_s : 0.0);
  out << line;
  out << "coverage (runs hitting each mark):\n" << res.coverage.summary();
  (void)scope;
}

int run_explore(const Command& self, const Args& args, const Io& io) {
  std::ostream& out = io.out;
  std::ostream& err = io.err;
  Request r;
  if (!parse_request(self, args, &r, err)) return kExitUsage;
  Scope scope = explore::make_scope(*r.recipe, r.clients, r.rounds, {}, r.seed);
  std::vector<sim::Fault> faults;
  for (const std::string& spec : r.faults) {
    sim::Fault f;
    std::string error;
    if (!explore::parse_fault_spec(spec, scope.scenario, &f, &error)) {
      return usage_error(self, error, err);
    }
    faults.push_back(f);
  }
  scope = explore::make_scope(*r.recipe, r.clients, r.rounds, faults, r.seed);

  out << "lockstep explore: " << r.recipe->name << " (" << recipes::to_string(r.recipe->expected)
      << "), " << r.clients << " clients, " << r.rounds
      << " rounds, faults: " << fault_list(scope.scenario) << "\n";
  out << "scenario: " << properties::describe(scope.scenario) << "\n";
  out << "strategy: " << r.strategy;
  if (r.strategy == "exhaustive") {
    r.exhaustive.all_dependent = explore::needs_all_dependent(scope);
    out << ", bound " << r.exhaustive.preemption_bound
        << (r.exhaustive.order_free ? " data choices (event order free)" : " preemptions")
        << ", reduction " << explore::to_string(r.exhaustive.reduction);
  } else {
    out << ", " << r.sample.runs << " runs from seed " << r.sample.seed;
    if (r.strategy == "pct") out << ", depth " << r.sample.pct_depth;
  }
  out << "\n";
  out.flush();

  ScopeProgram program(scope);
  const explore::Stopwatch watch;  // for the report only
  // A Ctrl-C (SIGINT, SIGTERM, SIGHUP) stops the search after the run in progress; on a
  // terminal a progress line is kept on stderr. Neither changes what a finished search finds.
  const properties::StopSignals signals;
  SearchResult res;
  {
    properties::ProgressLine line(io.interactive ? &err : nullptr);
    const explore::RunObserver observe = [&](const explore::SearchProgress& at) {
      if (line.due()) line.update(progress_text(r, at, line.rate(at.schedules)));
      return !properties::StopSignals::stopped();
    };
    r.exhaustive.observer = observe;
    r.sample.observer = observe;
    res = r.strategy == "exhaustive" ? explore::explore_exhaustive(program, r.exhaustive)
          : r.strategy == "pct"      ? explore::explore_pct(program, r.sample)
                                     : explore::explore_random(program, r.sample);
  }  // the line is wiped before the report
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
    out << "result: " << (res.stopped_by_observer ? "INTERRUPTED" : "INCOMPLETE")
        << ": no violation in the " << res.schedules
        << " schedules run, but the scope was not exhausted\n";
    print_covered(r, res, out);
    out << "stopped: " << incomplete << "\n";
    return res.stopped_by_observer ? kExitInterrupted : kExitIncomplete;
  }
  Counterexample c = *res.shortest;
  // An interrupted search is not shrunk: that takes time the user just declined to spend.
  if (r.strategy != "exhaustive" && !c.schedule.empty() && !res.stopped_by_observer) {
    // A sampled counterexample deviates from the default schedule almost everywhere: shrink it.
    uint64_t runs = 0;
    const size_t before = c.schedule.size();
    c = explore::shrink(program, std::move(c), r.sample.target, 5000, &runs);
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
  if (r.save) save_counterexample(scope, c, res.strategy, r.save_dir, io);
  if (res.stopped_by_observer) {
    print_covered(r, res, out);
    out << "stopped: " << incomplete << "\n";
  }
  return res.stopped_by_observer ? kExitInterrupted : kExitFailure;
}

}  // namespace

const Command kExploreCommand = {
    .name = "explore",
    .summary =
        "Search one small scope's schedules systematically (exhaustive, PCT, random) for a "
        "violation; the shortest counterexample is saved as a trace.",
    .positional = "",
    .flags =
        {
            {"recipe", "NAME", "a registry name (see `lockstep list`); required"},
            {"clients", "N", "clients, 1..8 (default 2)"},
            {"rounds", "N", "rounds per client, 1..20 (default 2)"},
            {"faults", "LIST",
             "comma-separated KIND[@MS][:cN][:sN][=TASK], e.g. lost-reply@0:c1, "
             "lagging-follower@0:s1 or stall@0:c1=lock-monitor@after-check; MS after the "
             "workload's start, default 0; sN the server of lagging-follower or server-restart "
             "(s1 the leader; a lag runs the scope on 3 servers); TASK the task a stall holds "
             "or a cancel hits (default none)"},
            {"bound", "K",
             "exhaustive: at most K non-default choices, 0..8 (default 2); with sleep sets or "
             "--order-free only data choices count and event order is explored completely"},
            {"strategy", "S", "exhaustive (default), pct or random"},
            {"runs", "N",
             "pct/random: runs (default 1000); exhaustive: at most N schedules (default 100000)"},
            {"pct-depth", "D", "PCT bug depth, 1..10 (default 3)"},
            {"reduction", "R",
             "exhaustive: none (default) or sleep-sets (sound; implies --order-free)"},
            {"order-free", "",
             "exhaustive without sleep sets: event order does not count toward --bound"},
            {"prune-states", "",
             "exhaustive: UNSOUND pruning of choice points whose state (server, network, "
             "recipe states; not coroutine frames nor the workload's history) was already "
             "branched from: may hide bugs"},
            {"depth-bound", "N",
             "exhaustive, --reduction none: only the first N choice points branch"},
            {"kinds", "LIST",
             "exhaustive: choice kinds that branch (next-event, latency, ambiguous-outcome, "
             "ping-phase, server, child-order; default all)"},
            {"seed", "N", "the scenario's seed (default 1)"},
            {"stop-at-first", "", "stop at the first violation instead of the shortest"},
            {"property", "P", "count only violations of P (e.g. a broken variant's must-violate)"},
            {"save-dir", "DIR", "where the counterexample trace goes (default traces/failures)"},
            {"no-save", "", "do not save the counterexample"},
        },
    .run = run_explore,
    .details =
        "Reports schedules explored, distinct states (met at choice points, new ones per bound\n"
        "level and whether the last level found any; and distinct final states), elapsed time,\n"
        "the coverage marks hit, and either \"no violation in this scope\" or the shortest\n"
        "counterexample.\n"
        "exit: 0 the scope was exhausted with no violation, 1 violation found, 2 usage error,\n"
        "      4 incomplete: no violation in what was run, but the search stopped before the\n"
        "        scope was exhausted (the --runs limit or the schedule queue was reached; pct and\n"
        "        random sample and never exhaust a scope; --prune-states skips schedules); the\n"
        "        report says what was covered and why it stopped,\n"
        "      130 interrupted (Ctrl-C, SIGTERM, SIGHUP): it stops after the run in progress and\n"
        "        reports what it covered the same way\n"
        "On a terminal a progress line (schedules, distinct states, rate) is kept on stderr.\n",
};

}  // namespace lockstep::cli
