// `lockstep herd`: the herd report (properties/herd.h). For each recipe asked and each waiter
// count, N waiters queued behind one holder in the simulator, no faults; each release's watch
// notifications and the requests that followed, per release and for the whole run (measured, or
// projected from the releases measured, and marked as such). --json prints the same as one JSON
// document; --html FILE writes a self-contained page with an SVG plot (traces/herd_page.h).
// Exit codes (cli/cli.h): 0 measured, 1 a recipe did not hand the lock on (the message says
// how), 2 a usage error, 130 interrupted (Ctrl-C, SIGTERM, SIGHUP: the rows measured are
// reported). On a terminal a progress line names the row being measured.
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "properties/herd.h"
#include "properties/host_progress.h"
#include "recipes/registry.h"
#include "traces/herd_page.h"
#include "traces/trace.h"

namespace lockstep::cli {
namespace {

constexpr uint32_t kMaxWaiters = 10000;
// Without --releases: every release of a run with up to kAllUpTo waiters, the first
// kDefaultReleases beyond (the naive lock at 1,000 waiters costs ~0.2 s of CPU per release).
constexpr uint32_t kAllUpTo = 100;
constexpr uint32_t kDefaultReleases = 20;

struct Request {
  std::vector<const recipes::RecipeInfo*> recipes;
  std::vector<uint32_t> waiters;
  uint32_t releases = 0;  // 0: every release up to kAllUpTo waiters, kDefaultReleases beyond
  uint64_t seed = 1;
  bool json = false;
  std::string html;
};

std::string recipe_names() {
  std::string out;
  for (const recipes::RecipeInfo& r : recipes::registry()) {
    out += (out.empty() ? "" : ", ") + r.name;
  }
  return out;
}

// The flags, checked into *r; false after printing a usage error.
bool parse_request(const Command& self, const Args& args, Request* r, std::ostream& err) {
  const auto fail = [&](const std::string& message) {
    usage_error(self, message, err);
    return false;
  };
  std::vector<std::string> names = args.all("recipe");
  if (names.empty()) names = {"naive-mutex", "fair-mutex"};
  for (const std::string& name : names) {
    const recipes::RecipeInfo* info = recipes::find_recipe(name);
    if (info == nullptr) {
      return fail("unknown recipe '" + name + "' (known: " + recipe_names() + ")");
    }
    if (std::find(r->recipes.begin(), r->recipes.end(), info) == r->recipes.end()) {
      r->recipes.push_back(info);
    }
  }
  const std::string list = args.get("waiters", "10,100,1000");
  for (const std::string& item : split_list(list)) {
    uint32_t n = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), n);
    if (ec != std::errc() || end != item.data() + item.size() || n < 1 || n > kMaxWaiters) {
      return fail("--waiters wants a comma-separated list of whole numbers from 1 to " +
                  std::to_string(kMaxWaiters) + ", e.g. 10,100,1000; '" + item + "' in '" + list +
                  "' is not one");
    }
    if (std::find(r->waiters.begin(), r->waiters.end(), n) == r->waiters.end()) {
      r->waiters.push_back(n);
    }
  }
  if (r->waiters.empty()) return fail("--waiters wants at least one count, e.g. 10,100,1000");
  std::sort(r->waiters.begin(), r->waiters.end());
  const auto releases = parse_uint_flag(self, args, "releases", 0, 1, kMaxWaiters, err);
  const auto seed = parse_uint_flag(self, args, "seed", 1, 0, UINT64_MAX / 2, err);
  if (!releases || !seed) return false;
  r->releases = static_cast<uint32_t>(*releases);
  r->seed = *seed;
  r->json = args.has("json");
  if (args.has("html")) {
    r->html = args.get("html", "");
    if (r->html.empty()) return fail("--html needs a file name, e.g. --html herd.html");
  }
  return true;
}

