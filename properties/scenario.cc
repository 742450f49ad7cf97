#include "properties/scenario.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <utility>

#include "zk/random.h"

namespace lockstep::properties {
namespace {

using sim::Fault;
using sim::FaultKind;
using zk::Duration;
using zk::milliseconds;

constexpr const char* kFaultNames[kFaultKindCount] = {
    "connection-loss",  "lost-reply",     "expire", "abandon",       "pause", "partition", "delay",
    "lagging-follower", "server-restart", "cancel", "foreign-child", "crash", "close",
};

Duration between(zk::Prng& rng, Duration lo, Duration hi) {
  return zk::microseconds(rng.between(lo.us, std::max(lo.us, hi.us)));
}

// One fault of kind `k`, taking effect in [0, phase).
Fault make_fault(zk::Prng& rng, FaultKind k, const Scenario& s, Duration phase, uint32_t serial) {
  Fault f;
  f.kind = k;
  f.at = zk::Time{} + between(rng, milliseconds(1), phase);
  f.client = static_cast<uint32_t>(1 + rng.below(s.workload.clients));
  const Duration timeout = s.session_timeout;
  switch (k) {
    case FaultKind::kPause:
      // Half short (the holder survives), half beyond the session timeout (it expires).
      f.duration = rng.chance(1, 2) ? between(rng, milliseconds(1), timeout / 2)
                                    : between(rng, timeout + milliseconds(50), timeout * 2);
      break;
    case FaultKind::kPartition:
      f.duration = rng.chance(1, 2) ? between(rng, milliseconds(1), timeout / 2)
                                    : between(rng, timeout, timeout * 2);
      break;
    case FaultKind::kDelay:
      f.duration = between(rng, milliseconds(5), milliseconds(200));
      f.extra = between(rng, milliseconds(1), milliseconds(20));
      break;
    case FaultKind::kLaggingFollower:
      f.server = static_cast<uint32_t>(1 + rng.below(s.servers));
      f.duration = between(rng, milliseconds(10), milliseconds(300));
      f.extra = between(rng, milliseconds(1), milliseconds(50));
      break;
    case FaultKind::kServerRestart:
      f.server = static_cast<uint32_t>(1 + rng.below(s.servers));
      f.duration = between(rng, milliseconds(5), timeout / 2);
      break;
    case FaultKind::kCancel: f.name = "client"; break;
    case FaultKind::kForeignChild:
      f.name = s.workload.lock_path + "/foreign-" + std::to_string(serial);
      break;
    default: break;
  }
  return f;
}

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

}  // namespace

const char* fault_name(FaultKind k) {
  const int i = static_cast<int>(k);
  return (i >= 0 && i < kFaultKindCount) ? kFaultNames[i] : "?";
}

bool parse_fault_name(std::string_view name, FaultKind* out) {
  for (int i = 0; i < kFaultKindCount; ++i) {
    if (name == kFaultNames[i]) {
      *out = static_cast<FaultKind>(i);
      return true;
    }
  }
  return false;
}

std::vector<FaultKind> all_fault_kinds() {
  std::vector<FaultKind> out;
  for (int i = 0; i < kFaultKindCount; ++i) out.push_back(static_cast<FaultKind>(i));
  return out;
}

std::string describe(const Scenario& s) {
  const WorkloadOptions& w = s.workload;
  char buf[512];
  std::snprintf(
      buf, sizeof buf,
      "seed=%" PRIu64
      " clients=%u rounds=%u servers=%u session_timeout=%s "
      "local_expiry=%d think_max=%s hold=[%s,%s] timed=%u%% timeout=%s "
      "reentrant=%u%% stray=%u%% give_up=%u%% long_holds=%u%% leases=%u heal_at=%s bound=%s",
      s.seed, w.clients, w.rounds, s.servers, zk::to_string(s.session_timeout).c_str(),
      s.local_session_expiry ? 1 : 0, zk::to_string(w.think_max).c_str(),
      zk::to_string(w.hold_min).c_str(), zk::to_string(w.hold_max).c_str(), w.timed_percent,
      zk::to_string(w.acquire_timeout).c_str(), w.reentrant_percent, w.stray_release_percent,
      w.give_up_percent, w.long_hold_percent, w.max_leases, format_time(s.heal_at).c_str(),
      zk::to_string(s.liveness_bound).c_str());
  std::string out = buf;
  if (s.sequence_start) out += " sequence_start=" + std::to_string(*s.sequence_start);
  for (const Fault& f : s.faults) {
    out += "\n  fault at " + format_time(f.at) + ": " + sim::describe(f);
  }
  return out;
}

void finish_scenario(Scenario* s) {
  const WorkloadOptions& w = s->workload;
  zk::Time heal{};
  for (const Fault& f : s->faults) heal = std::max(heal, f.at + f.duration);
  s->heal_at = heal + zk::milliseconds(1);
  // A waiter may queue behind every other client's hold, and behind a dead session's expiry.
  Duration per_client = w.hold_max + w.think_max + zk::milliseconds(30);
  if (w.long_hold_percent > 0) per_client = per_client + w.long_hold;
  s->liveness_bound = s->session_timeout * 3 + per_client * w.clients;
  s->run_limit =
      (s->heal_at - zk::Time{}) + per_client * (w.clients * w.rounds) + s->session_timeout * 4;
}

Scenario generate_scenario(uint64_t seed, const GenerateOptions& o) {
  zk::Prng rng = zk::Prng(seed).split("scenario");
  Scenario s;
  s.seed = seed;
  WorkloadOptions& w = s.workload;
  w.kind = o.kind;
  const uint32_t min_clients = std::max<uint32_t>(2, o.min_clients);
  w.clients = static_cast<uint32_t>(rng.between(min_clients, std::max(min_clients, o.max_clients)));
  w.rounds = static_cast<uint32_t>(rng.between(1, std::max<uint32_t>(1, o.max_rounds)));
  w.think_max = between(rng, zk::Duration{}, milliseconds(5));
  w.hold_min = between(rng, zk::Duration{}, milliseconds(2));
  w.hold_max = between(rng, w.hold_min, milliseconds(15));
  w.timed_percent =
      rng.chance(1, 2) && !o.force_timeouts ? 0 : static_cast<uint32_t>(rng.between(10, 50));
  w.acquire_timeout = between(rng, milliseconds(2), milliseconds(60));
  w.reentrant_percent = o.reentrant ? 30 : 0;
  w.stray_release_percent = 10;
  w.give_up_percent = rng.chance(1, 3) ? 30 : 0;
  // A few holds outlast the session timeout: a holder that is not told it lost the lock
  // would still believe it holds when the next client is granted.
  w.long_hold_percent = rng.chance(1, 3) ? 10 : 0;
  w.long_hold = between(rng, s.session_timeout + milliseconds(100), s.session_timeout * 2);
  if (o.kind == recipes::Kind::kSemaphore) w.max_leases = static_cast<uint32_t>(rng.between(2, 3));
  if (o.kind == recipes::Kind::kReadWrite) {
    for (uint32_t c = 0; c < w.clients; ++c) {
      w.roles.push_back(rng.chance(1, 2) ? recipes::Role::kRead : recipes::Role::kWrite);
    }
  }
  // Swarm: each allowed kind is on with probability 1/2 (focus kinds always), and an enabled
  // kind fires a skewed number of times.
  std::vector<FaultKind> enabled;
  for (FaultKind k : o.faults) {
    if (o.focus.count(k) != 0 || rng.chance(1, 2)) enabled.push_back(k);
  }
  const bool lagging =
      std::find(enabled.begin(), enabled.end(), FaultKind::kLaggingFollower) != enabled.end();
  s.servers = o.ensemble && (lagging || rng.chance(1, 4)) ? 3 : 1;
  s.local_session_expiry = rng.chance(1, 4);
  if (rng.below(100) < o.wrap_percent) {
    s.sequence_start = INT32_MAX - static_cast<int32_t>(rng.below(2 * w.clients));
  }
  const Duration work = (w.hold_max + w.think_max + milliseconds(3)) * (w.clients * w.rounds);
  const Duration phase = std::clamp(work / 2, milliseconds(50), milliseconds(800));
  uint32_t serial = 0;
  bool crashed = false;
  for (FaultKind k : enabled) {
    const uint64_t max_count = o.focus.count(k) != 0 ? 6 : 3;
    const uint64_t count = 1 + (rng.below(max_count) * rng.below(max_count)) / max_count;
    for (uint64_t i = 0; i < count; ++i) {
      if (k == FaultKind::kCrash && crashed) break;
      s.faults.push_back(make_fault(rng, k, s, phase, serial++));
      crashed = crashed || k == FaultKind::kCrash;
    }
  }
  std::stable_sort(s.faults.begin(), s.faults.end(),
                   [](const Fault& a, const Fault& b) { return a.at < b.at; });
  finish_scenario(&s);
  return s;
}

RunResult run_in_sim(const recipes::LockFactory& factory, const Scenario& s, bool keep_event_log,
                     std::unique_ptr<sim::Strategy> strategy) {
  RunResult out;
  if (!strategy) strategy = sim::make_random_strategy(s.seed);
  out.strategy = strategy->name();
  sim::WorldOptions wo;
  wo.seed = s.seed;
  wo.servers = s.servers;
  wo.record_log = keep_event_log;
  auto world = std::make_unique<sim::World>(wo, std::move(strategy));
  world->log().set_recording(keep_event_log);
  for (uint32_t c = 1; c <= s.workload.clients; ++c) {
    sim::ClientOptions co;
    co.name = "c" + std::to_string(c);
    co.session_timeout = s.session_timeout;
    co.local_session_expiry = s.local_session_expiry;
    world->add_client(co);
  }
  // Setup: client 1 makes the lock directory, so a scenario can set its sequence counter.
  bool made = false;
  world->client(1).context().spawn(make_dirs(&world->client(1), s.workload.lock_path, &made),
                                   "setup");
  while (!made && world->now() < zk::Time{} + zk::seconds(10) && world->step()) {
  }
  const zk::Time t0 = world->now();
  out.start = t0;
  out.heal_at = t0 + (s.heal_at - zk::Time{});
  if (s.sequence_start) world->set_sequence_counter(s.workload.lock_path, *s.sequence_start);
  std::vector<Fault> faults = s.faults;
  std::stable_sort(faults.begin(), faults.end(),
                   [](const Fault& a, const Fault& b) { return a.at < b.at; });
  for (Fault& f : faults) {
    f.at = t0 + (f.at - zk::Time{});
    world->inject(f);
  }

  SimEnvironment env(world.get());
  auto workload = std::make_unique<Workload>(s.workload, factory, &env, &out.history);
  workload->start();
  const zk::Time limit = t0 + s.run_limit;
  // The fault phase, cut at each fault so the history records when each took effect.
  for (const Fault& f : faults) {
    if (f.at > limit) break;
    if (f.at > world->now()) world->run_until(f.at);
    Event e;
    e.at = world->now();
    e.client = f.kind == sim::FaultKind::kForeignChild ? 0 : f.client;
    e.type = Type::kInfo;
    e.op = Op::kFault;
    e.text = sim::describe(f);
    if (e.client != 0 && e.client <= s.workload.clients) {
      e.session = world->client(e.client).id();
    }
    out.history.add(std::move(e));
    if (f.kind == sim::FaultKind::kCrash) workload->mark_crashed(f.client, world->now());
  }
  // The heal phase: until every client is done (or the limit).
  while (!workload->finished() && world->now() < limit && world->step()) {
  }
  out.finished = workload->finished();
  // Settle: abandoned and crashed sessions expire on the server.
  world->run_for(s.session_timeout * 2 + world->options().tick * 2);
  out.end = world->now();
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
  out.log_hash = world->log().hash();
  out.sim_events = world->events_executed();
  out.requests = world->requests_total();
  if (keep_event_log) out.event_log = world->log().to_text();
  out.decisions = world->decisions();
  if (keep_event_log) out.events = world->log().events();
  out.diverged = world->diverged();
  out.divergence = world->divergence();
  // Coroutine frames go first (they may point into the locks), then the locks.
  world.reset();
  workload.reset();
  return out;
}

}  // namespace lockstep::properties
