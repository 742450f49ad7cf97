// The host side of `lockstep check`: the wall clock (the seeds-per-second report, the progress
// line and its ETA), the signals that interrupt a run, and the fork()-based --jobs. Deliberately
// outside the deterministic core: nothing here feeds a decision of a run.
//
// The parent cuts each recipe's seed range into contiguous chunks (SeedPlan) and hands them out,
// one at a time, to worker processes as they become free: a task line "RECIPE FIRST COUNT" down
// the worker's task pipe, one JSON line with check_seeds()'s result (deterministic) back up its
// result pipe. The parent appends the chunks of a recipe in seed order, whatever order they
// came back in, so the results equal one process running the seeds in order (append_seeds).
// A worker ignores SIGINT (a Ctrl-C reaches the whole process group; the parent decides) and
// exits when its task pipe closes; on an interrupt the parent sends each worker SIGTERM, by pid.
#include <poll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>  // lockstep-allow: host timing for the report only
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "properties/check.h"
#include "properties/host_progress.h"

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
                     {"message", p.message},
                     {"demonstrated", p.demonstrated},
                     {"demonstration_seed", p.demonstration_seed
                                                ? nlohmann::json(*p.demonstration_seed)
                                                : nlohmann::json(nullptr)},
                     {"demonstration", p.demonstration}});
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
    r->properties[i].demonstrated = p["demonstrated"].get<uint64_t>();
    if (!p["demonstration_seed"].is_null()) {
      r->properties[i].demonstration_seed = p["demonstration_seed"].get<uint64_t>();
    }
    r->properties[i].demonstration = p["demonstration"].get<std::string>();
  }
  return true;
}

void write_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;  // a stop signal arrived; finish the line
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

// Takes the first line off `buffer` into *line; false when it holds no whole line yet.
bool take_line(std::string* buffer, std::string* line) {
  const size_t nl = buffer->find('\n');
  if (nl == std::string::npos) return false;
  *line = buffer->substr(0, nl);
  buffer->erase(0, nl + 1);
  return true;
}

// ---- Crashes ----
//
// A recipe that crashes the process (a signal, an abort, a sanitizer's report) must still be
// named: before each seed the host writes "recipe R seed S" into g_crash_note (outside any
// signal), and the fatal-signal handler (and a sanitizer's death callback) prints it with the
// command that reproduces it, then dies as it would have. In a worker it also writes one line
// "crash SEED SIGNAL" up the result pipe, so that the parent reports the recipe as crashed at
// that seed (RecipeResult::error) and goes on with the other recipes.

constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
char g_crash_note[640];                       // the human line, ready to write
volatile std::sig_atomic_t g_crash_note_len = 0;
char g_crash_line[64];                        // "crash SEED " for the parent
volatile std::sig_atomic_t g_crash_line_len = 0;
volatile std::sig_atomic_t g_crash_fd = -1;   // a worker's result pipe; -1 in the parent

// Records the seed about to run (not in a signal handler).
void note_seed(const std::string& program, const recipes::RecipeInfo& recipe, uint64_t seed) {
  g_crash_note_len = 0;
  const int n = std::snprintf(
      g_crash_note, sizeof g_crash_note,
      "\nlockstep check: the process crashed while running recipe %s at seed %llu: a bug in the "
      "recipe (or in lockstep). Reproduce it alone:\n  %s check --recipe %s --seed %llu\n",
      recipe.name.c_str(), static_cast<unsigned long long>(seed), program.c_str(),
      recipe.name.c_str(),
      static_cast<unsigned long long>(seed));
  g_crash_note_len = n > 0 ? std::min<int>(n, sizeof g_crash_note - 1) : 0;
  const int m = std::snprintf(g_crash_line, sizeof g_crash_line, "crash %llu ",
                              static_cast<unsigned long long>(seed));
  g_crash_line_len = m > 0 ? std::min<int>(m, sizeof g_crash_line - 1) : 0;
}

void write_raw(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n <= 0) return;
    data += n;
    size -= static_cast<size_t>(n);
  }
}

// Async-signal-safe: what g_crash_note says, and the machine line for the parent.
void report_crash(const char* what) {
  if (g_crash_note_len > 0) write_raw(STDERR_FILENO, g_crash_note, g_crash_note_len);
  if (g_crash_fd >= 0 && g_crash_line_len > 0) {
    write_raw(g_crash_fd, g_crash_line, g_crash_line_len);
    write_raw(g_crash_fd, what, std::strlen(what));
    write_raw(g_crash_fd, "\n", 1);
  }
}

const char* fatal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
  }
  return "a fatal signal";
}

