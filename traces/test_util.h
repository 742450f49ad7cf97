// Test helpers for traces/: real traces recorded from the registry, temporary directories, and
// running the trace commands (cli/cmd_traces.cc) in this process with their own streams.
#pragma once

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "traces/record.h"
#include "traces/trace.h"

namespace lockstep::traces::testing {

// The trace of the first seed in 1..200 at which `recipe` violates a property (for a broken
// variant: the property it must be caught by), or, for a correct recipe, of seed 1.
inline Trace first_trace(const std::string& recipe_name) {
  const recipes::RecipeInfo* r = recipes::find_recipe(recipe_name);
  if (r == nullptr) std::abort();
  const uint64_t seed =
      r->expected == recipes::Expected::kBroken ? first_failing_seed(*r, 200).value_or(1) : 1;
  return record_trace(*r, check_scenario(*r, seed));
}

// A fresh empty directory under the system's temporary directory, removed on destruction.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "lockstep-traces-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) std::abort();
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

struct CommandResult {
  int code = -1;
  std::string out;
  std::string err;
};

// Runs `lockstep NAME ARGS...` (replay, show, recheck, corpus, ...) with its own streams.
inline CommandResult run_command(const std::string& name, const std::vector<std::string>& args) {
  std::vector<std::string> line{name};
  line.insert(line.end(), args.begin(), args.end());
  std::ostringstream out;
  std::ostringstream err;
  CommandResult r;
  r.code = cli::run_command_line(line, cli::Io{out, err});
  r.out = out.str();
  r.err = err.str();
  return r;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

// How many times `needle` occurs in `haystack`, not overlapping.
inline size_t count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + needle.size())) {
    ++n;
  }
  return n;
}

inline void write_file(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary);
  out << data;
}

}  // namespace lockstep::traces::testing
