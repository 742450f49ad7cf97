// The properties' names (recipes/promises.h).
#include "recipes/promises.h"

namespace lockstep::recipes {
namespace {

constexpr const char* kPropertyNames[kPropertyCount] = {
    "mutual-exclusion", "fenced-safety", "fifo",       "liveness",
    "no-orphans",       "herd-free",     "reentrancy", "timeout-cleanup",
    "bounded-load",     "progress",      "server-exclusion", "error-contract",
    "no-leaked-watches", "reported-state",
};
// Column headings of the check table, in Property order.
constexpr const char* kPropertyColumns[kPropertyCount] = {
    "mutex", "fenced", "fifo",  "live",  "orphan", "herd",
    "reent", "tmout",  "load",  "progr", "srvex",  "errors", "watch", "report"};

}  // namespace

const char* to_string(Property p) {
  const int i = static_cast<int>(p);
  return (i >= 0 && i < kPropertyCount) ? kPropertyNames[i] : "?";
}

const char* column_name(Property p) {
  const int i = static_cast<int>(p);
  return (i >= 0 && i < kPropertyCount) ? kPropertyColumns[i] : "?";
}

bool parse_property(std::string_view name, Property* out) {
  for (int i = 0; i < kPropertyCount; ++i) {
    if (name == kPropertyNames[i]) {
      *out = static_cast<Property>(i);
      return true;
    }
  }
  return false;
}

}  // namespace lockstep::recipes
