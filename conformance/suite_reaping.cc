// Conformance: nodes that go without their creator deleting them — ZooKeeper 3.5's containers
// and TTL nodes, which the leader's ContainerManager deletes (zk/types.h, CreateMode), and an
// outside session's deletes behind a client (the delete-node and delete-dir faults act as one).
//
// Both backends run the leader's check every 100 ms (the simulator's default
// WorldOptions::container_check_interval; the real harness starts its server with
// -Dznode.container.checkIntervalMs=100 and -Dzookeeper.extendedTypesEnabled=true), so a node
// due for deletion goes within a few hundred milliseconds; the waits below are for seconds.
#include <string>
#include <vector>

#include "conformance/suite.h"
#include "conformance/suite_util.h"

namespace lockstep::conformance {

void link_suite_reaping() {}

namespace {

using zk::CreateMode;
using zk::Error;
using zk::EventType;
using zk::Session;
using zk::Task;
using zk::Watch;

// Waits for `w` and checks that it fired kDeleted for `path`.
Task<void> expect_deleted(Watch w, Session* on, std::string path) {
  auto ev = co_await wait_event(w, on);
  CO_ASSERT_OK(ev);
  EXPECT_EQ(ev.value.type, EventType::kDeleted) << path;
  EXPECT_EQ(ev.value.path, path);
}

Task<void> container_body(Session* a, std::string root) {
  const std::string c = child_path(root, "c");
  auto made = co_await a->create(c, "", CreateMode::kContainer);
  CO_ASSERT_OK(made);
  // Measured: the server keeps the type in its ephemeralOwner but shows clients 0.
  EXPECT_EQ(made.value.stat.ephemeral_owner, zk::SessionId{}) << "no owner shown for a container";
  auto child = co_await a->create(child_path(c, "e"), "", CreateMode::kEphemeral);
  CO_ASSERT_OK(child);
  // Kept while it has a child: several checks pass.
  CO_ASSERT_OK(co_await a->context().sleep_for(zk::milliseconds(400)));
  Watch gone;
  CO_ASSERT_OK(co_await a->exists(c, &gone));
  CO_ASSERT_OK(co_await a->remove(child.value.path));
  co_await expect_deleted(gone, a, c);
  EXPECT_EQ((co_await a->exists(c)).error, Error::kNoNode);
  EXPECT_EQ((co_await a->create(child_path(c, "x"), "", CreateMode::kEphemeral)).error,
            Error::kNoNode);
}

TEST_P(ConformanceTest, AContainerIsDeletedAfterItsLastChildGoes) {
  // A container with an ephemeral child stays through several checks; once the child is
  // deleted the leader deletes the container (a watch on it fires kDeleted), and a create under
  // it then gets kNoNode.
  Session& a = open();
  run(a, container_body(&a, fresh_root()));
}

Task<void> never_used_body(Session* a, std::string root) {
  const std::string c = child_path(root, "never");
  CO_ASSERT_OK(co_await a->create(c, "", CreateMode::kContainer));
  CO_ASSERT_OK(co_await a->context().sleep_for(zk::milliseconds(800)));
  auto st = co_await a->exists(c);
  CO_ASSERT_OK(st);
  EXPECT_EQ(st.value.cversion, 0);
}

TEST_P(ConformanceTest, AContainerThatNeverHadAChildIsKept) {
  // A container that never had a child (cversion 0) is not deleted, whatever the checks:
  // ZooKeeper keeps it so that a client can create it and then its first child.
  Session& a = open();
  run(a, never_used_body(&a, fresh_root()));
}

Task<void> ttl_body(Session* a, std::string root) {
  const std::string t = child_path(root, "t");
  const zk::Duration ttl = zk::milliseconds(300);
  const zk::Time start = a->context().now();
  auto made = co_await a->create(t, "", CreateMode::kPersistentWithTtl, ttl);
  CO_ASSERT_OK(made);
  EXPECT_EQ(made.value.stat.ephemeral_owner, zk::SessionId{}) << "no owner shown for a TTL node";
  Watch gone;
  CO_ASSERT_OK(co_await a->exists(t, &gone));
  co_await expect_deleted(gone, a, t);
  EXPECT_GE(a->context().now() - start, ttl) << "not before its TTL";
  // A sequential TTL node gets a suffix like any other.
  auto seq = co_await a->create(child_path(root, "s-"), "", CreateMode::kPersistentSequentialWithTtl,
                                zk::seconds(60));
  CO_ASSERT_OK(seq);
  EXPECT_EQ(sequence_suffix(seq.value.path, child_path(root, "s-")), "0000000001");
  // A TTL mode without a TTL, and a TTL on a mode without one, are refused.
  EXPECT_EQ((co_await a->create(child_path(root, "z"), "", CreateMode::kPersistentWithTtl)).error,
            Error::kBadArguments);
  EXPECT_EQ((co_await a->create(child_path(root, "z"), "", CreateMode::kPersistent,
                                zk::milliseconds(5)))
                .error,
            Error::kBadArguments);
  EXPECT_EQ((co_await a->exists(child_path(root, "z"))).error, Error::kNoNode);
}

TEST_P(ConformanceTest, ATtlNodeIsDeletedAfterItsTtl) {
  // A TTL node without children that nobody modifies is deleted by the leader once its TTL has
  // passed (a watch on it fires kDeleted); a TTL create without a TTL, or with a TTL on another
  // mode, is refused with kBadArguments.
  Session& a = open();
  run(a, ttl_body(&a, fresh_root()));
}

Task<void> outside_delete_body(Session* a, Session* outside, std::string root) {
  const std::string dir = child_path(root, "lock");
  CO_ASSERT_OK(co_await a->create(dir, "", CreateMode::kPersistent));
  auto mine = co_await a->create(child_path(dir, "lock-"), "", CreateMode::kEphemeralSequential);
  CO_ASSERT_OK(mine);
  Watch node;
  Watch children;
  CO_ASSERT_OK(co_await a->exists(mine.value.path, &node));
  CO_ASSERT_OK(co_await a->get_children(dir, &children));
  // Another session deletes a's node (its owner is not told, only watchers are), then the
  // directory, as zkCli's deleteall would.
  CO_ASSERT_TRUE(co_await catch_up(outside));
  CO_ASSERT_OK(co_await outside->remove(mine.value.path));
  CO_ASSERT_OK(co_await outside->remove(dir));
  co_await expect_deleted(node, a, mine.value.path);
  auto ev = co_await wait_event(children, a);
  CO_ASSERT_OK(ev);
  EXPECT_EQ(ev.value.type, EventType::kChildrenChanged) << "the first delete under it";
  EXPECT_EQ(a->state(), zk::SessionState::kConnected);
  EXPECT_EQ((co_await a->create(child_path(dir, "lock-"), "", CreateMode::kEphemeralSequential))
                .error,
            Error::kNoNode);
  EXPECT_EQ((co_await a->get_children(dir)).error, Error::kNoNode);
}

TEST_P(ConformanceTest, AnOutsideDeleteFiresWatchesAndACreateUnderADeletedDirectoryGetsNoNode) {
  // An outside session deletes a client's ephemeral lock node and then the lock directory: the
  // client's watches on the node and on the child list fire, its session is untouched, and its
  // next create under the directory gets kNoNode (the parent is missing).
  Session& a = open();
  Session& outside = open();
  run(a, outside_delete_body(&a, &outside, fresh_root()));
}

}  // namespace
}  // namespace lockstep::conformance
