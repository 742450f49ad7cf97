// The same fair-mutex workload on the simulator and on Debian's real ZooKeeper server, in one
// run: lock cycles (acquire + release) per second of wall time on each, and their ratio.
//
// Workload: N clients (--clients, default 16: what DESIGN §6 sets its target on), each looping
// acquire / release on the registry's "fair-mutex" recipe under one lock directory, no hold time,
// no faults. The lock loop is one coroutine written against zk::Session, so the very same code
// runs on a sim::World client and on a real::RealSession.
//   - simulator: one World (seed 42, no text log, no log hash or decision list, as `lockstep
//     check` runs its scenarios), stepped 10 ms of virtual time at a time until --seconds of wall
//     time have passed; also reports cycles per virtual second (what the simulated server's
//     latency model allows) and per wall second (how fast the simulator computes them).
//   - real: a standalone server started here (real/ harness, tickTime 200, forceSync on, a
//     fresh temporary directory, stopped by pid at the end), N RealSessions on one EventLoop,
//     warmed up for 0.5 s, then measured for --seconds of wall time.
// Figures depend on the machine and its load; the ratio is the point: how many real lock
// cycles one simulated second of wall time stands for.
//
// Usage (cli/cli.h's parser): lockstep_sim_vs_real [--clients N] [--seconds S] (whole seconds).
// Exit status 0, 1 when the real server cannot be started (the message says how to install it),
// 2 for a usage error.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "real/event_loop.h"
#include "real/server.h"
#include "real/session.h"
#include "recipes/registry.h"
#include "sim/world.h"
#include "zk/session.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kLockPath = "/bench-sim-vs-real/lock";
// DESIGN §6: the simulator runs at least 300 times the real server's lock cycles at 16 clients.
constexpr uint32_t kTargetClients = 16;
constexpr double kTargetRatio = 300;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct LoopState {
  uint64_t cycles = 0;    // completed acquire + release pairs
  uint64_t failures = 0;  // acquires or releases that failed (none expected without faults)
  bool stop = false;      // set by the driver; each loop ends after its current cycle
  uint32_t running = 0;   // loops not yet finished
};

// One client's acquire / release loop on `recipe` until state->stop.
zk::Task<void> lock_loop(zk::Session* session, const lockstep::recipes::RecipeInfo* recipe,
                         std::string name, LoopState* state) {
  lockstep::recipes::LockOptions options;
  options.path = kLockPath;
  options.client_name = name;
  std::unique_ptr<lockstep::recipes::Lock> lock = recipe->make(*session, options);
  while (!state->stop) {
    zk::Result<lockstep::recipes::Grant> grant = co_await lock->acquire();
    if (!grant.ok()) {
      ++state->failures;
      continue;
    }
    zk::Status released = co_await lock->release();
    if (released.ok()) {
      ++state->cycles;
    } else {
      ++state->failures;
    }
  }
  --state->running;
}

struct Figures {
  uint64_t cycles = 0;
  uint64_t failures = 0;
  double wall_s = 0;
  double virtual_s = 0;  // simulator only
};

Figures run_sim(const lockstep::recipes::RecipeInfo* recipe, uint32_t clients, double seconds) {
  lockstep::sim::WorldOptions options;
  options.seed = 42;
  options.record_log = false;
  options.audit = false;  // as `lockstep check` runs its scenarios (properties::Keep)
  lockstep::sim::World world(options);
  LoopState state;
  for (uint32_t i = 0; i < clients; ++i) {
    lockstep::sim::Client& c = world.add_client();
    ++state.running;
    c.spawn(lock_loop(&c, recipe, "c" + std::to_string(i + 1), &state), "lock-loop");
  }
  world.run_for(zk::milliseconds(100));  // sessions connect, the directory exists
  const uint64_t before = state.cycles;
  const zk::Time virtual_before = world.now();
  const Clock::time_point t0 = Clock::now();
  while (seconds_since(t0) < seconds) world.run_for(zk::milliseconds(10));
  Figures f;
  f.wall_s = seconds_since(t0);
  f.cycles = state.cycles - before;
  f.failures = state.failures;
  f.virtual_s = static_cast<double>((world.now() - virtual_before).us) / 1e6;
  return f;
}