extern "C" void on_fatal_signal(int sig) {
  report_crash(fatal_name(sig));
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

extern "C" void on_sanitizer_death() { report_crash("a sanitizer report"); }

}  // namespace
}  // namespace lockstep::properties

// Present when the program runs under AddressSanitizer or UBSan; its report ends the process
// through this callback instead of a signal we could catch.
extern "C" void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

namespace lockstep::properties {
namespace {

// While alive, a crash names the recipe and seed being run (see above).
class CrashScope {
 public:
  CrashScope() {
    g_crash_note_len = 0;
    g_crash_line_len = 0;
    struct sigaction fatal {};
    fatal.sa_handler = on_fatal_signal;
    sigemptyset(&fatal.sa_mask);
    fatal.sa_flags = SA_RESETHAND;
    for (size_t i = 0; i < std::size(kFatalSignals); ++i) {
      ::sigaction(kFatalSignals[i], &fatal, &saved_[i]);
    }
    if (&__sanitizer_set_death_callback != nullptr) {
      __sanitizer_set_death_callback(on_sanitizer_death);
    }
  }
  ~CrashScope() {
    for (size_t i = 0; i < std::size(kFatalSignals); ++i) {
      ::sigaction(kFatalSignals[i], &saved_[i], nullptr);
    }
    if (&__sanitizer_set_death_callback != nullptr) __sanitizer_set_death_callback(nullptr);
    g_crash_note_len = 0;
    g_crash_line_len = 0;
  }
  CrashScope(const CrashScope&) = delete;
  CrashScope& operator=(const CrashScope&) = delete;

 private:
  struct sigaction saved_[std::size(kFatalSignals)]{};
};

// check_seeds on the simulator, naming each seed before it runs (note_seed).
RecipeResult run_chunk(const recipes::RecipeInfo& recipe, uint64_t first, uint64_t count,
                       const CheckOptions& o) {
  SimBackend sim;
  note_seed(o.program, recipe, first);
  return check_seeds(recipe, first, count, o.fault_restriction(), sim,
                     [&](const recipes::RecipeInfo& r, const SeedOutcome& so) {
                       note_seed(o.program, r, so.scenario.seed + 1);
                     });
}

// A chunk whose worker crashed at `seed` (`what`: the signal): the recipe's result stops there
// with the error, which fails the run and names the reproduce command.
RecipeResult crashed_chunk(const recipes::RecipeInfo& recipe, uint64_t first, uint64_t seed,
                           const std::string& what, const std::string& program) {
  RecipeResult r = empty_result(recipe);
  r.first_seed = first;
  r.error = "the process crashed (" + what + ") while running seed " + std::to_string(seed) +
            ": a bug in the recipe (or in lockstep); reproduce it alone with " + program +
            " check --recipe " +
            recipe.name + " --seed " + std::to_string(seed);
  if (seed > first) {
    r.error += " (seeds " + std::to_string(first) + ".." + std::to_string(seed - 1) +
               " ran before it, but their results were lost with the process)";
  }
  return r;
}

// While alive, SIGINT, SIGTERM and SIGHUP stop the run (StopSignals, host_progress.h) and
// SIGPIPE is ignored (writing to a worker that died must not kill the parent). The destructor
// restores what was there before.
class SignalScope {
 public:
  SignalScope() {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    ::sigaction(SIGPIPE, &ignore, &saved_pipe_);
  }
  ~SignalScope() { ::sigaction(SIGPIPE, &saved_pipe_, nullptr); }
  SignalScope(const SignalScope&) = delete;
  SignalScope& operator=(const SignalScope&) = delete;

 private:
  StopSignals stop_;
  struct sigaction saved_pipe_ {};
};

// ---- The seed plan ----

// A contiguous block of one recipe's seeds.
struct Chunk {
  size_t recipe = 0;   // index into todo
  uint64_t index = 0;  // the chunk's number within the recipe's range
  uint64_t first = 0;  // its seeds: first .. first + count - 1
  uint64_t count = 0;
};

// Seeds per chunk: small enough that every job gets about eight chunks of a recipe (so the work
// balances and a broken variant's search wastes little beyond its catch) and that the progress
// line and an interrupt are not held up for long, large enough that the pipes are not the work.
uint64_t chunk_seeds(uint64_t seeds, uint32_t jobs) {
  constexpr uint64_t kMaxChunkSeeds = 256;
  return std::clamp<uint64_t>(seeds / (uint64_t{jobs} * 8), 1, kMaxChunkSeeds);
}

// Every recipe's seeds cut into chunks: which chunk to run next, and the results so far, each
// the append of the recipe's chunks from the first in seed order (however the chunks came back).
// Invariants: (1) results_[i] covers exactly chunks 0 .. merged_ - 1 of recipe i; (2) a chunk is
// handed out once (or again after retry()); (3) no chunk past a broken variant's lowest known
// catching chunk is handed out, since its catch ends the search.
class SeedPlan {
 public:
  SeedPlan(const std::vector<const recipes::RecipeInfo*>& todo, const CheckOptions& o)
      : seeds_(o.seeds), first_seed_(o.first_seed), chunk_(chunk_seeds(o.seeds, o.jobs)) {
    for (const recipes::RecipeInfo* r : todo) {
      PerRecipe p;
      p.result = empty_result(*r);
      p.result.first_seed = o.first_seed;
      p.chunks = (o.seeds + chunk_ - 1) / chunk_;
      p.stop_after = p.chunks;
      recipes_.push_back(std::move(p));
    }
  }

