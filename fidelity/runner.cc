#include "fidelity/runner.h"

#include <memory>
#include <utility>

namespace lockstep::fidelity {
namespace {

constexpr int kMaxEventsPerWatch = 8;  // a watch fires once; session events are few
constexpr zk::Duration kReconnectLimit = zk::seconds(10);
constexpr zk::Duration kPoll = zk::milliseconds(5);
constexpr zk::Duration kQuiesce = zk::milliseconds(1);
constexpr zk::Duration kRunLimit = zk::seconds(120);

using EventLog = std::vector<RawEvent>;

// Records what `w` delivers until it fired a node event or died.
zk::Task<void> record_watch(zk::Watch w, int slot, std::shared_ptr<EventLog> log) {
  for (int i = 0; i < kMaxEventsPerWatch; ++i) {
    zk::Result<zk::WatchEvent> r = co_await w.wait();
    if (!r.ok()) co_return;
    log->push_back(RawEvent{slot, r.value.type, r.value.state, r.value.path});
    if (r.value.type != zk::EventType::kSession) co_return;
    if (r.value.state == zk::SessionState::kExpired || r.value.state == zk::SessionState::kClosed)
      co_return;
  }
}

struct State {
  Driver* driver = nullptr;
  std::string root;
  std::string last_sequential;  // absolute; "" before the first sequential create
  std::shared_ptr<EventLog> log = std::make_shared<EventLog>();
  std::vector<std::vector<zk::SessionId>> ids = std::vector<std::vector<zk::SessionId>>(kSlots);
};

std::string absolute(const State& st, const std::string& path) {
  if (path == "$last") return st.last_sequential.empty() ? st.root + "/d/none" : st.last_sequential;
  return st.root + path;
}

void note_id(State& st, int slot) {
  const zk::SessionId id = st.driver->session(slot).id();
  auto& ids = st.ids[slot];
  if (id.valid() && (ids.empty() || ids.back() != id)) ids.push_back(id);
}

// The recorder runs on slot 0's context, like the body (settle() lets it run before the body
// reads the log).
void watch_if_armed(State& st, const zk::Watch& w, int slot) {
  if (w.valid() && w.armed()) {
    st.driver->session(0).context().spawn(record_watch(w, slot, st.log), "fidelity-watch");
  }
}

zk::Task<RawOutcome> issue(State& st, const Op& op) {
  zk::Session& s = st.driver->session(op.slot);
  RawOutcome out;
  const std::string path = op.kind == OpKind::kClose || op.kind == OpKind::kReopen
                               ? std::string()
                               : absolute(st, op.path);
  zk::Watch w;
  switch (op.kind) {
    case OpKind::kCreate: {
      auto r = co_await s.create(path, op.data, op.mode);
      out.error = r.error;
      if (r.ok()) {
        out.path = r.value.path;
        out.stat = r.value.stat;
        if (zk::is_sequential(op.mode)) st.last_sequential = r.value.path;
      }
      break;
    }
    case OpKind::kDelete: out.error = (co_await s.remove(path, op.version)).error; break;
    case OpKind::kSetData: {
      auto r = co_await s.set_data(path, op.data, op.version);
      out.error = r.error;
      if (r.ok()) out.stat = r.value;
      break;
    }
    case OpKind::kGetData: {
      auto r = co_await s.get_data(path, op.watch ? &w : nullptr);
      out.error = r.error;
      if (r.ok()) {
        out.data = r.value.data;
        out.stat = r.value.stat;
      }
      break;
    }
    case OpKind::kExists: {
      auto r = co_await s.exists(path, op.watch ? &w : nullptr);
      out.error = r.error;
      if (r.ok()) out.stat = r.value;
      break;
    }
    case OpKind::kGetChildren: {
      auto r = co_await s.get_children(path, op.watch ? &w : nullptr);
      out.error = r.error;
      if (r.ok()) {
        out.children = r.value.names;
        out.stat = r.value.stat;
      }
      break;
    }
    case OpKind::kSync: out.error = (co_await s.sync(path)).error; break;
    case OpKind::kClose: out.error = (co_await s.close()).error; break;
    case OpKind::kReopen: {
      st.driver->reopen(op.slot);
      const zk::Time deadline = s.context().now() + kReconnectLimit;
      while (s.state() == zk::SessionState::kConnecting && s.context().now() < deadline) {
        co_await s.context().sleep_for(kPoll);
      }
      out.state = s.state();
      break;
    }
  }
  watch_if_armed(st, w, op.slot);
  co_return out;
}

// One round trip on every connected session: events caused by the last operation are delivered
// before these replies (a watch event precedes any later reply on its session).
zk::Task<void> settle(State& st) {
  for (int slot = 0; slot < kSlots; ++slot) {
    zk::Session& s = st.driver->session(slot);
    if (s.state() == zk::SessionState::kConnected) (void)co_await s.exists(st.root);
  }
  // Recorders woken by those events are ready now, but the simulator's scheduler may resume the
  // body first (it interleaves a client's ready coroutines): a short sleep lets them all run.
  (void)co_await st.driver->session(0).context().sleep_for(kQuiesce);
}

zk::Task<void> body(State* st, const Sequence* seq, RunResult* result) {
  auto root = co_await st->driver->session(0).create(st->root, "", zk::CreateMode::kPersistent);
  if (!root.ok()) co_return;
  for (const Op& op : *seq) {
    const size_t seen = st->log->size();
    RawOutcome out = co_await issue(*st, op);
    co_await settle(*st);
    for (int slot = 0; slot < kSlots; ++slot) note_id(*st, slot);
    out.events.assign(st->log->begin() + static_cast<std::ptrdiff_t>(seen), st->log->end());
    out.session_ids = st->ids;
    result->outcomes.push_back(std::move(out));
  }
  result->completed = true;
}

}  // namespace

RunResult run_sequence(Driver& driver, const Sequence& seq, const std::string& root) {
  State st;
  st.driver = &driver;
  st.root = root;
  for (int slot = 0; slot < kSlots; ++slot) note_id(st, slot);
  RunResult result;
  if (!driver.run(body(&st, &seq, &result), kRunLimit)) result.completed = false;
  return result;
}

}  // namespace lockstep::fidelity
