// Tests of the CI examples, examples/github-actions.yml and examples/k8s-indexed-job.yaml: every
// command line they hold runs here as the CI job or the pod would run it (the workflow's `run:`
// lines with `bash -e`, the Job's `args` with `sh`), once per shard with the shard variables the
// files set, then their merge; the merge must give the verdict table and exit status of one
// `lockstep check` over the same seeds, and a JUnit file the independent checker accepts.
//
// The commands are the files' own, byte for byte. Two things differ from CI: `./lockstep` is a
// link to the built binary (the setup script would install packages and build), and the sweep's
// size (LOCKSTEP_SWEEP_SEEDS) and the Job's results directory (LOCKSTEP_RESULTS), both
// environment variables the files define, are overridden to a few seeds and a temporary directory.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli/junit_check.h"

namespace {

// This program's tests choose their shards themselves: run inside a sharded job (a Kubernetes
// Indexed Job sets JOB_COMPLETION_INDEX), every `check` they start would be sharded otherwise.
[[maybe_unused]] const bool kNoAmbientShard = [] {
  ::unsetenv("JOB_COMPLETION_INDEX");
  ::unsetenv("LOCKSTEP_SHARDS");
  return true;
}();

constexpr const char* kSeeds = "8";  // per recipe over the sweep: at least one per shard

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream f(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(f, line);) lines.push_back(line);
  return lines;
}

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

size_t indent(const std::string& line) { return line.find_first_not_of(' '); }

// The value of "key: value" on `line` (after any "- "), unquoted; nullopt for another key.
std::optional<std::string> value_of(const std::string& line, const std::string& key) {
  static const std::regex kKeyValue(R"(^\s*(?:- )?([A-Za-z_]+):\s*(.*?)\s*$)");
  std::smatch m;
  if (!std::regex_match(line, m, kKeyValue) || m[1] != key) return std::nullopt;
  std::string v = m[2];
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
  return v;
}

// A directory with `lockstep` linked to the built binary, as `./lockstep` finds it in a checkout.
std::string workdir(const std::string& name) {
  std::string dir = ::testing::TempDir() + name + "-XXXXXX";
  EXPECT_NE(::mkdtemp(dir.data()), nullptr);
  EXPECT_EQ(::symlink(LOCKSTEP_BIN, (dir + "/lockstep").c_str()), 0);
  return dir;
}

// Runs `script` with `shell` in `dir`, its environment this process's less any ambient shard,
// plus `env`. Returns the exit status; the output goes to dir/NAME.out.
int run_script(const std::string& dir, const std::string& name, const std::string& shell,
               const std::string& script, const std::map<std::string, std::string>& env) {
  std::ofstream(dir + "/" + name + ".sh") << script << "\n";
  std::string cmd = "cd '" + dir + "' && env -u JOB_COMPLETION_INDEX -u LOCKSTEP_SHARDS";
  for (const auto& [key, value] : env) cmd += " " + key + "='" + value + "'";
  cmd += " " + shell + " " + name + ".sh >" + name + ".out 2>&1";
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The verdict table of a `check` or `merge` printout: the rows and the columns line.
std::string table_of(const std::string& out) { return out.substr(0, out.find("\ncolumns: ")); }

// `lockstep check --seeds kSeeds` in `dir` (with `extra` flags): what one machine gives.
struct Single {
  int code = -1;
  std::string table;
};
Single single_run(const std::string& dir, const std::string& extra) {
  Single s;
  s.code = run_script(dir, "single", "sh",
                      std::string("./lockstep check --seeds ") + kSeeds + " --jobs 2 " + extra, {});
  s.table = table_of(read_text(dir + "/single.out"));
  return s;
}

void expect_valid_junit(const std::string& path) {
  lockstep::cli::junit_check::Node root;
  EXPECT_EQ(lockstep::cli::junit_check::validate_junit(read_text(path), &root), "") << path;
  EXPECT_FALSE(root.children.empty()) << path;
}

// The workflow: a matrix job per shard (JOB_COMPLETION_INDEX from the matrix, LOCKSTEP_SHARDS
// the matrix's size) whose step writes its report, and a merge job whose step merges them.
TEST(Examples, GithubActionsWorkflowRunsLocally) {
  const std::vector<std::string> lines =
      lines_of(std::string(LOCKSTEP_SOURCE_DIR) + "/examples/github-actions.yml");
  ASSERT_FALSE(lines.empty());
  std::map<std::string, std::vector<std::string>> runs;  // job -> its `run:` commands
  std::vector<std::string> matrix;
  std::string shards, job, uploads;
  bool in_jobs = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line == "jobs:") in_jobs = true;
    if (in_jobs && indent(line) == 2 && line.back() == ':') job = line.substr(2, line.size() - 3);
    if (auto v = value_of(line, "run")) {
      ASSERT_NE(*v, "|") << "a multi-line run: block; this test reads one line per step";
      runs[job].push_back(*v);
    }
    if (auto v = value_of(line, "index"); v && v->front() == '[') {
      std::istringstream items(v->substr(1, v->size() - 2));
      for (std::string item; std::getline(items, item, ',');) {
        matrix.push_back(std::regex_replace(item, std::regex(R"(\s)"), ""));
      }
    }
    if (auto v = value_of(line, "LOCKSTEP_SHARDS")) shards = *v;
    if (auto v = value_of(line, "JOB_COMPLETION_INDEX")) {
      EXPECT_EQ(*v, "${{ matrix.index }}");
    }
    if (value_of(line, "path") && job == "shard") uploads += lines[i + 1] + "\n";
  }
  ASSERT_EQ(runs.size(), 2u) << "jobs with run: steps: shard and merge";
  ASSERT_EQ(runs["shard"].size(), 1u);
  ASSERT_EQ(runs["merge"].size(), 1u);
  ASSERT_EQ(shards, std::to_string(matrix.size())) << "LOCKSTEP_SHARDS is the matrix's size";
  for (size_t i = 0; i < matrix.size(); ++i) EXPECT_EQ(matrix[i], std::to_string(i));
  EXPECT_NE(uploads.find("shard-*.json"), std::string::npos) << "the shard job uploads its report";

  const std::string dir = workdir("gha");
  for (const std::string& index : matrix) {
    EXPECT_EQ(run_script(dir, "shard-step-" + index, "bash -e", runs["shard"][0],
                         {{"JOB_COMPLETION_INDEX", index},
                          {"LOCKSTEP_SHARDS", shards},
                          {"LOCKSTEP_SWEEP_SEEDS", kSeeds}}),
              0)
        << read_text(dir + "/shard-step-" + index + ".out");
  }
  const int merged = run_script(dir, "merge-step", "bash -e", runs["merge"][0], {});
  const Single single = single_run(dir, "");
  EXPECT_EQ(merged, single.code) << read_text(dir + "/merge-step.out");
  EXPECT_EQ(table_of(read_text(dir + "/merge-step.out")), single.table);
  expect_valid_junit(dir + "/junit.xml");
  if (!HasFailure()) std::filesystem::remove_all(dir);  // kept to look at when it failed
}

