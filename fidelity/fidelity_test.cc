// Tests of the differential tester itself, in the simulator only (the real-server run is
// fidelity_real_test, label real).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "fidelity/cases.h"
#include "fidelity/compare.h"
#include "fidelity/differential.h"
#include "fidelity/sequence.h"
#include "fidelity/shrink.h"

namespace lockstep::fidelity {
namespace {

TEST(FidelitySequence, SameSeedSameSequenceReopenOnlyAfterAnEndFaultsOnlyOnLiveSlots) {
  // The generator is a function of (seed, n): two calls agree op for op, another seed differs;
  // a slot is reopened only after its session ended (close, expire, a long partition), and a
  // fault hits only a slot whose session is alive.
  GenerateOptions g;
  size_t faults = 0;
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    const Sequence a = generate(seed, 60, g);
    const Sequence b = generate(seed, 60, g);
    ASSERT_EQ(a.size(), 60u);
    bool ended[kSlots] = {false, false};
    for (size_t i = 0; i < a.size(); ++i) {
      const Op& op = a[i];
      EXPECT_EQ(to_string(op), to_string(b[i])) << "seed " << seed << " op " << i;
      if (is_fault(op)) {
        ++faults;
        if (op.kind != OpKind::kRestart) {
          EXPECT_FALSE(ended[op.slot]) << "seed " << seed << " op " << i << " " << to_string(op);
        }
      }
      const int ends = ends_session(op, g.servers, g.session_timeout);
      if (ends >= 0) ended[ends] = true;
      if (op.kind == OpKind::kReopen) {
        EXPECT_TRUE(ended[op.slot]) << "seed " << seed << " op " << i;
        ended[op.slot] = false;
      }
    }
  }
  // About one operation in 14 is a fault (3,000 operations: 214 expected).
  EXPECT_GT(faults, 120u);
  EXPECT_LT(faults, 320u);
  // Both deployments' sequences keep the rules the shrinker relies on (valid()), an ensemble's
  // with follower restarts that end slot 1's session.
  for (int servers : {1, 3}) {
    GenerateOptions e;
    e.servers = servers;
    for (uint64_t seed = 1; seed <= 200; ++seed) {
      std::string why;
      EXPECT_TRUE(valid(generate(seed, 60, e), servers, e.session_timeout, &why)) << why;
    }
  }
  // Without faults, none.
  g.faults = false;
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    for (const Op& op : generate(seed, 60, g)) EXPECT_FALSE(is_fault(op)) << to_string(op);
  }
  std::string one, two;
  for (const Op& op : generate(1, 30)) one += to_string(op) + "\n";
  for (const Op& op : generate(2, 30)) two += to_string(op) + "\n";
  EXPECT_NE(one, two);
}

TEST(FidelityCompare, SimulatorAgainstItselfUnderAnotherWorldSeedHasNoMismatch) {
  // Two simulator worlds with different seeds (other latencies, another child order) run the
  // same sequences, with faults, on a standalone server and on an ensemble: every difference
  // between them is one of compare.h's freedoms, so none is reported. This is what makes a
  // mismatch against the real server mean something.
  Report report;
  for (int servers : {1, 3}) {
    GenerateOptions g;
    g.servers = servers;
    for (uint64_t seed = 1; seed <= 30; ++seed) {
      const Sequence seq = generate(seed, 40, g);
      const std::string root = "/ls" + std::to_string(seed);
      const RunResult a = run_on_sim(seq, root, seed, servers);
      const RunResult b = run_on_sim(seq, root, seed + 1000, servers);
      ASSERT_TRUE(a.completed && b.completed) << "seed " << seed;
      compare_runs(seq, root, seed, a, b, 3, &report);
    }
  }
  EXPECT_EQ(report.operations, 2u * 30u * 40u);
  EXPECT_EQ(report.mismatched_ops, 0u)
      << (report.shown.empty()
              ? ""
              : report.shown[0].op + ": " + report.shown[0].sim + " vs " + report.shown[0].real);
}

