// Faults on the real server: forced expiry, the TCP proxy (cut, black hole, lost reply), server
// restart and leader kill.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "real/proxy.h"
#include "real/server.h"
#include "real/session.h"
#include "real/test_support.h"

namespace lockstep::real {
namespace {

using testing::get;
using testing::options_for;
using testing::wait_for;
using testing::wait_state;
using zk::CreateMode;
using zk::Error;
using zk::SessionState;

long long ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               t0)
      .count();
}

std::unique_ptr<Proxy> start_proxy(int port) {
  std::string error;
  auto p = Proxy::start(port, &error);
  EXPECT_TRUE(p) << error;
  return p;
}

// Session states from a subscription, until `last` arrives or the wait gives up.
std::vector<SessionState> states_until(EventLoop& loop, zk::Session& s,
                                       const zk::SessionEvents& events, SessionState last) {
  std::vector<SessionState> out;
  for (int i = 0; i < 16; ++i) {
    auto ev = testing::next_session_event(loop, s, events);
    if (!ev.ok()) break;
    out.push_back(ev.value.state);
    if (ev.value.state == last) break;
  }
  return out;
}

// A second handle on the victim's id and password, connected and closed while the victim is
// cut off at its proxy, expires the victim's session on the server like a timeout would: its
// ephemeral is gone for an observer (whose exists watch fires), and the victim sees kConnecting
// then kExpired, its own watch reports only session events, and every later call fails with
// kInvalidState until reopen().
TEST(RealFaults, ForcedExpiryDeletesEphemeralsAndTheVictimSeesExpired) {
  auto cluster = testing::start_cluster(1);
  ASSERT_TRUE(cluster);
  auto proxy = start_proxy(cluster->client_port(1));
  ASSERT_TRUE(proxy);
  EventLoop loop;
  RealSession victim(loop, options_for(proxy->address()));
  RealSession observer(loop, options_for(cluster->connect_string()));
  ASSERT_TRUE(wait_state(loop, victim, SessionState::kConnected));
  ASSERT_TRUE(wait_state(loop, observer, SessionState::kConnected));
  ASSERT_EQ(get(loop, victim, victim.create("/v", "", CreateMode::kEphemeral)).error, Error::kOk);
  zk::Watch own, seen;
  ASSERT_EQ(get(loop, victim, victim.get_data("/v", &own)).error, Error::kOk);
  ASSERT_EQ(get(loop, observer, observer.exists("/v", &seen)).error, Error::kOk);
  zk::SessionEvents events = victim.subscribe();
  EXPECT_TRUE(cluster->session_alive(victim.id()));

  const auto t0 = std::chrono::steady_clock::now();
  const int tries =
      expire_session(*cluster, cluster->connect_string(), victim.credentials(), proxy.get());
  std::printf("[measure] forced expiry of an isolated victim: %d tries, %lld ms\n", tries,
              ms_since(t0));
  ASSERT_GT(tries, 0);
  EXPECT_FALSE(cluster->session_alive(victim.id()));

  auto gone = wait_for(loop, observer, seen);
  ASSERT_EQ(gone.error, Error::kOk);
  EXPECT_EQ(gone.value.type, zk::EventType::kDeleted);
  EXPECT_EQ(get(loop, observer, observer.exists("/v")).error, Error::kNoNode);

  const std::vector<SessionState> states =
      states_until(loop, victim, events, SessionState::kExpired);
  EXPECT_EQ(states, (std::vector<SessionState>{SessionState::kConnecting, SessionState::kExpired}));
  EXPECT_EQ(victim.state(), SessionState::kExpired);
  EXPECT_FALSE(own.fired());
  EXPECT_TRUE(own.dead());
  EXPECT_EQ(get(loop, victim, victim.exists("/")).error, Error::kInvalidState);
  EXPECT_EQ(get(loop, victim, victim.create("/w", "", CreateMode::kPersistent)).error,
            Error::kInvalidState);
  EXPECT_EQ(get(loop, victim, victim.close()).error, Error::kInvalidState);
  EXPECT_EQ(victim.state(), SessionState::kExpired);
  victim.reopen();
  ASSERT_TRUE(wait_state(loop, victim, SessionState::kConnected));
  EXPECT_EQ(get(loop, victim, victim.exists("/")).error, Error::kOk);
}

