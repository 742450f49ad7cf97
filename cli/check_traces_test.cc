// Tests of `lockstep check` saving failure traces with the real saver (traces::save_check_failure,
// as cli/cmd_check.cc installs it): every failing seed becomes a file that loads and replays
// exactly, the paths appear in the table and the JSON, --jobs saves the same files, the default
// directory is traces/failures under the working directory, no file is ever replaced, and the
// saved scenario is shrunk (unless --no-shrink) with its violation kept.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli/check.h"
#include "properties/check.h"
#include "properties/claims.h"
#include "properties/suite.h"
#include "traces/record.h"
#include "traces/test_util.h"
#include "traces/trace.h"

namespace lockstep::traces {
namespace {

using testing::CommandResult;
using testing::read_file;
using testing::run_command;
using testing::TempDir;
using testing::write_file;

// `lockstep check ARGS` in this process, with the saver the CLI installs.
CommandResult check(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const std::optional<cli::Args> parsed = cli::parse_args(cli::kCheckCommand, args, err);
  CommandResult r;
  r.code = parsed ? cli::run_check(*parsed, out, err, false, save_check_failure) : cli::kExitUsage;
  r.out = out.str();
  r.err = err.str();
  return r;
}

// The paths printed after "  trace:     " in the table output, in order, each once (a seed that
// violates two properties has one trace, printed under both).
std::vector<std::string> printed_traces(const std::string& out) {
  std::vector<std::string> paths;
  const std::string mark = "  trace:     ";
  for (size_t at = out.find(mark); at != std::string::npos; at = out.find(mark, at + 1)) {
    const size_t start = at + mark.size();
    std::string path = out.substr(start, out.find('\n', start) - start);
    if (std::find(paths.begin(), paths.end(), path) == paths.end()) paths.push_back(path);
  }
  return paths;
}

std::set<std::string> json_files(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".json") out.insert(e.path().string());
  }
  return out;
}