TEST(FidelityCompare, AChangedReplyIsAMismatchOfItsKind) {
  // The comparison bites: a run whose stat version, error code or event list was altered is
  // reported, under the field that changed.
  const Sequence seq = generate(7, 40);
  const RunResult a = run_on_sim(seq, "/ls7", 7);
  ASSERT_TRUE(a.completed);
  for (const std::string kind : {"stat", "error", "events"}) {
    RunResult b = a;
    bool changed = false;
    size_t at = 0;
    for (; at < b.outcomes.size(); ++at) {
      RawOutcome& o = b.outcomes[at];
      if (kind == "stat" && o.stat) {
        o.stat->version += 1;
      } else if (kind == "error") {
        o.error = zk::Error::kBadVersion == o.error ? zk::Error::kNoNode : zk::Error::kBadVersion;
      } else if (kind == "events") {
        o.events.push_back(RawEvent{1, zk::EventType::kDeleted, {}, "/ls7/d"});
      } else {
        continue;
      }
      changed = true;
      break;
    }
    ASSERT_TRUE(changed) << kind;
    Report report;
    EXPECT_EQ(compare_runs(seq, "/ls7", 7, a, b, 1, &report), std::optional<size_t>(at)) << kind;
    EXPECT_EQ(report.mismatched_ops, 1u) << kind;
    EXPECT_EQ(report.by_kind[kind], 1u) << kind;
  }
}

TEST(FidelityCompare, OnlyADisconnectTheRealSideAloneShowsMakesARunDisturbed) {
  // disturbed() (a rerun, not a verdict) fires for a real-side disconnect the simulator did not
  // show at that operation, and for a real run that stopped short, and for nothing else: not
  // for the same disconnect on both sides, not for one the simulator alone shows (that is a
  // mismatch to report), not for one at another operation of the same slot, not for a
  // disconnect of the other slot.
  const Sequence seq = generate(9, 40, GenerateOptions{.servers = 3});
  const RunResult a = run_on_sim(seq, "/ls9", 9, 3);
  ASSERT_TRUE(a.completed);
  EXPECT_FALSE(disturbed(a, a));
  const RawEvent drop{1, zk::EventType::kSession, zk::SessionState::kConnecting, "", true};
  const RawEvent back{1, zk::EventType::kSession, zk::SessionState::kConnected, "", true};
  RunResult real = a;
  real.outcomes[12].events.push_back(drop);
  real.outcomes[12].events.push_back(back);
  EXPECT_TRUE(disturbed(a, real));
  EXPECT_FALSE(disturbed(real, a));   // the simulator alone: a mismatch, never rerun
  EXPECT_FALSE(disturbed(real, real));
  RunResult elsewhere = a;
  elsewhere.outcomes[13].events.push_back(drop);
  EXPECT_TRUE(disturbed(real, elsewhere));  // op 13: the simulator showed its drop at op 12
  RunResult watch_only = a;  // a watch's session event is not the subscription's disconnect
  watch_only.outcomes[12].events.push_back(
      RawEvent{1, zk::EventType::kSession, zk::SessionState::kConnecting, "/ls9/d", false});
  EXPECT_FALSE(disturbed(a, watch_only));
  // A real run that stopped short (did not connect, or ran past its limit) where the
  // simulator's finished is disturbed; one where both stopped short, or only the simulator's,
  // is not (a mismatch to report).
  RunResult short_real;  // what the real side gives when its sessions never connected
  EXPECT_TRUE(disturbed(a, short_real));
  RunResult cut_real = a;
  cut_real.completed = false;
  cut_real.outcomes.resize(5);
  EXPECT_TRUE(disturbed(a, cut_real));
  EXPECT_FALSE(disturbed(cut_real, a));
  EXPECT_FALSE(disturbed(cut_real, short_real));
  // What a report says of each rerun.
  EXPECT_EQ(disturbance(a, real),
            "slot 1's real session dropped its connection at op #12, "
            "where the simulator's did not");
  EXPECT_EQ(disturbance(a, a), "");
  cut_real.stopped = "the run passed its limit of 600 s after 5 of 40 operations";
  EXPECT_EQ(disturbance(a, cut_real),
            "the real run stopped where the simulator's completed: " + cut_real.stopped);
  // A disturbed run still compares as a mismatch: the rerun is the only leniency.
  Report report;
  EXPECT_EQ(compare_runs(seq, "/ls9", 9, a, real, 1, &report), std::optional<size_t>(12));
  EXPECT_EQ(report.by_kind["events"], 1u);
}

