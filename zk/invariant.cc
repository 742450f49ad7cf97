#include "zk/invariant.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace lockstep {

namespace {
thread_local InvariantContext* innermost = nullptr;
}  // namespace

InvariantContext::InvariantContext(std::function<std::string()> describe)
    : describe_(std::move(describe)), outer_(innermost) {
  innermost = this;
}

InvariantContext::~InvariantContext() { innermost = outer_; }

std::string invariant_context() {
  std::vector<const InvariantContext*> stack;
  for (const InvariantContext* c = innermost; c != nullptr; c = c->outer_) stack.push_back(c);
  std::string lines;
  for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
    lines += "  ";
    lines += (*it)->describe_();
    lines += '\n';
  }
  return lines;
}

void invariant_failed(const char* condition, const char* file, int line, const std::string& text) {
  std::fprintf(stderr, "lockstep: invariant violated: %s\n  at %s:%d\n", condition, file, line);
  if (!text.empty()) std::fprintf(stderr, "  %s\n", text.c_str());
  const std::string context = invariant_context();
  if (!context.empty()) std::fprintf(stderr, "%s", context.c_str());
  std::fprintf(stderr,
               "  this is a bug in lockstep (the simulator, the contract or a checker), not in the "
               "recipe under test: please report it with the lines above\n");
  std::fflush(stderr);
  std::abort();
}

}  // namespace lockstep