// Forced expiry of a victim that stays connected (no proxy) still ends the session (the
// retries win the race against the victim's immediate reconnects) and the victim ends in
// kExpired; whether its own watch saw its ephemeral's deletion first depends on that race.
TEST(RealFaults, ForcedExpiryOfAConnectedVictimEndsTheSession) {
  auto cluster = testing::start_cluster(1);
  ASSERT_TRUE(cluster);
  EventLoop loop;
  RealSession victim(loop, options_for(cluster->connect_string()));
  ASSERT_TRUE(wait_state(loop, victim, SessionState::kConnected));
  ASSERT_EQ(get(loop, victim, victim.create("/v", "", CreateMode::kEphemeral)).error, Error::kOk);
  zk::Watch own;
  ASSERT_EQ(get(loop, victim, victim.get_data("/v", &own)).error, Error::kOk);
  const auto t0 = std::chrono::steady_clock::now();
  const int tries = expire_session(*cluster, cluster->connect_string(), victim.credentials());
  std::printf("[measure] forced expiry of a connected victim: %d tries, %lld ms\n", tries,
              ms_since(t0));
  ASSERT_GT(tries, 0);
  ASSERT_TRUE(wait_state(loop, victim, SessionState::kExpired));
  std::printf("[observe] the victim's own data watch %s\n",
              own.fired() ? "fired kDeleted before kExpired" : "saw only session events");
  EXPECT_TRUE(own.fired() || own.dead());
}

// A create whose reply the proxy drops (and cuts the connection right there) completes with
// kConnectionLoss; after the client reconnects with the same session, the node exists and its
// ephemeralOwner is that session: the ambiguous create of S6, made certain.
TEST(RealFaults, DroppedCreateReplyIsConnectionLossButTheNodeExists) {
  auto cluster = testing::start_cluster(1);
  ASSERT_TRUE(cluster);
  auto proxy = start_proxy(cluster->client_port(1));
  ASSERT_TRUE(proxy);
  EventLoop loop;
  RealSession s(loop, options_for(proxy->address()));
  ASSERT_TRUE(wait_state(loop, s, SessionState::kConnected));
  const zk::SessionId id = s.id();
  zk::SessionEvents events = s.subscribe();

  proxy->drop_reply_to({kOpCreate, kOpCreate2});
  auto c = get(loop, s, s.create("/lock-", "", CreateMode::kEphemeralSequential));
  EXPECT_EQ(c.error, Error::kConnectionLoss);
  EXPECT_EQ(proxy->replies_dropped(), 1);

  const std::vector<SessionState> states = states_until(loop, s, events, SessionState::kConnected);
  EXPECT_EQ(states,
            (std::vector<SessionState>{SessionState::kConnecting, SessionState::kConnected}));
  EXPECT_EQ(s.id(), id);
  auto kids = get(loop, s, s.get_children("/"));
  ASSERT_EQ(kids.error, Error::kOk);
  std::string mine;
  for (const auto& n : kids.value.names) {
    if (n.rfind("lock-", 0) == 0) mine = n;
  }
  ASSERT_EQ(mine, "lock-0000000000");
  auto st = get(loop, s, s.exists("/" + mine));
  ASSERT_EQ(st.error, Error::kOk);
  EXPECT_EQ(st.value.ephemeral_owner, id);
}

