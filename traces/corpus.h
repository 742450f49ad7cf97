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
// Pure functions apart from load_triaged_seeds, which reads one file; single-threaded.
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

}  // namespace lockstep::traces
