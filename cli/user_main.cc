// main_with_recipes (cli/user_main.h).
#include "cli/user_main.h"

#include <unistd.h>

#include <iostream>
#include <string>

#include "cli/cli.h"

namespace lockstep::cli {

int main_with_recipes(int argc, char** argv, std::vector<recipes::RecipeInfo> recipes) {
  const std::string problem = recipes::add_recipes(std::move(recipes));
  if (!problem.empty()) {
    std::cerr << "lockstep: your recipes cannot be registered: " << problem << "\n";
    return kExitUsage;
  }
  const Io io{std::cout, std::cerr, isatty(STDERR_FILENO) != 0, argv[0]};
  return run_command_line({argv + 1, argv + argc}, io);
}

}  // namespace lockstep::cli
