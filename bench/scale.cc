// How the simulator scales with the number of clients: one recipe, N clients, K lock rounds
// each, no faults, in one World; prints wall seconds, CPU seconds, peak RSS, simulated requests,
// requests per CPU-second, watch notifications per release and CPU per grant.
//
// Workload: every client joins at once and loops K times: acquire on the registry's recipe
// (one lock directory), hold for --hold-us of virtual time, release. The World keeps no text log,
// log hash or decision list (WorldOptions::audit off), as `lockstep check` runs its scenarios.
// Each run is its own process, so the peak
// RSS is this run's: `./lockstep bench` runs this program once per row of its table.
//
// A run stops early when it has made --max-grants grants or used --max-cpu-s CPU-seconds (the
// naive lock at 10,000 clients would take days: each release wakes every waiter, and each
// wakes to list every node): the figures are then those of the grants made, and `complete`
// says false. The per-grant figures stay comparable across sizes either way.
//
// --warmup-rounds W (below K) also measures the steady state: the CPU time and the grants
// after the grant that completes W rounds' worth (W x N grants; the fair lock grants in turn, so
// every client has then joined, connected and made its first rounds), so that the start-up does
// not weigh on the per-grant figure: the figure issue "Scale" asks to stay flat with N.
//
// Usage (cli/cli.h's parser): lockstep_scale [--recipe R] [--clients N] [--rounds K]
//   [--hold-us U] [--seed S] [--max-grants G] [--max-cpu-s S] [--warmup-rounds W]
//   [--json | --row | --header]
//   lockstep_scale --render FILE [--svg OUT]   (the table, and the plot, of saved --json runs)
// Exit status 0; 2 for a usage error or an unknown recipe.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "recipes/registry.h"
#include "sim/world.h"
#include "traces/loglog.h"
#include "traces/trace.h"
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
  // The steady state (--warmup-rounds): at the grant numbered `warm_at` (0: not measured) the
  // CPU time is taken, and the grants after it are counted.
  uint64_t warm_at = 0;
  double warm_cpu_s = -1;  // the CPU time at that grant; below 0 until it is made
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
    if (++totals->grants == totals->warm_at) totals->warm_cpu_s = cpu_seconds();
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

// One run's figures, as --json prints them and --render reads them back.
struct Row {
  std::string recipe;
  uint64_t clients = 0, rounds = 0, grants = 0, releases = 0, failures = 0, requests = 0;
  uint64_t notifications = 0, events = 0;
  bool complete = true;
  double wall_s = 0, cpu_s = 0, peak_rss_mib = 0, requests_per_cpu_s = 0;
  double notifications_per_release = 0, cpu_us_per_grant = 0, virtual_s = 0;
  // --warmup-rounds: 0 when not asked (the keys are then left out of the JSON).
  uint64_t warmup_rounds = 0, steady_grants = 0;
  double steady_cpu_s = 0, steady_cpu_us_per_grant = 0;
};

std::string table_row(const Row& r) {
  char line[512];
  std::snprintf(line, sizeof line, kRowFormat, r.recipe.c_str(), r.clients, r.grants, r.wall_s,
                r.cpu_s, r.peak_rss_mib, r.requests, r.requests_per_cpu_s,
                r.notifications_per_release, r.cpu_us_per_grant,
                r.complete ? "" : "  (stopped early)");
  return line;
}

// `v` to `digits` decimals, so the JSON prints 0.123, not 0.12300000000000001.
double rounded(double v, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::round(v * scale) / scale;
}

nlohmann::json to_json(const Row& r) {
  nlohmann::json j = {{"recipe", r.recipe},
                      {"clients", r.clients},
                      {"rounds", r.rounds},
                      {"complete", r.complete},
                      {"grants", r.grants},
                      {"releases", r.releases},
                      {"failures", r.failures},
                      {"wall_s", rounded(r.wall_s, 3)},
                      {"cpu_s", rounded(r.cpu_s, 3)},
                      {"peak_rss_mib", rounded(r.peak_rss_mib, 1)},
                      {"requests", r.requests},
                      {"requests_per_cpu_s", rounded(r.requests_per_cpu_s, 0)},
                      {"notifications", r.notifications},
                      {"notifications_per_release", rounded(r.notifications_per_release, 2)},
                      {"cpu_us_per_grant", rounded(r.cpu_us_per_grant, 1)},
                      {"virtual_s", rounded(r.virtual_s, 3)},
                      {"events", r.events}};
  if (r.warmup_rounds > 0) {
    j["warmup_rounds"] = r.warmup_rounds;
    j["steady_grants"] = r.steady_grants;
    j["steady_cpu_s"] = rounded(r.steady_cpu_s, 3);
    j["steady_cpu_us_per_grant"] = rounded(r.steady_cpu_us_per_grant, 2);
  }
  return j;
}

