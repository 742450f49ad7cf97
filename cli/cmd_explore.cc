// `lockstep explore`: systematic schedule exploration of explore/explore.h (exhaustive search
// with preemption bounding, PCT, random sampling), which parses its own flags and owns its exit
// statuses; this file only hands it the arguments.
#include <iostream>

#include "cli/cli.h"
#include "explore/explore.h"

namespace lockstep::cli {
namespace {

int run_explore(const std::vector<std::string>& args) {
  return call_with_argv(args, [](int argc, char** argv) {
    return explore::explore_main(argc, argv, std::cout, std::cerr);
  });
}

}  // namespace

const Command kExploreCommand = {
    .name = "explore",
    .summary = "Search a recipe's schedules systematically (exhaustive, PCT, random) for a bug.",
    .positional = "",
    .flags = {},
    .run = nullptr,
    .run_raw = run_explore,
};

}  // namespace lockstep::cli
