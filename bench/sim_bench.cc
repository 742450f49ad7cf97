// Simulator throughput: how many simulated ZooKeeper requests one core pushes through a World.
//
// BM_ChurnLoop/N: N clients, each looping create-ephemeral-sequential / get-children / delete
// under one directory, no faults: the simulator's raw request path.
// BM_FairMutex/N: N clients, each looping acquire / release on the registry's "fair-mutex"
// recipe (the workload DESIGN §6 sets its target on).
// BM_FaultScenario: the DESIGN §6 scenario target — fault-injected scenarios of the fair mutex
// with 5 clients and 20 rounds each, every fault kind the recipe claims to survive drawn as in
// `lockstep check` (seed i for iteration i), run in the simulator and judged by every
// applicable property; items_per_second = scenarios per second of CPU time. Always the same
// work, seeds 1..kFaultScenarios (not as many as fit in a time, which would make a slower
// moment of the machine measure fewer and other scenarios), three times: the summary gives the
// median of the three and their range.
// Counters: items_per_second = simulated requests per second of CPU time; virtual_s_per_s =
// virtual seconds simulated per second of CPU time; grants_per_s (fair mutex) = lock grants per
// second of CPU time. The event log keeps no text, is not hashed and the scheduler's decisions are
// not listed (sim::WorldOptions::audit off), as in a `lockstep check` run (properties::Keep).
//
// After the runs, main() prints each rate against the DESIGN §6 targets (>= 1,000,000 simulated
// requests per second per core, fair lock with 16 clients; >= 1,000 fault-injected 5-client,
// 20-round scenarios per second per core) and where the project stands. BM_FaultScenario's
// counters: requests_per_scenario, events_per_scenario (simulator events: what a scenario's
// cost follows) and violations (0: the fair mutex is correct).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "properties/claims.h"
#include "properties/scenario.h"
#include "properties/suite.h"
#include "recipes/registry.h"
#include "sim/world.h"
#include "zk/session.h"

namespace {

using lockstep::sim::Client;
using lockstep::sim::World;
using lockstep::sim::WorldOptions;

constexpr double kTargetRequestsPerSecond = 1'000'000;
constexpr double kTargetScenariosPerSecond = 1'000;
constexpr int64_t kFaultScenarios = 1'000;  // BM_FaultScenario's seeds, 1..kFaultScenarios
constexpr int kFaultRepetitions = 3;
constexpr const char* kDir = "/bench";

// Creates kDir if needed; gives up after a few failures (there are no faults here).
zk::Task<void> ensure_dir(Client* c) {
  for (int attempt = 0; attempt < 4; ++attempt) {
    zk::Result<zk::Created> r = co_await c->create(kDir, "", zk::CreateMode::kPersistent);
    if (r.ok() || r.error == zk::Error::kNodeExists) co_return;
  }
}

// One client's endless loop; it ends when the World (and with it this frame) is destroyed.
zk::Task<void> churn(Client* c) {
  co_await ensure_dir(c);
  const std::string prefix = std::string(kDir) + "/n-";
  for (;;) {
    zk::Result<zk::Created> made =
        co_await c->create(prefix, "", zk::CreateMode::kEphemeralSequential);
    if (!made.ok()) continue;
    zk::Result<zk::Children> kids = co_await c->get_children(kDir);
    benchmark::DoNotOptimize(kids);
    zk::Status gone = co_await c->remove(made.value.path);
    benchmark::DoNotOptimize(gone);
  }
}

// One client's endless acquire / release loop on `recipe`; `grants` counts successful acquires.
zk::Task<void> lock_loop(Client* c, const lockstep::recipes::RecipeInfo* recipe, uint64_t* grants) {
  lockstep::recipes::LockOptions options;
  options.path = "/bench/lock";
  options.client_name = c->name();
  std::unique_ptr<lockstep::recipes::Lock> lock = recipe->make(*c, options);
  for (;;) {
    zk::Result<lockstep::recipes::Grant> grant = co_await lock->acquire();
    if (!grant.ok()) continue;
    ++*grants;
    zk::Status released = co_await lock->release();
    benchmark::DoNotOptimize(released);
  }
}

// Runs `world` in steps of virtual time and reports requests and virtual time per CPU second.
void measure(benchmark::State& state, World& world) {
  world.run_for(zk::milliseconds(100));  // sessions connect, directories exist
  const uint64_t requests_before = world.requests_total();
  const zk::Time virtual_before = world.now();
  for (auto _ : state) world.run_for(zk::milliseconds(10));
  const uint64_t requests = world.requests_total() - requests_before;
  const double virtual_s = static_cast<double>((world.now() - virtual_before).us) / 1e6;
  state.SetItemsProcessed(static_cast<int64_t>(requests));
  state.counters["virtual_s_per_s"] = benchmark::Counter(virtual_s, benchmark::Counter::kIsRate);
  state.counters["requests_per_virtual_s"] =
      benchmark::Counter(virtual_s > 0 ? static_cast<double>(requests) / virtual_s : 0.0);
}

void BM_ChurnLoop(benchmark::State& state) {
  WorldOptions options;
  options.seed = 42;
  options.record_log = false;
  options.audit = false;
  World world(options);
  for (int64_t i = 0; i < state.range(0); ++i) {
    Client& c = world.add_client();
    c.context().spawn(churn(&c), "churn");
  }
  measure(state, world);
}
void BM_FairMutex(benchmark::State& state) {
  const lockstep::recipes::RecipeInfo* recipe = lockstep::recipes::find_recipe("fair-mutex");
  if (recipe == nullptr) {
    state.SkipWithError("the registry has no recipe named fair-mutex");
    return;
  }
  WorldOptions options;
  options.seed = 42;
  options.record_log = false;
  options.audit = false;
  World world(options);
  uint64_t grants = 0;
  for (int64_t i = 0; i < state.range(0); ++i) {
    Client& c = world.add_client();
    c.spawn(lock_loop(&c, recipe, &grants), "lock-loop");
  }
  measure(state, world);
  state.counters["grants_per_s"] =
      benchmark::Counter(static_cast<double>(grants), benchmark::Counter::kIsRate);
}
// One fault-injected scenario per iteration (seeds 1, 2, ...): 5 clients x 20 rounds of the
// fair mutex, run and judged. The seed's generated plan is kept; only the shape is fixed.
void BM_FaultScenario(benchmark::State& state) {
  namespace props = lockstep::properties;
  const lockstep::recipes::RecipeInfo* recipe = lockstep::recipes::find_recipe("fair-mutex");
  if (recipe == nullptr) {
    state.SkipWithError("the registry has no recipe named fair-mutex");
    return;
  }
  const props::Claims claims = props::claims_for(*recipe);
  props::GenerateOptions options = props::generate_options(*recipe, claims, {});
  options.min_clients = options.max_clients = 5;
  options.max_rounds = 20;
  uint64_t seed = 0, requests = 0, events = 0, violations = 0;
  for (auto _ : state) {
    props::Scenario s = props::generate_scenario(++seed, options);
    s.workload.rounds = 20;
    props::finish_scenario(&s);
    const props::SeedOutcome o = props::run_scenario(*recipe, claims, std::move(s));
    requests += o.run.requests;
    events += o.run.sim_events;
    if (o.first_violation() != nullptr) ++violations;
  }
  state.SetItemsProcessed(static_cast<int64_t>(seed));
  state.counters["requests_per_scenario"] =
      benchmark::Counter(seed > 0 ? static_cast<double>(requests) / static_cast<double>(seed) : 0);
  state.counters["events_per_scenario"] =
      benchmark::Counter(seed > 0 ? static_cast<double>(events) / static_cast<double>(seed) : 0);
  state.counters["violations"] = benchmark::Counter(static_cast<double>(violations));
}
BENCHMARK(BM_FaultScenario)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(kFaultScenarios)
    ->Repetitions(kFaultRepetitions);

BENCHMARK(BM_FairMutex)
    ->ArgName("clients")
    ->Arg(1)
    ->Arg(4)
    ->Arg(16)
    ->Arg(64)
    ->Unit(benchmark::kMillisecond);

BENCHMARK(BM_ChurnLoop)
    ->ArgName("clients")
    ->Arg(1)
    ->Arg(4)
    ->Arg(16)
    ->Arg(64)
    ->Unit(benchmark::kMillisecond);

// Prints the usual console table and remembers each run's request rate for the summary.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      if (r.run_type != Run::RT_Iteration || r.error_occurred) continue;
      auto it = r.counters.find("items_per_second");
      // Named without the fixed iterations and repetitions ("BM_FaultScenario"), so that each
      // repetition is one rate of one benchmark.
      std::string name = r.run_name.function_name;
      if (!r.run_name.args.empty()) name += "/" + r.run_name.args;
      if (it != r.counters.end()) rates_.emplace_back(std::move(name), it->second.value);
    }
  }
  const std::vector<std::pair<std::string, double>>& rates() const { return rates_; }

 private:
  std::vector<std::pair<std::string, double>> rates_;  // in the order the runs finished
};

