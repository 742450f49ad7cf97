// How the simulator scales with the number of clients: one recipe, N clients, K lock rounds
// each, no faults, in one World; prints wall seconds, CPU seconds, peak RSS, simulated requests,
// requests per CPU-second, watch notifications per release and CPU per grant.
//
// Workload: every client joins at once and loops K times: acquire on the registry's recipe
// (one lock directory), hold for --hold-us of virtual time, release. The World keeps no text log
// (its hash is still computed), as in a property run. Each run is its own process, so the peak
// RSS is this run's: `./lockstep bench` runs this program once per row of its table.
//
// A run stops early when it has made --max-grants grants or used --max-cpu-s CPU-seconds (the
// naive lock at 10,000 clients would take days: each release wakes every waiter, and each
// wakes to list every node): the figures are then those of the grants made, and `complete`
// says false. The per-grant figures stay comparable across sizes either way.
//
// Usage (cli/cli.h's parser): lockstep_scale [--recipe R] [--clients N] [--rounds K]
//   [--hold-us U] [--seed S] [--max-grants G] [--max-cpu-s S] [--json | --row | --header]
// Exit status 0; 2 for a usage error or an unknown recipe.
#include <sys/resource.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "recipes/registry.h"
#include "sim/world.h"
#include "zk/session.h"

