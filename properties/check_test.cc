// Tests of the `lockstep check` engine (check_main): usage errors, the table, the JSON shape,
// reproduction commands, and that --jobs does not change the verdicts.
#include "properties/check.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace lockstep::properties {
namespace {

struct Outcome {
  int code = 0;
  std::string out;
  std::string err;
};

Outcome run(std::vector<std::string> args) {
  args.insert(args.begin(), "check");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  std::ostringstream out, err;
  const int code = check_main(static_cast<int>(argv.size()), argv.data(), out, err);
  return {code, out.str(), err.str()};
}

// Unknown recipes, flags, fault kinds and malformed numbers are usage errors (exit 2) that say
// what was wrong.
TEST(CheckMain, UsageErrorsExitTwoWithAReason) {
  Outcome o = run({"--recipe", "no-such-recipe"});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("unknown recipe 'no-such-recipe'"), std::string::npos) << o.err;
  o = run({"--frobnicate"});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("unknown argument '--frobnicate'"), std::string::npos) << o.err;
  o = run({"--seeds", "many"});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("--seeds"), std::string::npos) << o.err;
  o = run({"--faults", "pause,gremlins"});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("unknown fault kind 'gremlins'"), std::string::npos) << o.err;
  o = run({"--jobs", "0"});
  EXPECT_EQ(o.code, 2);
  o = run({"--json=yes"});
  EXPECT_EQ(o.code, 2);
}

// A broken variant that is caught makes a successful run (exit 0), and its row and the
// reproduction command appear in the table output.
TEST(CheckMain, CaughtBrokenVariantPassesAndPrintsReproduction) {
  const Outcome o = run({"--recipe", "broken/sort-by-name", "--seeds", "20"});
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("broken/sort-by-name"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("caught"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("reproduce: ./lockstep check --recipe broken/sort-by-name --seed "),
            std::string::npos)
      << o.out;
}

// --json prints one object with one result per recipe, carrying the fields the CLI promises.
TEST(CheckMain, JsonHasResultsAndSeedsPerSecond) {
  const Outcome o = run({"--recipe", "broken/watch-first", "--recipe", "fair-mutex", "--seeds", "5",
                         "--json", "--faults", "connection-loss"});
  const nlohmann::json doc = nlohmann::json::parse(o.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << o.out;
  ASSERT_TRUE(doc.contains("seeds_per_second"));
  EXPECT_TRUE(doc["seeds_per_second"].is_number());
  ASSERT_EQ(doc["results"].size(), 2u);
  const nlohmann::json& broken = doc["results"][0];
  EXPECT_EQ(broken["recipe"], "broken/watch-first");
  EXPECT_EQ(broken["expected"], "broken");
  EXPECT_EQ(broken["verdict"], "violated");
  EXPECT_TRUE(broken["seed"].is_number_unsigned());
  EXPECT_EQ(broken["properties"]["herd-free"], "violated");
  EXPECT_TRUE(broken["trace"].is_null());
  const nlohmann::json& fair = doc["results"][1];
  EXPECT_EQ(fair["recipe"], "fair-mutex");
  EXPECT_EQ(fair["expected"], "correct");
  EXPECT_TRUE(fair["properties"].contains("fifo"));
  EXPECT_EQ(o.code, fair["verdict"] == "pass" ? 0 : 1);
}

// --seed S reports that one seed in full: the scenario, the verdicts and the history around the
// violation.
TEST(CheckMain, SingleSeedPrintsTheReport) {
  const Outcome o = run({"--recipe", "broken/sort-by-name", "--seed", "1"});
  EXPECT_NE(o.out.find("scenario seed=1"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("mutual-exclusion: VIOLATED"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find(">> #"), std::string::npos) << o.out;
}

// Splitting the recipes over forked workers gives the same verdicts as one process.
TEST(CheckMain, JobsDoNotChangeVerdicts) {
  auto results = [](const std::string& jobs) {
    const Outcome o = run({"--recipe", "broken/no-relist", "--recipe", "broken/watch-first",
                           "--recipe", "exclusive", "--seeds", "10", "--json", "--jobs", jobs});
    nlohmann::json doc = nlohmann::json::parse(o.out, nullptr, false);
    EXPECT_FALSE(doc.is_discarded()) << o.out;
    return doc.is_discarded() ? nlohmann::json() : doc["results"];
  };
  EXPECT_EQ(results("1"), results("3"));
}

}  // namespace
}  // namespace lockstep::properties