// A watch survives a connection loss within the session timeout: it gets kConnecting and
// kConnected, and a change made while the client was cut off fires it after the reconnect.
// Provoked by cutting the proxy while it black-holes new connections, then healing.
TEST(RealFaults, WatchSurvivesADisconnectAndFiresForAChangeMadeMeanwhile) {
  auto cluster = testing::start_cluster(1);
  ASSERT_TRUE(cluster);
  auto proxy = start_proxy(cluster->client_port(1));
  ASSERT_TRUE(proxy);
  EventLoop loop;
  RealSession s(loop, options_for(proxy->address()));
  RealSession other(loop, options_for(cluster->connect_string()));
  ASSERT_TRUE(wait_state(loop, s, SessionState::kConnected));
  ASSERT_TRUE(wait_state(loop, other, SessionState::kConnected));
  ASSERT_EQ(get(loop, s, s.create("/w", "", CreateMode::kPersistent)).error, Error::kOk);
  zk::Watch w;
  ASSERT_EQ(get(loop, s, s.get_data("/w", &w)).error, Error::kOk);

  proxy->set_blackhole(true);
  proxy->cut();
  ASSERT_TRUE(wait_state(loop, s, SessionState::kConnecting));
  ASSERT_EQ(get(loop, other, other.set_data("/w", "changed")).error, Error::kOk);
  loop.run_for(zk::milliseconds(50));
  EXPECT_FALSE(w.fired());
  proxy->set_blackhole(false);
  ASSERT_TRUE(wait_state(loop, s, SessionState::kConnected));

  // The watch reports the disconnect and the reconnect, then the change made meanwhile.
  std::vector<zk::WatchEvent> seen;
  for (int i = 0; i < 8; ++i) {
    auto e = wait_for(loop, s, w);
    ASSERT_EQ(e.error, Error::kOk);
    seen.push_back(e.value);
    if (e.value.type != zk::EventType::kSession) break;
  }
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].state, SessionState::kConnecting);
  EXPECT_EQ(seen[1].state, SessionState::kConnected);
  EXPECT_EQ(seen[2].type, zk::EventType::kDataChanged);
  EXPECT_TRUE(w.fired());
}

// A client cut off for longer than its session timeout is expired by the server (its
// ephemeral is deleted while it is away) and learns kExpired when it gets through again.
TEST(RealFaults, BlackHoleLongerThanTheTimeoutExpiresTheSession) {
  auto cluster = testing::start_cluster(1);
  ASSERT_TRUE(cluster);
  auto proxy = start_proxy(cluster->client_port(1));
  ASSERT_TRUE(proxy);
  EventLoop loop;
  RealSession s(loop, options_for(proxy->address(), zk::milliseconds(400)));
  RealSession other(loop, options_for(cluster->connect_string()));
  ASSERT_TRUE(wait_state(loop, s, SessionState::kConnected));
  ASSERT_TRUE(wait_state(loop, other, SessionState::kConnected));
  ASSERT_EQ(s.timeout(), zk::milliseconds(400));
  ASSERT_EQ(get(loop, s, s.create("/e", "", CreateMode::kEphemeral)).error, Error::kOk);
  zk::SessionEvents events = s.subscribe();

  const auto t0 = std::chrono::steady_clock::now();
  proxy->set_blackhole(true);
  ASSERT_TRUE(loop.run_until([&] { return !cluster->session_alive(s.id()); }, 10000));
  std::printf("[measure] black-holed 400 ms session expired by the server after %lld ms\n",
              ms_since(t0));
  EXPECT_EQ(get(loop, other, other.exists("/e")).error, Error::kNoNode);
  proxy->set_blackhole(false);
  const std::vector<SessionState> states = states_until(loop, s, events, SessionState::kExpired);
  EXPECT_EQ(states, (std::vector<SessionState>{SessionState::kConnecting, SessionState::kExpired}));
}

