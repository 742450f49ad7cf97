// Tests of the report `check` and `merge` share (cli/check_report.h): --shard and the environment
// variables that stand for it, the JSON's verdict, options, violations and reproduce commands,
// the JUnit file (judged by an independent checker, cli/junit_check.h), and that `merge` of a
// sweep's four shards prints, serialises and exits exactly as one run over the sweep.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli/check.h"
#include "cli/check_report.h"
#include "cli/check_test_support.h"
#include "cli/junit_check.h"

namespace lockstep::cli {
namespace {

using namespace check_test;
using nlohmann::json;

// Sets (or with nullptr unsets) an environment variable for the test's scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = ::getenv(name)) old_ = old;
    value ? ::setenv(name, value, 1) : ::unsetenv(name);
  }
  ~ScopedEnv() { old_.empty() ? ::unsetenv(name_) : ::setenv(name_, old_.c_str(), 1); }

 private:
  const char* name_;
  std::string old_;
};

std::string temp_path(const std::string& name) { return ::testing::TempDir() + name; }

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

json parse(const Outcome& o) {
  const json doc = json::parse(o.out, nullptr, false);
  EXPECT_FALSE(doc.is_discarded()) << o.out << o.err;
  return doc;
}

// The document less what differs between runs of the same seeds: timings and rates.
json without_timings(json doc) {
  for (const char* key : {"seconds", "cpu_seconds", "seeds_per_second", "seeds_per_cpu_second"}) {
    doc.erase(key);
  }
  return doc;
}

std::string without_timing_line(const std::string& table) {
  return std::regex_replace(table, std::regex("\n[0-9]+ recipes, [^\n]*\n"), "\n");
}

std::string without_time_attribute(const std::string& xml) {
  return std::regex_replace(xml, std::regex(" time=\"[0-9.]+\""), "");
}

// --shard takes I/N with I below N and N from 1 to 10000, not with --seed, --real or fewer seeds
// than shards; anything else is a usage error that says what it wants.
TEST(CheckShard, BadShardsAreUsageErrorsThatSayWhatIsWrong) {
  for (const char* bad : {"4/4", "1/0", "x", "1", "-1/4", "0/10001", "1/2/3", "", "1/4x", "/4"}) {
    const Outcome o = run({"--recipe", "exclusive", "--shard", bad});
    EXPECT_EQ(o.code, 2) << bad;
    EXPECT_NE(o.err.find("--shard wants I/N, shard I (counted from 0) of N shards"),
              std::string::npos)
        << o.err;
    EXPECT_NE(o.err.find("not '" + std::string(bad) + "'"), std::string::npos) << o.err;
  }
  Outcome o = run({"--recipe", "exclusive", "--seeds", "3", "--shard", "0/4"});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("--shard 0/4 cuts --seeds 3 into 4 parts of at least one seed each; give "
                       "--seeds 4 or more"),
            std::string::npos)
      << o.err;
  o = run({"--recipe", "exclusive", "--seed", "5", "--shard", "0/2"});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("--seed S runs one"), std::string::npos) << o.err;
  o = run({"--recipe", "exclusive", "--real", "--shard", "0/2"});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("--real and --ensemble are not sharded"), std::string::npos) << o.err;
}

