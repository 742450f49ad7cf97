// `lockstep help [COMMAND]` and `lockstep version`.
#include <ostream>

#include "cli/cli.h"

#ifndef LOCKSTEP_VERSION
#error "cli/CMakeLists.txt defines LOCKSTEP_VERSION from the project version"
#endif

namespace lockstep::cli {
namespace {

int run_help(const Command& self, const Args& args, const Io& io) {
  std::ostream& out = io.out;
  if (args.positional.size() > 1) return usage_error(self, "give at most one command name", io.err);
  if (args.positional.size() == 1) {
    const Command* c = find_command(args.positional[0]);
    if (c == nullptr) {
      return usage_error(
          self, "no command named '" + args.positional[0] + "'; 'lockstep help' lists them",
          io.err);
    }
    print_command_usage(*c, out);
    return kExitOk;
  }
  out << "lockstep — a deterministic simulation testbed for ZooKeeper lock recipes.\n\n"
            << "usage: lockstep COMMAND [flags]\n\ncommands:\n";
  for (const Command* c : commands()) {
    out << "  " << c->name;
    for (size_t pad = c->name.size(); pad < 13; ++pad) out << ' ';
    out << c->summary << "\n";
  }
  out << "\nexit codes (every command):\n";
  print_exit_codes(out);
  out << "\nRun 'lockstep help COMMAND' (or 'lockstep COMMAND --help') for its flags.\n"
      << "From a source tree, './lockstep ...' builds first; './lockstep test' runs every "
         "test and './lockstep bench' the benchmark.\n";
  return kExitOk;
}

int run_version(const Command&, const Args&, const Io& io) {
  io.out << "lockstep " << LOCKSTEP_VERSION << " (C++" << __cplusplus / 100 % 100 << ", "
#if defined(__clang__)  // (Clang defines __GNUC__ too, as 4.2)
         << "Clang " << __clang_major__ << "." << __clang_minor__
#else
         << "GCC " << __GNUC__ << "." << __GNUC_MINOR__
#endif
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
    .details = "exit: 0, or 2 for a usage error\n",
};

const Command kVersionCommand = {
    .name = "version",
    .summary = "Print the version of lockstep and how it was built.",
    .positional = "",
    .flags = {},
    .run = run_version,
    .details = "exit: 0, or 2 for a usage error\n",
};

}  // namespace lockstep::cli