TEST(FidelityCompare, ARunCutShortSaysWhyItStopped) {
  // A run that did not complete says which way it stopped, in the report's mismatch and in a
  // saved case's check: here its root could not be made (not a path), so nothing ran.
  const Sequence seq = generate(9, 12, GenerateOptions{});
  const RunResult a = run_on_sim(seq, "/ls9", 9);
  ASSERT_TRUE(a.completed);
  EXPECT_EQ(a.stopped, "");
  const RunResult cut = run_on_sim(seq, "ls9", 9);
  EXPECT_FALSE(cut.completed);
  EXPECT_TRUE(cut.outcomes.empty());
  EXPECT_NE(cut.stopped.find("the root ls9 could not be created"), std::string::npos)
      << cut.stopped;
  Report report;
  EXPECT_EQ(compare_runs(seq, "/ls9", 9, a, cut, 1, &report), std::optional<size_t>(0));
  ASSERT_EQ(report.shown.size(), 1u);
  EXPECT_EQ(report.shown[0].sim, "completed");
  EXPECT_EQ(report.shown[0].real, "stopped: " + cut.stopped);
  Case c;
  c.name = "cut";
  c.operations = seq;
  for (size_t i = 0; i < seq.size(); ++i) {
    c.real.push_back(normalize(a.outcomes[i], "/ls9", timed(seq[i])));
  }
  const std::vector<std::string> found = check_case(c, cut, "/ls9");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0], "the run did not complete (0 of 12 operations): " + cut.stopped);
}

TEST(FidelitySequence, EveryGeneratedOperationParsesBackToItself) {
  for (int servers : {1, 3}) {
    GenerateOptions g;
    g.servers = servers;
    for (uint64_t seed = 1; seed <= 200; ++seed) {
      for (const Op& op : generate(seed, 40, g)) {
        Op back;
        std::string error;
        ASSERT_TRUE(parse_op(to_string(op), &back, &error)) << error;
        EXPECT_EQ(to_string(back), to_string(op));
      }
    }
  }
}

TEST(FidelitySequence, BadOperationLinesSayWhatIsWrong) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"s2 exists /d", "slot"},
      {"s0 frobnicate /d", "unknown operation"},
      {"s0 create /d 'x", "not closed"},
      {"s0 create /d 'x' sometimes", "mode"},
      {"s0 delete /d v=x", "version"},
      {"s0 partition soon", "duration"},
      {"s0 exists /d !lost-reply", "only create, delete and set_data"},
      {"restart server 7", "server"},
      {"s0 exists /d extra", "unexpected"},
  };
  for (const auto& [text, why] : bad) {
    Op op;
    std::string error;
    EXPECT_FALSE(parse_op(text, &op, &error)) << text;
    EXPECT_NE(error.find(why), std::string::npos) << text << " -> " << error;
  }
}

// The operations of `seq` whose text is in `wanted`, in order.
bool contains_in_order(const Sequence& seq, const std::vector<std::string>& wanted) {
  size_t next = 0;
  for (const Op& op : seq) {
    if (next < wanted.size() && to_string(op) == wanted[next]) ++next;
  }
  return next == wanted.size();
}

TEST(FidelityShrink, KeepsOnlyTheOperationsTheDifferenceNeedsAndTheRules) {
  // A stand-in for "the backends differ": the sequence holds its first fault and, later, its
  // last operation. The shrinker must end with exactly those two, valid by the generator's
  // rules, having called the predicate only on valid candidates.
  size_t checked = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const Sequence seq = generate(seed, 40);
    size_t fault = seq.size();
    for (size_t i = 0; i < seq.size(); ++i) {
      if (is_fault(seq[i])) {
        fault = i;
        break;
      }
    }
    if (fault + 1 >= seq.size() || seq.back().kind == OpKind::kReopen) continue;
    const std::vector<std::string> needed = {to_string(seq[fault]), to_string(seq.back())};
    size_t invalid_calls = 0;
    const ShrinkResult r = shrink(seq, seq.size() - 1, 1, [&](const Sequence& candidate) {
      std::string why;
      if (!valid(candidate, 1, GenerateOptions{}.session_timeout, &why)) ++invalid_calls;
      return contains_in_order(candidate, needed);
    });
    ASSERT_TRUE(r.reproduced) << "seed " << seed;
    EXPECT_EQ(invalid_calls, 0u);
    EXPECT_TRUE(contains_in_order(r.sequence, needed)) << "seed " << seed;
    std::string text;
    for (const Op& op : r.sequence) text += "\n  " + to_string(op);
    EXPECT_EQ(r.sequence.size(), 2u) << "seed " << seed << text;
    ++checked;
  }
  EXPECT_GT(checked, 20u);
}

TEST(FidelityShrink, ADifferenceThatDoesNotReproduceLeavesTheSequenceWhole) {
  const Sequence seq = generate(3, 30);
  const ShrinkResult r = shrink(seq, 10, 1, [](const Sequence&) { return false; });
  EXPECT_FALSE(r.reproduced);
  EXPECT_EQ(r.sequence.size(), seq.size());
  EXPECT_EQ(r.calls, 2u);  // the truncated sequence, then the whole one
}

