// A local speed check of the simulator (not a test, not lockstep_bench): 16 clients run
// the fair-lock-like loop with text logging off. It prints the simulated request count; time
// the process from the shell (`time sim_perf 2000`), since sim/ reads no clock.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "sim/test_workload.h"
#include "sim/world.h"

int main(int argc, char** argv) {
  using namespace lockstep::sim;
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 1000;
  const uint32_t clients = argc > 2 ? static_cast<uint32_t>(std::atoi(argv[2])) : 16;
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
  return 0;
}
