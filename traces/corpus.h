// lockstep traces: the triaged-seed manifest of the regression corpus (traces/FORMAT.md,
// "Regression corpus").
//
// A triaged seed is a seed at which a correct recipe once violated a property and whose cause
// was found and fixed. The one list of them is the manifest traces/corpus/triaged/SEEDS: one
// line per seed, `recipe seed cause...`; blank lines and lines starting with '#' are ignored.
// `lockstep corpus` records each listed seed as traces/corpus/triaged/<recipe>-seed<S>.json;
// traces_test replays those files and properties/regression_test.cc runs the same list.
//
// Invariants of a parsed manifest: every recipe is in the registry and is correct, every seed is
// positive, every cause is non-empty, and no (recipe, seed) appears twice. Order is the file's.
//
// regenerate_corpus (what `lockstep corpus` runs) records both kinds of corpus trace: for each
// broken variant, the first seed that catches it, as run (unshrunk) and reporting the property
// that catches it (Trace::reported), as DIR/<stem>.json; for each triaged seed, the
// seed as it runs today, as DIR/triaged/<recipe>-seed<S>.json.
//
// Pure functions apart from load_triaged_seeds, which reads one file, and regenerate_corpus,
// which runs seeds and writes trace files (atomically); single-threaded.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lockstep::traces {

struct TriagedSeed {
  std::string recipe;
  uint64_t seed = 0;
  std::string cause;  // what made the correct recipe fail there ("sim: ...", "recipe: ...")
  // The sweep's draw era it was found in (GenerateOptions::draw_era): the row says `later-draws`
  // (era 1) or `era-N` after the seed; a row that says neither was found in era 0. The seed
  // keeps the scenario it derived then.
  uint32_t draw_era = 0;
};

// Under the corpus directory: the triaged traces' directory and, in it, the manifest's name.
constexpr const char* kTriagedDir = "triaged";
constexpr const char* kTriagedManifest = "SEEDS";

// Parses manifest text; `origin` names it in errors. nullopt with *error ("SEEDS:7: ...") on the
// first line that breaks an invariant above.
std::optional<std::vector<TriagedSeed>> parse_triaged_seeds(std::string_view text,
                                                            std::string_view origin,
                                                            std::string* error);
// Reads and parses the manifest at `path`.
std::optional<std::vector<TriagedSeed>> load_triaged_seeds(const std::string& path,
                                                           std::string* error);

// The row as its manifest line, "exclusive 1142 recipe: ..." (also how tests print a row).
std::ostream& operator<<(std::ostream& out, const TriagedSeed& t);

// "fair_mutex_376732": the row as an identifier (letters, digits, '_'), e.g. a test's name.
std::string triaged_id(const TriagedSeed& t);

// "fair-mutex-seed376732.json": the triaged trace's file name in the triaged directory.
std::string triaged_trace_name(const TriagedSeed& t);

struct CorpusOptions {
  std::string dir = "traces/corpus";
  uint64_t seeds = 200;              // a broken variant's failing seed is looked for in 1..seeds
  std::vector<std::string> recipes;  // only these (registry names); empty: every broken variant
                                     // and every triaged seed
};

// One trace the corpus run recorded, or failed to.
struct CorpusEntry {
  std::string recipe;
  bool triaged = false;  // a triaged seed; else a broken variant's first catching seed
  uint64_t seed = 0;     // 0: a broken variant not caught in 1..seeds
  std::string path;      // where the trace was saved; empty when it was not
  uint64_t events = 0;   // the trace's simulator events and history events
  uint64_t history_events = 0;
  std::string verdict;  // verdict_summary() of the run
  // Not empty when this entry fails the run: "not caught in seeds 1..200", or "FAILS NOW" (a
  // triaged seed that violates a property today: not saved, since a triaged trace must pass).
  std::string failure;
};

struct CorpusReport {
  // Not empty when the run could not go on: a bad manifest (nothing ran) or a directory or file
  // that could not be written (what ran before it is in `entries`).
  std::string error;
  bool manifest_found = false;  // DIR/triaged/SEEDS exists
  std::vector<CorpusEntry> entries;  // broken variants in registry order, then triaged seeds
  // Trace files in DIR/triaged that the manifest does not list (each fails the run).
  std::vector<std::string> stale;

  bool ok() const;  // no error, no failing entry, nothing stale
};

// Records the corpus as described above. Unknown recipe names are the caller's to refuse.
CorpusReport regenerate_corpus(const CorpusOptions& options);

}  // namespace lockstep::traces
