// Tests of the differential tester itself, in the simulator only (the real-server run is
// fidelity_real_test, label real).
#include <gtest/gtest.h>

#include <string>

#include "fidelity/compare.h"
#include "fidelity/differential.h"
#include "fidelity/sequence.h"

namespace lockstep::fidelity {
namespace {

TEST(FidelitySequence, SameSeedSameSequenceAndReopenOnlyAfterClose) {
  // The generator is a function of (seed, n): two calls agree op for op, another seed differs,
  // and a slot is reopened only after it was closed.
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    const Sequence a = generate(seed, 60);
    const Sequence b = generate(seed, 60);
    ASSERT_EQ(a.size(), 60u);
    bool closed[kSlots] = {false, false};
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(to_string(a[i]), to_string(b[i])) << "seed " << seed << " op " << i;
      if (a[i].kind == OpKind::kClose) closed[a[i].slot] = true;
      if (a[i].kind == OpKind::kReopen) {
        EXPECT_TRUE(closed[a[i].slot]) << "seed " << seed << " op " << i;
        closed[a[i].slot] = false;
      }
    }
  }
  std::string one, two;
  for (const Op& op : generate(1, 30)) one += to_string(op) + "\n";
  for (const Op& op : generate(2, 30)) two += to_string(op) + "\n";
  EXPECT_NE(one, two);
}

TEST(FidelityCompare, SimulatorAgainstItselfUnderAnotherWorldSeedHasNoMismatch) {
  // Two simulator worlds with different seeds (other latencies, another child order) run the
  // same sequences: every difference between them is one of compare.h's freedoms, so none is
  // reported. This is what makes a mismatch against the real server mean something.
  Report report;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    const Sequence seq = generate(seed, 40);
    const std::string root = "/ls" + std::to_string(seed);
    const RunResult a = run_on_sim(seq, root, seed);
    const RunResult b = run_on_sim(seq, root, seed + 1000);
    ASSERT_TRUE(a.completed && b.completed) << "seed " << seed;
    compare_runs(seq, root, seed, a, b, 3, &report);
  }
  EXPECT_EQ(report.operations, 30u * 40u);
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