  // The next chunk to run, in todo order and seed order; nullopt when every chunk is handed out.
  std::optional<Chunk> next() {
    if (!retry_.empty()) {
      const Chunk c = retry_.front();
      retry_.erase(retry_.begin());
      return c;
    }
    for (; cursor_ < recipes_.size(); ++cursor_) {
      PerRecipe& p = recipes_[cursor_];
      if (p.handed < p.stop_after && !p.result.search_over()) {
        Chunk c;
        c.recipe = cursor_;
        c.index = p.handed++;
        c.first = first_seed_ + c.index * chunk_;
        c.count = std::min(chunk_, seeds_ - c.index * chunk_);
        return c;
      }
    }
    return std::nullopt;
  }

  // How many chunks the ranges are cut into, over all recipes.
  uint64_t chunk_count() const {
    uint64_t n = 0;
    for (const PerRecipe& p : recipes_) n += p.chunks;
    return n;
  }

  // Hands `c` out again (its worker stopped before answering).
  void retry(const Chunk& c) { retry_.push_back(c); }

  // `r`, the result of chunk `c`.
  void deliver(const Chunk& c, RecipeResult r) {
    seeds_run_ += r.seeds_run;
    PerRecipe& p = recipes_[c.recipe];
    if (p.result.search_over() || c.index >= p.stop_after) return;
    if (r.search_over()) p.stop_after = c.index + 1;
    p.pending_seeds += r.seeds_run;
    p.pending.emplace(c.index, std::move(r));
    for (auto it = p.pending.find(p.merged); it != p.pending.end(); it = p.pending.find(p.merged)) {
      append_seeds(&p.result, it->second);
      p.pending_seeds -= it->second.seeds_run;
      p.pending.erase(it);
      ++p.merged;
      if (p.result.search_over()) {
        p.pending.clear();
        p.pending_seeds = 0;
        break;
      }
    }
  }

  // Seeds run so far, including those of chunks whose results were not needed.
  uint64_t seeds_run() const { return seeds_run_; }

  // Seeds still to run at most (a broken variant's search may end sooner).
  uint64_t seeds_left() const {
    uint64_t left = 0;
    for (const PerRecipe& p : recipes_) {
      if (p.result.search_over()) continue;
      const uint64_t bound = std::min(seeds_, p.stop_after * chunk_);
      const uint64_t done = p.result.seeds_run + p.pending_seeds;
      left += bound > done ? bound - done : 0;
    }
    return left;
  }

  std::vector<RecipeResult> results() const {
    std::vector<RecipeResult> out;
    for (const PerRecipe& p : recipes_) out.push_back(p.result);
    return out;
  }

 private:
  struct PerRecipe {
    RecipeResult result;                       // chunks 0 .. merged - 1, appended
    uint64_t chunks = 0;                       // how many the range is cut into
    uint64_t handed = 0;                       // chunks 0 .. handed - 1 were handed out
    uint64_t merged = 0;                       // chunks 0 .. merged - 1 are in `result`
    uint64_t stop_after = 0;                   // chunks >= this are not needed
    std::map<uint64_t, RecipeResult> pending;  // results that wait for an earlier chunk
    uint64_t pending_seeds = 0;                // seeds run in `pending`
  };
  const uint64_t seeds_;
  const uint64_t first_seed_;
  const uint64_t chunk_;
  std::vector<PerRecipe> recipes_;
  size_t cursor_ = 0;  // recipes before it have every needed chunk handed out
  std::vector<Chunk> retry_;
  uint64_t seeds_run_ = 0;
};

// ---- The progress line ----

// "  checking: D seeds done, R seeds/s, about L to go, ETA T" on a terminal (ProgressLine,
// host_progress.h).
void show_progress(const SeedPlan& plan, ProgressLine* line) {
  if (!line->due()) return;
  const double rate = line->rate(plan.seeds_run());
  const uint64_t left = plan.seeds_left();
  char buf[160];
  std::snprintf(buf, sizeof buf,
                "  checking: %llu seeds done, %.0f seeds/s, about %llu to go, ETA %s",
                static_cast<unsigned long long>(plan.seeds_run()), rate,
                static_cast<unsigned long long>(left),
                rate > 0 ? human_seconds(static_cast<double>(left) / rate).c_str() : "?");
  line->update(buf);
}

// ---- Workers ----

struct Worker {
  pid_t pid = -1;
  int to = -1;                // task pipe, parent's end
  int from = -1;              // result pipe, parent's end
  std::optional<Chunk> busy;  // the chunk it runs
  std::string buffer;         // what it sent after its last whole line

