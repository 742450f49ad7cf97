// lockstep_traces_tool: a stand-alone driver for the trace subcommands (traces/commands.h), used
// by the traces tests and to regenerate the corpus until the lockstep CLI dispatches to them.
//   lockstep_traces_tool replay|recheck|show|corpus [args]
#include <cstring>
#include <iostream>

#include "traces/commands.h"
#include "traces/trace.h"

int main(int argc, char** argv) {
  using namespace lockstep::traces;
  if (argc < 2) {
    std::cerr << "usage: lockstep_traces_tool replay|recheck|show|corpus [args] (--help)\n";
    return kExitBadInput;
  }
  const char* cmd = argv[1];
  if (std::strcmp(cmd, "replay") == 0) return replay_main(argc - 1, argv + 1, std::cout, std::cerr);
  if (std::strcmp(cmd, "recheck") == 0)
    return recheck_main(argc - 1, argv + 1, std::cout, std::cerr);
  if (std::strcmp(cmd, "show") == 0) return show_main(argc - 1, argv + 1, std::cout, std::cerr);
  if (std::strcmp(cmd, "corpus") == 0) return corpus_main(argc - 1, argv + 1, std::cout, std::cerr);
  std::cerr << "lockstep_traces_tool: unknown command '" << cmd << "'\n";
  return kExitBadInput;
}
