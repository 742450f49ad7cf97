// `lockstep check --real` / `--ensemble` (label "real"): the check table against a ZooKeeper
// server the command starts and stops itself. Each test runs the built binary and reads its
// JSON report, which has the simulator's schema.
#include "properties/real_backend.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "real/check_support.h"
#include "tools/shell_run.h"

namespace lockstep::properties {
namespace {

struct Ran {
  int status = -1;
  std::string out;
  std::string err;
  nlohmann::json json;
};

// Runs `lockstep check ARGS` (the built binary); stdout is the report, stderr goes to `err`.
Ran run_main(const std::vector<std::string>& args) {
  const std::string err_file = ::testing::TempDir() + "check_real_err.txt";
  std::string cmd = std::string(LOCKSTEP_BIN) + " check";
  for (const std::string& a : args) cmd += " '" + a + "'";
  cmd += " 2>" + err_file;
  Ran r;
  const tools::ShellRun run = tools::shell_run(cmd);
  r.out = run.output;
  r.status = run.exit_code;
  char buf[4096];
  if (FILE* f = std::fopen(err_file.c_str(), "r")) {
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) r.err.append(buf, n);
    std::fclose(f);
  }
  r.json = nlohmann::json::parse(r.out, nullptr, false);
  return r;
}

// The keys of a JSON object, and of its first result.
std::set<std::string> keys(const nlohmann::json& j) {
  std::set<std::string> out;
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) out.insert(it.key());
  }
  return out;
}

const nlohmann::json* row(const nlohmann::json& doc, const std::string& recipe) {
  if (!doc.is_object() || !doc.contains("results")) return nullptr;
  for (const nlohmann::json& r : doc["results"]) {
    if (r["recipe"] == recipe) return &r;
  }
  return nullptr;
}