std::string fixed(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// "get_children 5.5, delete 1.0": the measured releases' requests by operation, per release.
std::string by_op(const properties::HerdResult& h) {
  std::map<std::string, uint64_t> sum;
  for (const properties::ReleaseCost& c : h.measured) {
    for (const auto& [op, n] : c.requests_by_op) sum[op] += n;
  }
  std::string out;
  for (const auto& [op, n] : sum) {
    out +=
        (out.empty() ? "" : ", ") + op + " " +
        fixed(static_cast<double>(n) / static_cast<double>(std::max<size_t>(1, h.measured.size())));
  }
  return out;
}

void print_table(const std::vector<properties::HerdResult>& all, std::ostream& out) {
  std::vector<std::vector<std::string>> rows = {{"RECIPE", "WAITERS", "MEASURED", "NOTIF/RELEASE",
                                                 "REQ/RELEASE", "RUN NOTIF", "RUN REQ",
                                                 "REQUESTS BY OP (PER RELEASE)"}};
  for (const properties::HerdResult& h : all) {
    const std::string tag = h.total_measured ? " (measured)" : " (projected)";
    rows.push_back({h.recipe, std::to_string(h.waiters),
                    std::to_string(h.measured.size()) + " of " + std::to_string(h.releases_in_run),
                    fixed(h.notifications_per_release), fixed(h.requests_per_release),
                    std::to_string(h.total_notifications) + tag,
                    std::to_string(h.total_requests) + tag, by_op(h)});
  }
  print_columns(rows, out);
}

nlohmann::ordered_json to_json(const std::vector<properties::HerdResult>& all, const Request& r) {
  nlohmann::ordered_json doc;
  doc["seed"] = r.seed;
  doc["releases_limit"] = r.releases;  // 0: the default (all up to 100 waiters, 20 beyond)
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const properties::HerdResult& h : all) {
    nlohmann::ordered_json j;
    j["recipe"] = h.recipe;
    j["waiters"] = h.waiters;
    j["releases_in_run"] = h.releases_in_run;
    j["releases_measured"] = h.measured.size();
    j["notifications_per_release"] = h.notifications_per_release;
    j["requests_per_release"] = h.requests_per_release;
    j["run_total_measured"] = h.total_measured;
    j["run_notifications"] = h.total_notifications;
    j["run_requests"] = h.total_requests;
    j["setup_notifications"] = h.setup_notifications;
    j["setup_requests"] = h.setup_requests;
    nlohmann::ordered_json releases = nlohmann::ordered_json::array();
    for (const properties::ReleaseCost& c : h.measured) {
      nlohmann::ordered_json rc;
      rc["release"] = c.index;
      rc["waiting"] = c.waiting;
      rc["notifications"] = c.notifications;
      rc["requests_caused"] = c.requests_caused;
      rc["requests"] = c.requests;
      rc["requests_by_op"] = c.requests_by_op;
      releases.push_back(std::move(rc));
    }
    j["releases"] = std::move(releases);
    rows.push_back(std::move(j));
  }
  doc["results"] = std::move(rows);
  return doc;
}

