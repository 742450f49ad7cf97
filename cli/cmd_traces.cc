// `lockstep replay | recheck | show | corpus`: the trace commands. Their engines are traces/
// (trace.h loads and checks a file, record.h replays and rechecks it, timeline.h renders it,
// corpus.h records the regression corpus); this file owns their flags, their output and their
// exit codes (cli/cli.h; traces/FORMAT.md documents them for trace users).
#include <cinttypes>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "recipes/registry.h"
#include "traces/corpus.h"
#include "traces/record.h"
#include "traces/timeline.h"
#include "traces/trace.h"

namespace lockstep::cli {
namespace {

// The exit code of a trace that could not be used.
int exit_code_of(const traces::LoadError& e) {
  return e.problem == traces::LoadProblem::kRecipeChanged ? kExitRecipeChanged : kExitUsage;
}

// Loads `path` and finds its recipe; nullptr (with the exit code in *code) when it cannot be
// used. `allow_changed`: a changed recipe is accepted with a note.
const recipes::RecipeInfo* open_trace(const std::string& path, bool allow_changed,
                                      traces::Trace* trace, int* code, std::ostream& err) {
  traces::LoadError e;
  std::optional<traces::Trace> t = traces::load_trace(path, &e);
  if (!t) {
    err << "error: " << e.message << "\n";
    *code = exit_code_of(e);
    return nullptr;
  }
  *trace = std::move(*t);
  const recipes::RecipeInfo* current = nullptr;
  const recipes::RecipeInfo* r = traces::resolve_recipe(*trace, &e, &current);
  if (r != nullptr) return r;
  if (e.problem == traces::LoadProblem::kRecipeChanged && allow_changed && current != nullptr) {
    err << "note: " << path << ": " << e.message << "\n";
    return current;
  }
  err << "error: " << path << ": " << e.message << "\n";
  *code = exit_code_of(e);
  return nullptr;
}

int run_replay(const Command& self, const Args& args, const Io& io) {
  std::ostream& out = io.out;
  if (args.positional.size() != 1) return usage_error(self, "give exactly one trace FILE", io.err);
  const std::string& path = args.positional[0];
  traces::Trace trace;
  int code = kExitUsage;
  const recipes::RecipeInfo* recipe =
      open_trace(path, args.has("allow-changed"), &trace, &code, io.err);
  if (recipe == nullptr) return code;
  out << "replaying " << path << ": " << trace.recipe << " seed " << trace.scenario.seed << ", "
      << trace.decisions.size() << " recorded decisions, " << trace.event_count << " events, "
      << trace.history.size() << " history events\n";
  const traces::ReplayResult r = traces::replay_trace(trace, *recipe);
  if (r.divergence) {
    const traces::Divergence& d = *r.divergence;
    out << "DIVERGED: first divergent " << d.where;
    if (d.where == "event log" || d.where == "history") out << " event #" << d.index;
    if (d.where == "event log") out << " (" << properties::format_time(d.at) << ", c" << d.client << ")";
    out << "\n  expected: " << d.expected << "\n  actual:   " << d.actual << "\n";
    if (!d.detail.empty()) out << "  replay strategy: " << d.detail << "\n";
    if (d.where == "event-log hash") {
      out << "  every line and history event matched: the simulator's hash (or a field the text\n"
             "  lines do not show) changed; if intended, re-record (lockstep corpus)\n";
    }
    out << "recorded verdict: " << traces::verdict_summary(trace) << "\n";
    if (r.stopped_early) {
      out << "the replay stopped at that event: " << r.replayed.events.size() << " of "
          << trace.event_count << " recorded events replayed; nothing after it was run\n";
    } else {
      out << "verdict now:      " << traces::verdict_summary(r.replayed) << "\n";
    }
    return kExitDiverged;
  }
  char hash[24];
  std::snprintf(hash, sizeof hash, "0x%016" PRIx64, trace.log_hash);
  out << "reproduced exactly: " << trace.event_count << " events, hash " << hash << ", "
      << trace.history.size() << " history events\n";
  out << "verdict: " << traces::verdict_summary(r.replayed) << "\n";
  return kExitOk;
}

int run_recheck(const Command& self, const Args& args, const Io& io) {
  if (args.positional.empty()) return usage_error(self, "give at least one trace FILE", io.err);
  bool bad_input = false;
  bool still_fails = false;
  for (const std::string& path : args.positional) {
    traces::Trace trace;
    int code = kExitUsage;
    // A changed recipe is what recheck is for: judge it as it is now.
    const recipes::RecipeInfo* recipe = open_trace(path, true, &trace, &code, io.err);
    if (recipe == nullptr) {
      bad_input = true;
      continue;
    }
    const std::vector<properties::Verdict> now = traces::recheck_trace(trace, *recipe);
    bool fails = false;
    for (const properties::Verdict& v : now) fails = fails || !v.ok;
    still_fails = still_fails || fails;
    io.out << path << ": " << trace.recipe << " seed " << trace.scenario.seed << "\n"
           << "  recorded: " << traces::verdict_summary(trace) << "\n"
           << "  now:      " << traces::verdict_summary(now) << "\n"
           << "  => " << (fails ? "STILL FAILS" : "passes now") << "\n";
  }
  if (bad_input) return kExitUsage;
  return still_fails ? kExitFailure : kExitOk;
}

int run_show(const Command& self, const Args& args, const Io& io) {
  if (args.positional.size() != 1) return usage_error(self, "give exactly one trace FILE", io.err);
  const std::string& input = args.positional[0];
  traces::TextOptions o;
  const auto lane_width = parse_uint_flag(self, args, "lane-width", o.lane_width, 8, 200, io.err);
  const auto context = parse_uint_flag(self, args, "context", 0, 0, 100000, io.err);
  if (!lane_width || !context) return kExitUsage;
  o.lane_width = static_cast<uint32_t>(*lane_width);
  if (args.has("context")) o.context_rows = static_cast<uint32_t>(*context);
  const bool html = args.has("html");
  const std::string page = args.get("html", "");
  if (html && page.empty()) return usage_error(self, "--html needs a file name", io.err);
  if (html) {
    if (const std::string problem = traces::page_target_problem(input, page); !problem.empty()) {
      return usage_error(self, problem, io.err);
    }
  }
  traces::LoadError e;
  std::optional<traces::Trace> trace = traces::load_trace(input, &e);
  if (!trace) {
    io.err << "error: " << e.message << "\n";
    return exit_code_of(e);
  }
  // Showing needs no recipe code; a changed recipe is only worth a note.
  const recipes::RecipeInfo* current = nullptr;
  if (traces::resolve_recipe(*trace, &e, &current) == nullptr) {
    io.err << "note: " << e.message << "\n";
  }
  const traces::Timeline tl = traces::build_timeline(*trace);
  io.out << traces::render_text(tl, o);
  if (html) {
    std::string why;
    if (!traces::write_file_atomically(page, traces::render_html(tl), &why)) {
      io.err << "error: cannot write the page: " << why << "\n";
      return kExitUsage;
    }
    io.out << "wrote " << page << "\n";
  }
  return kExitOk;
}

int run_corpus(const Command& self, const Args& args, const Io& io) {
  traces::CorpusOptions o;
  o.dir = args.get("dir", o.dir);
  if (o.dir.empty()) return usage_error(self, "--dir needs a directory", io.err);
  const auto seeds = parse_uint_flag(self, args, "seeds", o.seeds, 1, 100000000, io.err);
  if (!seeds) return kExitUsage;
  o.seeds = *seeds;
  for (const std::string& name : args.all("recipe")) {
    if (recipes::find_recipe(name) == nullptr) {
      return usage_error(self, "unknown recipe '" + name + "' (`lockstep list` names them)",
                         io.err);
    }
    o.recipes.push_back(name);
  }
  const traces::CorpusReport r = traces::regenerate_corpus(o);
  if (!r.manifest_found && r.error.empty()) {
    io.out << "no " << o.dir << "/" << traces::kTriagedDir << "/" << traces::kTriagedManifest
           << ": no triaged seeds to record\n";
  }
  for (const traces::CorpusEntry& e : r.entries) {
    if (!e.triaged && e.seed == 0) {
      io.out << e.recipe << ": " << e.failure << "\n";
    } else if (!e.triaged) {
      io.out << e.recipe << ": seed " << e.seed << " -> " << e.path << " (" << e.events
             << " events, " << e.history_events << " history events): " << e.verdict << "\n";
    } else if (!e.failure.empty()) {
      io.out << e.recipe << ": triaged seed " << e.seed << " " << e.failure
             << ", not saved: " << e.verdict << "\n  reproduce: " << io.program << " check --recipe "
             << e.recipe << " --seed " << e.seed << "\n";
    } else {
      io.out << e.recipe << ": triaged seed " << e.seed << " -> " << e.path << " (" << e.events
             << " events): " << e.verdict << "\n";
    }
  }
  for (const std::string& path : r.stale) {
    io.out << path << ": not in " << traces::kTriagedManifest
           << "; remove it or list its seed there\n";
  }
  if (!r.error.empty()) {
    io.err << "lockstep corpus: " << r.error << "\n";
    return kExitUsage;
  }
  return r.ok() ? kExitOk : kExitFailure;
}

}  // namespace

const Command kReplayCommand = {
    .name = "replay",
    .summary = "Re-run a saved trace's decisions and compare the run with it, event by event.",
    .positional = "FILE",
    .flags = {{"allow-changed", "",
               "replay even though the recipe changed since the trace was recorded"}},
    .run = run_replay,
    .details =
        "Checks that the event log, the history and the verdict come out exactly as recorded.\n"
        "Strict: the run stops at the first event-log line that differs and names it (index,\n"
        "time, client, expected and actual line).\n"
        "exit: 0 reproduced exactly, 5 diverged, 6 the recipe changed since recording,\n"
        "      2 bad input (missing or malformed file, unknown recipe or format version)\n",
};

const Command kRecheckCommand = {
    .name = "recheck",
    .summary = "Run saved traces' scenarios against the current code and print the verdicts now.",
    .positional = "FILE...",
    .flags = {},
    .run = run_recheck,
    .details =
        "Each trace's scenario and seed run with the seeded random strategy, not the recorded\n"
        "decisions (a shrunk trace, strategy \"shrunk\": with its decisions, leniently: a choice\n"
        "that moved gets the default); a changed recipe is judged as it is now.\n"
        "exit: 0 every trace passes now, 1 some trace still fails, 2 some file is bad input\n"
        "      (it is reported and the others still run)\n",
};

const Command kShowCommand = {
    .name = "show",
    .summary = "Print a trace as a timeline, one lane per client (--html OUT: also a swim-lane page).",
    .positional = "FILE",
    .flags = {{"html", "OUT",
               "also write the swim-lane page to OUT, atomically; never over the trace shown "
               "nor over any other trace"},
              {"lane-width", "N", "characters per client lane, 8..200 (default 28)"},
              {"context", "N", "print only the rows within N rows of the violation"}},
    .run = run_show,
    .details = "exit: 0 shown, 2 bad input (OUT is then not touched)\n",
};

const Command kCorpusCommand = {
    .name = "corpus",
    .summary =
        "Regenerate the regression corpus: a failing trace per broken variant, a passing one per "
        "triaged seed.",
    .positional = "",
    .flags = {{"dir", "DIR", "the corpus directory (default traces/corpus)"},
              {"seeds", "N",
               "look for each broken variant's first failing seed in 1..N (default 200)"},
              {"recipe", "NAME", "only this recipe (repeatable)"}},
    .run = run_corpus,
    .details =
        "Records, for each broken variant, the first seed in 1..N that violates the property it\n"
        "must be caught by as DIR/<recipe>.json, and each triaged seed listed in DIR/triaged/SEEDS\n"
        "(`recipe seed cause`) as it runs today as DIR/triaged/<recipe>-seed<S>.json.\n"
        "exit: 0 every trace saved, 1 some variant was not caught, some triaged seed fails now\n"
        "      (not saved) or a trace in DIR/triaged is not in SEEDS, 2 a usage error, a bad\n"
        "      SEEDS (nothing is run) or a file that cannot be written\n",
};

}  // namespace lockstep::cli