// The CLI dispatches `check --real` to the real engine: the fair mutex passes every property
// it claims in two fault-injected scenarios on a standalone server the command starts, and
// herd-freedom is reported as not judged.
TEST(CheckReal, FairMutexPassesOnAStandaloneServerThroughTheCli) {
  const Ran r = run_main({"--real", "--recipe", "fair-mutex", "--seeds", "2", "--json"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const nlohmann::json* row_fair = row(r.json, "fair-mutex");
  ASSERT_NE(row_fair, nullptr) << r.out;
  EXPECT_EQ((*row_fair)["verdict"], "pass") << r.out;
  EXPECT_EQ((*row_fair)["seeds_run"], 2) << r.out;
  EXPECT_EQ((*row_fair)["properties"]["mutual-exclusion"], "pass") << r.out;
  EXPECT_EQ((*row_fair)["properties"]["liveness"], "pass") << r.out;
  EXPECT_EQ((*row_fair)["properties"]["herd-free"], "not-judged") << r.out;
  EXPECT_EQ(r.json["backend"], "standalone") << r.out;
  EXPECT_NE(r.json["server"].get<std::string>().find("standalone"), std::string::npos) << r.out;

  // One schema: `check --json` on the simulator has exactly the same keys, at the top and in
  // each result.
  const Ran sim = run_main({"--recipe", "fair-mutex", "--seeds", "2", "--json"});
  ASSERT_EQ(sim.status, 0) << sim.out << sim.err;
  EXPECT_EQ(sim.json["backend"], "simulator");
  EXPECT_TRUE(sim.json["server"].is_null());
  EXPECT_EQ(keys(sim.json), keys(r.json));
  ASSERT_NE(row(sim.json, "fair-mutex"), nullptr) << sim.out;
  EXPECT_EQ(keys(*row(sim.json, "fair-mutex")), keys(*row_fair));
}

// A broken variant is caught on the real server by the property its claims name (the lost
// create reply strands broken/no-id-in-name behind its own orphan: liveness), while the herd
// variant, which only the simulator's herd counters can judge, is listed as not provokable on
// real instead of passing.
TEST(CheckReal, BrokenVariantCaughtAndSimulatorOnlyVariantNotProvokable) {
  const Ran r = run_main(
      {"--real", "--recipe", "broken/no-id-in-name", "--recipe", "broken/watch-first", "--json"});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  const nlohmann::json* caught = row(r.json, "broken/no-id-in-name");
  ASSERT_NE(caught, nullptr) << r.out << r.err;
  EXPECT_EQ((*caught)["verdict"], "violated") << r.out;
  EXPECT_EQ((*caught)["properties"]["liveness"], "violated") << r.out;
  EXPECT_EQ((*caught)["as_expected"], true) << r.out;
  const nlohmann::json* herd = row(r.json, "broken/watch-first");
  ASSERT_NE(herd, nullptr) << r.out;
  EXPECT_EQ((*herd)["verdict"], "not-provokable") << r.out;
  EXPECT_EQ((*herd)["seeds_run"], 0) << r.out;
  EXPECT_FALSE((*herd)["not_provokable_reason"].is_null()) << r.out;
}

// An operator's deletes on the real server (a separate handle deletes the lock directory, or
// the holder's node): the fair mutex makes its directory again and passes; the variants that
// trust the directory, or let the release's NoNode out, are caught by error-contract.
TEST(CheckReal, OperatorDeletesCatchTheirVariantsAndTheFairMutexRecovers) {
  const Ran r = run_main({"--real", "--recipe", "fair-mutex", "--recipe", "broken/no-dir-recreate",
                          "--recipe", "broken/release-requires-node", "--faults",
                          "delete-node,delete-dir", "--json"});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  const nlohmann::json* fair = row(r.json, "fair-mutex");
  ASSERT_NE(fair, nullptr) << r.out << r.err;
  EXPECT_EQ((*fair)["as_expected"], true) << r.out;
  for (const char* name : {"broken/no-dir-recreate", "broken/release-requires-node"}) {
    const nlohmann::json* v = row(r.json, name);
    ASSERT_NE(v, nullptr) << name << r.out;
    EXPECT_EQ((*v)["properties"]["error-contract"], "violated") << name << r.out;
    EXPECT_EQ((*v)["as_expected"], true) << name << r.out;
  }
}

// On a 3-server ensemble the command starts, the fair mutex passes a scenario in which the
// leader is killed and restarted (the first seed whose plan has that fault), and the servers
// are stopped again.
TEST(CheckReal, FairMutexPassesOnAnEnsembleThroughALeaderRestart) {
  const recipes::RecipeInfo* fair = recipes::find_recipe("fair-mutex");
  ASSERT_NE(fair, nullptr);
  const std::set<sim::FaultKind> restarts = {sim::FaultKind::kServerRestart};
  uint64_t seed = 0;
  for (uint64_t s = 1; s <= 50 && seed == 0; ++s) {
    for (const sim::Fault& f :
         generate_real_scenario(s, *fair, claims_for(*fair), true, restarts).faults) {
      if (f.kind == sim::FaultKind::kServerRestart && f.target == zk::FaultTarget::kLeader)
        seed = s;
    }
  }
  ASSERT_NE(seed, 0u) << "no seed in 1..50 plans a leader restart";
  const Ran r = run_main({"--ensemble", "--recipe", "fair-mutex", "--seed", std::to_string(seed),
                          "--faults", "server-restart", "--json"});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  const nlohmann::json* row_fair = row(r.json, "fair-mutex");
  ASSERT_NE(row_fair, nullptr) << r.out << r.err;
  EXPECT_EQ((*row_fair)["verdict"], "pass") << r.out;
  EXPECT_EQ((*row_fair)["seeds_run"], 1) << r.out;
  EXPECT_NE(r.json["server"].get<std::string>().find("ensemble of 3"), std::string::npos);
}

// Flags that mean nothing on one real server, and simulator-only fault kinds, are usage errors
// (exit 2) before any server is started.
TEST(CheckReal, SimulatorOnlyFlagsAreUsageErrors) {
  EXPECT_EQ(run_main({"--real", "--jobs", "2"}).status, 2);
  EXPECT_EQ(run_main({"--real", "--no-shrink"}).status, 2);
  EXPECT_EQ(run_main({"--real", "--faults", "pause"}).status, 2);
  EXPECT_EQ(run_main({"--real", "--ensemble"}).status, 2);
  EXPECT_NE(run_main({"--real", "--jobs", "2"}).err.find("not available with --real"),
            std::string::npos);
  const Ran help = run_main({"--real", "--help"});
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("--ensemble"), std::string::npos);
}

// A missing Java runtime is reported with the package to install, provoked by a java that
// does not exist.
TEST(CheckReal, MissingJavaNamesThePackageToInstall) {
  real::ClusterOptions co;
  co.java = "/nonexistent/java";
  const std::string missing = real::server_prerequisites(co);
  EXPECT_NE(missing.find(real::kServerInstallCommand), std::string::npos) << missing;
  EXPECT_NE(missing.find("libzookeeper-java"), std::string::npos) << missing;
  EXPECT_EQ(real::server_prerequisites(real::ClusterOptions{}), "");
}

// The scenario of a seed is a value: the same seed gives the same plan, and every fault in it
// is one the real harness can make.
TEST(CheckReal, RealScenariosAreDerivedFromTheSeedWithRealFaultsOnly) {
  const recipes::RecipeInfo* fair = recipes::find_recipe("fair-mutex");
  ASSERT_NE(fair, nullptr);
  const Claims claims = claims_for(*fair);
  size_t faults = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const Scenario a = generate_real_scenario(seed, *fair, claims, true);
    const Scenario b = generate_real_scenario(seed, *fair, claims, true);
    EXPECT_EQ(describe(a), describe(b));
    EXPECT_EQ(a.servers, 3u);
    for (const sim::Fault& f : a.faults) EXPECT_TRUE(real_fault_supported(f.kind));
    faults += a.faults.size();
  }
  EXPECT_GT(faults, 0u);
}

}  // namespace
}  // namespace lockstep::properties
