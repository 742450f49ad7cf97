// The differential tester against Debian's ZooKeeper server (label real): a fixed budget of
// random operation sequences gives the same normalized outcomes on the simulator and on a real
// standalone server. A mismatch names the sequence seed, the operation and both outcomes.
#include <gtest/gtest.h>

#include "fidelity/differential.h"

namespace lockstep::fidelity {
namespace {

TEST(FidelityReal, FixedBudgetHasNoMismatch) {
  // 20 sequences of 30 operations (seeds 1..20), two sessions each, with close and reopen.
  Options o;
  o.sequences = 20;
  o.seed = 1;
  o.ops = 30;
  o.shown = 5;
  const Report r = run_differential(o);
  ASSERT_TRUE(r.server_error.empty()) << r.server_error;
  EXPECT_EQ(r.sequences, 20u);
  EXPECT_EQ(r.operations, 600u);
  EXPECT_EQ(r.mismatched_ops, 0u);
  for (const Mismatch& m : r.shown) {
    ADD_FAILURE() << "seed " << m.sequence_seed << " op #" << m.op_index << " " << m.op << " ["
                  << m.kinds << "]\n  sim:  " << m.sim << "\n  real: " << m.real
                  << "\n  rerun: lockstep conformance --sequences 1 --seed " << m.sequence_seed
                  << " --ops 30";
  }
}

}  // namespace
}  // namespace lockstep::fidelity
