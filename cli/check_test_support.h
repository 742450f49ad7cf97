// Test support for the in-process tests of `lockstep check` and `lockstep merge`
// (cli/check_test.cc, cli/report_test.cc): running a command with its own streams, a fake trace
// saver, and the faults and seed under which broken/no-sync-recheck is caught.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/check.h"
#include "properties/scenario.h"
#include "recipes/registry.h"

namespace lockstep::cli::check_test {

using namespace properties;  // the engine's values: results, savers, seeds

// The tests choose their shards themselves: a run of the suite inside a sharded job (a Kubernetes
// Indexed Job sets JOB_COMPLETION_INDEX) must not shard every `check` they run.
inline const bool kNoAmbientShard = [] {
  ::unsetenv("JOB_COMPLETION_INDEX");
  ::unsetenv("LOCKSTEP_SHARDS");
  return true;
}();

struct Outcome {
  int code = 0;
  std::string out;
  std::string err;
};

// Runs `lockstep check ARGS` in this process: the one flag parser, then the command, with their
// own streams and `saver` for failure traces.
inline Outcome run(const std::vector<std::string>& args, const TraceSaver& saver = nullptr) {
  std::ostringstream out, err;
  const std::optional<Args> parsed = parse_args(kCheckCommand, args, err);
  const int code = parsed ? run_check(*parsed, out, err, false, saver) : kExitUsage;
  return {code, out.str(), err.str()};
}

// A saver that writes nothing and remembers what it was asked:
// "recipe seed dir fault-count property[ no-shrink]".
struct FakeSaver {
  std::vector<std::string> calls;
  std::string fail_with;  // when set, every save fails with this error

  TraceSaver saver() {
    return [this](const FailingSeed& f, std::string* error) -> std::string {
      calls.push_back(f.recipe->name + " " + std::to_string(f.seed) + " " + f.dir + " " +
                      std::to_string(f.faults.size()) + " " +
                      (f.property ? to_string(*f.property) : "-") + (f.shrink ? "" : " no-shrink") +
                      (f.demonstration ? " demonstration" : ""));
      if (!fail_with.empty()) {
        *error = fail_with;
        return {};
      }
      return f.dir + "/" + f.recipe->name + "-" + std::to_string(f.seed) + ".json";
    };
  }
};

// Runs `lockstep NAME ARGS` (merge, for instance) in this process through the command table.
inline Outcome run_command(const std::vector<std::string>& argv) {
  std::ostringstream out, err;
  const int code = run_command_line(argv, Io{out, err});
  return {code, out.str(), err.str()};
}
// The faults under which broken/no-sync-recheck is caught (a lost delete reply read back from a
// lagging server), as the CLI spells them and as a set.
inline const std::vector<std::string> kLaggingLostReply = {"--faults",
                                                           "lagging-follower,lost-reply"};

inline std::set<sim::FaultKind> lagging_lost_reply() {
  std::set<sim::FaultKind> faults;
  for (const char* name : {"lagging-follower", "lost-reply"}) {
    sim::FaultKind k;
    EXPECT_TRUE(parse_fault_name(name, &k)) << name;
    faults.insert(k);
  }
  return faults;
}

// The seed that catches broken/no-sync-recheck under those faults, searching from seed 1.
inline uint64_t no_sync_recheck_catch() {
  const RecipeResult r =
      check_seeds(*recipes::find_recipe("broken/no-sync-recheck"), 1, 2000, lagging_lost_reply());
  EXPECT_TRUE(r.search_over()) << "broken/no-sync-recheck was not caught in 2000 seeds";
  return r.first_failing_seed().value_or(0);
}

inline std::vector<std::string> concat(std::vector<std::string> a,
                                       const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace lockstep::cli::check_test
