// The host side of `lockstep check`: the wall clock for the seeds-per-second report and the
// fork()-based --jobs. Deliberately outside the deterministic core: nothing here feeds a
// decision of a run. Each worker process runs whole recipes with check_recipe() (deterministic)
// and sends its results back as one JSON line per recipe through a pipe, so the verdicts do
// not depend on the number of jobs.
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>  // lockstep-allow: host timing for the report only
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "properties/check.h"

namespace lockstep::properties {
namespace {

nlohmann::json encode(const RecipeResult& r) {
  nlohmann::json j;
  j["recipe"] = r.recipe;
  j["seeds_run"] = r.seeds_run;
  j["requests"] = r.requests;
  nlohmann::json props = nlohmann::json::array();
  for (const PropertyResult& p : r.properties) {
    props.push_back({{"judged", p.judged},
                     {"seed", p.seed ? nlohmann::json(*p.seed) : nlohmann::json(nullptr)},
                     {"message", p.message}});
  }
  j["properties"] = props;
  return j;
}

// Fills the per-seed parts of `r` (its identity comes from the registry in the parent).
bool decode(const std::string& line, RecipeResult* r) {
  nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.contains("properties") || j["properties"].size() != kPropertyCount) {
    return false;
  }
  r->seeds_run = j["seeds_run"].get<uint64_t>();
  r->requests = j["requests"].get<uint64_t>();
  for (int i = 0; i < kPropertyCount; ++i) {
    const nlohmann::json& p = j["properties"][i];
    r->properties[i].judged = p["judged"].get<uint64_t>();
    if (!p["seed"].is_null()) r->properties[i].seed = p["seed"].get<uint64_t>();
    r->properties[i].message = p["message"].get<std::string>();
  }
  return true;
}

void write_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

std::string read_all(int fd) {
  std::string out;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

}  // namespace

double host_seconds() {
  using Clock = std::chrono::steady_clock;  // lockstep-allow: report timing, not behaviour
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

double host_cpu_seconds() {
  struct rusage self {};
  struct rusage children {};
  ::getrusage(RUSAGE_SELF, &self);
  ::getrusage(RUSAGE_CHILDREN, &children);
  auto secs = [](const struct timeval& tv) {
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
  };
  return secs(self.ru_utime) + secs(self.ru_stime) + secs(children.ru_utime) +
         secs(children.ru_stime);
}

std::string host_dir_problem(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  // The nearest part of the path that exists: the directory itself, or the ancestor under which
  // create_directories would make it.
  fs::path existing = dir.empty() ? fs::path(".") : fs::path(dir);
  for (int guard = 0; guard < 4096 && !fs::exists(existing, ec); ++guard) {
    const fs::path parent = existing.parent_path();
    existing = parent.empty() || parent == existing ? fs::path(".") : parent;
  }
  const bool is_self = existing == fs::path(dir);
  if (!fs::is_directory(existing, ec)) {
    return is_self ? "it exists and is not a directory"
                   : "'" + existing.string() + "' is not a directory, so it cannot be created";
  }
  if (::access(existing.c_str(), W_OK | X_OK) != 0) {
    return (is_self ? "it is not writable" : "'" + existing.string() + "' is not writable") +
           std::string(" (") + std::strerror(errno) + ")";
  }
  return {};
}

std::vector<RecipeResult> check_recipes_forked(const std::vector<const recipes::RecipeInfo*>& todo,
                                               const CheckOptions& o, std::ostream* progress) {
  std::vector<RecipeResult> results(todo.size());
  const size_t jobs = std::min<size_t>(o.jobs, todo.size());
  std::vector<int> fds(jobs, -1);
  std::vector<pid_t> pids(jobs, -1);
  if (jobs > 1) {
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    for (size_t w = 0; w < jobs; ++w) {
      int p[2];
      if (::pipe(p) != 0) break;
      const pid_t pid = ::fork();
      if (pid < 0) {
        ::close(p[0]);
        ::close(p[1]);
        break;
      }
      if (pid == 0) {
        ::close(p[0]);
        for (size_t i = w; i < todo.size(); i += jobs) {
          write_all(p[1], std::to_string(i) + " " +
                              encode(check_recipe(*todo[i], o, nullptr)).dump() + "\n");
        }
        ::close(p[1]);
        ::_exit(0);
      }
      ::close(p[1]);
      fds[w] = p[0];
      pids[w] = pid;
    }
  }
  std::vector<bool> done(todo.size(), false);
  for (size_t w = 0; w < jobs; ++w) {
    if (fds[w] < 0) continue;
    const std::string data = read_all(fds[w]);
    ::close(fds[w]);
    int status = 0;
    ::waitpid(pids[w], &status, 0);
    size_t start = 0;
    while (start < data.size()) {
      const size_t nl = std::min(data.find('\n', start), data.size());
      const std::string line = data.substr(start, nl - start);
      start = nl + 1;
      const size_t sp = line.find(' ');
      if (sp == std::string::npos) continue;
      const size_t i = std::stoul(line.substr(0, sp));
      if (i >= todo.size()) continue;
      results[i].recipe = todo[i]->name;
      if (decode(line.substr(sp + 1), &results[i])) done[i] = true;
    }
    if (progress != nullptr)
      *progress << "\r  worker " << (w + 1) << "/" << jobs << " done" << std::flush;
  }
  // Whatever no worker delivered (jobs == 1, fork failed, a worker died) runs here.
  for (size_t i = 0; i < todo.size(); ++i) {
    if (!done[i]) {
      results[i] = check_recipe(*todo[i], o, progress);
      continue;
    }
    RecipeResult full = empty_result(*todo[i]);
    full.seeds_run = results[i].seeds_run;
    full.requests = results[i].requests;
    for (int p = 0; p < kPropertyCount; ++p) full.properties[p] = results[i].properties[p];
    results[i] = std::move(full);
  }
  return results;
}

}  // namespace lockstep::properties
