// `lockstep merge`: the shard reports of one sweep (`lockstep check --shard I/N --json`) combined
// into the report of the whole sweep, printed as `check` prints it (cli/check_report.h).
//
// Shard I covers a contiguous block of every recipe's seeds, so the merge appends each recipe's
// blocks in seed order with the engine's append_seeds, as `check --jobs` appends its chunks: the
// counts add up, every property keeps its lowest violating seed, and a broken variant's result
// ends at the block that caught it (later blocks are what the single run would not have run).
// The result is the single run's: the same table, JSON (but for timings) and exit status.
//
// Refused with exit 2, naming the files: a file that is not a check report, reports of different
// sweeps (recipes, seeds, faults, trace options, backend), a shard given twice, a missing shard.
// A shard that was interrupted leaves the sweep incomplete from its block on: the merge says so
// and exits 4 (1 when what ran already holds a failure), never 0.
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "cli/check_report.h"
#include "cli/cli.h"

namespace lockstep::cli {
namespace {

using nlohmann::json;
using properties::RecipeResult;

// One shard report as read.
struct Input {
  std::string path;
  json options;  // its "options", less what may differ between shards (shard, jobs)
  CheckRequest rq;
  CheckReport report;
};

std::string shard_name(const Shard& s) {
  return std::to_string(s.index) + "/" + std::to_string(s.count);
}

// Reads `path` as a check report. Returns "" or what is wrong with it.
std::string read_input(const std::string& path, Input* in) {
  std::ifstream f(path);
  if (!f) return "cannot read '" + path + "'";
  std::stringstream text;
  text << f.rdbuf();
  const json doc = json::parse(text.str(), nullptr, false);
  if (doc.is_discarded()) return "'" + path + "' is not JSON";
  in->path = path;
  if (const std::string bad = from_json(doc, &in->rq, &in->report); !bad.empty()) {
    return "'" + path + "' is not a report of `lockstep check --json`: " + bad;
  }
  if (in->rq.where != Where::kSimulator) {
    return "'" + path + "' is a report of a real server; only simulator sweeps are sharded";
  }
  if (in->rq.o.seed) return "'" + path + "' is a --seed report, not a sweep";
  in->options = doc["options"];
  in->options.erase("shard");
  in->options.erase("jobs");
  if (!in->rq.shard) in->rq.shard = Shard{};  // a whole sweep is its only shard
  return "";
}

// "" when `b` is a shard of the same sweep as `a`, otherwise how they differ.
std::string difference(const Input& a, const Input& b) {
  const std::string both = "'" + a.path + "' and '" + b.path + "'";
  for (const auto& [key, value] : a.options.items()) {
    if (b.options.value(key, json()) != value) {
      return both + " are not shards of one sweep: options." + key + " is " + value.dump() +
             " in the first and " + b.options.value(key, json()).dump() + " in the second";
    }
  }
  if (a.rq.shard->count != b.rq.shard->count) {
    return both + " cut the sweep differently: shard " + shard_name(*a.rq.shard) + " and shard " +
           shard_name(*b.rq.shard);
  }
  if (a.report.results.size() != b.report.results.size()) {
    return both + " hold different recipes (" + std::to_string(a.report.results.size()) + " and " +
           std::to_string(b.report.results.size()) + ")";
  }
  for (size_t k = 0; k < a.report.results.size(); ++k) {
    if (a.report.results[k].recipe != b.report.results[k].recipe ||
        a.report.results[k].expected != b.report.results[k].expected) {
      return both + " hold different recipes: " + a.report.results[k].recipe + " and " +
             b.report.results[k].recipe;
    }
  }
  return "";
}

// The inputs in shard order, checked to be every shard of one sweep once. Returns "" or why not.
std::string order_shards(std::vector<Input>* inputs) {
  std::map<uint64_t, const Input*> by_index;
  for (const Input& in : *inputs) {
    if (const std::string d = difference(inputs->front(), in); !d.empty()) return d;
    const auto [it, fresh] = by_index.emplace(in.rq.shard->index, &in);
    if (!fresh) {
      return "'" + it->second->path + "' and '" + in.path + "' are both shard " +
             shard_name(*in.rq.shard) + "; give each shard's report once";
    }
    const auto [first, count] = shard_block(in.rq.sweep_first, in.rq.sweep_seeds, *in.rq.shard);
    if (in.rq.o.first_seed != first || in.rq.o.seeds != count) {
      return "'" + in.path + "' covers seeds " + std::to_string(in.rq.o.first_seed) + ".." +
             std::to_string(in.rq.o.first_seed + in.rq.o.seeds - 1) + ", not shard " +
             shard_name(*in.rq.shard) + "'s block " + std::to_string(first) + ".." +
             std::to_string(first + count - 1);
    }
    for (const RecipeResult& r : in.report.results) {
      if (r.first_seed != first || r.seeds_run > count) {
        return "'" + in.path + "' is not consistent: its result for " + r.recipe + " covers " +
               std::to_string(r.seeds_run) + " seed(s) from " + std::to_string(r.first_seed) +
               ", outside the block " + std::to_string(first) + ".." +
               std::to_string(first + count - 1) + " it reports";
      }
    }
  }
  const uint64_t n = inputs->front().rq.shard->count;
  std::string missing;
  for (uint64_t i = 0; i < n && missing.size() < 200; ++i) {
    if (by_index.count(i) == 0) missing += (missing.empty() ? "" : ", ") + shard_name({i, n});
  }
  if (!missing.empty()) {
    return "shard " + missing + " missing: give the report of every shard of " + std::to_string(n) +
           " (got " + std::to_string(inputs->size()) + ")";
  }
  std::vector<Input> ordered;
  for (const auto& entry : by_index) ordered.push_back(*entry.second);
  *inputs = std::move(ordered);
  return "";
}

// Recipe `k` over the whole sweep: the shards' blocks appended in order, up to the block whose
// search ended (a caught variant, a crash) or that stopped short (an interrupted shard).
// Sets *stopped_by to the input that stopped short, when one did.
RecipeResult merge_recipe(const std::vector<Input>& inputs, size_t k, const Input** stopped_by) {
  RecipeResult acc = inputs[0].report.results[k];
  std::map<uint64_t, std::string> traces = acc.traces;
  for (size_t i = 1; i < inputs.size() && !acc.search_over(); ++i) {
    const RecipeResult& next = inputs[i].report.results[k];
    if (acc.first_seed + acc.seeds_run != next.first_seed) {
      *stopped_by = &inputs[i - 1];
      break;
    }
    properties::append_seeds(&acc, next);
    traces.insert(next.traces.begin(), next.traces.end());
  }
  // The traces of the seeds the merged result names, as the single run saved them.
  acc.traces.clear();
  for (const properties::PropertyResult& p : acc.properties) {
    for (const std::optional<uint64_t>& seed : {p.seed, p.demonstration_seed}) {
      if (seed && traces.count(*seed) != 0) acc.traces[*seed] = traces.at(*seed);
    }
  }
  return acc;
}

int run_merge(const Command& self, const Args& args, const Io& io) {
  if (args.positional.empty()) {
    return usage_error(self,
                       "give the shard reports to merge: lockstep merge shard-0.json "
                       "shard-1.json ... (each from `lockstep check --shard I/N --json`)",
                       io.err);
  }
  std::vector<Input> inputs(args.positional.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (const std::string bad = read_input(args.positional[i], &inputs[i]); !bad.empty()) {
      return usage_error(self, bad, io.err);
    }
  }
  if (const std::string bad = order_shards(&inputs); !bad.empty()) {
    return usage_error(self, bad, io.err);
  }
  CheckRequest rq = inputs.front().rq;
  rq.shard.reset();
  rq.o.first_seed = rq.sweep_first;
  rq.o.seeds = rq.sweep_seeds;
  rq.o.program = io.program;
  rq.json = args.has("json");
  if (args.has("junit")) {
    rq.junit = args.get("junit", "");
    if (const std::string problem = junit_file_problem(rq.junit); !problem.empty()) {
      return usage_error(self, problem, io.err);
    }
  }
  CheckReport report;
  report.merged = true;
  for (const Input& in : inputs) {
    report.seconds += in.report.seconds;
    report.cpu_seconds += in.report.cpu_seconds;
  }
  for (size_t k = 0; k < inputs.front().report.results.size(); ++k) {
    const Input* stopped_by = nullptr;
    report.results.push_back(merge_recipe(inputs, k, &stopped_by));
    if (stopped_by != nullptr && report.interrupted.empty()) {
      report.interrupted =
          "shard " + shard_name(*stopped_by->rq.shard) + " ('" + stopped_by->path +
          "') stopped short: " +
          (stopped_by->report.interrupted.empty() ? "incomplete" : stopped_by->report.interrupted);
    }
  }
  return finish(report, rq, "merge", io.out, io.err);
}

}  // namespace

const Command kMergeCommand = {
    .name = "merge",
    .summary =
        "Combine the reports of a sharded sweep (`lockstep check --shard I/N --json`, one per "
        "shard, from CI jobs or the pods of a Kubernetes Indexed Job) into the report of the "
        "whole sweep: the verdicts, first violating seeds and exit status of one run over every "
        "seed, printed as `check` prints them.",
    .positional = "REPORT.json...",
    .flags =
        {
            {"json", "", "print the merged report as `check --json` does (cli/README.md)"},
            {"junit", "FILE", "also write the merged JUnit XML file, as `check --junit` does"},
        },
    .run = run_merge,
    .details =
        "exit: 0 every recipe behaved as expected over the whole sweep, 1 a correct recipe\n"
        "      failed or a broken variant was not caught, 2 a file is not a check report, the\n"
        "      reports are of different sweeps, or a shard is missing or given twice (the message\n"
        "      names the files), 4 incomplete: a shard was interrupted and nothing failed in\n"
        "      what ran\n",
};

}  // namespace lockstep::cli