void print_summary(const std::vector<std::pair<std::string, double>>& rates) {
  if (rates.empty()) return;
  std::printf("\nSimulated ZooKeeper requests per second of CPU time (one core):\n");
  for (const auto& [name, rate] : rates) {
    if (name == "BM_FaultScenario") continue;  // scenarios, not requests: reported below
    std::printf("  %-34s %12.0f  (%5.1f%% of the target)\n", name.c_str(), rate,
                100.0 * rate / kTargetRequestsPerSecond);
  }
  std::printf(
      "DESIGN §6 target: >= %.0f simulated requests/s per core (on the fair lock with 16 "
      "clients).\n",
      kTargetRequestsPerSecond);
  std::vector<double> scenarios;  // BM_FaultScenario's rate in each repetition
  for (const auto& [name, r] : rates) {
    if (name == "BM_FaultScenario") scenarios.push_back(r);
  }
  if (!scenarios.empty()) {
    std::sort(scenarios.begin(), scenarios.end());
    const size_t n = scenarios.size();
    const double median =
        n % 2 == 1 ? scenarios[n / 2] : (scenarios[n / 2 - 1] + scenarios[n / 2]) / 2;
    std::printf(
        "Fault-injected 5-client, 20-round scenarios (seeds 1..%lld, %zu run(s)): %.0f per CPU "
        "second (the median; %.0f to %.0f) (DESIGN §6 target: >= %.0f) — %s.\n",
        static_cast<long long>(kFaultScenarios), n, median, scenarios.front(), scenarios.back(),
        kTargetScenariosPerSecond, median >= kTargetScenariosPerSecond ? "met" : "short");
  }
  for (const auto& [name, r] : rates) {
    if (name != "BM_FairMutex/clients:16") continue;
    if (r >= kTargetRequestsPerSecond) {
      std::printf(
          "Where it stands: the fair mutex with 16 clients runs %.0f requests/s — the "
          "target is met.\n",
          r);
    } else {
      std::printf(
          "Where it stands: the fair mutex with 16 clients runs %.0f requests/s — %.1fx "
          "short of the target.\n",
          r, kTargetRequestsPerSecond / r);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  print_summary(reporter.rates());
  return 0;
}
