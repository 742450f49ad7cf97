// lockstep: the command-line entry point. Dispatches to the subcommands of cli/cli.h.
#include <iostream>
#include <string>
#include <vector>

#include "cli/cli.h"

namespace lockstep::cli {
namespace {

// Prints `problem`, the command list and where to read more; returns kExitUsage.
int top_level_usage_error(const std::string& problem) {
  std::cerr << "lockstep: " << problem << "\n"
            << "usage: lockstep COMMAND [flags]; commands:";
  for (const Command* c : commands()) std::cerr << " " << c->name;
  std::cerr << "\nRun 'lockstep help' for what each one does.\n";
  return kExitUsage;
}

int dispatch(const std::vector<std::string>& argv) {
  if (argv.empty()) return top_level_usage_error("no command given.");
  std::string name = argv[0];
  if (name == "-h" || name == "--help") name = "help";
  if (name == "--version") name = "version";
  const Command* command = find_command(name);
  if (command == nullptr) return top_level_usage_error("unknown command '" + argv[0] + "'.");
  if (command->run_raw != nullptr) return command->run_raw({argv.begin(), argv.end()});
  std::optional<Args> args = parse_args(*command, {argv.begin() + 1, argv.end()});
  if (!args) return kExitUsage;
  if (args->has("help")) {
    print_command_usage(*command, std::cout);
    return kExitOk;
  }
  return command->run(*command, *args);
}

}  // namespace
}  // namespace lockstep::cli

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return lockstep::cli::dispatch(args);
}