// JOB_COMPLETION_INDEX and LOCKSTEP_SHARDS give the shard only together: one alone, or a pair
// that is no shard, is a usage error naming both variables; --shard wins over them.
TEST(CheckShard, EnvironmentGivesTheShardOnlyAsAPair) {
  {
    ScopedEnv index("JOB_COMPLETION_INDEX", "1");
    ScopedEnv shards("LOCKSTEP_SHARDS", nullptr);
    const Outcome o = run({"--recipe", "exclusive"});
    EXPECT_EQ(o.code, 2);
    EXPECT_NE(o.err.find("JOB_COMPLETION_INDEX is set but LOCKSTEP_SHARDS is not"),
              std::string::npos)
        << o.err;
  }
  {
    ScopedEnv index("JOB_COMPLETION_INDEX", nullptr);
    ScopedEnv shards("LOCKSTEP_SHARDS", "4");
    const Outcome o = run({"--recipe", "exclusive"});
    EXPECT_EQ(o.code, 2);
    EXPECT_NE(o.err.find("LOCKSTEP_SHARDS is set but JOB_COMPLETION_INDEX is not"),
              std::string::npos)
        << o.err;
  }
  ScopedEnv index("JOB_COMPLETION_INDEX", "4");
  ScopedEnv shards("LOCKSTEP_SHARDS", "4");
  Outcome o = run({"--recipe", "exclusive"});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("JOB_COMPLETION_INDEX=4 with LOCKSTEP_SHARDS=4 is not a shard"),
            std::string::npos)
      << o.err;
  ::setenv("JOB_COMPLETION_INDEX", "1", 1);
  json doc = parse(run({"--recipe", "exclusive", "--seeds", "8", "--json"}));
  EXPECT_EQ(doc["options"]["shard"], (json{{"index", 1}, {"count", 4}}));
  EXPECT_EQ(doc["options"]["first_seed"], 1);
  EXPECT_EQ(doc["options"]["seeds"], 8);
  EXPECT_EQ(doc["first_seed"], 3);
  EXPECT_EQ(doc["last_seed"], 4);
  EXPECT_EQ(doc["results"][0]["seeds_run"], 2);
  EXPECT_EQ(doc["reproduce"],
            "./lockstep check --recipe exclusive --first-seed 1 --seeds 8 --shard 1/4");
  doc = parse(run({"--recipe", "exclusive", "--seeds", "8", "--json", "--shard", "3/4"}));
  EXPECT_EQ(doc["options"]["shard"]["index"], 3);
  EXPECT_EQ(doc["first_seed"], 7);
}

// The blocks of N shards cover the sweep once, in order, each with at least one seed.
TEST(CheckShard, BlocksCoverTheSweepOnceInOrder) {
  for (uint64_t seeds : {1u, 7u, 100u, 1001u}) {
    for (uint64_t n = 1; n <= std::min<uint64_t>(seeds, 13); ++n) {
      uint64_t next = 5;
      for (uint64_t i = 0; i < n; ++i) {
        const auto [first, count] = shard_block(5, seeds, {i, n});
        EXPECT_EQ(first, next) << i << "/" << n << " of " << seeds;
        EXPECT_GE(count, 1u);
        next = first + count;
      }
      EXPECT_EQ(next, 5 + seeds) << n << " shards of " << seeds;
    }
  }
}

// The sweep of the merge tests: a broken variant caught in shard 1 of 4 (no-sync-recheck at seed
// C of 2C seeds: shards 2 and 3 run seeds the single run never reaches), variants caught at once,
// and correct recipes that run every seed, with a fake trace saver.
struct Sweep {
  std::vector<std::string> args;
  std::vector<std::string> json_args;
};

Sweep sweep() {
  const uint64_t c = no_sync_recheck_catch();
  Sweep s;
  s.args = concat({"--recipe", "exclusive", "--recipe", "broken/no-sync-recheck", "--recipe",
                   "broken/seed001-exclusive", "--recipe", "broken/release-forgets-node",
                   "--recipe", "fair-mutex", "--seeds", std::to_string(2 * c)},
                  kLaggingLostReply);
  s.json_args = concat(s.args, {"--json"});
  return s;
}

// Runs the shards of `args` (--json added) and writes their reports; returns the paths.
std::vector<std::string> run_shards(const std::vector<std::string>& args, int n,
                                    const std::string& name) {
  std::vector<std::string> paths;
  for (int i = 0; i < n; ++i) {
    FakeSaver fake;
    const Outcome o =
        run(concat(args, {"--json", "--shard", std::to_string(i) + "/" + std::to_string(n)}),
            fake.saver());
    EXPECT_TRUE(o.code == 0 || o.code == 1) << o.err;
    paths.push_back(temp_path(name + "-" + std::to_string(i) + ".json"));
    write_text(paths.back(), o.out);
  }
  return paths;
}

