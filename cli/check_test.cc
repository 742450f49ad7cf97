// Tests of `lockstep check` on the simulator (cli/check.h over the engine of properties/check.h):
// usage errors, the table, the JSON shape, reproduction commands, seed ranges and their chunks,
// that --jobs does not change the output, and how failing seeds are handed to the trace saver (a
// fake one here; cli/cli_test.cc checks the real files, the progress line and interrupts).
#include "cli/check.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/check_test_support.h"
#include "properties/scenario.h"
#include "recipes/registry.h"

namespace lockstep::cli {
namespace {

using namespace check_test;

// Unknown recipes, flags, fault kinds and malformed numbers are usage errors (exit 2) that say
// what was wrong.
TEST(CheckMain, UsageErrorsExitTwoWithAReason) {
  Outcome o = run({"--recipe", "no-such-recipe"});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("unknown recipe 'no-such-recipe'"), std::string::npos) << o.err;
  o = run({"--frobnicate"});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("unknown flag '--frobnicate'"), std::string::npos) << o.err;
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

// --first-seed takes a non-negative number below 2^63 and does not go with --seed; anything else
// is a usage error (exit 2) that names the flag and what was wrong.
TEST(CheckMain, FirstSeedUsageErrorsExitTwoWithAReason) {
  for (const char* bad : {"-1", "x", "", "9223372036854775808", "99999999999999999999"}) {
    const Outcome o = run({"--first-seed", bad});
    EXPECT_EQ(o.code, 2) << bad;
    EXPECT_NE(o.err.find("flag '--first-seed' wants a whole number from 0 to "
                         "9223372036854775807, not '" +
                         std::string(bad) + "'"),
              std::string::npos)
        << o.err;
  }
  EXPECT_EQ(run({"--first-seed"}).code, 2);
  const Outcome both = run({"--recipe", "exclusive", "--first-seed", "5", "--seed", "7"});
  EXPECT_EQ(both.code, 2);
  EXPECT_NE(both.err.find("--first-seed starts a range of --seeds N and --seed S runs one seed"),
            std::string::npos)
      << both.err;
}

// --first-seed S --seeds N runs exactly seeds S..S+N-1: the JSON reports that range, a catch at
// seed C (the lowest from seed 1) is found at C again from C-3, and a range starting after C does
// not report C.
TEST(CheckMain, FirstSeedRunsTheRangeFromThere) {
  const uint64_t c = no_sync_recheck_catch();
  ASSERT_GT(c, 3u);
  const Outcome o = run(concat({"--recipe", "broken/no-sync-recheck", "--recipe", "fair-mutex",
                                "--first-seed", std::to_string(c - 3), "--seeds", "10", "--json"},
                               kLaggingLostReply));
  const nlohmann::json doc = nlohmann::json::parse(o.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << o.out;
  EXPECT_EQ(doc["first_seed"], c - 3);
  EXPECT_EQ(doc["last_seed"], c + 6);
  EXPECT_EQ(doc["interrupted"], false);
  const nlohmann::json& broken = doc["results"][0];
  EXPECT_EQ(broken["seed"], c) << o.out;
  EXPECT_EQ(broken["first_seed"], c - 3);
  EXPECT_EQ(broken["last_seed"], c);  // its search ends at the catch
  EXPECT_EQ(broken["seeds_run"], 4u);
  EXPECT_EQ(broken["complete"], true);
  const nlohmann::json& fair = doc["results"][1];
  EXPECT_EQ(fair["first_seed"], c - 3);
  EXPECT_EQ(fair["last_seed"], c + 6);
  EXPECT_EQ(fair["seeds_run"], 10u);
  const Outcome after = run(concat({"--recipe", "broken/no-sync-recheck", "--first-seed",
                                    std::to_string(c + 1), "--seeds", "5", "--json"},
                                   kLaggingLostReply));
  const nlohmann::json later = nlohmann::json::parse(after.out, nullptr, false);
  ASSERT_FALSE(later.is_discarded()) << after.out;
  EXPECT_NE(later["results"][0]["seed"], c) << after.out;
}

// The printed `reproduce:` command carries the run's --faults; run through check, its arguments
// reproduce the same violation (same message) at the same seed. --json carries the same command.
TEST(CheckMain, ReproduceLineCarriesFaultsAndReproduces) {
  const Outcome o =
      run(concat({"--recipe", "broken/no-sync-recheck", "--seeds", "2000"}, kLaggingLostReply));
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      o.out, m,
      std::regex("\n(caught   broken/no-sync-recheck [^\n]*)\n  reproduce: \\./lockstep check "
                 "([^\n]*)\n")))
      << o.out;
  const std::string violation = m[1].str();
  std::vector<std::string> args;
  std::istringstream words(m[2].str());
  for (std::string w; words >> w;) args.push_back(w);
  const std::string seed = std::to_string(no_sync_recheck_catch());
  EXPECT_EQ(args, (std::vector<std::string>{"--recipe", "broken/no-sync-recheck", "--seed", seed,
                                            "--faults", "lost-reply,lagging-follower"}));
  const Outcome again = run(args);
  EXPECT_EQ(again.code, 0) << again.out;
  EXPECT_NE(again.out.find("\n" + violation + "\n"), std::string::npos) << violation << "\nin:\n"
                                                                        << again.out;

