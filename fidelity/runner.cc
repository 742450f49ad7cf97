#include "fidelity/runner.h"

#include <array>
#include <memory>
#include <utility>

namespace lockstep::fidelity {
namespace {

constexpr int kMaxEventsPerWatch = 8;  // a watch fires once; session events are few
constexpr zk::Duration kReconnectLimit = zk::seconds(10);
constexpr zk::Duration kPoll = zk::milliseconds(5);
constexpr zk::Duration kQuiesce = zk::milliseconds(1);
constexpr zk::Duration kRunLimit = zk::seconds(600);

using EventLog = std::vector<RawEvent>;

// Records what `w` delivers until it fired a node event or died.
zk::Task<void> record_watch(zk::Watch w, int slot, std::shared_ptr<EventLog> log,
                            zk::Context* clock) {
  for (int i = 0; i < kMaxEventsPerWatch; ++i) {
    zk::Result<zk::WatchEvent> r = co_await w.wait();
    if (!r.ok()) co_return;
    log->push_back(RawEvent{slot, r.value.type, r.value.state, r.value.path, false,
                            clock->now() - zk::Time{}});
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
  // Per slot: how many times its subscription reported kConnecting (a disconnect seen).
  std::shared_ptr<std::array<int, kSlots>> disconnects =
      std::make_shared<std::array<int, kSlots>>();
};

// Records every state change of a slot's session (kept across reopen by both backends).
zk::Task<void> record_session(zk::SessionEvents events, int slot, std::shared_ptr<EventLog> log,
                              std::shared_ptr<std::array<int, kSlots>> disconnects,
                              zk::Context* clock) {
  for (;;) {
    zk::Result<zk::WatchEvent> r = co_await events.next();
    if (!r.ok()) co_return;
    if (r.value.state == zk::SessionState::kConnecting) ++(*disconnects)[slot];
    log->push_back(RawEvent{slot, zk::EventType::kSession, r.value.state, "", true,
                            clock->now() - zk::Time{}});
  }
}

int server_of(const State& st, int slot) { return st.driver->servers() == 1 ? 1 : slot + 1; }

// After a fault that disconnects `slot`: waits until its subscription reported the disconnect
// (the count passed `before`), then until it left kConnecting.
zk::Task<void> await_reconnect(State& st, int slot, int before) {
  zk::Session& s = st.driver->session(slot);
  const zk::Time deadline = s.context().now() + kReconnectLimit;
  while ((*st.disconnects)[slot] == before && s.context().now() < deadline) {
    co_await s.context().sleep_for(kPoll);
  }
  while (s.state() == zk::SessionState::kConnecting && s.context().now() < deadline) {
    co_await s.context().sleep_for(kPoll);
  }
}

bool live(zk::SessionState state) {
  return state == zk::SessionState::kConnected || state == zk::SessionState::kConnecting;
}

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
    zk::Context& ctx = st.driver->session(0).context();
    ctx.spawn(record_watch(w, slot, st.log, &ctx), "fidelity-watch");
  }
}

// A fault operation (sequence.h): puts it in place, waits for its effect, and reports the
// state each affected slot reached.
zk::Task<RawOutcome> issue_fault(State& st, const Op& op) {
  Driver& d = *st.driver;
  zk::Session& s = d.session(op.slot);
  RawOutcome out;
  const int before = (*st.disconnects)[op.slot];
  switch (op.kind) {
    case OpKind::kCut:
      d.cut(op.slot);
      co_await await_reconnect(st, op.slot, before);
      break;
    case OpKind::kExpire:
      d.expire(op.slot);
      co_await await_reconnect(st, op.slot, before);
      break;
    case OpKind::kPartition: {
      d.partition(op.slot, true, op.duration);
      (void)co_await s.context().sleep_for(op.duration);
      d.partition(op.slot, false, op.duration);
      const zk::Time deadline = s.context().now() + kReconnectLimit;
      while (s.state() == zk::SessionState::kConnecting && s.context().now() < deadline) {
        co_await s.context().sleep_for(kPoll);
      }
      break;
    }
    case OpKind::kRestart: {
      std::array<int, kSlots> counts = *st.disconnects;
      std::array<bool, kSlots> affected{};
      for (int slot = 0; slot < kSlots; ++slot) {
        affected[slot] = server_of(st, slot) == op.server &&
                         d.session(slot).state() == zk::SessionState::kConnected;
      }
      d.restart_begin(op.server, op.duration);
      (void)co_await s.context().sleep_for(op.duration);
      d.restart_end(op.server);
      int shown = 0;  // the state reported: the first slot the restarted server serves
      for (int slot = kSlots - 1; slot >= 0; --slot) {
        if (affected[slot]) co_await await_reconnect(st, slot, counts[slot]);
        if (server_of(st, slot) == op.server) shown = slot;
      }
      out.state = d.session(shown).state();
      co_return out;
    }
    default: break;
  }
  out.state = s.state();
  co_return out;
}

zk::Task<RawOutcome> issue(State& st, const Op& op) {
  if (is_fault(op) && op.lose == Lose::kNone) {  // a fault of its own, not a lossy mutation
    co_return co_await issue_fault(st, op);
  }
  zk::Session& s = st.driver->session(op.slot);
  RawOutcome out;
  const std::string path = op.kind == OpKind::kClose || op.kind == OpKind::kReopen
                               ? std::string()
                               : absolute(st, op.path);
  const int before = (*st.disconnects)[op.slot];
  if (op.lose != Lose::kNone && live(s.state())) {
    st.driver->lose(op.slot, op.lose);
    (void)co_await s.context().sleep_for(kQuiesce);  // the simulator's fault takes effect
  }
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
        out.children = r.value.names.vector();
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
    case OpKind::kCut:
    case OpKind::kExpire:
    case OpKind::kPartition:
    case OpKind::kRestart: break;  // issue_fault
  }
  watch_if_armed(st, w, op.slot);
  if (op.lose != Lose::kNone && out.error == zk::Error::kConnectionLoss) {
    co_await await_reconnect(st, op.slot, before);
  }
  co_return out;
}