// Four shards merged equal one run over the sweep: the JSON (less timings), the table (less its
// timing line), the JUnit file (less its time) and the exit status; the broken variant's catch
// is in shard 1, so the merge must drop what shards 2 and 3 found for it.
TEST(Merge, FourShardsEqualOneRun) {
  const Sweep s = sweep();
  FakeSaver fake;
  const std::string single_junit = temp_path("single.xml");
  const Outcome single = run(concat(s.json_args, {"--junit", single_junit}), fake.saver());
  const Outcome single_table = run(s.args, FakeSaver().saver());
  const std::vector<std::string> shards = run_shards(s.args, 4, "four");
  const json shard1 = json::parse(read_text(shards[1]));
  ASSERT_EQ(shard1["results"][1]["recipe"], "broken/no-sync-recheck");
  ASSERT_EQ(shard1["results"][1]["seed"], parse(single)["results"][1]["seed"])
      << "the catch is expected in shard 1";
  const json shard3 = json::parse(read_text(shards[3]));
  EXPECT_GT(shard3["results"][1]["seeds_run"], 0) << "shard 3 ran seeds past the catch";

  const std::string merged_junit = temp_path("merged.xml");
  std::vector<std::string> merge = {"merge", "--json", "--junit", merged_junit};
  merge.insert(merge.end(), shards.rbegin(), shards.rend());  // any order
  const Outcome merged = run_command(merge);
  EXPECT_EQ(merged.code, single.code) << merged.err;
  EXPECT_EQ(without_timings(parse(merged)), without_timings(parse(single)));
  EXPECT_EQ(without_time_attribute(read_text(merged_junit)),
            without_time_attribute(read_text(single_junit)));
  std::vector<std::string> table = {"merge"};
  table.insert(table.end(), shards.begin(), shards.end());
  const Outcome merged_table = run_command(table);
  EXPECT_EQ(merged_table.code, single_table.code);
  EXPECT_EQ(without_timing_line(merged_table.out), without_timing_line(single_table.out));
  EXPECT_NE(merged_table.out.find("caught   broken/no-sync-recheck mutual-exclusion at seed " +
                                  parse(single)["results"][1]["seed"].dump()),
            std::string::npos)
      << merged_table.out;
}

// A sweep with a variant that is not caught (no faults: no-sync-recheck needs a lost reply) fails
// as one run, and its merge fails alike: the same verdicts, exit 1, ok false.
TEST(Merge, AFailingSweepMergesToTheSameFailure) {
  const std::vector<std::string> args = {"--recipe",   "broken/no-sync-recheck",
                                         "--recipe",   "broken/sort-by-name",
                                         "--seeds",    "12",
                                         "--faults",   "none",
                                         "--no-traces"};
  const Outcome single = run(concat(args, {"--json"}));
  ASSERT_EQ(single.code, 1) << single.out;
  const std::vector<std::string> shards = run_shards(args, 3, "failing");
  const Outcome merged = run_command({"merge", "--json", shards[0], shards[1], shards[2]});
  EXPECT_EQ(merged.code, 1);
  const json doc = parse(merged);
  EXPECT_EQ(doc["ok"], false);
  EXPECT_EQ(doc["exit_code"], 1);
  EXPECT_EQ(without_timings(doc), without_timings(parse(single)));
}

// Reports that are not one sweep's shards are refused with exit 2, naming the files and what is
// wrong: none given, not JSON, not a report, a missing shard, a shard twice, other options,
// another cut, a real server's report.
TEST(Merge, RefusesReportsThatAreNotOneSweep) {
  const std::vector<std::string> args = {
      "--recipe", "broken/sort-by-name", "--recipe", "fair-mutex", "--seeds", "8", "--no-traces"};
  const std::vector<std::string> two = run_shards(args, 2, "refuse");
  const std::vector<std::string> three = run_shards(args, 3, "refuse3");
  const std::vector<std::string> other = run_shards(
      {"--recipe", "broken/sort-by-name", "--recipe", "fair-mutex", "--seeds", "10", "--no-traces"},
      2, "refuse-other");
  const std::string garbage = temp_path("garbage.json");
  write_text(garbage, "{not json");
  const std::string empty = temp_path("empty.json");
  write_text(empty, "{}");
  json real = json::parse(read_text(two[0]));
  real["backend"] = "standalone";
  const std::string real_path = temp_path("real.json");
  write_text(real_path, real.dump());
  json shifted = json::parse(read_text(two[1]));
  shifted["results"][1]["first_seed"] = 6;
  const std::string shifted_path = temp_path("shifted.json");
  write_text(shifted_path, shifted.dump());
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{}, "give the shard reports to merge"},
      {{garbage}, "'" + garbage + "' is not JSON"},
      {{empty}, "'" + empty + "' is not a report of `lockstep check --json`: options is missing"},
      {{two[0]}, "shard 1/2 missing: give the report of every shard of 2 (got 1)"},
      {{two[0], two[1], two[0]}, "'" + two[0] + "' and '" + two[0] + "' are both shard 0/2"},
      {{two[0], other[1]}, "options.seeds is 8 in the first and 10 in the second"},
      {{two[0], three[1]}, "cut the sweep differently: shard 0/2 and shard 1/3"},
      {{real_path, two[1]}, "is a report of a real server"},
      {{two[0], shifted_path},
       "'" + shifted_path +
           "' is not consistent: its result for fair-mutex covers 4 seed(s) from 6, outside the "
           "block 5..8 it reports"},
      {{temp_path("no-such.json")}, "cannot read '" + temp_path("no-such.json") + "'"},
  };
  for (const auto& [files, says] : cases) {
    std::vector<std::string> argv = {"merge"};
    argv.insert(argv.end(), files.begin(), files.end());
    const Outcome o = run_command(argv);
    EXPECT_EQ(o.code, 2) << says;
    EXPECT_NE(o.err.find(says), std::string::npos) << "want: " << says << "\ngot: " << o.err;
    EXPECT_TRUE(o.out.empty()) << o.out;
  }
}

