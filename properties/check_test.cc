// Tests of the `lockstep check` engine (check_main): usage errors, the table, the JSON shape,
// reproduction commands, that --jobs does not change the verdicts, and how failing seeds are
// handed to the trace saver (a fake one here; cli/cli_test.cc checks the real files).
#include "properties/check.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <set>
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

Outcome run(std::vector<std::string> args, const TraceSaver& saver = nullptr) {
  args.insert(args.begin(), "check");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  std::ostringstream out, err;
  const int code = check_main(static_cast<int>(argv.size()), argv.data(), out, err, false, saver);
  return {code, out.str(), err.str()};
}

// A saver that writes nothing and remembers what it was asked:
// "recipe seed dir fault-count property[ no-shrink]".
struct FakeSaver {
  std::vector<std::string> calls;
  std::string fail_with;  // when set, every save fails with this error

  TraceSaver saver() {
    return [this](const FailingSeed& f, std::string* error) -> std::string {
      calls.push_back(f.recipe->name + " " + std::to_string(f.seed) + " " + f.dir + " " +
                      std::to_string(f.faults.size()) + " " +
                      (f.property ? to_string(*f.property) : "-") + (f.shrink ? "" : " no-shrink"));
      if (!fail_with.empty()) {
        *error = fail_with;
        return {};
      }
      return f.dir + "/" + f.recipe->name + "-" + std::to_string(f.seed) + ".json";
    };
  }
};

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

