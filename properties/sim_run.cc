// The simulator driver of the workload: an Environment over a sim::World, and run_in_sim()
// (declared in properties/scenario.h). Everything simulator-specific about running a workload
// lives here; properties/workload.cc knows only zk::Session and recipes::Lock.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "properties/scenario.h"
#include "sim/world.h"
#include "zk/invariant.h"

namespace lockstep::properties {
namespace {

using sim::Fault;

class SimEnvironment final : public Environment {
 public:
  explicit SimEnvironment(sim::World* world) : world_(world) {}
  zk::Session& session(uint32_t client) override { return world_->client(client); }
  bool reopen(uint32_t client) override {
    world_->client(client).reopen();
    return true;
  }
  zk::TaskHandle spawn(uint32_t client, zk::Task<void> task, std::string name) override {
    return world_->client(client).spawn(std::move(task), std::move(name));
  }
  bool owned_nodes(zk::SessionId owner, const std::string& dir,
                   std::vector<std::string>* out) override {
    if (!owner.valid()) return true;  // a session that never connected owns nothing
    walk(dir, [&](const sim::NodeView& n) {
      if (n.stat.ephemeral_owner == owner && n.path != dir) out->push_back(n.path);
    });
    std::sort(out->begin(), out->end());
    return true;
  }
  // Calls fn on `dir` and every node below it, parents first, children by name.
  template <class Fn>
  void walk(const std::string& dir, Fn&& fn) const {
    std::vector<std::string> stack{dir};
    for (size_t guard = 0; !stack.empty() && guard < 1000000; ++guard) {
      const std::string path = std::move(stack.back());
      stack.pop_back();
      std::optional<sim::NodeView> n = world_->node(path);
      if (!n) continue;
      fn(*n);
      for (auto it = n->children.rbegin(); it != n->children.rend(); ++it) {
        stack.push_back(path + "/" + *it);
      }
    }
  }

 private:
  sim::World* world_;
};

// Creates `path` and its parents as persistent nodes (existing ones are fine).
zk::Task<void> make_dirs(zk::Session* session, std::string path, bool* done) {
  for (size_t pos = 1; pos <= path.size(); ++pos) {
    if (pos != path.size() && path[pos] != '/') continue;
    const std::string prefix = path.substr(0, pos);
    for (int attempt = 0; attempt < 100; ++attempt) {
      zk::Result<zk::Created> r = co_await session->create(prefix, "", zk::CreateMode::kPersistent);
      if (r.ok() || r.error == zk::Error::kNodeExists) break;
    }
  }
  *done = true;
}

// Creates the capacity node `path` (its parents first) holding `count`.
zk::Task<void> make_count(zk::Session* session, std::string path, uint32_t count, bool* done) {
  bool parents = false;
  const size_t slash = path.rfind('/');
  if (slash != 0 && slash != std::string::npos) {
    co_await make_dirs(session, path.substr(0, slash), &parents);
  }
  for (int attempt = 0; attempt < 100; ++attempt) {
    zk::Result<zk::Created> r =
        co_await session->create(path, std::to_string(count), zk::CreateMode::kPersistent);
    if (r.ok() || r.error == zk::Error::kNodeExists) break;
  }
  *done = true;
}

// Records the server's view of a run (ServerView) as it happens, placed in the history by the
// number of events recorded so far. Reads the world only to name a node's owner.
class ViewRecorder final : public sim::Observer {
 public:
  ViewRecorder(const sim::World* world, const History* history, std::string lock_dir,
               ServerView* out)
      : world_(world), history_(history), prefix_(std::move(lock_dir) + "/"), out_(out) {
    out_->observed = true;
  }
  void node_created(uint32_t server, zk::Zxid zxid, std::string_view path,
                    zk::SessionId owner) override {
    if (!under_lock(path)) return;
    ServerView::NodeChange c{history_->size(), server, zxid, std::string(path), true, owner, 0};
    if (owner.valid()) {
      for (uint32_t i = 1; i <= world_->client_count(); ++i) {
        if (world_->client_id(i) == owner) c.client = i;
      }
    }
    out_->nodes.push_back(std::move(c));
  }
  void node_deleted(uint32_t server, zk::Zxid zxid, std::string_view path) override {
    if (!under_lock(path)) return;
    out_->nodes.push_back(ServerView::NodeChange{history_->size(), server, zxid, std::string(path),
                                                 false, zk::SessionId{}, 0});
  }
  void request_sent(uint32_t client, std::string_view op, std::string_view path) override {
    std::string what;
    what.reserve(op.size() + 1 + path.size());
    what.append(op).append(" ").append(path);
    add(client, ServerView::Activity::Kind::kRequest, std::move(what));
  }
  void notified(uint32_t client) override {
    add(client, ServerView::Activity::Kind::kNotification, {});
  }
  void requests_failed(uint32_t client) override {
    add(client, ServerView::Activity::Kind::kRequestsFailed, {});
  }
  void session_event(uint32_t client) override {
    add(client, ServerView::Activity::Kind::kSessionEvent, {});
  }

