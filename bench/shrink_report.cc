// shrink_report: how small `lockstep check`'s saved traces are — for every deliberately broken
// variant in the registry, the first seed check catches it at (traces::first_failing_seed), and
// the history events and simulator events of that seed's run as check ran it, after the scenario
// phase of the shrinker alone, and after the whole shrinker (scenario, then schedule:
// traces::shrink_failure), with the shrunk scenario's clients, rounds and faults and the runs the
// shrinker used. DESIGN §6's target is at most 40 history events for every variant;
// traces_test's ShrinkReport test holds every variant to it.
//
// Flags (cli/cli.h's parser): [--recipe NAME] [--seeds N] [--max-runs N] [--scenarios]. The wall clock is read
// here, for the table's ms column only. Exit (cli/cli.h): 0 when every variant's shrunk trace
// still violates its property within 40 history events, 1 otherwise, 2 on a usage error.
#include <cstdio>
#include <ostream>
#include <string>

#include "cli/cli.h"
#include "explore/wall_clock.h"
#include "properties/claims.h"
#include "recipes/registry.h"
#include "traces/record.h"

namespace lockstep::traces {
namespace {

constexpr uint64_t kTargetHistory = 40;  // DESIGN §6

std::string cell(const RunFigures& f) {
  return std::to_string(f.history) + " / " + std::to_string(f.sim_events);
}

int print_report(const std::string& only, uint64_t seeds, uint32_t max_runs, bool scenarios,
                 std::ostream& out) {
  char line[512];
  std::snprintf(line, sizeof line, "%-36s %5s %-18s %-12s %-12s %-12s %-9s %5s %7s\n", "variant",
                "seed", "property", "as run", "scenario", "shrunk", "c/r/f", "runs", "ms");
  out << line << "(history events / simulator events; c/r/f: the shrunk scenario's clients, "
                 "rounds and faults)\n";
  bool all_ok = true;
  ShrinkOptions options;
  options.max_runs = max_runs;
  for (const recipes::RecipeInfo& recipe : recipes::registry()) {
    if (recipe.expected != recipes::Expected::kBroken) continue;
    if (!only.empty() && recipe.name != only) continue;
    const explore::Stopwatch clock;
    const std::optional<VariantShrink> v = shrink_variant(recipe, seeds, options);
    if (!v) {
      out << recipe.name << ": not caught in seeds 1.." << seeds << "\n";
      all_ok = false;
      continue;
    }
    const RunFigures shrunk = figures_of(v->shrunk.trace);
    const bool ok = v->still_violated && shrunk.history <= kTargetHistory;
    all_ok = all_ok && ok;
    const std::string crf = std::to_string(shrunk.clients) + "/" + std::to_string(shrunk.rounds) +
                            "/" + std::to_string(shrunk.faults);
    std::snprintf(line, sizeof line, "%-36s %5llu %-18s %-12s %-12s %-12s %-9s %5u %7.0f%s\n",
                  recipe.name.c_str(), static_cast<unsigned long long>(v->seed),
                  properties::to_string(v->property), cell(v->as_run).c_str(),
                  cell(v->scenario_only).c_str(), cell(shrunk).c_str(), crf.c_str(),
                  v->shrunk.runs, clock.elapsed_ms(),
                  !v->still_violated ? "  LOST THE VIOLATION"
                  : ok               ? ""
                                     : "  OVER 40");
    out << line;
    if (scenarios) out << "    " << properties::describe(v->shrunk.trace.scenario) << "\n";
    out.flush();
  }
  return all_ok ? cli::kExitOk : cli::kExitFailure;
}

int run_report(const cli::Command& self, const cli::Args& args, const cli::Io& io) {
  const auto seeds = cli::parse_uint_flag(self, args, "seeds", 2000, 1, 1000000, io.err);
  const auto max_runs =
      cli::parse_uint_flag(self, args, "max-runs", ShrinkOptions{}.max_runs, 1, 1000000, io.err);
  if (!seeds || !max_runs) return cli::kExitUsage;
  const std::string only = args.get("recipe", "");
  if (!only.empty() && recipes::find_recipe(only) == nullptr) {
    return cli::usage_error(self, "unknown recipe '" + only + "' (`lockstep list` names them)",
                            io.err);
  }
  return print_report(only, *seeds, static_cast<uint32_t>(*max_runs), args.has("scenarios"),
                      io.out);
}

const cli::Command kShrinkReport = {
    .name = "shrink_report",
    .summary =
        "For every broken variant: the history events / simulator events of the seed check "
        "catches it at, as run, after shrinking its scenario, and after shrinking its schedule.",
    .positional = "",
    .flags = {{"recipe", "NAME", "only this broken variant"},
              {"seeds", "N", "look for the catching seed in 1..N (default 2000)"},
              {"max-runs", "N", "the shrinker's run budget (default: check's)"},
              {"scenarios", "", "print each shrunk scenario under its row"}},
    .run = run_report,
    .details = "exit: 0 every shrunk trace keeps its violation within 40 history events, 1 "
               "otherwise, 2 usage error\n",
};

}  // namespace
}  // namespace lockstep::traces

int main(int argc, char** argv) {
  return lockstep::cli::run_program(lockstep::traces::kShrinkReport, argc, argv);
}
