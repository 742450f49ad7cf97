// The report of a `lockstep check` run, shared by `check` and `merge`: the one table printer, the
// one JSON schema (to_json, and from_json, which reads it back), the JUnit file and the exit code.
// `check` fills a CheckReport from the engine (properties/check.h); `merge` fills one by reading
// shard reports back and appending their results in seed order (properties::append_seeds), so a
// merged sweep prints, serialises and exits exactly as the single run would have.
//
// Shards: a sweep of seeds F..F+N-1 cut into K shards gives shard I the contiguous block
// shard_block(F, N, {I, K}). Blocks rather than every K-th seed, because then a shard's result is
// a chunk of the single run's (the engine already appends chunks exactly, --jobs does it): each
// property's first violating seed, every count and a broken variant's stop at its catch merge to
// the single run's values. Each shard holds at least one seed (--seeds >= K, checked in cli/).
//
// Single-threaded; no state beyond what is passed in. cli/check.h documents the keys and exit
// codes for users; cli/README.md lists them.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "properties/check.h"

namespace lockstep::cli {

// Where the seeds run: the simulator, one real server, or a real 3-server ensemble.
enum class Where { kSimulator, kStandalone, kEnsemble };

// Part `index` (from 0) of `count` disjoint parts of a seed sweep.
struct Shard {
  uint64_t index = 0;
  uint64_t count = 1;
};

// The largest shard count --shard and LOCKSTEP_SHARDS accept.
constexpr uint64_t kMaxShards = 10000;

// The seeds shard `s` covers of first .. first + seeds - 1: {its first seed, how many}.
// REQUIRES: s.index < s.count.
std::pair<uint64_t, uint64_t> shard_block(uint64_t first, uint64_t seeds, Shard s);

// What one run was asked, beyond the engine's options.
struct CheckRequest {
  // The engine's options. o.first_seed and o.seeds are the seeds this run covers: the shard's
  // block when sharded, the whole sweep otherwise.
  properties::CheckOptions o;
  Where where = Where::kSimulator;
  bool json = false;
  bool event_log = false;
  std::string junit;  // --junit FILE, or "" for none
  std::optional<Shard> shard;
  uint64_t sweep_first = 1;  // the whole sweep (o.first_seed, o.seeds when not sharded)
  uint64_t sweep_seeds = 100;
};

// What a run found, in the request's recipe order.
struct CheckReport {
  std::vector<properties::RecipeResult> results;
  std::string server;  // the real server's description, "" on the simulator
  double seconds = 0;
  double cpu_seconds = 0;
  // What stopped the run before its end ("SIGINT", or for a merge the shard that was stopped),
  // "" when every result covers the seeds it was asked for.
  std::string interrupted;
  bool merged = false;  // `merge` assembled it: incomplete exits 4 (kExitIncomplete), not 130
};

// The exit code of cli/check.h: 0 every recipe as expected, 1 a failure, 130 interrupted; for a
// merge, an incomplete sweep with no failure in what ran is 4.
int exit_code(const CheckReport& report, const CheckRequest& rq);

// The JSON document (cli/check.h lists the keys).
nlohmann::json to_json(const CheckReport& report, const CheckRequest& rq);

// Reads a document to_json wrote back into the request and the report that gave it (the request's
// json/junit/event_log and the engine's `program` are left as they were). Returns "" or what is
// wrong with it ("results[2].judged is missing").
std::string from_json(const nlohmann::json& doc, CheckRequest* rq, CheckReport* report);

// The JUnit XML document: one <testsuite> per recipe, one <testcase classname=RECIPE
// name=PROPERTY> per property (cli/check.h says which verdict is a pass, a failure, an error or
// skipped). The counts in every tests/failures/errors/skipped attribute are those of the children.
std::string to_junit(const CheckReport& report, const CheckRequest& rq);

// "" when a JUnit file can be written at `path` (its directory exists and is writable, and it is
// not a directory), otherwise what is wrong and how to fix it.
std::string junit_file_problem(const std::string& path);

// The command that runs the whole request again (the shard's, with --shard).
std::string reproduce_run(const CheckRequest& rq);

// Prints the report as the request asks (the table, or JSON with rq.json), writes rq.junit when
// set (atomically; a file that cannot be written is reported on `err` and fails the run) and
// returns the exit code. `command` names the command in messages ("check", "merge").
int finish(const CheckReport& report, const CheckRequest& rq, const char* command,
           std::ostream& out, std::ostream& err);

}  // namespace lockstep::cli
