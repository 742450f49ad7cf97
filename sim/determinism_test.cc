// Determinism: same seed, same event log byte for byte; replay reproduces it; sources are
// free of wall clocks, threads and unseeded randomness.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sim/sim_test_util.h"
#include "sim/test_workload.h"
#include "sim/world.h"

namespace lockstep::sim {
namespace {

struct RunResult {
  uint64_t hash = 0;
  uint64_t events = 0;
  std::string text;
  std::vector<Decision> decisions;
  int acquired = 0;
};

// Five clients run the fair-lock-like loop under a fixed fault plan.
RunResult run_scenario(uint64_t seed, bool record, std::unique_ptr<Strategy> strategy = nullptr,
                       bool audit = true) {
  WorldOptions o;
  o.seed = seed;
  o.record_log = record;
  o.audit = audit;
  World w(o, std::move(strategy));
  std::vector<testing::LoopStats> stats(5);
  for (uint32_t i = 1; i <= 5; ++i) w.add_client();
  w.client(1).spawn(testing::make_lock_dir(&w.client(1)), "setup");
  w.run_for(zk::milliseconds(5));
  for (uint32_t i = 1; i <= 5; ++i) {
    w.client(i).spawn(
        testing::fair_lock_rounds(&w.client(i), 10, zk::milliseconds(1), &stats[i - 1]), "loop");
  }
  const Time t = w.now();
  auto at = [&](int ms) { return t + zk::milliseconds(ms); };
  auto fault = [&](FaultKind kind, int ms, uint32_t client, Duration d = {}, Duration extra = {}) {
    Fault f;
    f.kind = kind;
    f.at = at(ms);
    f.client = client;
    f.duration = d;
    f.extra = extra;
    return f;
  };
  w.inject(fault(FaultKind::kLoseNextReply, 3, 4));
  w.inject(fault(FaultKind::kConnectionLoss, 5, 2));
  w.inject(fault(FaultKind::kPause, 8, 3, zk::milliseconds(40)));
  w.inject(fault(FaultKind::kDelay, 9, 1, zk::milliseconds(30), zk::milliseconds(2)));
  w.inject(fault(FaultKind::kPartition, 12, 5, zk::milliseconds(20)));
  Fault foreign = fault(FaultKind::kForeignChild, 15, 0);
  foreign.path = "/lock/zz-foreign";
  w.inject(foreign);
  w.run_until_idle(t + zk::seconds(60));
  RunResult r;
  if (audit) r.hash = w.log().hash();
  r.events = w.log().size();
  r.text = w.log().to_text();
  if (audit) r.decisions = w.decisions();
  for (const auto& s : stats) r.acquired += s.acquired;
  return r;
}

// The same seed twice gives the same hash and the same text, byte for byte.
TEST(DeterminismTest, SameSeedSameLog) {
  const RunResult a = run_scenario(7, true);
  const RunResult b = run_scenario(7, true);
  EXPECT_GT(a.acquired, 20);
  EXPECT_GT(a.events, 500u);
  EXPECT_EQ(a.hash, b.hash);
  EXPECT_EQ(a.text, b.text);
  EXPECT_EQ(a.decisions, b.decisions);
}

// Whether text lines are kept does not change the hash.
TEST(DeterminismTest, HashIndependentOfRecording) {
  EXPECT_EQ(run_scenario(7, true).hash, run_scenario(7, false).hash);
}

// Without the audit (WorldOptions::audit off: no hash, no decision list) the run is the same
// run: the same text lines, event count and grants. It has no hash or list to give.
TEST(DeterminismTest, AuditOffRunsTheSameRun) {
  const RunResult a = run_scenario(7, true);
  const RunResult b = run_scenario(7, true, nullptr, /*audit=*/false);
  EXPECT_GT(a.events, 500u);
  EXPECT_EQ(a.text, b.text);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.acquired, b.acquired);
  EXPECT_FALSE(a.decisions.empty());
}

// Asking a run without the audit for its hash or its decisions is a bug, and says so.
TEST(DeterminismDeathTest, AuditOffHasNoHashOrDecisionsToGive) {
  WorldOptions o;
  o.audit = false;
  World w(o);
  EXPECT_FALSE(w.log().hashing());
  EXPECT_DEATH((void)w.log().hash(), "does not hash");
  EXPECT_DEATH((void)w.decisions(), "does not keep");
}

// Different seeds give different runs.
TEST(DeterminismTest, DifferentSeedsDiffer) {
  EXPECT_NE(run_scenario(7, false).hash, run_scenario(8, false).hash);
  EXPECT_NE(run_scenario(8, false).hash, run_scenario(9, false).hash);
}

// Replaying the recorded decisions reproduces the run exactly without diverging.
TEST(DeterminismTest, ReplayReproduces) {
  const RunResult a = run_scenario(11, true);
  const RunResult b = run_scenario(11, true, make_replay_strategy(a.decisions));
  EXPECT_EQ(a.hash, b.hash);
  EXPECT_EQ(a.text, b.text);
}

// A replay whose recording does not match the run reports the divergence and where it was.
TEST(DeterminismTest, ReplayReportsDivergence) {
  const RunResult a = run_scenario(11, false);
  std::vector<Decision> tampered = a.decisions;
  tampered.resize(tampered.size() / 2);
  tampered.push_back(Decision{ChoiceKind::kServer, 99, 0});
  WorldOptions o;
  o.seed = 11;
  World w(o, make_replay_strategy(tampered));
  w.add_client();
  w.client(1).spawn(testing::make_lock_dir(&w.client(1)), "setup");
  EXPECT_FALSE(w.diverged());
  // The same scenario is not re-run here: the short recording runs out, which is a divergence.
  w.run_for(zk::seconds(1));
  EXPECT_TRUE(w.diverged());
  EXPECT_NE(w.divergence().find("decision"), std::string::npos) << w.divergence();
}

// ---- banned tokens ----

// Tokens that would make a run depend on the machine, the wall clock or thread timing.
// The sleep functions are banned as free functions (std::this_thread's); the context's own
// x.sleep_for(...) / p->sleep_until(...) calls are the sanctioned way.  // lockstep-allow
std::vector<std::string> banned_tokens() {
  return {
      "system"
      "_clock",
      "steady"
      "_clock",
      "high_resolution"
      "_clock",
      "sleep"
      "_for",
      "sleep"
      "_until",
      "std::"
      "thread",
      "random"
      "_device",
      "rand"
      "(",
      "_distribution"
      "<",
      "time("
      "NULL)"};
}

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Returns the banned tokens found in `text`, one entry per hit, skipping lines that contain
// "lockstep-allow".
std::vector<std::string> banned_hits(const std::string& text) {
  std::vector<std::string> hits;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("lockstep-"
                  "allow") != std::string::npos)
      continue;
    for (const std::string& tok : banned_tokens()) {
      for (size_t pos = line.find(tok); pos != std::string::npos; pos = line.find(tok, pos + 1)) {
        const char before = pos > 0 ? line[pos - 1] : ' ';
        if (std::isalpha(static_cast<unsigned char>(tok[0])) && ident_char(before))
          continue;  // part of a longer name
        const bool member = before == '.' || (before == '>' && pos > 1 && line[pos - 2] == '-');
        if (tok.rfind("sleep", 0) == 0 && member) continue;
        hits.push_back(tok);
      }
    }
  }
  return hits;
}

