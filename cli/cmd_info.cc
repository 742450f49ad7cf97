// `lockstep help [COMMAND]` and `lockstep version`.
#include <iostream>

#include "cli/cli.h"

#ifndef LOCKSTEP_VERSION
#error "cli/CMakeLists.txt defines LOCKSTEP_VERSION from the project version"
#endif

namespace lockstep::cli {
namespace {

int run_help(const Command& self, const Args& args) {
  if (args.positional.size() > 1) return usage_error(self, "give at most one command name");
  if (args.positional.size() == 1) {
    const Command* c = find_command(args.positional[0]);
    if (c == nullptr) {
      return usage_error(
          self, "no command named '" + args.positional[0] + "'; 'lockstep help' lists them");
    }
    if (c->run_raw != nullptr) return c->run_raw({c->name, "--help"});
    print_command_usage(*c, std::cout);
    return kExitOk;
  }
  std::cout << "lockstep — a deterministic simulation testbed for ZooKeeper lock recipes.\n\n"
            << "usage: lockstep COMMAND [flags]\n\ncommands:\n";
  for (const Command* c : commands()) {
    std::cout << "  " << c->name;
    for (size_t pad = c->name.size(); pad < 13; ++pad) std::cout << ' ';
    std::cout << c->summary << "\n";
  }
  std::cout << "\nRun 'lockstep help COMMAND' (or 'lockstep COMMAND --help') for its flags.\n"
            << "From a source tree, './lockstep ...' builds first; './lockstep test' runs every "
               "test and './lockstep bench' the benchmark.\n";
  return kExitOk;
}

int run_version(const Command&, const Args&) {
  std::cout << "lockstep " << LOCKSTEP_VERSION << " (C++" << __cplusplus / 100 % 100 << ", "
            << "GCC " << __GNUC__ << "." << __GNUC_MINOR__
#if defined(__SANITIZE_ADDRESS__)
            << ", AddressSanitizer"
#endif
            << ")\n";
  return kExitOk;
}

}  // namespace

const Command kHelpCommand = {
    .name = "help",
    .summary = "List the commands, or show one command's usage.",
    .positional = "[COMMAND]",
    .flags = {},
    .run = run_help,
};

const Command kVersionCommand = {
    .name = "version",
    .summary = "Print the version of lockstep and how it was built.",
    .positional = "",
    .flags = {},
    .run = run_version,
};

}  // namespace lockstep::cli
