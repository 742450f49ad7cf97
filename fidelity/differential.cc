#include "fidelity/differential.h"

#include <algorithm>
#include <array>
#include <memory>
#include <optional>
#include <set>
#include <utility>

#include "fidelity/cases.h"
#include "fidelity/shrink.h"
#include "real/check_support.h"
#include "real/event_loop.h"
#include "real/proxy.h"
#include "real/run.h"
#include "real/server.h"
#include "real/session.h"
#include "sim/world.h"

namespace lockstep::fidelity {
namespace {

constexpr zk::Duration kConnectLimit = zk::seconds(20);

class SimDriver final : public Driver {
 public:
  SimDriver(uint64_t seed, int servers, zk::Duration session_timeout)
      : world_(options(seed, servers)), servers_(servers) {
    for (int slot = 0; slot < kSlots; ++slot) {
      sim::ClientOptions o;
      o.session_timeout = session_timeout;
      if (servers > 1) o.server = static_cast<uint32_t>(slot + 1);
      clients_[slot] = &world_.add_client(o);
    }
    drive_until([this] { return connected(); }, kConnectLimit);
  }

  bool connected() const {
    for (sim::Client* c : clients_) {
      if (c->state() != zk::SessionState::kConnected) return false;
    }
    return true;
  }
  std::string name() const override { return "sim"; }
  zk::Session& session(int slot) override { return *clients_[slot]; }
  void reopen(int slot) override { clients_[slot]->reopen(); }
  int servers() const override { return servers_; }

  bool run(zk::Task<void> body, zk::Duration limit) override {
    zk::TaskHandle task = clients_[0]->context().spawn(std::move(body), "fidelity-body");
    return drive_until([&task] { return task.done(); }, limit);
  }

  void lose(int slot, Lose what) override {
    inject(what == Lose::kReply ? sim::FaultKind::kLoseNextReply : sim::FaultKind::kLoseNextRequest,
           slot);
  }
  void cut(int slot) override { inject(sim::FaultKind::kConnectionLoss, slot); }
  void expire(int slot) override { inject(sim::FaultKind::kExpireSession, slot); }
  void partition(int slot, bool on, zk::Duration duration) override {
    if (on) inject(sim::FaultKind::kPartition, slot, duration);
  }
  void restart_begin(int server, zk::Duration down) override {
    sim::Fault f;
    f.kind = sim::FaultKind::kServerRestart;
    f.at = world_.now();
    f.server = static_cast<uint32_t>(server);
    f.duration = down;
    world_.inject(f);
  }
  void restart_end(int) override {}

 private:
  static sim::WorldOptions options(uint64_t seed, int servers) {
    sim::WorldOptions o;
    o.seed = seed;
    o.servers = static_cast<uint32_t>(servers);
    o.tick = zk::milliseconds(200);  // the harness's tickTime (real/server.h)
    o.record_log = false;
    return o;
  }
  void inject(sim::FaultKind kind, int slot, zk::Duration duration = {}) {
    sim::Fault f;
    f.kind = kind;
    f.at = world_.now();
    f.client = static_cast<uint32_t>(slot + 1);
    f.duration = duration;
    world_.inject(f);
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
  int servers_;
  std::array<sim::Client*, kSlots> clients_{};
};

// The real servers in the simulator's numbering: 1 is the leader (or the standalone server),
// then the followers by id.
std::vector<int> simulator_order(const real::Cluster& cluster) {
  std::vector<int> order;
  const int leader = cluster.leader();
  order.push_back(leader != 0 ? leader : 1);
  for (int id = 1; id <= cluster.size(); ++id) {
    if (id != order[0]) order.push_back(id);
  }
  return order;
}

// Every slot talks to its server through its own proxy (real/proxy.h), which injects the
// network faults.
class RealDriver final : public Driver {
 public:
  RealDriver(real::Cluster& cluster, uint64_t seed, zk::Duration session_timeout)
      : cluster_(cluster), order_(simulator_order(cluster)) {
    for (int slot = 0; slot < kSlots; ++slot) {
      const int server = cluster.size() == 1 ? order_[0] : order_[static_cast<size_t>(slot)];
      std::string error;
      proxies_[slot] = real::Proxy::start(cluster.client_port(server), &error);
      if (!proxies_[slot]) {
        error_ = "could not start a proxy: " + error;
        return;
      }
      real::SessionOptions o;
      o.hosts = proxies_[slot]->address();
      o.session_timeout = session_timeout;
      o.seed = seed * kSlots + static_cast<uint64_t>(slot);
      sessions_[slot] = std::make_unique<real::RealSession>(loop_, o);
    }
    connected_ = error_.empty() && loop_.run_until(
                                       [this] {
                                         for (auto& s : sessions_) {
                                           if (s->state() != zk::SessionState::kConnected)
                                             return false;
                                         }
                                         return true;
                                       },
                                       kConnectLimit.ms());
  }

