// Conformance: the client library's own timers (DESIGN §2 "Sessions"; zk/session.h). When the
// client hears nothing from its server for 2/3 of the session timeout it drops the connection,
// delivers kConnecting and fails every pending request with kOperationTimeout (not
// kConnectionLoss, which means the other side closed the connection); a connect attempt that
// nobody answers is abandoned after 2/3 of the timeout the same way. Measured on Debian's 3.8.0
// server with libzookeeper-mt 3.8.0 (real/FINDINGS.md); both need Backend::partition.
//
// Timing checks are lower bounds only: the client cannot give up earlier than its timer, but a
// loaded machine may make the real client later.
#include <string>
#include <vector>

#include "conformance/suite.h"
#include "conformance/suite_util.h"

namespace lockstep::conformance {

void link_suite_timeouts() {}

namespace {

using zk::Error;
using zk::Session;
using zk::SessionState;
using zk::Task;

// Long enough for a clear 2/3 (1.33 s), short enough to keep the real runs quick; within the
// server's [2, 20] ticks on both backends.
constexpr zk::Duration kTimeout = zk::seconds(2);

// The next session event's state, or a failed CO_ASSERT when none comes.
#define CO_NEXT_STATE(events, session, out)                                     \
  do {                                                                          \
    auto ev_ = co_await (events).next((session)->context().now() + kEventWait); \
    CO_ASSERT_OK(ev_);                                                          \
    (out) = ev_.value.state;                                                    \
  } while (0)

Task<void> read_timeout_body(Session* s, std::string root, zk::SessionEvents events) {
  const zk::SessionId id = s->id();
  const zk::Time t0 = s->context().now();
  zk::Result<zk::Stat> r = co_await s->exists(root);
  const zk::Duration waited = s->context().now() - t0;
  EXPECT_EQ(r.error, Error::kOperationTimeout);
  EXPECT_TRUE(zk::is_ambiguous(r.error));
  EXPECT_GE(waited, kTimeout / 2) << "failed after " << zk::to_string(waited);
  EXPECT_EQ(s->state(), SessionState::kConnecting);
  SessionState st = SessionState::kConnected;
  CO_NEXT_STATE(events, s, st);
  EXPECT_EQ(st, SessionState::kConnecting);
  // The partition heals before the server's expiry: the same session is back.
  CO_NEXT_STATE(events, s, st);
  EXPECT_EQ(st, SessionState::kConnected);
  EXPECT_EQ(s->id(), id);
  CO_ASSERT_OK(co_await s->exists(root));
}

TEST_P(ConformanceTest, AnUnansweredRequestFailsWithOperationTimeoutAfterTwoThirdsOfTheTimeout) {
  // The client (2 s session) is cut off from every server right after a round trip, for 1.6 s:
  // a request sent then gets no reply, and once 2/3 of the timeout (1.33 s) passed without
  // hearing the server the client delivers kConnecting and fails it with kOperationTimeout;
  // the network heals before the server's expiry (2 s after that round trip) and the client
  // reconnects with the same session.
  if (!backend().supports_partition()) {
    GTEST_SKIP() << "backend " << backend().name() << " cannot partition a client";
  }
  Session& s = open(kTimeout);
  const std::string root = fresh_root();  // ends with a round trip (a sync) on `s`
  zk::SessionEvents events = s.subscribe();
  backend().partition(s, zk::milliseconds(1600));
  run(s, read_timeout_body(&s, root, events));
}

Task<void> connect_timeout_body(Session* s, std::string root, zk::SessionEvents events) {
  zk::Result<zk::Stat> first = co_await s->exists(root);
  EXPECT_EQ(first.error, Error::kOperationTimeout);
  // Now the client is trying to connect into the dead network; this request waits for it.
  const zk::Time t1 = s->context().now();
  zk::Result<zk::Stat> queued = co_await s->exists(root);
  const zk::Duration waited = s->context().now() - t1;
  EXPECT_EQ(queued.error, Error::kOperationTimeout);
  EXPECT_GE(waited, kTimeout / 2) << "failed after " << zk::to_string(waited);
  // The partition outlasts the session: once it heals the client learns of the expiry.
  std::vector<SessionState> states;
  for (int i = 0; i < 8; ++i) {
    SessionState st = SessionState::kConnected;
    CO_NEXT_STATE(events, s, st);
    states.push_back(st);
    if (st == SessionState::kExpired) break;
  }
  EXPECT_EQ(states, (std::vector<SessionState>{SessionState::kConnecting, SessionState::kExpired}));
  EXPECT_EQ((co_await s->exists(root)).error, Error::kInvalidState);
}

TEST_P(ConformanceTest, AConnectAttemptNobodyAnswersFailsQueuedRequestsWithOperationTimeout) {
  // The client (2 s session) is cut off for 4 s right after a round trip: the first request
  // fails by the read timeout; a second one, issued at once, waits for the connect attempt the
  // client starts into the dead network, which gives up 2/3 of the timeout later and fails it
  // with kOperationTimeout as well (not kConnectionLoss, and not after 1/3). After the heal the
  // client learns kExpired (it never saw kConnected again).
  if (!backend().supports_partition()) {
    GTEST_SKIP() << "backend " << backend().name() << " cannot partition a client";
  }
  Session& s = open(kTimeout);
  const std::string root = fresh_root();  // ends with a round trip (a sync) on `s`
  zk::SessionEvents events = s.subscribe();
  backend().partition(s, zk::seconds(4));
  run(s, connect_timeout_body(&s, root, events));
}

#undef CO_NEXT_STATE

}  // namespace
}  // namespace lockstep::conformance
