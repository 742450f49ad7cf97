// The simulated client's own timers, pinned to what the C client does (libzookeeper-mt 3.8.0
// against Debian's 3.8.0 server, measured through the proxy: real/FINDINGS.md, "Simulator fixes
// forced by the real server"): the read timeout and the connect-attempt timeout (2/3 of the
// session timeout, pending requests fail with kOperationTimeout), the order of kConnecting and
// the failed requests, the reconnect back-off, and a request counting as a heartbeat. The
// conformance suite (conformance/suite_timeouts.cc) checks the same codes on both backends;
// these tests pin the exact virtual times.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/sim_test_util.h"
#include "sim/world.h"

namespace lockstep::sim {
namespace {

using testing::await_event;
using testing::await_result;
using testing::wait_connected;
using zk::Error;
using zk::SessionState;

WorldOptions options(uint64_t seed = 1) {
  WorldOptions o;
  o.seed = seed;
  return o;
}

ClientOptions timeout_of(Duration d) {
  ClientOptions o;
  o.session_timeout = d;
  return o;
}

void inject_now(World& w, FaultKind kind, uint32_t client, Duration duration = {}) {
  Fault f;
  f.kind = kind;
  f.at = w.now();
  f.client = client;
  f.duration = duration;
  w.inject(f);
}

// The virtual times of client `client`'s log lines of kind `kind`, from `from` on.
std::vector<Time> times_of(World& w, uint32_t client, const std::string& kind, Time from) {
  std::vector<Time> out;
  for (const LoggedEvent& e : w.log().events()) {
    if (e.client == client && e.kind == kind && e.at >= from) out.push_back(e.at);
  }
  return out;
}

// A request left unanswered by a partition fails with kOperationTimeout exactly 2/3 of the
// session timeout after the client last heard the server (measured: 801 ms for 1.2 s, 2000 ms
// for 3 s); the client is kConnecting by then. Provoked by a partition right after a reply.
TEST(TimeoutTest, ReadTimeoutFailsPendingRequestsWithOperationTimeoutAfterTwoThirds) {
  World w(options());
  Client& c = w.add_client(timeout_of(zk::milliseconds(1200)));
  ASSERT_TRUE(wait_connected(w, c));
  ASSERT_TRUE(await_result(w, c, c.exists("/"))->ok());
  inject_now(w, FaultKind::kPartition, 1, zk::seconds(10));
  const Time t0 = w.now();
  auto r = await_result(w, c, c.exists("/"));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->error, Error::kOperationTimeout);
  EXPECT_EQ(w.now() - t0, zk::milliseconds(800));
  EXPECT_EQ(c.state(), SessionState::kConnecting);
}

// Records which of a subscriber and a pending request resumed first after a read timeout.
zk::Task<void> note_event(zk::SessionEvents events, std::vector<std::string>* order) {
  auto ev = co_await events.next();
  order->push_back(ev.ok() ? "session " + zk::to_string(ev.value.state) : "no event");
}
zk::Task<void> note_reply(zk::Future<zk::Result<zk::Stat>> f, std::vector<std::string>* order) {
  auto r = co_await std::move(f);
  order->push_back(std::string("request ") + zk::error_name(r.error));
}

// Like the C client's cleanup(), the kConnecting session event is queued before the pending
// requests are failed (measured: the subscriber saw kConnecting before the request's
// ZOPERATIONTIMEOUT, every run). Provoked by a read timeout under a strategy that always runs
// the first due event (a replay of nothing answers 0), so queue order is run order.
TEST(TimeoutTest, SessionEventIsQueuedBeforeThePendingRequestsFail) {
  World w(options(), make_replay_strategy({}));
  Client& c = w.add_client(timeout_of(zk::milliseconds(1200)));
  ASSERT_TRUE(wait_connected(w, c));
  ASSERT_TRUE(await_result(w, c, c.exists("/"))->ok());
  std::vector<std::string> order;
  c.spawn(note_event(c.subscribe(), &order), "events");
  inject_now(w, FaultKind::kPartition, 1, zk::seconds(10));
  c.spawn(note_reply(c.exists("/"), &order), "request");
  w.run_for(zk::seconds(1));
  EXPECT_EQ(order, (std::vector<std::string>{"session connecting", "request ZOPERATIONTIMEOUT"}));
}

// A connect attempt that nobody answers is abandoned 2/3 of the session timeout after it
// started and the requests queued meanwhile fail with kOperationTimeout (measured: a request
// issued right after the read timeout failed 800 ms later at 1.2 s, 2001 ms later at 3 s).
// Provoked by a long partition: the read timeout, then one attempt into the dead network.
TEST(TimeoutTest, ConnectAttemptGivesUpAfterTwoThirdsWithOperationTimeout) {
  World w(options());
  Client& c = w.add_client(timeout_of(zk::milliseconds(1200)));
  ASSERT_TRUE(wait_connected(w, c));
  ASSERT_TRUE(await_result(w, c, c.exists("/"))->ok());
  inject_now(w, FaultKind::kPartition, 1, zk::seconds(10));
  ASSERT_EQ(await_result(w, c, c.exists("/"))->error, Error::kOperationTimeout);
  const Time t1 = w.now();
  auto r = await_result(w, c, c.exists("/"));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->error, Error::kOperationTimeout);
  EXPECT_EQ(w.now() - t1, zk::milliseconds(800));
}