  bool connected() const { return connected_; }
  const std::string& error() const { return error_; }
  std::string name() const override { return "real"; }
  zk::Session& session(int slot) override { return *sessions_[slot]; }
  void reopen(int slot) override { sessions_[slot]->reopen(); }
  int servers() const override { return cluster_.size(); }
  bool run(zk::Task<void> body, zk::Duration limit) override {
    return real::run_task(loop_, sessions_[0]->context(), std::move(body), limit.ms());
  }

  void lose(int slot, Lose what) override {
    const std::set<int32_t> mutations = {real::kOpCreate, real::kOpCreate2, real::kOpDelete,
                                         real::kOpSetData};
    if (what == Lose::kReply) {
      proxies_[slot]->drop_reply_to(mutations);
    } else {
      proxies_[slot]->drop_request_to(mutations);
    }
  }
  void cut(int slot) override { proxies_[slot]->cut(); }
  void expire(int slot) override {
    if (!sessions_[slot]->id().valid()) return;
    (void)real::expire_session(cluster_, cluster_.connect_string(), sessions_[slot]->credentials(),
                               proxies_[slot].get());
  }
  void partition(int slot, bool on, zk::Duration) override { proxies_[slot]->set_blackhole(on); }
  void restart_begin(int server, zk::Duration) override {
    cluster_.stop(order_[static_cast<size_t>(server - 1)]);
  }
  void restart_end(int server) override {
    const std::string error = cluster_.restart(order_[static_cast<size_t>(server - 1)]);
    if (!error.empty()) restart_error_ = error;
  }
  const std::string& restart_error() const { return restart_error_; }