std::vector<Case> saved_cases() {
  std::vector<Case> cases;
  std::string error;
  EXPECT_TRUE(load_cases(std::string(LOCKSTEP_SOURCE_DIR) + "/fidelity/cases", &cases, &error))
      << error;
  return cases;
}

TEST(FidelityCases, EverySavedCaseGivesTheRecordedRealAnswersOnTheSimulator) {
  // Each case holds what Debian's ZooKeeper server answered; the simulator must give the same
  // (within compare.h's freedoms), on a standalone server and on an ensemble.
  const std::vector<Case> cases = saved_cases();
  ASSERT_GE(cases.size(), 7u);
  bool ensemble = false;
  for (const Case& c : cases) {
    ensemble = ensemble || c.servers == 3;
    const CaseRun run = run_case(c, nullptr, 1);
    EXPECT_FALSE(run.real_ran);
    for (const std::string& d : run.sim) ADD_FAILURE() << c.name << ": " << d;
  }
  EXPECT_TRUE(ensemble);
}

TEST(FidelityCases, AnAlteredRecordedAnswerIsReported) {
  // The case check bites: change one recorded answer (an error, an event, a time beyond the
  // tolerance) and the simulator's run of the case differs exactly there.
  const std::vector<Case> cases = saved_cases();
  ASSERT_FALSE(cases.empty());
  for (const Case& original : cases) {
    for (size_t i = 0; i < original.real.size(); ++i) {
      if (original.real[i].event_ms.empty()) continue;
      for (int what = 0; what < 3; ++what) {
        Case c = original;
        if (what == 0) c.real[i].error = c.real[i].error == "ZOK" ? "ZNONODE" : "ZOK";
        if (what == 1) c.real[i].events += ", s0 deleted /d";
        if (what == 2) c.real[i].event_ms[0] += 2 * kTimingToleranceMs;
        const std::vector<std::string> d = run_case(c, nullptr, 1).sim;
        ASSERT_EQ(d.size(), 1u) << c.name << " op " << i << " change " << what;
        EXPECT_EQ(d[0].rfind("op #" + std::to_string(i) + " ", 0), 0u) << d[0];
      }
      return;
    }
  }
  FAIL() << "no saved case has a timed operation with events";
}

TEST(FidelityCases, SaveAndLoadRoundTripAndMalformedCasesSayWhatIsWrong) {
  namespace fs = std::filesystem;
  const std::vector<Case> cases = saved_cases();
  ASSERT_FALSE(cases.empty());
  const fs::path dir =
      fs::temp_directory_path() /
      ("lockstep-cases-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  fs::remove_all(dir);
  std::string error;
  const std::string path = save_case(dir.string(), cases[0], &error);
  ASSERT_FALSE(path.empty()) << error;
  // A saved case is never overwritten; the shrinker's names step aside instead.
  EXPECT_TRUE(save_case(dir.string(), cases[0], &error).empty());
  EXPECT_NE(error.find("exists"), std::string::npos) << error;
  EXPECT_EQ(free_case_name(dir.string(), cases[0].name), cases[0].name + "-2");
  EXPECT_EQ(free_case_name(dir.string(), "fresh"), "fresh");
  std::vector<Case> back;
  ASSERT_TRUE(load_cases(dir.string(), &back, &error)) << error;
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(to_json(back[0]), to_json(cases[0]));
  // Malformed: each names what is wrong; a bad file in a folder fails the load with its path.
  const std::string good = to_json(cases[0]);
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = good;
    const size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) t.replace(at, from.size(), to);
    return t;
  };
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"{", "not a JSON object"},
      {with("lockstep-conformance-case/1", "lockstep-conformance-case/9"), "format"},
      {with("\"servers\": " + std::to_string(cases[0].servers), "\"servers\": 2"), "servers"},
      {with("\"operations\": [\n  \"", "\"operations\": [\n  \"s9 "), "operations[0]"},
      {with("\"real\": [\n  {", "\"real\": [\n  {\"x\":1},{"), "real"},
  };
  for (const auto& [text, why] : bad) {
    Case c;
    EXPECT_FALSE(parse_case(text, &c, &error)) << why;
    EXPECT_NE(error.find(why), std::string::npos) << error;
  }
  { std::ofstream(dir / "zz-broken.json") << "{"; }
  back.clear();
  EXPECT_FALSE(load_cases(dir.string(), &back, &error));
  EXPECT_NE(error.find("zz-broken.json"), std::string::npos) << error;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace lockstep::fidelity