// A standalone server stopped and restarted on the same data directory within the session
// timeout keeps the session and its ephemeral: the client reconnects with the same id.
TEST(RealFaults, ServerRestartKeepsTheSession) {
  auto cluster = testing::start_cluster(1);
  ASSERT_TRUE(cluster);
  EventLoop loop;
  RealSession s(loop, options_for(cluster->connect_string(), zk::seconds(4)));
  ASSERT_TRUE(wait_state(loop, s, SessionState::kConnected));
  ASSERT_EQ(get(loop, s, s.create("/e", "", CreateMode::kEphemeral)).error, Error::kOk);
  const zk::SessionId id = s.id();

  cluster->stop(1);
  ASSERT_TRUE(wait_state(loop, s, SessionState::kConnecting));
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(cluster->restart(1), "");
  std::printf("[measure] standalone restart ready in %lld ms\n", ms_since(t0));
  ASSERT_TRUE(wait_state(loop, s, SessionState::kConnected));
  EXPECT_EQ(s.id(), id);
  auto st = get(loop, s, s.exists("/e"));
  ASSERT_EQ(st.error, Error::kOk);
  EXPECT_EQ(st.value.ephemeral_owner, id);
}

// Killing the ensemble's leader elects a new one; sessions survive (same id, ephemeral still
// owned) and writes succeed again.
TEST(RealFaults, EnsembleLeaderKillKeepsSessions) {
  auto cluster = testing::start_cluster(3);
  ASSERT_TRUE(cluster);
  ASSERT_TRUE(cluster->wait_for_leader(10000));
  EventLoop loop;
  RealSession s(loop, options_for(cluster->connect_string(), zk::seconds(4)));
  ASSERT_TRUE(wait_state(loop, s, SessionState::kConnected));
  ASSERT_EQ(get(loop, s, s.create("/e", "", CreateMode::kEphemeral)).error, Error::kOk);
  const zk::SessionId id = s.id();
  const int old_leader = cluster->leader();
  ASSERT_NE(old_leader, 0);

  const auto t0 = std::chrono::steady_clock::now();
  cluster->kill(old_leader);
  ASSERT_TRUE(cluster->wait_for_leader(15000));
  std::printf("[measure] new leader %lld ms after the leader was killed\n", ms_since(t0));
  EXPECT_NE(cluster->leader(), old_leader);
  // The write goes through whichever server the client is (re)connected to.
  auto c = get(loop, s, s.create("/after", "", CreateMode::kPersistent));
  if (c.error == Error::kConnectionLoss)
    c = get(loop, s, s.create("/after", "", CreateMode::kPersistent));
  EXPECT_TRUE(c.error == Error::kOk || c.error == Error::kNodeExists) << zk::error_name(c.error);
  EXPECT_EQ(s.state(), SessionState::kConnected);
  EXPECT_EQ(s.id(), id);
  auto st = get(loop, s, s.exists("/e"));
  ASSERT_EQ(st.error, Error::kOk);
  EXPECT_EQ(st.value.ephemeral_owner, id);
}

}  // namespace
}  // namespace lockstep::real

