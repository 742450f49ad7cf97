#include "properties/workload.h"

#include <algorithm>
#include <utility>

namespace lockstep::properties {

using recipes::Lock;
using recipes::Role;

bool ProtectedResource::use(Op op, zk::Time at, uint32_t client, uint32_t task,
                            zk::SessionId session, int64_t token) {
  const bool accepted = !fenced_ || token >= max_accepted_;
  Event e;
  e.at = at;
  e.client = client;
  e.task = task;
  e.session = session;
  e.type = accepted ? Type::kOk : Type::kFail;
  e.op = op;
  e.token = token;
  if (!accepted) e.text = "stale: highest accepted " + std::to_string(max_accepted_);
  history_->add(std::move(e));
  if (accepted) max_accepted_ = std::max(max_accepted_, token);
  return accepted;
}

bool ProtectedResource::enter(zk::Time at, uint32_t client, uint32_t task, zk::SessionId session,
                              int64_t token) {
  return use(Op::kEnter, at, client, task, session, token);
}

bool ProtectedResource::leave(zk::Time at, uint32_t client, uint32_t task, zk::SessionId session,
                              int64_t token) {
  return use(Op::kLeave, at, client, task, session, token);
}

// One caller task of a client (the only one, without shared callers).
struct Workload::CallerState {
  uint32_t zk_task = 0;     // the id of the zk task running it (zk::this_task)
  zk::TaskHandle handle;    // that task (caller 1: the client's own)
  zk::TaskHandle watcher;
  uint64_t generation = 0;  // fresh grants so far; a watcher of an older grant does nothing
  bool believing = false;   // between a fresh grant and its last release (or the loss)
  bool lost = false;        // the current grant was reported suspended or lost
  bool in_hold = false;     // it sleeps in its hold (a loss cancels the sleep)
  bool active = false;      // inside its round's acquire, hold or release
};

struct Workload::ClientState {
  uint32_t index = 0;
  std::unique_ptr<Lock> lock;
  std::vector<std::unique_ptr<Lock>> retired;  // kept until ~Workload (tasks may point in)
  zk::TaskHandle main;
  zk::TaskHandle session_watch;
  zk::Session* watched_session = nullptr;  // the session session_watch subscribed to
  std::vector<CallerState> callers;        // WorkloadOptions::callers, never resized
  bool finished = false;
  uint32_t reopens = 0;
  std::string thrown;  // "exception: ..." once the recipe threw (the client then stops)
};

namespace {

// Awaits one of the recipe's operations. An exception thrown out of the recipe (which must return
// errors instead) becomes `fallback`, with "exception: <what>" in *thrown: the history records
// it, error-contract judges it, and the client stops.
template <class R>
zk::Task<R> guarded(zk::Task<R> op, R fallback, std::string* thrown) {
  try {
    co_return co_await std::move(op);
  } catch (const std::exception& e) {
    *thrown = std::string("exception: ") + e.what();
  } catch (...) {
    *thrown = "exception: (not a std::exception)";
  }
  co_return fallback;
}

const zk::Status kThrownStatus = zk::Status::failure(zk::Error::kSystemError);
const zk::Result<recipes::Grant> kThrownGrant =
    zk::Result<recipes::Grant>::failure(zk::Error::kSystemError);

}  // namespace

Workload::Workload(WorkloadOptions options, recipes::LockFactory factory, Environment* env,
                   History* history)
    : options_(std::move(options)),
      factory_(std::move(factory)),
      env_(env),
      history_(history),
      resource_(history, options_.kind == recipes::Kind::kMutex ||
                             options_.kind == recipes::Kind::kElection) {}

Workload::~Workload() = default;

recipes::Role Workload::role_of(uint32_t client) const {
  if (!options_.roles.empty()) return options_.roles[(client - 1) % options_.roles.size()];
  if (options_.kind == recipes::Kind::kReadWrite) {
    return client % 2 == 1 ? Role::kWrite : Role::kRead;
  }
  return Role::kExclusive;
}

uint32_t Workload::rounds_of(uint32_t client) const {
  if (options_.client_rounds.empty()) return options_.rounds;
  return std::min(options_.rounds, options_.client_rounds[client - 1]);
}

bool Workload::renew_lock(uint32_t client) {
  ClientState& cs = *clients_[client - 1];
  if (cs.lock) cs.retired.push_back(std::move(cs.lock));
  recipes::LockOptions lo;
  lo.path = options_.lock_path;
  lo.role = role_of(client);
  lo.max_leases = options_.max_leases;
  lo.client_name = "c" + std::to_string(client);
  // The recipe's announcements go into the history as they are made (reported-state).
  lo.report = [this, client](recipes::RecipeEvent re) {
    Event e = event(client, Type::kInfo, Op::kReport);
    e.text = recipes::to_string(re);
    history_->add(std::move(e));
  };
  lo.shared_callers = options_.callers > 1;
  if (options_.kind == recipes::Kind::kSemaphore) lo.capacity_path = options_.capacity_path;
  cs.lock = factory_(env_->session(client), lo);
  return cs.lock != nullptr;
}

bool Workload::roll(uint32_t client, uint32_t percent) {
  if (percent == 0) return false;
  return env_->session(client).context().random_below(100) < percent;
}

Event Workload::event(uint32_t client, Type type, Op op) {
  zk::Session& s = env_->session(client);
  Event e;
  e.at = s.context().now();
  e.client = client;
  e.session = s.id();
  e.type = type;
  e.op = op;
  e.role = role_of(client);
  return e;
}

Event Workload::event(uint32_t client, uint32_t caller, Type type, Op op) {
  Event e = event(client, type, op);
  if (options_.callers > 1) e.task = caller;
  return e;
}

recipes::LockState Workload::state_for(uint32_t client, uint32_t caller, const Lock* lock) const {
  if (options_.callers <= 1) return lock->state();
  return lock->state_of(clients_[client - 1]->callers[caller - 1].zk_task);
}

void Workload::start() {
  for (uint32_t c = 1; c <= options_.clients; ++c) {
    auto cs = std::make_unique<ClientState>();
    cs->index = c;
    cs->callers.resize(std::max<uint32_t>(1, options_.callers));
    clients_.push_back(std::move(cs));
    renew_lock(c);
  }
  for (uint32_t c = 1; c <= options_.clients; ++c) {
    ClientState& cs = *clients_[c - 1];
    cs.main = env_->spawn(c, client_main(this, c), "client");
    watch_session(c);
  }
}

void Workload::watch_session(uint32_t client) {
  ClientState& cs = *clients_[client - 1];
  zk::Session& s = env_->session(client);
  if (cs.watched_session == &s) return;  // the simulator keeps one Session across reopen
  if (cs.session_watch.valid()) cs.session_watch.cancel();
  cs.watched_session = &s;
  cs.session_watch =
      env_->spawn(client, session_watch(this, client, s.subscribe()), "session-watch");
}

bool Workload::finished() const { return finished_clients_ == clients_.size(); }

void Workload::mark_finished(ClientState& cs) {
  if (cs.finished) return;
  cs.finished = true;
  ++finished_clients_;
}

void Workload::mark_crashed(uint32_t client, zk::Time at) {
  ClientState& cs = *clients_[client - 1];
  Event e = event(client, Type::kInfo, Op::kCrash);
  e.at = at;
  history_->add(std::move(e));
  mark_finished(cs);
  for (CallerState& k : cs.callers) k.believing = false;
}

zk::Task<void> Workload::client_main(Workload* w, uint32_t c) {
  ClientState& cs = *w->clients_[c - 1];
  const WorkloadOptions& o = w->options_;
  bool gave_up = false;
  const uint32_t rounds = w->rounds_of(c);
  for (uint32_t round = 0; round < rounds && !gave_up; ++round) {
    zk::Session* s = &w->env_->session(c);
    if (o.think_max.us > 0) {
      const auto think_us = static_cast<int64_t>(s->context().random_below(o.think_max.us + 1));
      (void)co_await s->context().sleep_for(zk::microseconds(think_us));  // lockstep-allow: zk::Context virtual time
    }
    if (s->state() == zk::SessionState::kExpired || s->state() == zk::SessionState::kClosed) {
      if (cs.reopens >= o.max_reopens || !w->env_->reopen(c) || !w->renew_lock(c)) {
        gave_up = true;
        Event e = w->event(c, Type::kInfo, Op::kGiveUp);
        e.text = "cannot open a new session";
        w->history_->add(std::move(e));
        break;
      }
      ++cs.reopens;
      s = &w->env_->session(c);
      w->watch_session(c);
      w->history_->add(w->event(c, Type::kInfo, Op::kReopen));
    }
    // Shared callers: this round's other callers run beside caller 1 on the same Lock.
    const uint32_t callers =
        o.callers > 1 ? 1 + static_cast<uint32_t>(s->context().random_below(o.callers)) : 1;
    // Whether each caller stops the client; owned by this frame, which outlives the joins.
    const std::unique_ptr<bool[]> stops = std::make_unique<bool[]>(callers);
    for (uint32_t k = 2; k <= callers; ++k) {
      cs.callers[k - 1].handle =
          w->env_->spawn(c, spawned_round(w, c, k, &stops[k - 1]), "caller");
    }
    cs.callers[0].handle = cs.main;
    bool stop = false;
    co_await caller_round(w, c, 1, &stop);
    for (uint32_t k = 2; k <= callers; ++k) {
      const zk::TaskHandle h = cs.callers[k - 1].handle;
      // A cancellation of the client task ends its join early: join again until it is done.
      for (int i = 0; i < 100 && !h.done(); ++i) (void)co_await h.join();
      stop = stop || stops[k - 1];
    }
    gave_up = stop;
    if (gave_up && cs.thrown.empty()) w->history_->add(w->event(c, Type::kInfo, Op::kGiveUp));
  }
  if (gave_up && !cs.thrown.empty()) {
    Event e = w->event(c, Type::kInfo, Op::kGiveUp);
    e.text = "the recipe threw";
    w->history_->add(std::move(e));
  }
  if (!gave_up) w->history_->add(w->event(c, Type::kInfo, Op::kDone));
  w->mark_finished(cs);
  cs.session_watch.cancel();
}

zk::Task<void> Workload::spawned_round(Workload* w, uint32_t c, uint32_t caller, bool* gave_up) {
  co_await caller_round(w, c, caller, gave_up);
}

zk::Task<void> Workload::caller_round(Workload* w, uint32_t c, uint32_t k, bool* gave_up) {
  ClientState& cs = *w->clients_[c - 1];
  CallerState& me = cs.callers[k - 1];
  const WorkloadOptions& o = w->options_;
  me.zk_task = co_await zk::this_task();
  zk::Session* s = &w->env_->session(c);
  Lock* lock = cs.lock.get();
  if (w->roll(c, o.stray_release_percent)) {
    w->history_->add(w->event(c, k, Type::kInvoke, Op::kStrayRelease));
    const zk::Status st = co_await guarded(lock->release(), kThrownStatus, &cs.thrown);
    Event e = w->event(c, k, st.ok() ? Type::kOk : Type::kFail, Op::kStrayRelease);
    e.error = st.error;
    e.state = w->state_for(c, k, lock);
    e.text = cs.thrown;
    w->history_->add(std::move(e));
    if (!cs.thrown.empty()) {
      *gave_up = true;
      co_return;
    }
  }
  const bool once = w->roll(c, o.try_percent);
  const zk::Time deadline =
      !once && w->roll(c, o.timed_percent) ? s->context().now() + o.acquire_timeout : zk::kNever;
  Event invoke = w->event(c, k, Type::kInvoke, Op::kAcquire);
  if (once) invoke.text = "try";
  w->history_->add(std::move(invoke));
  me.active = true;
  // Not `co_await (once ? a() : b())`: GCC 12 destroys a conditional's temporary Task twice
  // inside co_await (recipes/README.md, coroutine pitfalls).
  zk::Task<zk::Result<recipes::Grant>> acquiring =
      once ? lock->try_acquire() : lock->acquire(deadline);
  zk::Result<recipes::Grant> r = co_await guarded(std::move(acquiring), kThrownGrant, &cs.thrown);
  if (!r.ok()) {
    Event e = w->event(c, k, Type::kFail, Op::kAcquire);
    e.error = r.error;
    e.state = w->state_for(c, k, lock);
    e.text = cs.thrown;
    w->history_->add(std::move(e));
    me.active = false;
    if (!cs.thrown.empty()) {
      *gave_up = true;
      co_return;
    }
    // With other callers busy on the same session, their nodes are no leftover of this one.
    const bool alone = std::none_of(cs.callers.begin(), cs.callers.end(),
                                    [](const CallerState& other) { return other.active; });
    if ((r.error == zk::Error::kOperationTimeout || r.error == zk::Error::kCancelled) && alone) {
      std::vector<std::string> nodes;
      const zk::SessionId sid = s->id();
      if (w->env_->owned_nodes(sid, o.lock_path, &nodes)) {
        Event p = w->event(c, k, Type::kInfo, Op::kProbe);
        if (s->state() != zk::SessionState::kConnected) p.error = zk::Error::kConnectionLoss;
        for (const std::string& n : nodes) p.text += (p.text.empty() ? "" : " ") + n;
        w->history_->add(std::move(p));
      }
    }
    if (zk::is_session_fatal(r.error) && w->roll(c, o.give_up_percent)) *gave_up = true;
  } else {
    Event e = w->event(c, k, Type::kOk, Op::kAcquire);
    e.token = r.value.fencing_token;
    e.hold_count = r.value.hold_count;
    e.text = r.value.node;
    w->history_->add(std::move(e));
    co_await hold(w, c, k, std::move(r.value));
    me.active = false;
    if (me.lost && w->roll(c, o.give_up_percent)) *gave_up = true;
    if (!cs.thrown.empty()) *gave_up = true;
  }
}

zk::Task<void> Workload::hold(Workload* w, uint32_t c, uint32_t k, recipes::Grant grant) {
  ClientState& cs = *w->clients_[c - 1];
  CallerState& me = cs.callers[k - 1];
  const WorkloadOptions& o = w->options_;
  zk::Session& s = w->env_->session(c);
  zk::Context& ctx = s.context();
  Lock* lock = cs.lock.get();
  // One release of `lock` by client `c`, recorded as an invoke (at hold depth `depth`) and its
  // completion. A coroutine lambda without captures: it only uses its parameters (by value).
  auto recorded_release = [](Workload* w, uint32_t c, uint32_t k, Lock* lock,
                             uint32_t depth) -> zk::Task<zk::Status> {
    Event inv = w->event(c, k, Type::kInvoke, Op::kRelease);
    inv.hold_count = depth;
    w->history_->add(std::move(inv));
    std::string* thrown = &w->clients_[c - 1]->thrown;
    const zk::Status st = co_await guarded(lock->release(), kThrownStatus, thrown);
    Event done = w->event(c, k, st.ok() ? Type::kOk : Type::kFail, Op::kRelease);
    done.error = st.error;
    done.state = w->state_for(c, k, lock);
    done.text = *thrown;
    w->history_->add(std::move(done));
    co_return st;
  };
  me.believing = true;
  me.lost = false;
  ++me.generation;
  me.watcher = w->env_->spawn(c, lost_watch(w, c, k, lock, me.generation), "lost-watch");
  w->resource_.enter(ctx.now(), c, w->options_.callers > 1 ? k : 0, s.id(), grant.fencing_token);
  uint32_t depth = std::max<uint32_t>(1, grant.hold_count);
  if (!me.lost && w->roll(c, o.reentrant_percent)) {
    w->history_->add(w->event(c, k, Type::kInvoke, Op::kAcquire));
    zk::Result<recipes::Grant> again =
        co_await guarded(lock->acquire(zk::kNever), kThrownGrant, &cs.thrown);
    Event e = w->event(c, k, again.ok() ? Type::kOk : Type::kFail, Op::kAcquire);
    e.error = again.error;
    e.token = again.value.fencing_token;
    e.hold_count = again.value.hold_count;
    e.text = again.ok() ? again.value.node : cs.thrown;
    e.state = w->state_for(c, k, lock);
    w->history_->add(std::move(e));
    if (again.ok()) {
      depth = again.value.hold_count;
      const zk::Status st = co_await recorded_release(w, c, k, lock, depth);
      if (st.ok() && depth > 1) --depth;
    }
  }
  if (!me.lost) {
    const int64_t span = std::max<int64_t>(0, (o.hold_max - o.hold_min).us);
    zk::Duration d =
        o.hold_min +
        zk::microseconds(static_cast<int64_t>(ctx.random_below(static_cast<uint64_t>(span) + 1)));
    if (w->roll(c, o.long_hold_percent)) d = o.long_hold;
    if (!o.client_holds.empty() && o.client_holds[c - 1].us > 0) d = o.client_holds[c - 1];
    me.in_hold = true;
    (void)co_await ctx.sleep_for(d);  // lockstep-allow: zk::Context virtual time
    me.in_hold = false;
  }
  if (!me.lost) {
    w->resource_.leave(ctx.now(), c, w->options_.callers > 1 ? k : 0, s.id(), grant.fencing_token);
  }
  // Release every hold still counted; the outermost release ends the belief.
  while (depth > 0) {
    if (depth == 1) me.believing = false;
    const zk::Status st = co_await recorded_release(w, c, k, lock, depth);
    if (!st.ok()) break;
    --depth;
  }
  me.believing = false;
  me.watcher.cancel();
}

zk::Task<void> Workload::session_watch(Workload* w, uint32_t c, zk::SessionEvents events) {
  for (uint64_t i = 0; i < 1000000; ++i) {
    zk::Result<zk::WatchEvent> r = co_await events.next();
    if (!r.ok()) co_return;  // cancelled: the client is done, or watches a new session
    Event e = w->event(c, Type::kInfo, Op::kSession);
    const bool ended = r.value.state == zk::SessionState::kExpired ||
                       r.value.state == zk::SessionState::kClosed;
    if (ended && r.value.session != e.session) {
      // The end of a session the client has already replaced: it saw the state itself and
      // reopened before this task ran (election seed 904414: closed, reopened, and then the
      // old session's close taken as news of the new one's). Nothing about the client's session.
      continue;
    }
    e.session_state = r.value.state;
    w->history_->add(std::move(e));
  }
}

zk::Task<void> Workload::lost_watch(Workload* w, uint32_t c, uint32_t k, Lock* lock,
                                    uint64_t generation) {
  ClientState& cs = *w->clients_[c - 1];
  CallerState& me = cs.callers[k - 1];
  std::string thrown;
  zk::Task<zk::Status> losing = w->options_.callers > 1 ? lock->lost_of(me.zk_task) : lock->lost();
  const zk::Status st = co_await guarded(std::move(losing), kThrownStatus, &thrown);
  if (!thrown.empty()) {
    // lost() threw: recorded as a failed release would be, and the client stops using the lock.
    Event e = w->event(c, k, Type::kFail, Op::kLost);
    e.error = st.error;
    e.text = thrown;
    w->history_->add(std::move(e));
    if (cs.thrown.empty()) cs.thrown = thrown;
    co_return;
  }
  if (!st.ok() || me.generation != generation || !me.believing) co_return;
  Event e = w->event(c, k, Type::kInfo, Op::kLost);
  e.state = w->state_for(c, k, lock);
  w->history_->add(std::move(e));
  me.lost = true;
  me.believing = false;
  if (me.in_hold) me.handle.cancel();
}

}  // namespace lockstep::properties
