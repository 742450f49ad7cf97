// `lockstep check`: the main job — every recipe and broken variant of the registry through the
// property suite in the simulator (properties/check.h owns the flags, the table and the exit
// status; this file only hands it the arguments).
#include <unistd.h>

#include <iostream>

#include "cli/cli.h"
#include "properties/check.h"

namespace lockstep::cli {
namespace {

int run_check(const std::vector<std::string>& args) {
  return call_with_argv(args, [](int argc, char** argv) {
    return properties::check_main(argc, argv, std::cout, std::cerr, isatty(STDOUT_FILENO) != 0);
  });
}

}  // namespace

const Command kCheckCommand = {
    .name = "check",
    .summary = "Check every recipe and broken variant against the property suite (the main job).",
    .positional = "",
    .flags = {},
    .run = nullptr,
    .run_raw = run_check,
};

}  // namespace lockstep::cli
