// Tests of `lockstep explore` (cli/cmd_explore.cc): its flags and usage errors, its reports
// (no violation, INCOMPLETE and why, the unsound pruning's caveat) and the trace it saves.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "recipes/registry.h"
#include "traces/record.h"
#include "traces/trace.h"

namespace lockstep::cli {
namespace {

// Runs `lockstep explore ARGS` in this process with its own streams.
int run_explore(std::vector<std::string> args, std::string* out_text, std::string* err_text) {
  args.insert(args.begin(), "explore");
  std::ostringstream out;
  std::ostringstream err;
  const int code = run_command_line(args, Io{out, err});
  *out_text = out.str();
  *err_text = err.str();
  return code;
}

// Bad flags, an unknown recipe or fault kind are usage errors (exit 2) that say what was wrong.
TEST(ExploreCommand, UsageErrors) {
  std::string out;
  std::string err;
  EXPECT_EQ(run_explore({"--recipe", "no-such"}, &out, &err), 2);
  EXPECT_NE(err.find("unknown recipe 'no-such'"), std::string::npos) << err;
  EXPECT_EQ(run_explore({"--recipe", "fair-mutex", "--frobnicate"}, &out, &err), 2);
  EXPECT_NE(err.find("unknown flag '--frobnicate'"), std::string::npos) << err;
  EXPECT_EQ(run_explore({}, &out, &err), 2);
  EXPECT_NE(err.find("--recipe NAME is required"), std::string::npos) << err;
  EXPECT_EQ(run_explore({"--recipe", "fair-mutex", "--faults", "meteor"}, &out, &err), 2);
  EXPECT_NE(err.find("unknown fault kind 'meteor'"), std::string::npos) << err;
  EXPECT_EQ(run_explore({"--recipe", "fair-mutex", "--strategy", "dfs"}, &out, &err), 2);
  EXPECT_EQ(run_explore({"--recipe", "fair-mutex", "--clients", "0"}, &out, &err), 2);
  EXPECT_EQ(run_explore({"--recipe", "fair-mutex", "--reduction", "state-hash"}, &out, &err), 2);
  EXPECT_NE(err.find("--prune-states"), std::string::npos) << err;
  EXPECT_EQ(
      run_explore({"--recipe", "fair-mutex", "--reduction", "sleep-sets", "--depth-bound", "3"},
                  &out, &err),
      2);
  EXPECT_EQ(run_explore({"--help"}, &out, &err), 0);
  EXPECT_NE(out.find("usage: lockstep explore"), std::string::npos);
}

// A tiny clean scope that the search exhausts reports its counts and "no violation in this
// scope" (exit 0), and nothing about being incomplete.
TEST(ExploreCommand, ReportsNoViolation) {
  std::string out;
  std::string err;
  EXPECT_EQ(run_explore({"--recipe", "fair-mutex", "--rounds", "1", "--bound", "1", "--no-save"},
                        &out, &err),
            0)
      << err;
  EXPECT_NE(out.find(" (bound levels 0..1 done of bound 1)"), std::string::npos) << out;
  // States met at choice points: many (the default run alone has dozens), several final ones
  // (preemptions change the recipes' counters), one count per bound level.
  const std::string key = "distinct states: ";
  ASSERT_NE(out.find(key), std::string::npos) << out;
  EXPECT_GT(std::stoull(out.substr(out.find(key) + key.size())), 50u) << out;
  EXPECT_NE(out.find(" at choice points ("), std::string::npos) << out;
  EXPECT_NE(out.find("new states by bound level: 0: "), std::string::npos) << out;
  EXPECT_NE(out.find(", 1: "), std::string::npos) << out;
  EXPECT_NE(out.find("elapsed: "), std::string::npos) << out;
  EXPECT_NE(out.find("result: no violation in this scope"), std::string::npos) << out;
  EXPECT_EQ(out.find("INCOMPLETE"), std::string::npos) << out;
}

// The same scope cut by --runs before it is exhausted is INCOMPLETE (exit 4): the report says what
// was covered and why it stopped, and never "no violation in this scope".
TEST(ExploreCommand, ARunLimitThatCutsTheScopeIsIncomplete) {
  std::string out;
  std::string err;
  // Measure the whole scope, then allow one schedule less.
  ASSERT_EQ(run_explore({"--recipe", "fair-mutex", "--rounds", "1", "--bound", "1", "--no-save"},
                        &out, &err),
            0)
      << out << err;
  const std::string key = "schedules explored: ";
  const uint64_t whole = std::stoull(out.substr(out.find(key) + key.size()));
  ASSERT_GT(whole, 10u) << out;
  const std::string runs = std::to_string(whole - 1);
  EXPECT_EQ(run_explore({"--recipe", "fair-mutex", "--rounds", "1", "--bound", "1", "--runs", runs,
                         "--no-save"},
                        &out, &err),
            4)
      << out << err;
  EXPECT_NE(out.find(key + runs + " "), std::string::npos) << out;
  EXPECT_NE(out.find("result: INCOMPLETE"), std::string::npos) << out;
  EXPECT_NE(out.find("covered: " + runs + " schedules, 1 of 2 bound levels (0..1) finished, "),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(" distinct states (new by level: 0: "), std::string::npos) << out;
  EXPECT_NE(out.find("1: "), std::string::npos) << out;
  EXPECT_NE(out.find(" (level unfinished); the last " + runs + " schedules found "),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("stopped: the run limit was reached (--runs " + runs + ")"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("no violation in this scope"), std::string::npos) << out;
  // A budget so small that the queue of schedules to run fills first says so.
  EXPECT_EQ(run_explore({"--recipe", "fair-mutex", "--rounds", "1", "--bound", "1", "--runs", "5",
                         "--no-save"},
                        &out, &err),
            4)
      << out << err;
  EXPECT_NE(out.find("stopped: the queue of schedules still to run filled up"), std::string::npos)
      << out;
  EXPECT_EQ(out.find("no violation in this scope"), std::string::npos) << out;
}

// Sampling never exhausts a scope: a clean random run is INCOMPLETE (exit 4), not a clean scope.
TEST(ExploreCommand, CleanSamplingIsIncomplete) {
  std::string out;
  std::string err;
  EXPECT_EQ(run_explore({"--recipe", "fair-mutex", "--rounds", "1", "--strategy", "random",
                         "--runs", "3", "--no-save"},
                        &out, &err),
            4)
      << out << err;
  EXPECT_NE(out.find("stopped: random sampling ran its 3 runs"), std::string::npos) << out;
  EXPECT_EQ(out.find("no violation in this scope"), std::string::npos) << out;
}

// The unsound state-hash pruning is opt-in and says so in its report; a clean pruned search did
// not cover the scope, so it is INCOMPLETE (exit 4).
TEST(ExploreCommand, PruneStatesPrintsItsCaveat) {
  std::string out;
  std::string err;
  EXPECT_EQ(run_explore({"--recipe", "fair-mutex", "--rounds", "1", "--bound", "1",
                         "--prune-states", "--no-save"},
                        &out, &err),
            4)
      << err;
  EXPECT_NE(out.find("stopped: --prune-states is unsound"), std::string::npos) << out;
  EXPECT_NE(out.find("UNSOUND"), std::string::npos) << out;
  EXPECT_NE(out.find("caveat: --prune-states is unsound"), std::string::npos) << out;
}

// A found counterexample is saved as a trace that loads and replays bit for bit (exit 1).
TEST(ExploreCommand, SavesAReplayableTrace) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "lockstep_explore_test_traces";
  std::filesystem::remove_all(dir);
  std::string out;
  std::string err;
  ASSERT_EQ(run_explore({"--recipe", "broken/sort-by-name", "--rounds", "1", "--bound", "1",
                         "--save-dir", dir.string()},
                        &out, &err),
            1)
      << out << err;
  const size_t at = out.find("saved: ");
  ASSERT_NE(at, std::string::npos) << out << err;
  const std::string path = out.substr(at + 7, out.find(' ', at + 7) - (at + 7));
  traces::LoadError error;
  const std::optional<traces::Trace> t = traces::load_trace(path, &error);
  ASSERT_TRUE(t.has_value()) << error.message;
  EXPECT_EQ(t->strategy, "exhaustive");
  ASSERT_NE(t->violation(), nullptr);
  const traces::ReplayResult rr = traces::replay_trace(*t, *recipes::find_recipe("broken/sort-by-name"));
  EXPECT_FALSE(rr.divergence.has_value()) << rr.divergence->where << ": " << rr.divergence->detail;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace lockstep::cli
