#include "properties/check_real.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string_view>
#include <utility>

#include "properties/check.h"
#include "real/check_support.h"
#include "real/event_loop.h"
#include "real/inspect.h"
#include "real/proxy.h"
#include "real/run.h"
#include "real/server.h"
#include "real/session.h"
#include "zk/random.h"

namespace lockstep::properties {
namespace {

using sim::Fault;
using sim::FaultKind;
using zk::Duration;
using zk::milliseconds;

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;
constexpr int kExitNoServer = 3;
constexpr int kExitInterrupted = 130;

constexpr int64_t kConnectLimitMs = 20000;  // every client connected
constexpr int64_t kLeaderLimitMs = 30000;   // between runs: every server up, one leader
constexpr int kExpireTries = 4;             // forced expiry: each try may wait seconds

// connection-loss and lost-reply hit the client's next request of one type under the lock
// directory: Fault::requests create or delete (a waiter's or holder's next one is its delete,
// so an untyped drop would almost never meet a create).
std::set<int32_t> request_types(const sim::Fault& f) {
  switch (f.requests) {
    case zk::FaultRequests::kCreate: return {real::kOpCreate, real::kOpCreate2};
    case zk::FaultRequests::kDelete: return {real::kOpDelete};
    case zk::FaultRequests::kAny: break;
  }
  return {real::kOpCreate, real::kOpCreate2, real::kOpDelete};
}
std::string request_name(const sim::Fault& f) {
  return f.requests == zk::FaultRequests::kAny ? "create or delete"
                                               : zk::fault_requests_name(f.requests);
}

// ---- the environment: one RealSession per client, each through its own proxies ----

class RealEnvironment final : public Environment {
 public:
  // Client c reaches every server of `cluster` through a Proxy of its own (one per server), so
  // that the harness can cut, black-hole or drop its traffic alone. *error is set on failure.
  RealEnvironment(real::EventLoop& loop, real::Cluster& cluster, uint32_t clients,
                  zk::Duration timeout, std::string* error)
      : inspector_(cluster.connect_string()) {
    for (uint32_t c = 1; c <= clients && error->empty(); ++c) {
      std::vector<std::unique_ptr<real::Proxy>> mine;
      std::string hosts;
      for (int s = 1; s <= cluster.size() && error->empty(); ++s) {
        mine.push_back(real::Proxy::start(cluster.client_port(s), error));
        if (mine.back()) hosts += (hosts.empty() ? "" : ",") + mine.back()->address();
      }
      proxies_.push_back(std::move(mine));
      real::SessionOptions o;
      o.hosts = hosts;
      o.session_timeout = timeout;
      o.seed = c;
      sessions_.push_back(std::make_unique<real::RealSession>(loop, o));
    }
  }

  zk::Session& session(uint32_t client) override { return *sessions_.at(client - 1); }
  bool reopen(uint32_t client) override {
    sessions_.at(client - 1)->reopen();
    return true;
  }
  zk::TaskHandle spawn(uint32_t client, zk::Task<void> task, std::string name) override {
    zk::TaskHandle h = session(client).context().spawn(std::move(task), name);
    tasks_[{client, std::move(name)}] = h;
    return h;
  }
  bool owned_nodes(zk::SessionId owner, const std::string& dir,
                   std::vector<std::string>* out) override {
    if (!owner.valid()) return true;
    if (!inspector_.sync_path(dir)) return false;
    const bool ok = inspector_.walk(dir, [&](const std::string& path, const zk::Stat& st) {
      if (st.ephemeral_owner == owner && path != dir) out->push_back(path);
    });
    std::sort(out->begin(), out->end());
    return ok;
  }

  uint32_t clients() const { return static_cast<uint32_t>(sessions_.size()); }
  real::RealSession& real(uint32_t client) { return *sessions_.at(client - 1); }
  real::TreeInspector& inspector() { return inspector_; }
  // The proxies of `client`: the one its connection goes through when `connected_only` and it
  // is connected, otherwise all of them.
  std::vector<real::Proxy*> proxies(uint32_t client, bool connected_only) {
    std::vector<real::Proxy*> out;
    const std::string via = real(client).connected_server();
    for (auto& p : proxies_.at(client - 1)) {
      if (!connected_only || via.empty() || p->address() == via) out.push_back(p.get());
    }
    if (out.empty()) {
      for (auto& p : proxies_.at(client - 1)) out.push_back(p.get());
    }
    return out;
  }
  void cancel(uint32_t client, const std::string& name) {
    auto it = tasks_.find({client, name});
    if (it != tasks_.end() && it->second.valid()) it->second.cancel();
  }
  bool all_connected() const {
    return std::all_of(sessions_.begin(), sessions_.end(),
                       [](const auto& s) { return s->state() == zk::SessionState::kConnected; });
  }
  // Destroys the sessions (their contexts destroy every coroutine frame) before the proxies.
  void shut_down() {
    for (auto& mine : proxies_) {
      for (auto& p : mine) {
        if (p) p->set_blackhole(false);  // null only when its start failed
      }
    }
    tasks_.clear();
    sessions_.clear();
    proxies_.clear();
  }