// The reconnect back-off of a handle: none after its first connection failure, then session
// timeout / 60 after every later one (measured with one server address per handle: 0-7 ms the
// first time, then 23 ms at 1.2 s, 54 ms at 3 s, 69 ms at 4 s). Provoked by three connection
// losses; the time from each loss to the next connect attempt is read from the log.
TEST(TimeoutTest, ReconnectIsImmediateAfterTheFirstFailureThenWaitsTimeoutOverSixty) {
  World w(options());
  Client& c = w.add_client(timeout_of(zk::milliseconds(1200)));
  ASSERT_TRUE(wait_connected(w, c));
  std::vector<Duration> delays;
  for (int i = 0; i < 3; ++i) {
    const Time t0 = w.now();
    inject_now(w, FaultKind::kConnectionLoss, 1);
    w.run_for(zk::microseconds(1));  // the fault runs; a reconnect takes a round trip
    ASSERT_EQ(c.state(), SessionState::kConnecting);
    ASSERT_TRUE(wait_connected(w, c));
    const std::vector<Time> connects = times_of(w, 1, "connect", t0);
    ASSERT_EQ(connects.size(), 1u);
    delays.push_back(connects[0] - t0);
    w.run_for(zk::milliseconds(100));
  }
  EXPECT_EQ(delays,
            (std::vector<Duration>{Duration{}, zk::milliseconds(20), zk::milliseconds(20)}));
}

// WorldOptions::reconnect_delay replaces the back-off with a fixed delay, the first time too.
// Provoked by one connection loss with a 10 ms delay configured.
TEST(TimeoutTest, ConfiguredReconnectDelayIsUsedEveryTime) {
  WorldOptions o = options();
  o.reconnect_delay = zk::milliseconds(10);
  World w(o);
  Client& c = w.add_client();
  ASSERT_TRUE(wait_connected(w, c));
  const Time t0 = w.now();
  inject_now(w, FaultKind::kConnectionLoss, 1);
  w.run_for(zk::microseconds(1));
  ASSERT_EQ(c.state(), SessionState::kConnecting);
  ASSERT_TRUE(wait_connected(w, c));
  const std::vector<Time> connects = times_of(w, 1, "connect", t0);
  ASSERT_EQ(connects.size(), 1u);
  EXPECT_EQ(connects[0] - t0, zk::milliseconds(10));
}

// Every request touches the session on the server like a ping: a client silenced right after
// a round trip keeps its session for at least the whole timeout after that request, whatever
// ping phase the scheduler picks (measured: expiry [timeout + 34 ms, timeout + 209 ms] after the
// client's last frame). Provoked by a partition right after a request, over 16 seeds.
TEST(TimeoutTest, ARequestIsAHeartbeat) {
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    WorldOptions o = options(seed);
    o.record_log = false;
    World w(o);
    Client& c = w.add_client(timeout_of(zk::seconds(1)));
    ASSERT_TRUE(wait_connected(w, c));
    w.run_for(zk::milliseconds(250));  // an idle stretch: the last ping could be long ago
    ASSERT_TRUE(await_result(w, c, c.exists("/"))->ok());
    const Time sent = w.now();  // the request reached the server before its reply came back
    const zk::SessionId id = c.id();
    inject_now(w, FaultKind::kPartition, 1, zk::seconds(5));
    w.run_until(sent + zk::seconds(1) - zk::milliseconds(2));
    EXPECT_TRUE(w.session_alive(id)) << "seed " << seed;
    w.run_until(sent + zk::seconds(1) + w.options().tick);
    EXPECT_FALSE(w.session_alive(id)) << "seed " << seed;
  }
}

}  // namespace
}  // namespace lockstep::sim