 private:
  real::Cluster& cluster_;
  std::vector<int> order_;
  std::array<std::unique_ptr<real::Proxy>, kSlots> proxies_;  // outlive the loop's sessions
  real::EventLoop loop_;  // declared before the sessions: outlives them
  std::array<std::unique_ptr<real::RealSession>, kSlots> sessions_;
  bool connected_ = false;
  std::string error_;
  std::string restart_error_;
};

// The run of a driver whose sessions did not all connect: nothing ran.
RunResult not_connected() {
  RunResult r;
  r.stopped =
      "its sessions did not all connect within " + std::to_string(kConnectLimit.ms() / 1000) + " s";
  return r;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + v[i];
  return s;
}

}  // namespace

RunResult run_on_sim(const Sequence& seq, const std::string& root, uint64_t seed, int servers) {
  SimDriver sim(seed, servers, GenerateOptions{}.session_timeout);
  if (!sim.connected()) return not_connected();
  return run_sequence(sim, seq, root);
}

std::optional<size_t> compare_runs(const Sequence& seq, const std::string& root,
                                   uint64_t sequence_seed, const RunResult& sim,
                                   const RunResult& real, size_t shown, Report* report,
                                   const std::function<void(const std::string&)>& each_op) {
  report->sequences++;
  std::optional<size_t> first;
  const size_t n = std::min(sim.outcomes.size(), real.outcomes.size());
  for (size_t i = 0; i < n; ++i) {
    report->operations++;
    const bool t = timed(seq[i]);
    const Normalized a = normalize(sim.outcomes[i], root, t);
    const Normalized b = normalize(real.outcomes[i], root, t);
    const std::vector<std::string> kinds = differences(a, b);
    if (t) {
      report->timed_ops++;
      add_skews(a, b, &report->skew_ms);
    }
    if (each_op) {
      each_op(std::to_string(sequence_seed) + " #" + std::to_string(i) + " " + to_string(seq[i]) +
              (kinds.empty() ? "" : "  [" + join(kinds) + "]") + "\n    sim:  " + to_string(a) +
              "\n    real: " + to_string(b));
    }
    if (kinds.empty()) continue;
    if (!first) first = i;
    report->mismatched_ops++;
    for (const std::string& k : kinds) report->by_kind[k]++;
    if (report->shown.size() < shown) {
      report->shown.push_back(
          Mismatch{sequence_seed, i, to_string(seq[i]), join(kinds), to_string(a), to_string(b)});
    }
  }
  if (!sim.completed || !real.completed) {
    if (!first) first = n;
    report->by_kind["incomplete"]++;
    if (report->shown.size() < shown) {
      report->shown.push_back(Mismatch{sequence_seed, n, n < seq.size() ? to_string(seq[n]) : "",
                                       "incomplete",
                                       sim.completed ? "completed" : "stopped: " + sim.stopped,
                                       real.completed ? "completed" : "stopped: " + real.stopped});
    }
  }
  if (first) report->mismatched_sequences++;
  return first;
}

std::string disturbance(const RunResult& sim, const RunResult& real) {
  // The real run stopped short where the simulator's finished: its sessions did not connect in
  // time (a starved ensemble), or its body ran past the limit.
  if (sim.completed && !real.completed) {
    return "the real run stopped where the simulator's completed: " +
           (real.stopped.empty() ? std::string("it stopped early") : real.stopped);
  }
  auto disconnected = [](const RawOutcome& o) {
    std::array<bool, kSlots> slots{};
    for (const RawEvent& e : o.events) {
      if (e.subscription && e.state == zk::SessionState::kConnecting) slots[e.slot] = true;
    }
    return slots;
  };
  const size_t n = std::min(sim.outcomes.size(), real.outcomes.size());
  for (size_t i = 0; i < n; ++i) {
    const std::array<bool, kSlots> s = disconnected(sim.outcomes[i]);
    const std::array<bool, kSlots> r = disconnected(real.outcomes[i]);
    for (int slot = 0; slot < kSlots; ++slot) {
      if (r[slot] && !s[slot]) {
        return "slot " + std::to_string(slot) + "'s real session dropped its connection at op #" +
               std::to_string(i) + ", where the simulator's did not";
      }
    }
  }
  return "";
}

bool disturbed(const RunResult& sim, const RunResult& real) {
  return !disturbance(sim, real).empty();
}

namespace {

// Runs `seq` on the real server (fresh sessions through fresh proxies); a proxy or restart
// failure goes to *setup_error (the run is then not evidence of anything).
RunResult run_on_real(real::Cluster& cluster, const Sequence& seq, const std::string& root,
                      uint64_t seed, std::string* setup_error) {
  RunResult real;
  RealDriver driver(cluster, seed, GenerateOptions{}.session_timeout);
  real = driver.connected() ? run_sequence(driver, seq, root) : not_connected();
  if (!driver.error().empty() && setup_error->empty()) *setup_error = driver.error();
  if (!driver.restart_error().empty() && setup_error->empty()) {
    *setup_error = "a server restart failed: " + driver.restart_error();
  }
  return real;
}

// Runs `seq` on both backends under `root`; a run that disturbed() calls disturbed by the
// machine is run again (both sides, after the cluster is made whole) under a fresh root
// ("<root>-r1", ...), at most kDisturbedReruns times; each rerun adds to *reruns why it was
// made (disturbance()). What the last runs give is compared like any other: a difference that
// every rerun shows is a mismatch.
std::pair<RunResult, RunResult> run_both(real::Cluster& cluster, const Sequence& seq,
                                         std::string* root, uint64_t seed, int servers,
                                         std::string* setup_error,
                                         std::vector<std::string>* reruns) {
  const std::string base = *root;
  RunResult sim = run_on_sim(seq, *root, seed, servers);
  RunResult real = run_on_real(cluster, seq, *root, seed, setup_error);
  for (int rerun = 1; rerun <= kDisturbedReruns && setup_error->empty(); ++rerun) {
    std::string why = disturbance(sim, real);
    if (why.empty()) break;
    reruns->push_back(*root + ": " + why);
    const std::string e = real::ensure_healthy(cluster, 30000);
    if (!e.empty()) {
      *setup_error = "the cluster was not whole before a rerun: " + e;
      break;
    }
    *root = base + "-r" + std::to_string(rerun);
    sim = run_on_sim(seq, *root, seed, servers);
    real = run_on_real(cluster, seq, *root, seed, setup_error);
  }
  return {std::move(sim), std::move(real)};
}

std::vector<Normalized> normalized(const Sequence& seq, const RunResult& run,
                                   const std::string& root) {
  std::vector<Normalized> out;
  for (size_t i = 0; i < run.outcomes.size() && i < seq.size(); ++i) {
    out.push_back(normalize(run.outcomes[i], root, timed(seq[i])));
  }
  return out;
}

struct Started {
  std::unique_ptr<real::Cluster> cluster;
  std::string error;
};

Started start_cluster(int servers) {
  real::ClusterOptions co;
  co.servers = servers;
  real::Cluster::StartResult started = real::Cluster::start(co);
  return Started{std::move(started.cluster), started.error};
}

// Shrinks a mismatching sequence and saves it as a case; returns the saved path ("" and a
// reason in *why when it could not).
std::string shrink_and_save(real::Cluster& cluster, const Options& options, uint64_t seed,
                            const Sequence& seq, size_t first_bad, size_t* shrunk_to,
                            std::string* why) {
  std::string setup_error;
  uint64_t runs = 0;  // a fresh root for each of the shrinker's runs on the one server
  auto differs = [&](const Sequence& candidate) {
    std::string root = "/lss" + std::to_string(seed) + "-" + std::to_string(++runs);
    std::vector<std::string> reruns;
    const auto [sim, real] =
        run_both(cluster, candidate, &root, seed, options.servers, &setup_error, &reruns);
    Report scratch;
    return setup_error.empty() &&
           compare_runs(candidate, root, seed, sim, real, 0, &scratch).has_value();
  };
  const ShrinkResult r = shrink(seq, first_bad, options.servers, differs);
  if (!r.reproduced) {
    *why = "the mismatch did not reproduce on a second run (timing?)";
    return "";
  }
  Case c;
  c.name =
      free_case_name(options.cases_dir,
                     "mismatch-" + std::string(options.servers == 1 ? "standalone" : "ensemble") +
                         "-seed" + std::to_string(seed));
  c.servers = options.servers;
  c.found = "lockstep conformance --sequences 1 --seed " + std::to_string(seed) + " --ops " +
            std::to_string(options.ops) + (options.faults ? "" : " --no-faults") +
            (options.servers == 1 ? "" : " --ensemble") + " (op #" + std::to_string(first_bad) +
            "), shrunk from " + std::to_string(seq.size()) + " to " +
            std::to_string(r.sequence.size()) + " operations in " + std::to_string(r.calls) +
            " runs";
  c.note =
      "a mismatch between the simulator and the real server: fix the simulator, or name the "
      "difference as a server freedom in fidelity/compare.h";
  c.operations = r.sequence;
  const std::string root = "/lsr" + std::to_string(seed) + "-" + std::to_string(++runs);
  const RunResult real = run_on_real(cluster, c.operations, root, seed, &setup_error);
  if (!real.completed || !setup_error.empty()) {
    *why = "the shrunk sequence did not complete on the real server: " +
           (setup_error.empty() ? real.stopped : setup_error);
    return "";
  }
  c.real = normalized(c.operations, real, root);
  *shrunk_to = c.operations.size();
  return save_case(options.cases_dir, c, why);
}

}  // namespace

Report run_differential(const Options& options,
                        const std::function<bool(uint64_t)>& keep_going) {
  Report report;
  Started started = start_cluster(options.servers);
  if (!started.cluster) {
    report.server_error = started.error;
    return report;
  }
  real::Cluster& cluster = *started.cluster;
  report.server_pid = cluster.pid(1);
  report.server_address = cluster.address(1);
  GenerateOptions g;
  g.faults = options.faults;
  g.servers = options.servers;
  for (uint64_t i = 0; i < options.sequences; ++i) {
    const uint64_t seed = options.seed + i;
    const Sequence seq = generate(seed, options.ops, g);
    std::string root = "/ls" + std::to_string(seed);
    const auto [sim, real] =
        run_both(cluster, seq, &root, seed, options.servers, &report.setup_error, &report.reruns);
    if (keep_going && !keep_going(i)) {
      report.stopped = true;
      break;
    }
    report.faults += static_cast<uint64_t>(std::count_if(seq.begin(), seq.end(), is_fault));
    const std::optional<size_t> first_bad =
        compare_runs(seq, root, seed, sim, real, options.shown, &report, options.each_op);
    if (first_bad && !options.cases_dir.empty() &&
        report.saved.size() + report.not_saved.size() < options.shrink_max &&
        report.setup_error.empty()) {
      size_t shrunk_to = 0;
      std::string why;
      const std::string path = shrink_and_save(
          cluster, options, seed, seq, std::min(*first_bad, seq.size() - 1), &shrunk_to, &why);
      if (path.empty()) {
        report.not_saved.push_back("seed " + std::to_string(seed) + ": " + why);
      } else {
        report.saved.push_back(path + " (" + std::to_string(shrunk_to) + " operations)");
      }
    }
  }
  return report;  // the cluster's destructor stops the server by pid
}

RecordResult record_case(const Options& options, const std::string& name, const std::string& note) {
  RecordResult out;
  Started started = start_cluster(options.servers);
  if (!started.cluster) {
    out.server_error = started.error;
    return out;
  }
  GenerateOptions g;
  g.faults = options.faults;
  g.servers = options.servers;
  Case c;
  c.name = name;
  c.servers = options.servers;
  c.note = note;
  c.found = "lockstep conformance --record " + name + " --seed " + std::to_string(options.seed) +
            " --ops " + std::to_string(options.ops) + (options.faults ? "" : " --no-faults") +
            (options.servers == 1 ? "" : " --ensemble");
  c.operations = generate(options.seed, options.ops, g);
  const std::string root = "/lsr" + std::to_string(options.seed);
  std::string setup_error;
  const RunResult real =
      run_on_real(*started.cluster, c.operations, root, options.seed, &setup_error);
  if (!setup_error.empty() || !real.completed) {
    out.error = "the sequence did not complete on the real server: " +
                (setup_error.empty() ? real.stopped : setup_error);
    return out;
  }
  c.real = normalized(c.operations, real, root);
  const RunResult sim = run_on_sim(c.operations, root, options.seed, options.servers);
  out.sim_differences = check_case(c, sim, root);
  out.path = save_case(options.cases_dir, c, &out.error);
  return out;
}

CaseRun run_case(const Case& c, real::Cluster* cluster, uint64_t seed) {
  CaseRun out;
  // One run per case and server: the case's name makes the root fresh.
  std::string root = "/lsc-" + c.name;
  if (cluster == nullptr) {
    out.sim = check_case(c, run_on_sim(c.operations, root, seed, c.servers), root);
    return out;
  }
  // A real run disturbed by the machine (disturbed(): a disconnect the simulator's run does not
  // show) is run again, as in run_differential.
  std::string setup_error;
  const auto [sim, real] =
      run_both(*cluster, c.operations, &root, seed, c.servers, &setup_error, &out.reruns);
  out.sim = check_case(c, sim, root);
  out.real = check_case(c, real, root);
  if (!setup_error.empty()) out.real.push_back(setup_error);
  out.real_ran = true;
  return out;
}

CasesReport run_cases(const std::vector<Case>& cases, bool with_real) {
  CasesReport out;
  std::map<int, Started> clusters;
  for (const Case& c : cases) {
    real::Cluster* cluster = nullptr;
    if (with_real) {
      auto it = clusters.find(c.servers);
      if (it == clusters.end()) it = clusters.emplace(c.servers, start_cluster(c.servers)).first;
      if (!it->second.cluster) {
        out.server_error = it->second.error;
        return out;
      }
      cluster = it->second.cluster.get();
    }
    out.runs.emplace_back(c.name, run_case(c, cluster, 1));
  }
  return out;
}

}  // namespace lockstep::fidelity