// The Job: its args run once per completion index with the container's environment, then the
// merge Job's args.
TEST(Examples, KubernetesIndexedJobRunsLocally) {
  const std::vector<std::string> lines =
      lines_of(std::string(LOCKSTEP_SOURCE_DIR) + "/examples/k8s-indexed-job.yaml");
  ASSERT_FALSE(lines.empty());
  struct Job {
    std::string name, mode, completions, command;
    std::map<std::string, std::string> env;
    std::vector<std::string> args;
  };
  std::vector<Job> jobs;
  std::string env_name;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (value_of(line, "kind") == "Job") jobs.emplace_back();
    if (jobs.empty()) continue;
    Job& j = jobs.back();
    if (auto v = value_of(line, "name"); v && j.name.empty()) j.name = *v;
    if (auto v = value_of(line, "completionMode")) j.mode = *v;
    if (auto v = value_of(line, "completions")) j.completions = *v;
    if (auto v = value_of(line, "command")) j.command = *v;
    if (auto v = value_of(line, "name"); v && line.find("- name:") != std::string::npos) {
      env_name = *v;
    }
    if (auto v = value_of(line, "value")) j.env[env_name] = *v;
    if (value_of(line, "args")) {
      for (size_t k = i + 1; k < lines.size() && indent(lines[k]) > indent(line); ++k) {
        ASSERT_EQ(lines[k].substr(indent(lines[k]), 2), "- ") << lines[k];
        j.args.push_back(lines[k].substr(indent(lines[k]) + 2));
      }
    }
  }
  ASSERT_EQ(jobs.size(), 2u) << "the sweep and the merge";
  const Job& sweep = jobs[0];
  const Job& merge = jobs[1];
  EXPECT_EQ(sweep.name, "lockstep-sweep");
  EXPECT_EQ(sweep.mode, "Indexed");
  ASSERT_EQ(sweep.env.count("LOCKSTEP_SHARDS"), 1u);
  ASSERT_EQ(sweep.env.at("LOCKSTEP_SHARDS"), sweep.completions) << "LOCKSTEP_SHARDS is completions";
  for (const Job* j : {&sweep, &merge}) {
    EXPECT_EQ(j->command, R"(["/bin/sh", "-c"])") << j->name;
    ASSERT_EQ(j->args.size(), 1u) << j->name;
  }

  const std::string dir = workdir("k8s");
  const std::string results = dir + "/results";
  ASSERT_EQ(::mkdir(results.c_str(), 0755), 0);
  const int n = std::stoi(sweep.completions);
  for (int index = 0; index < n; ++index) {
    std::map<std::string, std::string> env = sweep.env;
    env["JOB_COMPLETION_INDEX"] = std::to_string(index);
    env["LOCKSTEP_SWEEP_SEEDS"] = kSeeds;
    env["LOCKSTEP_RESULTS"] = results;
    const std::string name = "pod-" + std::to_string(index);
    EXPECT_EQ(run_script(dir, name, "sh", sweep.args[0], env), 0)
        << read_text(dir + "/" + name + ".out");
  }
  std::map<std::string, std::string> env = merge.env;
  env["LOCKSTEP_RESULTS"] = results;
  const int merged = run_script(dir, "merge-pod", "sh", merge.args[0], env);
  const Single single = single_run(dir, "--trace-dir results/traces");
  EXPECT_EQ(merged, single.code) << read_text(dir + "/merge-pod.out");
  EXPECT_EQ(table_of(read_text(dir + "/merge-pod.out")), single.table);
  expect_valid_junit(results + "/junit.xml");
  if (!HasFailure()) std::filesystem::remove_all(dir);  // kept to look at when it failed
}

}  // namespace