 private:
  real::TreeInspector inspector_;
  std::vector<std::vector<std::unique_ptr<real::Proxy>>> proxies_;
  std::vector<std::unique_ptr<real::RealSession>> sessions_;
  std::map<std::pair<uint32_t, std::string>, zk::TaskHandle> tasks_;
};

// The client that believes it holds the lock at the end of `h` (the lowest one if several), or
// 0. Read from the workload's own record of beliefs.
uint32_t current_holder(const History& h, uint32_t clients) {
  std::vector<bool> holds(clients + 1, false);
  for (const Event& e : h.events()) {
    if (e.client == 0 || e.client > clients) continue;
    if (e.op == Op::kAcquire && e.type == Type::kOk && e.hold_count == 1) holds[e.client] = true;
    const bool outer_release = e.op == Op::kRelease && e.type == Type::kInvoke && e.hold_count <= 1;
    if (outer_release || e.op == Op::kLost || e.op == Op::kReopen || e.op == Op::kGiveUp ||
        e.op == Op::kDone || e.op == Op::kCrash) {
      holds[e.client] = false;
    }
  }
  for (uint32_t c = 1; c <= clients; ++c) {
    if (holds[c]) return c;
  }
  return 0;
}

// Applies the faults of a scenario on the loop (timers), records each in the history, and
// tracks when the last one ended in real time.
class FaultDriver {
 public:
  FaultDriver(real::Cluster* cluster, RealEnvironment* env, History* history, real::EventLoop* loop,
              std::string lock_dir)
      : cluster_(cluster),
        env_(env),
        history_(history),
        loop_(loop),
        lock_dir_(std::move(lock_dir)) {}

  void schedule(const std::vector<Fault>& faults, zk::Time t0) {
    for (const Fault& f : faults) {
      add(std::make_unique<Step>(this, f, false), t0 + (f.at - zk::Time{}));
      if (f.kind == FaultKind::kPartition || f.kind == FaultKind::kServerRestart) {
        add(std::make_unique<Step>(this, f, true), t0 + (f.at - zk::Time{}) + f.duration);
      }
    }
  }
  // Every fault has taken effect and every fault with a duration has ended.
  bool healed() const { return pending_ == 0; }
  zk::Time last_end() const { return last_end_; }
  // A run stopped early: faults not yet begun never will, and what is still open is healed.
  void heal_all() {
    for (auto& t : steps_) {
      if (t->fired) continue;
      loop_->cancel_timer(t->timer);
      if (t->end) {
        t->on_timer();
      } else {
        t->fired = true;
        --pending_;
      }
    }
  }

 private:
  struct Step final : zk::TimerCallback {
    Step(FaultDriver* d, Fault f, bool end) : driver(d), fault(std::move(f)), end(end) {}
    void on_timer() override {
      if (fired) return;
      fired = true;
      began = true;
      --driver->pending_;
      driver->apply(*this);
    }
    FaultDriver* driver;
    Fault fault;
    bool end;
    bool fired = false;
    bool began = false;  // a start step that took effect (not dropped by heal_all)
    zk::TimerId timer{};
    int server = 0;  // server-restart: the server that was killed
  };

  void add(std::unique_ptr<Step> step, zk::Time at) {
    ++pending_;
    step->timer = loop_->start_timer(at, step.get());
    steps_.push_back(std::move(step));
  }

  void record(uint32_t client, const std::string& text) {
    Event e;
    e.at = loop_->now();
    e.client = client;
    if (client != 0) e.session = env_->real(client).id();
    e.type = Type::kInfo;
    e.op = Op::kFault;
    e.text = text;
    history_->add(std::move(e));
  }

  Step* start_of(const Step& end) {
    for (auto& t : steps_) {
      if (!t->end && t->fault.kind == end.fault.kind && t->fault.at == end.fault.at &&
          t->fault.client == end.fault.client) {
        return t.get();
      }
    }
    return nullptr;
  }

