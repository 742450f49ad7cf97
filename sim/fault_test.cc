// Every FaultKind provoked on purpose, with its client- and server-visible effects asserted.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "sim/sim_test_util.h"
#include "sim/world.h"

namespace lockstep::sim {
namespace {

using testing::await_result;
using testing::await_watch;
using testing::lagging;
using testing::quiet;
using testing::run_until;
using testing::wait_connected;
using zk::CreateMode;
using zk::Error;
using zk::SessionState;

Fault fault(FaultKind kind, Time at, uint32_t client, Duration duration = {}) {
  Fault f;
  f.kind = kind;
  f.at = at;
  f.client = client;
  f.duration = duration;
  return f;
}

// A new client holding ephemeral node `path`.
// A quiet 3-server ensemble, and a client of it that connects to server `server` first.
WorldOptions ensemble() {
  WorldOptions wo = quiet();
  wo.servers = 3;
  return wo;
}
Client& client_on(World& w, uint32_t server) {
  ClientOptions o;
  o.server = server;
  return w.add_client(o);
}

Client& ephemeral_holder(World& w, const char* path) {
  Client& c = w.add_client();
  auto r = await_result(w, c, c.create(path, "", CreateMode::kEphemeral));
  EXPECT_TRUE(r && r->ok()) << path;
  return c;
}

// Injects a fault of `kind` on client `client` at the current virtual time.
void inject_now(World& w, FaultKind kind, uint32_t client, Duration duration = {}) {
  w.inject(fault(kind, w.now(), client, duration));
}

// `writer` creates persistent node `path` and `watcher` reads it with data watch `*watch`
// (call under ASSERT_NO_FATAL_FAILURE).
void watch_new_node(World& w, Client& watcher, Client& writer, const char* path, zk::Watch* watch) {
  ASSERT_TRUE(await_result(w, writer, writer.create(path, "", CreateMode::kPersistent))->ok());
  ASSERT_TRUE(await_result(w, watcher, watcher.get_data(path, watch))->ok());
}

// kLoseNextReply on an ephemeral create: the client sees kConnectionLoss, and after the
// reconnect the node exists, owned by the same session (the ambiguous create made certain).
TEST(FaultTest, LostCreateReplyLeavesOwnedNode) {
  World w(quiet());
  Client& c = w.add_client();
  ASSERT_TRUE(wait_connected(w, c));
  const zk::SessionId id = c.id();
  inject_now(w, FaultKind::kLoseNextReply, 1);
  w.run_for(zk::microseconds(1));
  auto r = await_result(w, c, c.create("/e", "", CreateMode::kEphemeral));
  EXPECT_EQ(r->error, Error::kConnectionLoss);
  ASSERT_TRUE(wait_connected(w, c));
  EXPECT_EQ(c.id(), id);
  auto st = await_result(w, c, c.exists("/e"));
  ASSERT_TRUE(st->ok());
  EXPECT_EQ(st->value.ephemeral_owner, id);
}

// kLoseNextReply on a delete: the client sees kConnectionLoss although the node is gone
// (the lost delete reply).
TEST(FaultTest, LostDeleteReply) {
  World w(quiet());
  Client& c = w.add_client();
  ASSERT_TRUE(await_result(w, c, c.create("/d", "", CreateMode::kPersistent))->ok());
  inject_now(w, FaultKind::kLoseNextReply, 1);
  w.run_for(zk::microseconds(1));
  EXPECT_EQ(await_result(w, c, c.remove("/d"))->error, Error::kConnectionLoss);
  EXPECT_FALSE(w.node("/d").has_value());
  ASSERT_TRUE(wait_connected(w, c));
  EXPECT_EQ(await_result(w, c, c.exists("/d"))->error, Error::kNoNode);
}

// A lost reply aimed at deletes (Fault::requests, as the real driver aims it) passes the create
// before it untouched and takes the reply of the delete; aimed at creates, it passes deletes.
TEST(FaultTest, LostReplyAimedAtAKindOfRequestSkipsTheOthers) {
  World w(quiet());
  Client& c = w.add_client();
  ASSERT_TRUE(wait_connected(w, c));
  Fault f = fault(FaultKind::kLoseNextReply, w.now(), 1);
  f.requests = zk::FaultRequests::kDelete;
  w.inject(f);
  w.run_for(zk::microseconds(1));
  EXPECT_TRUE(await_result(w, c, c.create("/a", "", CreateMode::kPersistent))->ok());
  EXPECT_EQ(await_result(w, c, c.remove("/a"))->error, Error::kConnectionLoss);
  EXPECT_FALSE(w.node("/a").has_value());
  ASSERT_TRUE(wait_connected(w, c));

  ASSERT_TRUE(await_result(w, c, c.create("/b", "", CreateMode::kPersistent))->ok());
  f.at = w.now();
  f.requests = zk::FaultRequests::kCreate;
  w.inject(f);
  w.run_for(zk::microseconds(1));
  EXPECT_TRUE(await_result(w, c, c.remove("/b"))->ok());
  EXPECT_EQ(await_result(w, c, c.create("/c", "", CreateMode::kPersistent))->error,
            Error::kConnectionLoss);
  ASSERT_TRUE(wait_connected(w, c));
  EXPECT_TRUE(w.node("/c").has_value());
}

// kLoseNextRequest on a create: the client sees kConnectionLoss and the node was never
// created; a read before it (not a mutation) passes untouched, and the session survives.
TEST(FaultTest, LostCreateRequestIsNotApplied) {
  World w(quiet());
  Client& c = w.add_client();
  ASSERT_TRUE(wait_connected(w, c));
  const zk::SessionId id = c.id();
  inject_now(w, FaultKind::kLoseNextRequest, 1);
  w.run_for(zk::microseconds(1));
  EXPECT_EQ(await_result(w, c, c.exists("/e"))->error, Error::kNoNode);
  EXPECT_EQ(await_result(w, c, c.create("/e", "", CreateMode::kEphemeral))->error,
            Error::kConnectionLoss);
  EXPECT_FALSE(w.node("/e").has_value());
  ASSERT_TRUE(wait_connected(w, c));
  EXPECT_EQ(c.id(), id);
  EXPECT_EQ(await_result(w, c, c.exists("/e"))->error, Error::kNoNode);
  // One-shot: the next create goes through.
  EXPECT_TRUE(await_result(w, c, c.create("/e", "", CreateMode::kEphemeral))->ok());
}

// kConnectionLoss while a create is in flight: the client always sees kConnectionLoss, and
// across seeds the create sometimes reached the server and sometimes did not.
TEST(FaultTest, ConnectionLossOutcomeIsAmbiguous) {
  int applied = 0, lost = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    World w(quiet(seed));
    Client& c = w.add_client();
    ASSERT_TRUE(wait_connected(w, c));
    auto f = c.create("/x", "", CreateMode::kPersistent);
    inject_now(w, FaultKind::kConnectionLoss, 1);
    auto r = await_result(w, c, std::move(f));
    EXPECT_EQ(r->error, Error::kConnectionLoss) << "seed " << seed;
    ASSERT_TRUE(wait_connected(w, c));
    (w.node("/x").has_value() ? applied : lost)++;
  }
  EXPECT_GT(applied, 0);
  EXPECT_GT(lost, 0);
}

// After a connection loss the client reconnects with the same session; a watched node that
// changed while it was disconnected fires on reconnect (SetWatches), and the watch saw the
// kConnecting and kConnected session events first.
TEST(FaultTest, ReconnectFiresWatchForChangeMissedWhileDisconnected) {
  WorldOptions o = quiet();
  // The C client reconnects at once after a handle's first failure; b's write must land while
  // a is still disconnected, so this test keeps a fixed back-off (sim/timeout_test.cc).
  o.reconnect_delay = zk::milliseconds(10);
  World w(o);
  Client& a = w.add_client();
  Client& b = w.add_client();
  zk::Watch watch;
  ASSERT_NO_FATAL_FAILURE(watch_new_node(w, a, b, "/n", &watch));
  const zk::SessionId id = a.id();
  inject_now(w, FaultKind::kConnectionLoss, 1);
  w.run_for(zk::microseconds(1));
  EXPECT_EQ(a.state(), SessionState::kConnecting);
  ASSERT_TRUE(await_result(w, b, b.set_data("/n", "changed"))->ok());
  auto e1 = await_watch(w, a, watch);
  EXPECT_EQ(e1->value.state, SessionState::kConnecting);
  ASSERT_TRUE(wait_connected(w, a));
  EXPECT_EQ(a.id(), id);
  ASSERT_TRUE(run_until(w, [&] { return watch.fired(); }));
  auto e2 = await_watch(w, a, watch);
  EXPECT_EQ(e2->value.type, zk::EventType::kDataChanged);
}

// Expiry (a partition longer than the timeout) deletes the session's ephemerals and fires
// other sessions' watches but not the expired session's own; the client learns kExpired only
// once the partition heals and it reaches a server.
TEST(FaultTest, ExpiryAfterLongPartition) {
  World w(quiet());
  ClientOptions o;
  o.session_timeout = zk::seconds(1);
  Client& a = w.add_client(o);
  Client& b = w.add_client();
  ASSERT_TRUE(await_result(w, a, a.create("/e", "", CreateMode::kEphemeral))->ok());
  zk::Watch mine, theirs;
  ASSERT_TRUE(await_result(w, a, a.exists("/e", &mine))->ok());
  ASSERT_TRUE(await_result(w, b, b.exists("/e", &theirs))->ok());
  auto events = a.subscribe();
  const zk::SessionId id = a.id();
  inject_now(w, FaultKind::kPartition, 1, zk::seconds(3));
  w.run_for(zk::milliseconds(2500));
  EXPECT_FALSE(w.session_alive(id));
  EXPECT_FALSE(w.node("/e").has_value());
  EXPECT_TRUE(theirs.fired());
  EXPECT_FALSE(mine.fired());
  EXPECT_EQ(a.state(), SessionState::kConnecting);  // not told yet
  ASSERT_TRUE(run_until(w, [&] { return a.state() == SessionState::kExpired; }));
  EXPECT_GE(w.now(), Time{} + zk::seconds(3));
  EXPECT_FALSE(mine.fired());
  EXPECT_TRUE(mine.dead());
  EXPECT_EQ(await_result(w, a, a.exists("/"))->error, Error::kInvalidState);
  std::vector<SessionState> seen;
  while (!events.empty()) seen.push_back(testing::await_event(w, a, events)->value.state);
  EXPECT_EQ(seen, (std::vector<SessionState>{SessionState::kConnecting, SessionState::kExpired}));
}

// A partition shorter than the client's read timeout is invisible except for delay: the
// session and its watches survive and a change made meanwhile is notified after the heal.
TEST(FaultTest, ShortPartitionKeepsSessionAndWatches) {
  World w(quiet());
  Client& a = w.add_client();
  Client& b = w.add_client();
  zk::Watch watch;
  ASSERT_NO_FATAL_FAILURE(watch_new_node(w, a, b, "/n", &watch));
  inject_now(w, FaultKind::kPartition, 1, zk::milliseconds(500));
  w.run_for(zk::microseconds(1));
  ASSERT_TRUE(await_result(w, b, b.set_data("/n", "v"))->ok());
  w.run_for(zk::milliseconds(100));
  EXPECT_FALSE(watch.fired());  // held by the partition
  ASSERT_TRUE(run_until(w, [&] { return watch.fired(); }));
  EXPECT_GE(w.now(), Time{} + zk::milliseconds(500));
  EXPECT_EQ(a.state(), SessionState::kConnected);
  EXPECT_TRUE(w.session_alive(a.id()));
}

// A partition longer than the read timeout (2/3 of the session timeout) but healed before the
// server expires the session: the client disconnects, reconnects with the same session, and
// its watch on a node changed meanwhile fires through SetWatches.
TEST(FaultTest, PartitionPastReadTimeoutReconnectsSameSession) {
  World w(quiet());
  ClientOptions o;
  o.session_timeout = zk::seconds(2);
  Client& a = w.add_client(o);
  Client& b = w.add_client();
  ASSERT_TRUE(await_result(w, b, b.create("/n", "", CreateMode::kPersistent))->ok());
  ASSERT_TRUE(await_result(w, a, a.create("/mine", "", CreateMode::kEphemeral))->ok());
  zk::Watch watch;
  ASSERT_TRUE(await_result(w, a, a.get_data("/n", &watch))->ok());
  const zk::SessionId id = a.id();
  const Time start = w.now();
  w.inject(fault(FaultKind::kPartition, start, 1, zk::milliseconds(1360)));
  w.run_for(zk::microseconds(1));
  ASSERT_TRUE(await_result(w, b, b.set_data("/n", "v"))->ok());
  ASSERT_TRUE(run_until(w, [&] { return a.state() == SessionState::kConnecting; }));
  EXPECT_GE(w.now(), start + zk::milliseconds(1333));
  ASSERT_TRUE(wait_connected(w, a));
  EXPECT_EQ(a.id(), id);
  EXPECT_TRUE(w.node("/mine").has_value());
  ASSERT_TRUE(run_until(w, [&] { return watch.fired(); }));
}

// kAbandonSession: the client declares its session expired at once while the server keeps it
// (and its ephemerals) until the timeout runs out.
TEST(FaultTest, AbandonedSessionOutlivesTheClientsView) {
  World w(quiet());
  Client& a = ephemeral_holder(w, "/e");
  const zk::SessionId id = a.id();
  inject_now(w, FaultKind::kAbandonSession, 1);
  w.run_for(zk::milliseconds(1));
  EXPECT_EQ(a.state(), SessionState::kExpired);
  EXPECT_TRUE(w.session_alive(id));
  EXPECT_TRUE(w.node("/e").has_value());
  w.run_for(zk::milliseconds(1200));
  EXPECT_FALSE(w.session_alive(id));
  EXPECT_FALSE(w.node("/e").has_value());
  a.reopen();
  ASSERT_TRUE(wait_connected(w, a));
  EXPECT_NE(a.id(), id);
}

// local_session_expiry: a client disconnected for the session timeout declares kExpired on its
// own timer, even though the server may still hold the session.
TEST(FaultTest, LocalSessionExpiryOption) {
  World w(quiet());
  ClientOptions o;
  o.local_session_expiry = true;
  o.session_timeout = zk::seconds(1);
  Client& a = w.add_client(o);
  ASSERT_TRUE(wait_connected(w, a));
  Fault restart;
  restart.kind = FaultKind::kServerRestart;
  restart.at = w.now();
  restart.server = 1;
  restart.duration = zk::seconds(5);
  w.inject(restart);
  w.run_for(zk::milliseconds(900));
  EXPECT_EQ(a.state(), SessionState::kConnecting);
  w.run_for(zk::milliseconds(200));
  EXPECT_EQ(a.state(), SessionState::kExpired);
  EXPECT_TRUE(w.session_alive(a.id()));  // frozen while the server is down
}

// A pause longer than the timeout: the server expires the session while the paused client
// still believes it is connected; on resume it learns kExpired.
TEST(FaultTest, PauseLongerThanTimeout) {
  World w(quiet());
  Client& a = ephemeral_holder(w, "/e");
  const zk::SessionId id = a.id();
  inject_now(w, FaultKind::kPause, 1, zk::seconds(3));
  w.run_for(zk::seconds(2));
  EXPECT_FALSE(w.session_alive(id));
  EXPECT_FALSE(w.node("/e").has_value());
  EXPECT_TRUE(a.paused());
  EXPECT_EQ(a.state(), SessionState::kConnected);  // it believes
  ASSERT_TRUE(run_until(w, [&] { return a.state() == SessionState::kExpired; }));
  EXPECT_GE(w.now(), Time{} + zk::seconds(3));
}

// A paused client runs no code: its timers fire only after the pause.
TEST(FaultTest, PauseDefersTheClientsEvents) {
  World w(quiet());
  Client& a = w.add_client();
  ASSERT_TRUE(wait_connected(w, a));
  const Time start = w.now();
  auto sleep =
      a.context().sleep_for(zk::milliseconds(10));  // lockstep-allow: zk::Context virtual time
  w.inject(fault(FaultKind::kPause, start, 1, zk::milliseconds(200)));
  auto r = await_result(w, a, std::move(sleep));
  ASSERT_TRUE(r && r->ok());
  EXPECT_GE(w.now(), start + zk::milliseconds(200));
  EXPECT_TRUE(w.session_alive(a.id()));
}

// kDelay adds latency to every message of the client for its duration.
TEST(FaultTest, DelayAddsLatency) {
  World w(quiet());
  Client& a = w.add_client();
  ASSERT_TRUE(wait_connected(w, a));
  Fault d = fault(FaultKind::kDelay, w.now(), 1, zk::seconds(1));
  d.extra = zk::milliseconds(50);
  w.inject(d);
  w.run_for(zk::microseconds(1));
  const Time start = w.now();
  ASSERT_TRUE(await_result(w, a, a.exists("/"))->ok());
  EXPECT_GE(w.now() - start, zk::milliseconds(100));
  w.run_for(zk::seconds(1));
  const Time later = w.now();
  ASSERT_TRUE(await_result(w, a, a.exists("/"))->ok());
  EXPECT_LT(w.now() - later, zk::milliseconds(2));
}

// A lagging follower serves stale reads to its clients until sync; a client's own writes are
// visible to its later reads even on the lagging server.
TEST(FaultTest, LaggingFollowerStaleReadsAndSync) {
  World w(ensemble());
  Client& a = client_on(w, 1);
  Client& b = client_on(w, 2);
  ASSERT_TRUE(wait_connected(w, a) && wait_connected(w, b));
  ASSERT_EQ(b.server(), 2u);
  w.inject(lagging(2, w.now(), zk::seconds(10), zk::seconds(1)));
  w.run_for(zk::microseconds(1));
  ASSERT_TRUE(await_result(w, a, a.create("/x", "", CreateMode::kPersistent))->ok());
  EXPECT_EQ(await_result(w, b, b.exists("/x"))->error, Error::kNoNode);  // stale
  EXPECT_FALSE(w.node_on(2, "/x").has_value());
  ASSERT_TRUE(await_result(w, b, b.sync("/x"))->ok());
  EXPECT_TRUE(await_result(w, b, b.exists("/x"))->ok());
  ASSERT_TRUE(await_result(w, b, b.create("/y", "", CreateMode::kPersistent))->ok());
  EXPECT_TRUE(await_result(w, b, b.exists("/y"))->ok());  // own write visible
}

// kLaggingFollower on server 1 of an ensemble: the leader commits as before but applies to its
// own copy late (ZooKeeper's leader sends COMMIT to the followers before its CommitProcessor
// applies the write). A follower's client is answered for its create while the leader's clients
// still read the older tree, and a sync on the leader waits for nothing (3.8 serves it like a
// read); a failed write on the leader is answered only once the leader has applied what was
// committed before it, and so is the leader's own client's write. The committed state
// (World::node) has the node at once. real/FINDINGS.md item 11.
TEST(FaultTest, LaggingLeaderServesOlderReadsAndItsSyncIsNoBarrier) {
  World w(ensemble());
  Client& reader = client_on(w, 1);
  Client& writer = client_on(w, 2);
  ASSERT_TRUE(wait_connected(w, reader) && wait_connected(w, writer));
  ASSERT_EQ(reader.server(), 1u);
  ASSERT_EQ(writer.server(), 2u);
  ASSERT_TRUE(await_result(w, writer, writer.create("/d", "", CreateMode::kPersistent))->ok());
  ASSERT_TRUE(await_result(w, reader, reader.sync("/d"))->ok());
  w.inject(lagging(1, w.now(), zk::seconds(10), zk::seconds(1)));
  w.run_for(zk::microseconds(1));
  const Time t0 = w.now();
  ASSERT_TRUE(await_result(w, writer, writer.create("/x", "", CreateMode::kPersistent))->ok());
  EXPECT_LT(w.now() - t0, zk::milliseconds(10)) << "the follower answers at its own pace";
  EXPECT_TRUE(w.node("/x").has_value()) << "committed";
  EXPECT_TRUE(w.node_on(2, "/x").has_value());
  EXPECT_FALSE(w.node_on(1, "/x").has_value()) << "the leader's own copy lags";
  // A sync on the leader is answered at once, and the read after it is stale.
  ASSERT_TRUE(await_result(w, reader, reader.sync("/x"))->ok());
  EXPECT_LT(w.now() - t0, zk::milliseconds(10));
  EXPECT_EQ(await_result(w, reader, reader.exists("/x"))->error, Error::kNoNode);
  // A failed write waits for the leader's copy; the read after it sees the node.
  EXPECT_EQ(await_result(w, reader, reader.create("/d", "", CreateMode::kPersistent))->error,
            Error::kNodeExists);
  EXPECT_GE(w.now() - t0, zk::seconds(1));
  EXPECT_TRUE(w.node_on(1, "/x").has_value());
  EXPECT_TRUE(await_result(w, reader, reader.exists("/x"))->ok());
  // The leader's own client's write is answered once the leader has applied it.
  const Time t1 = w.now();
  ASSERT_TRUE(await_result(w, reader, reader.create("/y", "", CreateMode::kPersistent))->ok());
  EXPECT_GE(w.now() - t1, zk::seconds(1));
  EXPECT_TRUE(await_result(w, reader, reader.exists("/y"))->ok());
  // A sync on a follower still waits for that follower to apply everything committed.
  ASSERT_TRUE(await_result(w, writer, writer.sync("/y"))->ok());
  EXPECT_TRUE(await_result(w, writer, writer.exists("/y"))->ok());
}

// A write that fails at the leader is committed as a transaction of its own (ZooKeeper's
// ErrorTxn): it takes exactly one zxid, changes nothing, and its reply comes once the session's
// server has applied it, so on a lagging follower it waits out the lag like a create does.
TEST(FaultTest, AFailedWriteTakesOneZxidAndIsAnsweredOnceItsServerAppliedIt) {
  World w(ensemble());
  Client& c = client_on(w, 2);
  ASSERT_TRUE(wait_connected(w, c));
  auto a = await_result(w, c, c.create("/a", "", CreateMode::kPersistent));
  ASSERT_TRUE(a->ok());
  EXPECT_EQ(w.last_zxid().value, a->value.stat.czxid.value);
  w.inject(lagging(2, w.now(), zk::seconds(10), zk::seconds(1)));
  w.run_for(zk::microseconds(1));
  const Time t0 = w.now();
  EXPECT_EQ(await_result(w, c, c.create("/a", "", CreateMode::kPersistent))->error,
            Error::kNodeExists);
  EXPECT_GE(w.now() - t0, zk::seconds(1)) << "answered after server 2 applied it";
  EXPECT_EQ(w.last_zxid().value, a->value.stat.czxid.value + 1);
  EXPECT_EQ(await_result(w, c, c.remove("/missing"))->error, Error::kNoNode);
  auto b = await_result(w, c, c.create("/b", "", CreateMode::kPersistent));
  ASSERT_TRUE(b->ok());
  EXPECT_EQ(b->value.stat.czxid.value, a->value.stat.czxid.value + 3);
  EXPECT_EQ(w.node("/a")->stat.version, 0) << "a failed write changes nothing";
}

// On a standalone server the lag of server 1 changes nothing: it applies each write as it
// commits it, so a sync and a read after another client's write see it at once.
TEST(FaultTest, LagOnAStandaloneServerChangesNothing) {
  World w(quiet());
  Client& reader = w.add_client();
  Client& writer = w.add_client();
  ASSERT_TRUE(wait_connected(w, reader) && wait_connected(w, writer));
  w.inject(lagging(1, w.now(), zk::seconds(10), zk::seconds(1)));
  w.run_for(zk::microseconds(1));
  const Time t0 = w.now();
  ASSERT_TRUE(await_result(w, writer, writer.create("/x", "", CreateMode::kPersistent))->ok());
  EXPECT_TRUE(await_result(w, reader, reader.exists("/x"))->ok());
  EXPECT_LT(w.now() - t0, zk::milliseconds(10));
}

// kServerRestart: clients are disconnected, no session expires while the server is down (even
// a crashed client's), and timers restart from the restart: the crashed client's session ends
// one timeout after the server is back, the live client keeps its session.
TEST(FaultTest, ServerRestartDefersExpiry) {
  World w(quiet());
  Client& live = w.add_client();
  Client& dead = w.add_client();
  ASSERT_TRUE(await_result(w, live, live.create("/live", "", CreateMode::kEphemeral))->ok());
  ASSERT_TRUE(await_result(w, dead, dead.create("/dead", "", CreateMode::kEphemeral))->ok());
  const zk::SessionId live_id = live.id(), dead_id = dead.id();
  const Time t0 = w.now();
  w.inject(fault(FaultKind::kCrash, t0, 2));
  Fault r;
  r.kind = FaultKind::kServerRestart;
  r.at = t0;
  r.server = 1;
  r.duration = zk::seconds(3);
  w.inject(r);
  w.run_for(zk::milliseconds(10));
  EXPECT_EQ(live.state(), SessionState::kConnecting);
  w.run_until(t0 + zk::milliseconds(2990));
  EXPECT_TRUE(w.session_alive(dead_id));
  w.run_until(t0 + zk::milliseconds(3500));
  EXPECT_TRUE(w.session_alive(dead_id));
  EXPECT_EQ(live.state(), SessionState::kConnected);
  EXPECT_EQ(live.id(), live_id);
  w.run_until(t0 + zk::milliseconds(4200));
  EXPECT_FALSE(w.session_alive(dead_id));
  EXPECT_FALSE(w.node("/dead").has_value());
  EXPECT_TRUE(w.node("/live").has_value());
}

zk::Task<void> wait_for_node(zk::Session* s, Error* out) {
  zk::Watch watch;
  auto r = co_await s->exists("/never", &watch);
  if (r.error != Error::kNoNode) co_return;
  auto ev = co_await watch.wait();
  *out = ev.error;
}

// kCancel cancels the named root task at its await point: the watch wait completes with
// kCancelled.
TEST(FaultTest, CancelAtAwaitPoint) {
  World w(quiet());
  Client& a = w.add_client();
  Error got = Error::kOk;
  zk::TaskHandle h = a.spawn(wait_for_node(&a, &got), "waiter");
  w.run_for(zk::milliseconds(100));
  EXPECT_FALSE(h.done());
  Fault f = fault(FaultKind::kCancel, w.now(), 1);
  f.task = "waiter";
  w.inject(f);
  w.run_for(zk::milliseconds(1));
  EXPECT_TRUE(h.done());
  EXPECT_EQ(got, Error::kCancelled);
}

// kForeignChild: an outside session creates a persistent node that the clients then see.
TEST(FaultTest, ForeignChild) {
  World w(quiet());
  Client& a = w.add_client();
  ASSERT_TRUE(await_result(w, a, a.create("/lock", "", CreateMode::kPersistent))->ok());
  Fault f = fault(FaultKind::kForeignChild, w.now(), 0);
  f.path = "/lock/foreign";
  w.inject(f);
  w.run_for(zk::milliseconds(1));
  auto kids = await_result(w, a, a.get_children("/lock"));
  EXPECT_EQ(kids->value.names, std::vector<std::string>{"foreign"});
  EXPECT_FALSE(w.node("/lock/foreign")->stat.ephemeral_owner.valid());
}

// kSetCapacity: an outside session creates the count node when it is missing, and later sets
// it, firing the data watch a client armed on it.
TEST(FaultTest, SetCapacityCreatesThenSetsTheCountNode) {
  World w(quiet());
  Client& a = w.add_client();
  Fault f = fault(FaultKind::kSetCapacity, w.now(), 0);
  f.path = "/count";
  f.count = 3;
  w.inject(f);
  w.run_for(zk::milliseconds(1));
  ASSERT_TRUE(w.node("/count").has_value());
  EXPECT_EQ(w.node("/count")->data, "3");
  zk::Watch watch;
  auto read = await_result(w, a, a.get_data("/count", &watch));
  ASSERT_TRUE(read->ok());
  EXPECT_EQ(read->value.data, "3");
  f.at = w.now();
  f.count = 1;
  w.inject(f);
  ASSERT_TRUE(run_until(w, [&] { return watch.fired(); }));
  EXPECT_EQ(w.node("/count")->data, "1");
}

// kDeleteNode: an outside session deletes the oldest ephemeral under the directory (the
// lowest sequence: the holder's node), whoever owns it; the owner's session lives on and is
// not told, a watcher of the node is, and the persistent foreign node is never the victim.
TEST(FaultTest, DeleteNodeRemovesTheOldestEphemeralBehindItsOwner) {
  World w(quiet());
  Client& a = w.add_client();
  Client& b = w.add_client();
  ASSERT_TRUE(await_result(w, a, a.create("/lock", "", CreateMode::kPersistent))->ok());
  ASSERT_TRUE(await_result(w, a, a.create("/lock/p", "", CreateMode::kPersistent))->ok());
  auto first = await_result(w, a, a.create("/lock/n-", "", CreateMode::kEphemeralSequential));
  auto second = await_result(w, b, b.create("/lock/n-", "", CreateMode::kEphemeralSequential));
  ASSERT_TRUE(first->ok() && second->ok());
  zk::Watch watch;
  ASSERT_TRUE(await_result(w, b, b.exists(first->value.path, &watch))->ok());
  Fault f = fault(FaultKind::kDeleteNode, w.now(), 0);
  f.path = "/lock";
  w.inject(f);
  w.run_for(zk::milliseconds(5));
  EXPECT_FALSE(w.node(first->value.path).has_value());
  EXPECT_TRUE(w.node(second->value.path).has_value());
  EXPECT_TRUE(w.node("/lock/p").has_value());
  EXPECT_TRUE(w.session_alive(a.id()));
  EXPECT_EQ(a.state(), SessionState::kConnected);
  auto ev = await_watch(w, b, watch);
  ASSERT_TRUE(ev && ev->ok());
  EXPECT_EQ(ev->value.type, zk::EventType::kDeleted);
  // Again: now b's node is the oldest; then nothing is left to delete (a no-op).
  f.at = w.now();
  w.inject(f);
  w.run_for(zk::milliseconds(5));
  EXPECT_FALSE(w.node(second->value.path).has_value());
  f.at = w.now();
  w.inject(f);
  w.run_for(zk::milliseconds(5));
  EXPECT_TRUE(w.node("/lock/p").has_value());
}

// kDeleteDir: the directory and everything below it go, children first, one zxid each (a
// child-list watch on the directory fires, then its deletion); a create under it then gets
// kNoNode until someone recreates the directory.
TEST(FaultTest, DeleteDirRemovesTheDirectoryAndItsChildren) {
  World w(quiet());
  Client& a = w.add_client();
  Client& b = w.add_client();
  ASSERT_TRUE(await_result(w, a, a.create("/top", "", CreateMode::kPersistent))->ok());
  ASSERT_TRUE(await_result(w, a, a.create("/top/lock", "", CreateMode::kPersistent))->ok());
  ASSERT_TRUE(await_result(w, a, a.create("/top/lock/sub", "", CreateMode::kPersistent))->ok());
  ASSERT_TRUE(
      await_result(w, a, a.create("/top/lock/sub/e", "", CreateMode::kEphemeral))->ok());
  ASSERT_TRUE(await_result(w, b, b.create("/top/lock/x-", "", CreateMode::kEphemeralSequential))
                  ->ok());
  zk::Watch children;
  ASSERT_TRUE(await_result(w, b, b.get_children("/top/lock", &children))->ok());
  const zk::Stat before = w.node("/top")->stat;
  Fault f = fault(FaultKind::kDeleteDir, w.now(), 0);
  f.path = "/top/lock";
  w.inject(f);
  w.run_for(zk::milliseconds(5));
  EXPECT_FALSE(w.node("/top/lock").has_value());
  EXPECT_FALSE(w.node("/top/lock/sub/e").has_value());
  ASSERT_TRUE(w.node("/top").has_value());
  EXPECT_EQ(w.node("/top")->stat.cversion, before.cversion + 1);
  EXPECT_TRUE(w.session_alive(a.id()));
  EXPECT_TRUE(w.session_alive(b.id()));
  auto ev = await_watch(w, b, children);
  ASSERT_TRUE(ev && ev->ok());
  EXPECT_EQ(ev->value.type, zk::EventType::kChildrenChanged);
  EXPECT_EQ(await_result(w, a, a.create("/top/lock/y-", "", CreateMode::kEphemeralSequential))
                ->error,
            Error::kNoNode);
  // A missing directory is a logged no-op.
  f.at = w.now();
  w.inject(f);
  w.run_for(zk::milliseconds(5));
  EXPECT_TRUE(w.node("/top").has_value());
}

// kCrash: the client never runs again and its ephemeral node disappears once the server
// expires the session, between (timeout - ping interval) and (timeout + one tick) later.
TEST(FaultTest, CrashedClientsEphemeralDisappearsAfterTimeout) {
  World w(quiet());
  Client& a = ephemeral_holder(w, "/e");
  const Time t0 = w.now();
  w.inject(fault(FaultKind::kCrash, t0, 1));
  w.run_until(t0 + zk::milliseconds(600));
  EXPECT_TRUE(w.node("/e").has_value());
  w.run_until(t0 + zk::milliseconds(1101));
  EXPECT_FALSE(w.node("/e").has_value());
  EXPECT_TRUE(a.crashed());
}

// kCloseSession: the session closes cleanly, its ephemerals go at once, later calls fail with
// kInvalidState.
TEST(FaultTest, CloseSession) {
  World w(quiet());
  Client& a = ephemeral_holder(w, "/e");
  const zk::SessionId id = a.id();
  inject_now(w, FaultKind::kCloseSession, 1);
  w.run_for(zk::milliseconds(5));
  EXPECT_EQ(a.state(), SessionState::kClosed);
  EXPECT_FALSE(w.session_alive(id));
  EXPECT_FALSE(w.node("/e").has_value());
  EXPECT_EQ(await_result(w, a, a.exists("/"))->error, Error::kInvalidState);
}

// kExpireSession: the server expires the session now; the client learns on its next contact.
TEST(FaultTest, InjectedExpiry) {
  World w(quiet());
  Client& a = ephemeral_holder(w, "/e");
  inject_now(w, FaultKind::kExpireSession, 1);
  w.run_for(zk::microseconds(1));
  EXPECT_FALSE(w.node("/e").has_value());
  ASSERT_TRUE(run_until(w, [&] { return a.state() == SessionState::kExpired; }));
}

// A request over the 1 MiB packet limit makes the server drop the connection: kConnectionLoss,
// nothing created, and the session survives the reconnect.
TEST(FaultTest, RequestOverPacketLimit) {
  World w(quiet());
  Client& a = w.add_client();
  ASSERT_TRUE(wait_connected(w, a));
  const zk::SessionId id = a.id();
  auto r = await_result(w, a, a.create("/big", std::string(1100000, 'x'), CreateMode::kPersistent));
  EXPECT_EQ(r->error, Error::kConnectionLoss);
  ASSERT_TRUE(wait_connected(w, a));
  EXPECT_EQ(a.id(), id);
  EXPECT_FALSE(w.node("/big").has_value());
  auto ok = await_result(w, a, a.create("/small", std::string(1000, 'x'), CreateMode::kPersistent));
  EXPECT_TRUE(ok->ok());
}

// java_reply_limit: a get_children reply larger than the limit is lost with the connection;
// without the option the same reply arrives.
TEST(FaultTest, JavaReplyLimit) {
  for (bool java : {false, true}) {
    WorldOptions wo = quiet();
    wo.java_reply_limit = java;
    wo.packet_limit_bytes = 2000;
    World w(wo);
    Client& a = w.add_client();
    ASSERT_TRUE(await_result(w, a, a.create("/p", "", CreateMode::kPersistent))->ok());
    for (int i = 0; i < 100; ++i) {
      ASSERT_TRUE(
          await_result(w, a, a.create("/p/child-", "", CreateMode::kPersistentSequential))->ok());
    }
    auto kids = await_result(w, a, a.get_children("/p"));
    EXPECT_EQ(kids->error, java ? Error::kConnectionLoss : Error::kOk);
  }
}
}  // namespace
}  // namespace lockstep::sim

