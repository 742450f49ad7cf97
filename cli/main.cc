// lockstep: the command-line entry point. Runs the command line through cli/cli.h.
#include <unistd.h>

#include <iostream>
#include <string>
#include <vector>

#include "cli/cli.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  // A progress line is redrawn on stderr only when it is a terminal (a log file gets no
  // carriage returns, and `check > out.txt` still shows it).
  const lockstep::cli::Io io{std::cout, std::cerr, isatty(STDERR_FILENO) != 0};
  return lockstep::cli::run_command_line(args, io);
}
