// The regression corpus: every trace kept under traces/corpus/ replays exactly and reproduces
// its recorded verdict, and every broken variant of the registry has one that catches it; every
// triaged seed of traces/corpus/triaged/SEEDS has a trace there that replays exactly and passes
// every property, and no trace there is unlisted.
#include "traces/corpus.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "properties/claims.h"
#include "traces/record.h"
#include "traces/test_util.h"
#include "traces/trace.h"

namespace lockstep::traces {
namespace {

const std::string kCorpusDir = std::string(LOCKSTEP_SOURCE_DIR) + "/traces/corpus";

std::vector<std::string> corpus_files() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(kCorpusDir, ec)) {
    if (e.path().extension() == ".json") out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

class CorpusTrace : public ::testing::TestWithParam<std::string> {};

// Replaying the kept trace reproduces its event log, history and verdict (exit 0), and the
// verdict is a violation.
TEST_P(CorpusTrace, ReplaysExactlyWithItsVerdict) {
  const std::string path = kCorpusDir + "/" + GetParam();
  const testing::CommandResult r = testing::run_command("replay", {path});
  EXPECT_EQ(r.code, cli::kExitOk) << r.out << r.err << "\nregenerate with: ./lockstep corpus --dir "
                             << kCorpusDir;
  LoadError e;
  std::optional<Trace> t = load_trace(path, &e);
  ASSERT_TRUE(t.has_value()) << e.message;
  EXPECT_NE(t->violation(), nullptr);
  EXPECT_NE(r.out.find("verdict: " + verdict_summary(*t)), std::string::npos) << r.out;
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusTrace, ::testing::ValuesIn(corpus_files()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name;
                           for (char c : info.param.substr(0, info.param.size() - 5)) {
                             name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           }
                           return name;
                         });

// Each broken variant has a corpus trace whose recorded verdicts include a violation of the
// property the variant must be caught by.
TEST(Corpus, EveryBrokenVariantHasATraceThatCatchesIt) {
  for (const recipes::RecipeInfo& r : recipes::registry()) {
    if (r.expected != recipes::Expected::kBroken) continue;
    const std::string path = kCorpusDir + "/" + file_stem(r.name) + ".json";
    LoadError e;
    std::optional<Trace> t = load_trace(path, &e);
    ASSERT_TRUE(t.has_value()) << r.name << ": " << e.message
                               << "\nregenerate with: ./lockstep corpus --dir " << kCorpusDir;
    EXPECT_EQ(t->recipe, r.name);
    const std::optional<properties::Property> must = properties::claims_for(r).must_violate;
    bool caught = false;
    for (const properties::Verdict& v : t->verdicts) {
      caught = caught || (!v.ok && (!must || v.property == *must));
    }
    EXPECT_TRUE(caught) << r.name << ": " << verdict_summary(*t);
  }
}

const std::string kTriagedPath = kCorpusDir + "/" + kTriagedDir;
const std::string kManifestPath = kTriagedPath + "/" + kTriagedManifest;

std::vector<TriagedSeed> manifest_rows() {
  return load_triaged_seeds(kManifestPath, nullptr).value_or(std::vector<TriagedSeed>{});
}

// Why the file at `path` is not the trace of triaged seed `s` as it runs today — the recipe and
// the scenario `lockstep check` derives from the seed, an exact replay (exit 0), and every
// recorded verdict a pass — or "" when it is.
std::string triaged_trace_problem(const std::string& path, const TriagedSeed& s) {
  LoadError e;
  std::optional<Trace> t = load_trace(path, &e);
  if (!t) return e.message;
  if (t->recipe != s.recipe) return "recorded for " + t->recipe + ", listed for " + s.recipe;
  const recipes::RecipeInfo* r = recipes::find_recipe(s.recipe);
  if (r == nullptr) return "unknown recipe " + s.recipe;
  Trace derived = *t;
  derived.scenario = check_scenario(*r, s.seed, {}, s.draw_era);
  if (to_json_text(derived) != to_json_text(*t)) {
    return "its scenario is not the one seed " + std::to_string(s.seed) + " derives";
  }
  if (t->verdicts.empty()) return "no verdicts recorded";
  for (const properties::Verdict& v : t->verdicts) {
    if (!v.ok) return "recorded a violation: " + verdict_summary(*t);
  }
  const testing::CommandResult replay = testing::run_command("replay", {path});
  if (replay.code != cli::kExitOk) {
    return "replay exit " + std::to_string(replay.code) + ":\n" + replay.out + replay.err;
  }
  return {};
}

// The differences between the manifest rows and the trace files in `dir`, one line each.
std::vector<std::string> manifest_mismatches(const std::vector<TriagedSeed>& rows,
                                             const std::string& dir) {
  std::set<std::string> listed;
  for (const TriagedSeed& s : rows) listed.insert(triaged_trace_name(s));
  std::set<std::string> present;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".json") present.insert(e.path().filename().string());
  }
  std::vector<std::string> out;
  for (const std::string& n : listed) {
    if (present.count(n) == 0) out.push_back("listed in SEEDS, no file: " + n);
  }
  for (const std::string& n : present) {
    if (listed.count(n) == 0) out.push_back("file not in SEEDS: " + n);
  }
  return out;
}

