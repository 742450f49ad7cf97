// Tests of the lockstep binary as a user meets it: exit codes, usage errors, machine output.
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "tools/shell_run.h"

namespace {

using Outcome = lockstep::tools::ShellRun;

// Runs the built binary with `args` through the shell; `redirect` picks what is captured.
Outcome run(const std::string& args, const std::string& redirect = "2>&1") {
  return lockstep::tools::shell_run(std::string("'") + LOCKSTEP_BIN + "' " + args + " " +
                                    redirect);
}

// Runs `lockstep <args>` and checks its exit code and that its output (stdout and stderr)
// contains every one of `needles`; returns the run for further checks.
Outcome expect_run(const std::string& args, int exit_code,
                   std::initializer_list<std::string> needles) {
  SCOPED_TRACE("lockstep " + args);
  Outcome r = run(args);
  EXPECT_EQ(r.exit_code, exit_code) << r.output;
  for (const std::string& n : needles) {
    EXPECT_NE(r.output.find(n), std::string::npos) << "'" << n << "' in: " << r.output;
  }
  return r;
}

constexpr int kUsageError = 2;

// An unknown subcommand is a usage error (exit 2) that names it and lists the real ones.
TEST(Cli, UnknownCommandExits2AndListsCommands) {
  expect_run("frobnicate", kUsageError,
             {"unknown command 'frobnicate'", " check", " selfcheck", " list", " version", " help",
              "lockstep help"});
}

// Running with no command at all is a usage error that shows how to call the tool.
TEST(Cli, NoCommandExits2WithUsage) {
  expect_run("", kUsageError, {"no command given", "usage: lockstep COMMAND"});
}

// A flag the command does not have is a usage error naming the flag and the valid ones.
TEST(Cli, UnknownFlagExits2AndNamesValidFlags) {
  expect_run("selfcheck --bogus", kUsageError,
             {"unknown flag '--bogus'", "--seed --rounds", "lockstep help selfcheck"});
}

// `check` parses its flags with the same parser: an unknown one is a usage error (exit 2)
// that names the valid ones and points at its help.
TEST(Cli, CheckUnknownFlagExits2) {
  expect_run("check --bogus", kUsageError,
             {"unknown flag '--bogus'", "--recipe", "--real", "lockstep help check"});
}

// A single-dash option is rejected with the spelling lockstep wants.
TEST(Cli, SingleDashOptionExits2) { expect_run("list -j", kUsageError, {"unknown option '-j'"}); }

// A value flag given without its value says which value is missing.
TEST(Cli, MissingFlagValueExits2) {
  expect_run("selfcheck --seed", kUsageError, {"'--seed' needs a value: --seed N"});
}

// A non-numeric seed is rejected before anything runs, naming the range.
TEST(Cli, NonNumericSeedExits2) {
  expect_run("selfcheck --seed=abc", kUsageError, {"'--seed' wants a whole number", "not 'abc'"});
}

// A boolean flag given a value is a usage error rather than silently accepted.
TEST(Cli, BooleanFlagWithValueExits2) {
  expect_run("list --json=yes", kUsageError, {"'--json' takes no value"});
}

// A stray positional argument to a command that takes none is a usage error.
TEST(Cli, StrayArgumentExits2) {
  expect_run("version extra", kUsageError, {"unexpected argument 'extra'"});
}

// `help` lists every command; `help X` and `X --help` print X's flags and exit 0.
TEST(Cli, HelpListsCommandsAndFlags) {
  expect_run("help", 0, {"  check", "  selfcheck", "  list", "  version", "  help"});
  expect_run("help list", 0, {"--json"});
  expect_run("selfcheck --help", 0, {"--seed N"});
  expect_run("help check", 0, {"--recipe NAME"});
  expect_run("help nosuch", kUsageError, {"no command named 'nosuch'"});
  // The one exit-code table, and each command's own codes in its usage.
  expect_run("help", 0, {"exit codes", "0  ok", "2  usage", "5  diverged", "130  interrupted"});
  expect_run("help replay", 0, {"--allow-changed", "exit: 0 reproduced exactly, 5 diverged"});
  expect_run("explore --help", 0, {"--recipe NAME", "4 incomplete"});
}

// `version` prints the project version.
TEST(Cli, VersionPrintsProjectVersion) {
  Outcome r = run("version");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output.rfind("lockstep 0.", 0), 0u) << r.output;
}

