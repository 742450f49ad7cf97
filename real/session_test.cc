#include "real/session.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "real/test_support.h"

namespace lockstep::real {
namespace {

using testing::get;
using testing::options_for;
using testing::wait_for;
using testing::wait_state;
using zk::CreateMode;
using zk::Error;

// One standalone server for every test of this file (each test works under its own root).
class RealSessionTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { cluster_ = testing::start_cluster(1).release(); }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(cluster_, nullptr); }

  std::unique_ptr<RealSession> connect() {
    auto s = std::make_unique<RealSession>(loop_, options_for(cluster_->connect_string()));
    EXPECT_TRUE(wait_state(loop_, *s, zk::SessionState::kConnected));
    return s;
  }
  // A fresh persistent root for one test.
  std::string root(RealSession& s, const std::string& name) {
    const std::string path = "/" + name;
    auto r = get(loop_, s, s.create(path, "", CreateMode::kPersistent));
    EXPECT_EQ(r.error, Error::kOk);
    return path;
  }

  static Cluster* cluster_;
  EventLoop loop_;
};
Cluster* RealSessionTest::cluster_ = nullptr;

// A new session connects, gets a valid id and the negotiated timeout, and reports kConnected.
TEST_F(RealSessionTest, ConnectsWithAnIdAndTheNegotiatedTimeout) {
  auto s = connect();
  EXPECT_EQ(s->state(), zk::SessionState::kConnected);
  EXPECT_TRUE(s->id().valid());
  EXPECT_EQ(s->timeout(), zk::seconds(4));
  EXPECT_EQ(s->credentials().id, s->id());
  EXPECT_EQ(s->connected_server(), cluster_->address(1));
}

// The server clamps the requested timeout to [2, 20] ticks: 100 ms becomes 400 ms and 60 s
// becomes 4 s with tickTime=200.
TEST_F(RealSessionTest, ServerClampsTheSessionTimeout) {
  RealSession small(loop_, options_for(cluster_->connect_string(), zk::milliseconds(100)));
  RealSession big(loop_, options_for(cluster_->connect_string(), zk::seconds(60)));
  ASSERT_TRUE(wait_state(loop_, small, zk::SessionState::kConnected));
  ASSERT_TRUE(wait_state(loop_, big, zk::SessionState::kConnected));
  EXPECT_EQ(small.timeout(), zk::milliseconds(400));
  EXPECT_EQ(big.timeout(), zk::seconds(4));
}

// Create, get, set, versioned delete and the error codes of the tree rules, each provoked once.
TEST_F(RealSessionTest, BasicOperationsMapErrorsAndStats) {
  auto s = connect();
  const std::string r = root(*s, "basic");
  auto c = get(loop_, *s, s->create(r + "/a", "hello", CreateMode::kPersistent));
  ASSERT_EQ(c.error, Error::kOk);
  EXPECT_EQ(c.value.path, r + "/a");
  EXPECT_EQ(c.value.stat.version, 0);
  EXPECT_EQ(c.value.stat.data_length, 5);
  EXPECT_FALSE(c.value.stat.ephemeral_owner.valid());

  auto d = get(loop_, *s, s->get_data(r + "/a"));
  ASSERT_EQ(d.error, Error::kOk);
  EXPECT_EQ(d.value.data, "hello");
  EXPECT_EQ(d.value.stat, c.value.stat);

  auto set = get(loop_, *s, s->set_data(r + "/a", "x", 0));
  ASSERT_EQ(set.error, Error::kOk);
  EXPECT_EQ(set.value.version, 1);
  EXPECT_EQ(get(loop_, *s, s->set_data(r + "/a", "y", 0)).error, Error::kBadVersion);
  EXPECT_EQ(get(loop_, *s, s->create(r + "/a", "", CreateMode::kPersistent)).error,
            Error::kNodeExists);
  EXPECT_EQ(get(loop_, *s, s->create(r + "/none/a", "", CreateMode::kPersistent)).error,
            Error::kNoNode);
  EXPECT_EQ(get(loop_, *s, s->create("bad-path", "", CreateMode::kPersistent)).error,
            Error::kBadArguments);

  auto e = get(loop_, *s, s->create(r + "/e", "", CreateMode::kEphemeral));
  ASSERT_EQ(e.error, Error::kOk);
  EXPECT_EQ(e.value.stat.ephemeral_owner, s->id());
  EXPECT_EQ(get(loop_, *s, s->create(r + "/e/child", "", CreateMode::kPersistent)).error,
            Error::kNoChildrenForEphemerals);

  EXPECT_EQ(get(loop_, *s, s->remove(r)).error, Error::kNotEmpty);
  EXPECT_EQ(get(loop_, *s, s->remove(r + "/a", 0)).error, Error::kBadVersion);
  EXPECT_EQ(get(loop_, *s, s->remove(r + "/a", 1)).error, Error::kOk);
  EXPECT_EQ(get(loop_, *s, s->remove(r + "/a")).error, Error::kNoNode);
  EXPECT_EQ(get(loop_, *s, s->exists(r + "/a")).error, Error::kNoNode);
  EXPECT_EQ(get(loop_, *s, s->sync(r)).error, Error::kOk);
}

