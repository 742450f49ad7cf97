// `lockstep explore`: systematic schedule exploration of explore/explore.h (exhaustive search
// with preemption bounding, PCT, random sampling), which parses its own flags and owns its exit
// statuses; this file only hands it the arguments (run_library_main).
#include "cli/cli.h"
#include "explore/explore.h"

namespace lockstep::cli {

const Command kExploreCommand = {
    .name = "explore",
    .summary = "Search a recipe's schedules systematically (exhaustive, PCT, random) for a bug.",
    .positional = "",
    .flags = {},
    .run = nullptr,
    .run_raw = run_library_main<explore::explore_main>,
};

}  // namespace lockstep::cli