// `list --json` prints, on stdout alone, a JSON array describing every registry entry with the
// keys the documentation promises, and both correct recipes and broken variants appear.
TEST(Cli, ListJsonIsValidAndComplete) {
  Outcome r = run("list --json", "2>/dev/null");
  ASSERT_EQ(r.exit_code, 0);
  nlohmann::json doc = nlohmann::json::parse(r.output, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(doc.is_discarded()) << r.output;
  ASSERT_TRUE(doc.is_array());
  ASSERT_FALSE(doc.empty());
  std::set<std::string> expected_seen;
  for (const auto& e : doc) {
    for (const char* key : {"name", "kind", "expected", "description", "seed"}) {
      ASSERT_TRUE(e.contains(key) && e[key].is_string()) << key << " in " << e.dump();
    }
    EXPECT_FALSE(e["name"].get<std::string>().empty()) << e.dump();
    expected_seen.insert(e["expected"].get<std::string>());
  }
  EXPECT_EQ(expected_seen, (std::set<std::string>{"broken", "correct"}));
  Outcome table = run("list");
  EXPECT_EQ(table.exit_code, 0);
  EXPECT_NE(table.output.find(doc[0]["name"].get<std::string>()), std::string::npos);
}

// `check` passes its flags through to the property runner: asked for one recipe in JSON, it
// prints (on stdout alone) one JSON object whose results hold exactly that recipe.
TEST(Cli, CheckPassesFlagsToThePropertyRunner) {
  Outcome r = run("check --recipe fair-mutex --seeds 2 --json", "2>/dev/null");
  nlohmann::json doc = nlohmann::json::parse(r.output, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(doc.is_discarded()) << r.output;
  ASSERT_TRUE(doc.contains("results") && doc["results"].is_array()) << r.output;
  ASSERT_EQ(doc["results"].size(), 1u) << r.output;
  EXPECT_NE(doc["results"][0].dump().find("fair-mutex"), std::string::npos) << r.output;
}

// `selfcheck` says it is only a simulator self-check and passes on the default seed.
TEST(Cli, SelfCheckIsLabelledAndPasses) {
  Outcome r = run("selfcheck");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("SIMULATOR SELF-CHECK"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("self-check passed"), std::string::npos) << r.output;
}

// `check` saves the trace of a caught broken variant (the CLI installs the trace saver), prints
// its path with the replay and show commands, and the file replays exactly and shows the
// violation; a trace directory that cannot be created is a usage error (exit 2) naming it.
TEST(Cli, CheckSavesAFailureTraceThatReplays) {
  std::string dir = (std::filesystem::temp_directory_path() / "lockstep-cli-XXXXXX").string();
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  const Outcome r = expect_run("check --recipe broken/sort-by-name --seeds 20 --trace-dir " + dir,
                               0, {"  trace:     " + dir + "/broken_sort-by-name-seed"});
  const size_t at = r.output.find("  trace:     ") + 13;
  const std::string path = r.output.substr(at, r.output.find('\n', at) - at);
  EXPECT_NE(r.output.find("  replay:    ./lockstep replay " + path), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(path)) << path;
  expect_run("replay " + path, 0, {"reproduced exactly"});
  expect_run("show " + path, 0, {"verdict: mutual-exclusion VIOLATED", ">> rows proving it"});
  expect_run("check --recipe broken/sort-by-name --trace-dir " + path + "/sub", kUsageError,
             {"cannot save failure traces in '" + path + "/sub'", "--no-traces"});
  std::filesystem::remove_all(dir);
}
// `lockstep <args>` started on a pseudo-terminal, so that it is interactive (stdout and stderr
// are the terminal) and a Ctrl-C typed there reaches its whole process group.
class TerminalRun {
 public:
  explicit TerminalRun(const std::vector<std::string>& args) {
    pid_ = ::forkpty(&master_, nullptr, nullptr, nullptr);
    if (pid_ == 0) {
      std::vector<std::string> all = {LOCKSTEP_BIN};
      all.insert(all.end(), args.begin(), args.end());
      std::vector<char*> argv;
      for (std::string& a : all) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(LOCKSTEP_BIN, argv.data());
      ::_exit(127);
    }
  }
  ~TerminalRun() {
    if (pid_ > 0) {  // a failed test: do not leave the run (or its workers) behind
      ::kill(-pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (master_ >= 0) ::close(master_);
  }

  bool started() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  const std::string& output() const { return output_; }

  // Types `text` at the terminal (a "\x03" is Ctrl-C).
  void type(const std::string& text) {
    EXPECT_EQ(::write(master_, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  }

  // Reads the output until `done(output)` holds (true) or `timeout_s` pass or the output ends.
  bool read_until(const std::function<bool(const std::string&)>& done, int timeout_s) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
    while (!done(output_)) {
      if (std::chrono::steady_clock::now() > deadline || !read_some()) return false;
    }
    return true;
  }

  // Reads to the end of the output and reaps the run: its exit status, or -1 when it did not
  // exit (killed by a signal, or still running after `timeout_s`).
  int finish(int timeout_s) {
    read_until([](const std::string&) { return false; }, timeout_s);
    // The terminal closes a moment before the process exits: wait for it, within the time.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) != pid_) {
      if (std::chrono::steady_clock::now() > deadline) return -1;
      ::usleep(10000);
    }
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

 private:
  // One read with a short wait; false at the end of the output.
  bool read_some() {
    pollfd p{master_, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) return true;
    char buf[4096];
    const ssize_t n = ::read(master_, buf, sizeof buf);
    if (n <= 0) return n < 0 && errno == EINTR;  // EIO: the terminal's other side closed
    output_.append(buf, static_cast<size_t>(n));
    return true;
  }

  pid_t pid_ = -1;
  int master_ = -1;
  std::string output_;
};

// The highest "checking: N seeds done" the progress line showed so far (0: none yet).
uint64_t seeds_done(const std::string& output) {
  static const std::regex progress("checking: ([0-9]+) seeds done, [0-9]+ seeds/s");
  uint64_t most = 0;
  for (auto it = std::sregex_iterator(output.begin(), output.end(), progress);
       it != std::sregex_iterator(); ++it) {
    most = std::max<uint64_t>(most, std::stoull((*it)[1].str()));
  }
  return most;
}

// The highest "exploring: N schedules" the progress line of `explore` showed so far (0: none).
uint64_t schedules_shown(const std::string& output) {
  static const std::regex progress("exploring: ([0-9]+) schedules \\(bound level [0-9]+ of 3\\), "
                                   "[0-9]+ distinct states, [0-9]+ schedules/s");
  uint64_t most = 0;
  for (auto it = std::sregex_iterator(output.begin(), output.end(), progress);
       it != std::sregex_iterator(); ++it) {
    most = std::max<uint64_t>(most, std::stoull((*it)[1].str()));
  }
  return most;
}

// On a terminal `explore` keeps a progress line (schedules, distinct states, rate); a Ctrl-C
// typed there stops the search after the run in progress with exit 130 and the summary of what
// it covered: at least the schedules the line showed, the bound levels finished, and why it
// stopped. The scope (3 clients, 2 rounds, bound 3, no run limit) takes far longer than the test.
TEST(Cli, ExploreCtrlCPrintsWhatItCoveredAndExits130) {
  TerminalRun run({"explore", "--recipe", "fair-mutex", "--clients", "3", "--rounds", "2",
                   "--bound", "3", "--runs", "100000000", "--no-save"});
  ASSERT_TRUE(run.started());
  ASSERT_TRUE(run.read_until([](const std::string& o) { return schedules_shown(o) >= 200; }, 120))
      << run.output();
  const uint64_t shown = schedules_shown(run.output());
  run.type("\x03");
  EXPECT_EQ(run.finish(60), 130) << run.output();
  const std::string& out = run.output();
  EXPECT_NE(out.find("result: INTERRUPTED: no violation in the "), std::string::npos) << out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      out, m, std::regex("\ncovered: ([0-9]+) schedules, [0-3] of 4 bound levels \\(0\\.\\.3\\) "
                         "finished, [0-9]+ distinct states")))
      << out;
  EXPECT_GE(std::stoull(m[1].str()), shown);
  EXPECT_LT(std::stoull(m[1].str()), 100000000u);
  EXPECT_NE(out.find("stopped: interrupted (SIGINT)"), std::string::npos) << out;
}

// Off a terminal `explore` draws no progress line (no carriage returns in a log), and its report
// is unchanged: a small exhaustive scope still ends "no violation in this scope", exit 0.
TEST(Cli, ExploreDrawsNoProgressLineOffATerminal) {
  const Outcome r = run("explore --recipe fair-mutex --clients 2 --rounds 1 --bound 1", "2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("result: no violation in this scope"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("exploring:"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find('\r'), std::string::npos) << r.output;
}

// On a terminal `herd` names the row it measures; a Ctrl-C typed there stops it after that row
// with exit 130: the table holds the rows measured (at least the first, at most all but the
// last) and stderr says how many. Eight rows of 2,000 waiters, 100 releases each measured,
// take a few seconds a row.
TEST(Cli, HerdCtrlCReportsTheRowsMeasuredAndExits130) {
  TerminalRun run({"herd", "--recipe", "naive-mutex", "--releases", "100", "--waiters",
                   "2000,2001,2002,2003,2004,2005,2006,2007"});
  ASSERT_TRUE(run.started());
  ASSERT_TRUE(run.read_until(
      [](const std::string& o) { return o.find("herd: row 2 of 8, naive-mutex") != std::string::npos; },
      120))
      << run.output();
  run.type("\x03");
  EXPECT_EQ(run.finish(60), 130) << run.output();
  const std::string& out = run.output();
  std::smatch m;
  ASSERT_TRUE(std::regex_search(out, m,
                                std::regex("INTERRUPTED \\(SIGINT\\): ([0-9]) of 8 rows measured")))
      << out;
  const int measured = std::stoi(m[1].str());
  EXPECT_GE(measured, 1);
  EXPECT_LE(measured, 7);
  EXPECT_NE(out.find("naive-mutex  2000 "), std::string::npos) << out;
  EXPECT_EQ(out.find("naive-mutex  2007 "), std::string::npos) << out;
}

// On a terminal `check` keeps a progress line (seeds done, seeds/s, ETA); a Ctrl-C typed there
// stops it with exit 130 and a summary of the seeds fully run per recipe: the caught variant is
// done, fair-mutex covers seeds 1..N (N at least what the progress line showed) with the command
// that goes on from N+1.
TEST(Cli, CheckCtrlCPrintsTheSeedsCoveredAndExits130) {
  TerminalRun run({"check", "--recipe", "broken/sort-by-name", "--recipe", "fair-mutex", "--seeds",
                   "100000000", "--jobs", "1", "--no-traces"});
  ASSERT_TRUE(run.started());
  ASSERT_TRUE(run.read_until([](const std::string& o) { return seeds_done(o) >= 600; }, 120))
      << run.output();
  EXPECT_NE(run.output().find(" ETA "), std::string::npos) << run.output();
  const uint64_t shown = seeds_done(run.output());
  run.type("\x03");
  EXPECT_EQ(run.finish(60), 130) << run.output();
  const std::string& out = run.output();
  EXPECT_NE(out.find("INTERRUPTED (SIGINT): the workers were stopped"), std::string::npos) << out;
  EXPECT_TRUE(std::regex_search(
      out, std::regex("broken/sort-by-name +seeds 1\\.\\.[0-9]+ \\(caught: done\\)")))
      << out;
  EXPECT_TRUE(std::regex_search(out, std::regex("fair-mutex +correct +pass .* stopped"))) << out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      out, m,
      std::regex("fair-mutex +seeds 1\\.\\.([0-9]+)  go on: \\./lockstep check --recipe fair-mutex "
                 "--first-seed ([0-9]+) --seeds ([0-9]+)")))
      << out;
  const uint64_t covered = std::stoull(m[1].str());
  EXPECT_GE(covered + 1, shown);  // the one sort-by-name seed counts in `shown`
  EXPECT_LT(covered, 100000000u);
  EXPECT_EQ(std::stoull(m[2].str()), covered + 1);
  EXPECT_EQ(std::stoull(m[3].str()), 100000000u - covered);
}

// SIGTERM sent to `check --jobs 2` alone (not to its workers) stops the workers too: exit 130,
// the coverage summary, and no process of the run is left once it exited.
TEST(Cli, CheckSigtermStopsTheWorkersAndExits130) {
  TerminalRun run(
      {"check", "--recipe", "fair-mutex", "--seeds", "100000000", "--jobs", "2", "--no-traces"});
  ASSERT_TRUE(run.started());
  ASSERT_TRUE(run.read_until([](const std::string& o) { return seeds_done(o) > 0; }, 120))
      << run.output();
  ASSERT_EQ(::kill(run.pid(), SIGTERM), 0);
  const pid_t group = run.pid();  // forkpty made the run a session (and group) leader
  EXPECT_EQ(run.finish(60), 130) << run.output();
  EXPECT_NE(run.output().find("INTERRUPTED (SIGTERM)"), std::string::npos) << run.output();
  EXPECT_TRUE(std::regex_search(run.output(),
                                std::regex("\n  fair-mutex +(seeds 1\\.\\.[0-9]+|no seed fully run)"
                                           "  go on: \\./lockstep check --recipe fair-mutex")))
      << run.output();
  errno = 0;
  EXPECT_EQ(::kill(-group, 0), -1) << "a worker of the run is still alive";
  EXPECT_EQ(errno, ESRCH);
}

// A shard stopped by SIGTERM writes a report of the seeds it fully ran (exit 130), and `merge`
// of it says the sweep is incomplete: exit 4, ok false, never a pass.
TEST(Cli, MergeOfAnInterruptedShardIsIncomplete) {
  const std::string dir = ::testing::TempDir() + "interrupted-shard";
  std::filesystem::create_directories(dir);
  int codes[2];
  for (int i = 0; i < 2; ++i) {
    const std::string cmd = "timeout --preserve-status -s TERM 2 '" + std::string(LOCKSTEP_BIN) +
                            "' check --recipe fair-mutex --seeds 100000000 --no-traces --json "
                            "--shard " +
                            std::to_string(i) + "/2 > '" + dir + "/shard-" + std::to_string(i) +
                            ".json' 2>/dev/null";
    const int status = std::system(cmd.c_str());
    codes[i] = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  EXPECT_EQ(codes[0], 130);
  EXPECT_EQ(codes[1], 130);
  const Outcome r = run("merge --json '" + dir + "/shard-1.json' '" + dir + "/shard-0.json'",
                        "2>/dev/null");
  EXPECT_EQ(r.exit_code, 4) << r.output;
  const nlohmann::json doc = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << r.output;
  EXPECT_EQ(doc["ok"], false);
  EXPECT_EQ(doc["interrupted"], true);
  EXPECT_NE(doc["interrupted_by"].get<std::string>().find("shard 0/2"), std::string::npos);
  EXPECT_NE(doc["interrupted_by"].get<std::string>().find("SIGTERM"), std::string::npos);
  EXPECT_EQ(doc["results"][0]["complete"], false);
  EXPECT_GT(doc["results"][0]["seeds_run"].get<uint64_t>(), 0u);
  EXPECT_LT(doc["results"][0]["seeds_run"].get<uint64_t>(), 50000000u);
  std::filesystem::remove_all(dir);
}

// Off a terminal `check` draws no progress line (no carriage returns in a log), and a bad
// --first-seed is a usage error.
TEST(Cli, CheckDrawsNoProgressLineOffATerminal) {
  const Outcome r = run("check --recipe fair-mutex --seeds 600 --jobs 2 --no-traces", "2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("seeds/s"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find('\r'), std::string::npos) << r.output;
  expect_run("check --first-seed=-1", kUsageError,
             {"flag '--first-seed' wants a whole number from 0 to", "not '-1'"});
}
}  // namespace
