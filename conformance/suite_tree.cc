// Conformance: the data tree — sequence numbers, child order, the error codes of the tree
// rules, stat fields, zxid order, read-your-writes, sync and path validation (DESIGN §2).
#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "conformance/suite.h"
#include "conformance/suite_util.h"

namespace lockstep::conformance {

void link_suite_tree() {}

namespace {

using zk::CreateMode;
using zk::Error;
using zk::Session;
using zk::Task;

constexpr CreateMode kAllModes[] = {CreateMode::kPersistent, CreateMode::kEphemeral,
                                    CreateMode::kPersistentSequential,
                                    CreateMode::kEphemeralSequential};

// Creates `path` (empty data) in `mode` on `s` and checks that the server named the node
// `expected`. Returns false, after recording the failure, when the create failed: the caller
// ends its body (CO_ASSERT_TRUE).
Task<bool> created_as(Session* s, std::string path, CreateMode mode, std::string expected,
                      std::string why = "") {
  auto r = co_await s->create(path, "", mode);
  if (!r.ok()) {
    ADD_FAILURE() << "create " << path << " failed: " << zk::error_name(r.error);
    co_return false;
  }
  EXPECT_EQ(r.value.path, expected) << why;
  co_return true;
}

// ---- sequence numbers ----

Task<void> suffix_format_body(Session* s, std::string root) {
  const std::string prefix = child_path(root, "s-");
  CO_ASSERT_TRUE(
      co_await created_as(s, prefix, CreateMode::kPersistentSequential, prefix + "0000000000"));
  auto b = co_await s->create(prefix, "", CreateMode::kEphemeralSequential);
  CO_ASSERT_OK(b);
  EXPECT_EQ(b.value.path, prefix + "0000000001");
  // The suffix is appended to whatever the caller asked for, even an empty last component.
  CO_ASSERT_TRUE(
      co_await created_as(s, root + "/", CreateMode::kPersistentSequential, root + "/0000000002"));
  zk::Sequence seq;
  EXPECT_TRUE(zk::parse_sequence_suffix(sequence_suffix(b.value.path, prefix), &seq));
  EXPECT_EQ(seq.value, 1);
}

TEST_P(ConformanceTest, SequentialSuffixIsTenDigitDecimalStartingAtZero) {
  // Three sequential creates under a fresh parent get suffixes 0000000000, 0000000001, ...
  // whatever the mode (persistent or ephemeral) and the requested prefix.
  Session& s = open();
  run(s, suffix_format_body(&s, fresh_root()));
}

Task<void> counter_per_parent_body(Session* s, std::string root) {
  const std::string p1 = child_path(root, "p1");
  const std::string p2 = child_path(root, "p2");
  CO_ASSERT_OK(co_await s->create(p1, "", CreateMode::kPersistent));
  for (int i = 0; i < 3; ++i) {
    CO_ASSERT_OK(co_await s->create(child_path(p1, "x-"), "", CreateMode::kPersistentSequential));
  }
  CO_ASSERT_OK(co_await s->create(p2, "", CreateMode::kPersistent));
  CO_ASSERT_TRUE(co_await created_as(s, child_path(p2, "x-"), CreateMode::kPersistentSequential,
                                     child_path(p2, "x-0000000000")));
  CO_ASSERT_TRUE(co_await created_as(s, child_path(p1, "x-"), CreateMode::kPersistentSequential,
                                     child_path(p1, "x-0000000003")));
}

TEST_P(ConformanceTest, EachParentHasItsOwnCounterAndANewParentStartsAtZero) {
  // Three sequential children under p1, then the first under a new p2 gets 0 and p1 goes on at 3.
  Session& s = open();
  run(s, counter_per_parent_body(&s, fresh_root()));
}

Task<void> counter_counts_all_creates_body(Session* a, Session* b, std::string root) {
  CO_ASSERT_OK(co_await a->create(child_path(root, "plain"), "", CreateMode::kPersistent));
  CO_ASSERT_OK(co_await b->create(child_path(root, "eph"), "", CreateMode::kEphemeral));
  CO_ASSERT_OK(co_await b->create(child_path(root, "q-"), "", CreateMode::kEphemeralSequential));
  CO_ASSERT_TRUE(co_await created_as(a, child_path(root, "s-"), CreateMode::kPersistentSequential,
                                     child_path(root, "s-0000000003")));
}

TEST_P(ConformanceTest, CounterCountsEveryChildCreateOfAnySession) {
  // A persistent and an ephemeral non-sequential create and a sequential one by another session
  // each advance the parent's counter: the next sequential create gets suffix 3.
  Session& a = open();
  Session& b = open();
  run(a, counter_counts_all_creates_body(&a, &b, fresh_root()));
}

Task<void> failed_creates_body(Session* a, Session* b, std::string root) {
  const std::string x = child_path(root, "x");
  CO_ASSERT_OK(co_await a->create(x, "", CreateMode::kPersistent));
  EXPECT_EQ((co_await a->create(x, "", CreateMode::kPersistent)).error, Error::kNodeExists);
  EXPECT_EQ((co_await b->create(x, "", CreateMode::kEphemeral)).error, Error::kNodeExists);
  EXPECT_EQ((co_await a->create(x, "", CreateMode::kPersistent)).error, Error::kNodeExists);
  auto st = co_await a->exists(root);
  CO_ASSERT_OK(st);
  EXPECT_EQ(st.value.cversion, 1) << "failed creates must not count in cversion";
  CO_ASSERT_TRUE(co_await created_as(a, child_path(root, "s-"), CreateMode::kPersistentSequential,
                                     child_path(root, "s-0000000001")));
}

TEST_P(ConformanceTest, FailedCreatesDoNotAdvanceTheCounter) {
  // One successful create then three kNodeExists failures: the next sequential suffix is 1.
  Session& a = open();
  Session& b = open();
  run(a, failed_creates_body(&a, &b, fresh_root()));
}

Task<void> deletes_body(Session* s, std::string root) {
  const std::vector<std::string> names = {"a", "b"};
  for (const std::string& name : names) {
    CO_ASSERT_OK(co_await s->create(child_path(root, name), "", CreateMode::kPersistent));
  }
  for (const std::string& name : names) CO_ASSERT_OK(co_await s->remove(child_path(root, name)));
  auto st = co_await s->exists(root);
  CO_ASSERT_OK(st);
  EXPECT_EQ(st.value.cversion, 4) << "cversion counts 2 creates and 2 deletes";
  EXPECT_EQ(st.value.num_children, 0);
  CO_ASSERT_TRUE(co_await created_as(s, child_path(root, "s-"), CreateMode::kPersistentSequential,
                                     child_path(root, "s-0000000002"),
                                     "deletes must not advance it"));
  st = co_await s->exists(root);
  CO_ASSERT_OK(st);
  EXPECT_EQ(st.value.cversion, 5);
}

TEST_P(ConformanceTest, DeletesCountInCversionButNotInTheSequenceCounter) {
  // Two creates and two deletes: the parent's cversion is 4, the next sequential suffix is 2
  // (measured on Debian's 3.8.0 server: the two counters differ once children are deleted).
  Session& s = open();
  run(s, deletes_body(&s, fresh_root()));
}

Task<void> wrap_body(Session* s, std::string parent) {
  const std::string prefix = child_path(parent, "w-");
  CO_ASSERT_TRUE(
      co_await created_as(s, prefix, CreateMode::kPersistentSequential, prefix + "2147483647"));
  auto b = co_await s->create(prefix, "", CreateMode::kEphemeralSequential);
  CO_ASSERT_OK(b);
  EXPECT_EQ(b.value.path, prefix + "-2147483648");
  CO_ASSERT_TRUE(
      co_await created_as(s, prefix, CreateMode::kPersistentSequential, prefix + "-2147483647"));
  zk::Sequence seq;
  EXPECT_TRUE(zk::parse_sequence_suffix(sequence_suffix(b.value.path, prefix), &seq));
  EXPECT_EQ(seq.value, INT32_MIN);
}

TEST_P(ConformanceTest, SequenceCounterWrapsToNegativePastInt32Max) {
  // With the parent's counter set to 2147483647, the next suffixes are 2147483647,
  // -2147483648, -2147483647 (%010d of a signed 32-bit int).
  if (!backend().supports(Feature::kSetSequenceCounter)) {
    GTEST_SKIP() << "backend " << backend().name() << " lacks feature "
                 << to_string(Feature::kSetSequenceCounter)
                 << " (2^31 creates on a real server are out of reach)";
  }
  Session& s = open();
  const std::string root = fresh_root();
  backend().set_sequence_counter(root, INT32_MAX);
  run(s, wrap_body(&s, root));
}

Task<void> colliding_sequence_body(Session* s, std::string root) {
  // A plain create whose name looks like the next sequential one: it takes counter value 0,
  // so the counter is 1 and the next "x-" create wants "x-0000000001", which exists.
  CO_ASSERT_OK(co_await s->create(child_path(root, "x-0000000001"), "", CreateMode::kPersistent));
  const std::string x = child_path(root, "x-");
  EXPECT_EQ((co_await s->create(x, "", CreateMode::kPersistentSequential)).error,
            Error::kNodeExists);
  EXPECT_EQ((co_await s->create(x, "", CreateMode::kEphemeralSequential)).error, Error::kNodeExists)
      << "the failed sequential create did not advance the counter, so it collides again";
  CO_ASSERT_TRUE(co_await created_as(s, child_path(root, "y-"), CreateMode::kPersistentSequential,
                                     child_path(root, "y-0000000001")));
  CO_ASSERT_TRUE(co_await created_as(s, x, CreateMode::kPersistentSequential,
                                     child_path(root, "x-0000000002")));
}

TEST_P(ConformanceTest, ASequentialNameThatExistsFailsWithNodeExistsAndIsNotSkipped) {
  // A foreign child named like the next sequential node makes sequential creates with that
  // prefix fail with kNodeExists (the counter stays put) until another create moves it on.
  Session& s = open();
  run(s, colliding_sequence_body(&s, fresh_root()));
}

Task<void> server_root_body(Session* s) {
  // Each rule is checked on its own (EXPECT, not CO_ASSERT) so that every divergence shows.
  EXPECT_EQ((co_await s->exists("/")).error, Error::kOk);
  EXPECT_EQ((co_await s->create("/", "", CreateMode::kPersistent)).error, Error::kNodeExists);
  EXPECT_EQ((co_await s->exists("/zookeeper")).error, Error::kOk);
  auto kids = co_await s->get_children("/");
  CO_ASSERT_OK(kids);
  EXPECT_EQ(std::count(kids.value.names.begin(), kids.value.names.end(), "zookeeper"), 1)
      << "the server's own /zookeeper node is a child of /";
  EXPECT_EQ(kids.value.stat.num_children, static_cast<int32_t>(kids.value.names.size()));
  auto system = co_await s->get_children("/zookeeper");
  EXPECT_EQ(system.error, Error::kOk);
  if (system.ok()) {
    EXPECT_EQ(sorted(system.value.names), (std::vector<std::string>{"config", "quota"}));
  }
  EXPECT_EQ((co_await s->remove("/")).error, Error::kBadArguments);
  EXPECT_EQ((co_await s->remove("/zookeeper")).error, Error::kBadArguments);
}

TEST_P(ConformanceTest, TheRootAndTheServersZookeeperNodeExist) {
  // "/" exists (creating it fails with kNodeExists) and lists the server's own "zookeeper"
  // child (holding "config" and "quota"), which recipes listing "/" must tolerate; deleting
  // "/" or "/zookeeper" fails with kBadArguments (measured on Debian's 3.8.0 server).
  Session& s = open();
  run(s, server_root_body(&s));
}

// ---- children ----

Task<void> children_order_body(Session* s, std::string root) {
  constexpr int kChildren = 200;
  std::vector<zk::Future<zk::Result<zk::Created>>> pending;
  for (int i = 0; i < kChildren; ++i) {
    pending.push_back(s->create(child_path(root, "n-"), "", CreateMode::kPersistentSequential));
  }
  std::vector<std::string> expected;
  for (auto& f : pending) {
    auto r = co_await std::move(f);
    CO_ASSERT_OK(r);
    expected.push_back(last_component(r.value.path));
  }
  auto first = co_await s->get_children(root);
  CO_ASSERT_OK(first);
  auto second = co_await s->get_children(root);
  CO_ASSERT_OK(second);
  EXPECT_EQ(sorted(first.value.names), sorted(expected));
  EXPECT_FALSE(is_sorted_by_name(first.value.names))
      << "200 children came back sorted: the server's order is a hash-set order";
  EXPECT_EQ(first.value.names, second.value.names) << "the order must be stable between calls";
  EXPECT_EQ(first.value.stat.num_children, kChildren);
}

TEST_P(ConformanceTest, GetChildrenIsUnsortedButStable) {
  // 200 sequential children: get_children returns exactly them, not sorted by name (a sorted
  // order by chance has probability 1/200!), and the same order twice in a row.
  Session& s = open();
  run(s, children_order_body(&s, fresh_root()));
}

// ---- tree rules and their error codes ----

Task<void> parent_must_exist_body(Session* s, std::string root) {
  const std::string orphan = child_path(child_path(root, "missing"), "x");
  for (CreateMode mode : kAllModes) {
    EXPECT_EQ((co_await s->create(orphan, "", mode)).error, Error::kNoNode) << to_string(mode);
  }
  EXPECT_EQ(co_await barrier(s, child_path(root, "missing")), Error::kNoNode);
}

TEST_P(ConformanceTest, CreateRequiresTheParentToExist) {
  // Creating root/missing/x in every mode fails with kNoNode and creates nothing.
  Session& s = open();
  run(s, parent_must_exist_body(&s, fresh_root()));
}

Task<void> ephemeral_children_body(Session* s, std::string root) {
  const std::string e = child_path(root, "e");
  CO_ASSERT_OK(co_await s->create(e, "", CreateMode::kEphemeral));
  for (CreateMode mode : kAllModes) {
    EXPECT_EQ((co_await s->create(child_path(e, "c"), "", mode)).error,
              Error::kNoChildrenForEphemerals)
        << to_string(mode);
  }
  auto st = co_await s->exists(e);
  CO_ASSERT_OK(st);
  EXPECT_EQ(st.value.num_children, 0);
  EXPECT_EQ(st.value.cversion, 0);
}

TEST_P(ConformanceTest, EphemeralNodesCannotHaveChildren) {
  // Creating a child of an ephemeral node fails with kNoChildrenForEphemerals in every mode.
  Session& s = open();
  run(s, ephemeral_children_body(&s, fresh_root()));
}

Task<void> not_empty_body(Session* s, std::string root) {
  const std::string p = child_path(root, "p");
  CO_ASSERT_OK(co_await s->create(p, "", CreateMode::kPersistent));
  CO_ASSERT_OK(co_await s->create(child_path(p, "c"), "", CreateMode::kEphemeral));
  EXPECT_EQ((co_await s->remove(p)).error, Error::kNotEmpty);
  EXPECT_EQ((co_await s->remove(p, 0)).error, Error::kNotEmpty);
  EXPECT_EQ((co_await s->remove(p, 7)).error, Error::kBadVersion) << "the version is checked first";
  CO_ASSERT_OK(co_await s->exists(p));
  CO_ASSERT_OK(co_await s->remove(child_path(p, "c")));
  CO_ASSERT_OK(co_await s->remove(p));
  EXPECT_EQ((co_await s->exists(p)).error, Error::kNoNode);
}

TEST_P(ConformanceTest, DeleteOfANodeWithChildrenFailsWithNotEmpty) {
  // Deleting a parent that has a child fails with kNotEmpty (also with the right version;
  // with a wrong version kBadVersion wins); once the child is gone the delete succeeds.
  Session& s = open();
  run(s, not_empty_body(&s, fresh_root()));
}

Task<void> versions_body(Session* s, std::string root) {
  const std::string n = child_path(root, "n");
  CO_ASSERT_OK(co_await s->create(n, "v0", CreateMode::kPersistent));
  EXPECT_EQ((co_await s->set_data(n, "bad", 1)).error, Error::kBadVersion);
  auto set1 = co_await s->set_data(n, "v1", 0);
  CO_ASSERT_OK(set1);
  EXPECT_EQ(set1.value.version, 1);
  EXPECT_EQ((co_await s->set_data(n, "bad", 0)).error, Error::kBadVersion);
  auto set2 = co_await s->set_data(n, "v2", zk::kAnyVersion);
  CO_ASSERT_OK(set2);
  EXPECT_EQ(set2.value.version, 2);
  auto data = co_await s->get_data(n);
  CO_ASSERT_OK(data);
  EXPECT_EQ(data.value.data, "v2") << "a failed versioned set must not change the data";
  EXPECT_EQ((co_await s->remove(n, 1)).error, Error::kBadVersion);
  CO_ASSERT_OK(co_await s->exists(n));
  CO_ASSERT_OK(co_await s->remove(n, 2));
  EXPECT_EQ((co_await s->remove(n, 2)).error, Error::kNoNode);
  EXPECT_EQ((co_await s->set_data(n, "x")).error, Error::kNoNode);
}

TEST_P(ConformanceTest, VersionedSetAndDeleteFailWithBadVersion) {
  // set_data and remove with a stale version fail with kBadVersion and change nothing; with the
  // current version (or -1) they succeed; on a missing node they fail with kNoNode.
  Session& s = open();
  run(s, versions_body(&s, fresh_root()));
}

Task<void> node_exists_body(Session* a, Session* b, std::string root) {
  const std::string e = child_path(root, "e");
  auto made = co_await a->create(e, "mine", CreateMode::kEphemeral);
  CO_ASSERT_OK(made);
  const CreateMode plain_modes[] = {CreateMode::kPersistent, CreateMode::kEphemeral};
  for (CreateMode mode : plain_modes) {
    EXPECT_EQ((co_await a->create(e, "again", mode)).error, Error::kNodeExists);
    EXPECT_EQ((co_await b->create(e, "theirs", mode)).error, Error::kNodeExists);
  }
  CO_ASSERT_TRUE(co_await catch_up(b));
  auto data = co_await b->get_data(e);
  CO_ASSERT_OK(data);
  EXPECT_EQ(data.value.data, "mine");
  EXPECT_EQ(data.value.stat.ephemeral_owner, a->id());
}

TEST_P(ConformanceTest, CreatingAnExistingNodeFailsWithNodeExists) {
  // Re-creating an existing ephemeral node, by its owner or by another session, persistent or
  // ephemeral, fails with kNodeExists and leaves the original untouched.
  Session& a = open();
  Session& b = open();
  run(a, node_exists_body(&a, &b, fresh_root()));
}

Task<void> no_node_body(Session* s, std::string root) {
  const std::string m = child_path(root, "missing");
  EXPECT_EQ((co_await s->exists(m)).error, Error::kNoNode);
  EXPECT_EQ((co_await s->get_data(m)).error, Error::kNoNode);
  EXPECT_EQ((co_await s->get_children(m)).error, Error::kNoNode);
  EXPECT_EQ((co_await s->set_data(m, "x")).error, Error::kNoNode);
  EXPECT_EQ((co_await s->remove(m)).error, Error::kNoNode);
  EXPECT_EQ((co_await s->remove(m, 0)).error, Error::kNoNode);
}

TEST_P(ConformanceTest, OperationsOnAMissingNodeFailWithNoNode) {
  // exists, get_data, get_children, set_data and remove of a missing node return kNoNode.
  Session& s = open();
  run(s, no_node_body(&s, fresh_root()));
}

Task<void> bad_paths_body(Session* s, std::string root) {
  // Measured with the C client against Debian's 3.8.0 server: each of these is ZBADARGUMENTS.
  const std::vector<std::string> bad = {
      "",
      "relative",
      root + "/",
      root + "//x",
      "//x",
      root + "/./x",
      root + "/../x",
      root + "/.",
      root + "/..",
      std::string("/a\x01", 3),
  };
  for (const std::string& p : bad) {
    EXPECT_EQ((co_await s->create(p, "", CreateMode::kPersistent)).error, Error::kBadArguments)
        << "create '" << p << "'";
    EXPECT_EQ((co_await s->exists(p)).error, Error::kBadArguments) << "exists '" << p << "'";
    EXPECT_EQ((co_await s->get_data(p)).error, Error::kBadArguments) << "get_data '" << p << "'";
    EXPECT_EQ((co_await s->get_children(p)).error, Error::kBadArguments)
        << "get_children '" << p << "'";
    EXPECT_EQ((co_await s->remove(p)).error, Error::kBadArguments) << "remove '" << p << "'";
    EXPECT_EQ((co_await s->set_data(p, "")).error, Error::kBadArguments)
        << "set_data '" << p << "'";
  }
  auto kids = co_await s->get_children(root);
  CO_ASSERT_OK(kids);
  EXPECT_TRUE(kids.value.names.empty()) << "a rejected path must create nothing";
}

TEST_P(ConformanceTest, MalformedPathsFailWithBadArguments) {
  // Empty, relative, trailing-slash, empty-component, '.'/'..' and control-character paths are
  // rejected with kBadArguments by every operation.
  Session& s = open();
  run(s, bad_paths_body(&s, fresh_root()));
}

Task<void> unicode_body(Session* s, std::string root) {
  // Measured with the C client against Debian's 3.8.0 server. The server checks the name as a
  // Java string: C1 controls (U+0080..U+009F), U+D800..U+F8FF (surrogates and private use; an
  // emoji is a surrogate pair in Java), U+FFF0..U+FFFF and bytes that are not UTF-8 (decoded
  // as U+FFFD) are refused; other UTF-8 and dots inside a name are fine.
  const std::vector<std::string> accepted = {"\xc5\x82", "\xc3\xa9", "\xe4\xb8\xad", "\xc2\xa0",
                                             "...",      ".a",       "a b"};
  const std::vector<std::string> refused = {"\xc2\x80",         "\xc2\x9f",     "\xef\xbf\xb0",
                                            "\xef\xbf\xbf",     "\xee\x80\x80", "\xed\xa0\x80",
                                            "\xf0\x9f\x98\x80", "\x80",         "\xff"};
  for (const std::string& name : refused) {
    EXPECT_EQ((co_await s->create(child_path(root, name), "", CreateMode::kPersistent)).error,
              Error::kBadArguments)
        << "name bytes " << ::testing::PrintToString(name);
  }
  for (const std::string& name : accepted) {
    EXPECT_EQ((co_await s->create(child_path(root, name), "", CreateMode::kPersistent)).error,
              Error::kOk)
        << "name bytes " << ::testing::PrintToString(name);
  }
  auto kids = co_await s->get_children(root);
  CO_ASSERT_OK(kids);
  EXPECT_EQ(sorted(kids.value.names), sorted(accepted)) << "names come back byte for byte";
}

TEST_P(ConformanceTest, NonAsciiNamesFollowTheServersCharacterRules) {
  // UTF-8 names such as "ł", "é", "中" and names with dots are created and listed byte for
  // byte; C1 controls, private-use and surrogate code points, U+FFF0..U+FFFF, emoji and
  // non-UTF-8 bytes are refused with kBadArguments.
  Session& s = open();
  run(s, unicode_body(&s, fresh_root()));
}

// ---- stat ----

Task<void> new_node_stat_body(Session* s, std::string root) {
  const std::string n = child_path(root, "n");
  auto made = co_await s->create(n, "hello", CreateMode::kPersistent);
  CO_ASSERT_OK(made);
  EXPECT_EQ(made.value.path, n) << "a non-sequential create returns the requested path";
  const zk::Stat& st = made.value.stat;
  EXPECT_GT(st.czxid.value, 0);
  EXPECT_EQ(st.mzxid, st.czxid);
  EXPECT_EQ(st.pzxid, st.czxid);
  EXPECT_EQ(st.version, 0);
  EXPECT_EQ(st.cversion, 0);
  EXPECT_EQ(st.num_children, 0);
  EXPECT_EQ(st.data_length, 5);
  EXPECT_EQ(st.ephemeral_owner.value, 0u);
  EXPECT_EQ(st.mtime_ms, st.ctime_ms);
  auto ex = co_await s->exists(n);
  CO_ASSERT_OK(ex);
  EXPECT_EQ(ex.value, st) << "create's stat and exists' stat describe the same node";
  auto data = co_await s->get_data(n);
  CO_ASSERT_OK(data);
  EXPECT_EQ(data.value.data, "hello");
  EXPECT_EQ(data.value.stat, st);
  auto e = co_await s->create(child_path(root, "e"), "", CreateMode::kEphemeralSequential);
  CO_ASSERT_OK(e);
  EXPECT_EQ(e.value.stat.ephemeral_owner, s->id());
  EXPECT_EQ(e.value.stat.data_length, 0);
  EXPECT_GT(e.value.stat.czxid, st.czxid);
}

TEST_P(ConformanceTest, ANewNodesStatHasCreationValues) {
  // A fresh node: czxid = mzxid = pzxid > 0, versions 0, no children, dataLength = data size,
  // ephemeralOwner 0 (persistent) or the creator's id; create, exists and get_data agree.
  Session& s = open();
  run(s, new_node_stat_body(&s, fresh_root()));
}

Task<void> stat_tracking_body(Session* s, std::string root) {
  const std::string p = child_path(root, "p");
  auto made = co_await s->create(p, "", CreateMode::kPersistent);
  CO_ASSERT_OK(made);
  const zk::Stat before = made.value.stat;
  auto c = co_await s->create(child_path(p, "c"), "", CreateMode::kPersistent);
  CO_ASSERT_OK(c);
  auto after_create = co_await s->exists(p);
  CO_ASSERT_OK(after_create);
  EXPECT_EQ(after_create.value.pzxid, c.value.stat.czxid) << "pzxid = last child change";
  EXPECT_EQ(after_create.value.cversion, 1);
  EXPECT_EQ(after_create.value.num_children, 1);
  EXPECT_EQ(after_create.value.mzxid, before.mzxid) << "a child create is not a data change";
  EXPECT_EQ(after_create.value.version, 0);

  auto set = co_await s->set_data(p, "four", 0);
  CO_ASSERT_OK(set);
  EXPECT_EQ(set.value.version, 1);
  EXPECT_GT(set.value.mzxid, c.value.stat.czxid);
  EXPECT_EQ(set.value.czxid, before.czxid);
  EXPECT_EQ(set.value.pzxid, after_create.value.pzxid) << "a data change is not a child change";
  EXPECT_EQ(set.value.cversion, 1);
  EXPECT_EQ(set.value.data_length, 4);
  EXPECT_GE(set.value.mtime_ms, set.value.ctime_ms);

  CO_ASSERT_OK(co_await s->remove(child_path(p, "c")));
  auto after_delete = co_await s->exists(p);
  CO_ASSERT_OK(after_delete);
  EXPECT_GT(after_delete.value.pzxid, set.value.mzxid) << "the delete is the latest child change";
  EXPECT_EQ(after_delete.value.cversion, 2);
  EXPECT_EQ(after_delete.value.num_children, 0);
  EXPECT_EQ(after_delete.value.mzxid, set.value.mzxid);
  EXPECT_EQ(after_delete.value.version, 1);

  auto kids = co_await s->get_children(p);
  CO_ASSERT_OK(kids);
  EXPECT_EQ(kids.value.stat, after_delete.value) << "get_children returns the parent's stat";
}

TEST_P(ConformanceTest, StatFieldsTrackDataAndChildChanges) {
  // Create a child, set the parent's data, delete the child: pzxid/cversion/numChildren follow
  // the child changes, mzxid/version/dataLength follow the data change, czxid never moves.
  Session& s = open();
  run(s, stat_tracking_body(&s, fresh_root()));
}

Task<void> zxid_order_body(Session* a, Session* b, std::string root) {
  zk::Zxid last;
  for (int i = 0; i < 6; ++i) {
    Session* s = (i % 2 == 0) ? a : b;
    auto r = co_await s->create(child_path(root, "z-"), "", CreateMode::kPersistentSequential);
    CO_ASSERT_OK(r);
    EXPECT_GT(r.value.stat.czxid, last) << "write " << i;
    last = r.value.stat.czxid;
    auto set = co_await s->set_data(r.value.path, "x");
    CO_ASSERT_OK(set);
    EXPECT_GT(set.value.mzxid, last) << "set " << i;
    last = set.value.mzxid;
  }
}

TEST_P(ConformanceTest, WritesOfAllSessionsShareOneZxidOrder) {
  // Alternating writes of two sessions, each awaited before the next, get strictly
  // increasing zxids.
  Session& a = open();
  Session& b = open();
  run(a, zxid_order_body(&a, &b, fresh_root()));
}

Task<void> failed_writes_zxid_body(Session* s, std::string root) {
  const std::string a = child_path(root, "a");
  auto first = co_await s->create(a, "", CreateMode::kPersistent);
  CO_ASSERT_OK(first);
  EXPECT_EQ((co_await s->create(a, "", CreateMode::kPersistent)).error, Error::kNodeExists);
  EXPECT_EQ((co_await s->set_data(a, "x", 7)).error, Error::kBadVersion);
  EXPECT_EQ((co_await s->remove(child_path(root, "missing"))).error, Error::kNoNode);
  // A create under a missing parent (the suite's catch_up barrier).
  EXPECT_EQ((co_await s->create(child_path(child_path(root, "missing"), "c"), "",
                                CreateMode::kPersistent))
                .error,
            Error::kNoNode);
  auto second = co_await s->create(child_path(root, "b"), "", CreateMode::kPersistent);
  CO_ASSERT_OK(second);
  // At least: a session another test of this process left behind may expire meanwhile, and
  // its end is a transaction too.
  EXPECT_GE(second.value.stat.czxid.value - first.value.stat.czxid.value, 5)
      << "each failed write takes a zxid";
}

TEST_P(ConformanceTest, EveryFailedWriteTakesAZxid) {
  // ZooKeeper commits a write that fails at the leader as an error transaction, in order, with
  // a zxid of its own: four failed writes between two creates (a create of an existing node, a
  // set with a wrong version, a delete of a missing node, a create under a missing parent) put
  // the second create's czxid 5 or more past the first's (real/FINDINGS.md item 11; a write's
  // reply, failed or not, comes once its server has applied it, which makes it a read barrier
  // where a sync is not: the suite's catch_up is the last kind).
  Session& s = open();
  run(s, failed_writes_zxid_body(&s, fresh_root()));
}

// ---- read-your-writes and sync ----

Task<void> own_writes_body(Session* s, std::string root) {
  zk::SessionEvents events = s->subscribe();
  const std::string n = child_path(root, "n");
  // Pipelined: each read is sent before the write's reply arrived.
  auto create = s->create(n, "one", CreateMode::kPersistent);
  auto read1 = s->get_data(n);
  auto set = s->set_data(n, "two");
  auto read2 = s->get_data(n);
  auto kids = s->get_children(root);
  auto del = s->remove(n);
  auto read3 = s->exists(n);
  CO_ASSERT_OK(co_await std::move(create));
  auto r1 = co_await std::move(read1);
  CO_ASSERT_OK(r1);
  EXPECT_EQ(r1.value.data, "one");
  CO_ASSERT_OK(co_await std::move(set));
  auto r2 = co_await std::move(read2);
  CO_ASSERT_OK(r2);
  EXPECT_EQ(r2.value.data, "two");
  EXPECT_EQ(r2.value.stat.version, 1);
  auto k = co_await std::move(kids);
  CO_ASSERT_OK(k);
  EXPECT_EQ(k.value.names, std::vector<std::string>{"n"});
  CO_ASSERT_OK(co_await std::move(del));
  EXPECT_EQ((co_await std::move(read3)).error, Error::kNoNode);
  EXPECT_TRUE(events.empty()) << "no session event while the connection is healthy";
}

TEST_P(ConformanceTest, OwnWritesAreVisibleToOwnLaterReads) {
  // Writes and reads pipelined on one session without awaiting in between: every read sees
  // every write sent before it (requests of one session are FIFO).
  Session& s = open();
  run(s, own_writes_body(&s, fresh_root()));
}

Task<void> sync_body(Session* a, Session* b, std::string root) {
  const std::string n = child_path(root, "n");
  CO_ASSERT_OK(co_await b->create(n, "fresh", CreateMode::kPersistent));
  CO_ASSERT_OK(co_await a->sync(n));
  CO_ASSERT_OK(co_await a->sync(root));
  CO_ASSERT_OK(co_await a->sync(child_path(root, "missing")));  // sync does not need the node
  // The barrier: a failed create (a sync is none on the leader, real/FINDINGS.md item 11).
  EXPECT_EQ((co_await a->create(root, "", CreateMode::kPersistent)).error, Error::kNodeExists);
  auto r = co_await a->get_data(n);
  CO_ASSERT_OK(r);
  EXPECT_EQ(r.value.data, "fresh");
}

TEST_P(ConformanceTest, SyncSucceedsAndAFailedWriteMakesEarlierWritesVisible) {
  // Session b writes; session a syncs (kOk, also on a missing path), then sends a create that
  // fails, and reads b's write. On a follower the sync alone would do; on the leader only the
  // failed write does: its reply comes once the leader has applied everything before it.
  Session& a = open();
  Session& b = open();
  run(a, sync_body(&a, &b, fresh_root()));
}

}  // namespace
}  // namespace lockstep::conformance
