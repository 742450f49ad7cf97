// The trace subcommands: replay, recheck, show, corpus (traces/commands.h).
#include "traces/commands.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "traces/corpus.h"
#include "traces/record.h"
#include "traces/timeline.h"
#include "traces/trace.h"

namespace lockstep::traces {
namespace {

struct Parsed {
  std::vector<std::string> positional;
  std::vector<std::pair<std::string, std::string>> flags;  // name (no dashes), value
  bool help = false;
};

// Flags: "--name", "--name VALUE", "--name=VALUE" for the names in `valued`; `boolean` take none.
std::optional<Parsed> parse(int argc, char** argv, const std::vector<std::string>& valued,
                            const std::vector<std::string>& boolean, const char* command,
                            std::ostream& err) {
  Parsed p;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      p.help = true;
      continue;
    }
    if (a.rfind("--", 0) != 0) {
      p.positional.push_back(a);
      continue;
    }
    std::string name = a.substr(2);
    std::optional<std::string> value;
    if (const size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    const bool takes_value = std::find(valued.begin(), valued.end(), name) != valued.end();
    const bool is_bool = std::find(boolean.begin(), boolean.end(), name) != boolean.end();
    if (!takes_value && !is_bool) {
      err << "lockstep " << command << ": unknown flag --" << name << " (see --help)\n";
      return std::nullopt;
    }
    if (is_bool) {
      if (value) {
        err << "lockstep " << command << ": --" << name << " takes no value\n";
        return std::nullopt;
      }
      p.flags.emplace_back(name, "");
      continue;
    }
    if (!value) {
      if (i + 1 >= argc) {
        err << "lockstep " << command << ": --" << name << " needs a value\n";
        return std::nullopt;
      }
      value = argv[++i];
    }
    p.flags.emplace_back(name, *value);
  }
  return p;
}

std::optional<std::string> flag(const Parsed& p, const std::string& name) {
  std::optional<std::string> out;
  for (const auto& [n, v] : p.flags) {
    if (n == name) out = v;
  }
  return out;
}

std::optional<uint64_t> parse_count(const std::string& s) {
  if (s.empty() || s.size() > 12) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

// "0.022911": seconds with microseconds, as the event log prints times.
std::string format_seconds(zk::Time t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld.%06lld", static_cast<long long>(t.us / 1000000),
                static_cast<long long>(t.us % 1000000));
  return buf;
}

constexpr const char* kReplayUsage =
    "usage: lockstep replay FILE [--allow-changed]\n"
    "Re-runs a saved trace's recorded scheduler decisions and checks that the event log, the\n"
    "history and the verdict come out exactly as recorded. Strict: the run stops at the first\n"
    "event-log line that differs and names it (index, time, client, expected and actual line).\n"
    "exit: 0 reproduced exactly, 3 diverged, 2 bad input, 4 the recipe changed since recording\n";
constexpr const char* kRecheckUsage =
    "usage: lockstep recheck FILE...\n"
    "Runs each trace's scenario and seed against the current code (seeded random strategy, not\n"
    "the recorded decisions) and prints the verdict now.\n"
    "exit: 0 every trace passes now, 1 some trace still fails, 2 bad input\n";
constexpr const char* kShowUsage =
    "usage: lockstep show FILE [--html OUT] [--lane-width N] [--context N]\n"
    "Prints a trace as a timeline, one lane per client; --html also writes a swim-lane page;\n"
    "--context N prints only the rows within N rows of the violation. OUT is written atomically\n"
    "and never over the trace being shown nor over any other trace file.\n"
    "exit: 0 shown, 2 bad input (OUT is then not touched)\n";
constexpr const char* kCorpusUsage =
    "usage: lockstep corpus [--dir DIR] [--seeds N] [--recipe NAME]...\n"
    "Records, for each broken variant (or NAME), the first failing seed in 1..N as\n"
    "DIR/<recipe>.json, and each triaged seed listed in DIR/triaged/SEEDS (`recipe seed cause`;\n"
    "with --recipe, those of NAME) as it runs today as DIR/triaged/<recipe>-seed<S>.json\n"
    "(default DIR traces/corpus, N 200).\n"
    "exit: 0 every trace saved, 1 some variant not caught, some triaged seed fails now or a\n"
    "triaged trace is not in SEEDS, 2 usage error or a bad SEEDS\n";

// Loads FILE and finds its recipe. Returns nullptr with the exit code in *code on failure;
// `allow_changed` accepts a changed recipe (with a note).
const recipes::RecipeInfo* open_trace(const std::string& path, bool allow_changed, Trace* trace,
                                      int* code, std::ostream& err) {
  LoadError e;
  std::optional<Trace> t = load_trace(path, &e);
  if (!t) {
    err << "error: " << e.message << "\n";
    *code = e.exit_code;
    return nullptr;
  }
  *trace = std::move(*t);
  const recipes::RecipeInfo* current = nullptr;
  const recipes::RecipeInfo* r = resolve_recipe(*trace, &e, &current);
  if (r != nullptr) return r;
  if (e.exit_code == kExitRecipeChanged && allow_changed && current != nullptr) {
    err << "note: " << path << ": " << e.message << "\n";
    return current;
  }
  err << "error: " << path << ": " << e.message << "\n";
  *code = e.exit_code;
  return nullptr;
}

// Why `show INPUT --html PAGE` must not write PAGE, or "" when it may: PAGE is the input itself
// (under any name: same file), or an existing file that holds a trace.
std::string html_target_problem(const std::string& input, const std::string& page) {
  const std::string instead = "; name another file for the page, e.g. --html " +
                              std::filesystem::path(page).replace_extension(".html").string();
  std::error_code ec;
  if (page == input || std::filesystem::equivalent(input, page, ec)) {
    return "--html " + page + " is the trace being shown: the page would overwrite it" +
           (std::filesystem::path(page).extension() == ".html"
                ? std::string("; name another file for the page")
                : instead);
  }
  if (is_trace_file(page)) {
    return "--html " + page + " is a lockstep trace: the page would overwrite it" + instead +
           " (or remove the trace first if you mean to replace it)";
  }
  return {};
}

// Records the first seed in 1..seeds that catches broken variant `r` as DIR/<stem>.json.
// kExitOk saved, kExitStillFails not caught, kExitBadInput the file could not be written.
int record_broken_variant(const recipes::RecipeInfo& r, uint64_t seeds, const std::string& dir,
                          std::ostream& out, std::ostream& err) {
  const std::optional<uint64_t> found = first_failing_seed(r, seeds);
  if (!found) {
    out << r.name << ": not caught in seeds 1.." << seeds << "\n";
    return kExitStillFails;
  }
  const Trace t = record_trace(r, check_scenario(r, *found));
  const std::string path = (std::filesystem::path(dir) / (file_stem(r.name) + ".json")).string();
  std::string why;
  if (!write_file_atomically(path, to_json_text(t), &why)) {
    err << "lockstep corpus: " << why << "\n";
    return kExitBadInput;
  }
  out << r.name << ": seed " << *found << " -> " << path << " (" << t.event_count << " events, "
      << t.history.size() << " history events): " << verdict_summary(t) << "\n";
  return kExitOk;
}

// Records each of `todo` as the seed runs today into `dir` (DIR/triaged), and names every trace
// file there that the whole manifest `all` does not list. A seed that violates a property now is
// reported and not written: a triaged trace must pass. kExitOk all written and none stale,
// kExitStillFails some seed fails now or a file is stale, kExitBadInput a write failed.
int record_triaged_seeds(const std::vector<TriagedSeed>& todo, const std::vector<TriagedSeed>& all,
                         const std::string& dir, std::ostream& out, std::ostream& err) {
  std::error_code ec;
  if (!todo.empty()) std::filesystem::create_directories(dir, ec);
  if (ec) {
    err << "lockstep corpus: cannot create " << dir << ": " << ec.message() << "\n";
    return kExitBadInput;
  }
  bool failed = false;
  for (const TriagedSeed& s : todo) {
    const recipes::RecipeInfo* r = recipes::find_recipe(s.recipe);  // the manifest checked it
    const Trace t = record_trace(*r, check_scenario(*r, s.seed));
    const std::string path = (std::filesystem::path(dir) / triaged_trace_name(s)).string();
    if (t.violation() != nullptr) {
      out << s.recipe << ": triaged seed " << s.seed
          << " FAILS NOW, not saved: " << verdict_summary(t)
          << "\n  reproduce: ./lockstep check --recipe " << s.recipe << " --seed " << s.seed
          << "\n";
      failed = true;
      continue;
    }
    std::string why;
    if (!write_file_atomically(path, to_json_text(t), &why)) {
      err << "lockstep corpus: " << why << "\n";
      return kExitBadInput;
    }
    out << s.recipe << ": triaged seed " << s.seed << " -> " << path << " (" << t.event_count
        << " events): " << verdict_summary(t) << "\n";
  }
  std::set<std::string> listed;
  for (const TriagedSeed& s : all) listed.insert(triaged_trace_name(s));
  std::set<std::string> present;  // ordered: the report does not depend on the directory's order
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".json") present.insert(e.path().filename().string());
  }
  for (const std::string& name : present) {
    if (listed.count(name) != 0) continue;
    out << (std::filesystem::path(dir) / name).string() << ": not in " << kTriagedManifest
        << "; remove it or list its seed there\n";
    failed = true;
  }
  return failed ? kExitStillFails : kExitOk;
}

}  // namespace

