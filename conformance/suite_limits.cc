// Conformance: races between sessions on one path, binary data, and the server's packet limit
// (DESIGN §2: a request over jute.maxbuffer drops the connection; replies are not limited).
#include <set>
#include <string>
#include <vector>

#include "conformance/suite.h"
#include "conformance/suite_util.h"

namespace lockstep::conformance {

void link_suite_limits() {}

namespace {

using zk::CreateMode;
using zk::Error;
using zk::Session;
using zk::SessionState;
using zk::Task;

constexpr int kRacers = 5;

Task<void> race_body(std::vector<Session*> racers, std::string root) {
  const std::string lock = child_path(root, "lock");
  std::vector<zk::Future<zk::Result<zk::Created>>> exclusive;
  std::vector<zk::Future<zk::Result<zk::Created>>> queued;
  // Every session sends both requests before any reply is awaited.
  for (Session* s : racers) {
    exclusive.push_back(s->create(lock, "", CreateMode::kEphemeral));
    queued.push_back(s->create(child_path(root, "q-"), "", CreateMode::kEphemeralSequential));
  }
  int winners = 0;
  for (auto& f : exclusive) {
    auto r = co_await std::move(f);
    if (r.ok()) {
      ++winners;
    } else {
      EXPECT_EQ(r.error, Error::kNodeExists);
    }
  }
  EXPECT_EQ(winners, 1) << "exactly one racer creates the ephemeral node";
  std::set<std::string> names;
  for (auto& f : queued) {
    auto r = co_await std::move(f);
    CO_ASSERT_OK(r);
    names.insert(last_component(r.value.path));
  }
  // One counter for the parent: the 1 winning create and the 5 sequential ones take suffixes
  // 0..5; the losers' failed creates take none.
  std::set<std::string> expected;
  for (int i = 0; i <= kRacers; ++i) expected.insert("q-" + zk::format_sequence(zk::Sequence{i}));
  // The winner's plain create took one number in that range; which one depends on the order.
  int missing = 0;
  for (const std::string& e : expected) missing += names.count(e) == 0 ? 1 : 0;
  EXPECT_EQ(names.size(), static_cast<size_t>(kRacers)) << "sequential names are distinct";
  EXPECT_EQ(missing, 1) << "the 5 sequential suffixes and the one winning create fill 0..5";
}

TEST_P(ConformanceTest, RacingCreatesHaveOneWinnerAndDistinctSequences) {
  // Five sessions each send, without awaiting, a create of the same ephemeral node and an
  // ephemeral-sequential create: one create wins (the rest kNodeExists) and the sequential
  // nodes get distinct suffixes, which with the winner's create use exactly 0..5.
  std::vector<Session*> racers;
  for (int i = 0; i < kRacers; ++i) racers.push_back(&open());
  run(*racers[0], race_body(racers, fresh_root()));
}

Task<void> foreign_delete_body(Session* a, Session* b, std::string root) {
  const std::string e = child_path(root, "e");
  CO_ASSERT_OK(co_await a->create(e, "", CreateMode::kEphemeral));
  CO_ASSERT_TRUE(co_await catch_up(b));
  CO_ASSERT_OK(co_await b->remove(e));
  CO_ASSERT_TRUE(co_await catch_up(a));  // b's delete may not have reached a's server yet
  EXPECT_EQ((co_await a->exists(e)).error, Error::kNoNode);
}

TEST_P(ConformanceTest, AnotherSessionMayDeleteAnEphemeralNode) {
  // Without ACLs nothing ties a delete to the owner: b deletes a's ephemeral node.
  Session& a = open();
  Session& b = open();
  run(a, foreign_delete_body(&a, &b, fresh_root()));
}

Task<void> binary_data_body(Session* s, std::string root) {
  const std::string n = child_path(root, "bin");
  std::string data("a\0b\xff", 4);
  data += std::string(4096, '\0');
  auto made = co_await s->create(n, data, CreateMode::kPersistent);
  CO_ASSERT_OK(made);
  EXPECT_EQ(made.value.stat.data_length, static_cast<int32_t>(data.size()));
  auto r = co_await s->get_data(n);
  CO_ASSERT_OK(r);
  EXPECT_EQ(r.value.data, data);
  auto empty = co_await s->set_data(n, "");
  CO_ASSERT_OK(empty);
  EXPECT_EQ(empty.value.data_length, 0);
  r = co_await s->get_data(n);
  CO_ASSERT_OK(r);
  EXPECT_EQ(r.value.data, "");
}

TEST_P(ConformanceTest, DataIsBinarySafe) {
  // Data with NUL and 0xff bytes (4 KB) round-trips exactly; dataLength counts bytes; data can
  // be set back to empty.
  Session& s = open();
  run(s, binary_data_body(&s, fresh_root()));
}

Task<void> near_limit_body(Session* s, std::string root) {
  const std::string n = child_path(root, "near");
  const std::string data(1048000, 'd');  // the whole request frame stays under 1 MiB
  CO_ASSERT_OK(co_await s->create(n, data, CreateMode::kPersistent));
  auto r = co_await s->get_data(n);
  CO_ASSERT_OK(r);
  EXPECT_EQ(r.value.data.size(), data.size());
  EXPECT_EQ(r.value.stat.data_length, static_cast<int32_t>(data.size()));
}

TEST_P(ConformanceTest, ARequestJustUnderThePacketLimitSucceeds) {
  // A create with 1,048,000 bytes of data succeeds and reads back: the limit is on the whole
  // request frame, 0xfffff bytes (see ThePacketLimitCountsTheWholeRequestFrame).
  Session& s = open();
  run(s, near_limit_body(&s, fresh_root()));
}

// The request frame of a create, as the C client encodes it (jute): xid and type (8), the path
// and the data each with a 4-byte length, the ACL vector world:anyone (4 + 4 + 4+5 + 4+6 = 27)
// and the flags (4).
size_t create_frame_bytes(size_t path_bytes, size_t data_bytes) {
  return 8 + 4 + path_bytes + 4 + data_bytes + 27 + 4;
}
// jute.maxbuffer's default, 0xfffff: the largest frame the server reads.
constexpr size_t kMaxFrameBytes = (size_t{1} << 20) - 1;

Task<void> exact_limit_body(Session* s, std::string root) {
  const std::string n = child_path(root, "edge");
  const size_t fits = kMaxFrameBytes - create_frame_bytes(n.size(), 0);
  CO_ASSERT_OK(co_await s->create(n, std::string(fits, 'e'), CreateMode::kPersistent));
  CO_ASSERT_OK(co_await s->remove(n));
  EXPECT_EQ((co_await s->create(n, std::string(fits + 1, 'e'), CreateMode::kPersistent)).error,
            Error::kConnectionLoss)
      << "a request frame of 1 MiB (one byte over 0xfffff) must drop the connection";
}

TEST_P(ConformanceTest, ThePacketLimitCountsTheWholeRequestFrame) {
  // A create whose request frame (headers, path, data, ACL, flags) is 0xfffff bytes succeeds;
  // one more byte of data drops the connection (measured on Debian's 3.8.0 server with the C
  // client: a 9-byte path with 1,048,519 bytes of data passes, 1,048,520 fails).
  Session& s = open();
  run(s, exact_limit_body(&s, fresh_root()));
}

Task<void> big_request_body(Session* s, std::string root) {
  zk::SessionEvents events = s->subscribe();
  const std::string n = child_path(root, "big");
  const std::string big(1100 * 1000, 'x');  // 1.1 MB: over the 1 MiB jute.maxbuffer
  EXPECT_EQ((co_await s->create(n, big, CreateMode::kPersistent)).error, Error::kConnectionLoss);
  // The connection is dropped, not the session: the client reconnects to the same session.
  bool reconnected = false;
  for (int i = 0; i < 8 && !reconnected; ++i) {
    auto ev = co_await events.next(s->context().now() + kEventWait);
    CO_ASSERT_OK(ev);
    EXPECT_NE(ev.value.state, SessionState::kExpired);
    reconnected = ev.value.state == SessionState::kConnected;
  }
  EXPECT_TRUE(reconnected);
  EXPECT_EQ(s->state(), SessionState::kConnected);
  EXPECT_EQ((co_await s->exists(n)).error, Error::kNoNode)
      << "the oversized create was not applied";
  CO_ASSERT_OK(co_await s->create(n, "small", CreateMode::kPersistent));
}

TEST_P(ConformanceTest, ARequestOverThePacketLimitDropsTheConnection) {
  // A 1.1 MB create fails with kConnectionLoss and is not applied; the session reconnects
  // (kConnecting, then kConnected, never kExpired) and works again.
  Session& s = open();
  run(s, big_request_body(&s, fresh_root()));
}

Task<void> big_reply_body(Session* s, std::string root) {
  constexpr int kChildren = 1100;
  const std::string filler(990, 'n');  // ~1 KB names: the reply is over 1 MiB
  std::vector<zk::Future<zk::Result<zk::Created>>> pending;
  for (int i = 0; i < kChildren; ++i) {
    pending.push_back(
        s->create(child_path(root, filler + "-"), "", CreateMode::kPersistentSequential));
  }
  for (auto& f : pending) CO_ASSERT_OK(co_await std::move(f));
  auto kids = co_await s->get_children(root);
  CO_ASSERT_OK(kids);
  EXPECT_EQ(kids.value.names.size(), static_cast<size_t>(kChildren));
  size_t bytes = 0;
  for (const std::string& name : kids.value.names) bytes += name.size();
  EXPECT_GT(bytes, size_t{1} << 20);
}

TEST_P(ConformanceTest, RepliesOverThePacketLimitAreDelivered) {
  // 1,100 children with 1 KB names: the get_children reply (over 1 MiB) reaches the client
  // (the server does not limit replies; only Java clients would reject it).
  Session& s = open();
  run(s, big_reply_body(&s, fresh_root()));
}

}  // namespace
}  // namespace lockstep::conformance