  void apply(Step& step) {
    Fault& f = step.fault;
    uint32_t c = std::clamp<uint32_t>(f.client, 1, env_->clients());
    if (step.end) {
      end(step);
      return;
    }
    switch (f.kind) {
      case FaultKind::kConnectionLoss:
        record(c, "connection-loss c" + std::to_string(c) + ": next " + request_name(f) +
                      " under the lock lost");
        for (real::Proxy* p : env_->proxies(c, true)) {
          p->drop_request_to(request_types(f), lock_dir_);
        }
        break;
      case FaultKind::kLoseNextReply:
        record(c, "lost-reply c" + std::to_string(c) + ": next " + request_name(f) +
                      " under the lock applied, its reply lost");
        for (real::Proxy* p : env_->proxies(c, true)) p->drop_reply_to(request_types(f), lock_dir_);
        break;
      case FaultKind::kExpireSession: {
        if (f.target == zk::FaultTarget::kHolder) {
          const uint32_t h = current_holder(*history_, env_->clients());
          if (h != 0) c = h;
        }
        if (!env_->real(c).id().valid()) {
          record(c, "expire c" + std::to_string(c) + ": skipped (no session yet)");
          break;
        }
        if (cluster_->leader() == 0) {
          // A second handle cannot reach a server that is down (a server-restart in progress).
          record(c, "expire c" + std::to_string(c) + ": skipped (no server leads)");
          break;
        }
        record(c, "expire c" + std::to_string(c) +
                      (f.target == zk::FaultTarget::kHolder ? " (the holder)" : ""));
        std::vector<real::Proxy*> all = env_->proxies(c, false);
        for (real::Proxy* p : all) {
          p->set_blackhole(true);
          p->cut();
        }
        const int tries = real::expire_session(*cluster_, cluster_->connect_string(),
                                               env_->real(c).credentials(), nullptr, kExpireTries);
        if (tries == 0) record(c, "expire c" + std::to_string(c) + ": the session survived");
        if (partitioned_[c] == 0) {
          for (real::Proxy* p : all) p->set_blackhole(false);
        }
        break;
      }
      case FaultKind::kPartition:
        record(c, "partition c" + std::to_string(c) + " for " + zk::to_string(f.duration));
        ++partitioned_[c];
        for (real::Proxy* p : env_->proxies(c, false)) p->set_blackhole(true);
        break;
      case FaultKind::kServerRestart: {
        step.server = f.target == zk::FaultTarget::kLeader
                          ? cluster_->leader()
                          : std::clamp<int>(static_cast<int>(f.server), 1, cluster_->size());
        if (step.server == 0 || !cluster_->running(step.server)) {
          record(0, "server-restart: skipped (no such server running)");
          step.server = 0;
          break;
        }
        record(0, "server-restart: kill -9 server " + std::to_string(step.server) +
                      (f.target == zk::FaultTarget::kLeader ? " (the leader)" : "") + " for " +
                      zk::to_string(f.duration));
        cluster_->kill(step.server);
        break;
      }
      case FaultKind::kCancel:
        record(c, "cancel c" + std::to_string(c) + " task " + f.task);
        env_->cancel(c, f.task);
        break;
      default: record(c, std::string("unsupported on real: ") + fault_name(f.kind)); break;
    }
  }

  void end(const Step& step) {
    const Fault& f = step.fault;
    const uint32_t c = std::clamp<uint32_t>(f.client, 1, env_->clients());
    if (f.kind == FaultKind::kPartition) {
      const Step* start = start_of(step);
      if (start == nullptr || !start->began) return;
      if (--partitioned_[c] == 0) {
        for (real::Proxy* p : env_->proxies(c, false)) p->set_blackhole(false);
      }
      record(c, "partition c" + std::to_string(c) + " healed");
    } else if (f.kind == FaultKind::kServerRestart) {
      const Step* start = start_of(step);
      const int server = start != nullptr ? start->server : 0;
      if (server != 0) {
        const std::string e = cluster_->restart(server);
        record(0, "server-restart: server " + std::to_string(server) +
                      (e.empty() ? " is back" : " did not come back: " + e));
      }
    }
    last_end_ = std::max(last_end_, loop_->now());
  }