// The matcher finds each banned token, ignores member sleeps, longer names and allowed lines.
TEST(DeterminismTest, BannedTokenMatcher) {
  EXPECT_EQ(banned_hits("auto t = std::chrono::steady"
                        "_clock::now();")
                .size(),
            1u);
  EXPECT_EQ(banned_hits("std::this_thread::sleep"
                        "_for(1s);")
                .size(),
            1u);
  EXPECT_EQ(banned_hits("int x = rand"
                        "();")
                .size(),
            1u);
  EXPECT_EQ(banned_hits("std::uniform_int_distribution"
                        "<int> d;")
                .size(),
            1u);
  EXPECT_EQ(banned_hits("std::"
                        "thread t; time("
                        "NULL);")
                .size(),
            2u);
  EXPECT_EQ(banned_hits("co_await ctx.sleep"
                        "_for(d); co_await p->sleep"
                        "_until(t);")
                .size(),
            0u);
  EXPECT_EQ(banned_hits("x = operand"
                        "(1); random_below(3);")
                .size(),
            0u);
  EXPECT_EQ(banned_hits("steady"
                        "_clock // lockstep-"
                        "allow: benchmark")
                .size(),
            0u);
}

// No source file in sim/, recipes/ or properties/ uses a banned token outside an allowed line.
TEST(DeterminismTest, SourcesAreFreeOfBannedTokens) {
  namespace fs = std::filesystem;
  int files = 0;
  for (const char* dir : {"sim", "recipes", "properties"}) {
    const fs::path root = fs::path(LOCKSTEP_SOURCE_DIR) / dir;
    if (!fs::exists(root)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      const std::string ext = entry.path().extension().string();
      if (!entry.is_regular_file() || (ext != ".h" && ext != ".cc")) continue;
      std::ifstream in(entry.path());
      std::stringstream ss;
      ss << in.rdbuf();
      ++files;
      for (const std::string& hit : banned_hits(ss.str())) {
        ADD_FAILURE() << entry.path() << " uses " << hit;
      }
    }
  }
  EXPECT_GT(files, 10);
}

// The standard assert vanishes under NDEBUG (both builds define it): no library source of the
// simulator, the contract, the recipes, the checkers, traces or explore may use it; invariants
// go through LOCKSTEP_ASSERT (zk/invariant.h), which stays on. Tests may use what they like.
TEST(DeterminismTest, LibrariesUseTheProjectsAssertNotTheStandardOne) {
  namespace fs = std::filesystem;
  int files = 0;
  for (const char* dir : {"sim", "recipes", "properties", "zk", "traces", "explore"}) {
    const fs::path root = fs::path(LOCKSTEP_SOURCE_DIR) / dir;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      const std::string name = entry.path().filename().string();
      const std::string ext = entry.path().extension().string();
      if (!entry.is_regular_file() || (ext != ".h" && ext != ".cc")) continue;
      if (name.find("_test") != std::string::npos) continue;
      std::ifstream in(entry.path());
      std::string line;
      for (int n = 1; std::getline(in, line); ++n) {
        if (line.find("<cassert>") != std::string::npos) {
          ADD_FAILURE() << entry.path() << ":" << n << " includes <cassert>";
        }
        for (size_t pos = line.find("assert("); pos != std::string::npos;
             pos = line.find("assert(", pos + 1)) {
          if (pos == 0 || !ident_char(line[pos - 1])) {
            ADD_FAILURE() << entry.path() << ":" << n << " uses assert(: use LOCKSTEP_ASSERT";
          }
        }
      }
      ++files;
    }
  }
  EXPECT_GT(files, 40);
}

}  // namespace
}  // namespace lockstep::sim
