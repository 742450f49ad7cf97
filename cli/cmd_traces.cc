// `lockstep replay | recheck | show | corpus`: the trace subcommands of traces/commands.h, which
// parse their own flags and own their exit statuses (traces/FORMAT.md); this file only hands
// them the arguments (run_library_main).
#include "cli/cli.h"
#include "traces/commands.h"

namespace lockstep::cli {

const Command kReplayCommand = {
    .name = "replay",
    .summary = "Re-run a saved trace's decisions and compare the run with it, event by event.",
    .positional = "FILE",
    .flags = {},
    .run = nullptr,
    .run_raw = run_library_main<traces::replay_main>,
};

const Command kRecheckCommand = {
    .name = "recheck",
    .summary = "Run saved traces' scenarios against the current code and print the verdicts now.",
    .positional = "FILE...",
    .flags = {},
    .run = nullptr,
    .run_raw = run_library_main<traces::recheck_main>,
};

const Command kShowCommand = {
    .name = "show",
    .summary = "Print a trace as a timeline (--html OUT: also a swim-lane page).",
    .positional = "FILE",
    .flags = {},
    .run = nullptr,
    .run_raw = run_library_main<traces::show_main>,
};

const Command kCorpusCommand = {
    .name = "corpus",
    .summary =
        "Regenerate the regression corpus: a failing trace per broken variant, a passing one per "
        "triaged seed.",
    .positional = "",
    .flags = {},
    .run = nullptr,
    .run_raw = run_library_main<traces::corpus_main>,
};

}  // namespace lockstep::cli