int replay_main(int argc, char** argv, std::ostream& out, std::ostream& err) {
  std::optional<Parsed> p = parse(argc, argv, {}, {"allow-changed"}, "replay", err);
  if (!p) return kExitBadInput;
  if (p->help) {
    out << kReplayUsage;
    return kExitOk;
  }
  if (p->positional.size() != 1) {
    err << "lockstep replay: give exactly one trace FILE\n" << kReplayUsage;
    return kExitBadInput;
  }
  const std::string& path = p->positional[0];
  Trace trace;
  int code = kExitBadInput;
  const recipes::RecipeInfo* recipe =
      open_trace(path, flag(*p, "allow-changed").has_value(), &trace, &code, err);
  if (recipe == nullptr) return code;
  out << "replaying " << path << ": " << trace.recipe << " seed " << trace.scenario.seed << ", "
      << trace.decisions.size() << " recorded decisions, " << trace.event_count << " events, "
      << trace.history.size() << " history events\n";
  const ReplayResult r = replay_trace(trace, *recipe);
  if (r.divergence) {
    const Divergence& d = *r.divergence;
    out << "DIVERGED: first divergent " << d.where;
    if (d.where == "event log" || d.where == "history") out << " event #" << d.index;
    if (d.where == "event log") out << " (t=" << format_seconds(d.at) << ", c" << d.client << ")";
    out << "\n  expected: " << d.expected << "\n  actual:   " << d.actual << "\n";
    if (!d.detail.empty()) out << "  replay strategy: " << d.detail << "\n";
    if (d.where == "event-log hash") {
      out << "  every line and history event matched: the simulator's hash (or a field the text\n"
             "  lines do not show) changed; if intended, re-record (lockstep corpus)\n";
    }
    out << "recorded verdict: " << verdict_summary(trace) << "\n";
    if (r.stopped_early) {
      out << "the replay stopped at that event: " << r.replayed.events.size() << " of "
          << trace.event_count << " recorded events replayed; nothing after it was run\n";
    } else {
      out << "verdict now:      " << verdict_summary(r.replayed) << "\n";
    }
    return kExitDiverged;
  }
  char hash[24];
  std::snprintf(hash, sizeof hash, "0x%016" PRIx64, trace.log_hash);
  out << "reproduced exactly: " << trace.event_count << " events, hash " << hash << ", "
      << trace.history.size() << " history events\n";
  out << "verdict: " << verdict_summary(r.replayed) << "\n";
  return kExitOk;
}

