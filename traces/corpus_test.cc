// The regression corpus: every trace kept under traces/corpus/ replays exactly and reproduces
// its recorded verdict, and every broken variant of the registry has one that catches it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string>
#include <vector>

#include "properties/claims.h"
#include "traces/commands.h"
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
  const testing::CommandResult r = testing::run_command(replay_main, "replay", {path});
  EXPECT_EQ(r.code, kExitOk) << r.out << r.err
                             << "\nregenerate with: lockstep_traces_tool corpus --dir "
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
                               << "\nregenerate with: lockstep_traces_tool corpus --dir "
                               << kCorpusDir;
    EXPECT_EQ(t->recipe, r.name);
    const std::optional<properties::Property> must = properties::claims_for(r).must_violate;
    bool caught = false;
    for (const properties::Verdict& v : t->verdicts) {
      caught = caught || (!v.ok && (!must || v.property == *must));
    }
    EXPECT_TRUE(caught) << r.name << ": " << verdict_summary(*t);
  }
}

}  // namespace
}  // namespace lockstep::traces