// A shard that was interrupted leaves its recipes incomplete from its block on: the merge says
// so (which shard, which signal, how to go on) and exits 4 with ok false, never 0.
TEST(Merge, AnInterruptedShardMakesTheSweepIncomplete) {
  const std::vector<std::string> args = {"--recipe", "fair-mutex", "--seeds", "8", "--no-traces"};
  const std::vector<std::string> shards = run_shards(args, 2, "interrupted");
  json cut = json::parse(read_text(shards[0]));
  cut["interrupted"] = true;
  cut["interrupted_by"] = "SIGTERM";
  cut["results"][0]["seeds_run"] = 2;
  cut["results"][0]["last_seed"] = 2;
  cut["results"][0]["complete"] = false;
  write_text(shards[0], cut.dump());
  const Outcome o = run_command({"merge", "--json", shards[0], shards[1]});
  EXPECT_EQ(o.code, 4) << o.err;
  const json doc = parse(o);
  EXPECT_EQ(doc["ok"], false);
  EXPECT_EQ(doc["exit_code"], 4);
  EXPECT_EQ(doc["interrupted"], true);
  EXPECT_NE(doc["interrupted_by"].get<std::string>().find("shard 0/2"), std::string::npos);
  EXPECT_EQ(doc["results"][0]["seeds_run"], 2);
  EXPECT_EQ(doc["results"][0]["complete"], false);
  const Outcome table = run_command({"merge", shards[0], shards[1]});
  EXPECT_EQ(table.code, 4);
  EXPECT_NE(table.out.find("stopped short: SIGTERM"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("go on: ./lockstep check --recipe fair-mutex --first-seed 3 --seeds 6"),
            std::string::npos)
      << table.out;
}

// The JSON says ok and the exit code, the options that shaped the run, the command that runs it
// again (which, run, gives the same results), and the seed and message of every violated
// property, as the properties map names them.
TEST(CheckJson, CarriesTheVerdictOptionsReproduceAndEveryViolation) {
  const Outcome o = run({"--recipe", "broken/watch-first", "--recipe", "fair-mutex", "--seeds", "5",
                         "--faults", "connection-loss", "--json", "--no-traces"});
  const json doc = parse(o);
  EXPECT_EQ(doc["ok"], o.code == 0);
  EXPECT_EQ(doc["exit_code"], o.code);
  const json& opts = doc["options"];
  EXPECT_EQ(opts["recipes"], (json{"broken/watch-first", "fair-mutex"}));
  EXPECT_EQ(opts["seeds"], 5);
  EXPECT_EQ(opts["first_seed"], 1);
  EXPECT_EQ(opts["faults"], (json{"connection-loss"}));
  EXPECT_EQ(opts["jobs"], 1);
  EXPECT_TRUE(opts["shard"].is_null());
  EXPECT_EQ(opts["save_traces"], false);
  const std::string again = doc["reproduce"];
  EXPECT_EQ(again,
            "./lockstep check --recipe broken/watch-first --recipe fair-mutex --first-seed 1 "
            "--seeds 5 --faults connection-loss");
  size_t violations = 0;
  for (const json& r : doc["results"]) {
    size_t violated = 0;
    for (const auto& [property, status] : r["properties"].items()) {
      if (status != "violated") continue;
      ++violated;
      bool listed = false;
      for (const json& v : r["violations"]) {
        if (v["property"] != property) continue;
        listed = true;
        EXPECT_TRUE(v["seed"].is_number_unsigned());
        EXPECT_FALSE(v["message"].get<std::string>().empty());
        EXPECT_EQ(v["kind"], r["expected_violation"] == property ? "caught" : "also");
        EXPECT_EQ(v["reproduce"], "./lockstep check --recipe " + r["recipe"].get<std::string>() +
                                      " --seed " + v["seed"].dump() + " --faults connection-loss");
      }
      EXPECT_TRUE(listed) << r["recipe"] << " " << property;
    }
    EXPECT_EQ(r["violations"].size(), violated) << r["recipe"];
    violations += violated;
  }
  EXPECT_GT(violations, 0u);
  // The reproduce command, run, gives the same results.
  std::vector<std::string> args;
  std::istringstream words(again.substr(std::string("./lockstep check ").size()));
  for (std::string w; words >> w;) args.push_back(w);
  args.push_back("--json");
  args.push_back("--no-traces");
  EXPECT_EQ(parse(run(args))["results"], doc["results"]);
  // A variant not caught: ok false, exit code 1.
  const json failed = parse(run({"--recipe", "broken/no-sync-recheck", "--seeds", "3", "--faults",
                                 "none", "--json", "--no-traces"}));
  EXPECT_EQ(failed["ok"], false);
  EXPECT_EQ(failed["exit_code"], 1);
  EXPECT_EQ(failed["options"]["faults"], "none");
}

// check --junit writes a file the independent checker accepts: one suite per recipe, one case per
// property, the variant that was not caught a failure (with its reproduce command), a caught
// one's violation a pass that shows its seed and reproduce command; exit status unchanged.
TEST(CheckJunit, TheFileValidatesAndSaysWhatFailed) {
  const std::string path = temp_path("check-junit.xml");
  const Outcome o =
      run({"--recipe", "broken/no-sync-recheck", "--recipe", "broken/sort-by-name", "--recipe",
           "fair-mutex", "--seeds", "6", "--faults", "none", "--junit", path, "--no-traces"});
  EXPECT_EQ(o.code, 1) << o.out << o.err;
  junit_check::Node root;
  ASSERT_EQ(junit_check::validate_junit(read_text(path), &root), "") << read_text(path);
  ASSERT_EQ(root.children.size(), 3u);
  EXPECT_EQ(root.attr("tests"), std::to_string(3 * properties::kPropertyCount));
  EXPECT_EQ(root.attr("failures"), "1");
  EXPECT_EQ(root.attr("errors"), "0");
  const junit_check::Node& missed = root.children[0];
  EXPECT_EQ(missed.attr("name"), "broken/no-sync-recheck");
  EXPECT_EQ(missed.attr("failures"), "1");
  bool failure_seen = false;
  for (const junit_check::Node& tc : missed.children) {
    if (const junit_check::Node* f = tc.child("failure")) {
      failure_seen = true;
      EXPECT_EQ(tc.attr("name"), "mutual-exclusion");
      EXPECT_NE(f->attr("message").find("NOT CAUGHT"), std::string::npos);
      EXPECT_NE(f->text.find("reproduce: ./lockstep check --recipe broken/no-sync-recheck "
                             "--first-seed 1 --seeds 6 --faults none"),
                std::string::npos)
          << f->text;
    }
  }
  EXPECT_TRUE(failure_seen);
  const junit_check::Node& caught = root.children[1];
  EXPECT_EQ(caught.attr("failures"), "0");
  bool shown = false;
  for (const junit_check::Node& tc : caught.children) {
    if (tc.attr("name") != "mutual-exclusion") continue;
    const junit_check::Node* out = tc.child("system-out");
    ASSERT_NE(out, nullptr);
    shown = out->text.find("caught: mutual-exclusion violated at seed ") == 0 &&
            out->text.find("reproduce: ./lockstep check --recipe broken/sort-by-name --seed ") !=
                std::string::npos;
  }
  EXPECT_TRUE(shown);
  // A file that cannot be written is a usage error found before any seed runs.
  const Outcome bad = run({"--recipe", "fair-mutex", "--junit", temp_path("no-dir/x.xml")});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("is not a directory; pass --junit FILE"), std::string::npos) << bad.err;
  EXPECT_TRUE(bad.out.empty());
}