// A --json line back as a Row; false (and *error) when it is not one.
bool from_json(const std::string& text, Row* r, std::string* error) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    *error = "not a JSON object";
    return false;
  }
  try {
    r->recipe = j.at("recipe").get<std::string>();
    for (auto [key, field] : {std::pair{"clients", &r->clients}, {"rounds", &r->rounds},
                              {"grants", &r->grants}, {"releases", &r->releases},
                              {"failures", &r->failures}, {"requests", &r->requests},
                              {"notifications", &r->notifications}, {"events", &r->events}}) {
      *field = j.at(key).get<uint64_t>();
    }
    for (auto [key, field] :
         {std::pair{"wall_s", &r->wall_s}, {"cpu_s", &r->cpu_s},
          {"peak_rss_mib", &r->peak_rss_mib}, {"requests_per_cpu_s", &r->requests_per_cpu_s},
          {"notifications_per_release", &r->notifications_per_release},
          {"cpu_us_per_grant", &r->cpu_us_per_grant}, {"virtual_s", &r->virtual_s}}) {
      *field = j.at(key).get<double>();
    }
    r->complete = j.at("complete").get<bool>();
    if (j.contains("warmup_rounds")) {  // only a run measured in steady state has them
      r->warmup_rounds = j.at("warmup_rounds").get<uint64_t>();
      r->steady_grants = j.at("steady_grants").get<uint64_t>();
      r->steady_cpu_s = j.at("steady_cpu_s").get<double>();
      r->steady_cpu_us_per_grant = j.at("steady_cpu_us_per_grant").get<double>();
    }
  } catch (const nlohmann::json::exception& e) {
    *error = std::string("a key is missing or has the wrong type (") + e.what() + ")";
    return false;
  }
  return true;
}

// The plot of --render --svg: CPU seconds, peak RSS and CPU per grant against clients, log-log,
// one line per recipe; a run stopped at its budget is an open circle.
std::string scale_svg(const std::vector<Row>& rows) {
  using lockstep::traces::LogLogPlot;
  using lockstep::traces::LogLogPoint;
  using lockstep::traces::LogLogSeries;
  struct Panel {
    const char* id;
    const char* y_label;
    double Row::*value;
    const char* unit;
  };
  const Panel panels[] = {{"scale-cpu", "CPU seconds (log)", &Row::cpu_s, "CPU s"},
                          {"scale-rss", "peak RSS, MiB (log)", &Row::peak_rss_mib, "MiB"},
                          {"scale-grant", "CPU microseconds per grant (log)",
                           &Row::cpu_us_per_grant, "us per grant"}};
  std::string body;
  double x = 0, height = 0;
  for (const Panel& p : panels) {
    LogLogPlot plot;
    plot.id = p.id;
    plot.aria_label = std::string(p.y_label) + " against clients";
    plot.x_label = "clients (log)";
    plot.y_label = p.y_label;
    plot.width = 300;
    plot.height = 260;
    plot.floor = 1e-4;
    for (const Row& r : rows) {
      auto it = std::find_if(plot.series.begin(), plot.series.end(),
                             [&](const LogLogSeries& s) { return s.name == r.recipe; });
      if (it == plot.series.end()) it = plot.series.insert(plot.series.end(), {r.recipe, {}});
      char title[160];
      std::snprintf(title, sizeof title, "%s, %" PRIu64 " clients: %.3g %s%s", r.recipe.c_str(),
                    r.clients, r.*p.value, p.unit,
                    r.complete ? "" : " (stopped at its CPU budget)");
      it->points.push_back(
          LogLogPoint{static_cast<double>(r.clients), r.*p.value, title, !r.complete});
    }
    body += "<g transform=\"translate(" + std::to_string(static_cast<int>(x)) + " 0)\">\n" +
            lockstep::traces::loglog_svg(plot) + "</g>\n";
    x += lockstep::traces::loglog_svg_width(plot);
    height = std::max(height, lockstep::traces::loglog_svg_height(plot));
  }
  const std::string w = std::to_string(static_cast<int>(x));
  const std::string h = std::to_string(static_cast<int>(height));
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + w + "\" height=\"" + h +
         "\" viewBox=\"0 0 " + w + " " + h + "\" font-family=\"sans-serif\" font-size=\"11\">\n" +
         "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n" + body + "</svg>\n";
}

// --render FILE [--svg OUT]: the table of the --json lines in FILE (one run per line), and the
// plot written to OUT atomically.
int render(const Command& self, const Args& args, const Io& io) {
  namespace cli = lockstep::cli;
  const std::string path = args.get("render", "");
  std::ifstream in(path);
  if (!in) {
    return cli::usage_error(self, "cannot read '" + path + "': give the file the --json runs "
                                  "were written to, one object per line", io.err);
  }
  std::vector<Row> rows;
  std::string line;
  for (size_t n = 1; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    Row r;
    std::string error;
    if (!from_json(line, &r, &error)) {
      return cli::usage_error(self, path + ":" + std::to_string(n) + ": " + error +
                                        "; each line must be one object lockstep_scale --json "
                                        "printed",
                              io.err);
    }
    rows.push_back(std::move(r));
  }
  io.out << kHeader;
  for (const Row& r : rows) io.out << table_row(r);
  if (args.has("svg")) {
    std::string error;
    if (!lockstep::traces::write_file_atomically(args.get("svg", ""), scale_svg(rows), &error)) {
      return cli::usage_error(self, "cannot write the plot: " + error, io.err);
    }
  }
  return cli::kExitOk;
}

