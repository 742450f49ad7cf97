// Consistency checks of the repository's promises: the README's quick start is exactly the two
// commands, CI runs the same test command, the entry script is runnable, and the deterministic
// areas use no system clock, thread, sleep or unseeded randomness (STYLE rule 3).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace {

const std::string kRoot = LOCKSTEP_SOURCE_DIR;

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string trim(std::string s) {
  const char* ws = " \t\r";
  s.erase(0, s.find_first_not_of(ws));
  s.erase(s.find_last_not_of(ws) + 1);
  return s;
}

// The shell commands of a line: the text before a '#' comment, trimmed.
std::string command_of(const std::string& line) { return trim(line.substr(0, line.find('#'))); }

// The lines of the "## Quick start" section of README.md (up to the next "## " heading).
std::vector<std::string> quick_start_section() {
  std::vector<std::string> section;
  bool in = false;
  for (const std::string& line : read_lines(kRoot + "/README.md")) {
    if (line.rfind("## ", 0) == 0) {
      if (in) break;
      in = line == "## Quick start";
      continue;
    }
    if (in) section.push_back(line);
  }
  return section;
}

// The README's quick start holds one code block whose commands are exactly `./lockstep check`
// and `./lockstep test`, in that order; adding a third step or a setup line makes this fail.
TEST(Readme, QuickStartIsExactlyCheckThenTest) {
  std::vector<std::string> section = quick_start_section();
  ASSERT_FALSE(section.empty()) << "README.md has no '## Quick start' section";
  int fences = 0;
  std::vector<std::string> commands;
  for (const std::string& line : section) {
    if (line.rfind("```", 0) == 0) {
      ++fences;
      continue;
    }
    if (fences == 1 && !command_of(line).empty()) commands.push_back(command_of(line));
  }
  EXPECT_EQ(fences, 2) << "the quick start must hold exactly one code block";
  EXPECT_EQ(commands, (std::vector<std::string>{"./lockstep check", "./lockstep test"}));
}

// CI runs the README's test command, not a command of its own.
TEST(Ci, RunsTheReadmeTestCommand) {
  std::vector<std::string> lines = read_lines(kRoot + "/.ci/run");
  ASSERT_FALSE(lines.empty()) << ".ci/run is missing or empty";
  int runs = 0;
  for (const std::string& line : lines) {
    if (command_of(line).find("./lockstep test") != std::string::npos) ++runs;
  }
  EXPECT_EQ(runs, 1) << ".ci/run must run ./lockstep test exactly once";
}

// The entry script is committed executable, so `./lockstep` works on a fresh clone.
TEST(Script, LockstepIsExecutable) {
  struct stat st {};
  ASSERT_EQ(stat((kRoot + "/lockstep").c_str(), &st), 0);
  EXPECT_TRUE(st.st_mode & S_IXUSR);
  std::vector<std::string> lines = read_lines(kRoot + "/lockstep");
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], "#!/usr/bin/env bash");
}

// Source files under `dir` (recursively), sorted so that failures print in a stable order.
std::vector<std::filesystem::path> sources_under(const std::string& dir) {
  std::vector<std::filesystem::path> files;
  if (!std::filesystem::is_directory(dir)) return files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    const std::string ext = e.path().extension().string();
    if (e.is_regular_file() && (ext == ".h" || ext == ".hpp" || ext == ".cc" || ext == ".cpp")) {
      files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The token list of ../shared/hooks/before-stop, except that sleeps are banned only as
// std::this_thread's: zk::Context's own sleep_for / sleep_until are virtual-time sleeps and are
// the sanctioned way to wait. A line may opt out with a `// lockstep-allow` comment saying why.
const std::regex kBanned(
    "system_clock|steady_clock|high_resolution_clock|this_thread::sleep_|(^|[^a-z_.>])u?sleep\\(|"
    "std::thread|"
    "std::jthread|random_device|(^|[^a-z_])rand\\(|_distribution<|[^a-z_]time\\(NULL\\)|getpid\\(");

// Every line of sim/, recipes/ and properties/ that names a banned token, as "file:line: text".
std::vector<std::string> banned_lines() {
  std::vector<std::string> hits;
  for (const char* area : {"sim", "recipes", "properties"}) {
    for (const auto& file : sources_under(kRoot + "/" + area)) {
      std::vector<std::string> lines = read_lines(file.string());
      for (size_t i = 0; i < lines.size(); ++i) {
        if (lines[i].find("lockstep-allow") != std::string::npos) continue;
        if (std::regex_search(lines[i], kBanned)) {
          hits.push_back(file.string() + ":" + std::to_string(i + 1) + ": " + trim(lines[i]));
        }
      }
    }
  }
  return hits;
}

// The banned-token scan itself bites: each token, planted in a line, is found.
TEST(Determinism, BannedTokenPatternMatchesEachToken) {
  for (const char* line :
       {"auto t = std::chrono::steady_clock::now();", "std::this_thread::sleep_for(d);",
        "std::thread t(f);", "int x = rand();", "std::random_device rd;",
        "std::uniform_int_distribution<int> d;", "srand(time(NULL));", "pid_t p = getpid();"}) {
    EXPECT_TRUE(std::regex_search(std::string(line), kBanned)) << line;
  }
  EXPECT_TRUE(std::regex_search(std::string("  sleep(1);"), kBanned));
  EXPECT_TRUE(std::regex_search(std::string("usleep(100);"), kBanned));
}

// The scan leaves the contract's virtual-time sleeps and look-alike names alone.
TEST(Determinism, BannedTokenPatternSparesContractSleeps) {
  for (const char* line :
       {"co_await ctx.sleep_for(zk::milliseconds(5));", "co_await s->context().sleep_until(t);",
        "Future<Status> sleep_for(Duration d);", "uint64_t operand(1);", "x = brand(2);"}) {
    EXPECT_FALSE(std::regex_search(std::string(line), kBanned)) << line;
  }
}

// No file in sim/, recipes/ or properties/ uses a system clock, thread, sleep or unseeded
// random source: in those areas time and randomness come only from zk::Context.
TEST(Determinism, NoBannedTokensInDeterministicAreas) {
  std::vector<std::string> hits = banned_lines();
  std::string all;
  for (const std::string& h : hits) all += h + "\n";
  EXPECT_TRUE(hits.empty()) << "banned nondeterminism (mark a deliberate line with "
                               "// lockstep-allow and say why):\n"
                            << all;
}

}  // namespace
