// The project's assert stays on where the standard assert is compiled out: this file defines
// NDEBUG before any include, like the release builds do.
#ifndef NDEBUG
#define NDEBUG 1
#endif
#include "zk/invariant.h"

#include <gtest/gtest.h>

#include <cassert>
#include <string>

namespace {

int false_value() { return 0; }

// LOCKSTEP_ASSERT on a false condition aborts even with NDEBUG, and the report names the
// condition and every context line (the seed and the reproduce command a runner pushes).
TEST(InvariantDeathTest, FiresUnderNdebugWithTheRunnersContext) {
  assert(false_value() == 1);  // compiled out here: proves NDEBUG is really in force
  EXPECT_DEATH(
      {
        lockstep::InvariantContext outer([] { return std::string("seed 1142"); });
        lockstep::InvariantContext inner([] {
          return std::string("reproduce: ./lockstep check --recipe exclusive --seed 1142");
        });
        LOCKSTEP_ASSERT_MSG(false_value() == 1, "zxids only grow");
      },
      "invariant violated: false_value\\(\\) == 1(.|\n)*zxids only grow(.|\n)*seed 1142(.|\n)*"
      "reproduce: ./lockstep check --recipe exclusive --seed 1142");
}

// A true condition costs nothing visible and the context stack unwinds with its scopes.
TEST(InvariantTest, TrueConditionPassesAndScopesUnwind) {
  EXPECT_EQ(lockstep::invariant_context(), "");
  {
    lockstep::InvariantContext c([] { return std::string("seed 7"); });
    LOCKSTEP_ASSERT(false_value() == 0);
    EXPECT_EQ(lockstep::invariant_context(), "  seed 7\n");
  }
  EXPECT_EQ(lockstep::invariant_context(), "");
}

}  // namespace