int run_herd(const Command& self, const Args& args, const Io& io) {
  Request r;
  if (!parse_request(self, args, &r, io.err)) return kExitUsage;
  std::vector<properties::HerdResult> all;
  // A Ctrl-C (SIGINT, SIGTERM, SIGHUP) stops after the row in progress; the rows measured are
  // reported. On a terminal a progress line says which row runs.
  const properties::StopSignals signals;
  const size_t rows = r.recipes.size() * r.waiters.size();
  {
    properties::ProgressLine line(io.interactive && !r.json ? &io.err : nullptr);
    for (const recipes::RecipeInfo* recipe : r.recipes) {
      for (uint32_t n : r.waiters) {
        if (properties::StopSignals::stopped()) break;
        line.update("  herd: row " + std::to_string(all.size() + 1) + " of " +
                    std::to_string(rows) + ", " + recipe->name + " with " + std::to_string(n) +
                    " waiters, " + properties::human_seconds(line.elapsed_s()) + " so far");
        properties::HerdOptions o;
        o.waiters = n;
        o.releases = r.releases != 0 ? r.releases : n <= kAllUpTo ? n : kDefaultReleases;
        o.seed = r.seed;
        all.push_back(properties::measure_herd(*recipe, o));
      }
    }
  }  // the line is wiped before the report
  std::string names;
  for (const recipes::RecipeInfo* recipe : r.recipes) {
    names += (names.empty() ? "" : ", ") + recipe->name;
  }
  std::string counts;
  for (uint32_t n : r.waiters) counts += (counts.empty() ? "" : ",") + std::to_string(n);
  const std::string subtitle =
      "lockstep herd: " + names + "; waiters " + counts + "; no faults; seed " +
      std::to_string(r.seed) + "; " +
      (r.releases != 0 ? "at most " + std::to_string(r.releases) + " releases measured per run"
                       : "every release measured up to " + std::to_string(kAllUpTo) +
                             " waiters, the first " + std::to_string(kDefaultReleases) + " beyond");
  if (r.json) {
    io.out << to_json(all, r).dump(2) << "\n";
  } else {
    io.out << subtitle << "\n";
    print_table(all, io.out);
    io.out << "NOTIF: watch notifications a release's delete delivered; REQ: requests every client "
              "sent until all waited again (the release's delete included). RUN: the whole run, "
              "one release per waiter: measured when every release was, else projected (each "
              "release's cost fitted as a + b x waiting over the measured ones, summed over the "
              "queue lengths N..1).\n";
  }
  int code = kExitOk;
  for (const properties::HerdResult& h : all) {
    if (!h.error.empty()) {
      io.err << "lockstep herd: " << h.recipe << " with " << h.waiters << " waiters: " << h.error
             << "\n";
      code = kExitFailure;
    }
  }
  if (properties::StopSignals::stopped()) {
    io.err << "lockstep herd: INTERRUPTED (" << properties::StopSignals::signal_name() << "): "
           << all.size() << " of " << rows << " rows measured; "
           << (r.json ? "the JSON holds" : "the table holds") << " those"
           << (r.html.empty() ? "" : "; no page was written") << "\n";
    return kExitInterrupted;
  }
  if (!r.html.empty()) {
    std::string error;
    if (!traces::write_file_atomically(r.html, traces::render_herd_html(all, subtitle), &error)) {
      io.err << "lockstep herd: could not write " << r.html << ": " << error << "\n";
      return kExitUsage;
    }
    if (!r.json) io.out << "page: " << r.html << "\n";
  }
  return code;
}

}  // namespace

const Command kHerdCommand = {
    .name = "herd",
    .summary =
        "Measure the herd effect: watch notifications and requests per lock release with "
        "N waiters queued, per recipe; table, JSON or an HTML page with a log-log plot.",
    .positional = "",
    .flags =
        {
            {"recipe", "NAME",
             "a registry name (see `lockstep list`); repeatable; default naive-mutex and "
             "fair-mutex"},
            {"waiters", "LIST", "comma-separated waiter counts, 1..10000 (default 10,100,1000)"},
            {"releases", "K",
             "measure at most the first K releases of each run, 1..10000 (default: all up to 100 "
             "waiters, 20 beyond); the whole run's totals are then projected"},
            {"seed", "N", "the simulated world's seed (default 1)"},
            {"json", "", "print the results (every measured release) as one JSON document"},
            {"html", "FILE",
             "also write a self-contained HTML page: an SVG plot, log-log, of notifications per "
             "release against waiters, one line per recipe, and the table"},
        },
    .run = run_herd,
    .details =
        "Each run: one holder, N waiters queued behind it in the simulator with no faults, then\n"
        "each holder releases in turn. Per release: the notifications its delete delivered and\n"
        "the requests every client sent until all waited again. Without --releases every\n"
        "release is measured up to 100 waiters and the first 20 beyond; the whole run's totals\n"
        "are then projected (a + b x waiting fitted to the measured releases) and say so.\n"
        "exit: 0 measured, 1 a recipe did not hand the lock on (the message says how), 2 usage\n"
        "      error (unknown recipe: the message lists the names; a bad --waiters list; an\n"
        "      --html file that cannot be written), 130 interrupted (Ctrl-C, SIGTERM, SIGHUP:\n"
        "      the rows measured are reported, no page is written)\n"
        "On a terminal a progress line names the row being measured.\n",
};

}  // namespace lockstep::cli