 private:
  void add(uint32_t client, ServerView::Activity::Kind kind, std::string request) {
    out_->activity.push_back(
        ServerView::Activity{history_->size(), client, kind, std::move(request), world_->now()});
  }
  bool under_lock(std::string_view path) const {
    return path.size() > prefix_.size() && path.compare(0, prefix_.size(), prefix_) == 0;
  }
  const sim::World* world_;
  const History* history_;
  std::string prefix_;
  ServerView* out_;
};

}  // namespace

RunResult run_in_sim(const recipes::LockFactory& factory, const Scenario& s, Keep keep,
                     std::unique_ptr<sim::Strategy> strategy,
                     const std::vector<sim::LoggedEvent>* expected_events) {
  const bool keep_event_log = keep == Keep::kEventLog;
  RunResult out;
  if (!strategy) strategy = sim::make_random_strategy(s.seed);
  out.strategy = strategy->name();
  sim::WorldOptions wo;
  wo.seed = s.seed;
  wo.servers = s.servers;
  wo.record_log = keep_event_log;
  wo.audit = keep != Keep::kVerdicts;
  auto world = std::make_unique<sim::World>(wo, std::move(strategy));
  // An invariant that fires inside this run names the run and how far it got.
  const sim::World* w = world.get();
  InvariantContext context([&s, w] {
    return "in the simulated run of scenario seed " + std::to_string(s.seed) + " (" +
           std::to_string(s.workload.clients) + " clients, " + std::to_string(s.servers) +
           " servers) at t=" + std::to_string(w->now().us) + "us, simulator event #" +
           std::to_string(w->events_executed());
  });
  world->log().set_recording(keep_event_log);
  if (keep_event_log && expected_events != nullptr) world->log().expect(expected_events);
  for (uint32_t c = 1; c <= s.workload.clients; ++c) {
    sim::ClientOptions co;
    co.name = "c" + std::to_string(c);
    co.session_timeout = s.session_timeout;
    co.local_session_expiry = s.local_session_expiry;
    sim::Client& client = world->add_client(co);
    // Another stream identity (WorkloadOptions::client_streams): the stream World::add_client
    // gives the client of that number (sim/world.cc derives it the same way; a test holds the
    // two together). Before any task of the client has run, so it draws from nothing else.
    if (!s.workload.client_streams.empty()) {
      const uint32_t id = s.workload.client_streams[c - 1];
      client.context().rng() =
          zk::Prng(zk::Prng(s.seed).split("client-" + std::to_string(id)).seed());
    }
  }
  // Setup: client 1 makes the lock directory, so a scenario can set its sequence counter.
  bool made = false;
  world->client(1).context().spawn(make_dirs(&world->client(1), s.workload.lock_path, &made),
                                   "setup");
  while (!made && world->now() < zk::Time{} + zk::seconds(10) && world->step()) {
  }
  // A semaphore's capacity node, when the scenario has one: max_leases until a set-capacity.
  if (!s.workload.capacity_path.empty()) {
    bool counted = false;
    world->client(1).context().spawn(
        make_count(&world->client(1), s.workload.capacity_path, s.workload.max_leases, &counted),
        "setup");
    while (!counted && world->now() < zk::Time{} + zk::seconds(10) && world->step()) {
    }
  }
  // The view starts with the workload: the setup's directories are not the lock's nodes.
  ViewRecorder recorder(world.get(), &out.history, s.workload.lock_path, &out.server);
  world->set_observer(&recorder);
  const zk::Time t0 = world->now();
  out.start = t0;
  out.heal_at = t0 + (s.heal_at - zk::Time{});
  if (s.sequence_start) world->set_sequence_counter(s.workload.lock_path, *s.sequence_start);
  // The setup injected no fault: plan index k below is injection index k.
  std::vector<Fault> faults = s.faults;
  std::stable_sort(faults.begin(), faults.end(),
                   [](const Fault& a, const Fault& b) { return a.at < b.at; });
  for (Fault& f : faults) {
    f.at = t0 + (f.at - zk::Time{});
    world->inject(f);
  }

  // About eight events per client and round (an acquire and a release, each invoked and
  // completed, the resource's enter and leave, a session event or two), and one per fault.
  out.history.reserve(size_t{s.workload.clients} * s.workload.rounds * 8 + faults.size());
  SimEnvironment env(world.get());
  auto workload = std::make_unique<Workload>(s.workload, factory, &env, &out.history);
  workload->start();
  const zk::Time limit = t0 + s.run_limit;
  // The fault phase, cut at each fault's instant so the history records when each took effect,
  // and in the order the simulator started them: faults due at one instant start in the order
  // the scheduler chose (semaphore seed 1301429: two set-capacity faults at one instant, 4 then
  // 1 in the plan, were applied 1 then 4 and recorded 4 then 1, so the checkers judged the
  // grants after them by a capacity of 1 where the server's count said 4). A fault due at the
  // phase's first instant has not started when it is reached (nothing has run yet): such faults
  // keep the plan's order, after those that started.
  std::vector<size_t> start_rank(faults.size(), SIZE_MAX);  // plan index -> place in start order
  size_t ranked = 0;
  for (size_t i = 0; i < faults.size();) {
    if (faults[i].at > limit) break;
    if (faults[i].at > world->now()) world->run_until(faults[i].at);
    const std::vector<size_t>& started = world->started_faults();
    for (; ranked < started.size(); ++ranked) start_rank[started[ranked]] = ranked;
    size_t end = i;  // faults[i, end) are due at this instant
    while (end < faults.size() && faults[end].at == faults[i].at) ++end;
    std::vector<size_t> group(end - i);
    std::iota(group.begin(), group.end(), i);
    std::stable_sort(group.begin(), group.end(),
                     [&](size_t a, size_t b) { return start_rank[a] < start_rank[b]; });
    for (const size_t k : group) {
      const Fault& f = faults[k];
      Event e;
      e.at = world->now();
      e.client = zk::takes(f.kind, zk::kParamPath) ? 0 : f.client;  // an outside session's
      e.type = Type::kInfo;
      e.op = Op::kFault;
      e.text = sim::describe(f);
      if (f.kind == sim::FaultKind::kSetCapacity) {
        e.op = Op::kCapacity;  // the checkers' capacity timeline
        e.token = f.count;
      }
      if (e.client != 0 && e.client <= s.workload.clients) {
        e.session = world->client(e.client).id();
      }
      out.history.add(std::move(e));
      if (f.kind == sim::FaultKind::kCrash) workload->mark_crashed(f.client, world->now());
    }
    i = end;
  }
  // The heal phase: until every client is done (or the limit).
  while (!workload->finished() && world->now() < limit && world->step()) {
  }
  out.finished = workload->finished();
  // Settle: abandoned and crashed sessions expire on the server, within two timeouts of now or,
  // when the leader was down after that, of its return (its outage defers every expiry: sessions
  // get fresh timers when it is back).
  const zk::Duration settle = s.session_timeout * 2 + world->options().tick * 2;
  zk::Time settled = world->now() + settle;
  for (const Fault& f : faults) {
    if (f.kind == sim::FaultKind::kServerRestart && f.server == 1) {
      settled = std::max(settled, f.at + f.duration + settle);
    }
  }
  world->run_until(settled);
  out.end = world->now();
  // A lost reply or request armed in the fault phase takes effect at its client's next mutating
  // request, which may come after the plan's heal (a client waiting in a queue sends none): the
  // faults ended when it did (semaphore-gated seed 777261: armed at 0.072 s, taken at 2.154 s,
  // 1.5 s after the heal; the reconnect that followed held up a waiter while the room was
  // free, which the lost wake-up clause, judging from the heal on, took for one).
  if (const zk::Time fired = world->armed_fault_fired_at(); fired > zk::Time{}) {
    out.heal_at = std::max(out.heal_at, fired + zk::milliseconds(1));
  }
  for (uint32_t c = 1; c <= world->client_count(); ++c) {
    const zk::SessionId id = world->client_id(c);
    if (!id.valid() || !world->session_alive(id)) continue;
    for (const sim::WatchView& wv : world->server_watches(id)) {
      out.server.watches_at_end.push_back(ServerView::WatchLeft{
          c, wv.path, wv.children, world->node_on(wv.server, wv.path).has_value()});
    }
  }
  out.tree.lock_dir = s.workload.lock_path;
  env.walk(s.workload.lock_path, [&](const sim::NodeView& n) {
    if (n.path == s.workload.lock_path) return;
    out.tree.nodes.push_back(
        NodeSnapshot{n.path, n.stat.ephemeral_owner,
                     n.stat.ephemeral_owner.valid() && world->session_alive(n.stat.ephemeral_owner),
                     n.stat.czxid});
  });
  for (const sim::HerdRecord& r : world->herd()) {
    out.herd.push_back(HerdSample{r.zxid, r.path, r.notifications, r.requests_caused});
  }
  if (wo.audit) out.log_hash = world->log().hash();
  out.sim_events = world->events_executed();
  out.requests = world->requests_total();
  if (keep_event_log) out.event_log = world->log().to_text();
  if (wo.audit) out.decisions = world->decisions();
  if (keep_event_log) out.events = world->log().events();
  out.diverged = world->diverged();
  out.divergence = world->divergence();
  // Coroutine frames go first (they may point into the locks), then the locks.
  world->set_observer(nullptr);
  world.reset();
  workload.reset();
  return out;
}

}  // namespace lockstep::properties