int run_scale(const Command& self, const Args& args, const Io& io) {
  namespace cli = lockstep::cli;
  if (args.has("header")) {
    io.out << kHeader;
    return cli::kExitOk;
  }
  if (args.has("render")) return render(self, args, io);
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
  const auto warmup = cli::parse_uint_flag(self, args, "warmup-rounds", 0, 0, 1'000'000, io.err);
  if (!clients || !k || !hold_us || !seed || !max_grants || !max_cpu || !warmup) {
    return cli::kExitUsage;
  }
  if (*warmup >= *k) {
    const std::string why = "--warmup-rounds " + std::to_string(*warmup) +
                            " leaves no round to measure of --rounds " + std::to_string(*k) +
                            ": give fewer warm-up rounds than rounds (e.g. --rounds 30 "
                            "--warmup-rounds 10)";
    return cli::usage_error(self, why, io.err);
  }

  const auto wall0 = std::chrono::steady_clock::now();
  const double cpu0 = cpu_seconds();
  lockstep::sim::WorldOptions o;
  o.seed = *seed;
  o.record_log = false;
  o.audit = false;  // no hash, no decision list: as `lockstep check` runs its scenarios
  lockstep::sim::World world(o);
  Totals totals;
  totals.warm_at = *warmup * *clients;
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
  Row row;
  row.recipe = recipe->name;
  row.clients = *clients;
  row.rounds = *k;
  row.complete = complete;
  row.grants = totals.grants;
  row.releases = totals.releases;
  row.failures = totals.failures;
  row.wall_s = wall_s;
  row.cpu_s = cpu_s;
  row.peak_rss_mib = peak_rss_mib();
  row.requests = requests;
  row.requests_per_cpu_s = per_cpu;
  row.notifications = notifications;
  row.notifications_per_release = per_release;
  row.cpu_us_per_grant = us_per_grant;
  row.virtual_s = static_cast<double>(world.now().us) / 1e6;
  row.events = world.events_executed();
  if (*warmup > 0) {
    row.warmup_rounds = *warmup;
    if (totals.warm_cpu_s >= 0) {  // a run stopped before the warm-up ended measured none
      row.steady_grants = totals.grants - totals.warm_at;
      row.steady_cpu_s = cpu0 + cpu_s - totals.warm_cpu_s;
      row.steady_cpu_us_per_grant =
          row.steady_grants > 0 ? row.steady_cpu_s * 1e6 / static_cast<double>(row.steady_grants)
                                : 0.0;
    }
  }
  std::string line;
  if (args.has("row")) {
    line = table_row(row);
  } else if (args.has("json")) {
    line = to_json(row).dump() + "\n";
  } else {
    char text[512];
    std::snprintf(text, sizeof text,
                  "%s clients=%" PRIu64 " rounds=%" PRIu64 "%s: %" PRIu64 " grants, wall %.3f s, "
                  "CPU %.3f s, peak RSS %.1f MiB, %" PRIu64 " requests (%.0f per CPU-s), %.2f "
                  "notifications per release, %.1f CPU-us per grant\n",
                  row.recipe.c_str(), row.clients, row.rounds,
                  complete ? "" : " (stopped early)", row.grants, wall_s, cpu_s,
                  row.peak_rss_mib, requests, per_cpu, per_release, us_per_grant);
    line = text;
    if (row.warmup_rounds > 0) {
      std::snprintf(text, sizeof text,
                    "  steady state, after %" PRIu64 " warm-up rounds: %" PRIu64
                    " grants, CPU %.3f s, %.2f CPU-us per grant\n",
                    row.warmup_rounds, row.steady_grants, row.steady_cpu_s,
                    row.steady_cpu_us_per_grant);
      line += text;
    }
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
              {"warmup-rounds", "W",
               "also measure the steady state: CPU per grant after the first W rounds' grants "
               "(W x N; W below K; 0: not measured)"},
              {"json", "", "print one JSON object"},
              {"row", "", "print one row of ./lockstep bench's table"},
              {"header", "", "print that table's header and exit"},
              {"render", "FILE",
               "print the table of the --json runs in FILE (one per line) instead of running"},
              {"svg", "OUT",
               "with --render: also write the plot (CPU s, peak RSS, CPU per grant against "
               "clients, log-log) to OUT"}},
    .run = run_scale,
    .details =
        "output: one line (or one JSON object with keys recipe, clients, rounds, complete,\n"
        "grants, releases, failures, wall_s, cpu_s, peak_rss_mib, requests,\n"
        "requests_per_cpu_s, notifications, notifications_per_release, cpu_us_per_grant,\n"
        "virtual_s, events; with --warmup-rounds also warmup_rounds, steady_grants,\n"
        "steady_cpu_s, steady_cpu_us_per_grant)\n"
        "exit: 0, or 2 for a usage error\n",
};

}  // namespace

int main(int argc, char** argv) { return lockstep::cli::run_program(kScale, argc, argv); }
