// `lockstep check`: the main job — every recipe and broken variant of the registry through the
// property suite in the simulator (properties/check.h owns the flags, the table and the exit
// status; this file hands it the arguments and the trace saver, traces::save_check_failure, which
// the properties library cannot call itself because traces/ depends on it).
#include <unistd.h>

#include <iostream>

#include "cli/cli.h"
#include "properties/check.h"
#include "traces/record.h"
#ifdef LOCKSTEP_HAVE_REAL
#include "properties/check_real.h"  // --real / --ensemble
#endif

namespace lockstep::cli {
namespace {

// --real / --ensemble: the same table against a real ZooKeeper server (properties/check_real.h).
int run_check_real(const std::vector<std::string>& args) {
#ifdef LOCKSTEP_HAVE_REAL
  return call_with_argv(args, [](int argc, char** argv) {
    return properties::check_real_main(argc, argv, std::cout, std::cerr,
                                       isatty(STDOUT_FILENO) != 0);
  });
#else
  (void)args;
  std::cerr << "lockstep check: --real/--ensemble need the real ZooKeeper client, which this "
               "build leaves out (configured with -DLOCKSTEP_REAL=OFF or without "
               "libzookeeper-mt-dev)\n";
  return kExitFailure;
#endif
}

int run_check(const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (a == "--real" || a == "--ensemble") return run_check_real(args);
  }
  // The progress line goes to stderr, so it is drawn when stderr is a terminal (a log file
  // gets no carriage returns, and `check > out.txt` still shows it).
  return call_with_argv(args, [](int argc, char** argv) {
    return properties::check_main(argc, argv, std::cout, std::cerr, isatty(STDERR_FILENO) != 0,
                                  traces::save_check_failure);
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
