// lockstep traces: the trace — everything needed to replay one simulated run bit for bit and to
// read it afterwards — and its versioned JSON file format (traces/FORMAT.md).
//
// A Trace is a plain value: the recipe (name + a fingerprint of its registry entry), the
// scenario (properties::Scenario, faults included), the strategy's name, the scheduler's
// decisions, the simulator's event log (every event, with its count and hash), the workload's
// history, and the verdicts of the properties judged. It is built by traces/record.h from a run
// or loaded from a file here; it never refers to a live World.
//
// Files are written atomically (a temporary file in the target directory, fsync, rename, fsync
// of the directory), so a reader sees either the old file or the whole new one, never a torn
// one. Loading never throws: bad input comes back as a LoadError saying what is wrong (the
// commands of cli/cmd_traces.cc turn it into an exit code). Not thread-safe; no globals.
//
// Invariants of a Trace built by record_trace():
//   1. events[i].index == i and events.size() == event_count (the log was recorded from the start);
//   2. history[i].index == i;
//   3. every index in a verdict's `events` is < history.size().
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "properties/checkers.h"
#include "properties/history.h"
#include "properties/scenario.h"
#include "recipes/registry.h"
#include "sim/world.h"

namespace lockstep::traces {

// The format this code writes and the only one it reads.
constexpr int kFormatVersion = 2;
constexpr const char* kFormatName = "lockstep-trace";

// What a loaded trace may ask for (FORMAT.md, "Limits"). A trace is hand-editable input: every
// count, index and duration is checked against these and against the scenario (a fault's client
// within 1..clients, ...) before anything runs, so a bad value is a LoadError naming the field
// (exit 2), never a crash or an allocation without bound.
constexpr uint32_t kMaxClients = 256;                     // scenario.workload.clients, max_leases
constexpr uint32_t kMaxRounds = 10000;                    // scenario.workload.rounds
constexpr uint32_t kMaxReopens = 10000;                   // scenario.workload.max_reopens
constexpr uint32_t kMaxCallers = 8;  // scenario.workload.callers, a history event's task
constexpr int64_t kMaxDurationUs = 3600LL * 1000 * 1000;  // every scenario time and duration: 1 h

struct RunInfo {
  zk::Time start;    // the workload's start in world time (after the lock directory was made)
  zk::Time heal_at;  // in world time
  zk::Time end;
  bool finished = false;
  uint64_t sim_events = 0;
  uint64_t requests = 0;
};

struct Trace {
  int format_version = kFormatVersion;
  std::string recipe;              // registry name
  std::string recipe_kind;         // recipes::to_string(Kind), informational
  std::string recipe_expected;     // "correct" / "broken", informational
  std::string recipe_fingerprint;  // recipe_fingerprint() at recording time
  properties::Scenario scenario;   // scenario.seed is the world's seed
  std::string strategy;            // the strategy that made the decisions ("random", "shrunk")
  // The property the trace reports, when the recording says so (`lockstep check` saves the
  // property it printed): it must be violated in `verdicts`. Unset: the first violation.
  std::optional<properties::Property> reported;
  std::vector<sim::Decision> decisions;
  std::vector<sim::LoggedEvent> events;  // the simulator's event log
  uint64_t event_count = 0;              // sim::EventLog::size()
  uint64_t log_hash = 0;                 // sim::EventLog::hash()
  properties::History history;
  std::vector<properties::Verdict> verdicts;  // every property judged, in Property order
  RunInfo run;