// Sequential creates get a %010d suffix from the parent's counter, which counts every child
// create (a plain one too): p-0000000000, a plain child, then p-0000000002.
TEST_F(RealSessionTest, SequentialSuffixCountsEveryChildCreate) {
  auto s = connect();
  const std::string r = root(*s, "seq");
  auto a = get(loop_, *s, s->create(r + "/p-", "", CreateMode::kPersistentSequential));
  ASSERT_EQ(a.error, Error::kOk);
  EXPECT_EQ(a.value.path, r + "/p-0000000000");
  ASSERT_EQ(get(loop_, *s, s->create(r + "/plain", "", CreateMode::kPersistent)).error, Error::kOk);
  auto b = get(loop_, *s, s->create(r + "/p-", "", CreateMode::kEphemeralSequential));
  ASSERT_EQ(b.error, Error::kOk);
  EXPECT_EQ(b.value.path, r + "/p-0000000002");
  auto kids = get(loop_, *s, s->get_children(r));
  ASSERT_EQ(kids.error, Error::kOk);
  std::vector<std::string> names = kids.value.names;
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"p-0000000000", "p-0000000002", "plain"}));
  EXPECT_EQ(kids.value.stat.num_children, 3);
  EXPECT_EQ(kids.value.stat.cversion, 3);
}

// exists on a missing node arms a creation watch that fires on create; get_data and
// get_children on a missing node return kNoNode and arm nothing.
TEST_F(RealSessionTest, ExistsOnMissingArmsGetOnMissingDoesNot) {
  auto s = connect();
  auto other = connect();
  const std::string r = root(*s, "arm");
  zk::Watch ex, data, kids;
  EXPECT_EQ(get(loop_, *s, s->exists(r + "/n", &ex)).error, Error::kNoNode);
  EXPECT_TRUE(ex.armed());
  EXPECT_EQ(get(loop_, *s, s->get_data(r + "/n", &data)).error, Error::kNoNode);
  EXPECT_FALSE(data.armed());
  EXPECT_EQ(get(loop_, *s, s->get_children(r + "/n", &kids)).error, Error::kNoNode);
  EXPECT_FALSE(kids.armed());
  auto nothing = wait_for(loop_, *s, data, zk::milliseconds(10));
  EXPECT_EQ(nothing.error, Error::kNothing);

  ASSERT_EQ(get(loop_, *other, other->create(r + "/n", "", CreateMode::kPersistent)).error,
            Error::kOk);
  auto ev = wait_for(loop_, *s, ex);
  ASSERT_EQ(ev.error, Error::kOk);
  EXPECT_EQ(ev.value.type, zk::EventType::kCreated);
  EXPECT_EQ(ev.value.path, r + "/n");
}

// Data and child watches fire once with the right type, and the watch event reaches the client
// before the reply of its own later read that observes the change.
TEST_F(RealSessionTest, NodeEventsFireOnceAndBeforeALaterReply) {
  auto s = connect();
  auto other = connect();
  const std::string r = root(*s, "fire");
  ASSERT_EQ(get(loop_, *s, s->create(r + "/n", "", CreateMode::kPersistent)).error, Error::kOk);
  zk::Watch data, kids;
  ASSERT_EQ(get(loop_, *s, s->get_data(r + "/n", &data)).error, Error::kOk);
  ASSERT_EQ(get(loop_, *s, s->get_children(r, &kids)).error, Error::kOk);
  EXPECT_TRUE(data.armed());
  EXPECT_TRUE(kids.armed());

  ASSERT_EQ(get(loop_, *other, other->set_data(r + "/n", "v")).error, Error::kOk);
  ASSERT_EQ(get(loop_, *other, other->create(r + "/m", "", CreateMode::kPersistent)).error,
            Error::kOk);
  // This read observes both changes: both events must already be delivered.
  auto seen = get(loop_, *s, s->get_children(r));
  ASSERT_EQ(seen.error, Error::kOk);
  ASSERT_EQ(seen.value.names.size(), 2u);
  EXPECT_TRUE(data.fired());
  EXPECT_TRUE(kids.fired());
  auto d = wait_for(loop_, *s, data);
  ASSERT_EQ(d.error, Error::kOk);
  EXPECT_EQ(d.value.type, zk::EventType::kDataChanged);
  auto k = wait_for(loop_, *s, kids);
  ASSERT_EQ(k.error, Error::kOk);
  EXPECT_EQ(k.value.type, zk::EventType::kChildrenChanged);
  EXPECT_EQ(k.value.path, r);
}