int recheck_main(int argc, char** argv, std::ostream& out, std::ostream& err) {
  std::optional<Parsed> p = parse(argc, argv, {}, {}, "recheck", err);
  if (!p) return kExitBadInput;
  if (p->help) {
    out << kRecheckUsage;
    return kExitOk;
  }
  if (p->positional.empty()) {
    err << "lockstep recheck: give at least one trace FILE\n" << kRecheckUsage;
    return kExitBadInput;
  }
  bool bad_input = false;
  bool still_fails = false;
  for (const std::string& path : p->positional) {
    Trace trace;
    int code = kExitBadInput;
    // A changed recipe is what recheck is for: judge it as it is now.
    const recipes::RecipeInfo* recipe = open_trace(path, true, &trace, &code, err);
    if (recipe == nullptr) {
      bad_input = true;
      continue;
    }
    const std::vector<properties::Verdict> now = recheck_trace(trace, *recipe);
    bool fails = false;
    for (const properties::Verdict& v : now) fails = fails || !v.ok;
    still_fails = still_fails || fails;
    out << path << ": " << trace.recipe << " seed " << trace.scenario.seed << "\n"
        << "  recorded: " << verdict_summary(trace) << "\n"
        << "  now:      " << verdict_summary(now) << "\n"
        << "  => " << (fails ? "STILL FAILS" : "passes now") << "\n";
  }
  if (bad_input) return kExitBadInput;
  return still_fails ? kExitStillFails : kExitOk;
}