  bool alive() const { return pid > 0; }
};

// A worker's life after fork(): reads "RECIPE FIRST COUNT" lines, answers each with a JSON line,
// and exits when the task pipe closes. It ignores SIGINT (the parent decides what a Ctrl-C
// stops) and dies of SIGTERM, SIGHUP and SIGPIPE (the parent is gone).
[[noreturn]] void worker_main(int in, int out, const std::vector<const recipes::RecipeInfo*>& todo,
                              const CheckOptions& o) {
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGTERM, SIG_DFL);
  ::signal(SIGHUP, SIG_DFL);
  ::signal(SIGPIPE, SIG_DFL);
  g_crash_fd = out;  // a crash tells the parent which seed it was (report_crash)
  std::string buffer;
  std::string line;
  char buf[256];
  for (;;) {
    while (!take_line(&buffer, &line)) {
      const ssize_t n = ::read(in, buf, sizeof buf);
      if (n == 0 || (n < 0 && errno != EINTR)) ::_exit(0);
      if (n > 0) buffer.append(buf, static_cast<size_t>(n));
    }
    unsigned long long recipe = 0, first = 0, count = 0;
    if (std::sscanf(line.c_str(), "%llu %llu %llu", &recipe, &first, &count) != 3 ||
        recipe >= todo.size()) {
      ::_exit(3);
    }
    write_all(out, encode(run_chunk(*todo[recipe], first, count, o)).dump() + "\n");
  }
}

// Forks `jobs` workers (fewer when fork or pipe fails; then the parent runs what is left).
std::vector<Worker> start_workers(uint32_t jobs,
                                  const std::vector<const recipes::RecipeInfo*>& todo,
                                  const CheckOptions& o) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::vector<Worker> workers;
  for (uint32_t w = 0; w < jobs; ++w) {
    int task[2];
    int result[2];
    if (::pipe(task) != 0) break;
    if (::pipe(result) != 0) {
      ::close(task[0]);
      ::close(task[1]);
      break;
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
      // The earlier workers' pipe ends must close here too, or they never see end-of-file.
      for (const Worker& other : workers) {
        ::close(other.to);
        ::close(other.from);
      }
      ::close(task[1]);
      ::close(result[0]);
      worker_main(task[0], result[1], todo, o);
    }
    ::close(task[0]);
    ::close(result[1]);
    if (pid < 0) {
      ::close(task[1]);
      ::close(result[0]);
      break;
    }
    Worker worker;
    worker.pid = pid;
    worker.to = task[1];
    worker.from = result[0];
    workers.push_back(std::move(worker));
  }
  return workers;
}

// Closes the worker's pipes and reaps it; `kill`: sends it SIGTERM first (it may be mid-chunk).
void stop_worker(Worker* w, bool kill) {
  if (!w->alive()) return;
  if (kill) ::kill(w->pid, SIGTERM);
  ::close(w->to);
  ::close(w->from);
  int status = 0;
  while (::waitpid(w->pid, &status, 0) < 0 && errno == EINTR) {
  }
  w->pid = -1;
  w->to = w->from = -1;
}

void stop_workers(std::vector<Worker>* workers, bool kill) {
  for (Worker& w : *workers) stop_worker(&w, kill);
}

// Gives an idle worker the plan's next chunk (none left: it stays idle).
void hand_out(Worker* w, SeedPlan* plan) {
  const std::optional<Chunk> c = plan->next();
  if (!c) return;
  w->busy = c;
  write_all(w->to, std::to_string(c->recipe) + " " + std::to_string(c->first) + " " +
                       std::to_string(c->count) + "\n");
}