Figures run_real(const lockstep::recipes::RecipeInfo* recipe, uint32_t clients, double seconds,
                 std::string* error) {
  Figures f;
  lockstep::real::Cluster::StartResult started =
      lockstep::real::Cluster::start(lockstep::real::ClusterOptions{});
  if (!started.cluster) {
    *error = started.error;
    return f;
  }
  lockstep::real::EventLoop loop;
  std::vector<std::unique_ptr<lockstep::real::RealSession>> sessions;
  LoopState state;
  for (uint32_t i = 0; i < clients; ++i) {
    lockstep::real::SessionOptions o;
    o.hosts = started.cluster->connect_string();
    o.seed = i + 1;
    sessions.push_back(std::make_unique<lockstep::real::RealSession>(loop, o));
    ++state.running;
    sessions.back()->context().spawn(
        lock_loop(sessions.back().get(), recipe, "c" + std::to_string(i + 1), &state), "lock-loop");
  }
  loop.run_for(zk::milliseconds(500));  // connect, make the directory, warm the JIT
  const uint64_t before = state.cycles;
  const uint64_t failures_before = state.failures;
  const Clock::time_point t0 = Clock::now();
  loop.run_for(zk::microseconds(static_cast<int64_t>(seconds * 1e6)));
  f.wall_s = seconds_since(t0);
  f.cycles = state.cycles - before;
  f.failures = state.failures - failures_before;
  state.stop = true;
  if (!loop.run_until([&] { return state.running == 0; }, 10000)) {
    *error = "the lock loops did not stop within 10 s";
  }
  sessions.clear();  // before the cluster: close the sessions, then stop the server by pid
  return f;
}

int run_compare(const lockstep::cli::Command& self, const lockstep::cli::Args& args,
                const lockstep::cli::Io& io) {
  const auto clients_flag = lockstep::cli::parse_uint_flag(self, args, "clients", kTargetClients, 1, 64, io.err);
  const auto seconds_flag = lockstep::cli::parse_uint_flag(self, args, "seconds", 3, 1, 600, io.err);
  if (!clients_flag || !seconds_flag) return lockstep::cli::kExitUsage;
  const uint32_t clients = static_cast<uint32_t>(*clients_flag);
  const double seconds = static_cast<double>(*seconds_flag);
  const lockstep::recipes::RecipeInfo* recipe = lockstep::recipes::find_recipe("fair-mutex");
  if (recipe == nullptr) {
    std::fprintf(stderr, "lockstep_sim_vs_real: the registry has no recipe named fair-mutex\n");
    return 1;
  }
  std::printf("fair-mutex, %u clients looping acquire/release, no hold, no faults; %.1f s each\n",
              clients, seconds);
  const Figures sim = run_sim(recipe, clients, seconds);
  const double sim_rate = sim.cycles / sim.wall_s;
  std::printf(
      "simulator:  %10llu cycles in %.2f s wall = %10.0f cycles/s  (%.1f virtual s: "
      "%.0f cycles per virtual s; %llu failed)\n",
      static_cast<unsigned long long>(sim.cycles), sim.wall_s, sim_rate, sim.virtual_s,
      sim.virtual_s > 0 ? sim.cycles / sim.virtual_s : 0.0,
      static_cast<unsigned long long>(sim.failures));
  std::string error;
  const Figures real = run_real(recipe, clients, seconds, &error);
  if (!error.empty()) {
    std::fprintf(stderr,
                 "lockstep_sim_vs_real: real server: %s\n(install Debian's ZooKeeper server with "
                 "`%s`, or run ./lockstep bench, which installs it)\n",
                 error.c_str(), lockstep::real::kServerInstallCommand);
    return 1;
  }
  const double real_rate = real.cycles / real.wall_s;
  std::printf(
      "real:       %10llu cycles in %.2f s wall = %10.0f cycles/s  (standalone server, "
      "forceSync on; %llu failed)\n",
      static_cast<unsigned long long>(real.cycles), real.wall_s, real_rate,
      static_cast<unsigned long long>(real.failures));
  if (real_rate > 0) {
    const double ratio = sim_rate / real_rate;
    std::printf("ratio:      the simulator runs %.1fx the real server's lock cycles per second\n",
                ratio);
    if (clients == kTargetClients) {
      std::printf("DESIGN §6 target: >= %.0fx at %u clients — %s.\n", kTargetRatio, kTargetClients,
                  ratio >= kTargetRatio ? "met" : "short");
    }
  }
  return 0;
}

const lockstep::cli::Command kCompare = {
    .name = "lockstep_sim_vs_real",
    .summary = "The same fair-mutex loop on the simulator and on a real ZooKeeper server started "
               "on 127.0.0.1: lock cycles per second on each.",
    .positional = "",
    .flags = {{"clients", "N", "clients looping acquire/release, 1..64 (default 16)"},
              {"seconds", "S", "wall seconds on each side, 1..600 (default 3)"}},
    .run = run_compare,
    .details = "exit: 0, 1 the real side failed, 2 usage error\n",
};

}  // namespace

int main(int argc, char** argv) { return lockstep::cli::run_program(kCompare, argc, argv); }