// Every verdict reaches the file with the right element, and text that XML treats specially is
// escaped: a correct recipe's violation is a failure carrying the message, seed, reproduce and
// trace; a harness error an error on its unjudged properties; an interrupted run's unfinished
// cases skipped; a real server's unprovokable variant skipped.
TEST(CheckJunit, EveryVerdictAndAwkwardTextGiveAValidFile) {
  CheckRequest rq;
  rq.o.seeds = 10;
  CheckReport report;
  RecipeResult failed = empty_result(*recipes::find_recipe("fair-mutex"));
  failed.seeds_run = 10;
  const std::string awkward = "a<b & c>\"d\" 'e'\x01\nsecond line ]]> end";
  failed.properties[0] = {10, 7, awkward, 0, std::nullopt, {}};
  failed.traces[7] = "traces/failures/fair-mutex-7.json";
  RecipeResult crashed = empty_result(*recipes::find_recipe("exclusive"));
  crashed.seeds_run = 3;
  crashed.error = "crashed (SIGSEGV) while running seed 4";
  RecipeResult stopped = empty_result(*recipes::find_recipe("broken/sort-by-name"));
  stopped.seeds_run = 2;
  RecipeResult declined = empty_result(*recipes::find_recipe("broken/watch-first"));
  declined.unsupported = "herd-freedom is not judged on a real server";
  report.results = {failed, crashed, stopped, declined};
  report.interrupted = "SIGINT";
  const std::string xml = to_junit(report, rq);
  junit_check::Node root;
  ASSERT_EQ(junit_check::validate_junit(xml, &root), "") << xml;
  const junit_check::Node* failure = root.children[0].children[1].child("failure");
  ASSERT_NE(failure, nullptr) << xml;
  EXPECT_EQ(failure->attr("message"),
            "mutual-exclusion violated at seed 7: a<b & c>\"d\" 'e'\xEF\xBF\xBD");
  EXPECT_NE(failure->text.find("second line ]]> end\nseed: 7\nreproduce: ./lockstep check "
                               "--recipe fair-mutex --seed 7\ntrace: "
                               "traces/failures/fair-mutex-7.json\n"),
            std::string::npos)
      << failure->text;
  EXPECT_EQ(root.attr("failures"), "1");
  EXPECT_EQ(root.children[1].attr("errors"), std::to_string(properties::kPropertyCount));
  EXPECT_EQ(root.children[2].attr("skipped"), std::to_string(properties::kPropertyCount));
  EXPECT_EQ(root.children[3].attr("skipped"), std::to_string(properties::kPropertyCount));
}