namespace lockstep::sim {
namespace {

// A reconnecting client only picks a server at least as new as the last zxid it saw: with
// follower 3 lagging far behind, ten forced reconnects never land on it.
TEST(EnsembleTest, ReconnectAvoidsStaleServer) {
  WorldOptions wo = quiet();
  wo.servers = 3;
  World w(wo);
  Client& a = w.add_client();
  Client& b = w.add_client();
  ASSERT_TRUE(wait_connected(w, a) && wait_connected(w, b));
  w.inject(lagging(3, w.now(), zk::seconds(100), zk::seconds(50)));
  w.run_for(zk::microseconds(1));
  ASSERT_TRUE(await_result(w, a, a.create("/x", "", CreateMode::kPersistent))->ok());
  for (int i = 0; i < 50 && b.server() == 3; ++i) {  // a sync on server 3 would wait 50 s
    inject_now(w, FaultKind::kConnectionLoss, 2);
    w.run_for(zk::microseconds(1));
    ASSERT_TRUE(wait_connected(w, b));
  }
  ASSERT_NE(b.server(), 3u);
  ASSERT_TRUE(await_result(w, b, b.sync("/x"))->ok());
  ASSERT_TRUE(await_result(w, b, b.exists("/x"))->ok());
  for (int i = 0; i < 10; ++i) {
    inject_now(w, FaultKind::kConnectionLoss, 2);
    w.run_for(zk::microseconds(1));
    ASSERT_TRUE(wait_connected(w, b));
    EXPECT_NE(b.server(), 3u);
  }
  EXPECT_FALSE(w.node_on(3, "/x").has_value());
}

// Restarting a follower moves its clients to other servers with their sessions intact;
// restarting the leader disconnects everyone until it is back, and sessions survive.
TEST(EnsembleTest, FollowerAndLeaderRestart) {
  WorldOptions wo = quiet();
  wo.servers = 3;
  World w(wo);
  ClientOptions on2;
  on2.server = 0;
  Client& a = w.add_client(on2);
  ASSERT_TRUE(await_result(w, a, a.create("/e", "", CreateMode::kEphemeral))->ok());
  const zk::SessionId id = a.id();
  Fault r;
  r.kind = FaultKind::kServerRestart;
  r.at = w.now();
  r.server = a.server();
  r.duration = zk::seconds(5);
  const uint32_t first = a.server();
  w.inject(r);
  w.run_for(zk::milliseconds(1));
  ASSERT_TRUE(wait_connected(w, a));
  EXPECT_NE(a.server(), first);
  EXPECT_EQ(a.id(), id);
  w.run_for(zk::seconds(6));
  r.at = w.now();
  r.server = 1;
  r.duration = zk::seconds(3);
  w.inject(r);
  w.run_for(zk::seconds(1));
  EXPECT_EQ(a.state(), zk::SessionState::kConnecting);
  ASSERT_TRUE(wait_connected(w, a));
  EXPECT_GE(w.now(), r.at + r.duration);
  EXPECT_EQ(a.id(), id);
  EXPECT_TRUE(w.node("/e").has_value());
}
}  // namespace
}  // namespace lockstep::sim

