#include "fidelity/differential.h"

#include <array>
#include <memory>
#include <utility>

#include "real/event_loop.h"
#include "real/run.h"
#include "real/server.h"
#include "real/session.h"
#include "sim/world.h"

namespace lockstep::fidelity {
namespace {

// Requested session timeout on both backends: no faults here, so it only has to outlast the run.
constexpr zk::Duration kSessionTimeout = zk::seconds(4);
constexpr zk::Duration kConnectLimit = zk::seconds(20);

class SimDriver final : public Driver {
 public:
  explicit SimDriver(uint64_t seed) : world_(options(seed)) {
    for (int slot = 0; slot < kSlots; ++slot) {
      sim::ClientOptions o;
      o.session_timeout = kSessionTimeout;
      clients_[slot] = &world_.add_client(o);
    }
    drive_until([this] { return connected(); }, kConnectLimit);
  }

  std::string name() const override { return "sim"; }
  zk::Session& session(int slot) override { return *clients_[slot]; }
  void reopen(int slot) override { clients_[slot]->reopen(); }

  bool run(zk::Task<void> body, zk::Duration limit) override {
    zk::TaskHandle task = clients_[0]->context().spawn(std::move(body), "fidelity-body");
    return drive_until([&task] { return task.done(); }, limit);
  }

 private:
  static sim::WorldOptions options(uint64_t seed) {
    sim::WorldOptions o;
    o.seed = seed;
    o.tick = zk::milliseconds(200);  // the harness's tickTime (real/server.h)
    o.record_log = false;
    return o;
  }
  bool connected() const {
    for (sim::Client* c : clients_) {
      if (c->state() != zk::SessionState::kConnected) return false;
    }
    return true;
  }
  template <class Pred>
  bool drive_until(Pred done, zk::Duration limit) {
    const zk::Time deadline = world_.now() + limit;
    while (!done()) {
      if (world_.now() >= deadline || !world_.step()) return false;
    }
    return true;
  }

  sim::World world_;
  std::array<sim::Client*, kSlots> clients_{};
};

class RealDriver final : public Driver {
 public:
  RealDriver(const std::string& hosts, uint64_t seed) {
    for (int slot = 0; slot < kSlots; ++slot) {
      real::SessionOptions o;
      o.hosts = hosts;
      o.session_timeout = kSessionTimeout;
      o.seed = seed * kSlots + static_cast<uint64_t>(slot);
      sessions_[slot] = std::make_unique<real::RealSession>(loop_, o);
    }
    connected_ = loop_.run_until(
        [this] {
          for (auto& s : sessions_) {
            if (s->state() != zk::SessionState::kConnected) return false;
          }
          return true;
        },
        kConnectLimit.ms());
  }

  bool connected() const { return connected_; }
  std::string name() const override { return "real"; }
  zk::Session& session(int slot) override { return *sessions_[slot]; }
  void reopen(int slot) override { sessions_[slot]->reopen(); }
  bool run(zk::Task<void> body, zk::Duration limit) override {
    return real::run_task(loop_, sessions_[0]->context(), std::move(body), limit.ms());
  }

 private:
  real::EventLoop loop_;  // declared first: outlives the sessions
  std::array<std::unique_ptr<real::RealSession>, kSlots> sessions_;
  bool connected_ = false;
};

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + v[i];
  return s;
}

}  // namespace

RunResult run_on_sim(const Sequence& seq, const std::string& root, uint64_t seed) {
  SimDriver sim(seed);
  return run_sequence(sim, seq, root);
}

void compare_runs(const Sequence& seq, const std::string& root, uint64_t sequence_seed,
                  const RunResult& sim, const RunResult& real, size_t shown, Report* report) {
  report->sequences++;
  bool differs = false;
  const size_t n = std::min(sim.outcomes.size(), real.outcomes.size());
  for (size_t i = 0; i < n; ++i) {
    report->operations++;
    const Normalized a = normalize(sim.outcomes[i], root);
    const Normalized b = normalize(real.outcomes[i], root);
    const std::vector<std::string> kinds = differences(a, b);
    if (kinds.empty()) continue;
    differs = true;
    report->mismatched_ops++;
    for (const std::string& k : kinds) report->by_kind[k]++;
    if (report->shown.size() < shown) {
      report->shown.push_back(
          Mismatch{sequence_seed, i, to_string(seq[i]), join(kinds), to_string(a), to_string(b)});
    }
  }
  if (!sim.completed || !real.completed) {
    differs = true;
    report->by_kind["incomplete"]++;
    if (report->shown.size() < shown) {
      report->shown.push_back(Mismatch{sequence_seed, n, n < seq.size() ? to_string(seq[n]) : "",
                                       "incomplete",
                                       sim.completed ? "completed" : "did not complete",
                                       real.completed ? "completed" : "did not complete"});
    }
  }
  if (differs) report->mismatched_sequences++;
}

Report run_differential(const Options& options, const std::function<void(uint64_t)>& progress) {
  Report report;
  real::ClusterOptions co;
  co.servers = 1;
  real::Cluster::StartResult started = real::Cluster::start(co);
  if (!started.cluster) {
    report.server_error = started.error;
    return report;
  }
  real::Cluster& cluster = *started.cluster;
  report.server_pid = cluster.pid(1);
  report.server_address = cluster.address(1);
  for (uint64_t i = 0; i < options.sequences; ++i) {
    const uint64_t seed = options.seed + i;
    const Sequence seq = generate(seed, options.ops);
    const std::string root = "/ls" + std::to_string(seed);
    const RunResult sim = run_on_sim(seq, root, seed);
    RunResult real;
    {
      RealDriver driver(cluster.connect_string(), seed);
      if (driver.connected()) real = run_sequence(driver, seq, root);
    }
    compare_runs(seq, root, seed, sim, real, options.shown, &report);
    if (progress) progress(i + 1);
  }
  return report;  // the cluster's destructor stops the server by pid
}

}  // namespace lockstep::fidelity
