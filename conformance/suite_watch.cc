// Conformance: one-shot watches — what arms them, what fires them, and the order of a watch
// event relative to later replies (DESIGN §2, zk/watch.h).
//
// A watch is checked for "not fired" only after a barrier: a later request of the watching
// session that observes the change, whose reply the server sends after any event it owed.
#include <string>
#include <vector>

#include "conformance/suite.h"
#include "conformance/suite_util.h"

namespace lockstep::conformance {

void link_suite_watch() {}

namespace {

using zk::CreateMode;
using zk::Error;
using zk::EventType;
using zk::Session;
using zk::Task;
using zk::Watch;

// Checks that `ev` is a `type` event for `path`. Returns false, after recording the failure,
// when there is no event at all: the caller ends its body (CO_ASSERT_TRUE).
bool expect_event(const zk::Result<zk::WatchEvent>& ev, EventType type, const std::string& path) {
  if (!ev.ok()) {
    ADD_FAILURE() << "no watch event for " << path << ": " << zk::error_name(ev.error);
    return false;
  }
  EXPECT_EQ(ev.value.type, type) << "watch event for " << path;
  EXPECT_EQ(ev.value.path, path);
  return true;
}

// Waits for every watch in turn and checks that each fired `type` for `path`.
Task<void> expect_all_fired(std::vector<Watch> watches, Session* on, EventType type,
                            std::string path) {
  for (const Watch& w : watches) {
    auto ev = co_await wait_event(w, on);
    CO_ASSERT_TRUE(expect_event(ev, type, path));
  }
}

// Drops `s`'s connection the only way the contract can provoke a disconnect: a request over the
// packet limit, which fails with kConnectionLoss (the session reconnects by itself).
Task<void> drop_connection(Session* s, std::string root) {
  const std::string big(1100 * 1000, 'x');
  EXPECT_EQ((co_await s->create(child_path(root, "big"), big, CreateMode::kPersistent)).error,
            Error::kConnectionLoss);
}

Task<void> creation_watch_body(Session* a, Session* b, std::string root) {
  const std::string n = child_path(root, "n");
  Watch w;
  EXPECT_EQ((co_await a->exists(n, &w)).error, Error::kNoNode);
  CO_ASSERT_TRUE(w.valid());
  EXPECT_TRUE(w.armed()) << "exists on a missing node arms a creation watch";
  EXPECT_FALSE(w.fired());
  CO_ASSERT_OK(co_await b->create(n, "", CreateMode::kPersistent));
  auto ev = co_await wait_event(w, a);
  CO_ASSERT_TRUE(expect_event(ev, EventType::kCreated, n));
}

TEST_P(ConformanceTest, ExistsOnAMissingNodeArmsACreationWatch) {
  // a: exists(missing, watch) -> kNoNode with the watch armed; b creates the node; a's watch
  // fires kCreated for that path.
  Session& a = open();
  Session& b = open();
  run(a, creation_watch_body(&a, &b, fresh_root()));
}

Task<void> no_watch_on_missing_body(Session* a, Session* b, std::string root) {
  const std::string n = child_path(root, "n");
  Watch wd;
  Watch wc;
  EXPECT_EQ((co_await a->get_data(n, &wd)).error, Error::kNoNode);
  EXPECT_EQ((co_await a->get_children(n, &wc)).error, Error::kNoNode);
  CO_ASSERT_TRUE(wd.valid());
  CO_ASSERT_TRUE(wc.valid());
  EXPECT_FALSE(wd.armed());
  EXPECT_FALSE(wc.armed());
  auto rd = co_await wd.wait();  // no deadline: an unarmed watch must answer at once
  EXPECT_EQ(rd.error, Error::kNothing);
  auto rc = co_await wc.wait();
  EXPECT_EQ(rc.error, Error::kNothing);
  // Creating the node and a child afterwards fires nothing: the server registered nothing.
  CO_ASSERT_OK(co_await b->create(n, "", CreateMode::kPersistent));
  CO_ASSERT_OK(co_await b->create(child_path(n, "c"), "", CreateMode::kPersistent));
  CO_ASSERT_OK(co_await b->set_data(n, "x"));
  CO_ASSERT_TRUE(co_await catch_up(a));
  EXPECT_EQ(co_await barrier(a, n), Error::kOk);
  EXPECT_FALSE(wd.fired());
  EXPECT_FALSE(wc.fired());
}

TEST_P(ConformanceTest, GetDataAndGetChildrenOnAMissingNodeArmNothing) {
  // get_data / get_children with a watch on a missing node: kNoNode, armed() is false, wait()
  // answers kNothing at once, and creating the node later fires neither.
  Session& a = open();
  Session& b = open();
  run(a, no_watch_on_missing_body(&a, &b, fresh_root()));
}

Task<void> one_shot_body(Session* a, Session* b, std::string root) {
  const std::string n = child_path(root, "n");
  CO_ASSERT_OK(co_await b->create(n, "0", CreateMode::kPersistent));
  CO_ASSERT_TRUE(co_await catch_up(a));
  Watch w1;
  CO_ASSERT_OK(co_await a->get_data(n, &w1));
  EXPECT_TRUE(w1.armed());
  CO_ASSERT_OK(co_await b->set_data(n, "1"));
  auto e1 = co_await wait_event(w1, a);
  CO_ASSERT_TRUE(expect_event(e1, EventType::kDataChanged, n));

  // Re-arm after the first change: the new registration must not fire for that change.
  Watch w2;
  auto seen = co_await a->get_data(n, &w2);
  CO_ASSERT_OK(seen);
  EXPECT_EQ(seen.value.data, "1");
  EXPECT_EQ(co_await barrier(a, n), Error::kOk);
  EXPECT_FALSE(w2.fired()) << "a watch armed after a change fired for that change";
  // A second change fires the second registration exactly once.
  CO_ASSERT_OK(co_await b->set_data(n, "2"));
  auto e2 = co_await wait_event(w2, a);
  CO_ASSERT_TRUE(expect_event(e2, EventType::kDataChanged, n));
  // And a third change, with nothing re-armed, fires nothing new (w2 stays on its event).
  CO_ASSERT_OK(co_await b->set_data(n, "3"));
  EXPECT_EQ(co_await barrier(a, n), Error::kOk);
  EXPECT_TRUE(w1.fired());
  EXPECT_TRUE(w2.fired());
  Watch w3;
  CO_ASSERT_OK(co_await a->exists(n, &w3));
  EXPECT_EQ(co_await barrier(a, n), Error::kOk);
  EXPECT_FALSE(w3.fired()) << "an old change was delivered to a new registration";
}

TEST_P(ConformanceTest, WatchesAreOneShot) {
  // A data watch fires on the first change; a watch re-armed after it fires only on the next
  // change, and no registration made after a change ever fires for it.
  Session& a = open();
  Session& b = open();
  run(a, one_shot_body(&a, &b, fresh_root()));
}

Task<void> child_watch_body(Session* a, Session* b, std::string root) {
  const std::string c = child_path(root, "c");
  Watch w1;
  CO_ASSERT_OK(co_await a->get_children(root, &w1));
  EXPECT_TRUE(w1.armed());
  CO_ASSERT_OK(co_await b->create(c, "", CreateMode::kEphemeral));
  auto e1 = co_await wait_event(w1, a);
  CO_ASSERT_TRUE(expect_event(e1, EventType::kChildrenChanged, root));

  Watch w2;
  CO_ASSERT_OK(co_await a->get_children(root, &w2));
  // Changing a child's data or the parent's data is not a child change.
  CO_ASSERT_OK(co_await b->set_data(c, "x"));
  CO_ASSERT_OK(co_await b->set_data(root, "x"));
  EXPECT_EQ(co_await barrier(a, root), Error::kOk);
  EXPECT_FALSE(w2.fired()) << "a data change fired a child watch";
  CO_ASSERT_OK(co_await b->remove(c));
  auto e2 = co_await wait_event(w2, a);
  CO_ASSERT_TRUE(expect_event(e2, EventType::kChildrenChanged, root));
}

TEST_P(ConformanceTest, ChildWatchFiresOnChildCreateAndDeleteOnly) {
  // A get_children watch fires kChildrenChanged when another session creates a child, and a
  // re-armed one when it deletes it; data changes of the child or the parent fire nothing.
  Session& a = open();
  Session& b = open();
  run(a, child_watch_body(&a, &b, fresh_root()));
}

Task<void> data_watch_body(Session* a, Session* b, std::string root) {
  const std::string n = child_path(root, "n");
  CO_ASSERT_OK(co_await b->create(n, "", CreateMode::kPersistent));
  CO_ASSERT_TRUE(co_await catch_up(a));
  Watch wd;
  Watch we;
  Watch wc;
  CO_ASSERT_OK(co_await a->get_data(n, &wd));
  CO_ASSERT_OK(co_await a->exists(n, &we));
  CO_ASSERT_OK(co_await a->get_children(n, &wc));
  EXPECT_TRUE(wd.armed());
  EXPECT_TRUE(we.armed());
  CO_ASSERT_OK(co_await b->set_data(n, "x"));
  std::vector<Watch> changed = {wd, we};  // a named vector: GCC 12 coroutines mis-handle {...}
  co_await expect_all_fired(changed, a, EventType::kDataChanged, n);
  EXPECT_EQ(co_await barrier(a, n), Error::kOk);
  EXPECT_FALSE(wc.fired()) << "set_data fired a child watch";

  Watch dd;
  Watch de;
  CO_ASSERT_OK(co_await a->get_data(n, &dd));
  CO_ASSERT_OK(co_await a->exists(n, &de));
  CO_ASSERT_OK(co_await b->remove(n));
  std::vector<Watch> deleted = {dd, de, wc};
  co_await expect_all_fired(deleted, a, EventType::kDeleted, n);
}

TEST_P(ConformanceTest, DataWatchesFireDataChangedAndDeleted) {
  // get_data and exists watches fire kDataChanged on set_data and (re-armed) kDeleted on delete;
  // a get_children watch on the deleted node fires kDeleted too, but not on set_data.
  Session& a = open();
  Session& b = open();
  run(a, data_watch_body(&a, &b, fresh_root()));
}

Task<void> event_before_reply_body(Session* a, Session* b, std::string root) {
  const std::string n = child_path(root, "n");
  const std::string m = child_path(root, "m");
  CO_ASSERT_OK(co_await b->create(n, "old", CreateMode::kPersistent));
  CO_ASSERT_TRUE(co_await catch_up(a));
  Watch wd;
  Watch wc;
  Watch we;
  CO_ASSERT_OK(co_await a->get_data(n, &wd));
  CO_ASSERT_OK(co_await a->get_children(root, &wc));
  EXPECT_EQ((co_await a->exists(m, &we)).error, Error::kNoNode);

  // b's writes are complete before a sends anything, so a's reads observe them (on an ensemble
  // a's server may lag: then a syncs and reads again). Whichever reply first shows the change
  // must find the watch it invalidated already fired.
  CO_ASSERT_OK(co_await b->set_data(n, "new"));
  auto data = co_await a->get_data(n);
  CO_ASSERT_OK(data);
  if (data.value.data != "new") {
    CO_ASSERT_TRUE(co_await catch_up(a));
    data = co_await a->get_data(n);
    CO_ASSERT_OK(data);
  }
  EXPECT_EQ(data.value.data, "new");
  EXPECT_TRUE(wd.fired()) << "get_data observed the change before the data watch fired";

  CO_ASSERT_OK(co_await b->create(m, "", CreateMode::kPersistent));
  auto kids = co_await a->get_children(root);
  CO_ASSERT_OK(kids);
  if (kids.value.stat.num_children != 2) {
    CO_ASSERT_TRUE(co_await catch_up(a));
    kids = co_await a->get_children(root);
    CO_ASSERT_OK(kids);
  }
  EXPECT_EQ(kids.value.stat.num_children, 2);
  EXPECT_TRUE(wc.fired()) << "get_children observed the new child before the child watch fired";
  EXPECT_TRUE(we.fired()) << "the same reply came before the creation watch fired";
}

TEST_P(ConformanceTest, AWatchEventArrivesBeforeTheReplyThatObservesTheChange) {
  // a watches n's data, root's children and the missing m; b changes all three; a's later reads
  // that see the changes resume with the watches already fired.
  Session& a = open();
  Session& b = open();
  run(a, event_before_reply_body(&a, &b, fresh_root()));
}

Task<void> own_change_body(Session* s, std::string root) {
  const std::string n = child_path(root, "n");
  Watch w;
  EXPECT_EQ((co_await s->exists(n, &w)).error, Error::kNoNode);
  auto made = co_await s->create(n, "", CreateMode::kPersistent);
  CO_ASSERT_OK(made);
  EXPECT_TRUE(w.fired()) << "the creator's own watch fires before its create's reply";
  auto e = co_await wait_event(w, s);
  CO_ASSERT_TRUE(expect_event(e, EventType::kCreated, n));

  Watch wd;
  Watch wc;
  CO_ASSERT_OK(co_await s->get_data(n, &wd));
  CO_ASSERT_OK(co_await s->get_children(root, &wc));
  CO_ASSERT_OK(co_await s->remove(n));
  EXPECT_TRUE(wd.fired()) << "the deleter's own data watch fires before its delete's reply";
  EXPECT_TRUE(wc.fired()) << "the deleter's own child watch fires before its delete's reply";
}

TEST_P(ConformanceTest, AWatchFiresForTheWatchingSessionsOwnChange) {
  // A session arms a creation watch and then creates the node itself, then a child and a data
  // watch and deletes the node: each watch has fired by the time the reply of the write that
  // fired it resumes the session.
  Session& s = open();
  run(s, own_change_body(&s, fresh_root()));
}

Task<void> many_watches_body(Session* a, Session* b, std::string root) {
  const std::string n = child_path(root, "n");
  CO_ASSERT_OK(co_await b->create(n, "same", CreateMode::kPersistent));
  CO_ASSERT_TRUE(co_await catch_up(a));
  Watch d1;
  Watch d2;
  Watch e1;
  Watch other;  // on b: another session's watch on the same node
  CO_ASSERT_OK(co_await a->get_data(n, &d1));
  CO_ASSERT_OK(co_await a->get_data(n, &d2));
  CO_ASSERT_OK(co_await a->exists(n, &e1));
  CO_ASSERT_OK(co_await b->get_data(n, &other));
  // The same bytes again: still a change (version 1) that fires every registration.
  auto set = co_await b->set_data(n, "same");
  CO_ASSERT_OK(set);
  EXPECT_EQ(set.value.version, 1);
  EXPECT_TRUE(other.fired()) << "b's own watch fires before its set's reply";
  std::vector<Watch> all = {d1, d2, e1, other};
  co_await expect_all_fired(all, a, EventType::kDataChanged, n);
}

TEST_P(ConformanceTest, EveryRegistrationOnANodeFiresEvenForTheSameData) {
  // Two get_data watches and an exists watch of one session and a get_data watch of another,
  // all on one node; set_data with the same bytes bumps the version and fires all four.
  Session& a = open();
  Session& b = open();
  run(a, many_watches_body(&a, &b, fresh_root()));
}

Task<void> watch_across_disconnect_body(Session* a, Session* b, std::string root) {
  const std::string n = child_path(root, "n");
  CO_ASSERT_OK(co_await a->create(n, "", CreateMode::kPersistent));
  Watch w;
  CO_ASSERT_OK(co_await a->get_data(n, &w));
  co_await drop_connection(a, root);
  // The watch hears the disconnect and the reconnect as session events and stays armed.
  std::vector<zk::SessionState> states;
  for (int i = 0; i < 8; ++i) {
    auto ev = co_await wait_event(w, a);
    CO_ASSERT_OK(ev);
    CO_ASSERT_TRUE(ev.value.type == EventType::kSession);
    states.push_back(ev.value.state);
    if (ev.value.state == zk::SessionState::kConnected) break;
  }
  CO_ASSERT_TRUE(!states.empty());
  EXPECT_EQ(states.front(), zk::SessionState::kConnecting);
  EXPECT_EQ(states.back(), zk::SessionState::kConnected);
  EXPECT_FALSE(w.fired());
  EXPECT_FALSE(w.dead());
  CO_ASSERT_OK(co_await b->set_data(n, "changed"));
  auto ev = co_await wait_event(w, a);
  CO_ASSERT_OK(ev);
  EXPECT_EQ(ev.value.type, EventType::kDataChanged) << "the watch survived the reconnect";
}

TEST_P(ConformanceTest, AWatchSurvivesADisconnectAndHearsItAsSessionEvents) {
  // a's data watch is armed when a's connection drops (an oversized request): the watch
  // reports kConnecting then kConnected, and still fires kDataChanged when b changes the node.
  Session& a = open();
  Session& b = open();
  run(a, watch_across_disconnect_body(&a, &b, fresh_root()));
}

Task<void> failed_writes_body(Session* a, Session* b, std::string root) {
  const std::string p = child_path(root, "p");
  CO_ASSERT_OK(co_await b->create(p, "", CreateMode::kPersistent));
  CO_ASSERT_OK(co_await b->create(child_path(p, "c"), "", CreateMode::kPersistent));
  CO_ASSERT_TRUE(co_await catch_up(a));
  Watch wd;
  Watch we;
  Watch wc;
  Watch wr;
  CO_ASSERT_OK(co_await a->get_data(p, &wd));
  CO_ASSERT_OK(co_await a->exists(p, &we));
  CO_ASSERT_OK(co_await a->get_children(p, &wc));
  CO_ASSERT_OK(co_await a->get_children(root, &wr));
  EXPECT_EQ((co_await b->set_data(p, "x", 5)).error, Error::kBadVersion);
  EXPECT_EQ((co_await b->remove(p, 5)).error, Error::kBadVersion);
  EXPECT_EQ((co_await b->remove(p)).error, Error::kNotEmpty);
  EXPECT_EQ((co_await b->create(child_path(p, "c"), "", CreateMode::kPersistent)).error,
            Error::kNodeExists);
  EXPECT_EQ((co_await b->create(p, "", CreateMode::kEphemeral)).error, Error::kNodeExists);
  EXPECT_EQ(co_await barrier(a, p), Error::kOk);
  CO_ASSERT_OK(co_await a->get_children(p));
  EXPECT_FALSE(wd.fired());
  EXPECT_FALSE(we.fired());
  EXPECT_FALSE(wc.fired());
  EXPECT_FALSE(wr.fired());
}

TEST_P(ConformanceTest, FailedWritesFireNoWatches) {
  // With data, exists and child watches on p and a child watch on its parent, writes that fail
  // (kBadVersion set and delete, kNotEmpty delete, kNodeExists creates) fire none of them.
  Session& a = open();
  Session& b = open();
  run(a, failed_writes_body(&a, &b, fresh_root()));
}

// Waits for the watch's node event, passing over session events; fails on anything else.
Task<zk::Result<zk::WatchEvent>> next_node_event(Watch w, Session* on) {
  for (int i = 0; i < 8; ++i) {
    auto ev = co_await wait_event(w, on);
    if (!ev.ok() || ev.value.type != EventType::kSession) co_return ev;
    EXPECT_NE(ev.value.state, zk::SessionState::kExpired) << "a disconnect expired the session";
  }
  co_return zk::Result<zk::WatchEvent>::failure(Error::kNothing);
}

Task<void> change_while_disconnected_body(Session* a, Session* b, std::string root) {
  const std::string n = child_path(root, "n");
  const std::string m = child_path(root, "m");
  CO_ASSERT_OK(co_await a->create(n, "", CreateMode::kPersistent));
  Watch wd;
  Watch wc;
  Watch we;
  CO_ASSERT_OK(co_await a->get_data(n, &wd));
  CO_ASSERT_OK(co_await a->get_children(root, &wc));
  EXPECT_EQ((co_await a->exists(m, &we)).error, Error::kNoNode);
  co_await drop_connection(a, root);
  // At once, while a is (most likely) still reconnecting: the server that a reconnects to
  // must fire these from the watches a re-registers.
  CO_ASSERT_OK(co_await b->set_data(n, "changed"));
  CO_ASSERT_OK(co_await b->create(m, "", CreateMode::kPersistent));
  auto ed = co_await next_node_event(wd, a);
  CO_ASSERT_TRUE(expect_event(ed, EventType::kDataChanged, n));
  auto ec = co_await next_node_event(wc, a);
  CO_ASSERT_TRUE(expect_event(ec, EventType::kChildrenChanged, root));
  auto ee = co_await next_node_event(we, a);
  CO_ASSERT_TRUE(expect_event(ee, EventType::kCreated, m));
  // Back on a server at least as new as what a saw: its own node and b's change are there.
  auto r = co_await a->get_data(n);
  CO_ASSERT_OK(r);
  EXPECT_EQ(r.value.data, "changed");
  EXPECT_EQ(a->state(), zk::SessionState::kConnected);
}

TEST_P(ConformanceTest, ChangesMadeDuringADisconnectFireTheWatchesAfterTheReconnect) {
  // a holds a data, a child and a creation watch when its connection drops (an oversized
  // request); b at once changes the data, adds a child and creates the watched node. Once a is
  // back (same session) each watch fires its node event.
  Session& a = open();
  Session& b = open();
  run(a, change_while_disconnected_body(&a, &b, fresh_root()));
}

Task<void> event_zxid_body(Session* a, Session* b, std::string root) {
  const std::string n = child_path(root, "n");
  Watch wc;
  EXPECT_EQ((co_await a->exists(n, &wc)).error, Error::kNoNode);
  auto made = co_await b->create(n, "", CreateMode::kPersistent);
  CO_ASSERT_OK(made);
  auto e = co_await wait_event(wc, a);
  CO_ASSERT_OK(e);
  EXPECT_EQ(e.value.zxid, made.value.stat.czxid);
  Watch wd;
  CO_ASSERT_OK(co_await a->get_data(n, &wd));
  auto set = co_await b->set_data(n, "x");
  CO_ASSERT_OK(set);
  auto e2 = co_await wait_event(wd, a);
  CO_ASSERT_OK(e2);
  EXPECT_EQ(e2.value.zxid, set.value.mzxid);
}

TEST_P(ConformanceTest, AWatchEventNamesTheTransactionThatFiredIt) {
  // A creation watch's event carries the create's czxid, a data watch's the set's mzxid.
  if (!backend().supports(Feature::kWatchEventZxid)) {
    GTEST_SKIP() << "backend " << backend().name() << " lacks feature "
                 << to_string(Feature::kWatchEventZxid)
                 << " (the C client's watcher callback carries no zxid)";
  }
  Session& a = open();
  Session& b = open();
  run(a, event_zxid_body(&a, &b, fresh_root()));
}

}  // namespace
}  // namespace lockstep::conformance