  real::Cluster* cluster_;
  RealEnvironment* env_;
  History* history_;
  real::EventLoop* loop_;
  std::string lock_dir_;
  std::vector<std::unique_ptr<Step>> steps_;
  int pending_ = 0;                      // steps not yet fired
  std::map<uint32_t, int> partitioned_;  // client -> partitions in progress
  zk::Time last_end_{};
};

zk::Task<void> make_dirs(zk::Session* session, std::string path, bool* done) {
  for (size_t pos = 1; pos <= path.size(); ++pos) {
    if (pos != path.size() && path[pos] != '/') continue;
    for (int attempt = 0; attempt < 20; ++attempt) {
      auto r = co_await session->create(path.substr(0, pos), "", zk::CreateMode::kPersistent);
      if (r.ok() || r.error == zk::Error::kNodeExists) break;
    }
  }
  *done = true;
}

// judge() without herd-freedom (no herd counters on a real server) and with a liveness grace
// for wall-clock scheduling noise.
std::vector<Verdict> judge_real(const recipes::RecipeInfo& recipe, Claims claims, const Scenario& s,
                                const RunResult& run) {
  claims.properties.erase(Property::kHerdFree);
  const bool liveness = judged(Property::kLiveness, claims, s);
  claims.properties.erase(Property::kLiveness);
  std::vector<Verdict> out = judge(recipe, claims, s, run);
  if (liveness) {
    LivenessOptions lo;
    lo.heal_at = run.heal_at;
    // An unfair lock's waiter may be passed by the whole workload (liveness_bound_for).
    const bool fifo = claims.properties.count(Property::kFifo) != 0;
    lo.bound = std::max(s.liveness_bound, liveness_bound_for(s, fifo));
    // On a real server no session dies unseen: forced expiry is immediate and a partition
    // longer than the timeout has expired its session before it heals. Only reconnecting takes
    // time after the heal: up to about a second after a partition or a server restart (the C
    // client's back-off), tens of milliseconds after a cut.
    const bool outage = std::any_of(s.faults.begin(), s.faults.end(), [](const Fault& f) {
      return f.kind == FaultKind::kPartition || f.kind == FaultKind::kServerRestart;
    });
    lo.quiet_at = run.heal_at + milliseconds(200) + (outage ? s.session_timeout : Duration{});
    lo.grace = kRealLivenessGrace;
    lo.capacity = recipe.kind == recipes::Kind::kSemaphore   ? s.workload.max_leases
                  : recipe.kind == recipes::Kind::kReadWrite ? 0
                                                             : 1;
    out.push_back(check_liveness(run.history, lo, run.tree));
    std::stable_sort(out.begin(), out.end(),
                     [](const Verdict& a, const Verdict& b) { return a.property < b.property; });
  }
  return out;
}

}  // namespace

std::vector<FaultKind> real_fault_kinds() {
  std::vector<FaultKind> out;
  for (const zk::FaultDescriptor& d : zk::kFaultDescriptors) {
    if ((d.backends & zk::kRealServer) != 0) out.push_back(d.kind);
  }
  return out;
}

bool real_fault_supported(FaultKind k) { return zk::injects(k, zk::kRealServer); }

std::string not_provokable_on_real(const recipes::RecipeInfo& recipe, const Claims& claims) {
  if (!claims.must_violate) return "";
  if (*claims.must_violate == Property::kHerdFree) {
    return "herd-freedom needs the simulator's herd counters";
  }
  if (claims.needs_wrap) {
    return "needs the sequence counter near 2^31, which only the simulator can set";
  }
  if (recipe.name == "broken/seed001-exclusive") {
    // Measured: not caught in 6 real runs, while the simulator's scheduler finds it.
    return "its missed wake-up needs a delete within one round trip between two of the "
           "waiter's requests; the real harness has no delay fault to widen that window";
  }
  return "";
}

RealOutcome run_real_scenario(real::Cluster& cluster, const recipes::RecipeInfo& recipe,
                              const Claims& claims, const Scenario& s) {
  RealOutcome out;
  out.outcome.scenario = s;
  RunResult& run = out.outcome.run;
  real::EventLoop loop;
  RealEnvironment env(loop, cluster, s.workload.clients, s.session_timeout, &out.error);
  auto stop = [] { return real::InterruptGuard::interrupted(); };
  if (out.error.empty() &&
      !loop.run_until([&] { return env.all_connected() || stop(); }, kConnectLimitMs)) {
    out.error = "the clients did not connect within " + std::to_string(kConnectLimitMs) + " ms";
  }
  bool made = false;
  if (out.error.empty() && !stop()) {
    real::run_task(loop, env.session(1).context(),
                   make_dirs(&env.session(1), s.workload.lock_path, &made));
    if (!made) out.error = "could not create " + s.workload.lock_path;
  }
  if (stop()) out.error = std::string("interrupted (") + real::InterruptGuard::signal_name() + ")";
  if (!out.error.empty()) {
    env.shut_down();
    return out;
  }

  const zk::Time t0 = loop.now();
  run.start = t0;
  FaultDriver faults(&cluster, &env, &run.history, &loop, s.workload.lock_path + "/");
  auto workload = std::make_unique<Workload>(s.workload, recipe.make, &env, &run.history);
  faults.schedule(s.faults, t0);
  workload->start();
  loop.run_until([&] { return (workload->finished() && faults.healed()) || stop(); },
                 s.run_limit.ms());
  run.finished = workload->finished();
  faults.heal_all();
  run.heal_at = std::max(t0 + (s.heal_at - zk::Time{}), faults.last_end());
  // Settle: cancelled watch tasks finish, closed sessions' ephemerals go.
  loop.run_for(milliseconds(300));
  run.end = loop.now();

  run.tree.lock_dir = s.workload.lock_path;
  std::map<uint64_t, bool> alive;
  env.inspector().sync_path(s.workload.lock_path);
  env.inspector().walk(s.workload.lock_path, [&](const std::string& path, const zk::Stat& st) {
    if (path == s.workload.lock_path) return;
    bool owner_alive = false;
    if (st.ephemeral_owner.valid()) {
      auto it = alive.find(st.ephemeral_owner.value);
      if (it == alive.end()) {
        it = alive.emplace(st.ephemeral_owner.value, cluster.session_alive(st.ephemeral_owner))
                 .first;
      }
      owner_alive = it->second;
    }
    run.tree.nodes.push_back(NodeSnapshot{path, st.ephemeral_owner, owner_alive, st.czxid});
  });
  if (stop()) {
    out.error = std::string("interrupted (") + real::InterruptGuard::signal_name() + ")";
  } else {
    out.outcome.verdicts = judge_real(recipe, claims, s, run);
  }
  // Coroutine frames go first (they may point into the locks), then the locks.
  env.shut_down();
  workload.reset();
  return out;
}

// ---- the command ----

namespace {

const char* kRealUsage =
    "usage: lockstep check --real|--ensemble [--recipe NAME]... [--seeds N] [--seed S]\n"
    "                      [--faults LIST] [--json]\n"
    "  Runs the check table against Debian's ZooKeeper server, started here on 127.0.0.1\n"
    "  (--real: one standalone server; --ensemble: three servers) and stopped at the end.\n"
    "  The same workload and checkers as the simulator; faults made by the real harness.\n"
    "  --recipe NAME  check only this recipe (repeatable; `lockstep list` names them)\n"
    "  --seeds N      scenarios per correct recipe (default 3); a broken variant is hunted\n"
    "                 for up to max(N, 6) scenarios and stops at the first that catches it\n"
    "  --seed S       run only scenario S and print its report (the seed fixes the workload\n"
    "                 and the fault plan; the real schedule is not reproducible)\n"
    "  --faults LIST  comma-separated real fault kinds: connection-loss, lost-reply, expire,\n"
    "                 partition, server-restart, cancel (or none)\n"
    "  --json         one JSON object: {server, results: [...], seconds}\n"
    "  Herd-freedom is not judged (no herd counters on a real server); a broken variant that\n"
    "  only the simulator can provoke is listed as \"not provokable on real\" with the reason.\n"
    "  Needs java and the zookeeper package (apt-get install zookeeper; ./lockstep installs it).\n";

constexpr const char* kColumnNames[kPropertyCount] = {"mutex",  "fenced", "fifo",  "live",
                                                      "orphan", "herd",   "reent", "tmout"};

struct RealRow {
  RecipeResult result;
  std::string not_provokable;  // the reason, when the variant cannot be provoked on real
  std::string error;           // the harness failed
  uint64_t runs = 0;
  std::string first_report;  // report of the first violating scenario
};

bool row_ok(const RealRow& r) {
  if (!r.error.empty()) return false;
  if (!r.not_provokable.empty()) return true;
  return r.result.as_expected();
}

std::string row_status(const RealRow& r) {
  if (!r.error.empty()) return "ERROR";
  if (!r.not_provokable.empty()) return "not provokable on real";
  if (r.result.expected == recipes::Expected::kCorrect)
    return r.result.as_expected() ? "ok" : "FAILED";
  return r.result.as_expected() ? "caught" : "NOT CAUGHT";
}

std::string real_repro(const std::string& recipe, uint64_t seed, bool ensemble) {
  return std::string("./lockstep check ") + (ensemble ? "--ensemble" : "--real") + " --recipe " +
         recipe + " --seed " + std::to_string(seed);
}

void print_real_table(const std::vector<RealRow>& rows, std::ostream& out) {
  size_t width = 6;
  for (const RealRow& r : rows) width = std::max(width, r.result.recipe.size());
  char buf[96];
  std::snprintf(buf, sizeof buf, "%-*s  %-9s", static_cast<int>(width), "recipe", "expected");
  out << buf;
  for (const char* c : kColumnNames) {
    std::snprintf(buf, sizeof buf, "%-9s", c);
    out << buf;
  }
  out << "runs  result\n";
  for (const RealRow& r : rows) {
    std::snprintf(buf, sizeof buf, "%-*s  %-9s", static_cast<int>(width), r.result.recipe.c_str(),
                  recipes::to_string(r.result.expected));
    out << buf;
    for (const PropertyResult& p : r.result.properties) {
      const std::string cell = p.seed ? "seed " + std::to_string(*p.seed) : p.judged ? "pass" : "-";
      std::snprintf(buf, sizeof buf, "%-9s", cell.c_str());
      out << buf;
    }
    std::snprintf(buf, sizeof buf, "%-4llu  ", static_cast<unsigned long long>(r.runs));
    out << buf << row_status(r) << "\n";
  }
  out << "pass = held in every run where it applies, - = not judged (herd: never on a real "
         "server), seed S = the scenario that violated it\n";
}

void print_real_details(const std::vector<RealRow>& rows, bool ensemble, std::ostream& out) {
  for (const RealRow& r : rows) {
    const std::string& name = r.result.recipe;
    if (!r.error.empty()) out << "ERROR " << name << ": " << r.error << "\n";
    if (!r.not_provokable.empty()) {
      out << "not provokable on real: " << name << " (" << r.not_provokable
          << "); the simulator catches it: ./lockstep check --recipe " << name << "\n";
    }
    for (int i = 0; i < kPropertyCount; ++i) {
      const PropertyResult& p = r.result.properties[i];
      if (!p.seed) continue;
      const auto prop = static_cast<Property>(i);
      const bool expected_hit = r.result.expected == recipes::Expected::kBroken &&
                                (!r.result.must_violate || *r.result.must_violate == prop);
      out << (expected_hit                                      ? "caught   "
              : r.result.expected == recipes::Expected::kBroken ? "also     "
                                                                : "VIOLATED ")
          << name << " " << to_string(prop) << " in scenario " << *p.seed << ": "
          << p.message.substr(0, p.message.find('\n'))
          << "\n  re-run: " << real_repro(name, *p.seed, ensemble) << "\n";
    }
    if (r.result.expected == recipes::Expected::kBroken && r.not_provokable.empty() &&
        r.error.empty() && !r.result.as_expected()) {
      out << "NOT CAUGHT " << name << ": "
          << (r.result.must_violate ? to_string(*r.result.must_violate) : "no property")
          << " was never violated in " << r.runs << " real runs (try more --seeds)\n";
    }
  }
}

nlohmann::json real_json(const std::vector<RealRow>& rows, const std::string& server, bool ensemble,
                         double seconds) {
  nlohmann::json rs = nlohmann::json::array();
  for (const RealRow& r : rows) {
    nlohmann::json props = nlohmann::json::object();
    for (int i = 0; i < kPropertyCount; ++i) {
      const PropertyResult& p = r.result.properties[i];
      props[to_string(static_cast<Property>(i))] =
          p.seed ? "violated" : (p.judged == 0 ? "not-judged" : "pass");
    }
    nlohmann::json j;
    j["recipe"] = r.result.recipe;
    j["expected"] = recipes::to_string(r.result.expected);
    j["status"] = !r.error.empty()            ? "error"
                  : !r.not_provokable.empty() ? "not-provokable"
                  : r.result.violated()       ? "violated"
                                              : "pass";
    j["as_expected"] = row_ok(r);
    j["expected_violation"] = r.result.must_violate
                                  ? nlohmann::json(to_string(*r.result.must_violate))
                                  : nlohmann::json(nullptr);
    j["not_provokable_reason"] =
        r.not_provokable.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.not_provokable);
    j["error"] = r.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.error);
    j["properties"] = props;
    const std::optional<uint64_t> seed = r.result.first_failing_seed();
    j["seed"] = seed ? nlohmann::json(*seed) : nlohmann::json(nullptr);
    j["reproduce"] = seed ? nlohmann::json(real_repro(r.result.recipe, *seed, ensemble))
                          : nlohmann::json(nullptr);
    j["runs"] = r.runs;
    rs.push_back(std::move(j));
  }
  nlohmann::json doc;
  doc["server"] = server;
  doc["results"] = std::move(rs);
  doc["seconds"] = seconds;
  return doc;
}

