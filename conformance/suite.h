// lockstep conformance: the client-observable rules of ZooKeeper (DESIGN §2), as one gtest suite
// parameterized by a Backend.
//
// The suite's test bodies live in the library `lockstep_conformance` (suite*.cc); a backend
// instantiates them with
//
//   LOCKSTEP_INSTANTIATE_CONFORMANCE(Sim, lockstep::conformance::BackendFactory{"sim", make});
//
// in its own test executable (conformance/sim_conformance_test.cc for the simulator,
// real/real_conformance_test.cc for Debian's server). Test names read
// `Sim/ConformanceTest.SequentialSuffixIsTenDigitDecimalStartingAtZero/standalone`.
//
// Where the rules come from: DESIGN §2, each checked against Debian's ZooKeeper 3.8.0 with the
// C client (the real server is the reference; comments say "measured" where a test pins a fact
// found that way). Files: suite_tree.cc (sequence numbers, tree rules, stat, paths, sync),
// suite_watch.cc (watches), suite_session.cc (ids, close, expiry), suite_limits.cc (races,
// binary data, the packet limit).
//
// Every test gets a fresh Backend from the factory (SetUp) and drops it in TearDown. Bodies are
// free coroutine functions that take sessions by pointer and strings by value (nothing refers
// to the TEST_P's stack across a suspension). Inside a body, gtest's ASSERT_* cannot be used
// (they `return`, a coroutine must `co_return`): use EXPECT_* and the CO_ASSERT_* macros below.
// A test that needs a capability the backend lacks (a Feature, or partition()) skips itself with
// GTEST_SKIP naming it; no other test skips anything.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "conformance/backend.h"
#include "zk/error.h"
#include "zk/session.h"
#include "zk/task.h"
#include "zk/types.h"

namespace zk {
// Readable gtest messages for the contract's enums (found by argument-dependent lookup).
inline void PrintTo(Error e, std::ostream* os) { *os << error_name(e); }
inline void PrintTo(EventType t, std::ostream* os) { *os << to_string(t); }
inline void PrintTo(SessionState s, std::ostream* os) { *os << to_string(s); }
}  // namespace zk

namespace lockstep::conformance {

class ConformanceTest : public ::testing::TestWithParam<BackendFactory> {
 protected:
  void SetUp() override;
  void TearDown() override;

  Backend& backend() { return *backend_; }
  // A new connected session (Backend::open) with the suite's default timeout.
  zk::Session& open();
  zk::Session& open(zk::Duration session_timeout);
  // Backend::fresh_root, then catch_up (a write barrier) on every session opened so far, so that
  // each of them can read the new root at once even when its server lags the leader.
  // Tests open their sessions first.
  std::string fresh_root();
  // Runs `body` on `on`; a body that does not finish within `limit` is a test failure.
  void run(zk::Session& on, zk::Task<void> body, zk::Duration limit = kRunLimit);

  // Generous: reached only when a test is broken (virtual time on the simulator).
  static constexpr zk::Duration kRunLimit = zk::seconds(60);
  static constexpr zk::Duration kSessionTimeout = zk::seconds(4);

 private:
  std::unique_ptr<Backend> backend_;
  std::vector<zk::Session*> sessions_;  // opened through this fixture, in order
};

// Names instantiations after the factory.
std::string factory_test_name(const ::testing::TestParamInfo<BackendFactory>& info);

// Referenced by LOCKSTEP_INSTANTIATE_CONFORMANCE so that the linker keeps every object file of
// the static library that holds TEST_P registrations.
void link_conformance_suite();

}  // namespace lockstep::conformance

// Instantiates the whole suite for the given BackendFactory values. Use at namespace scope.
#define LOCKSTEP_INSTANTIATE_CONFORMANCE(prefix, ...)                               \
  namespace lockstep::conformance {                                                 \
  [[maybe_unused]] static const bool lockstep_conformance_linked_##prefix =         \
      (::lockstep::conformance::link_conformance_suite(), true);                    \
  INSTANTIATE_TEST_SUITE_P(prefix, ConformanceTest, ::testing::Values(__VA_ARGS__), \
                           ::lockstep::conformance::factory_test_name);             \
  }

// The same for a container of BackendFactory values (e.g. one per seed, built at start-up).
#define LOCKSTEP_INSTANTIATE_CONFORMANCE_IN(prefix, factories)                      \
  namespace lockstep::conformance {                                                 \
  [[maybe_unused]] static const bool lockstep_conformance_linked_##prefix =         \
      (::lockstep::conformance::link_conformance_suite(), true);                    \
  INSTANTIATE_TEST_SUITE_P(prefix, ConformanceTest, ::testing::ValuesIn(factories), \
                           ::lockstep::conformance::factory_test_name);             \
  }

// ASSERT-like checks usable inside coroutine bodies: record a failure and end the body.
#define CO_ASSERT_TRUE(cond)                               \
  do {                                                     \
    if (!(cond)) {                                         \
      ADD_FAILURE() << "CO_ASSERT_TRUE(" #cond ") failed"; \
      co_return;                                           \
    }                                                      \
  } while (0)

#define CO_ASSERT_OK(result)                                                      \
  do {                                                                            \
    const ::zk::Error lockstep_co_err_ = (result).error;                          \
    if (lockstep_co_err_ != ::zk::Error::kOk) {                                   \
      ADD_FAILURE() << #result " failed: " << ::zk::error_name(lockstep_co_err_); \
      co_return;                                                                  \
    }                                                                             \
  } while (0)

#define CO_ASSERT_EQ(a, b)                                  \
  do {                                                      \
    if (!((a) == (b))) {                                    \
      EXPECT_EQ(a, b) << "(CO_ASSERT_EQ: ending the body)"; \
      co_return;                                            \
    }                                                       \
  } while (0)