class TriagedTrace : public ::testing::TestWithParam<TriagedSeed> {};

// The trace of a seed at which a correct recipe once failed replays exactly and every property
// holds in it: the fix stays fixed, and the run it fixed has not quietly changed.
TEST_P(TriagedTrace, ReplaysExactlyAndPasses) {
  const TriagedSeed& s = GetParam();
  EXPECT_EQ(triaged_trace_problem(kTriagedPath + "/" + triaged_trace_name(s), s), "")
      << s.recipe << " seed " << s.seed << " (" << s.cause
      << ")\nre-record with: ./lockstep corpus --dir " << kCorpusDir << " --recipe " << s.recipe;
}

INSTANTIATE_TEST_SUITE_P(Corpus, TriagedTrace, ::testing::ValuesIn(manifest_rows()),
                         [](const ::testing::TestParamInfo<TriagedSeed>& info) {
                           return triaged_id(info.param);
                         });

// The manifest parses, lists the triaged seeds, and names exactly the trace files kept beside it.
TEST(Corpus, TriagedManifestAndTraceFilesAgree) {
  std::string why;
  const std::optional<std::vector<TriagedSeed>> rows = load_triaged_seeds(kManifestPath, &why);
  ASSERT_TRUE(rows.has_value()) << why;
  EXPECT_GE(rows->size(), 14u);
  EXPECT_EQ(manifest_mismatches(*rows, kTriagedPath), std::vector<std::string>{})
      << "re-record with: ./lockstep corpus --dir " << kCorpusDir;
}

// The agreement check bites: a listed seed without a file and a file without a line are named.
TEST(Corpus, ManifestMismatchesNameMissingAndUnlistedFiles) {
  testing::TempDir dir;
  testing::write_file(dir.file("fair-mutex-seed7.json"), "{}");
  testing::write_file(dir.file("SEEDS"), "not a trace");
  const std::vector<TriagedSeed> rows = {{"fair-mutex", 7, "x"}, {"election", 9, "y"}};
  EXPECT_EQ(manifest_mismatches(rows, dir.path()),
            (std::vector<std::string>{"listed in SEEDS, no file: election-seed9.json"}));
  testing::write_file(dir.file("semaphore-seed3.json"), "{}");
  EXPECT_EQ(manifest_mismatches(rows, dir.path()),
            (std::vector<std::string>{"listed in SEEDS, no file: election-seed9.json",
                                      "file not in SEEDS: semaphore-seed3.json"}));
}

// The triaged-trace check bites: an edited event-log line (replay diverges), a trace of another
// seed under the name, and a trace that replays exactly but records a violation each fail it.
TEST(Corpus, AnEditedTriagedTraceFailsTheCheck) {
  const std::vector<TriagedSeed> rows = manifest_rows();
  ASSERT_FALSE(rows.empty());
  const TriagedSeed& s = rows.front();
  LoadError e;
  std::optional<Trace> t = load_trace(kTriagedPath + "/" + triaged_trace_name(s), &e);
  ASSERT_TRUE(t.has_value()) << e.message;
  ASSERT_GT(t->events.size(), 10u);
  testing::TempDir dir;

  Trace edited = *t;
  edited.events[edited.events.size() / 2].text += " (edited)";
  testing::write_file(dir.file("edited.json"), to_json_text(edited));
  const std::string diverged = triaged_trace_problem(dir.file("edited.json"), s);
  EXPECT_NE(diverged.find("replay exit 5"), std::string::npos) << diverged;

  testing::write_file(dir.file("other.json"), to_json_text(*t));
  EXPECT_NE(triaged_trace_problem(dir.file("other.json"), {s.recipe, s.seed + 1, s.cause}), "");

  // A caught variant's seed, recorded as a triaged seed is (without the later draws).
  const recipes::RecipeInfo* variant = recipes::find_recipe("broken/sort-by-name");
  ASSERT_NE(variant, nullptr);
  const Trace b = record_trace(*variant, check_scenario(*variant, 1, {}, false));
  ASSERT_NE(b.violation(), nullptr);
  testing::write_file(dir.file("broken.json"), to_json_text(b));
  const std::string failing =
      triaged_trace_problem(dir.file("broken.json"), {b.recipe, 1, "a caught variant"});
  EXPECT_NE(failing.find("recorded a violation"), std::string::npos) << failing;
}

