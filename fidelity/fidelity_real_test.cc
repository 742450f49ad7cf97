// The differential tester against Debian's ZooKeeper server (label real): a fixed budget of
// random operation sequences, with faults, gives the same normalized outcomes on the simulator
// and on a real standalone server and a real 3-server ensemble; every saved conformance case
// (fidelity/cases) gives its recorded answers on the real server. A mismatch names the sequence
// seed, the operation and both outcomes. (The nightly budget is in fidelity/README.md.)
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fidelity/cases.h"
#include "fidelity/differential.h"

namespace lockstep::fidelity {
namespace {

void expect_no_mismatch(const Options& o) {
  const Report r = run_differential(o);
  ASSERT_TRUE(r.server_error.empty()) << r.server_error;
  ASSERT_TRUE(r.setup_error.empty()) << r.setup_error;
  EXPECT_EQ(r.sequences, o.sequences);
  EXPECT_EQ(r.operations, o.sequences * o.ops);
  EXPECT_GT(r.faults, 0u);  // the budget exercises faults
  EXPECT_EQ(r.mismatched_ops, 0u);
  for (const Mismatch& m : r.shown) {
    ADD_FAILURE() << "seed " << m.sequence_seed << " op #" << m.op_index << " " << m.op << " ["
                  << m.kinds << "]\n  sim:  " << m.sim << "\n  real: " << m.real
                  << "\n  rerun: lockstep conformance --sequences 1 --seed " << m.sequence_seed
                  << " --ops " << o.ops << (o.servers == 1 ? "" : " --ensemble");
  }
}

// keep_going (what a Ctrl-C of `lockstep conformance` answers) is asked after each sequence ran
// and before it is compared, with the count compared so far; false after two stops the run with
// exactly two sequences compared and counted, and says it stopped.
TEST(FidelityReal, KeepGoingFalseStopsBeforeComparingTheSequenceInProgress) {
  Options o;
  o.sequences = 5;
  o.seed = 1;
  o.ops = 10;
  o.cases_dir.clear();  // save nothing
  std::vector<uint64_t> asked;
  const Report r = run_differential(o, [&](uint64_t done) {
    asked.push_back(done);
    return done < 2;
  });
  ASSERT_TRUE(r.server_error.empty()) << r.server_error;
  EXPECT_EQ(asked, (std::vector<uint64_t>{0, 1, 2}));
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.sequences, 2u);
  EXPECT_EQ(r.operations, 2u * o.ops);
}

TEST(FidelityReal, StandaloneFixedBudgetWithFaultsHasNoMismatch) {
  // 24 sequences of 40 operations (seeds 1..24), two sessions each, about one fault in 14.
  Options o;
  o.sequences = 24;
  o.seed = 1;
  o.ops = 40;
  expect_no_mismatch(o);
}

TEST(FidelityReal, EnsembleFixedBudgetWithFaultsHasNoMismatch) {
  // 10 sequences of 40 operations on a 3-server ensemble (slot 0 on the leader, slot 1 on a
  // follower; restarts hit followers).
  Options o;
  o.sequences = 10;
  o.seed = 1;
  o.ops = 40;
  o.servers = 3;
  expect_no_mismatch(o);
}

TEST(FidelityReal, EverySavedCaseGivesItsRecordedAnswers) {
  std::vector<Case> cases;
  std::string error;
  ASSERT_TRUE(load_cases(std::string(LOCKSTEP_SOURCE_DIR) + "/fidelity/cases", &cases, &error))
      << error;
  ASSERT_GE(cases.size(), 7u);
  const CasesReport r = run_cases(cases, true);
  ASSERT_TRUE(r.server_error.empty()) << r.server_error;
  ASSERT_EQ(r.runs.size(), cases.size());
  for (const auto& [name, run] : r.runs) {
    EXPECT_TRUE(run.real_ran) << name;
    for (const std::string& d : run.sim) ADD_FAILURE() << name << " simulator: " << d;
    for (const std::string& d : run.real) ADD_FAILURE() << name << " real: " << d;
  }
}

}  // namespace
}  // namespace lockstep::fidelity