namespace {

using lockstep::cli::Args;
using lockstep::cli::Command;
using lockstep::cli::Io;
using lockstep::recipes::RecipeInfo;

constexpr const char* kLockPath = "/scale/lock";

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

struct Totals {
  uint64_t grants = 0;
  uint64_t releases = 0;
  uint64_t failures = 0;  // acquires or releases that failed (none expected without faults)
  uint32_t finished = 0;  // clients that did all their rounds
};

// One client's K rounds on `recipe`.
zk::Task<void> rounds(lockstep::sim::Client* c, const RecipeInfo* recipe, uint32_t k,
                      zk::Duration hold, Totals* totals) {
  lockstep::recipes::LockOptions options;
  options.path = kLockPath;
  options.client_name = c->name();
  std::unique_ptr<lockstep::recipes::Lock> lock = recipe->make(*c, options);
  for (uint32_t i = 0; i < k; ++i) {
    zk::Result<lockstep::recipes::Grant> grant = co_await lock->acquire();
    if (!grant.ok()) {
      ++totals->failures;
      continue;
    }
    ++totals->grants;
    if (hold.us > 0) (void)co_await c->context().sleep_for(hold);
    zk::Status released = co_await lock->release();
    if (released.ok()) {
      ++totals->releases;
    } else {
      ++totals->failures;
    }
  }
  ++totals->finished;
}

// One row of `./lockstep bench`'s table, and its header.
constexpr const char* kRowFormat =
    "%-12s %8" PRIu64 " %8" PRIu64 " %8.2f %8.2f %9.1f %10" PRIu64 " %12.0f %13.2f %10.1f%s\n";
constexpr const char* kHeader =
    "recipe        clients   grants   wall_s    cpu_s  rss_mib   requests  req_per_cpu_s  "
    "notif/release   us/grant\n";

int run_scale(const Command& self, const Args& args, const Io& io) {
  namespace cli = lockstep::cli;
  if (args.has("header")) {
    io.out << kHeader;
    return cli::kExitOk;
  }
  const std::string name = args.get("recipe", "fair-mutex");
  const RecipeInfo* recipe = lockstep::recipes::find_recipe(name);
  if (recipe == nullptr) {
    std::string names;
    for (const RecipeInfo& r : lockstep::recipes::registry()) {
      if (r.expected == lockstep::recipes::Expected::kCorrect) names += " " + r.name;
    }
    return cli::usage_error(self, "unknown recipe '" + name + "'; the correct recipes are:" + names,
                            io.err);
  }
  const auto clients = cli::parse_uint_flag(self, args, "clients", 100, 1, 1'000'000, io.err);
  const auto k = cli::parse_uint_flag(self, args, "rounds", 3, 1, 1'000'000, io.err);
  const auto hold_us = cli::parse_uint_flag(self, args, "hold-us", 0, 0, 60'000'000, io.err);
  const auto seed = cli::parse_uint_flag(self, args, "seed", 1, 0, UINT64_MAX, io.err);
  const auto max_grants = cli::parse_uint_flag(self, args, "max-grants", 0, 0, UINT64_MAX, io.err);
  const auto max_cpu = cli::parse_uint_flag(self, args, "max-cpu-s", 0, 0, 86'400, io.err);
  if (!clients || !k || !hold_us || !seed || !max_grants || !max_cpu) return cli::kExitUsage;

  const auto wall0 = std::chrono::steady_clock::now();
  const double cpu0 = cpu_seconds();
  lockstep::sim::WorldOptions o;
  o.seed = *seed;
  o.record_log = false;
  lockstep::sim::World world(o);
  Totals totals;
  for (uint64_t i = 0; i < *clients; ++i) {
    lockstep::sim::Client& c = world.add_client();
    c.spawn(rounds(&c, recipe, static_cast<uint32_t>(*k), zk::microseconds(*hold_us), &totals),
            "rounds");
  }
  // Steps of virtual time, so that the budgets are looked at now and then; the run is the same
  // whatever the step (events run in the same order).
  bool complete = true;
  while (totals.finished < *clients) {
    if (world.run_until_idle(world.now() + zk::seconds(1))) break;
    if ((*max_grants > 0 && totals.grants >= *max_grants) ||
        (*max_cpu > 0 && cpu_seconds() - cpu0 >= static_cast<double>(*max_cpu))) {
      complete = false;
      break;
    }
  }
  if (totals.finished < *clients) complete = false;
  const double cpu_s = cpu_seconds() - cpu0;
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  uint64_t notifications = 0;
  for (const lockstep::sim::HerdRecord& r : world.herd()) notifications += r.notifications;
  const uint64_t requests = world.requests_total();
  const double per_cpu = cpu_s > 0 ? static_cast<double>(requests) / cpu_s : 0.0;
  const double per_release =
      totals.releases > 0 ? static_cast<double>(notifications) / static_cast<double>(totals.releases)
                          : 0.0;
  const double us_per_grant =
      totals.grants > 0 ? cpu_s * 1e6 / static_cast<double>(totals.grants) : 0.0;
  const double rss = peak_rss_mib();
  char line[1024];
  if (args.has("row")) {
    std::snprintf(line, sizeof line, kRowFormat, recipe->name.c_str(), *clients, totals.grants,
                  wall_s, cpu_s, rss, requests, per_cpu, per_release, us_per_grant,
                  complete ? "" : "  (stopped early)");
  } else if (args.has("json")) {
    std::snprintf(line, sizeof line,
                  "{\"recipe\": \"%s\", \"clients\": %" PRIu64 ", \"rounds\": %" PRIu64
                  ", \"complete\": %s, \"grants\": %" PRIu64 ", \"releases\": %" PRIu64
                  ", \"failures\": %" PRIu64 ", \"wall_s\": %.3f, \"cpu_s\": %.3f, "
                  "\"peak_rss_mib\": %.1f, \"requests\": %" PRIu64
                  ", \"requests_per_cpu_s\": %.0f, \"notifications\": %" PRIu64
                  ", \"notifications_per_release\": %.2f, \"cpu_us_per_grant\": %.1f, "
                  "\"virtual_s\": %.3f, \"events\": %" PRIu64 "}\n",
                  recipe->name.c_str(), *clients, *k, complete ? "true" : "false", totals.grants,
                  totals.releases, totals.failures, wall_s, cpu_s, rss, requests, per_cpu,
                  notifications, per_release, us_per_grant,
                  static_cast<double>(world.now().us) / 1e6, world.events_executed());
  } else {
    std::snprintf(line, sizeof line,
                  "%s clients=%" PRIu64 " rounds=%" PRIu64 "%s: %" PRIu64 " grants, wall %.3f s, "
                  "CPU %.3f s, peak RSS %.1f MiB, %" PRIu64 " requests (%.0f per CPU-s), %.2f "
                  "notifications per release, %.1f CPU-us per grant\n",
                  recipe->name.c_str(), *clients, *k, complete ? "" : " (stopped early)",
                  totals.grants, wall_s, cpu_s, rss, requests, per_cpu, per_release,
                  us_per_grant);
  }
  io.out << line;
  if (totals.failures > 0) {
    io.err << "lockstep_scale: " << totals.failures
           << " acquires or releases failed in a run without faults\n";
  }
  return cli::kExitOk;
}

const Command kScale = {
    .name = "lockstep_scale",
    .summary = "How the simulator scales with clients: N clients, K lock rounds each, one recipe.",
    .positional = "",
    .flags = {{"recipe", "R", "the registry recipe (default fair-mutex)"},
              {"clients", "N", "clients, 1..1000000 (default 100)"},
              {"rounds", "K", "lock rounds per client (default 3)"},
              {"hold-us", "U", "virtual microseconds each grant is held (default 0)"},
              {"seed", "S", "the World's seed (default 1)"},
              {"max-grants", "G", "stop after G grants (0: no limit)"},
              {"max-cpu-s", "S", "stop after S CPU-seconds (0: no limit)"},
              {"json", "", "print one JSON object"},
              {"row", "", "print one row of ./lockstep bench's table"},
              {"header", "", "print that table's header and exit"}},
    .run = run_scale,
    .details = "output: one line (or one JSON object with keys recipe, clients, rounds, complete,\n"
               "grants, releases, failures, wall_s, cpu_s, peak_rss_mib, requests,\n"
               "requests_per_cpu_s, notifications, notifications_per_release, cpu_us_per_grant,\n"
               "virtual_s, events)\n"
               "exit: 0, or 2 for a usage error\n",
};

}  // namespace

int main(int argc, char** argv) { return lockstep::cli::run_program(kScale, argc, argv); }