// The manifest's rules: comments and blank lines are skipped; an unknown or broken recipe, a bad
// seed, a missing cause and a row listed twice are refused with the line number.
TEST(Corpus, TriagedManifestParsing) {
  std::string why;
  const auto ok =
      parse_triaged_seeds("# c\n\nfair-mutex  12  sim: a cause\r\nelection 3 later-draws x\nexclusive 4 era-2 y\n",
                          "SEEDS", &why);
  ASSERT_TRUE(ok.has_value()) << why;
  ASSERT_EQ(ok->size(), 3u);
  EXPECT_EQ((*ok)[0].recipe, "fair-mutex");
  EXPECT_EQ((*ok)[0].seed, 12u);
  EXPECT_EQ((*ok)[0].cause, "sim: a cause");
  EXPECT_EQ((*ok)[0].draw_era, 0u);
  EXPECT_EQ((*ok)[1].draw_era, 1u);
  EXPECT_EQ((*ok)[2].draw_era, 2u);
  EXPECT_EQ((*ok)[2].cause, "y");
  EXPECT_EQ((*ok)[1].cause, "x");
  EXPECT_EQ(triaged_trace_name((*ok)[0]), "fair-mutex-seed12.json");
  EXPECT_EQ(triaged_id((*ok)[0]), "fair_mutex_12");
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"no-such-recipe 1 x", "SEEDS:1: unknown recipe"},
      {"broken/sort-by-name 1 x", "SEEDS:1: recipe 'broken/sort-by-name' is a broken variant"},
      {"# c\nfair-mutex 1x x", "SEEDS:2: seed '1x' is not a number"},
      {"fair-mutex 0 x", "SEEDS:1: seed 0"},
      {"fair-mutex 5", "SEEDS:1: want `recipe seed cause...`"},
      {"fair-mutex 5 later-draws", "SEEDS:1: want `recipe seed cause...`"},
      {"fair-mutex 5 era-9 x", "SEEDS:1: draw era era-9 is newer than the sweep's latest"},
      {"fair-mutex 5 x\nfair-mutex 5 y", "SEEDS:2: fair-mutex seed 5 is listed twice"},
  };
  for (const auto& [text, want] : bad) {
    why.clear();
    EXPECT_FALSE(parse_triaged_seeds(text, "SEEDS", &why).has_value()) << text;
    EXPECT_EQ(why.rfind(want, 0), 0u) << text << " -> " << why;
  }
}

// `corpus` records the manifest's seeds (restricted by --recipe) as passing traces under
// DIR/triaged, and names a trace file there that the manifest does not list (exit 1).
TEST(Corpus, CorpusCommandRecordsTriagedSeedsAndNamesStaleFiles) {
  testing::TempDir dir;
  std::filesystem::create_directories(dir.file(kTriagedDir));
  testing::write_file(dir.file("triaged/SEEDS"), "fair-mutex 3 a cause\nelection 4 another\n");
  testing::CommandResult r =
      testing::run_command("corpus", {"--dir", dir.path(), "--recipe", "fair-mutex"});
  EXPECT_EQ(r.code, cli::kExitOk) << r.out << r.err;
  const std::string path = dir.file("triaged/fair-mutex-seed3.json");
  EXPECT_EQ(triaged_trace_problem(path, {"fair-mutex", 3, "a cause"}), "") << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir.file("triaged/election-seed4.json"))) << r.out;

  testing::write_file(dir.file("triaged/semaphore-seed8.json"), "{}");
  r = testing::run_command("corpus", {"--dir", dir.path(), "--recipe", "fair-mutex"});
  EXPECT_EQ(r.code, cli::kExitFailure) << r.out << r.err;
  EXPECT_NE(r.out.find("semaphore-seed8.json: not in SEEDS"), std::string::npos) << r.out;

  testing::write_file(dir.file("triaged/SEEDS"), "fair-mutex 3\n");
  r = testing::run_command("corpus", {"--dir", dir.path(), "--recipe", "fair-mutex"});
  EXPECT_EQ(r.code, cli::kExitUsage) << r.out << r.err;
  EXPECT_NE(r.err.find("SEEDS:1:"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace lockstep::traces
