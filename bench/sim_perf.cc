// A local speed check of the simulator (not a test, not lockstep_bench): 16 clients run
// the fair-lock-like loop with text logging off. It prints the simulated request count; time
// the process from the shell (`time sim_perf --rounds 2000`), since sim/ reads no clock. Flags
// (cli/cli.h's parser): [--rounds N] [--clients N].
#include <cstdio>
#include <vector>

#include "cli/cli.h"
#include "sim/test_workload.h"
#include "sim/world.h"

namespace {

int run_perf(const lockstep::cli::Command& self, const lockstep::cli::Args& args,
             const lockstep::cli::Io& io) {
  using namespace lockstep::sim;
  const auto rounds_flag = lockstep::cli::parse_uint_flag(self, args, "rounds", 1000, 1, 1000000, io.err);
  const auto clients_flag = lockstep::cli::parse_uint_flag(self, args, "clients", 16, 1, 256, io.err);
  if (!rounds_flag || !clients_flag) return lockstep::cli::kExitUsage;
  const int rounds = static_cast<int>(*rounds_flag);
  const uint32_t clients = static_cast<uint32_t>(*clients_flag);
  WorldOptions o;
  o.seed = 1;
  o.record_log = false;
  World w(o);
  std::vector<testing::LoopStats> stats(clients);
  for (uint32_t i = 1; i <= clients; ++i) w.add_client();
  w.client(1).spawn(testing::make_lock_dir(&w.client(1)), "setup");
  w.run_for(zk::milliseconds(5));
  for (uint32_t i = 1; i <= clients; ++i) {
    w.client(i).spawn(
        testing::fair_lock_rounds(&w.client(i), rounds, zk::microseconds(10), &stats[i - 1]),
        "loop");
  }
  w.run_until_idle(zk::kNever);
  long acquired = 0;
  for (const auto& s : stats) acquired += s.acquired;
  std::printf("clients=%u rounds=%d acquired=%ld requests=%llu events=%llu log=%llu hash=%016llx\n",
              clients, rounds, acquired, static_cast<unsigned long long>(w.requests_total()),
              static_cast<unsigned long long>(w.events_executed()),
              static_cast<unsigned long long>(w.log().size()),
              static_cast<unsigned long long>(w.log().hash()));
  return lockstep::cli::kExitOk;
}

const lockstep::cli::Command kPerf = {
    .name = "sim_perf",
    .summary = "A local speed check of the simulator: clients loop on a fair lock; time it from "
               "the shell.",
    .positional = "",
    .flags = {{"rounds", "N", "lock rounds per client (default 1000)"},
              {"clients", "N", "clients, 1..256 (default 16)"}},
    .run = run_perf,
    .details = "exit: 0, or 2 for a usage error\n",
};

}  // namespace

int main(int argc, char** argv) { return lockstep::cli::run_program(kPerf, argc, argv); }