namespace lockstep::sim {
namespace {

// close() with a request in flight fails it with kClosing at once; a reopen right after gets a
// new session whose replies are matched to its own requests (nothing of the old handle leaks).
TEST(FaultTest, CloseWithRequestInFlightThenReopen) {
  World w(quiet());
  Client& a = w.add_client();
  ASSERT_TRUE(wait_connected(w, a));
  const zk::SessionId old_id = a.id();
  auto created = a.create("/a", "", CreateMode::kPersistent);
  auto closed = a.close();
  EXPECT_EQ(await_result(w, a, std::move(created))->error, Error::kClosing);
  a.reopen();
  auto b = await_result(w, a, a.create("/b", "", CreateMode::kPersistent));
  ASSERT_TRUE(b && b->ok());
  EXPECT_EQ(b->value.path, "/b");
  EXPECT_NE(a.id(), old_id);
  auto kids = await_result(w, a, a.get_children("/"));
  ASSERT_TRUE(kids->ok());
  EXPECT_FALSE(w.session_alive(old_id));
}
// The event log names a fault by the vocabulary's one name (zk/faults.h), not a simulator
// spelling of its own: a lost-reply, an expire and a close injected together are logged so.
TEST(FaultVocabulary, EventLogUsesTheOneName) {
  World w(WorldOptions{});
  w.add_client();
  w.add_client();
  w.add_client();
  w.run_for(zk::milliseconds(50));
  inject_now(w, FaultKind::kLoseNextReply, 1);
  inject_now(w, FaultKind::kExpireSession, 2);
  inject_now(w, FaultKind::kCloseSession, 3);
  w.run_for(zk::milliseconds(1));
  std::vector<std::string> logged;
  for (const LoggedEvent& e : w.log().events()) {
    if (e.kind == "fault") logged.push_back(e.text);
  }
  std::sort(logged.begin(), logged.end());  // the scheduler orders events due at one instant
  EXPECT_EQ(logged, (std::vector<std::string>{"close c3", "expire c2", "lost-reply c1"}));
}

// README.md's "Fault kinds" table is the descriptor table, row by row: each kind in FaultKind
// order with its name, its summary and which backends inject it; a kind added to zk/faults.h
// without its row (or a row whose backends drifted) fails here.
TEST(FaultVocabulary, ReadmeTableMatchesTheDescriptors) {
  std::ifstream in(std::string(LOCKSTEP_SOURCE_DIR) + "/README.md");
  ASSERT_TRUE(in) << "README.md not found";
  std::vector<std::string> rows;
  bool in_section = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("## ", 0) == 0) in_section = line == "## Fault kinds";
    if (in_section && line.rfind("| `", 0) == 0) rows.push_back(line);
  }
  ASSERT_EQ(rows.size(), static_cast<size_t>(zk::kFaultKindCount))
      << "README.md's Fault kinds table needs one row per zk::FaultKind";
  for (int i = 0; i < zk::kFaultKindCount; ++i) {
    const zk::FaultDescriptor& d = zk::kFaultDescriptors[i];
    const auto yes = [](bool b) { return b ? " yes |" : " — |"; };
    const std::string want = std::string("| `") + d.name + "` | " + d.summary + " |" +
                             yes(zk::injects(d.kind, zk::kSimulator)) +
                             yes(zk::injects(d.kind, zk::kRealServer)) +
                             (d.generated ? " yes |" : " no |");
    EXPECT_EQ(rows[i], want) << "README.md, Fault kinds, row " << i + 1;
  }
}

}  // namespace
}  // namespace lockstep::sim