// Two broken variants checked with --trace-dir: each catching seed is saved under the directory
// (named by recipe and seed), printed with its replay and show commands, loads, carries the
// caught violation and replays exactly; --json with --jobs 2 reports the same paths in `trace`
// and saves no second copy.
TEST(CheckSavesTraces, EveryFailingSeedIsSavedAndReplaysExactly) {
  TempDir dir;
  const std::string traces_dir = dir.file("failures");
  const CommandResult r = check({"--recipe", "broken/sort-by-name", "--recipe",
                                 "broken/watch-first", "--seeds", "50", "--trace-dir", traces_dir});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const std::vector<std::string> paths = printed_traces(r.out);
  ASSERT_EQ(paths.size(), 2u) << r.out;
  for (const std::string& path : paths) {
    SCOPED_TRACE(path);
    EXPECT_EQ(std::filesystem::path(path).parent_path(), std::filesystem::path(traces_dir));
    EXPECT_NE(r.out.find("  replay:    ./lockstep replay " + path), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("  show:      ./lockstep show " + path), std::string::npos) << r.out;
    LoadError e;
    const std::optional<Trace> t = load_trace(path, &e);
    ASSERT_TRUE(t.has_value()) << e.message;
    ASSERT_NE(t->violation(), nullptr);
    EXPECT_NE(
        r.out.find("caught   " + t->recipe + " " + properties::to_string(t->violation()->property) +
                   " at seed " + std::to_string(t->scenario.seed)),
        std::string::npos)
        << r.out;
    EXPECT_EQ(std::filesystem::path(path).filename().string(), trace_file_name(*t));
    const CommandResult replay = run_command("replay", {path});
    EXPECT_EQ(replay.code, cli::kExitOk) << replay.out << replay.err;
  }
  EXPECT_EQ(json_files(traces_dir), std::set<std::string>(paths.begin(), paths.end()));

  const std::string before = read_file(paths[0]);
  const CommandResult j =
      check({"--recipe", "broken/sort-by-name", "--recipe", "broken/watch-first", "--seeds", "50",
             "--trace-dir", traces_dir, "--json", "--jobs", "2"});
  const nlohmann::json doc = nlohmann::json::parse(j.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << j.out << j.err;
  EXPECT_EQ(doc["results"][0]["trace"], paths[0]);
  EXPECT_EQ(doc["results"][1]["trace"], paths[1]);
  EXPECT_EQ(json_files(traces_dir), std::set<std::string>(paths.begin(), paths.end()));
  EXPECT_EQ(read_file(paths[0]), before);
}

// Without --trace-dir the traces go to traces/failures under the working directory; with
// --no-traces nothing is written at all.
TEST(CheckSavesTraces, DefaultDirectoryIsTracesFailuresUnderTheWorkingDirectory) {
  TempDir dir;
  const std::filesystem::path cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  const CommandResult none =
      check({"--recipe", "broken/sort-by-name", "--seeds", "20", "--no-traces"});
  const bool made_by_no_traces = std::filesystem::exists("traces");
  const CommandResult r = check({"--recipe", "broken/sort-by-name", "--seeds", "20"});
  std::filesystem::current_path(cwd);
  EXPECT_EQ(none.code, 0) << none.out << none.err;
  EXPECT_FALSE(made_by_no_traces);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const std::vector<std::string> paths = printed_traces(r.out);
  ASSERT_EQ(paths.size(), 1u) << r.out;
  EXPECT_EQ(paths[0].rfind("traces/failures/broken_sort-by-name-seed", 0), 0u) << paths[0];
  EXPECT_TRUE(std::filesystem::exists(dir.path() + "/" + paths[0]));
}

// A --trace-dir under /proc or /sys, which take no new entries even for root (whose access() says
// yes to everything), is a usage error found before any seed runs: exit 2, naming the directory
// and the fix. The directory probe leaves nothing behind, where it refuses and where it accepts.
TEST(CheckSavesTraces, AnUnwritableTraceDirUnderProcOrSysIsAUsageError) {
  for (const std::string dir : {"/proc/lockstep-no-such-dir/x", "/sys/lockstep-no-such-dir"}) {
    if (!std::filesystem::exists(dir.substr(0, dir.find('/', 1)))) continue;  // not mounted here
    const CommandResult r =
        check({"--recipe", "broken/sort-by-name", "--seeds", "5", "--trace-dir", dir});
    EXPECT_EQ(r.code, 2) << dir << ":\n" << r.out << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;  // nothing ran
    EXPECT_NE(r.err.find("cannot save failure traces in '" + dir + "'"), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("fix: pass --trace-dir DIR"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir));
  }
  TempDir writable;
  EXPECT_EQ(properties::host_dir_problem(writable.path()), "");
  EXPECT_EQ(properties::host_dir_problem(writable.file("new/sub")), "");
  EXPECT_TRUE(std::filesystem::is_empty(writable.path()));
}

// Saving never replaces a different file: when another file holds the trace's name, the trace
// gets the "-2" name and the other file is untouched; saving the same trace again finds it.
TEST(CheckSavesTraces, ADifferentFileUnderTheNameIsNeverReplaced) {
  TempDir dir;
  const Trace t = testing::first_trace("broken/sort-by-name");
  std::string error;
  const std::string first = save_failure_trace(t, dir.path(), &error);
  ASSERT_FALSE(first.empty()) << error;
  EXPECT_EQ(save_failure_trace(t, dir.path(), &error), first);
  write_file(first, "someone else's file");
  const std::string second = save_failure_trace(t, dir.path(), &error);
  ASSERT_FALSE(second.empty()) << error;
  EXPECT_EQ(second, first.substr(0, first.size() - 5) + "-2.json");
  EXPECT_EQ(read_file(first), "someone else's file");
  EXPECT_EQ(read_file(second), to_json_text(t));
  EXPECT_EQ(save_failure_trace(t, dir.path(), &error), second);
  EXPECT_EQ(json_files(dir.path()).size(), 2u);
}

// The saved trace is the failing seed's scenario shrunk: broken/sort-by-name needs only two
// contenders, so its trace has at most 3 clients, 2 rounds and no faults, keeps the seed and the
// mutual-exclusion violation; --no-shrink saves the scenario exactly as check derived it.
TEST(CheckSavesTraces, TheSavedScenarioIsShrunkUnlessNoShrink) {
  TempDir dir;
  const recipes::RecipeInfo& recipe = *recipes::find_recipe("broken/sort-by-name");
  const std::string args_dir = dir.file("shrunk");
  const CommandResult r = check({"--recipe", recipe.name, "--seeds", "50", "--faults",
                                 "connection-loss,delay", "--trace-dir", args_dir});
  const std::vector<std::string> shrunk = printed_traces(r.out);
  ASSERT_EQ(shrunk.size(), 1u) << r.out << r.err;
  LoadError e;
  const std::optional<Trace> t = load_trace(shrunk[0], &e);
  ASSERT_TRUE(t.has_value()) << e.message;
  const properties::Scenario as_run = check_scenario(
      recipe, t->scenario.seed, {sim::FaultKind::kConnectionLoss, sim::FaultKind::kDelay});
  EXPECT_LE(t->scenario.workload.clients, 3u) << properties::describe(t->scenario);
  EXPECT_LE(t->scenario.workload.rounds, 2u) << properties::describe(t->scenario);
  EXPECT_TRUE(t->scenario.faults.empty()) << properties::describe(t->scenario);
  EXPECT_LT(t->history.size(), as_run.workload.clients * as_run.workload.rounds * 8)
      << properties::describe(as_run);
  ASSERT_NE(t->violation(), nullptr);
  EXPECT_EQ(t->violation()->property, properties::Property::kMutualExclusion);
  EXPECT_EQ(run_command("replay", {shrunk[0]}).code, cli::kExitOk);

  const CommandResult raw =
      check({"--recipe", recipe.name, "--seeds", "50", "--faults", "connection-loss,delay",
             "--trace-dir", dir.file("raw"), "--no-shrink"});
  const std::vector<std::string> unshrunk = printed_traces(raw.out);
  ASSERT_EQ(unshrunk.size(), 1u) << raw.out << raw.err;
  const std::optional<Trace> u = load_trace(unshrunk[0], &e);
  ASSERT_TRUE(u.has_value()) << e.message;
  EXPECT_EQ(properties::describe(u->scenario), properties::describe(as_run));
}

// Shrinking is deterministic, keeps the property violated and the seed, and stays within its
// run budget.
TEST(Shrink, DeterministicBoundedAndStillFailing) {
  const recipes::RecipeInfo& recipe = *recipes::find_recipe("broken/ignores-expiry");
  const std::optional<uint64_t> seed = first_failing_seed(recipe, 200);
  ASSERT_TRUE(seed.has_value());
  const properties::Scenario s = check_scenario(recipe, *seed);
  const properties::Property p = *properties::claims_for(recipe).must_violate;
  uint32_t runs = 0;
  const properties::Scenario a = shrink_scenario(recipe, s, p, 300, &runs);
  const properties::Scenario b = shrink_scenario(recipe, s, p);
  EXPECT_EQ(properties::describe(a), properties::describe(b));
  EXPECT_EQ(a.seed, s.seed);
  EXPECT_GT(runs, 0u);
  EXPECT_LE(runs, 300u);
  const properties::SeedOutcome o =
      properties::run_scenario(recipe, properties::claims_for(recipe), a);
  ASSERT_NE(o.verdict(p), nullptr);
  EXPECT_FALSE(o.verdict(p)->ok);
  uint32_t capped = 0;
  shrink_scenario(recipe, s, p, 3, &capped);
  EXPECT_LE(capped, 3u);
}

}  // namespace
}  // namespace lockstep::traces