namespace lockstep::real {
namespace {

// Reference behaviour of the C client that the contract's error list does not mention: a
// request pending when the CLIENT's own timer declares the connection dead (nothing heard for
// 2/3 of the session timeout) completes with ZOPERATIONTIMEOUT, not ZCONNECTIONLOSS (which is
// what a connection closed by the other side gives). Provoked by black-holing the proxy.
TEST(RealCClientReference, PendingRequestFailsWithOperationTimeoutWhenTheClientTimesOut) {
  auto cluster = testing::start_cluster(1);
  ASSERT_TRUE(cluster);
  auto proxy = start_proxy(cluster->client_port(1));
  ASSERT_TRUE(proxy);
  EventLoop loop;
  RealSession s(loop, options_for(proxy->address(), zk::seconds(1)));
  ASSERT_TRUE(wait_state(loop, s, SessionState::kConnected));
  proxy->set_blackhole(true);
  const auto t0 = std::chrono::steady_clock::now();
  auto r = get(loop, s, s.exists("/"));
  std::printf("[measure] black-holed request failed after %lld ms (1 s session)\n", ms_since(t0));
  EXPECT_EQ(r.error, Error::kOperationTimeout);
  EXPECT_TRUE(zk::is_ambiguous(r.error));
  EXPECT_EQ(s.state(), SessionState::kConnecting);
  proxy->set_blackhole(false);
  ASSERT_TRUE(wait_state(loop, s, SessionState::kConnected));
}

// A request still in flight when the session is closed completes with ZCLOSING although the
// server may have applied it: zk::is_ambiguous() does not list kClosing. Provoked by a create
// followed at once by close().
TEST(RealCClientReference, RequestInFlightAtCloseFailsWithClosingYetMayBeApplied) {
  auto cluster = testing::start_cluster(1);
  ASSERT_TRUE(cluster);
  EventLoop loop;
  RealSession s(loop, options_for(cluster->connect_string()));
  RealSession other(loop, options_for(cluster->connect_string()));
  ASSERT_TRUE(wait_state(loop, s, SessionState::kConnected));
  ASSERT_TRUE(wait_state(loop, other, SessionState::kConnected));
  auto created = s.create("/inflight", "", CreateMode::kPersistent);
  auto closed = s.close();
  EXPECT_EQ(get(loop, s, std::move(created)).error, Error::kClosing);
  EXPECT_EQ(get(loop, s, std::move(closed)).error, Error::kOk);
  const Error after = get(loop, other, other.exists("/inflight")).error;
  std::printf("[observe] create in flight at close: node %s afterwards\n",
              after == Error::kOk ? "exists" : "does not exist");
  EXPECT_TRUE(after == Error::kOk || after == Error::kNoNode);
}

// A request issued while the only server is down fails with kConnectionLoss at the client's
// next failed connection attempt (it is not kept until a server comes back).
TEST(RealCClientReference, RequestWhileTheServerIsDownFailsWithConnectionLoss) {
  auto cluster = testing::start_cluster(1);
  ASSERT_TRUE(cluster);
  EventLoop loop;
  RealSession s(loop, options_for(cluster->connect_string(), zk::seconds(2)));
  ASSERT_TRUE(wait_state(loop, s, SessionState::kConnected));
  cluster->kill(1);
  ASSERT_TRUE(wait_state(loop, s, SessionState::kConnecting));
  EXPECT_EQ(get(loop, s, s.exists("/")).error, Error::kConnectionLoss);
}

// A request issued while the client is reconnecting (its TCP connect is pending) is queued
// and sent once the session is re-established: it succeeds. (The C client queues the
// kConnecting event before it fails the old connection's requests, so a request issued in the
// instant after kConnecting may still be failed with that disconnect's kConnectionLoss: the
// test lets the disconnect finish first.)
TEST(RealCClientReference, RequestWhileReconnectingIsQueuedUntilConnected) {
  auto cluster = testing::start_cluster(1);
  ASSERT_TRUE(cluster);
  auto proxy = start_proxy(cluster->client_port(1));
  ASSERT_TRUE(proxy);
  EventLoop loop;
  RealSession s(loop, options_for(proxy->address()));
  ASSERT_TRUE(wait_state(loop, s, SessionState::kConnected));
  proxy->set_blackhole(true);
  proxy->cut();
  ASSERT_TRUE(wait_state(loop, s, SessionState::kConnecting));
  loop.run_for(zk::milliseconds(30));
  auto f = s.exists("/");
  loop.run_for(zk::milliseconds(100));
  EXPECT_FALSE(f.is_ready());
  proxy->set_blackhole(false);
  EXPECT_EQ(get(loop, s, std::move(f)).error, Error::kOk);
  EXPECT_EQ(s.state(), SessionState::kConnected);
}

}  // namespace
}  // namespace lockstep::real
