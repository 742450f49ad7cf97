// Consistency checks of the repository's promises to a new user: the README's quick start is
// exactly the two commands, CI runs the same test command, the entry script is runnable, every
// area has a README, and the README's exit-code table is the CLI's.
// (The banned-token scan of sim/, recipes/ and properties/ lives in sim/determinism_test.cc.)
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "cli/cli.h"

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

// The lines of the README.md section under `heading` (up to the next "## " heading).
std::vector<std::string> readme_section(const std::string& heading) {
  std::vector<std::string> section;
  bool in = false;
  for (const std::string& line : read_lines(kRoot + "/README.md")) {
    if (line.rfind("## ", 0) == 0) {
      if (in) break;
      in = line == heading;
      continue;
    }
    if (in) section.push_back(line);
  }
  return section;
}

std::vector<std::string> quick_start_section() { return readme_section("## Quick start"); }

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

// Every relative link in README.md names a file or folder that exists (e.g. recipes/README.md).
TEST(Readme, RelativeLinksResolve) {
  int links = 0;
  for (const std::string& line : read_lines(kRoot + "/README.md")) {
    for (size_t at = line.find("]("); at != std::string::npos; at = line.find("](", at + 2)) {
      const size_t end = line.find(')', at + 2);
      if (end == std::string::npos) continue;
      std::string target = line.substr(at + 2, end - at - 2);
      target = target.substr(0, target.find('#'));
      if (target.empty() || target.find("://") != std::string::npos) continue;
      ++links;
      struct stat st {};
      EXPECT_EQ(stat((kRoot + "/" + target).c_str(), &st), 0) << "README.md links to " << target;
    }
  }
  EXPECT_GT(links, 0) << "README.md should link to recipes/README.md";
}

// Every area of the build (a folder with its own CMakeLists.txt) has a README.md that the
// README's layout table links to, so the map of the house names every room.
TEST(Readme, EveryAreaHasAReadmeInTheLayoutTable) {
  std::string layout;
  for (const std::string& line : readme_section("## Layout")) layout += line + "\n";
  ASSERT_FALSE(layout.empty()) << "README.md has no '## Layout' section";
  int areas = 0;
  for (const std::string& line : read_lines(kRoot + "/CMakeLists.txt")) {
    const size_t at = line.find("foreach(dir ");
    if (at == std::string::npos) continue;
    std::string dirs = line.substr(at + 12, line.find(')') - at - 12);
    dirs += " zk";
    for (size_t start = 0; start < dirs.size();) {
      const size_t space = std::min(dirs.find(' ', start), dirs.size());
      const std::string dir = dirs.substr(start, space - start);
      start = space + 1;
      if (dir.empty() || dir.rfind("tests/", 0) == 0) continue;  // covered by recipes/README.md
      ++areas;
      struct stat st {};
      EXPECT_EQ(stat((kRoot + "/" + dir + "/README.md").c_str(), &st), 0)
          << dir << "/ has no README.md";
      EXPECT_NE(layout.find("](" + dir + "/README.md)"), std::string::npos)
          << "the layout table does not link " << dir << "/README.md";
    }
  }
  EXPECT_GE(areas, 12) << "the top-level CMakeLists.txt's area list was not found";
}

// README's "Exit codes" table is cli/cli.h's kExitCodes, row by row, in order: code, name and
// meaning (what `lockstep help` prints).
TEST(Readme, ExitCodeTableIsTheCli) {
  std::vector<std::string> rows;
  for (const std::string& line : readme_section("## Exit codes")) {
    if (line.rfind("| ", 0) == 0 && line.rfind("| code", 0) != 0) rows.push_back(line);
  }
  ASSERT_EQ(rows.size(), std::size(lockstep::cli::kExitCodes))
      << "README.md's '## Exit codes' table and cli/cli.h's kExitCodes differ in length";
  for (size_t i = 0; i < rows.size(); ++i) {
    const lockstep::cli::ExitCode& e = lockstep::cli::kExitCodes[i];
    const std::string want = "| " + std::to_string(e.code) + " | `" + e.name + "` | " +
                             e.meaning + " |";
    EXPECT_EQ(rows[i], want) << "README.md's exit-code row " << i << " (cli/cli.h is the source)";
  }
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

}  // namespace