// "/lockstep-check/<recipe with '/' as '-'>/<seed>"
std::string lock_path_for(const std::string& recipe, uint64_t seed, uint64_t serial) {
  std::string out = "/lockstep-check/";
  for (char c : recipe) out += c == '/' ? '-' : c;
  return out + "/" + std::to_string(seed) + "-" + std::to_string(serial);
}

struct RealCheck {
  CheckOptions o;
  bool ensemble = false;
  bool seeds_given = false;
  real::Cluster* cluster = nullptr;
  uint64_t serial = 0;  // distinct lock directories within one server's life

  // Runs one recipe over its scenarios (or the one --seed), accumulating like check_recipe.
  RealRow check(const recipes::RecipeInfo& recipe, std::ostream* progress, std::ostream* reports) {
    RealRow row;
    row.result = empty_result(recipe);
    const Claims claims = claims_for(recipe);
    row.not_provokable = not_provokable_on_real(recipe, claims);
    if (!row.not_provokable.empty()) return row;
    const bool broken = recipe.expected == recipes::Expected::kBroken;
    const uint64_t first = o.seed ? *o.seed : o.first_seed;  // --first-seed, as in the simulator
    const uint64_t count = o.seed ? 1 : broken ? std::max(o.seeds, kRealBrokenSeeds) : o.seeds;
    for (uint64_t seed = first; seed < first + count; ++seed) {
      if (real::InterruptGuard::interrupted()) break;
      if (progress != nullptr) {
        *progress << "\r  " << recipe.name << "  scenario " << seed << " (" << (seed - first + 1)
                  << "/" << count << ")        " << std::flush;
      }
      const std::string health = real::ensure_healthy(*cluster, kLeaderLimitMs);
      if (!health.empty()) {
        row.error = "the server is not healthy: " + health;
        break;
      }
      Scenario s = generate_real_scenario(seed, recipe, claims, ensemble, o.faults);
      s.workload.lock_path = lock_path_for(recipe.name, seed, ++serial);
      RealOutcome ro = run_real_scenario(*cluster, recipe, claims, s);
      if (!ro.error.empty()) {
        row.error = ro.error;
        break;
      }
      ++row.runs;
      ++row.result.seeds_run;
      for (const Verdict& v : ro.outcome.verdicts) {
        PropertyResult& p = row.result.properties[static_cast<int>(v.property)];
        ++p.judged;
        if (!v.ok && !p.seed) {
          p.seed = seed;
          p.message = v.message;
          if (row.first_report.empty()) row.first_report = report(recipe, ro.outcome);
        }
      }
      if (reports != nullptr) *reports << report(recipe, ro.outcome) << "\n";
      if (broken && row.result.as_expected()) break;
    }
    return row;
  }
};