// Reads what the worker sent; its next whole line, or nullopt (not yet, or it died: then it is
// reaped and no longer alive()).
std::optional<std::string> receive(Worker* w) {
  std::string line;
  if (take_line(&w->buffer, &line)) return line;
  char buf[4096];
  const ssize_t n = ::read(w->from, buf, sizeof buf);
  if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
    stop_worker(w, false);
    return std::nullopt;
  }
  if (n > 0) w->buffer.append(buf, static_cast<size_t>(n));
  if (take_line(&w->buffer, &line)) return line;
  return std::nullopt;
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
  // access() says yes to root, and /proc or /sys take no new entries whatever their mode bits
  // say, so try it: make the first missing directory (or a probe inside `dir`) and remove it.
  // The host side: a probe name no other process uses.  // lockstep-allow: getpid, host side
  const std::string probe_name = ".lockstep-probe-" + std::to_string(::getpid());  // lockstep-allow
  fs::path probe = is_self ? existing / probe_name : fs::path(dir);
  for (int guard = 0;
       guard < 4096 && !is_self && probe.has_parent_path() && probe.parent_path() != existing;
       ++guard) {
    probe = probe.parent_path();
  }
  if (::mkdir(probe.c_str(), 0700) != 0) {
    if (errno == EEXIST) return {};
    return (is_self ? "nothing can be created in it"
                    : "'" + probe.string() + "' cannot be created") +
           std::string(" (") + std::strerror(errno) + ")";
  }
  ::rmdir(probe.c_str());
  return {};
}

HostRun check_recipes_forked(const std::vector<const recipes::RecipeInfo*>& todo,
                             const CheckOptions& o, std::ostream* progress) {
  SignalScope signals;
  CrashScope crashes;
  SeedPlan plan(todo, o);
  ProgressLine line(progress);
  auto run_here = [&](const Chunk& c) {
    plan.deliver(c, run_chunk(*todo[c.recipe], c.first, c.count, o));
  };
  // No more workers than chunks: a short run forks no idle processes.
  const uint32_t jobs = static_cast<uint32_t>(std::min<uint64_t>(o.jobs, plan.chunk_count()));
  std::vector<Worker> workers =
      jobs > 1 ? start_workers(jobs, todo, o) : std::vector<Worker>();
  for (Worker& w : workers) hand_out(&w, &plan);
  std::vector<pollfd> fds;
  while (!StopSignals::stopped()) {
    fds.clear();
    for (const Worker& w : workers) {
      if (w.busy) fds.push_back({w.from, POLLIN, 0});
    }
    if (fds.empty()) break;
    if (::poll(fds.data(), fds.size(), 250) < 0 && errno != EINTR) break;
    for (Worker& w : workers) {
      const auto f =
          std::find_if(fds.begin(), fds.end(), [&](const pollfd& p) { return p.fd == w.from; });
      if (!w.busy || f == fds.end() || f->revents == 0 || StopSignals::stopped()) continue;
      const std::optional<std::string> reply = receive(&w);
      RecipeResult r = empty_result(*todo[w.busy->recipe]);
      r.first_seed = w.busy->first;
      unsigned long long crash_seed = 0;
      char crash_what[48] = {};
      if (reply && decode(*reply, &r)) {
        plan.deliver(*w.busy, std::move(r));
        w.busy.reset();
        hand_out(&w, &plan);
      } else if (reply &&
                 std::sscanf(reply->c_str(), "crash %llu %47[^\n]", &crash_seed, crash_what) == 2) {
        // Its recipe crashed it at that seed (it said so before dying): report it, go on.
        stop_worker(&w, true);
        const Chunk c = *w.busy;
        w.busy.reset();
        plan.deliver(c, crashed_chunk(*todo[c.recipe], c.first, crash_seed, crash_what, o.program));
      } else if (reply || !w.alive()) {
        if (w.alive()) stop_worker(&w, true);  // it talks nonsense: treat it as dead
        // It died (a crash or an assert in a seed): run its chunk here, where a seed that
        // aborts aborts the run as it would with --jobs 1.
        const Chunk c = *w.busy;
        w.busy.reset();
        run_here(c);
      }
    }
    show_progress(plan, &line);
  }
  for (Worker& w : workers) {
    if (w.busy && !StopSignals::stopped()) plan.retry(*w.busy);
  }
  stop_workers(&workers, StopSignals::stopped());
  // Whatever no worker ran (--jobs 1, fork failed, the workers died) runs here.
  while (!StopSignals::stopped()) {
    const std::optional<Chunk> c = plan.next();
    if (!c) break;
    run_here(*c);
    show_progress(plan, &line);
  }
  line.clear();
  HostRun run;
  run.results = plan.results();
  run.interrupted = StopSignals::signal_name();
  return run;
}

}  // namespace lockstep::properties