// The contract's event dispatcher on the real client (zk/dispatcher.h): watch callbacks are
// queued in the order the C client delivered the events (here: the order another session deleted
// the nodes, not the order the callbacks were registered), and a callback blocked on a Condition
// holds back every callback behind it until it is notified.
TEST_F(RealSessionTest, DispatcherKeepsDeliveryOrderAndABlockedCallbackStallsTheRest) {
  auto s = connect();
  auto other = connect();
  const std::string r = root(*s, "dispatch");
  for (const char* n : {"/n1", "/n2"}) {
    ASSERT_EQ(get(loop_, *s, s->create(r + n, "", CreateMode::kPersistent)).error, Error::kOk);
  }
  zk::Watch w1, w2;
  ASSERT_EQ(get(loop_, *s, s->get_data(r + "/n1", &w1)).error, Error::kOk);
  ASSERT_EQ(get(loop_, *s, s->get_data(r + "/n2", &w2)).error, Error::kOk);
  zk::Dispatcher& d = s->dispatcher();
  zk::Condition gate;
  std::vector<std::string> ran;
  d.post([&]() -> zk::Task<void> {
    (void)co_await gate.wait();
    ran.push_back("unblocked");
  });
  auto record = [&ran](zk::Result<zk::WatchEvent> ev) -> zk::Task<void> {
    ran.push_back(ev.ok() ? ev.value.path : "error");
    co_return;
  };
  d.on_watch(w1, record);
  d.on_watch(w2, record);
  ASSERT_EQ(get(loop_, *other, other->remove(r + "/n2")).error, Error::kOk);
  ASSERT_EQ(get(loop_, *other, other->remove(r + "/n1")).error, Error::kOk);
  // This read observes both deletes: both events are delivered, and queued behind the block.
  ASSERT_EQ(get(loop_, *s, s->get_children(r)).error, Error::kOk);
  EXPECT_TRUE(ran.empty());
  EXPECT_TRUE(d.busy());
  EXPECT_EQ(d.queued(), 2u);
  gate.notify_all();
  ASSERT_EQ(get(loop_, *s, s->sync(r)).error, Error::kOk);  // lets the event loop run them
  EXPECT_EQ(ran, (std::vector<std::string>{"unblocked", r + "/n2", r + "/n1"}));
  EXPECT_FALSE(d.busy());
}

// close() ends the session: subscribers and armed watches get kClosed, the session's
// ephemerals are gone for another session, and every later call fails with kInvalidState.
TEST_F(RealSessionTest, CloseDeletesEphemeralsAndEndsTheHandle) {
  auto s = connect();
  auto other = connect();
  const std::string r = root(*s, "close");
  ASSERT_EQ(get(loop_, *s, s->create(r + "/e", "", CreateMode::kEphemeral)).error, Error::kOk);
  zk::Watch w;
  ASSERT_EQ(get(loop_, *s, s->exists(r + "/e", &w)).error, Error::kOk);
  zk::SessionEvents events = s->subscribe();
  EXPECT_EQ(get(loop_, *s, s->close()).error, Error::kOk);
  EXPECT_EQ(s->state(), zk::SessionState::kClosed);
  auto ev = testing::next_session_event(loop_, *s, events);
  ASSERT_EQ(ev.error, Error::kOk);
  EXPECT_EQ(ev.value.state, zk::SessionState::kClosed);
  auto we = wait_for(loop_, *s, w);
  ASSERT_EQ(we.error, Error::kOk);
  EXPECT_EQ(we.value.type, zk::EventType::kSession);
  EXPECT_EQ(we.value.state, zk::SessionState::kClosed);
  EXPECT_TRUE(w.dead());
  EXPECT_EQ(get(loop_, *other, other->exists(r + "/e")).error, Error::kNoNode);
  EXPECT_EQ(get(loop_, *s, s->exists(r)).error, Error::kInvalidState);
  EXPECT_EQ(get(loop_, *s, s->close()).error, Error::kInvalidState);
}

// Two sessions on one loop are distinct sessions; reopen() gives a closed handle a new session
// on the same context.
TEST_F(RealSessionTest, SessionsShareALoopAndReopenMakesANewSession) {
  auto a = connect();
  auto b = connect();
  EXPECT_NE(a->id(), b->id());
  const zk::SessionId old = a->id();
  ASSERT_EQ(get(loop_, *a, a->close()).error, Error::kOk);
  a->reopen();
  ASSERT_TRUE(wait_state(loop_, *a, zk::SessionState::kConnected));
  EXPECT_NE(a->id(), old);
  EXPECT_EQ(get(loop_, *a, a->exists("/")).error, Error::kOk);
}

}  // namespace
}  // namespace lockstep::real