// Every distinct failing seed is handed to the saver once (with the --trace-dir and the
// --faults restriction); the table prints each path with its replay and show commands and the
// JSON `trace` is the path of the result's first failing seed; a passing recipe saves nothing.
TEST(CheckTraces, FailingSeedsAreSavedAndTheirPathsPrinted) {
  const std::string dir = ::testing::TempDir() + "check-traces";
  FakeSaver fake;
  const Outcome o = run({"--recipe", "broken/sort-by-name", "--recipe", "fair-mutex", "--seeds",
                         "5", "--faults", "connection-loss", "--trace-dir", dir},
                        fake.saver());
  ASSERT_EQ(fake.calls.size(), 1u) << o.out << o.err;
  std::istringstream call(fake.calls[0]);
  std::string recipe, seed, call_dir, faults, property, rest;
  call >> recipe >> seed >> call_dir >> faults >> property >> rest;
  EXPECT_EQ(recipe, "broken/sort-by-name");
  EXPECT_EQ(call_dir, dir);
  EXPECT_EQ(faults, "1");
  EXPECT_EQ(property, "mutual-exclusion");
  EXPECT_EQ(rest, "");
  EXPECT_NE(o.out.find("caught   broken/sort-by-name mutual-exclusion at seed " + seed),
            std::string::npos)
      << o.out;
  const std::string path = dir + "/broken/sort-by-name-" + seed + ".json";
  EXPECT_NE(o.out.find("  trace:     " + path + "\n  replay:    ./lockstep replay " + path +
                       "\n  show:      ./lockstep show " + path + "\n"),
            std::string::npos)
      << o.out;

  FakeSaver json_fake;
  const Outcome j = run({"--recipe", "broken/sort-by-name", "--recipe", "fair-mutex", "--seeds",
                         "5", "--faults", "connection-loss", "--trace-dir", dir, "--json"},
                        json_fake.saver());
  const nlohmann::json doc = nlohmann::json::parse(j.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << j.out;
  EXPECT_EQ(doc["results"][0]["trace"], path);
  EXPECT_EQ(doc["results"][0]["seed"], std::stoull(seed));
  EXPECT_EQ(doc["results"][1]["trace"], nullptr);
  EXPECT_EQ(json_fake.calls, fake.calls);
}

// --jobs N hands the saver the same seeds in the same order as one process (saving happens in
// the parent after the workers reported), so the saved files do not depend on N.
TEST(CheckTraces, JobsSaveTheSameTracesInTheSameOrder) {
  auto calls = [](const std::string& jobs) {
    FakeSaver fake;
    run({"--recipe", "broken/no-relist", "--recipe", "broken/watch-first", "--recipe",
         "broken/sort-by-name", "--seeds", "50", "--jobs", jobs},
        fake.saver());
    return fake.calls;
  };
  const std::vector<std::string> one = calls("1");
  EXPECT_EQ(one.size(), 3u);
  EXPECT_EQ(one, calls("3"));
}

// --no-shrink is passed on to the saver (which then saves the seed's scenario as it ran).
TEST(CheckTraces, NoShrinkReachesTheSaver) {
  FakeSaver fake;
  run({"--recipe", "broken/sort-by-name", "--seeds", "20", "--no-shrink"}, fake.saver());
  ASSERT_EQ(fake.calls.size(), 1u);
  EXPECT_NE(fake.calls[0].find("mutual-exclusion no-shrink"), std::string::npos) << fake.calls[0];
  EXPECT_EQ(run({"--no-shrink=yes"}).code, 2);
}

// --no-traces saves nothing and leaves `trace` null (and takes no value).
TEST(CheckTraces, NoTracesSavesNothing) {
  FakeSaver fake;
  const Outcome o = run(
      {"--recipe", "broken/sort-by-name", "--seeds", "20", "--no-traces", "--json"}, fake.saver());
  EXPECT_TRUE(fake.calls.empty());
  const nlohmann::json doc = nlohmann::json::parse(o.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << o.out;
  EXPECT_TRUE(doc["results"][0]["trace"].is_null());
  EXPECT_EQ(run({"--no-traces=1"}).code, 2);
}

// A trace directory that cannot be created (a regular file is in its path) is a usage error
// found before any seed runs: exit 2, naming the directory, what is in the way and the fix.
TEST(CheckTraces, UncreatableTraceDirExitsTwoBeforeRunning) {
  std::string file = ::testing::TempDir() + "check-traces-not-a-dir-XXXXXX";
  const int fd = ::mkstemp(file.data());
  ASSERT_GE(fd, 0);
  ::close(fd);
  FakeSaver fake;
  const Outcome o =
      run({"--recipe", "broken/sort-by-name", "--trace-dir", file + "/sub"}, fake.saver());
  EXPECT_EQ(o.code, 2);
  EXPECT_TRUE(fake.calls.empty());
  EXPECT_TRUE(o.out.empty()) << o.out;
  EXPECT_NE(o.err.find("cannot save failure traces in '" + file + "/sub'"), std::string::npos)
      << o.err;
  EXPECT_NE(o.err.find("'" + file + "' is not a directory"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("--trace-dir DIR"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("--no-traces"), std::string::npos) << o.err;
  EXPECT_EQ(run({"--trace-dir"}).code, 2);
  EXPECT_EQ(host_dir_problem(::testing::TempDir() + "check-traces-new/a/b"), "");
  EXPECT_NE(host_dir_problem(file), "");
  ::unlink(file.c_str());
}

// A trace that cannot be written is reported on stderr with the reason; the verdicts and the exit
// status stand (a caught broken variant still exits 0).
TEST(CheckTraces, SaveErrorsAreReportedAndDoNotChangeTheVerdict) {
  FakeSaver fake;
  fake.fail_with = "disk full";
  const Outcome o = run({"--recipe", "broken/sort-by-name", "--seeds", "20"}, fake.saver());
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  EXPECT_EQ(fake.calls.size(), 1u);
  EXPECT_NE(o.err.find("was not saved: disk full"), std::string::npos) << o.err;
  EXPECT_EQ(o.out.find("  trace:"), std::string::npos) << o.out;
}

// --seed S saves the trace of that seed when it fails.
TEST(CheckTraces, SingleSeedSavesItsTrace) {
  FakeSaver fake;
  const Outcome o = run({"--recipe", "broken/sort-by-name", "--seed", "1"}, fake.saver());
  ASSERT_EQ(fake.calls.size(), 1u) << o.out;
  EXPECT_EQ(fake.calls[0].rfind("broken/sort-by-name 1 traces/failures ", 0), 0u) << fake.calls[0];
  EXPECT_NE(o.out.find("  trace:     traces/failures/broken/sort-by-name-1.json"),
            std::string::npos)
      << o.out;
}

}  // namespace
}  // namespace lockstep::properties