// Splits off --real / --ensemble and checks the flags that make no sense on a real server.
// Returns false (after writing the error) on a usage error.
bool parse_real(int argc, char** argv, RealCheck* rc, std::vector<char*>* rest, std::ostream& err) {
  rest->push_back(argv[0]);
  int modes = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--real" || a == "--ensemble") {
      rc->ensemble = rc->ensemble || a == "--ensemble";
      ++modes;
      continue;
    }
    if (a == "--seeds" || a.rfind("--seeds=", 0) == 0) rc->seeds_given = true;
    if (a == "--jobs" || a.rfind("--jobs=", 0) == 0 || a == "--log" || a == "--trace-dir" ||
        a.rfind("--trace-dir=", 0) == 0 || a == "--no-traces" || a == "--no-shrink") {
      err << "lockstep check: " << a
          << " is not available with --real/--ensemble (one server; event logs, traces and "
             "shrinking belong to the simulator)\n";
      return false;
    }
    rest->push_back(argv[i]);
  }
  if (modes > 1) {
    err << "lockstep check: give either --real or --ensemble, not both\n";
    return false;
  }
  std::optional<CheckOptions> parsed =
      parse_check_args(static_cast<int>(rest->size()), rest->data(), err);
  if (!parsed) return false;
  rc->o = std::move(*parsed);
  if (!rc->seeds_given) rc->o.seeds = kRealDefaultSeeds;
  // --faults none is encoded by check.cc as one impossible kind; anything else must be real.
  for (FaultKind k : rc->o.faults) {
    if (static_cast<int>(k) >= zk::kFaultKindCount) continue;
    if (!real_fault_supported(k)) {
      std::string known;
      for (FaultKind r : real_fault_kinds()) known += std::string(" ") + fault_name(r);
      err << "lockstep check: fault kind '" << fault_name(k)
          << "' is simulator-only; on a real server:" << known << " (or none)\n";
      return false;
    }
  }
  return true;
}

}  // namespace