  // The verdict the trace reports: the violated verdict of `reported` when set (nullptr when that
  // property held or was not judged), else its first violation, or nullptr when every property
  // held.
  const properties::Verdict* violation() const;
};

// "fnv1a64:0123456789abcdef" over the registry entry's name, kind, expectation and description:
// it changes when the recipe's identity or documented behaviour changes.
std::string recipe_fingerprint(const recipes::RecipeInfo& recipe);

// The whole document, deterministic (no timestamps): the same Trace gives the same bytes.
std::string to_json_text(const Trace& trace);

// Why a trace could not be used.
enum class LoadProblem : uint8_t {
  kBadInput,       // missing or unreadable file, malformed JSON, unknown format version or recipe
  kRecipeChanged,  // the trace is sound, but its recipe's registry entry changed since recording
};

struct LoadError {
  LoadProblem problem = LoadProblem::kBadInput;
  std::string message;  // one paragraph naming the file and what is wrong with it
};

// Parses a document. `origin` names it in error messages (a path).
std::optional<Trace> parse_trace(std::string_view text, std::string_view origin, LoadError* error);
// Reads and parses a file.
std::optional<Trace> load_trace(const std::string& path, LoadError* error);

// The registry entry the trace was recorded with. Unknown recipe: kBadInput; a fingerprint that
// differs from the current entry's: kRecipeChanged (the entry is still returned in
// *current so that a caller that was told to go ahead can).
const recipes::RecipeInfo* resolve_recipe(const Trace& trace, LoadError* error,
                                          const recipes::RecipeInfo** current = nullptr);

// True when `path` is an existing file that holds a lockstep trace: it parses as JSON with the
// format marker ("format": "lockstep-trace"), or, when it does not parse (a truncated or
// hand-edited trace), its first 4 KiB name the marker. Used to refuse writing a page over one.
bool is_trace_file(const std::string& path);

// Why `show INPUT --html PAGE` must not write PAGE, with what to do instead, or "" when it may:
// PAGE is the input itself (under any name: the same file), or an existing trace file.
std::string page_target_problem(const std::string& input, const std::string& page);

// Writes `data` to `path` atomically: a temporary file in the same directory, fsync, rename over
// `path`, fsync of the directory. On failure nothing at `path` changes and *error says why.
bool write_file_atomically(const std::string& path, std::string_view data, std::string* error);

// A recipe name as a file-name stem: "broken/watch-first" -> "broken_watch-first" (anything but
// letters, digits, '-' and '.' becomes '_'). The corpus keeps traces/corpus/<stem>.json.
std::string file_stem(const std::string& recipe_name);

// "broken_watch-first-seed17-3fa2b1c0.json": recipe (slashes made underscores), seed, and the
// first 8 hex digits of the event-log hash, so two different runs never share a name.
std::string trace_file_name(const Trace& trace);

// Saves the trace under `dir` (created if missing) as trace_file_name(trace), atomically, and
// never replaces a file: when the name holds the same bytes already (the same failure saved
// before) that path is returned; when it holds another file, the trace gets the first free name
// with a "-2", "-3", ... suffix (the file is hard-linked into place, so two savers cannot race).
// Returns the path, or "" with *error set when it could not be written.
std::string save_failure_trace(const Trace& trace, const std::string& dir,
                               std::string* error = nullptr);
// The default directory for failure traces, relative to the working directory.
constexpr const char* kDefaultFailureDir = "traces/failures";
// $LOCKSTEP_TRACE_DIR when set and not empty, else `fallback`: where tests that find a failure
// save it (the property suites pass <build dir>/traces/failures).
std::string failure_trace_dir(const std::string& fallback = kDefaultFailureDir);
// For a failing test: saves `trace` under `dir` and returns the lines to print (where it is, how
// to replay and show it), or why it could not be saved.
std::string save_failure_note(const Trace& trace, const std::string& dir = failure_trace_dir());

// "./lockstep replay PATH" (and how to read it), for failure reports; `program`: how the tool
// is called (a user's own binary: its name).
std::string replay_command(const std::string& path, const std::string& program = "./lockstep");
void print_replay_command(std::ostream& out, const std::string& path,
                          const std::string& program = "./lockstep");

// One event-log line, exactly as sim::EventLog::to_text() prints it (without the newline).
std::string event_line(const sim::LoggedEvent& e);

}  // namespace lockstep::traces