int show_main(int argc, char** argv, std::ostream& out, std::ostream& err) {
  std::optional<Parsed> p = parse(argc, argv, {"html", "lane-width", "context"}, {}, "show", err);
  if (!p) return kExitBadInput;
  if (p->help) {
    out << kShowUsage;
    return kExitOk;
  }
  if (p->positional.size() != 1) {
    err << "lockstep show: give exactly one trace FILE\n" << kShowUsage;
    return kExitBadInput;
  }
  TextOptions o;
  if (std::optional<std::string> w = flag(*p, "lane-width")) {
    std::optional<uint64_t> v = parse_count(*w);
    if (!v || *v < 8 || *v > 200) {
      err << "lockstep show: --lane-width wants a number in [8, 200], not '" << *w << "'\n";
      return kExitBadInput;
    }
    o.lane_width = static_cast<uint32_t>(*v);
  }
  if (std::optional<std::string> c = flag(*p, "context")) {
    std::optional<uint64_t> v = parse_count(*c);
    if (!v || *v > 100000) {
      err << "lockstep show: --context wants a number of rows, not '" << *c << "'\n";
      return kExitBadInput;
    }
    o.context_rows = static_cast<uint32_t>(*v);
  }
  const std::optional<std::string> html = flag(*p, "html");
  if (html && html->empty()) {
    err << "lockstep show: --html needs a file name\n";
    return kExitBadInput;
  }
  if (html) {
    if (const std::string problem = html_target_problem(p->positional[0], *html);
        !problem.empty()) {
      err << "lockstep show: " << problem << "\n";
      return kExitBadInput;
    }
  }
  LoadError e;
  std::optional<Trace> trace = load_trace(p->positional[0], &e);
  if (!trace) {
    err << "error: " << e.message << "\n";
    return e.exit_code;
  }
  // Showing needs no recipe code; a changed recipe is only worth a note.
  const recipes::RecipeInfo* current = nullptr;
  if (resolve_recipe(*trace, &e, &current) == nullptr) err << "note: " << e.message << "\n";
  const Timeline tl = build_timeline(*trace);
  out << render_text(tl, o);
  if (html) {
    std::string why;
    if (!write_file_atomically(*html, render_html(tl), &why)) {
      err << "error: cannot write the page: " << why << "\n";
      return kExitBadInput;
    }
    out << "wrote " << *html << "\n";
  }
  return kExitOk;
}

int corpus_main(int argc, char** argv, std::ostream& out, std::ostream& err) {
  std::optional<Parsed> p = parse(argc, argv, {"dir", "seeds", "recipe"}, {}, "corpus", err);
  if (!p) return kExitBadInput;
  if (p->help) {
    out << kCorpusUsage;
    return kExitOk;
  }
  if (!p->positional.empty()) {
    err << "lockstep corpus: unexpected argument '" << p->positional[0] << "'\n" << kCorpusUsage;
    return kExitBadInput;
  }
  const std::string dir = flag(*p, "dir").value_or("traces/corpus");
  uint64_t seeds = 200;
  if (std::optional<std::string> s = flag(*p, "seeds")) {
    std::optional<uint64_t> v = parse_count(*s);
    if (!v || *v == 0) {
      err << "lockstep corpus: --seeds wants a positive number, not '" << *s << "'\n";
      return kExitBadInput;
    }
    seeds = *v;
  }
  std::vector<const recipes::RecipeInfo*> named;
  for (const auto& [name, value] : p->flags) {
    if (name != "recipe") continue;
    const recipes::RecipeInfo* r = recipes::find_recipe(value);
    if (r == nullptr) {
      err << "lockstep corpus: unknown recipe '" << value << "' (see `lockstep list`)\n";
      return kExitBadInput;
    }
    named.push_back(r);
  }
  // The manifest is read (and a bad one refused) before anything is run or written.
  const std::string manifest =
      (std::filesystem::path(dir) / kTriagedDir / kTriagedManifest).string();
  std::vector<TriagedSeed> triaged;
  if (std::filesystem::exists(manifest)) {
    std::string why;
    std::optional<std::vector<TriagedSeed>> rows = load_triaged_seeds(manifest, &why);
    if (!rows) {
      err << "lockstep corpus: " << why << "\n";
      return kExitBadInput;
    }
    triaged = std::move(*rows);
  } else {
    out << "no " << manifest << ": no triaged seeds to record\n";
  }
  std::vector<const recipes::RecipeInfo*> broken;
  for (const recipes::RecipeInfo& r : recipes::registry()) {
    const bool wanted = named.empty() || std::find(named.begin(), named.end(), &r) != named.end();
    if (wanted && r.expected == recipes::Expected::kBroken) broken.push_back(&r);
  }
  std::vector<TriagedSeed> todo;
  for (const TriagedSeed& t : triaged) {
    const recipes::RecipeInfo* r = recipes::find_recipe(t.recipe);
    if (named.empty() || std::find(named.begin(), named.end(), r) != named.end()) todo.push_back(t);
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    err << "lockstep corpus: cannot create " << dir << ": " << ec.message() << "\n";
    return kExitBadInput;
  }
  bool missed = false;
  for (const recipes::RecipeInfo* r : broken) {
    const int code = record_broken_variant(*r, seeds, dir, out, err);
    if (code == kExitBadInput) return code;
    missed = missed || code != kExitOk;
  }
  const int code = record_triaged_seeds(
      todo, triaged, (std::filesystem::path(dir) / kTriagedDir).string(), out, err);
  if (code == kExitBadInput) return code;
  return missed || code != kExitOk ? kExitStillFails : kExitOk;
}

}  // namespace lockstep::traces