// The checker itself bites: documents that are not well-formed, or whose counts or structure are
// not JUnit's, are refused with a reason.
TEST(CheckJunit, TheCheckerRefusesBrokenDocuments) {
  const std::string good =
      "<?xml version=\"1.0\"?><testsuites tests=\"1\" failures=\"1\" errors=\"0\" "
      "skipped=\"0\"><testsuite name=\"r\" tests=\"1\" failures=\"1\" errors=\"0\" "
      "skipped=\"0\"><testcase classname=\"r\" name=\"p\"><failure message=\"m\">t</failure>"
      "</testcase></testsuite></testsuites>";
  junit_check::Node root;
  ASSERT_EQ(junit_check::validate_junit(good, &root), "");
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"failures=\"1\" errors", "failures=\"0\" errors"},  // a count that is not the children's
      {"<failure message=\"m\">t</failure>", "<failure>t</failure>"},  // no message
      {"</testcase>", "</testcas>"},                                   // mismatched end tag
      {"t</failure>", "a & b</failure>"},                              // a bare ampersand
      {"t</failure>", "a < b</failure>"},                              // a bare '<'
      {"message=\"m\"", "message=\"m\" message=\"n\""},                // a duplicate attribute
      {"message=\"m\"", "message=m"},                                  // an unquoted attribute
      {"t</failure>", "\x02</failure>"},                               // a control character
      {"t</failure>", "\xC3</failure>"},                               // invalid UTF-8
      {"t</failure>", "&#0;</failure>"},       // a forbidden character reference
      {"classname=\"r\"", "classname=\"q\""},  // a case outside its suite's class
      {"</testsuites>", "</testsuites><x/>"},  // two roots
  };
  for (const auto& [from, to] : bad) {
    std::string doc = good;
    doc.replace(doc.find(from), from.size(), to);
    junit_check::Node r;
    EXPECT_NE(junit_check::validate_junit(doc, &r), "") << doc;
  }
}

}  // namespace
}  // namespace lockstep::cli