int check_real_main(int argc, char** argv, std::ostream& out, std::ostream& err, bool interactive) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--help" || a == "-h") {
      out << kRealUsage;
      return kExitOk;
    }
  }
  RealCheck rc;
  std::vector<char*> rest;
  if (!parse_real(argc, argv, &rc, &rest, err)) {
    err << "(run `lockstep check --real --help` for usage)\n";
    return kExitUsage;
  }
  std::vector<const recipes::RecipeInfo*> todo;
  if (rc.o.recipes.empty()) {
    for (const recipes::RecipeInfo& r : recipes::registry()) todo.push_back(&r);
  } else {
    for (const std::string& name : rc.o.recipes) todo.push_back(recipes::find_recipe(name));
  }

  real::ClusterOptions co;
  co.servers = rc.ensemble ? 3 : 1;
  if (std::string missing = real::server_prerequisites(co); !missing.empty()) {
    err << "lockstep check: cannot start a ZooKeeper server: " << missing << "\n";
    return kExitNoServer;
  }
  real::InterruptGuard guard;
  const double t0 = host_seconds();
  std::ostream* progress = interactive && !rc.o.json ? &err : nullptr;
  if (progress != nullptr) {
    *progress << "starting "
              << (rc.ensemble ? "a 3-server ZooKeeper ensemble" : "a ZooKeeper server")
              << " on 127.0.0.1..." << std::flush;
  }
  real::Cluster::StartResult started = real::Cluster::start(co);
  if (!started.cluster) {
    err << "\nlockstep check: cannot start a ZooKeeper server: " << started.error << "\n";
    return kExitNoServer;
  }
  rc.cluster = started.cluster.get();
  std::string server = rc.ensemble ? "ensemble of 3" : "standalone";
  server += " at " + rc.cluster->connect_string() + " (pid";
  for (int s = 1; s <= rc.cluster->size(); ++s) server += " " + std::to_string(rc.cluster->pid(s));
  server += ")";
  if (progress != nullptr) *progress << "\r" << std::string(60, ' ') << "\r" << std::flush;
  if (!rc.o.json && rc.o.seed) {
    out << "(the seed fixes the workload and the fault plan; the schedule belongs to the real "
           "server and may differ from run to run)\n";
  }
  if (!rc.o.json) {
    out << "real ZooKeeper: " << server << "; ";
    if (rc.o.seed) {
      out << "scenario " << *rc.o.seed << "\n";
    } else {
      out << "scenarios 1.." << rc.o.seeds << " (broken variants: up to "
          << std::max(rc.o.seeds, kRealBrokenSeeds) << ", until caught)\n";
    }
  }

  std::vector<RealRow> rows;
  for (const recipes::RecipeInfo* r : todo) {
    if (real::InterruptGuard::interrupted()) break;
    rows.push_back(rc.check(*r, progress, rc.o.seed && !rc.o.json ? &out : nullptr));
  }
  if (progress != nullptr) *progress << "\r" << std::string(70, ' ') << "\r" << std::flush;
  const double seconds = host_seconds() - t0;
  bool all_ok = true;
  uint64_t runs = 0;
  for (const RealRow& r : rows) {
    all_ok = all_ok && row_ok(r);
    runs += r.runs;
  }
  const bool interrupted = real::InterruptGuard::interrupted();
  if (rc.o.json) {
    nlohmann::json doc = real_json(rows, server, rc.ensemble, seconds);
    doc["interrupted"] = interrupted;
    out << doc.dump(2) << "\n";
  } else {
    print_real_table(rows, out);
    out << "\n";
    print_real_details(rows, rc.ensemble, out);
    for (const RealRow& r : rows) {
      if (!rc.o.seed && !r.first_report.empty() &&
          r.result.expected == recipes::Expected::kCorrect) {
        out << "\n" << r.first_report;
      }
    }
    char buf[200];
    std::snprintf(buf, sizeof buf, "\n%zu recipes, %llu real runs in %.1fs on the %s\n",
                  rows.size(), static_cast<unsigned long long>(runs), seconds,
                  rc.ensemble ? "3-server ensemble" : "standalone server");
    out << buf;
    if (interrupted) {
      out << "INTERRUPTED (" << real::InterruptGuard::signal_name()
          << "): the servers were stopped; the table is partial\n";
    } else {
      out << (all_ok ? "every recipe behaved as expected on the real server\n"
                     : "FAILED: a correct recipe failed, a broken variant was not caught, or the "
                       "harness failed\n");
    }
  }
  started.cluster.reset();  // stops every server by pid and removes its directory
  if (interrupted) return kExitInterrupted;
  return all_ok ? kExitOk : kExitFailure;
}

}  // namespace lockstep::properties