  const Outcome j = run(concat({"--recipe", "broken/no-sync-recheck", "--seeds", "2000", "--json"},
                               kLaggingLostReply));
  const nlohmann::json doc = nlohmann::json::parse(j.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << j.out;
  EXPECT_EQ(doc["results"][0]["reproduce"], "./lockstep check " + m[2].str());
  // --faults none reproduces as --faults none.
  EXPECT_NE(run({"--recipe", "broken/sort-by-name", "--faults", "none", "--seeds", "100"})
                .out.find(" --faults none\n"),
            std::string::npos);
}

// Serialises what check_seeds and append_seeds compute, for comparisons.
std::string summary(const RecipeResult& r) {
  std::string s = r.recipe + " first=" + std::to_string(r.first_seed) +
                  " run=" + std::to_string(r.seeds_run) + " requests=" + std::to_string(r.requests);
  for (const PropertyResult& p : r.properties) {
    s += " [" + std::to_string(p.judged) + " " + (p.seed ? std::to_string(*p.seed) : "-") + " " +
         p.message + "]";
  }
  return s;
}

// Appending a chunk adds its counts and keeps each property's lowest violating seed (the one
// already there beats a later chunk's; a property clean so far takes the chunk's).
TEST(CheckSeeds, AppendKeepsTheLowestViolatingSeed) {
  RecipeResult acc = empty_result(*recipes::find_recipe("fair-mutex"));
  acc.first_seed = 10;
  acc.seeds_run = 5;
  acc.requests = 100;
  acc.properties[0] = {5, 12, "first", 0, std::nullopt, {}};
  acc.properties[1] = {4, std::nullopt, "", 0, std::nullopt, {}};
  RecipeResult next = empty_result(*recipes::find_recipe("fair-mutex"));
  next.first_seed = 15;
  next.seeds_run = 3;
  next.requests = 7;
  next.properties[0] = {3, 16, "later", 0, std::nullopt, {}};
  next.properties[1] = {2, 17, "second", 0, std::nullopt, {}};
  append_seeds(&acc, next);
  EXPECT_EQ(acc.first_seed, 10u);
  EXPECT_EQ(acc.seeds_run, 8u);
  EXPECT_EQ(acc.requests, 107u);
  EXPECT_EQ(acc.properties[0].judged, 8u);
  EXPECT_EQ(acc.properties[0].seed, 12u);
  EXPECT_EQ(acc.properties[0].message, "first");
  EXPECT_EQ(acc.properties[1].judged, 6u);
  EXPECT_EQ(acc.properties[1].seed, 17u);
  EXPECT_EQ(acc.properties[1].message, "second");
}

// A broken variant's seeds run as contiguous chunks appended in order equal the range run at
// once when the catch falls inside a middle chunk: the search ends at the catch in both, and a
// range that does not reach the catch is not over.
TEST(CheckSeeds, ChunksAppendedInOrderEqualOneRun) {
  const uint64_t c = no_sync_recheck_catch();
  ASSERT_GT(c, 3u);
  const recipes::RecipeInfo& broken = *recipes::find_recipe("broken/no-sync-recheck");
  const std::set<sim::FaultKind> faults = lagging_lost_reply();
  const RecipeResult whole = check_seeds(broken, 1, c + 20, faults);
  ASSERT_TRUE(whole.search_over());
  EXPECT_EQ(whole.seeds_run, c);
  RecipeResult chunked = check_seeds(broken, 1, c - 2, faults);
  ASSERT_FALSE(chunked.search_over());
  append_seeds(&chunked, check_seeds(broken, c - 1, 5, faults));
  EXPECT_TRUE(chunked.search_over());
  EXPECT_EQ(summary(chunked), summary(whole));
}

// The table (less its timing line), the JSON (less its rates), the exit status and the traces
// handed to the saver are the same byte for byte with --jobs 1 and --jobs 3, over a range in
// which a broken variant is caught only after many chunks (no-sync-recheck), others early, and
// recipes that run every seed.
TEST(CheckMain, JobsGiveTheSameOutputByteForByte) {
  const uint64_t c = no_sync_recheck_catch();
  const std::string seeds = std::to_string(c + 40);
  struct Run {
    int code = 0;
    std::string out;
    std::vector<std::string> saved;
  };
  auto check = [&](const std::string& jobs, bool json) {
    FakeSaver fake;
    std::vector<std::string> args = {"--recipe", "exclusive",
                                     "--recipe", "broken/no-sync-recheck",
                                     "--recipe", "broken/seed001-exclusive",
                                     "--recipe", "broken/release-forgets-node",
                                     "--recipe", "fair-mutex",
                                     "--seeds",  seeds,
                                     "--jobs",   jobs};
    if (json) args.push_back("--json");
    const Outcome o = run(concat(args, kLaggingLostReply), fake.saver());
    Run r{o.code, o.out, fake.calls};
    // The timing line, the timings and rates, and the options' jobs are the only things allowed
    // to differ.
    r.out = std::regex_replace(r.out, std::regex("\n[0-9]+ recipes, [^\n]*\n"), "\n");
    r.out = std::regex_replace(
        r.out,
        std::regex(
            "\"(seconds|cpu_seconds|seeds_per_second|seeds_per_cpu_second|jobs)\": [0-9.e+-]+"),
        "");
    return r;
  };
  for (const bool json : {false, true}) {
    const Run one = check("1", json);
    const Run three = check("3", json);
    EXPECT_EQ(three.code, one.code);
    EXPECT_EQ(three.out, one.out);
    EXPECT_EQ(three.saved, one.saved);
    EXPECT_FALSE(one.saved.empty());
  }
  EXPECT_NE(check("3", false)
                .out.find("caught   broken/no-sync-recheck mutual-exclusion at seed " +
                          std::to_string(c) + ":"),
            std::string::npos);
}

// Under pauses a correct mutex's paused holder believes on beside the next holder: check shows
// it as the expected demonstration (with its trace saved as run), fenced-safety holding, and
// exits 0; --jobs 2 says the same; the JSON lists it under "demonstrations".
TEST(CheckMain, PauseDemonstrationIsShownNotFailed) {
  std::string outs[2];
  for (const std::string jobs : {"1", "2"}) {
    FakeSaver fake;
    const Outcome o = run({"--recipe", "fair-mutex", "--seeds", "40", "--faults", "pause",
                           "--jobs", jobs},
                          fake.saver());
    EXPECT_EQ(o.code, 0) << o.out << o.err;
    const size_t at = o.out.find("expected fair-mutex mutual-exclusion in ");
    ASSERT_NE(at, std::string::npos) << o.out;
    EXPECT_NE(o.out.find("as its faults excuse (not a failure), first at seed ", at),
              std::string::npos);
    EXPECT_NE(o.out.find("fenced-safety held in every seed", at), std::string::npos) << o.out;
    ASSERT_EQ(fake.calls.size(), 1u);
    EXPECT_NE(fake.calls[0].find(" no-shrink demonstration"), std::string::npos) << fake.calls[0];
    EXPECT_NE(o.out.find("  trace:     "), std::string::npos) << o.out;
    outs[jobs == "1" ? 0 : 1] = o.out.substr(0, o.out.find("\n1 recipes, "));
  }
  EXPECT_EQ(outs[0], outs[1]);
  const Outcome j = run({"--recipe", "fair-mutex", "--seeds", "40", "--faults", "pause", "--json",
                         "--no-traces"});
  const nlohmann::json doc = nlohmann::json::parse(j.out);
  const nlohmann::json& demo = doc["results"][0]["demonstrations"]["mutual-exclusion"];
  EXPECT_GT(demo["seeds"].get<uint64_t>(), 0u) << j.out;
  EXPECT_EQ(doc["results"][0]["properties"]["mutual-exclusion"], "pass");
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

// A recipe whose code crashes the process as soon as a client makes its lock (an abort standing
// for any crash: a segfault, a sanitizer report).
recipes::RecipeInfo crashing_recipe() {
  recipes::RecipeInfo r = *recipes::find_recipe("fair-mutex");
  r.name = "test/crashes";
  r.make = [](zk::Session&, const recipes::LockOptions&) -> std::unique_ptr<recipes::Lock> {
    std::abort();
  };
  return r;
}

// With --jobs, a recipe that crashes its worker is reported as crashed at the seed it was
// running, with the command that reproduces it, and the other recipes are checked to the end.
TEST(CheckCrash, AWorkerCrashNamesTheRecipeAndSeedAndTheRunGoesOn) {
  const recipes::RecipeInfo crashes = crashing_recipe();
  CheckOptions o;
  o.seeds = 40;
  o.first_seed = 7;
  o.jobs = 2;
  const HostRun run =
      check_recipes_forked({&crashes, recipes::find_recipe("fair-mutex")}, o, nullptr);
  ASSERT_EQ(run.results.size(), 2u);
  const RecipeResult& crashed = run.results[0];
  EXPECT_NE(crashed.error.find("crashed (SIGABRT) while running seed 7"), std::string::npos)
      << crashed.error;
  EXPECT_NE(crashed.error.find("./lockstep check --recipe test/crashes --seed 7"),
            std::string::npos)
      << crashed.error;
  EXPECT_FALSE(crashed.as_expected());
  EXPECT_STREQ(crashed.verdict(), "error");
  const RecipeResult& fair = run.results[1];
  EXPECT_TRUE(fair.error.empty()) << fair.error;
  EXPECT_EQ(fair.seeds_run, 40u);
  EXPECT_TRUE(fair.as_expected());
}

// In one process (--jobs 1) the crash ends the run, but not before it names the recipe and the
// seed and how to reproduce it.
TEST(CheckCrash, AnInProcessCrashNamesTheRecipeAndSeed) {
  const recipes::RecipeInfo crashes = crashing_recipe();
  CheckOptions o;
  o.seeds = 5;
  o.first_seed = 3;
  o.jobs = 1;
  EXPECT_DEATH(check_recipes_forked({&crashes}, o, nullptr),
               R"(crashed while running recipe test/crashes at seed 3.*)"
               R"(\./lockstep check --recipe test/crashes --seed 3)");
}

}  // namespace
}  // namespace lockstep::cli