// One round trip on every connected session: events caused by the last operation are delivered
// before these replies (a watch event precedes any later reply on its session). On an ensemble
// a write first, a create of the root that fails (kNodeExists): a server applies a commit when
// it gets to it (the server's freedom), and a write's reply waits until its server has applied
// everything committed before it, so every operation starts with all servers caught up with the
// previous one's writes, and every watch event those writes trigger has been delivered. (A sync
// would not do on the leader, which answers it without waiting: real/FINDINGS.md item 11. The
// failed create takes a zxid, on the real server as in the simulator; zxids are not compared,
// compare.h.)
zk::Task<void> settle(State& st) {
  for (int slot = 0; slot < kSlots; ++slot) {
    zk::Session& s = st.driver->session(slot);
    if (s.state() != zk::SessionState::kConnected) continue;
    if (st.driver->servers() > 1) {
      (void)co_await s.create(st.root, "", zk::CreateMode::kPersistent);
    }
    (void)co_await s.exists(st.root);
  }
  // Recorders woken by those events are ready now, but the simulator's scheduler may resume the
  // body first (it interleaves a client's ready coroutines): a short sleep lets them all run.
  (void)co_await st.driver->session(0).context().sleep_for(kQuiesce);
}

zk::Task<void> body(State* st, const Sequence* seq, RunResult* result) {
  auto root = co_await st->driver->session(0).create(st->root, "", zk::CreateMode::kPersistent);
  if (!root.ok()) {
    result->stopped =
        "the root " + st->root + " could not be created (" + zk::error_name(root.error) + ")";
    co_return;
  }
  zk::Context& clock = st->driver->session(0).context();
  for (const Op& op : *seq) {
    const size_t seen = st->log->size();
    const zk::Duration started = clock.now() - zk::Time{};
    RawOutcome out = co_await issue(*st, op);
    co_await settle(*st);
    for (int slot = 0; slot < kSlots; ++slot) note_id(*st, slot);
    out.events.assign(st->log->begin() + static_cast<std::ptrdiff_t>(seen), st->log->end());
    for (RawEvent& e : out.events) e.at = e.at - started;
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
  for (int slot = 0; slot < kSlots; ++slot) {
    note_id(st, slot);
    zk::Context& ctx = driver.session(0).context();
    ctx.spawn(record_session(driver.session(slot).subscribe(), slot, st.log, st.disconnects, &ctx),
              "fidelity-session");
  }
  RunResult result;
  if (!driver.run(body(&st, &seq, &result), kRunLimit)) {
    result.completed = false;
    result.stopped = "the run passed its limit of " + std::to_string(kRunLimit.ms() / 1000) +
                     " s after " + std::to_string(result.outcomes.size()) + " of " +
                     std::to_string(seq.size()) + " operations";
  }
  return result;
}

}  // namespace lockstep::fidelity
