// Tests of the differential tester itself, in the simulator only (the real-server run is
// fidelity_real_test, label real).
#include <gtest/gtest.h>

#include <string>

#include "fidelity/compare.h"
#include "fidelity/differential.h"
#include "fidelity/sequence.h"

namespace lockstep::fidelity {
namespace {

bool is_fault(const Op& op) {
  return op.kind == OpKind::kCut || op.kind == OpKind::kExpire || op.kind == OpKind::kPartition ||
         op.kind == OpKind::kRestart || op.lose != Lose::kNone;
}

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
      if (op.kind == OpKind::kClose || op.kind == OpKind::kExpire ||
          (op.kind == OpKind::kPartition && op.duration > g.session_timeout)) {
        ended[op.slot] = true;
      }
      if (op.kind == OpKind::kReopen) {
        EXPECT_TRUE(ended[op.slot]) << "seed " << seed << " op " << i;
        ended[op.slot] = false;
      }
    }
  }
  // About one operation in 14 is a fault (3,000 operations: 214 expected).
  EXPECT_GT(faults, 120u);
  EXPECT_LT(faults, 320u);
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
    for (RawOutcome& o : b.outcomes) {
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
    compare_runs(seq, "/ls7", 7, a, b, 1, &report);
    EXPECT_EQ(report.mismatched_ops, 1u) << kind;
    EXPECT_EQ(report.by_kind[kind], 1u) << kind;
  }
}

}  // namespace
}  // namespace lockstep::fidelity
