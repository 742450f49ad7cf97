// Tests of the timeline's lock directory (traces/directory.h) and of its lanes' depth: nodes with
// their sequence, owner and zxid, watches, deletes by their cause, and re-entrant holders drawn
// as the checkers count them.
#include "traces/timeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

#include "traces/directory.h"
#include "traces/test_util.h"
#include "traces/trace.h"

namespace lockstep::traces {
namespace {

using properties::Event;
using properties::Op;
using properties::Type;
using testing::first_trace;

// The ordering bug: broken/sort-by-name sorts the children by name, and names start with the
// client's id, so a later node can sort first.
const Trace& ordering_trace() {
  static const Trace t = first_trace("broken/sort-by-name");
  return t;
}

bool holds(LaneState s) { return s == LaneState::kHolding || s == LaneState::kExpiredBelief; }

const TimelineRow& row_of_history(const Timeline& tl, uint64_t index) {
  const std::string id = "h" + std::to_string(index);
  for (const TimelineRow& r : tl.rows) {
    if (r.id == id) return r;
  }
  ADD_FAILURE() << "no row " << id;
  return tl.rows.front();
}

// The short names sort-by-name's sequential nodes get: their sequence, two digits at least.
TEST(Directory, ShortNodeNames) {
  const std::string dir = "/lockstep/lock";
  EXPECT_EQ(short_node_name(dir + "/_c_c1-1x962cb889-lock-0000000003", dir), "03");
  EXPECT_EQ(short_node_name(dir + "/_c_c1-1x962cb889-lock-0000000123", dir), "123");
  EXPECT_EQ(short_node_name(dir + "/_c_c2-2x0480c63d-lock--2147483648", dir), "-2147483648");
  EXPECT_EQ(short_node_name(dir + "/leases/_c_c4-1x4f4b62b3-lease-0000000010", dir), "leases/10");
  EXPECT_EQ(short_node_name(dir + "/lock", dir), "lock");
  EXPECT_EQ(short_node_name(dir, dir), "dir");
  EXPECT_EQ(short_node_name("/lockstep/lock-capacity", dir), "/lockstep/lock-capacity");
}

// Every node the leader created under the lock appears once, with the zxid of its first `apply`
// line, the client whose reply named it as its owner, a row that says "creates NN (zxid Z)" on
// that client's lane, and a delete row naming the delete's zxid.
TEST(Directory, CreatesAndDeletesAppearWithTheirZxid) {
  const Trace& t = ordering_trace();
  const Timeline tl = build_timeline(t);
  std::map<std::string, int64_t> committed;  // path -> zxid of the leader's create
  std::map<std::string, uint32_t> replied;   // path -> the client told ZOK
  int64_t last = 0;
  for (const sim::LoggedEvent& e : t.events) {
    char op[32];
    char path[512];
    long long zxid = 0;
    if (e.kind == "apply" &&
        std::sscanf(e.text.c_str(), "s%*u zxid=%lld %31s %511s", &zxid, op, path) == 3 &&
        zxid > last) {
      last = zxid;
      if (std::string(op) == "create" && std::string(path).rfind(tl.lock_dir + "/", 0) == 0) {
        committed[path] = zxid;
      }
    }
    if (e.kind == "reply" && std::sscanf(e.text.c_str(), "create ZOK %511s", path) == 1) {
      replied[path] = e.client;
    }
  }
  ASSERT_GE(committed.size(), 4u);
  size_t found = 0;
  for (size_t i = 0; i < tl.nodes.size(); ++i) {
    const DirNode& n = tl.nodes[i];
    if (committed.count(n.path) == 0) continue;
    ++found;
    EXPECT_EQ(n.created_zxid, committed[n.path]) << n.path;
    if (replied.count(n.path) != 0) {
      EXPECT_EQ(n.client, replied[n.path]) << n.path;
    }
    ASSERT_GE(n.created_row, 0) << n.path;
    const TimelineRow& created = tl.rows[static_cast<size_t>(n.created_row)];
    EXPECT_EQ(created.node, static_cast<int64_t>(i));
    EXPECT_EQ(created.client, n.client);
    EXPECT_EQ(created.label,
              "creates " + n.name + " (zxid " + std::to_string(n.created_zxid) + ")");
    if (n.deleted_row < 0) continue;
    EXPECT_GT(n.deleted_zxid, n.created_zxid) << n.path;
    const TimelineRow& deleted = tl.rows[static_cast<size_t>(n.deleted_row)];
    EXPECT_NE(deleted.label.find(n.name + " (zxid " + std::to_string(n.deleted_zxid) + ")"),
              std::string::npos)
        << deleted.label;
  }
  EXPECT_EQ(found, committed.size());
}

// Reading the ordering bug without its verdict: at the second of the two overlapping grants both
// clients hold, each lane names the node of its own grant, and the directory shows a live node
// created before both whose owner is still waiting — the node order is not the grant order.
// Every waiter's lane names the node it watches once the watch is armed.
TEST(Directory, OrderingBugShowsNodesWatchesAndTheNodeAhead) {
  const Trace& t = ordering_trace();
  const properties::Verdict* v = t.violation();
  ASSERT_NE(v, nullptr);
  ASSERT_EQ(v->property, properties::Property::kMutualExclusion);
  const Timeline tl = build_timeline(t);
  for (uint64_t i : v->history_indexes) {
    const Event& e = t.history[i];
    ASSERT_EQ(e.op, Op::kAcquire);
    const TimelineRow& r = row_of_history(tl, i);
    const std::string node = short_node_name(e.text, tl.lock_dir);
    EXPECT_EQ(r.details[e.client - 1].node, node) << r.id;
    EXPECT_NE(r.label.find("HOLDS " + node), std::string::npos) << r.label;
  }
  const TimelineRow& both = row_of_history(tl, v->history_indexes.back());
  size_t holders = 0;
  for (LaneState s : both.lanes) holders += holds(s) ? 1 : 0;
  EXPECT_EQ(holders, 2u) << both.directory;
  // The first node of the directory (creation order) is a waiter's.
  ASSERT_EQ(both.directory.front(), '[') << both.directory;
  const std::string first = both.directory.substr(0, both.directory.find(']') + 1);
  EXPECT_NE(first.find(" : "), std::string::npos) << both.directory;
  EXPECT_EQ(std::count(both.directory.begin(), both.directory.end(), '#'), 2) << both.directory;

  size_t watches = 0;
  for (const TimelineRow& r : tl.rows) {
    if (r.label.rfind("watches ", 0) != 0) continue;
    ++watches;
    const LaneDetail& d = r.details[r.client - 1];
    ASSERT_FALSE(d.watch.empty()) << r.id;
    const std::string newest = d.watch.substr(0, d.watch.find(','));
    EXPECT_EQ(r.label.substr(8, newest.size()), newest) << r.id << " " << r.label;
    EXPECT_NE(r.directory.find("w" + d.watch), std::string::npos) << r.id << " " << r.directory;
  }
  EXPECT_GE(watches, 2u);
  const std::string text = render_text(tl);
  EXPECT_NE(text.find("dir: " + both.directory), std::string::npos);
}

// A client's delete says what the client was doing ("releases 02 (zxid 8)"); the nodes a
// session's end deletes are deleted by "session expired" in one row on their owner's lane; an
// operator's delete (a delete-node fault) says so in the world's column.
TEST(Directory, DeletesSayWhoDeleted) {
  const Timeline ordering = build_timeline(ordering_trace());
  size_t released = 0;
  for (const DirNode& n : ordering.nodes) {
    if (n.deleted_row < 0 || n.deleted_by != "c" + std::to_string(n.client)) continue;
    const TimelineRow& r = ordering.rows[static_cast<size_t>(n.deleted_row)];
    EXPECT_EQ(r.client, n.client);
    released += r.label.rfind("releases " + n.name + " (zxid ", 0) == 0 ? 1 : 0;
  }
  EXPECT_GE(released, 3u);

  const Timeline expiry = build_timeline(first_trace("broken/ignores-expiry"));
  bool expired = false;
  for (const DirNode& n : expiry.nodes) {
    if (n.deleted_by != "session expired") continue;
    expired = true;
    const TimelineRow& r = expiry.rows[static_cast<size_t>(n.deleted_row)];
    EXPECT_EQ(r.client, n.client);
    EXPECT_EQ(r.label.rfind("expiry deletes ", 0), 0u) << r.label;
  }
  EXPECT_TRUE(expired);

  LoadError error;
  const std::optional<Trace> op = load_trace(
      std::string(LOCKSTEP_SOURCE_DIR) + "/traces/corpus/broken_no-dir-recreate.json", &error);
  ASSERT_TRUE(op.has_value()) << error.message;
  const Timeline tl = build_timeline(*op);
  bool operator_deleted = false;
  for (const DirNode& n : tl.nodes) {
    if (n.deleted_by != "operator") continue;
    operator_deleted = true;
    const TimelineRow& r = tl.rows[static_cast<size_t>(n.deleted_row)];
    EXPECT_EQ(r.client, 0u);
    EXPECT_EQ(r.label.rfind("operator deletes ", 0), 0u) << r.label;
  }
  EXPECT_TRUE(operator_deleted);
}

Event history_event(uint32_t client, Type type, Op op, uint32_t hold_count) {
  Event e;
  e.at = zk::Time{static_cast<int64_t>(1000)};
  e.client = client;
  e.type = type;
  e.op = op;
  e.hold_count = hold_count;
  e.session = zk::SessionId{7};
  return e;
}

// A re-entrant holder stays holding through its inner release, at depth 2 then 1, as the
// mutual-exclusion checker counts it: even when the recipe reports the re-acquire's hold count
// as 1 (and so the inner release's depth as 1), the checker deepens the hold; the lane must not
// fall to idle there. Provoked with a hand-made history.
TEST(Timeline, ReentrantHolderStaysHoldingAtTheCheckersDepth) {
  Trace t;
  t.recipe = "hand-made";
  t.scenario.workload.clients = 1;
  const std::string node = "/lockstep/lock/_c_c1-1x1-lock-0000000004";
  Event grant = history_event(1, Type::kOk, Op::kAcquire, 1);
  grant.text = node;
  grant.token = 9;
  for (Event e : {history_event(1, Type::kInvoke, Op::kAcquire, 0), grant,
                  history_event(1, Type::kInvoke, Op::kAcquire, 0),
                  history_event(1, Type::kOk, Op::kAcquire, 1),      // misreported: depth 2
                  history_event(1, Type::kInvoke, Op::kRelease, 1),  // the inner release
                  history_event(1, Type::kOk, Op::kRelease, 0),
                  history_event(1, Type::kInvoke, Op::kRelease, 1)}) {
    t.history.add(e);
  }
  const Timeline tl = build_timeline(t);
  ASSERT_EQ(tl.rows.size(), 7u);
  const std::vector<uint32_t> depth = {0, 1, 1, 2, 2, 1, 0};
  const std::vector<LaneState> state = {
      LaneState::kWaiting, LaneState::kHolding, LaneState::kHolding, LaneState::kHolding,
      LaneState::kHolding, LaneState::kHolding, LaneState::kIdle};
  for (size_t i = 0; i < tl.rows.size(); ++i) {
    EXPECT_EQ(tl.rows[i].lanes[0], state[i]) << i << " " << tl.rows[i].label;
    EXPECT_EQ(tl.rows[i].details[0].depth, depth[i]) << i << " " << tl.rows[i].label;
  }
  EXPECT_EQ(tl.rows[1].details[0].node, "04");
  EXPECT_NE(render_text(tl).find("c1 #x2"), std::string::npos) << render_text(tl);
}

// The same on a recorded run: a re-acquire row shows depth 2 and "#x2" in the directory, the
// inner release's completion depth 1, both holding.
TEST(Timeline, RecordedReentrantHoldShowsDepth) {
  const Trace& t = ordering_trace();
  const Timeline tl = build_timeline(t);
  size_t seen = 0;
  for (const Event& e : t.history.events()) {
    if (e.op != Op::kAcquire || e.type != Type::kOk || e.hold_count != 2) continue;
    const TimelineRow& again = row_of_history(tl, e.index);
    EXPECT_EQ(again.lanes[e.client - 1], LaneState::kHolding);
    EXPECT_EQ(again.details[e.client - 1].depth, 2u);
    EXPECT_NE(again.directory.find("c" + std::to_string(e.client) + " #x2"), std::string::npos)
        << again.directory;
    // Its inner release: invoke, then ok.
    ASSERT_LT(e.index + 2, t.history.size());
    const Event& inner = t.history[e.index + 2];
    ASSERT_EQ(inner.op, Op::kRelease);
    ASSERT_EQ(inner.type, Type::kOk);
    const TimelineRow& after = row_of_history(tl, inner.index);
    EXPECT_EQ(after.lanes[e.client - 1], LaneState::kHolding) << after.label;
    EXPECT_EQ(after.details[e.client - 1].depth, 1u);
    ++seen;
  }
  EXPECT_GE(seen, 1u);
}

}  // namespace
}  // namespace lockstep::traces
