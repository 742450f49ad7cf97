// Data tree, sequential naming and watch semantics of the simulated server, observed through
// the zk::Session contract.
#include <gtest/gtest.h>

#include <algorithm>

#include "sim/data_tree.h"
#include "sim/sim_test_util.h"
#include "sim/world.h"

namespace lockstep::sim {
namespace {

using testing::await_result;
using testing::await_watch;
using testing::quiet;
using zk::CreateMode;
using zk::Error;

// Creating, reading, updating and deleting nodes yields ZooKeeper's stats and error codes.
TEST(TreeTest, CrudAndStat) {
  World w(quiet());
  Client& c = w.add_client();
  auto r = await_result(w, c, c.create("/a", "x", CreateMode::kPersistent));
  ASSERT_TRUE(r && r->ok());
  EXPECT_EQ(r->value.path, "/a");
  EXPECT_EQ(r->value.stat.data_length, 1);
  EXPECT_EQ(r->value.stat.czxid, r->value.stat.mzxid);
  EXPECT_EQ(await_result(w, c, c.create("/a", "", CreateMode::kPersistent))->error,
            Error::kNodeExists);
  EXPECT_EQ(await_result(w, c, c.create("/x/y", "", CreateMode::kPersistent))->error,
            Error::kNoNode);
  auto set = await_result(w, c, c.set_data("/a", "yy", 0));
  ASSERT_TRUE(set->ok());
  EXPECT_EQ(set->value.version, 1);
  EXPECT_EQ(await_result(w, c, c.set_data("/a", "z", 0))->error, Error::kBadVersion);
  auto got = await_result(w, c, c.get_data("/a"));
  EXPECT_EQ(got->value.data, "yy");
  EXPECT_GT(got->value.stat.mzxid, got->value.stat.czxid);
  ASSERT_TRUE(await_result(w, c, c.create("/a/b", "", CreateMode::kPersistent))->ok());
  EXPECT_EQ(await_result(w, c, c.remove("/a"))->error, Error::kNotEmpty);
  EXPECT_EQ(await_result(w, c, c.remove("/a/b", 5))->error, Error::kBadVersion);
  EXPECT_TRUE(await_result(w, c, c.remove("/a/b"))->ok());
  auto parent = await_result(w, c, c.exists("/a"));
  EXPECT_EQ(parent->value.cversion, 2);  // one create, one delete
  EXPECT_EQ(parent->value.num_children, 0);
  EXPECT_EQ(await_result(w, c, c.exists("/nope"))->error, Error::kNoNode);
}

// Containers (ZooKeeper's ContainerManager, every check interval on the leader): one that had
// a child is deleted once it has none left (its watchers told), one that never had a child is
// kept, one with a child is kept; the stat a client sees shows no owner, and an ephemeral may
// live under a container.
TEST(TreeTest, ContainerIsReapedAfterItsLastChildGoes) {
  World w(quiet());
  Client& c = w.add_client();
  auto made = await_result(w, c, c.create("/used", "", CreateMode::kContainer));
  ASSERT_TRUE(made && made->ok());
  EXPECT_FALSE(made->value.stat.ephemeral_owner.valid()) << "clients see no container mark";
  ASSERT_TRUE(await_result(w, c, c.create("/never", "", CreateMode::kContainer))->ok());
  ASSERT_TRUE(await_result(w, c, c.create("/full", "", CreateMode::kContainer))->ok());
  ASSERT_TRUE(await_result(w, c, c.create("/full/e", "", CreateMode::kEphemeral))->ok());
  ASSERT_TRUE(await_result(w, c, c.create("/used/e", "", CreateMode::kEphemeral))->ok());
  w.run_for(zk::milliseconds(250));  // two checks: /used has a child
  EXPECT_TRUE(w.node("/used").has_value());
  zk::Watch gone;
  ASSERT_TRUE(await_result(w, c, c.exists("/used", &gone))->ok());
  ASSERT_TRUE(await_result(w, c, c.remove("/used/e"))->ok());
  EXPECT_TRUE(w.node("/used").has_value());  // not before the next check
  w.run_for(zk::milliseconds(101));
  EXPECT_FALSE(w.node("/used").has_value());
  auto ev = await_watch(w, c, gone);
  ASSERT_TRUE(ev && ev->ok());
  EXPECT_EQ(ev->value.type, zk::EventType::kDeleted);
  w.run_for(zk::seconds(2));
  EXPECT_TRUE(w.node("/never").has_value());
  EXPECT_TRUE(w.node("/full").has_value());
  EXPECT_EQ(await_result(w, c, c.create("/used/x", "", CreateMode::kEphemeral))->error,
            Error::kNoNode);
}

// TTL nodes: deleted at the first check after they went unmodified and childless for longer
// than their TTL (a set_data restarts the clock, a child keeps it); the TTL range and the modes
// without one are checked; the stat a client sees shows no owner.
TEST(TreeTest, TtlNodeIsReapedAfterItsTtl) {
  World w(quiet());
  Client& c = w.add_client();
  auto made =
      await_result(w, c, c.create("/t", "", CreateMode::kPersistentWithTtl, zk::milliseconds(300)));
  ASSERT_TRUE(made && made->ok());
  EXPECT_FALSE(made->value.stat.ephemeral_owner.valid()) << "clients see no TTL mark";
  auto seq = await_result(
      w, c, c.create("/s-", "", CreateMode::kPersistentSequentialWithTtl, zk::milliseconds(300)));
  ASSERT_TRUE(seq && seq->ok());
  EXPECT_EQ(seq->value.path, "/s-0000000001");  // "/" counts /t only (not /zookeeper)
  ASSERT_TRUE(await_result(w, c, c.create("/kept", "", CreateMode::kPersistentWithTtl,
                                          zk::milliseconds(300)))
                  ->ok());
  ASSERT_TRUE(await_result(w, c, c.create("/kept/child", "", CreateMode::kPersistent))->ok());
  w.run_for(zk::milliseconds(200));
  ASSERT_TRUE(await_result(w, c, c.set_data("/t", "touched"))->ok());
  w.run_for(zk::milliseconds(250));
  EXPECT_TRUE(w.node("/t").has_value());  // touched 250 ms ago
  EXPECT_FALSE(w.node(seq->value.path).has_value());
  w.run_for(zk::milliseconds(200));
  EXPECT_FALSE(w.node("/t").has_value());
  EXPECT_TRUE(w.node("/kept").has_value());
  EXPECT_EQ(await_result(w, c, c.create("/z", "", CreateMode::kPersistentWithTtl))->error,
            Error::kBadArguments);
  EXPECT_EQ(await_result(w, c, c.create("/z", "", CreateMode::kPersistent, zk::milliseconds(5)))
                ->error,
            Error::kBadArguments);
  EXPECT_FALSE(w.node("/z").has_value());
}

// Malformed paths are rejected with kBadArguments; sequential creates may end in '/'.
TEST(TreeTest, PathValidation) {
  World w(quiet());
  Client& c = w.add_client();
  for (const char* p : {"a", "/a/", "//a", "/a//b", "", "/a/./b", "/..", "/a/.", "/a/..",
                        "/a\x01", "/a\x7f", "/\xc2\x85",  // a control, DEL, a C1 control
                        "/a\xc3", "/\xc3/b", "/\xed\xa0\x80", "/\xef\xbf\xb0", "/\xf0\x9f\x98\x80",
                        "/\xc0\xaf"}) {  // cut short, surrogate, U+FFF0, outside the BMP, overlong
    EXPECT_EQ(await_result(w, c, c.create(p, "", CreateMode::kPersistent))->error,
              Error::kBadArguments)
        << p;
  }
  for (const char* p : {"/.a", "/..a", "/...", "/a.", "/\xc3\xa9", "/\xe2\x82\xac"}) {  // é, €
    EXPECT_TRUE(await_result(w, c, c.create(p, "", CreateMode::kPersistent))->ok()) << p;
  }
  ASSERT_TRUE(await_result(w, c, c.create("/q", "", CreateMode::kPersistent))->ok());
  auto s = await_result(w, c, c.create("/q/", "", CreateMode::kPersistentSequential));
  ASSERT_TRUE(s->ok());
  EXPECT_EQ(s->value.path, "/q/0000000000");
}

// The same verdicts wherever the offending text falls in a long path (valid_path skips ordinary
// characters eight at a time): at every offset, and with ordinary text around it.
TEST(TreeTest, PathValidationAtEveryOffsetOfALongPath) {
  const std::string filler = "abcdefghijklmnopqrstuvwxyz-_ABCDEF0123456789";
  for (const char* bad : {"\x01", "\x1f", "\x7f", "\xc2\x85", "\xc3", "\xed\xa0\x80",
                          "\xef\xbf\xb0", "\xf0\x9f\x98\x80", "\xc0\xaf", "//", "/./", "/../"}) {
    for (size_t at = 0; at <= 24; ++at) {
      const std::string path = "/" + filler.substr(0, at) + bad + filler.substr(at, 17);
      EXPECT_FALSE(lockstep::sim::valid_path(path)) << at << " " << path;
    }
  }
  EXPECT_FALSE(lockstep::sim::valid_path("//" + filler));
  EXPECT_FALSE(lockstep::sim::valid_path("/" + filler + "/"));
  EXPECT_FALSE(lockstep::sim::valid_path("/" + filler + "/."));
  EXPECT_FALSE(lockstep::sim::valid_path("/" + filler + "/.."));
  for (size_t at = 0; at <= 24; ++at) {
    for (const char* good : {".", "..", "...", "\xc3\xa9", "\xe2\x82\xac", " ", "~"}) {
      const std::string path = "/" + filler.substr(0, at) + good + filler.substr(at, 17);
      EXPECT_TRUE(lockstep::sim::valid_path(path)) << at << " " << path;
      EXPECT_TRUE(lockstep::sim::valid_path(path + "/" + good + "x" + filler)) << path;
    }
    const std::string dir = "/" + filler.substr(0, at + 1);
    EXPECT_TRUE(lockstep::sim::valid_path(dir + "/", true)) << dir;
    EXPECT_FALSE(lockstep::sim::valid_path(dir + "/", false)) << dir;
  }
}

// The sequence counter counts every successful child create (sequential or not), ignores
// failed creates and deletes, and wraps from INT32_MAX to INT32_MIN.
TEST(TreeTest, SequenceCounter) {
  World w(quiet());
  Client& c = w.add_client();
  ASSERT_TRUE(await_result(w, c, c.create("/l", "", CreateMode::kPersistent))->ok());
  EXPECT_EQ(await_result(w, c, c.create("/l/n-", "", CreateMode::kEphemeralSequential))->value.path,
            "/l/n-0000000000");
  ASSERT_TRUE(await_result(w, c, c.create("/l/plain", "", CreateMode::kPersistent))->ok());
  EXPECT_EQ(await_result(w, c, c.create("/l/plain", "", CreateMode::kPersistent))->error,
            Error::kNodeExists);
  ASSERT_TRUE(await_result(w, c, c.remove("/l/plain"))->ok());
  EXPECT_EQ(await_result(w, c, c.create("/l/n-", "", CreateMode::kEphemeralSequential))->value.path,
            "/l/n-0000000002");
  w.set_sequence_counter("/l", INT32_MAX);
  EXPECT_EQ(
      await_result(w, c, c.create("/l/n-", "", CreateMode::kPersistentSequential))->value.path,
      "/l/n-2147483647");
  EXPECT_EQ(
      await_result(w, c, c.create("/l/n-", "", CreateMode::kPersistentSequential))->value.path,
      "/l/n--2147483648");
}

// The simulator's own suffix formatting agrees with zk::format_sequence (%010d) everywhere,
// including both ends of the signed range.
TEST(TreeTest, SequenceFormatting) {
  for (int32_t v :
       {0, 7, 42, 999999999, 1000000000, INT32_MAX, -1, -7, -999999999, -1000000000, INT32_MIN}) {
    std::string s;
    append_sequence(&s, v);
    EXPECT_EQ(s, zk::format_sequence(zk::Sequence{v})) << v;
    std::string after = "/lock/n-";  // appended to what is there
    append_sequence(&after, v);
    EXPECT_EQ(after, "/lock/n-" + zk::format_sequence(zk::Sequence{v})) << v;
  }
}

// Ephemeral nodes cannot have children and carry their session as owner.
TEST(TreeTest, Ephemerals) {
  World w(quiet());
  Client& c = w.add_client();
  auto e = await_result(w, c, c.create("/e", "", CreateMode::kEphemeral));
  ASSERT_TRUE(e->ok());
  EXPECT_EQ(e->value.stat.ephemeral_owner, c.id());
  EXPECT_EQ(await_result(w, c, c.create("/e/x", "", CreateMode::kPersistent))->error,
            Error::kNoChildrenForEphemerals);
}

// get_children returns every child in a stable order that is not the sorted order (for
// enough children), and the order differs between seeds.
TEST(TreeTest, ChildOrderStableUnsorted) {
  auto order = [](uint64_t seed) {
    World w(quiet(seed));
    Client& c = w.add_client();
    EXPECT_TRUE(await_result(w, c, c.create("/p", "", CreateMode::kPersistent))->ok());
    for (int i = 0; i < 20; ++i) {
      EXPECT_TRUE(
          await_result(w, c, c.create("/p/c-", "", CreateMode::kPersistentSequential))->ok());
    }
    auto a = await_result(w, c, c.get_children("/p"))->value.names;
    auto b = await_result(w, c, c.get_children("/p"))->value.names;
    EXPECT_EQ(a, b);
    EXPECT_EQ(a.size(), 20u);
    EXPECT_FALSE(std::is_sorted(a.begin(), a.end()));
    return a;
  };
  EXPECT_NE(order(1), order(2));
}

// exists on a missing node arms a creation watch that fires kCreated; get_data and
// get_children on a missing node return kNoNode and arm nothing.
TEST(TreeTest, WatchArming) {
  World w(quiet());
  Client& c = w.add_client();
  Client& d = w.add_client();
  zk::Watch ex, gd, gc;
  EXPECT_EQ(await_result(w, c, c.exists("/n", &ex))->error, Error::kNoNode);
  EXPECT_TRUE(ex.armed());
  EXPECT_EQ(await_result(w, c, c.get_data("/n", &gd))->error, Error::kNoNode);
  EXPECT_FALSE(gd.armed());
  EXPECT_EQ(await_result(w, c, c.get_children("/n", &gc))->error, Error::kNoNode);
  EXPECT_FALSE(gc.armed());
  EXPECT_EQ(await_watch(w, c, gd)->error, Error::kNothing);
  ASSERT_TRUE(await_result(w, d, d.create("/n", "", CreateMode::kPersistent))->ok());
  auto ev = await_watch(w, c, ex);
  ASSERT_TRUE(ev && ev->ok());
  EXPECT_EQ(ev->value.type, zk::EventType::kCreated);
  EXPECT_EQ(ev->value.path, "/n");
}

// Data, child and deletion watches fire once with the right event types.
TEST(TreeTest, NodeEvents) {
  World w(quiet());
  Client& c = w.add_client();
  Client& d = w.add_client();
  ASSERT_TRUE(await_result(w, d, d.create("/n", "", CreateMode::kPersistent))->ok());
  zk::Watch data, kids, gone;
  ASSERT_TRUE(await_result(w, c, c.get_data("/n", &data))->ok());
  ASSERT_TRUE(await_result(w, c, c.get_children("/n", &kids))->ok());
  ASSERT_TRUE(await_result(w, d, d.set_data("/n", "v"))->ok());
  EXPECT_EQ(await_watch(w, c, data)->value.type, zk::EventType::kDataChanged);
  ASSERT_TRUE(await_result(w, d, d.create("/n/k", "", CreateMode::kPersistent))->ok());
  EXPECT_EQ(await_watch(w, c, kids)->value.type, zk::EventType::kChildrenChanged);
  ASSERT_TRUE(await_result(w, c, c.exists("/n/k", &gone))->ok());
  ASSERT_TRUE(await_result(w, d, d.remove("/n/k"))->ok());
  EXPECT_EQ(await_watch(w, c, gone)->value.type, zk::EventType::kDeleted);
}

// A client sees the watch event before the reply of a later read that observes the change.
TEST(TreeTest, NotificationBeforeLaterReply) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    World w(quiet(seed));
    Client& c = w.add_client();
    Client& d = w.add_client();
    ASSERT_TRUE(await_result(w, d, d.create("/n", "", CreateMode::kPersistent))->ok());
    zk::Watch watch;
    ASSERT_TRUE(await_result(w, c, c.get_data("/n", &watch))->ok());
    auto set = d.set_data("/n", "new");
    // Read repeatedly until the new value is visible; by then the watch must have fired.
    for (int i = 0; i < 50; ++i) {
      auto r = await_result(w, c, c.get_data("/n"));
      if (r->value.data == "new") break;
    }
    EXPECT_TRUE(watch.fired()) << "seed " << seed;
    (void)await_result(w, d, std::move(set));
  }
}

}  // namespace
}  // namespace lockstep::sim
