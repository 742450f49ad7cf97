// lockstep tools: runs a command line through the shell and captures its standard output and
// exit status, for the tests that run a built program as a user would (cli/, properties/,
// bench/). The command's own redirections decide what else is captured ("2>&1").
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace lockstep::tools {

struct ShellRun {
  int exit_code = -1;  // -1: it could not be started, or a signal ended it
  std::string output;
};

inline ShellRun shell_run(const std::string& command) {
  ShellRun r;
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) r.output.append(buf, n);
  const int status = ::pclose(p);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  return r;
}

}  // namespace lockstep::tools
